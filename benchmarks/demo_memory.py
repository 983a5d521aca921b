"""Peak resident memory of each stage of ``agentgym demo``: which stage holds the run's peak.

Runs the demo in this process (any ``agentgym demo`` flags after ``--``) with a thread that
samples the process's resident memory (RSS) every ``--interval`` seconds and books each sample
to the innermost stage running then:

* ``prepare games`` (game generation; the generator processes are counted separately, as
  ``children``), ``eval <name>`` (each held-out evaluation), ``sft collect`` (the oracle's
  episodes), ``sft train`` (SFTTrainer with LoRA, the merge and the save),
* the GRPO stage split the way its step is: ``grpo build`` (the trainer: model, LoRA, envs),
  ``grpo rollouts`` (``_rollout_phase``: generation and env steps), ``grpo logprob passes``
  (``_score_phase``/``_loss_phase``), ``grpo forward+backward`` (the rest of
  ``training_step``), ``grpo optimizer/other`` (the rest of the training loop),
  ``grpo held-out eval`` (``evaluate`` during training), ``grpo save`` (``save_merged``);
* ``outside the stages``: start-up, the pauses between stages and the report.

Prints one row per stage (peak RSS, RSS at its start and end, seconds) and the process's
``VmHWM`` (the kernel's own peak), and writes them to ``<out>/stage_memory.json``. With
``--compare BEFORE.json`` it prints that run's peaks side by side with this one's and the ratio.

    python benchmarks/demo_memory.py --out /tmp/demo-mem -- --seed 0
    python benchmarks/demo_memory.py --out /tmp/demo-mem2 --compare /tmp/demo-mem/stage_memory.json

Ctrl-C (SIGINT) stops the demo where it is (``agentgym`` returns 130) and still prints and writes
the stages run so far: the per-stage peaks do not depend on how many steps ran, so a cut-short
run on a busy machine still tells which stage holds the peak. (Once, two SIGINTs sent during the
GRPO stage's held-out evaluation were swallowed and the demo ran on; the CLI's SIGINT handler,
``agentgym_suite.core.interrupts``, now stops a run whose first Ctrl-C was swallowed at the next
batch of episodes, and ends it at once on a second.)

Each row also gives the stage's CPU seconds (user + system of the process and its finished
children): on a shared machine what a stage costs, where its wall seconds depend on the load.

Not a test; the memory numbers are meaningful on a shared machine, its wall times are not.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

import psutil

GIB = 2**30


class StageMemory:
    """RSS sampled on a thread, each sample booked to the innermost stage running."""

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self.process = psutil.Process()
        self.stack: list[str] = ["outside the stages"]
        self.stages: dict[str, dict[str, float]] = {}
        self.children_peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._lock = threading.Lock()

    def _book(self, rss: int) -> None:
        with self._lock:
            name = self.stack[-1]
            stage = self.stages.setdefault(name, {"peak": 0, "seconds": 0.0, "entries": 0})
            stage["peak"] = max(stage["peak"], rss)

    def _run(self) -> None:
        ticks = 0
        while not self._stop.wait(self.interval):
            try:
                self._book(self.process.memory_info().rss)
                ticks += 1
                if ticks % 25 == 0:  # children (game generators, env workers): less often, they are small
                    kids = sum(c.memory_info().rss for c in self.process.children(recursive=True))
                    self.children_peak = max(self.children_peak, kids)
            except psutil.Error:
                continue

    def start(self) -> None:
        """Start sampling."""
        self._thread.start()

    def stop(self) -> None:
        """Stop sampling."""
        self._stop.set()
        self._thread.join()

    def wrap(self, owner: Any, attribute: str, name: str | Callable[..., str]) -> None:
        """Book the time inside ``owner.attribute`` (a function or method) to stage ``name``
        (or ``name(*args)`` for a name that depends on the call)."""
        original = getattr(owner, attribute)

        @functools.wraps(original)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            label = name(*args, **kwargs) if callable(name) else name
            rss = self.process.memory_info().rss
            with self._lock:
                self.stack.append(label)
                stage = self.stages.setdefault(label, {"peak": 0, "seconds": 0.0, "entries": 0})
                stage.setdefault("start", rss)
                stage["entries"] += 1
            self._book(rss)
            began, cpu = time.perf_counter(), cpu_seconds()
            try:
                return original(*args, **kwargs)
            finally:
                rss = self.process.memory_info().rss
                self._book(rss)
                with self._lock:
                    stage["seconds"] += time.perf_counter() - began
                    stage["cpu_s"] = stage.get("cpu_s", 0.0) + cpu_seconds() - cpu
                    stage["end"] = rss
                    self.stack.pop()

        setattr(owner, attribute, wrapped)


def cpu_seconds() -> float:
    """User + system CPU seconds of this process (every thread) and its finished children: on a shared
    machine what a stage costs, where its wall seconds depend on the load."""
    import resource

    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def instrument(probe: StageMemory) -> None:
    """Wrap the demo's stages and the GRPO trainer's phases."""
    from agentgym_suite.demo import oracle_sft, pipeline
    from agentgym_suite.trainers.agent_grpo import AgentGRPOTrainer

    probe.wrap(pipeline, "demo_model_path", "model (conversion on a first run)")
    probe.wrap(pipeline, "prepare_games", "prepare games")
    probe.wrap(pipeline, "_evaluate", lambda settings, name, agent: f"eval {name}")
    probe.wrap(pipeline, "_sft", "sft collect")
    probe.wrap(oracle_sft, "train_sft", "sft train")
    probe.wrap(pipeline, "_grpo", "grpo optimizer/other")
    probe.wrap(AgentGRPOTrainer, "__init__", "grpo build")
    probe.wrap(AgentGRPOTrainer, "training_step", "grpo forward+backward")
    probe.wrap(AgentGRPOTrainer, "_rollout_phase", "grpo rollouts")
    probe.wrap(AgentGRPOTrainer, "_score_phase", "grpo logprob passes")
    probe.wrap(AgentGRPOTrainer, "_loss_phase", "grpo logprob passes")
    probe.wrap(AgentGRPOTrainer, "evaluate", "grpo held-out eval")
    probe.wrap(AgentGRPOTrainer, "save_merged", "grpo save")


def vm_hwm() -> int:
    """The kernel's peak resident memory of this process (``VmHWM``), in bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def table(stages: dict[str, dict[str, float]], before: dict[str, Any] | None) -> str:
    """The per-stage rows as a markdown table (with the ``before`` run's peaks when given)."""
    head = "| stage | peak RSS GiB | at start | at end | seconds | CPU s |"
    rule = "|---|---:|---:|---:|---:|---:|"
    if before:
        head += " before: peak GiB | ratio |"
        rule += "---:|---:|"
    lines = [head, rule]
    for name, s in stages.items():
        row = (f"| {name} | {s['peak'] / GIB:.2f} | {s.get('start', 0) / GIB:.2f} | {s.get('end', 0) / GIB:.2f} "
               f"| {s['seconds']:.0f} | {s.get('cpu_s', 0.0):.0f} |")
        if before:
            old = before["stages"].get(name, {}).get("peak")
            row += f" {old / GIB:.2f} | {s['peak'] / old:.2f} |" if old else " - | - |"
        lines.append(row)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="the demo's output folder")
    parser.add_argument("--interval", type=float, default=0.02, help="seconds between RSS samples")
    parser.add_argument("--compare", help="stage_memory.json of an earlier run, printed side by side")
    parser.add_argument("demo_args", nargs="*", help="agentgym demo flags (after --)")
    args = parser.parse_args(argv)

    from agentgym_suite.cli import main as agentgym

    probe = StageMemory(args.interval)
    instrument(probe)
    probe.start()
    began = time.perf_counter()
    try:
        code = agentgym(["demo", "--out", args.out, *args.demo_args])
    finally:
        probe.stop()
    result = {"stages": probe.stages, "vm_hwm": vm_hwm(), "children_peak": probe.children_peak,
              "wall_s": time.perf_counter() - began, "cpu_s": cpu_seconds(), "load": os.getloadavg(), "argv": sys.argv[1:],
              "env": {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "MALLOC_ARENA_MAX", "MALLOC_TRIM_THRESHOLD_")}}
    Path(args.out, "stage_memory.json").write_text(json.dumps(result, indent=2))
    before = json.loads(Path(args.compare).read_text()) if args.compare else None
    print(table(probe.stages, before))
    print(f"process peak (VmHWM) {result['vm_hwm'] / GIB:.2f} GiB"
          + (f", before {before['vm_hwm'] / GIB:.2f} GiB, ratio {result['vm_hwm'] / before['vm_hwm']:.2f}"
             if before else "")
          + f"; child processes' peak {probe.children_peak / GIB:.2f} GiB; wall {result['wall_s'] / 60:.1f} min, "
            f"{result['cpu_s']:.0f} CPU s")
    return code


if __name__ == "__main__":
    raise SystemExit(main())
