"""The env catalogue: cards are found for the benchmark envs, and docs/catalogue.md is what
`agentgym list --markdown` prints now."""

from __future__ import annotations

from pathlib import Path

from agentgym_suite.commands.list_envs import catalogue_rows, markdown
from agentgym_suite.registration import env_card, suite_entries

DOCS = Path(__file__).resolve().parents[1] / "docs" / "catalogue.md"


def test_docs_table_is_up_to_date() -> None:
    assert DOCS.read_text(encoding="utf-8") == markdown(), (
        "docs/catalogue.md is out of date: run `agentgym list --markdown > docs/catalogue.md`")


def test_cards_name_their_conformance_tests_and_those_exist() -> None:
    root = DOCS.parents[1]
    cards = {item.id: env_card(item) for item in suite_entries()}
    for env_id in ("ALFWorld-v0", "ScienceWorld-v0", "SearchQA-v0", "SearchR1-v0", "WebShop-v0", "BFCL-v0",
                   "FinMCP-v0"):
        card = cards[env_id]
        assert card is not None and card.conformance and card.conformance_tests, env_id
        assert all((root / test).exists() for test in card.conformance_tests), env_id
    rows = {row["id"]: row for row in catalogue_rows()}
    assert "0.908 success rate" in rows["ALFWorld-v0"]["references"] and "valid_seen" in rows["ALFWorld-v0"]["references"]
    assert "steps/s" in rows["ScienceWorld-v0"]["cost"]


def test_every_declared_card_points_to_existing_tests_and_states_a_cost() -> None:
    root = DOCS.parents[1]
    for item in suite_entries():
        card = env_card(item)
        if card is None:
            continue
        assert all((root / test).exists() for test in card.conformance_tests), item.id
        assert card.cost is not None and card.cost.steps_per_s > 0 and "benchmarks/" in card.cost.measured_by, item.id


def test_envs_without_an_upstream_scorer_say_so_instead_of_pending_checks() -> None:
    rows = {row["id"]: row for row in catalogue_rows()}
    for env_id in ("SyntheticTools-v0", "ChecklistTools-v0", "EnvACE-Rehearsal-v0", "SkillRise-v0", "Remote-v0"):
        assert rows[env_id]["conformance"] not in ("-", "none against upstream yet"), env_id
    assert "no upstream harness" in rows["SyntheticTools-v0"]["conformance"]
    assert "Table 1" in rows["WebShop-v0"]["references"] and "0.752 success rate" in rows["WebShop-v0"]["references"]


def test_the_docs_build_regenerates_the_catalogue_page() -> None:
    import importlib.util
    from types import SimpleNamespace

    hook_path = DOCS.parents[1] / "docs_hooks" / "catalogue.py"
    assert "docs_hooks/catalogue.py" in (DOCS.parents[1] / "mkdocs.yml").read_text(encoding="utf-8")
    spec = importlib.util.spec_from_file_location("catalogue_hook", hook_path)
    assert spec is not None and spec.loader is not None
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)

    def page(uri: str) -> SimpleNamespace:
        return SimpleNamespace(file=SimpleNamespace(src_uri=uri))

    assert hook.on_page_markdown("stale", page("catalogue.md"), config={}, files=[]) == markdown()
    assert hook.on_page_markdown("kept", page("index.md"), config={}, files=[]) == "kept"
