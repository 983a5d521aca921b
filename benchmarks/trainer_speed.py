"""Trainer step time side by side: AgentGRPOTrainer vs TRL's plain GRPOTrainer, and the
extra cost of teacher log-probs (SDAR, AgentOPSD).

What it measures: the median wall time of an optimiser step (generation, log-prob passes,
loss, backward, update; the first step of each run is warm-up and not counted) of four
trainers on the same model, the same batch (episodes x G), the same per-turn token budget
and the same prompts: TRL's GRPOTrainer gets, as its dataset, exactly the first-turn prompts
the suite's env gives our trainer (one-turn episodes, so both train the same rows).

Prompt length matters for the teacher's cost: its prompt is the privileged skill text
(~300 tokens of the tiny tokenizer) plus the student's prompt. ``--observation-chars`` pads
each task's observation with a room description; the default (1600) makes the prompt about as
long as an ALFWorld/TextWorld turn, ``0`` gives the short one-line prompts.

Because the machine may be shared, the four trainers run in interleaved rounds
(``--rounds``) and each reported time is the median over rounds of the per-run medians;
every ratio compares numbers measured side by side. Targets: our GRPO step <= 1.2x TRL's;
SDAR and AgentOPSD steps <= 1.6x our GRPO step. Prints a table; not a test.

Three more parts (``--parts``):

* ``scaling`` — episodes per second of the same total batch (``--scaling-episodes``) trained by
  2 processes with one torch thread each (``torchrun``, gloo), by 1 process with one thread,
  and by 1 process with two threads. Target: 2 x 1 thread >= 1.6x 1 x 1 thread.
* ``flops`` — for one ``agentgym demo`` GRPO step (the demo's settings on ``--model``;
  ``default`` is the demo's model), the achieved forward+backward FLOP/s against a matrix-multiply
  FLOP/s measured in the same run, as a ratio (``step_flops.py``).
* ``memory`` — peak resident memory added by one training step on ALFWorld-length episodes
  (``--memory-turns`` turns, 1600-character observations), with and without
  ``max_rows_per_pass`` (``--row-bound``); each configuration in a fresh process.

    python benchmarks/trainer_speed.py --model tiny --steps 3
    python benchmarks/trainer_speed.py --model default --steps 2 --rounds 1
    python benchmarks/trainer_speed.py --parts scaling,memory
    python benchmarks/trainer_speed.py --parts flops --model default
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
from dataclasses import replace
import sys
import tempfile
from pathlib import Path

from datasets import Dataset
from transformers import AutoTokenizer, TrainerCallback
from trl import GRPOConfig, GRPOTrainer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from agentgym_suite.trainers import AgentGRPOConfig, AgentGRPOTrainer  # noqa: E402
from agentgym_suite.trainers.agent_grpo import resolve_model_path  # noqa: E402
from trainers.fake_env import LetterEnv  # noqa: E402
from agentgym_suite.rollout.prompting import EpisodePrompt  # noqa: E402
from ratios import report_ratio  # noqa: E402

ROOM = ("You are in a kitchen. You see a cabinet 1, a cabinet 2, a countertop 1, a drawer 1, a fridge 1, "
        "a microwave 1, a shelf 1, a sinkbasin 1, a stoveburner 1 and a toaster 1. On the countertop 1 you see "
        "an apple 1, a bread 1, a butterknife 1 and a mug 2. The drawer 1 is closed. ")


class PaddedLetterEnv(LetterEnv):
    """The trainer tests' letter env with a room description of ``chars`` characters before
    each observation (realistic prompt lengths; the rewards are unchanged)."""

    def __init__(self, chars: int = 0, **kwargs) -> None:
        super().__init__(**kwargs)
        self.room = (ROOM * (chars // len(ROOM) + 1))[:chars].rsplit(" ", 1)[0] + " " if chars else ""

    def _load_task(self, task_id: str):
        start = super()._load_task(task_id)
        return replace(start, observation=f"{self.room}{start.observation}")


def first_prompts(chars: int) -> list[list[dict]]:
    """The first-turn chat prompt our trainer sends for each task (TRL's dataset)."""
    env = PaddedLetterEnv(chars, horizon=1)
    prompts = []
    for task in env.task_ids():
        observation, info = env.reset(options={"task_id": task})
        prompt = EpisodePrompt("single", env=env)
        prompt.start(observation, info)
        prompts.append(prompt.prompt())
    return prompts


class StepTimer(TrainerCallback):
    """Wall time of each optimiser step (generation included)."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self._start = 0.0

    def on_step_begin(self, args, state, control, **kwargs):
        import time

        self._start = time.perf_counter()

    def on_step_end(self, args, state, control, **kwargs):
        import time

        self.times.append(time.perf_counter() - self._start)


def common(out: str, cli: argparse.Namespace) -> dict:
    return dict(output_dir=out, max_steps=cli.steps + 1, per_device_train_batch_size=cli.batch, num_generations=cli.G,
                max_completion_length=cli.tokens, bf16=False, gradient_checkpointing=False, report_to="none",
                logging_steps=1, save_strategy="no", use_cpu=not cli.gpu, seed=0, disable_tqdm=True,
                learning_rate=1e-5)


def median_step(timer: StepTimer) -> float:
    return statistics.median(timer.times[1:] or timer.times)  # the first step includes warm-up


def run_trl(model: str, cli: argparse.Namespace) -> float:
    timer = StepTimer()
    dataset = Dataset.from_dict({"prompt": first_prompts(cli.observation_chars)})

    def reward(completions, **_):
        return [random.random() for _ in completions]

    with tempfile.TemporaryDirectory() as out:
        trainer = GRPOTrainer(model=model, reward_funcs=reward, args=GRPOConfig(**common(out, cli)),
                              train_dataset=dataset, processing_class=AutoTokenizer.from_pretrained(model),
                              callbacks=[timer])
        trainer.train()
    return median_step(timer)


def run_ours(model: str, credit: str, cli: argparse.Namespace) -> float:
    timer = StepTimer()
    with tempfile.TemporaryDirectory() as out:
        args = AgentGRPOConfig(**common(out, cli), model_name_or_path=model, credit=credit, max_turns=1,
                               action_format=None, save_trajectories=False)
        trainer = AgentGRPOTrainer(args=args, env_factory=lambda: PaddedLetterEnv(cli.observation_chars, horizon=1),
                                   callbacks=[timer])
        trainer.train()
    return median_step(timer)


def compare(cli: argparse.Namespace) -> None:
    """Our trainer against TRL's, and the teacher's cost (the four trainers in interleaved rounds)."""
    model = resolve_model_path(cli.model)
    names = ("trl", "grpo", "sdar", "agentopsd")
    runs: dict[str, list[float]] = {name: [] for name in names}
    for _ in range(cli.rounds):
        for name in names:
            runs[name].append(run_trl(model, cli) if name == "trl" else run_ours(model, name, cli))
    med = {name: statistics.median(times) for name, times in runs.items()}
    trl_s = med["trl"]
    print(f"\nmodel={cli.model} batch={cli.batch} G={cli.G} tokens={cli.tokens} steps={cli.steps} "
          f"rounds={cli.rounds} observation_chars={cli.observation_chars}")
    print(f"{'trainer':<28}{'s/step':>10}{'ratio':>10}{'target':>10}  per-round s/step")
    rounds = {name: " ".join(f"{t:.3f}" for t in runs[name]) for name in names}
    print(f"{'TRL GRPOTrainer':<28}{trl_s:>10.3f}{1.0:>10.2f}{'':>10}  {rounds['trl']}")
    print(f"{'AgentGRPO grpo':<28}{med['grpo']:>10.3f}{med['grpo'] / trl_s:>10.2f}{'<=1.20':>10}  {rounds['grpo']}"
          "  (vs TRL)")
    for name in ("sdar", "agentopsd"):
        print(f"{'AgentGRPO ' + name:<28}{med[name]:>10.3f}{med[name] / med['grpo']:>10.2f}{'<=1.60':>10}  "
              f"{rounds[name]}  (vs our grpo)")
    detail = f"batch {cli.batch}, G {cli.G}, {cli.tokens} tokens, {cli.observation_chars}-char observations"
    report_ratio(f"AgentGRPO grpo step / TRL GRPOTrainer step ({cli.model})", med["grpo"] / trl_s, "<= 1.2x", detail)
    for name in ("sdar", "agentopsd"):
        report_ratio(f"{name} step / grpo step (teacher log-probs, {cli.model})", med[name] / med["grpo"], "<= 1.6x",
                     detail)


# ---------------------------------------------------------------------------------- scaling and memory
def worker(cli: argparse.Namespace) -> None:
    """One process of a scaling or memory run (``--worker``): train, write the timings or memory."""
    import torch

    torch.set_num_threads(cli.threads or 1)
    rank = int(os.environ.get("RANK", "0"))
    memory = cli.worker == "memory"
    turns = cli.memory_turns if memory else cli.scaling_turns
    with tempfile.TemporaryDirectory() as out:
        args = AgentGRPOConfig(**{**common(out, cli), "per_device_train_batch_size": cli.per_device,
                                  "max_steps": 1 if memory else cli.steps + 1},
                               model_name_or_path=resolve_model_path(cli.model), credit="grpo", max_turns=turns,
                               action_format=None, save_trajectories=False, max_prompt_tokens=4096,
                               max_rows_per_pass=cli.row_bound or None)
        timer = StepTimer()
        trainer = AgentGRPOTrainer(args=args, callbacks=[timer],
                                   env_factory=lambda: PaddedLetterEnv(cli.observation_chars, horizon=turns))
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        if cli.gpu:
            torch.cuda.reset_peak_memory_stats()
        trainer.train()
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        rows = [h["episodes/rows"] for h in trainer.state.log_history if "episodes/rows" in h]
        result = {"step_s": median_step(timer), "rss_before_mib": before / 1024, "rss_peak_mib": peak / 1024,
                  "rows": rows[0] if rows else 0,
                  "cuda_peak_mib": torch.cuda.max_memory_allocated() / 2**20 if cli.gpu else None}
    if rank == 0:
        Path(cli.out).write_text(json.dumps(result))


def launch(cli: argparse.Namespace, kind: str, processes: int, threads: int, per_device: int, row_bound: int = 0
           ) -> dict:
    """Run a ``--worker`` in ``processes`` processes of ``threads`` torch threads each; its results."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        flags = ["--worker", kind, "--out", str(out), "--per-device", str(per_device), "--threads", str(threads),
                 "--row-bound", str(row_bound), "--model", cli.model, "--steps", str(cli.steps), "--G", str(cli.G),
                 "--tokens", str(cli.tokens), "--observation-chars", str(cli.observation_chars),
                 "--scaling-turns", str(cli.scaling_turns), "--memory-turns", str(cli.memory_turns)]
        if cli.gpu:
            flags.append("--gpu")
        env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads),
               "TOKENIZERS_PARALLELISM": "false", "PYTHONPATH": os.pathsep.join(
                   [str(Path(__file__).resolve().parents[1]), os.environ.get("PYTHONPATH", "")])}
        runner = [sys.executable] if processes == 1 else [
            sys.executable, "-m", "torch.distributed.run", f"--nproc_per_node={processes}", "--master_addr=127.0.0.1",
            f"--master_port={29500 + random.randint(1, 5000)}"]
        proc = subprocess.run([*runner, __file__, *flags], env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"{kind} run ({processes} x {threads}) failed:\n{proc.stderr[-3000:]}")
        return json.loads(out.read_text())


def scaling(cli: argparse.Namespace) -> None:
    """Episodes per second of one total batch: 2 processes x 1 thread, 1 x 1, 1 x 2, in interleaved
    rounds (the machine may be shared); each run's step time is the median over its rounds."""
    total = cli.scaling_episodes
    setups = {"1 process x 1 thread": (1, 1, total), "2 processes x 1 thread": (2, 1, total // 2),
              "1 process x 2 threads": (1, 2, total)}
    times: dict[str, list[float]] = {name: [] for name in setups}
    for _ in range(cli.rounds):
        for name, (processes, threads, per_device) in setups.items():
            times[name].append(launch(cli, "scaling", processes, threads, per_device)["step_s"])
    step = {name: statistics.median(t) for name, t in times.items()}
    base = total / step["1 process x 1 thread"]
    print(f"\nscaling: {total} episodes per step (G={cli.G}, {cli.scaling_turns} turns, {cli.tokens} tokens/turn), "
          f"median of {cli.steps} steps after one warm-up, {cli.rounds} interleaved rounds")
    print(f"{'run':<26}{'s/step':>10}{'episodes/s':>12}{'vs 1x1':>8}  per-round s/step")
    for name in setups:
        rate = total / step[name]
        rounds = " ".join(f"{t:.3f}" for t in times[name])
        print(f"{name:<26}{step[name]:>10.3f}{rate:>12.2f}{rate / base:>8.2f}  {rounds}")
    detail = f"{total} episodes/step, G {cli.G}, {cli.scaling_turns} turns, {cli.model}"
    report_ratio("2 processes x 1 thread / 1 process x 1 thread, episodes/s",
                 step["1 process x 1 thread"] / step["2 processes x 1 thread"], ">= 1.6x", detail)
    report_ratio("1 process x 2 threads / 1 process x 1 thread, episodes/s",
                 step["1 process x 1 thread"] / step["1 process x 2 threads"], "-", detail)


def memory(cli: argparse.Namespace) -> None:
    """Peak memory added by one step on long episodes, with and without the row bound."""
    episodes = cli.memory_episodes
    runs = {"no bound": launch(cli, "memory", 1, cli.threads or 1, episodes),
            f"max_rows_per_pass={cli.row_bound}": launch(cli, "memory", 1, cli.threads or 1, episodes, cli.row_bound)}
    key = "cuda_peak_mib" if cli.gpu else "rss_peak_mib"
    print(f"\nmemory: one step, {episodes} episodes x {cli.memory_turns} turns, {cli.observation_chars}-char "
          f"observations ({'GPU peak allocated' if cli.gpu else 'peak RSS'}, MiB)")
    print(f"{'run':<26}{'rows':>6}{'before':>10}{'peak':>10}{'added':>10}")
    added = {}
    for name, result in runs.items():
        start = 0.0 if cli.gpu else result["rss_before_mib"]
        added[name] = result[key] - start
        print(f"{name:<26}{result['rows']:>6.0f}{start:>10.1f}{result[key]:>10.1f}{added[name]:>10.1f}")
    bounded = added[f"max_rows_per_pass={cli.row_bound}"]
    report_ratio(f"peak memory added by a step, max_rows_per_pass={cli.row_bound} / unbounded "
                 f"({cli.memory_turns}-turn episodes)", bounded / max(added["no bound"], 1e-9), "-",
                 f"{episodes} episodes, {runs['no bound']['rows']:.0f} rows, {cli.model}")


def flops(cli: argparse.Namespace) -> None:
    """Forward+backward FLOP/s of one demo GRPO step vs this CPU's matmul FLOP/s (step_flops.py)."""
    from step_flops import demo_step_flops

    from agentgym_suite.demo.pipeline import demo_model_path

    model = demo_model_path(cli.model if cli.model in ("default", "tiny") or cli.model.startswith("hf:")
                            else f"hf:{cli.model}")
    result = demo_step_flops(model, repeats=cli.flops_repeats)
    print(f"\n== one demo GRPO step ({cli.model}): {result['rows']:.0f} rows, {result['tokens']:.0f} tokens ==")
    print(f"forward+backward {result['flops'] / 1e9:.1f} GFLOP in {result['seconds']:.2f} s (median of "
          f"{cli.flops_repeats}) = {result['achieved'] / 1e9:.1f} GFLOP/s; matmul ceiling "
          f"{result['matmul'] / 1e9:.1f} GFLOP/s; the step itself: {result['step_wall_s']:.1f} s wall, "
          f"{result['step_forward_backward_s']:.1f} s forward+backward")
    report_ratio("demo step forward+backward FLOP/s / matmul FLOP/s (same run)", result["ratio"], "-",
                 f"{result['achieved'] / 1e9:.1f} of {result['matmul'] / 1e9:.1f} GFLOP/s, {cli.model}")


def main() -> None:
    parser = argparse.ArgumentParser(description="AgentGRPOTrainer vs TRL GRPOTrainer step time")
    parser.add_argument("--model", default="tiny")
    parser.add_argument("--steps", type=int, default=3, help="timed steps per run (after one warm-up step)")
    parser.add_argument("--rounds", type=int, default=2, help="interleaved rounds of the four trainers")
    parser.add_argument("--batch", type=int, default=8, help="episodes per step")
    parser.add_argument("--G", type=int, default=4)
    parser.add_argument("--tokens", type=int, default=32, help="max completion tokens")
    parser.add_argument("--observation-chars", type=int, default=1600,
                        help="room description before each observation (0 = one-line prompts)")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    parser.add_argument("--gpu", action="store_true")
    parser.add_argument("--parts", default="compare,scaling,memory,flops",
                        help="comma-separated: compare, scaling, memory, flops")
    parser.add_argument("--flops-repeats", type=int, default=3, help="timed forward+backward passes of the flops part")
    parser.add_argument("--scaling-episodes", type=int, default=8, help="episodes per step in the scaling runs")
    parser.add_argument("--scaling-turns", type=int, default=3, help="turns per episode in the scaling runs")
    parser.add_argument("--memory-turns", type=int, default=30, help="turns per episode in the memory runs (ALFWorld)")
    parser.add_argument("--memory-episodes", type=int, default=4, help="episodes of the memory runs (G of them a task)")
    parser.add_argument("--row-bound", type=int, default=8, help="max_rows_per_pass of the bounded memory run")
    parser.add_argument("--worker", choices=["scaling", "memory"], help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--per-device", type=int, default=8, help=argparse.SUPPRESS)
    cli = parser.parse_args()
    if cli.worker:
        return worker(cli)
    if cli.threads:
        import torch

        torch.set_num_threads(cli.threads)
    parts = cli.parts.split(",")
    if "compare" in parts:
        compare(cli)
    if "scaling" in parts:
        scaling(cli)
    if "memory" in parts:
        memory(cli)
    if "flops" in parts:
        flops(cli)


if __name__ == "__main__":
    main()
