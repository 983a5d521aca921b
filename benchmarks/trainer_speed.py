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

    python benchmarks/trainer_speed.py --model tiny --steps 3
    python benchmarks/trainer_speed.py --model default --steps 2 --rounds 1
"""

from __future__ import annotations

import argparse
import random
import statistics
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
    cli = parser.parse_args()
    if cli.threads:
        import torch

        torch.set_num_threads(cli.threads)
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


if __name__ == "__main__":
    main()
