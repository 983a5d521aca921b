"""Per-step wall-time profile of a training run: where each optimiser step's time goes.

Every optimiser step is split into the phases of :data:`PHASES`:

* ``rollout_generation`` — the policy generating actions during rollouts (the rollout
  engine's ``generate_s``);
* ``env_steps`` — the rest of the rollouts: env resets and steps, prompt rendering and
  tokenisation (rollout wall time minus generation);
* ``logprob_passes`` — the no-gradient passes before the loss: old-policy, reference-model and
  teacher log-probs (and VAD's teacher logits);
* ``forward_backward`` — the loss's forward and backward passes (every micro-batch);
* ``optimizer`` — gradient clipping and the optimiser update;
* ``logging`` — the trainer's ``log`` call (metrics, the console line, report backends);
* ``other`` — the rest of the step's wall time (building rows, credit assignment, padding,
  the data loader).

:class:`StepTimer` is mixed into a ``transformers`` trainer (``AgentGRPOTrainer`` and the demo's
SFT trainer): it writes one JSON line per step to ``<output_dir>/step_times.jsonl``, adds the
phases to the step's logged metrics as ``time/<phase>_s`` and prints a one-line summary. Phases
a trainer does not have (an SFT trainer plays no rollouts) stay 0.
"""

from __future__ import annotations

import json
import os
import time
from contextlib import contextmanager
from typing import Any, Iterator

from transformers import TrainerCallback

PHASES = ("rollout_generation", "env_steps", "logprob_passes", "forward_backward", "optimizer", "logging", "other")
"""The phases of a step, in the order they are reported and stacked."""

STEP_TIMES_FILE = "step_times.jsonl"


def format_step_times(record: dict[str, Any]) -> str:
    """One console line: the step, its wall time and each non-zero phase."""
    parts = [f"{name} {record[name]:.2f}s" for name in PHASES if record.get(name, 0.0) > 0.0005]
    return f"step {record['step']} time {record['wall_s']:.2f}s: " + ", ".join(parts)


def read_step_times(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The records of a ``step_times.jsonl`` file ([] when it does not exist)."""
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


class StepProfile:
    """The phases of the step in progress."""

    def __init__(self) -> None:
        self.phases: dict[str, float] = dict.fromkeys(PHASES, 0.0)
        self.started: float | None = None
        self.last_backward_end: float | None = None

    def begin(self) -> None:
        """Start a new step."""
        self.phases = dict.fromkeys(PHASES, 0.0)
        self.started = time.perf_counter()
        self.last_backward_end = None

    def add(self, phase: str, seconds: float) -> None:
        """Add ``seconds`` to ``phase`` (ignored outside a step)."""
        if phase not in self.phases:
            raise KeyError(f"unknown phase {phase!r}; phases are {PHASES}.")
        if self.started is not None:
            self.phases[phase] += max(0.0, float(seconds))

    @contextmanager
    def timed(self, phase: str) -> Iterator[None]:
        """Add the block's wall time to ``phase``."""
        began = time.perf_counter()
        try:
            yield
        finally:
            self.add(phase, time.perf_counter() - began)

    def finish(self, step: int) -> dict[str, Any] | None:
        """The step's record (``other`` = wall time not in any phase); None outside a step."""
        if self.started is None:
            return None
        wall = time.perf_counter() - self.started
        record: dict[str, Any] = {"step": int(step), "wall_s": wall}
        measured = sum(v for k, v in self.phases.items() if k != "other")
        record.update(self.phases)
        record["other"] = max(0.0, wall - measured)
        self.started = None
        return record


class _StepEvents(TrainerCallback):
    """Marks the start and end of each step and times the optimiser update for a :class:`StepTimer`."""

    def __init__(self, owner: StepTimer) -> None:
        self.owner = owner
        self._optimizer_began: float | None = None

    def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.owner._flush_step_record()
        self.owner.step_profile.begin()

    def on_pre_optimizer_step(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        # gradient clipping runs between the last backward and this event: it counts as optimiser time
        profile = self.owner.step_profile
        self._optimizer_began = profile.last_backward_end or time.perf_counter()

    def on_optimizer_step(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self._optimizer_began is not None:
            self.owner.step_profile.add("optimizer", time.perf_counter() - self._optimizer_began)
            self._optimizer_began = None

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.owner._pending_record = self.owner.step_profile.finish(int(state.global_step))

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.owner._flush_step_record()


class StepTimer:
    """Mixin for a ``transformers`` trainer: the per-step time profile (module docstring).

    Call :meth:`_init_step_timer` after the trainer's ``__init__``. Time spent in
    ``_prepare_inputs`` (a GRPO trainer's rollouts and log-prob passes, which add their own
    phases) is kept out of ``forward_backward``. A step's record is closed at the step's end; the
    step's training ``log`` call, when there is one, adds its time as ``logging`` and the other
    phases to the logged metrics (``time/<phase>_s``) before the record is written and printed.
    """

    step_profile: StepProfile
    step_times: list[dict[str, Any]]

    def _init_step_timer(self, print_lines: bool = True) -> None:
        self.step_profile = StepProfile()
        self.step_times = []
        self._print_step_times = print_lines
        self._prepare_s = 0.0
        self._pending_record: dict[str, Any] | None = None
        self.add_callback(_StepEvents(self))  # type: ignore[attr-defined]

    def _prepare_inputs(self, inputs: Any) -> Any:
        began = time.perf_counter()
        try:
            return super()._prepare_inputs(inputs)  # type: ignore[misc]
        finally:
            self._prepare_s += time.perf_counter() - began

    def training_step(self, model: Any, inputs: Any, num_items_in_batch: Any = None) -> Any:
        began = time.perf_counter()
        self._prepare_s = 0.0
        try:
            return super().training_step(model, inputs, num_items_in_batch)  # type: ignore[misc]
        finally:
            end = time.perf_counter()
            self.step_profile.add("forward_backward", end - began - self._prepare_s)
            self.step_profile.last_backward_end = end

    def log(self, logs: dict[str, float], start_time: float | None = None) -> None:
        """The trainer's ``log``; a step's training log (it has ``loss``) also carries and closes
        the step's time profile."""
        record = self._pending_record
        if record is None or "loss" not in logs:
            super().log(logs, start_time)  # type: ignore[misc]
            return
        phases = {f"time/{k}_s": record[k] for k in PHASES if k not in ("logging", "other")}
        began = time.perf_counter()
        super().log({**logs, **phases}, start_time)  # type: ignore[misc]
        record["logging"] = time.perf_counter() - began
        record["wall_s"] += record["logging"]
        self._flush_step_record()

    def _flush_step_record(self) -> None:
        """Write and print the closed step's record, if one is waiting."""
        record, self._pending_record = self._pending_record, None
        if record is None:
            return
        self.step_times.append(record)
        if not self.is_world_process_zero():  # type: ignore[attr-defined]
            return
        out = self.args.output_dir  # type: ignore[attr-defined]
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, STEP_TIMES_FILE), "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")
        if self._print_step_times:
            print(format_step_times(record), flush=True)
