"""Every paper config runs its authors' recipe: each field equals the recipe card's value, or is a
departure the card lists with its reason (configs/recipes/*.yaml, built from the released scripts)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from agentgym_suite.commands.train import parse_config
from agentgym_suite.trainers import recipes

ROOT = Path(__file__).resolve().parents[2]
CARDS = recipes.load_cards(ROOT / "configs" / "recipes")
ENTRIES = [(method, env, config) for method, card in CARDS.items() for env, entry in card["envs"].items()
           for config in entry.get("configs") or []]
NOT_PAPER_CONFIGS = {"smoke_cpu.yaml", "demo_cpu.yaml", "vllm_colocate.yaml", "vllm_server.yaml",
                     "envace_smoke_tiny.yaml"}
"""Configs of our own (CPU smoke runs, vLLM key sets): no authors' recipe to hold them to."""
NO_RELEASED_SCRIPT = {"envace_synthetic_qwen3_8b.yaml"}
"""Configs with no released script to compare with: EnvACE on SyntheticTools-v0 (our procedural tool worlds)."""


def _load(config: str):
    overrides = [] if torch.cuda.is_available() else ["--bf16", "false"]  # bf16 is no recipe field
    return parse_config(str(ROOT / config), overrides)


@pytest.mark.parametrize(("method", "env", "config"), ENTRIES, ids=[f"{m}-{e}" for m, e, _ in ENTRIES])
def test_config_runs_its_card_or_lists_the_departure(method: str, env: str, config: str) -> None:
    entry = CARDS[method]["envs"][env]
    checks = recipes.compare(entry, _load(config))
    bad = recipes.problems(checks)
    assert not bad, f"{config} against configs/recipes/{method}.yaml [{env}]:\n" + "\n".join(
        f"  {c.field}: card {c.card!r}, config {c.ours!r} ({c.status}{': ' + c.reason if c.reason else ''})"
        for c in bad)
    assert all(c.reason.strip() for c in checks if c.status == recipes.DEPARTURE), "every departure needs a reason"


def test_every_paper_config_has_a_card() -> None:
    carded = {Path(c).name for _, _, c in ENTRIES}
    paper = {p.name for p in (ROOT / "configs").glob("*.yaml")} - NOT_PAPER_CONFIGS - NO_RELEASED_SCRIPT
    assert sorted(paper - carded) == [], "configs with no recipe card entry (add them to configs/recipes/)"


def test_every_card_value_names_its_upstream_source() -> None:
    for method, card in CARDS.items():
        assert len(card["upstream"]["commit"]) == 40, method
        for env, entry in card["envs"].items():
            for field, spec in entry["ours"].items():
                for key in spec["from"]:
                    assert key in entry["upstream"], f"{method}/{env}: {field} comes from {key}, not in upstream"
            for key, record in entry["upstream"].items():
                assert ":" in record["source"] or record["source"].startswith("not set"), (method, env, key)


def test_an_unlisted_difference_and_a_stale_departure_are_caught() -> None:
    method, env, config = next(e for e in ENTRIES if e[0] == "grpo")
    entry = dict(CARDS[method]["envs"][env])
    loaded = _load(config)
    loaded.learning_rate = loaded.learning_rate * 3
    assert [c.field for c in recipes.problems(recipes.compare(entry, loaded))] == ["learning_rate"]
    entry["departures"] = [*entry.get("departures", []), {"field": "learning_rate", "ours": 1.0, "reason": "x"}]
    stale = recipes.problems(recipes.compare(entry, loaded))
    assert [(c.field, c.status) for c in stale] == [("learning_rate", recipes.STALE)]


def test_print_recipe_shows_the_card_beside_the_config(capsys) -> None:
    from agentgym_suite.cli import build_parser

    config = str(ROOT / "configs" / "alfworld_gigpo_qwen2.5_3b.yaml")
    args = build_parser().parse_args(["train", config, "--print-recipe", "--bf16", "false", "--learning_rate", "3e-6"])
    assert args.func(args) == 1  # the flag's learning rate is a difference the card does not list
    out = capsys.readouterr().out
    assert "examples/gigpo_trainer/run_alfworld.sh" in out
    assert "UNLISTED DIFFERENCE" in out and "learning_rate" in out
    departure = next(line for line in out.splitlines() if line.startswith("model_name_or_path"))
    assert departure.split()[1:] == ["Qwen/Qwen2.5-1.5B-Instruct", "Qwen/Qwen2.5-3B-Instruct", "departure"]


@pytest.mark.parametrize(("method", "env", "config"), ENTRIES, ids=[f"{m}-{e}" for m, e, _ in ENTRIES])
def test_rows_per_update_is_the_scripts_mini_batch_of_step_rows(method: str, env: str, config: str) -> None:
    """verl scales ppo_mini_batch_size by the actor's rollout.n, which verl-agent keeps at 1 (env.rollout.n,
    the group size, is not a factor): an update counts the script's ppo_mini_batch_size step rows."""
    upstream = CARDS[method]["envs"][env]["upstream"]
    if "actor_rollout_ref.actor.ppo_mini_batch_size" not in upstream:
        pytest.skip(f"{method}/{env}: the script sizes its updates adaptively (no ppo_mini_batch_size)")
    mini = upstream["actor_rollout_ref.actor.ppo_mini_batch_size"]["value"]
    actor_n = upstream["actor_rollout_ref.rollout.n"]["value"]
    assert actor_n == 1, "verl-agent asserts actor_rollout_ref.rollout.n == 1"
    assert _load(config).rows_per_update == mini * actor_n
