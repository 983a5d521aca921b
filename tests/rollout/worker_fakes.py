"""A small env that misbehaves inside env worker processes, and a look at the processes left.

``WorkerFault-v0`` (:class:`WorkerFaultEnv`): task ``tN`` is won by saying ``go`` N times. In a
worker process (never in the process that made the pool, ``home_pid``), the first step of
``kill_task`` at turn ``at_turn`` or later SIGKILLs the worker, and ``stop_task`` SIGSTOPs it (a
worker that hangs so hard that no thread inside it can answer). ``once`` names a file: the
fault happens only while it does not exist, so a replacement worker plays the task normally.
The command ``sleep`` takes ``sleep_s`` seconds (a step slow enough to kill a worker during it).
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import psutil

from agentgym_suite.core.actions import ParsedAction
from agentgym_suite.core.text_env import StepOutcome, TaskStart, TextEnv

FAULT_ID = "WorkerFault-v0"


class WorkerFaultEnv(TextEnv):
    """See the module docstring."""

    benchmark = "fake"
    prompt_description = "a counting game"

    def __init__(self, *, home_pid: int = 0, kill_task: str | None = None, stop_task: str | None = None,
                 at_turn: int = 2, once: str | None = None, n_tasks: int = 6, sleep_s: float = 30.0,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.home_pid, self.kill_task, self.stop_task, self.sleep_s = home_pid, kill_task, stop_task, sleep_s
        self.at_turn, self.once, self.n_tasks = at_turn, once, n_tasks
        self._left = 0

    def task_ids(self) -> list[str]:
        return [f"t{i % 3 + 1}-{i}" for i in range(self.n_tasks)]

    def oracle(self) -> list[str]:
        return ["go"] * self._left

    def _load_task(self, task_id: str) -> TaskStart:
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
        if self.once is not None and Path(self.once).exists():
            return
        for task, sig in ((self.kill_task, signal.SIGKILL), (self.stop_task, signal.SIGSTOP)):
            if task is not None and self.task_id == task:
                if self.once is not None:
                    Path(self.once).write_text("done", encoding="utf-8")
                os.kill(os.getpid(), sig)


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
