"""CPU training speed on the rl-gain step: today's settings, the new CPU defaults, and each
setting alone, side by side in one run.

The rl-gain step (``agentgym compare --preset rl-gain``): TextWorld treasure hunts, chat prompts
trained in the trajectory row layout, 2 tasks x G = 8 rollouts (16 rows), 3 turns of at most 8
tokens, LoRA rank 16 on ``--model`` (default: the embedded SmolLM2-135M-Instruct; a warm-start
folder such as a demo run's ``sft/model`` gives episodes closer to the preset's).

1. **Capture**: one real training step plays its 16 episodes and scores them; the scored
   generation batch (every row trained, ``skip_uninformative_rows`` off) is saved.
2. **Measure**: for every setting, a fresh process builds the trainer with that setting and
   trains ``--steps`` steps on the saved batch (the rollouts are replayed, so every setting
   trains the very same rows); the first step is warm-up. Each reports the median
   forward+backward time of the trainer's own step profile, real (non-padding) tokens per second
   of it, and the peak resident memory of the training steps (``VmHWM`` after resetting it just
   before training; the model and the batch are already loaded then).

Settings: ``today`` (fp32, TRL's gradient checkpointing on, one pass over the 16 rows),
``defaults`` (what a CPU run gets now: bf16 autocast where native, checkpointing off, passes of
4 length-sorted rows with their padding cut), each of the three alone on top of ``today``, and
the defaults with checkpointing on (checkpointing's share inside the defaults). ``--settings``
picks a subset: "no checkpointing alone" keeps the fp32 activations of all 16 rows at once.

``--eval`` adds the held-out evaluation's peak memory and wall time with every episode in one
batch against the bounded batch of the CPU recipes.

    python benchmarks/cpu_train_speed.py                    # about 5-10 minutes on 2 cores
    python benchmarks/cpu_train_speed.py --model demo/sft/model --steps 4 --eval

Prints a table (and ``--json`` writes it); not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SETTINGS: dict[str, dict[str, Any]] = {
    "today": {"bf16": False, "cpu_bf16": "auto", "cpu_gradient_checkpointing": "on", "max_rows_per_pass": None},
    "defaults": {"bf16": None, "cpu_bf16": "auto", "cpu_gradient_checkpointing": "auto", "max_rows_per_pass": 4},
    "bf16 alone": {"bf16": None, "cpu_bf16": "auto", "cpu_gradient_checkpointing": "on", "max_rows_per_pass": None},
    "no checkpointing alone": {"bf16": False, "cpu_bf16": "auto", "cpu_gradient_checkpointing": "off",
                               "max_rows_per_pass": None},
    "sorted passes alone": {"bf16": False, "cpu_bf16": "auto", "cpu_gradient_checkpointing": "on",
                            "max_rows_per_pass": 4},
    # checkpointing's own share inside the defaults: "no checkpointing alone" holds the activations of all
    # 16 rows in fp32 at once (more than the shared 24 GiB machine could spare; see docs/performance.md)
    "defaults, checkpointing on": {"bf16": None, "cpu_bf16": "auto", "cpu_gradient_checkpointing": "on",
                                   "max_rows_per_pass": 4},
}
"""Config fields of each measured setting (``today`` is the CPU recipes before issue 40)."""


def step_fields(model: str, out: str, steps: int) -> dict[str, Any]:
    """The rl-gain preset's trainer config for one unit (comparisons.settings), without evaluation."""
    from agentgym_suite.comparisons.settings import PRESETS, CompareSettings, shared_fields

    preset = PRESETS["rl-gain"]
    settings = CompareSettings(**{k: v for k, v in preset.items() if k not in ("methods", "seeds", "warm_start")})
    fields = shared_fields(settings, model)
    fields.update(output_dir=out, credit="grpo", seed=0, max_steps=steps, eval_strategy="no", eval_steps=None,
                  dynamic_sampling=False, skip_uninformative_rows=False, save_trajectories=False,
                  print_step_times=False, logging_steps=1)
    for name in ("eval_env_kwargs", "eval_num_tasks"):  # no held-out games to prepare: evaluation is off
        fields.pop(name, None)
    return fields


def _resolve(model: str) -> str:
    from agentgym_suite.demo.pipeline import demo_model_path

    return demo_model_path(model) if model in ("default", "tiny") or model.startswith("hf:") else model


def capture(model: str, path: str) -> dict[str, Any]:
    """Train one rl-gain step and save its scored generation batch to ``path``."""
    import torch

    from agentgym_suite.trainers.agent_grpo import AgentGRPOTrainer
    from agentgym_suite.trainers.config import AgentGRPOConfig

    with tempfile.TemporaryDirectory() as out:
        trainer = AgentGRPOTrainer(args=AgentGRPOConfig(**{**step_fields(model, out, 1), "bf16": False}))
        kept: dict[str, Any] = {}
        generate = trainer._generate_and_score_completions

        def keep(inputs: Any) -> Any:
            result = generate(inputs)
            kept.setdefault("batch", result)
            return result

        trainer._generate_and_score_completions = keep  # type: ignore[method-assign]
        began = time.perf_counter()
        trainer.train()
        played = time.perf_counter() - began
    batch = kept["batch"]
    torch.save(batch, path)
    prompt, completion = batch["prompt_mask"], batch["completion_mask"]
    return {"rows": int(prompt.shape[0]), "width": int(prompt.shape[1] + completion.shape[1]),
            "real_tokens": int(prompt.sum() + completion.sum()), "capture_s": played}


def _peak_kib(field: str = "VmHWM") -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def measure(model: str, path: str, setting: str, steps: int) -> dict[str, Any]:
    """Train ``steps`` steps of the saved batch under ``setting``; one JSON line of results."""
    import torch

    from agentgym_suite.trainers.agent_grpo import AgentGRPOTrainer
    from agentgym_suite.trainers.config import AgentGRPOConfig
    from agentgym_suite.trainers.step_profile import read_step_times

    batch = torch.load(path, weights_only=False)
    with tempfile.TemporaryDirectory() as out:
        fields = {**step_fields(model, out, steps), **SETTINGS[setting]}
        trainer = AgentGRPOTrainer(args=AgentGRPOConfig(**fields))
        trainer._generate_and_score_completions = lambda inputs: batch  # type: ignore[method-assign]
        cpu_times: list[float] = []
        step = trainer.training_step

        def timed_step(*a: Any, **k: Any) -> Any:
            began = time.process_time()  # this process's CPU time: what the step costs on an idle core
            try:
                return step(*a, **k)
            finally:
                cpu_times.append(time.process_time() - began)

        trainer.training_step = timed_step  # type: ignore[method-assign]
        rss_before = _peak_kib("VmRSS")
        try:
            Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM: the peak of the training steps only
        except OSError:
            pass
        trainer.train()
        peak = _peak_kib("VmHWM")
        records = read_step_times(Path(out) / "step_times.jsonl")
    times = [float(r["forward_backward"]) for r in records[1:]] or [float(records[0]["forward_backward"])]
    tokens = int(batch["prompt_mask"].sum() + batch["completion_mask"].sum())
    fb = statistics.median(times)
    cpu = statistics.median(cpu_times[1:] or cpu_times)
    return {"setting": setting, "bf16": bool(trainer.args.bf16),
            "gradient_checkpointing": bool(trainer.args.gradient_checkpointing) and not trainer._pass_checkpointing.last,
            "forward_backward_cpu_s": cpu, "all_forward_backward_cpu_s": cpu_times,
            "max_rows_per_pass": trainer.args.max_rows_per_pass, "forward_backward_s": fb,
            "all_forward_backward_s": [float(r["forward_backward"]) for r in records], "tokens_per_s": tokens / fb,
            "tokens_per_cpu_s": tokens / cpu,
            "peak_rss_gib": peak / 2**20, "rss_before_gib": rss_before / 2**20,
            "loss": [float(h["loss"]) for h in trainer.state.log_history if "loss" in h]}


def measure_eval(model: str, episodes: int, batch: int) -> dict[str, Any]:
    """Peak memory and wall time of a greedy held-out evaluation of ``episodes`` games, ``batch`` at once."""
    from agentgym_suite.evaluation.runner import evaluate

    from agentgym_suite.comparisons.settings import PRESETS

    fields = step_fields(model, "/tmp", 1)
    env_kwargs = {**fields["env_kwargs"], **PRESETS["rl-gain"]["eval_env_kwargs"], "n_games": episodes}
    with tempfile.TemporaryDirectory() as out:
        began = time.perf_counter()
        result = evaluate(fields["env_id"], f"hf:{model}", out_dir=out, episodes=episodes, seed=0,
                          env_kwargs=env_kwargs, max_turns=3, prompt_format="chat",
                          agent_options={"temperature": 0.0, "max_new_tokens": 8}, batch_size=batch, progress=False)
        wall = time.perf_counter() - began
    return {"episodes": episodes, "batch": batch, "wall_s": wall, "peak_rss_gib": _peak_kib() / 2**20,
            "success_rate": float(result.summary.get("success_rate", 0.0))}


def _child(args: list[str]) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, env=env, check=False)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"{args[:2]} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(lines[-1])


def machine() -> str:
    """CPU model, cores, torch threads, bf16 flag and load average: what measured the table."""
    import torch

    from agentgym_suite.trainers.cpu_speed import cpu_flags, native_bf16

    name = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                 if line.startswith("model name")), platform.processor())
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (f"{name}, {os.cpu_count()} cores, torch {torch.__version__} with {torch.get_num_threads()} threads, "
            f"native bf16: {native_bf16(cpu_flags()) or 'no'}, load average {load}")


def main() -> int:
    """Capture once, measure every setting in its own process, print the table."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="default", help="default, tiny, hf:PATH or a model folder")
    parser.add_argument("--steps", type=int, default=3, help="training steps per setting (the first is warm-up)")
    parser.add_argument("--settings", default=",".join(SETTINGS), help="comma-separated subset of " + ", ".join(SETTINGS))
    parser.add_argument("--eval", action="store_true", help="also the held-out evaluation's memory, batched")
    parser.add_argument("--eval-episodes", type=int, default=48)
    parser.add_argument("--json", default=None, help="write the results here")
    parser.add_argument("--batch", default=None, help="reuse a batch saved by an earlier capture (with --keep-batch)")
    parser.add_argument("--keep-batch", default=None, help="save the captured batch here for --batch")
    parser.add_argument("--_capture", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--_measure", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--_batch", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--_eval_batch", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    model = _resolve(args.model)
    if args._capture:
        print(json.dumps(capture(model, args._capture)))
        return 0
    if args._measure:
        print(json.dumps(measure(model, args._batch, args._measure, args.steps)))
        return 0
    if args._eval_batch:
        print(json.dumps(measure_eval(model, args.eval_episodes, args._eval_batch)))
        return 0
    from agentgym_suite.trainers.cpu_speed import EVAL_BATCH

    chosen = [s.strip() for s in args.settings.split(",") if s.strip()]
    unknown = [s for s in chosen if s not in SETTINGS]
    if unknown:
        parser.error(f"unknown settings {unknown}; choose from {list(SETTINGS)}")
    results: dict[str, Any] = {"machine": machine(), "model": args.model, "steps": args.steps}
    with tempfile.TemporaryDirectory() as scratch:
        path = args.batch or args.keep_batch or str(Path(scratch) / "batch.pt")
        if args.batch:
            import torch

            saved = torch.load(path, weights_only=False)
            results["batch"] = {"rows": int(saved["prompt_mask"].shape[0]), "reused": path,
                                "width": int(saved["prompt_mask"].shape[1] + saved["completion_mask"].shape[1]),
                                "real_tokens": int(saved["prompt_mask"].sum() + saved["completion_mask"].sum())}
        else:
            results["batch"] = _child(["--model", model, "--_capture", path])
        print(f"captured: {results['batch']}", flush=True)
        results["settings"] = [_child(["--model", model, "--steps", str(args.steps), "--_measure", s, "--_batch", path])
                               for s in chosen]
    if args.eval:
        results["eval"] = [_child(["--model", model, "--eval-episodes", str(args.eval_episodes), "--_eval_batch", str(b)])
                           for b in (args.eval_episodes, EVAL_BATCH)]
    results["machine_after"] = machine()
    print_table(results)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


def print_table(results: dict[str, Any]) -> None:
    """The side-by-side table, ratios against ``today``."""
    print(f"\nmachine: {results['machine']}\nbatch: {results['batch']}")
    rows = results["settings"]
    base = next((r for r in rows if r["setting"] == "today"), rows[0])
    print("\n| setting | bf16 | grad. checkpointing | rows per pass | forward+backward CPU s | speed-up (CPU) | "
          "tokens per CPU s | forward+backward wall s | speed-up (wall) | tokens/s (wall) | peak memory GiB | "
          "memory vs today |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['setting']} | {'yes' if r['bf16'] else 'no'} | {'on' if r['gradient_checkpointing'] else 'off'} | "
              f"{r['max_rows_per_pass'] or 'all'} | {r['forward_backward_cpu_s']:.1f} | "
              f"{base['forward_backward_cpu_s'] / r['forward_backward_cpu_s']:.2f}x | {r['tokens_per_cpu_s']:.0f} | "
              f"{r['forward_backward_s']:.1f} | "
              f"{base['forward_backward_s'] / r['forward_backward_s']:.2f}x | {r['tokens_per_s']:.0f} | "
              f"{r['peak_rss_gib']:.2f} | {r['peak_rss_gib'] / base['peak_rss_gib']:.2f}x |")
    for r in results.get("eval", []):
        print(f"held-out evaluation, {r['episodes']} episodes, {r['batch']} at once: {r['wall_s']:.0f} s, "
              f"peak memory {r['peak_rss_gib']:.2f} GiB, success {100 * r['success_rate']:.1f} %")
    print(f"\nmachine at the end: {results['machine_after']}")


if __name__ == "__main__":
    raise SystemExit(main())
