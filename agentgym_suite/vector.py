"""Vectorised envs: ``make_vec(env_id, n)`` with Gymnasium's ``SyncVectorEnv``/``AsyncVectorEnv``.

The asynchronous kind is :class:`WorkerAsyncVectorEnv`, Gymnasium's ``AsyncVectorEnv`` with three
additions for workers that die (killed by the OOM killer, a crashing native library, a user):

* a call that finds a worker dead raises :class:`~agentgym_suite.core.process_groups.EnvWorkerDied`
  naming the worker, its process and the sub-env index, mid-step as well as between steps, and
  leaves the vector env usable (no ``AlreadyPendingCallError`` afterwards);
* :meth:`WorkerAsyncVectorEnv.restart_worker` starts a fresh worker for a sub-env, and a full
  ``reset()`` restarts every dead one first;
* ``close()`` returns within seconds and kills each worker's whole process group (a simulator's
  JVM included).
"""

from __future__ import annotations

import multiprocessing
import time
from multiprocessing.connection import Connection, wait
from typing import Any, Callable

import gymnasium as gym
from gymnasium.vector import AsyncVectorEnv, AutoresetMode, SyncVectorEnv
from gymnasium.vector.async_vector_env import AsyncState, _async_worker
from gymnasium.vector.utils import CloudpickleWrapper

from agentgym_suite.core.process_groups import CLOSE_WAIT_S, EnvWorkerDied, exit_reason, kill_group, lead_own_group


def make_vec(
    env_id: str,
    n: int,
    *,
    asynchronous: bool = False,
    autoreset_mode: AutoresetMode = AutoresetMode.NEXT_STEP,
    context: str | None = None,
    **kwargs: Any,
) -> SyncVectorEnv | WorkerAsyncVectorEnv:
    """Build ``n`` copies of ``env_id`` as a Gymnasium vector env.

    Args:
        env_id: a registered id such as ``"ALFWorld-v0"``.
        n: number of sub-envs (>= 1).
        asynchronous: one worker process per sub-env (worth it for slow backends such as
            ScienceWorld's JVM or ALFWorld's planner), as a :class:`WorkerAsyncVectorEnv`;
            otherwise all step in this process.
        autoreset_mode: Gymnasium's autoreset mode (``NEXT_STEP`` by default).
        context: multiprocessing start method for async workers (default: Gymnasium's).
        **kwargs: passed to ``gymnasium.make`` for every sub-env.

    Text observations are returned as a tuple of strings, one per sub-env.
    """
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}.")
    import agentgym_suite  # noqa: F401  (registers the ids inside worker processes too)

    def factory() -> gym.Env:

        return gym.make(env_id, **kwargs)

    fns = [factory for _ in range(n)]
    if asynchronous:
        return WorkerAsyncVectorEnv(fns, context=context, autoreset_mode=autoreset_mode)
    return SyncVectorEnv(fns, copy=False, autoreset_mode=autoreset_mode)


def _group_worker(*args: Any) -> None:
    """Gymnasium's worker loop, run as the leader of its own process group (see :func:`kill_group`)."""
    lead_own_group()
    _async_worker(*args)


class _WatchedPipe:
    """The parent end of one worker's pipe: ``recv`` returns as soon as the worker dies (raising
    :class:`EnvWorkerDied`), and ``send`` to a dead worker says so instead of ``BrokenPipeError``."""

    def __init__(self, conn: Connection, owner: WorkerAsyncVectorEnv, index: int) -> None:
        self.conn, self.owner, self.index = conn, owner, index
        self.pending = False
        """True between a ``send`` and its ``recv``: a reply is owed."""

    @property
    def closed(self) -> bool:
        return self.conn.closed

    def poll(self, timeout: float = 0.0) -> bool:
        return self.conn.poll(timeout)

    def close(self) -> None:
        self.conn.close()

    def send(self, message: Any) -> None:
        if not self.owner.processes[self.index].is_alive():
            raise self.owner.worker_died(self.index)
        try:
            self.conn.send(message)
        except (BrokenPipeError, ConnectionResetError, EOFError, OSError):
            raise self.owner.worker_died(self.index) from None
        self.pending = True

    def recv(self, timeout: float | None = None) -> Any:
        process = self.owner.processes[self.index]
        ready = wait([self.conn, process.sentinel], timeout)
        if not ready:
            raise multiprocessing.TimeoutError(f"worker {self.index} did not answer within {timeout:g} s")
        if self.conn in ready or self.conn.poll():
            try:
                message = self.conn.recv()
            except (EOFError, ConnectionResetError, OSError):
                self.pending = False
                raise self.owner.worker_died(self.index) from None
            self.pending = False
            return message
        self.pending = False
        raise self.owner.worker_died(self.index)


class WorkerAsyncVectorEnv(AsyncVectorEnv):
    """Gymnasium's ``AsyncVectorEnv`` (one worker process per sub-env) that survives dead workers.

    See the module docstring. ``shared_memory`` is off (text observations); other arguments are
    Gymnasium's. After :class:`EnvWorkerDied`, replace the worker with :meth:`restart_worker` and
    reset its sub-env (``reset(options={"reset_mask": mask})``), or ``reset()`` every sub-env,
    which restarts every dead worker first.
    """

    def __init__(self, env_fns: list[Callable[[], gym.Env]], *, context: str | None = None, **kwargs: Any) -> None:
        super().__init__(env_fns, shared_memory=False, copy=False, context=context, worker=_group_worker, **kwargs)
        self._ctx = multiprocessing.get_context(context)
        self._death_notes: dict[int, str] = {}
        self.parent_pipes = [_WatchedPipe(pipe, self, i) for i, pipe in enumerate(self.parent_pipes)]

    # ------------------------------------------------------------------ dead workers
    def dead_workers(self) -> list[int]:
        """Indices of the workers (= sub-envs) that are no longer running."""
        return [i for i, (pipe, process) in enumerate(zip(self.parent_pipes, self.processes))
                if pipe is None or pipe.closed or not process.is_alive()]

    def worker_died(self, index: int) -> EnvWorkerDied:
        """The error for the dead worker ``index`` (its sub-env has the same index)."""
        process = self.processes[index]
        if process.is_alive():  # closed after its env raised: Gymnasium ends such a worker
            process.join(1.0)
        reason = self._death_notes.get(index) or exit_reason(process.exitcode)
        return EnvWorkerDied(
            f"the worker process of sub-env {index} (worker {index}, pid {process.pid}) {reason}; sub-env {index} is "
            f"lost. Replace it with restart_worker({index}) and reset that sub-env (reset_mask), or reset() all "
            "sub-envs, which restarts every dead worker.",
            worker=index, env_indices=(index,), pid=process.pid, reason=reason,
        )

    def restart_worker(self, index: int) -> None:
        """Start a fresh worker process for sub-env ``index`` (killing what is left of the old one).

        The new sub-env has not been reset: reset it with ``options={"reset_mask": mask}`` (or
        ``reset()`` all sub-envs) before the next step.
        """
        if not 0 <= index < self.num_envs:
            raise IndexError(f"sub-env index {index} is out of range for {self.num_envs} sub-envs.")
        self._assert_is_running()
        old_pipe, old = self.parent_pipes[index], self.processes[index]
        kill_group(old.pid)
        old.join(2.0)
        if old_pipe is not None and not old_pipe.closed:
            old_pipe.close()
        parent_pipe, child_pipe = self._ctx.Pipe()
        process = self._ctx.Process(
            target=_group_worker, name=f"Worker<{type(self).__name__}>-{index}",
            args=(index, CloudpickleWrapper(self.env_fns[index]), child_pipe, parent_pipe, None, self.error_queue,
                  self.autoreset_mode, None),
        )
        process.daemon = self.daemon
        process.start()
        child_pipe.close()
        self.processes[index] = process
        self.parent_pipes[index] = _WatchedPipe(parent_pipe, self, index)
        self._death_notes.pop(index, None)

    def _require_workers(self) -> None:
        dead = self.dead_workers()
        if dead:
            raise self._died(dead)

    def _died(self, dead: list[int]) -> EnvWorkerDied:
        first = self.worker_died(dead[0])
        if len(dead) == 1:
            return first
        reasons = "; ".join(f"sub-env {i} (pid {self.processes[i].pid}) {self.worker_died(i).reason}" for i in dead)
        return EnvWorkerDied(f"{len(dead)} worker processes are dead: {reasons}. Replace them with restart_worker(i), "
                             "or reset() all sub-envs.", worker=dead[0], env_indices=dead, pid=first.pid,
                             reason=first.reason)

    def _drain(self, timeout: float | None = None) -> None:
        """Read and drop the replies still owed by live workers, so the next call starts clean."""
        deadline = None if timeout is None else time.monotonic() + timeout
        for pipe in self.parent_pipes:
            if pipe is None or not pipe.pending or pipe.closed:
                continue
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                pipe.recv(left)
            except (EnvWorkerDied, multiprocessing.TimeoutError):
                pass
        self._state = AsyncState.DEFAULT

    def _guarded_wait(self, wait_fn: Callable[..., Any], timeout: float | None) -> Any:
        try:
            return wait_fn(timeout)
        except EnvWorkerDied as exc:
            self._drain(timeout)
            raise self._died(self.dead_workers() or [exc.worker]) from None

    # ------------------------------------------------------------------ Gymnasium's calls
    def reset_async(self, seed: Any = None, options: dict[str, Any] | None = None) -> None:
        if not (options and "reset_mask" in options):
            for index in self.dead_workers():  # a full reset starts every sub-env anew
                self.restart_worker(index)
        self._require_workers()
        super().reset_async(seed=seed, options=options)

    def reset_wait(self, timeout: float | None = None) -> Any:
        return self._guarded_wait(super().reset_wait, timeout)

    def step_async(self, actions: Any) -> None:
        self._require_workers()
        super().step_async(actions)

    def step_wait(self, timeout: float | None = None) -> Any:
        return self._guarded_wait(super().step_wait, timeout)

    def call_async(self, name: str, /, *args: Any, **kwargs: Any) -> None:
        self._require_workers()
        super().call_async(name, *args, **kwargs)

    def call_wait(self, timeout: float | None = None) -> Any:
        return self._guarded_wait(super().call_wait, timeout)

    def set_attr(self, name: str, values: Any) -> None:
        self._require_workers()
        super().set_attr(name, values)

    def _raise_if_errors(self, successes: Any) -> None:
        failed = [i for i, ok in enumerate(successes) if not ok]
        for index in failed:
            self._death_notes[index] = "stopped after its env raised (Gymnasium ends such a worker)"
        super()._raise_if_errors(successes)

    def close_extras(self, timeout: float | None = None, terminate: bool = False) -> None:
        """Close within :data:`~agentgym_suite.core.process_groups.CLOSE_WAIT_S` seconds: finish a
        pending call if its workers answer in time, ask live workers to close their envs, then
        kill whatever is still running, with its process group."""
        wait_s = CLOSE_WAIT_S if timeout is None else min(float(timeout), CLOSE_WAIT_S)
        deadline = time.monotonic() + (0.0 if terminate else wait_s)
        if self._state != AsyncState.DEFAULT:
            self._drain(max(0.0, deadline - time.monotonic()))
        live = [pipe for pipe in self.parent_pipes if pipe is not None and not pipe.closed]
        if not terminate:
            asked = []
            for pipe in live:
                try:
                    pipe.send(("close", None))
                    asked.append(pipe)
                except EnvWorkerDied:
                    pass
            for pipe in asked:
                try:
                    pipe.recv(max(0.0, deadline - time.monotonic()))
                except (EnvWorkerDied, multiprocessing.TimeoutError):
                    pass
        for pipe in live:
            pipe.close()
        for process in self.processes:
            process.join(max(0.0, deadline - time.monotonic()))
        for process in self.processes:
            kill_group(process.pid)
        for process in self.processes:
            process.join(1.0)
