"""A small env that misbehaves inside env worker processes, and a look at the processes left.

``WorkerFault-v0`` (:class:`WorkerFaultEnv`): task ``tN-i`` is won by saying ``go`` N times. In a
worker process (never in the process that made the pool, ``home_pid``), a step at turn
``at_turn`` or later of a task whose id starts with ``kill_task`` SIGKILLs the worker, and one
of ``stop_task`` SIGSTOPs it (a worker that hangs so hard that no thread inside it can answer).
``once`` names a file: only the env that creates it faults, so the fault happens once per test
and a replacement worker plays the task normally. A reset of a task whose id starts with
``stop_reset_task`` SIGSTOPs the worker (a worker that hangs while loading a task).
The command ``sleep`` takes ``sleep_s`` seconds (a step slow enough to kill a worker during it).
"""

from __future__ import annotations

import os
import signal
import time
from typing import Any

import gymnasium as gym
import psutil

from agentgym_suite.core.actions import ParsedAction
from agentgym_suite.core.text_env import StepOutcome, TaskStart, TextEnv

FAULT_ID = "WorkerFault-v0"


class WorkerFaultEnv(TextEnv):
    """See the module docstring."""

    benchmark = "fake"
    default_action_format = "plain"
    prompt_description = "a counting game"

    def __init__(self, *, home_pid: int = 0, kill_task: str | None = None, stop_task: str | None = None,
                 at_turn: int = 2, once: str | None = None, n_tasks: int = 6, sleep_s: float = 30.0,
                 stop_reset_task: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.home_pid, self.kill_task, self.stop_task, self.sleep_s = home_pid, kill_task, stop_task, sleep_s
        self.at_turn, self.once, self.n_tasks = at_turn, once, n_tasks
        self.stop_reset_task = stop_reset_task
        self._left = 0

    def role_call_settings(self) -> dict[str, str]:
        """The model-played roles' cache and ledger settings the process this env lives in sees."""
        from agentgym_suite.llm.role_client import call_environment

        return call_environment()

    def task_ids(self) -> list[str]:
        return [f"t{i % 3 + 1}-{i}" for i in range(self.n_tasks)]

    def oracle(self) -> list[str]:
        return ["go"] * self._left

    def _load_task(self, task_id: str) -> TaskStart:
        if (self.stop_reset_task is not None and os.getpid() != self.home_pid
                and task_id.startswith(self.stop_reset_task) and self._first()):
            os.kill(os.getpid(), signal.SIGSTOP)
        self._left = int(task_id[1:].split("-")[0])
        return TaskStart(f"Say go {self._left} times ({task_id}).", "say go", admissible_actions=["go", "wait", "sleep"])

    def _execute(self, command: str, parsed: ParsedAction) -> StepOutcome:
        self._fault()
        if command == "sleep":
            time.sleep(self.sleep_s)
        if command == "go":
            self._left -= 1
        done = self._left <= 0
        return StepOutcome(f"{self._left} to go (pid-free text).", 1.0 if done else 0.0, 1.0 if done else 0.0,
                           won=done, terminated=done, admissible_actions=["go", "wait"])

    def _fault(self) -> None:
        if os.getpid() == self.home_pid or self.turn < self.at_turn:
            return
        for task, sig in ((self.kill_task, signal.SIGKILL), (self.stop_task, signal.SIGSTOP)):
            if task is not None and str(self.task_id).startswith(task) and self._first():
                os.kill(os.getpid(), sig)

    def _first(self) -> bool:
        """True for the one env that creates the ``once`` file (always True without one)."""
        if self.once is None:
            return True
        try:
            os.close(os.open(self.once, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return False
        return True


def register_worker_fakes() -> str:
    """Register ``WorkerFault-v0`` once; returns its id."""
    if FAULT_ID not in gym.registry:
        gym.register(id=FAULT_ID, entry_point=WorkerFaultEnv, max_episode_steps=8)
    return FAULT_ID


def live_descendants() -> set[int]:
    """Pids of this process's descendants that still run (zombies and Python's resource tracker,
    which lives as long as the interpreter, not counted)."""
    alive = set()
    for child in psutil.Process().children(recursive=True):
        try:
            if child.status() == psutil.STATUS_ZOMBIE or "resource_tracker" in " ".join(child.cmdline()):
                continue
            alive.add(child.pid)
        except psutil.Error:
            continue
    return alive


def make_or_die(once: str, home_pid: int) -> WorkerFaultEnv:
    """A factory that SIGKILLs the worker process it runs in the first time (``once``), then makes envs."""
    env = WorkerFaultEnv(home_pid=home_pid)
    if os.getpid() != home_pid and env.once is None:
        try:
            os.close(os.open(once, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return env
        os.kill(os.getpid(), signal.SIGKILL)
    return env
