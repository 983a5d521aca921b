"""verl-agent's update schedule: our planner gives the numbers verl-agent's own batch split gives.

``verl_schedule/expected.json`` holds what ZJU-REAL/SDAR's verl-agent copy computed at the pinned
commit (``adjust_batch``, the data-parallel chunking, ``DataParallelPPOActor.update_policy``'s
mini-batch split and epoch loop) for the batch settings of every released script, on fixed row
counts and world sizes; ``verl_schedule/regenerate_verl_schedule.py`` regenerates it in a scratch
virtualenv. Each config's ``rows_per_update`` / ``pad_rows_per_process`` must reproduce the cases
of its script's settings, and the trainer's planner (:func:`plan_updates` on the micro-batches the
config gives on that many processes) must take verl-agent's number of optimizer steps, with no cap
at the number of micro-batches.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from types import SimpleNamespace

import pytest
import torch
import yaml

from agentgym_suite.trainers.verl_updates import PLAN, plan_updates, verl_schedule

HERE = Path(__file__).parent / "verl_schedule"
ROOT = HERE.parents[2]
EXPECTED = json.loads((HERE / "expected.json").read_text(encoding="utf-8"))
CASES = EXPECTED["cases"]
A, R, REF = "actor_rollout_ref.actor.", "actor_rollout_ref.rollout.", "actor_rollout_ref.ref."
SETTING_KEYS = ("ppo_mini_batch_size", "rollout_n", "ppo_micro_batch_size_per_gpu", "log_prob_micro_batch_size_per_gpu",
                "ref_log_prob_micro_batch_size_per_gpu", "use_kl_loss", "use_kl_in_reward")


def _setting(case: dict) -> tuple:
    return tuple(case[key] for key in SETTING_KEYS)


def _config_entries() -> list[tuple[str, tuple]]:
    """(config file, its script's batch setting) for every config a recipe card lists."""
    out = []
    for card_path in sorted((ROOT / "configs" / "recipes").glob("*.yaml")):
        card = yaml.safe_load(card_path.read_text(encoding="utf-8"))
        for entry in (card.get("envs") or {}).values():
            up = entry["upstream"]
            if A + "ppo_micro_batch_size_per_gpu" not in up:
                continue
            value = lambda key, up=up: up[key]["value"] if key in up else None  # noqa: E731
            setting = (value(A + "ppo_mini_batch_size"), value(R + "n"), value(A + "ppo_micro_batch_size_per_gpu"),
                       value(R + "log_prob_micro_batch_size_per_gpu"), value(REF + "log_prob_micro_batch_size_per_gpu"),
                       bool(value(A + "use_kl_loss")), bool(value("algorithm.use_kl_in_reward")))
            out += [(config, setting) for config in entry.get("configs") or []]
    return out


CONFIGS = _config_entries()


def test_the_fixture_names_its_upstream_commit_and_covers_the_scripts() -> None:
    assert len(EXPECTED["upstream"]["commit"]) == 40
    assert {setting for _, setting in CONFIGS} <= {_setting(c) for c in CASES}
    worlds = {c["world_size"] for c in CASES}
    assert {1, 2, 8} <= worlds and any(c.get("duplicated_rows") for c in CASES)
    assert any(c.get("loss_weights") and c["loss_weights"][-1] < 1 for c in CASES)  # a short last mini-batch


@pytest.mark.parametrize("config", sorted({c for c, _ in CONFIGS}))
def test_the_config_plans_verl_agents_updates(config: str) -> None:
    fields = yaml.safe_load((ROOT / config).read_text(encoding="utf-8"))
    setting = next(s for c, s in CONFIGS if c == config)
    cases = [c for c in CASES if _setting(c) == setting]
    assert cases, f"no upstream case for {config}'s script settings"
    checked = 0
    for case in cases:
        plan = verl_schedule(case["rows"], fields["rows_per_update"], case["world_size"],
                             fields.get("pad_rows_per_process"), epochs=case["ppo_epochs"])
        where = f"{config}: {case['rows']} rows, {case['world_size']} GPUs, {case['ppo_epochs']} epochs"
        if "upstream_error" in case:
            # adjust_batch draws its duplicates without replacement: verl stops when it must add more rows than
            # the step has; we pad anyway (all-masked rows) and train
            assert plan.duplicated_rows > case["rows"], where
            continue
        assert plan.padded_rows == case["padded_rows"], where
        assert plan.duplicated_rows == case["duplicated_rows"], where
        assert plan.updates == case["updates"], where
        assert list(plan.update_rows) == case["update_rows"], where
        assert list(plan.loss_weights) == pytest.approx(case["loss_weights"]), where
        checked += 1
    assert checked >= len(cases) // 2


def test_updates_per_step_do_not_depend_on_the_gpus_beyond_padding() -> None:
    for case in CASES:
        if "upstream_error" in case:
            continue
        mini = case["ppo_mini_batch_size"] * case["rollout_n"]
        assert case["updates"] == case["ppo_epochs"] * math.ceil(case["padded_rows"] / mini)


def _micro_batches(fields: dict, processes: int) -> int:
    """steps_per_generation of the config on ``processes`` processes (TRL's rule when it is not set)."""
    if fields.get("steps_per_generation"):
        return int(fields["steps_per_generation"])
    return max(1, fields["generation_batch_size"] // (fields["per_device_train_batch_size"] * processes))


def _planned_steps(rows: int, fields: dict, processes: int) -> tuple[int, int]:
    """(optimizer steps the trainer's planner takes for one pass over a generation batch of ``rows``
    rows, micro-batches) with the trainer's padding: every process's rows padded to the same
    multiple of steps_per_generation, rows shared as evenly as they can be."""
    micro = _micro_batches(fields, processes)
    local = math.ceil(math.ceil(rows / processes) / micro) * micro
    chunks = [{"completion_mask": torch.ones(local // micro, 1)} for _ in range(micro)]
    sync = SimpleNamespace(world_size=processes, distributed=False)
    updates = plan_updates(chunks, rows, fields["rows_per_update"], sync, fields.get("pad_rows_per_process"))
    steps = sum(piece.piece.ends_update for chunk in chunks for piece in chunk[PLAN].pieces)
    assert steps == updates
    return steps, micro


def test_the_trainer_takes_verl_agents_optimizer_steps_with_no_cap() -> None:
    beyond_micro_batches = 0
    for config in sorted({c for c, _ in CONFIGS}):
        fields = yaml.safe_load((ROOT / config).read_text(encoding="utf-8"))
        setting = next(s for c, s in CONFIGS if c == config)
        for case in (c for c in CASES if _setting(c) == setting and "upstream_error" not in c):
            steps, micro = _planned_steps(case["rows"], fields, case["world_size"])
            where = f"{config}: {case['rows']} rows, {case['world_size']} GPUs, {case['ppo_epochs']} epochs"
            assert steps * case["ppo_epochs"] == case["updates"], where  # one plan per TRL iteration (ppo_epochs)
            beyond_micro_batches += steps > micro
    assert beyond_micro_batches > 0  # the cases where a cap at steps_per_generation would have cut updates
