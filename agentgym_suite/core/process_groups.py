"""Worker processes that hold envs: how one ended, how to end one with all it started, and the
error that says a worker died.

A worker calls :func:`lead_own_group` first thing, so every process it starts (ScienceWorld's
JVM, a game interpreter) shares its process group. :func:`kill_group` then ends the worker and
all of them at once, also after the worker itself was killed and its children were left behind.
"""

from __future__ import annotations

import os
import signal
import time
from typing import Any, Sequence

from agentgym_suite.core.errors import AgentGymError

CLOSE_WAIT_S = 3.0
"""How long a pool's ``close`` lets its workers shut down cleanly before killing them."""


class EnvWorkerDied(AgentGymError, RuntimeError):
    """A worker process (or Ray actor) that held envs died or stopped answering; its envs are lost.

    Attributes:
        worker: index of the worker in its pool.
        env_indices: indices of the envs it held (vector env slots), when the owner knows them.
        pid: the worker's process id, when known.
        reason: how it ended, e.g. ``"was killed by SIGKILL"``.
    """

    def __init__(self, message: str, *, worker: int = -1, env_indices: Sequence[int] = (), pid: int | None = None,
                 reason: str = "") -> None:
        super().__init__(message)
        self.worker = worker
        self.env_indices = tuple(env_indices)
        self.pid = pid
        self.reason = reason

    def __reduce__(self) -> Any:  # keyword-only fields survive pickling (Ray, worker pipes)
        return (_rebuild_worker_died, (str(self), self.worker, self.env_indices, self.pid, self.reason))


def _rebuild_worker_died(message: str, worker: int, env_indices: tuple[int, ...], pid: int | None,
                         reason: str) -> EnvWorkerDied:
    return EnvWorkerDied(message, worker=worker, env_indices=env_indices, pid=pid, reason=reason)


def exit_reason(exitcode: int | None) -> str:
    """How a process ended, from ``multiprocessing.Process.exitcode``: ``"was killed by SIGKILL"``,
    ``"exited with code 1"``, or ``"is still running"``."""
    if exitcode is None:
        return "is still running"
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"was killed by {name}"
    return f"exited with code {exitcode}"


def lead_own_group() -> None:
    """Make the calling process the leader of a new process group (POSIX; a no-op elsewhere).

    The processes it starts from then on join that group, so :func:`kill_group` reaches them; a
    terminal's Ctrl-C no longer reaches the worker directly, its owner shuts it down instead.
    """
    if hasattr(os, "setpgid"):
        try:
            os.setpgid(0, 0)
        except OSError:  # already a group or session leader: killing by pid still works
            pass


def kill_group(pid: int | None) -> None:
    """SIGKILL the process group led by ``pid`` (the worker and everything it started); quiet when
    nothing of it is left."""
    if pid is None or pid <= 0:
        return
    if hasattr(os, "killpg"):
        try:
            if os.getpgid(pid) != pid:  # not a group leader (it did not get to lead_own_group)
                os.kill(pid, signal.SIGKILL)
                return
        except ProcessLookupError:
            pass  # the leader is gone; members of its group may still be alive
        except PermissionError:
            return
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        return
    try:  # pragma: no cover - non-POSIX
        os.kill(pid, signal.SIGTERM)
    except OSError:
        pass


def stop_processes(processes: Sequence[Any], wait: float = CLOSE_WAIT_S) -> None:
    """Wait up to ``wait`` seconds in all for ``processes`` (``multiprocessing.Process``) to end, then
    kill every one still running together with its process group, and reap them.

    Groups are killed also for processes that ended on their own: whatever they started dies too.
    """
    deadline = time.monotonic() + max(0.0, wait)
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
    for process in processes:
        kill_group(process.pid)
    for process in processes:
        process.join(1.0)
