"""``agentgym eval`` with a one-at-a-time agent: ``--env-workers 2`` vs inline, whole runs timed.

The random agent plays ``--episodes`` ALFWorld tasks of ``--turns`` turns each through
:func:`~agentgym_suite.evaluation.runner.evaluate`, once with ``env_workers=1`` (inline) and once
with ``env_workers=--workers`` (worker processes; the agent plays as that many copies), alternating
for ``--rounds`` rounds; the best round of each counts. The whole call is timed, process start and
env making included, as a user's run pays them. Both must write the same trajectories. Target with
2 workers on 2 idle cores: >= 1.6x. The 1-minute load average is printed, and so is the ceiling the
machine allows at that moment: how much more work two busy processes get done than one (pure-Python
loops, timed just before). On a machine whose cores are busy with other work that ceiling falls
toward 1x, and the eval ratio can only measure the contention. For that case the script also
prints a projection from CPU seconds (``resource`` usage of this process and of its reaped
workers): the wall time each run would take if every process had a core of its own, assuming
the workers share the episodes evenly. It is a projection, not a measurement.

    python benchmarks/eval_workers.py [--episodes 8] [--turns 25] [--workers 2] [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from agentgym_suite.evaluation.runner import evaluate  # noqa: E402
from agentgym_suite.rollout.workers.settings import cpu_count  # noqa: E402
from ratios import report_ratio  # noqa: E402

ENV_ID = "ALFWorld-v0"
TIMING = ("wall_s", "policy_s")


def load() -> str:
    """The 1-minute load average, as text."""
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except OSError:
        return "?"


def _spin(loops: int) -> None:
    total = 0
    for i in range(loops):
        total += i * i


def parallel_ceiling(loops: int = 20_000_000) -> float:
    """Work done per second by 2 busy processes / by 1, measured now (2.0 on 2 idle cores)."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    seconds = {}
    for count in (1, 2):
        started = time.perf_counter()
        processes = [context.Process(target=_spin, args=(loops,)) for _ in range(count)]
        for process in processes:
            process.start()
        for process in processes:
            process.join()
        seconds[count] = time.perf_counter() - started
    return 2 * seconds[1] / seconds[2]


def _cpu() -> tuple[float, float]:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def run(workers: int, episodes: int, turns: int, out: Path) -> tuple[float, float, list[dict]]:
    """Seconds of one whole evaluation, its projected seconds with a core per process, and its
    records without timings."""
    own0, children0 = _cpu()
    started = time.perf_counter()
    evaluate(ENV_ID, "random", out_dir=out, episodes=episodes, seed=0, max_turns=turns, progress=False,
             env_workers=workers)
    seconds = time.perf_counter() - started
    own1, children1 = _cpu()
    projected = (own1 - own0) + (children1 - children0) / workers
    records = []
    for line in (out / "trajectories.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        records.append({k: v for k, v in record.items() if k not in TIMING})
    return seconds, projected, sorted(records, key=lambda r: r["traj_id"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=8)
    parser.add_argument("--turns", type=int, default=25)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    print(f"machine: {os.uname().machine}, {cpu_count()} cores usable, load {load()} at the start")
    print(f"{ENV_ID}, random agent, {args.episodes} episodes x {args.turns} turns, best of {args.rounds} rounds")
    ceiling = parallel_ceiling()
    print(f"parallel ceiling now: 2 busy processes / 1 = {ceiling:.2f}x")
    best = {1: float("inf"), args.workers: float("inf")}
    cpu_best = dict(best)
    results: dict[int, list[dict]] = {}
    loads = []
    with tempfile.TemporaryDirectory() as scratch:
        for index in range(args.rounds):
            for workers in (1, args.workers):
                loads.append(load())
                seconds, projected, records = run(workers, args.episodes, args.turns,
                                                  Path(scratch) / f"r{index}-w{workers}")
                best[workers] = min(best[workers], seconds)
                cpu_best[workers] = min(cpu_best[workers], projected)
                results.setdefault(workers, records)
                print(f"  round {index + 1}: env_workers={workers}: {seconds:6.1f} s, {projected:6.1f} s with a core "
                      f"per process (load {loads[-1]})", flush=True)
    same = results[1] == results[args.workers]
    ratio = best[1] / best[args.workers]
    print("\nenv_workers    best s   episodes/min")
    for workers in (1, args.workers):
        print(f"{workers:>11}   {best[workers]:6.1f}   {args.episodes * 60 / best[workers]:12.1f}")
    print(f"speed-up {args.workers} workers / inline: {ratio:.2f}x; same trajectories: {'yes' if same else 'NO'}")
    after = parallel_ceiling()
    print(f"parallel ceiling after: {after:.2f}x")
    projected = cpu_best[1] / cpu_best[args.workers]
    print(f"projection with a core per process (CPU seconds): {projected:.2f}x")
    report_ratio(f"{ENV_ID}: agentgym eval, random agent, {args.workers} env workers / inline", ratio, ">= 1.6x",
                 f"{args.episodes} episodes x {args.turns} turns, same trajectories: {'yes' if same else 'no'}; "
                 f"load {min(loads)}-{max(loads)}; 2-process ceiling {ceiling:.2f}x before, {after:.2f}x after")
    report_ratio(f"{ENV_ID}: agentgym eval, random agent, {args.workers} env workers / inline, projected from CPU "
                 "seconds", projected, "-", "each process given a core of its own; a projection, not a measurement")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
