"""One derivation of an episode's reset seed: training, held-out evaluation during training,
``agentgym eval``, the demo's oracle data and the rehearsing agent all ask ``episode_seed``."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from agentgym_suite.evaluation.task_selection import plan_episodes, select_tasks
from agentgym_suite.rollout.seeding import episode_seed
from agentgym_suite.trainers.held_out_eval import held_out_dataset, held_out_specs
from agentgym_suite.trainers.training_tasks import build_task_dataset

PACKAGE = Path(__file__).resolve().parents[2] / "agentgym_suite"


class _Tasks:
    """Just what the dataset builders read of an env: ``unwrapped.task_ids()``."""

    def __init__(self, ids: list[str]) -> None:
        self.unwrapped = self
        self._ids = ids

    def task_ids(self) -> list[str]:
        return list(self._ids)


def test_the_seed_depends_on_run_seed_task_and_attempt_only():
    seeds = {episode_seed(s, t, a) for s in (0, 1) for t in ("t1", "t2") for a in (0, 1)}
    assert len(seeds) == 8 and all(0 <= s < 2**31 for s in seeds)
    assert episode_seed(3, "t1", 2) == episode_seed(3, "t1", 2)
    assert episode_seed(3, None) == episode_seed(3, "")
    with pytest.raises(ValueError, match="attempt"):
        episode_seed(3, "t1", -1)


def test_held_out_evaluation_in_training_plays_the_seeds_of_agentgym_eval():
    env = _Tasks([f"t{i}" for i in range(6)])
    tasks = select_tasks(env.task_ids(), 4, 11)  # what `agentgym eval --seed 11 --episodes 4` runs
    args = SimpleNamespace(seed=11, eval_task_ids=tasks, eval_num_tasks=None)
    specs = held_out_specs(held_out_dataset(args, env), 3, run_seed=args.seed, step=5)
    plan = plan_episodes(tasks, 3, 11)  # ... with --k 3
    assert [(s.task_id, s.attempt, s.seed) for s in specs] == [(p.task_id, p.attempt, p.seed) for p in plan]


def test_a_given_env_seed_column_fixes_every_attempt():
    from datasets import Dataset

    data = Dataset.from_dict({"task_id": ["t1", "t2"], "env_seed": [4, 9]})
    assert [s.seed for s in held_out_specs(data, 2, run_seed=0, step=0)] == [4, 4, 9, 9]


def test_a_training_group_shares_the_seed_of_the_tasks_first_attempt():
    args = SimpleNamespace(seed=7, task_ids=["t1", "t2", "t1"], num_tasks=None, train_env_id="x")
    rows = build_task_dataset(args, _Tasks([]))
    assert rows["env_seed"] == [episode_seed(7, "t1", 0), episode_seed(7, "t2", 0), episode_seed(7, "t1", 1)]


# where episodes are seeded; env packages keep their own generator seeds (games, catalogues)
SEEDED_LAYERS = ("rollout", "agents", "evaluation", "trainers", "demo", "methods", "commands", "comparisons", "integrations")
SEED_ARITHMETIC = re.compile(r"seed\)?\s*[*+]\s*[A-Za-z0-9_(]")
SAMPLING_SEEDS = {"trainers/held_out_eval.py"}  # the held-out evaluation's sampling seed per step


def test_no_other_seed_arithmetic_outside_the_seeding_module():
    found = []
    for layer in SEEDED_LAYERS:
        for path in sorted((PACKAGE / layer).rglob("*.py")):
            name = path.relative_to(PACKAGE).as_posix()
            if name in SAMPLING_SEEDS:
                continue
            found += [f"{name}:{n}" for n, line in enumerate(path.read_text().splitlines(), 1)
                      if SEED_ARITHMETIC.search(line)]
    assert not found, f"derive episode seeds with rollout.seeding.episode_seed, not by hand: {found}"
