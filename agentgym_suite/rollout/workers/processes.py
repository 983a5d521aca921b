"""``processes: N``: the envs in N worker processes on this machine.

Each worker is a ``multiprocessing`` process (``spawn`` by default: a fresh interpreter, safe
next to a training process's threads and CUDA; the parent's ``__main__`` must be import-safe, as
for any ``multiprocessing`` program) running :func:`serve`: an
:class:`~agentgym_suite.rollout.workers.host.EnvHost` answering requests over a pipe. The worker
leads its own process group, so killing the group also ends what its envs started
(ScienceWorld's JVM). A worker whose parent is gone exits at the next request it waits for.

Why not Gymnasium's ``AsyncVectorEnv``: it runs one sub-env per process, resets every sub-env
with the same ``options`` (the engine gives each env its own ``task_id``) and steps every
sub-env at each call (the engine steps only the episodes still running, and never auto-resets).
:func:`~agentgym_suite.make_vec` does use it, for Gymnasium-style vector rollouts.
"""

from __future__ import annotations

import multiprocessing
import time
from multiprocessing.connection import Connection, wait
from typing import Any

import cloudpickle

from agentgym_suite.core.process_groups import exit_reason, kill_group, lead_own_group, stop_processes
from agentgym_suite.rollout.workers.host import EnvHost
from agentgym_suite.rollout.workers.remote import RemoteWorkers, Worker, WorkerGone, seconds_left

DEFAULT_CONTEXT = "spawn"
"""Start method of the worker processes."""
_CLOSE = cloudpickle.dumps(("close", None))


def serve(conn: Connection, step_timeout: float | None) -> None:
    """A worker's loop: answer requests from ``conn`` until asked to close or the parent is gone."""
    lead_own_group()
    host = EnvHost(step_timeout)
    try:
        while not host.closed:
            try:
                message = conn.recv_bytes()
            except (EOFError, OSError):  # the pool's process is gone
                break
            answer = host.handle_bytes(message)
            try:
                conn.send_bytes(answer)
            except (BrokenPipeError, OSError):  # the pool's process went away while this worker was busy
                break
    finally:
        host.close()


class ProcessWorkers(RemoteWorkers):
    """Envs in ``count`` worker processes (see the module docstring and
    :class:`~agentgym_suite.rollout.workers.remote.RemoteWorkers`).

    Args:
        count: number of worker processes (>= 1).
        step_timeout: seconds one ``env.step`` may take.
        context: ``multiprocessing`` start method (default ``spawn``).
    """

    kind = "processes"
    noun = "worker processes"

    def __init__(self, count: int, step_timeout: float | None = None, *, context: str = DEFAULT_CONTEXT) -> None:
        super().__init__(count, step_timeout)
        self._ctx = multiprocessing.get_context(context)

    def pids(self) -> list[int]:
        """Process ids of the running workers."""
        return [w.pid for w in self.workers if w.running and w.pid is not None]

    def _exit_reason(self, worker: Worker) -> str | None:
        process = worker.handle[0]
        if process.is_alive():
            return None
        return exit_reason(_reaped(process))

    def _start(self, worker: Worker) -> None:
        parent, child = self._ctx.Pipe()
        process = self._ctx.Process(target=serve, args=(child, self.step_timeout), daemon=True,
                                    name=f"agentgym-env-worker-{worker.index}")
        process.start()
        child.close()
        worker.handle, worker.pid = (process, parent), process.pid

    def _send(self, worker: Worker, message: bytes) -> Any:
        process, conn = worker.handle
        try:
            conn.send_bytes(message)
        except (OSError, EOFError, ValueError):  # ValueError: the pipe was closed here
            raise WorkerGone(exit_reason(_reaped(process))) from None
        return conn

    def _gather(self, tickets: dict[int, Any], timeouts: dict[int, float | None]) -> dict[int, bytes | WorkerGone]:
        now = time.monotonic()
        deadlines = {i: None if timeouts.get(i) is None else now + float(timeouts[i]) for i in tickets}  # type: ignore[arg-type]
        pending = set(tickets)
        answers: dict[int, bytes | WorkerGone] = {}
        while pending:
            waits = [d for i in pending if (d := deadlines[i]) is not None]
            timeout = seconds_left(min(waits)) if waits else None
            watched: list[Any] = []
            for index in pending:
                process, conn = self.workers[index].handle
                watched += [conn, process.sentinel]
            ready = set(wait(watched, timeout))
            for index in sorted(pending):
                process, conn = self.workers[index].handle
                if conn in ready or (process.sentinel in ready and conn.poll()):
                    try:
                        answers[index] = conn.recv_bytes()
                    except (EOFError, OSError):
                        answers[index] = WorkerGone(exit_reason(_reaped(process)))
                elif process.sentinel in ready:
                    answers[index] = WorkerGone(exit_reason(_reaped(process)))
                elif deadlines[index] is not None and seconds_left(deadlines[index]) == 0:
                    answers[index] = WorkerGone(f"did not answer within {timeouts[index]:g} s and was killed")
                else:
                    continue
                pending.discard(index)
        return answers

    def _kill(self, worker: Worker) -> None:
        if worker.handle is None:
            return
        process, conn = worker.handle
        kill_group(process.pid)
        process.join(2.0)
        conn.close()

    def _shutdown(self, workers: list[Worker], wait_s: float) -> None:
        for worker in workers:
            process, conn = worker.handle
            if worker.dead is None and process.is_alive():
                try:
                    conn.send_bytes(_CLOSE)
                except (OSError, ValueError):
                    pass
        stop_processes([w.handle[0] for w in workers], wait_s)
        for worker in workers:
            worker.handle[1].close()


def _reaped(process: Any, patience: float = 5.0) -> int | None:
    """The exit code of a worker whose pipe or sentinel says it ended, waiting up to ``patience``
    seconds for it.

    A killed process with several threads closes its pipe before the kernel lets its parent reap
    it, and a loaded machine can stretch that gap. The process is polled with ``is_alive()``
    (``waitpid`` with ``WNOHANG``) every 20 ms rather than joined: joined (half a second, then five
    more), a SIGKILLed worker still read as "still running" in 2 of 3 runs of the Ray tests followed
    by ``tests/test_vector.py``'s killed-mid-step test, polled in none of 6. Why the joins missed it is
    not pinned down (``join`` waits on the sentinel pipe, which any process holding a copy of its
    write end keeps open, but ``exitcode`` polls ``waitpid`` after it too).
    """
    deadline = time.monotonic() + patience
    while process.is_alive() and time.monotonic() < deadline:
        time.sleep(0.02)
    return process.exitcode
