"""Asynchronous rollouts vs synchronous training: wall time for the same number of trained samples.

The env is the trainer tests' letter env with a declared latency per step (a ``time.sleep`` in
every ``step``, as an env behind a network, a simulated user or a sandbox waits on I/O), each
observation optionally padded with a room description (``--chars``; longer prompts make the
learner's share of a step larger). Both runs
train the tiny model for ``--steps`` optimizer steps on the same batches (``--groups`` groups of
G=2 two-turn episodes per step), so they train the same number of samples; the script checks the
counts agree. The synchronous run plays a batch, then trains on it; the asynchronous run
(``async_rollouts: true``, ``max_staleness`` the trainer's default unless ``--max-staleness``) plays in
threads while the learner trains; it
runs with each correction: ``tis`` (the default; the learner recomputes its log-probs, one more
no-gradient pass per step) and ``behaviour_clip`` (TRL's choice; no extra pass). Learner and
generator idle shares are the ``tis`` run's.

What to expect. Async hides the shorter of the two phases: the ratio approaches
``(rollout + learn) / max(rollout, learn)`` per step, minus the first batch, which the learner
waits for. At 200 ms per step the rollout is mostly waiting (``--groups`` x 2 episodes, up to
2 turns each, envs stepped one after another: several seconds of waiting per step) and two
rollout threads (``async_rollout_threads: 2``) wait at the same time while the learner computes:
target >= 1.5x. At ``max_staleness`` 1 the run for step k may start once version k - 1 is
published (the staleness admission), so two threads play the runs of steps k and k + 1 while the
learner trains step k - 1: with rollouts of R seconds and learning of L <= R, 8 steps take about
4R + 5L against 8(R + L) synchronously (1.78x at R = L, 1.85x at R = 2L), before the GIL and a
shared machine take their share. At 0 ms both phases compute, in one process: the rollout threads and the learner
take turns holding Python's GIL (a tiny model's step is mostly Python overhead), and on 2 cores
shared with other jobs there is no idle core to give them; expect about 1.0x, below it with
``tis`` (its extra log-prob pass is not hidden) and with the groups generated ahead that the
run's last step never trains.

    python benchmarks/async_speed.py            # 200 ms and 0 ms, side by side
    python benchmarks/async_speed.py --quick    # the 200 ms comparison alone (< 5 minutes)
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch  # noqa: E402

from agentgym_suite.trainers import AgentGRPOConfig, AgentGRPOTrainer  # noqa: E402
from ratios import report_ratio  # noqa: E402
from trainers.fake_env import LetterEnv  # noqa: E402

DEFAULT_MAX_STALENESS = next(f.default for f in dataclasses.fields(AgentGRPOConfig) if f.name == "max_staleness")
"""The trainer's default ``max_staleness``: the benchmark measures what a user gets."""

ROOM = ("You are in a kitchen. You see a cabinet 1, a cabinet 2, a countertop 1, a drawer 1, a fridge 1, "
        "a microwave 1, a shelf 1, a sinkbasin 1, a stoveburner 1 and a toaster 1. On the countertop 1 you see "
        "an apple 1, a bread 1, a butterknife 1 and a mug 2. The drawer 1 is closed. ")


class LatentLetterEnv(LetterEnv):
    """The letter env with ``latency_s`` of waiting in every step and a ``chars``-long room
    description before each observation."""

    def __init__(self, latency_s: float = 0.0, chars: int = 0, **kwargs) -> None:
        super().__init__(**kwargs)
        self.latency_s = latency_s
        self.room = (ROOM * (chars // len(ROOM) + 1))[:chars] if chars else ""

    def _load_task(self, task_id: str):
        start = super()._load_task(task_id)
        return replace(start, observation=f"{self.room}{start.observation}")

    def _execute(self, command, parsed):
        time.sleep(self.latency_s)  # the declared per-step latency: waiting, not computing
        outcome = super()._execute(command, parsed)
        return replace(outcome, observation=f"{self.room}{outcome.observation}")


def run(async_rollouts: bool, latency_ms: float, cli: argparse.Namespace, correction: str = "tis") -> dict:
    """Train once; wall time of ``train()`` (the model is loaded before the clock starts)."""
    with tempfile.TemporaryDirectory() as out:
        config = AgentGRPOConfig(
            output_dir=out, model_name_or_path="tiny", max_steps=cli.steps, per_device_train_batch_size=2 * cli.groups,
            num_generations=2, max_completion_length=cli.tokens, max_turns=2, bf16=False, gradient_checkpointing=False,
            report_to="none", logging_steps=1, action_format=None, learning_rate=1e-3, save_strategy="no",
            use_cpu=True, seed=7, disable_tqdm=True, print_step_times=False, save_trajectories=False,
            async_rollouts=async_rollouts, max_staleness=cli.max_staleness, env_workers=cli.env_workers, async_correction=correction,
            async_rollout_threads=cli.threads)
        trainer = AgentGRPOTrainer(args=config, env_factory=lambda: LatentLetterEnv(latency_ms / 1000, cli.chars))
        began = time.perf_counter()
        trainer.train()
        wall = time.perf_counter() - began
        history = trainer.state.log_history
        samples = sum(int(h["episodes/count"]) for h in history if "episodes/count" in h)
        shares = {key: [h[key] for h in history if key in h]
                  for key in ("async/learner_idle_share", "async/generator_idle_share")}
        return {"wall": wall, "samples": samples,
                **{key: sum(v) / len(v) for key, v in shares.items() if v}}


def main() -> None:
    """Print sync vs async side by side per latency, and the ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latencies-ms", default="200,0", help="per-step env latencies to compare")
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--groups", type=int, default=4, help="groups of G=2 episodes per step")
    parser.add_argument("--chars", type=int, default=0, help="room description before each observation")
    parser.add_argument("--tokens", type=int, default=16, help="tokens per turn")
    parser.add_argument("--threads", type=int, default=2, help="async_rollout_threads of the async runs")
    parser.add_argument("--max-staleness", type=int, default=DEFAULT_MAX_STALENESS,
                        help=f"max_staleness of the async runs (default: the trainer's, {DEFAULT_MAX_STALENESS})")
    parser.add_argument("--env-workers", default="1",
                        help="1: envs stepped one after another in the training process; N: N worker processes")
    parser.add_argument("--rounds", type=int, default=2,
                        help="interleaved sync/async rounds per latency; each wall time is the median over rounds")
    parser.add_argument("--quick", action="store_true", help="the 200 ms comparison alone, one round")
    cli = parser.parse_args()
    latencies = [200.0] if cli.quick else [float(x) for x in cli.latencies_ms.split(",")]
    rounds = 1 if cli.quick else max(1, cli.rounds)
    torch.set_num_threads(1)
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores visible, load average "
          f"{os.getloadavg()[0]:.1f} (shared with other jobs: the 0 ms ratio depends on free cores)")
    print(f"{cli.steps} steps x {cli.groups} groups x G=2 two-turn episodes, tiny model, {cli.chars}-char observations, "
          f"median of {rounds} interleaved round(s); async: max_staleness {cli.max_staleness}, {cli.threads} rollout thread(s)")
    print(f"{'latency':>8} {'sync s':>8} {'async tis s':>12} {'ratio':>7} {'async clip s':>13} {'ratio':>7} "
          f"{'samples':>8} {'learner idle':>13} {'generator idle':>15}")
    modes = ("sync", "tis", "behaviour_clip")
    for latency in latencies:
        runs: dict[str, list[dict]] = {mode: [] for mode in modes}
        for round_ in range(rounds):  # interleaved, the order rotating, so every mode sees the same machine load
            for mode in modes[round_ % 3:] + modes[:round_ % 3]:
                runs[mode].append(run(mode != "sync", latency, cli, "tis" if mode == "sync" else mode))
        sync, tis, clip = (_median(runs[mode]) for mode in modes)
        if not sync["samples"] == tis["samples"] == clip["samples"]:
            raise SystemExit(f"the runs trained different sample counts: {sync['samples']}, {tis['samples']}, "
                             f"{clip['samples']}")
        ratio_tis, ratio_clip = sync["wall"] / tis["wall"], sync["wall"] / clip["wall"]
        print(f"{latency:>6.0f}ms {sync['wall']:>8.1f} {tis['wall']:>12.1f} {ratio_tis:>6.2f}x {clip['wall']:>13.1f} "
              f"{ratio_clip:>6.2f}x {sync['samples']:>8} {tis.get('async/learner_idle_share', 0):>13.2f} "
              f"{tis.get('async/generator_idle_share', 0):>15.2f}")
        target = ">= 1.5x" if latency >= 200 else "report"
        report_ratio(f"async_tis_speedup_{latency:.0f}ms", ratio_tis, target,
                     f"sync {sync['wall']:.1f}s vs async (tis) {tis['wall']:.1f}s for {sync['samples']} samples")
        report_ratio(f"async_behaviour_clip_speedup_{latency:.0f}ms", ratio_clip, target,
                     f"sync {sync['wall']:.1f}s vs async (behaviour_clip) {clip['wall']:.1f}s")


def _median(runs: list[dict]) -> dict:
    """The run with the median wall time (its own idle shares with it)."""
    return sorted(runs, key=lambda r: r["wall"])[(len(runs) - 1) // 2]


if __name__ == "__main__":
    main()
