"""Trainer step time side by side: AgentGRPOTrainer vs TRL's plain GRPOTrainer, and the
extra cost of teacher log-probs (SDAR, AgentOPSD).

Same model, same batch (episodes x G), same per-turn token budget, one-turn episodes so both
trainers train on the same number of rows. Targets: our GRPO step <= 1.2x TRL's; SDAR and
AgentOPSD steps <= 1.6x our GRPO step. Prints a table; not a test.

    python benchmarks/trainer_speed.py --model tiny --steps 3
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
from pathlib import Path

from datasets import Dataset
from transformers import AutoTokenizer, TrainerCallback
from trl import GRPOConfig, GRPOTrainer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from agentgym_suite.trainers import AgentGRPOConfig, AgentGRPOTrainer  # noqa: E402
from agentgym_suite.trainers.agent_grpo import resolve_model_path  # noqa: E402
from trainers.fake_env import make_letter_env  # noqa: E402
from ratios import report_ratio


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
    rows = [[{"role": "user", "content": f"You need the letter {c}. Say it."}] for c in "aeioust"]
    dataset = Dataset.from_dict({"prompt": rows})

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
        trainer = AgentGRPOTrainer(args=args, env_factory=lambda: make_letter_env(horizon=1), callbacks=[timer])
        trainer.train()
    return median_step(timer)


def main() -> None:
    parser = argparse.ArgumentParser(description="AgentGRPOTrainer vs TRL GRPOTrainer step time")
    parser.add_argument("--model", default="tiny")
    parser.add_argument("--steps", type=int, default=3, help="timed steps (after one warm-up step)")
    parser.add_argument("--batch", type=int, default=8, help="episodes per step")
    parser.add_argument("--G", type=int, default=4)
    parser.add_argument("--tokens", type=int, default=32, help="max completion tokens")
    parser.add_argument("--gpu", action="store_true")
    cli = parser.parse_args()
    model = resolve_model_path(cli.model)
    trl_s = run_trl(model, cli)
    ours = {name: run_ours(model, name, cli) for name in ("grpo", "sdar", "agentopsd")}
    print(f"\nmodel={cli.model} batch={cli.batch} G={cli.G} tokens={cli.tokens} steps={cli.steps}")
    print(f"{'trainer':<28}{'s/step':>10}{'ratio':>10}{'target':>10}")
    print(f"{'TRL GRPOTrainer':<28}{trl_s:>10.3f}{1.0:>10.2f}{'':>10}")
    print(f"{'AgentGRPO grpo':<28}{ours['grpo']:>10.3f}{ours['grpo'] / trl_s:>10.2f}{'<=1.20':>10}  (vs TRL)")
    for name in ("sdar", "agentopsd"):
        print(f"{'AgentGRPO ' + name:<28}{ours[name]:>10.3f}{ours[name] / ours['grpo']:>10.2f}{'<=1.60':>10}"
              "  (vs our grpo)")
    report_ratio(f"AgentGRPO grpo step / TRL GRPOTrainer step ({cli.model})", ours["grpo"] / trl_s, "<= 1.2x",
                 f"batch {cli.batch}, G {cli.G}, {cli.tokens} tokens")
    for name in ("sdar", "agentopsd"):
        report_ratio(f"{name} step / grpo step (teacher log-probs)", ours[name] / ours["grpo"], "<= 1.6x", cli.model)


if __name__ == "__main__":
    main()
