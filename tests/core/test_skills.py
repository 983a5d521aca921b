"""Skill texts as data: ``agentgym data fetch skills``, the loader, the per-benchmark pick, the named fallback."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from agentgym_suite.cli import main
from agentgym_suite.core.data_sources import git_blob_id
from agentgym_suite.core.fetch import ChecksumError, fetch
from agentgym_suite.core.skills import GENERAL_SKILL, asks_to_compare, load_skills, read_folder
from agentgym_suite.envs.alfworld.env import ALFWorldEnv
from agentgym_suite.envs.scienceworld.env import ScienceWorldEnv
from agentgym_suite.envs.searchqa.env import SearchQAEnv
from agentgym_suite.envs.searchqa.skills import data_source_of
from agentgym_suite.envs.shared import skills_data
from agentgym_suite.envs.webshop.env import WebShopEnv

MAPPING = {
    "skill_files": {"general_skills": "general_skills.md", "boil": "boil.md", "freeze": "freeze.md"},
    "task_to_skill": {"boil_water": "boil", "freeze_water": "freeze", "thaw_water": "freeze"},
    "task_keywords": {"boil_water": ["boil", "kettle"], "freeze_water": ["freeze"], "thaw_water": []},
}


def _released_tree(root: Path) -> Path:
    """A folder in the released layout, with texts of our own."""
    root.mkdir(parents=True)
    (root / "skill_mapping.json").write_text(json.dumps(MAPPING))
    for name, filename in MAPPING["skill_files"].items():
        (root / filename).write_text(f"  text of {name}\n")
    return root


def test_released_layout_picks_by_path_by_keywords_and_composes_general_first(tmp_path: Path) -> None:
    book = read_folder(_released_tree(tmp_path / "demo"), "released demo")
    assert book.mapped and book.released and book.texts[GENERAL_SKILL] == "text of general_skills"
    assert book.for_path("json/train/thaw_water-Ice-1/trial_0") == "text of general_skills\n\ntext of freeze"
    assert book.for_path("nothing-here") == "text of general_skills"
    # every task type with a matching keyword, in table order; a type without keywords never matches
    assert book.for_prompt("FREEZE the water in the Kettle") == \
        "text of general_skills\n\ntext of boil\n\ntext of freeze"
    assert book.compose(["freeze_water", "thaw_water"]).count("text of freeze") == 2  # upstream adds it twice
    assert book.everything() == "text of general_skills\n\ntext of boil\n\ntext of freeze"


def test_the_comparison_test_is_upstreams_substring_rule() -> None:
    assert asks_to_compare("Which is older, A or B?")
    assert not asks_to_compare("Which is older, A or B? Answer for the current step.")  # 'for' anywhere vetoes
    assert not asks_to_compare("Who wrote it?")


def test_a_fallback_is_named_by_a_warning_and_the_origin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTGYM_DATA", str(tmp_path / "data"))
    with pytest.warns(UserWarning, match="fallback skill texts.*agentgym data fetch skills"):
        book = ALFWorldEnv.skill_texts()
    assert book is not None and not book.mapped and book.origin.startswith("fallback")
    assert "agentgym data fetch skills" in book.origin
    assert ALFWorldEnv.skill_for_task(book, "pick_heat_then_place_in_recep-Egg-None-Microwave-8/t", "heat", "") \
        == book.for_family("heat") and "heat" in book.texts
    with pytest.warns(UserWarning, match="release no skill texts"):
        science = ScienceWorldEnv.skill_texts()
    assert science is not None and "scienceworld_matter" in science.texts


def test_released_texts_win_once_fetched_and_skills_dir_wins_over_both(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTGYM_DATA", str(tmp_path / "data"))
    _released_tree(tmp_path / "data" / "skills" / "alfworld")
    book = ALFWorldEnv.skill_texts()
    assert book is not None and book.released and book.mapped
    assert ALFWorldEnv.skill_for_task(book, "boil_water-Kettle-1/trial_0", "", "") == \
        "text of general_skills\n\ntext of boil"
    own = tmp_path / "mine"
    own.mkdir()
    (own / "general.md").write_text("mine")
    custom = ALFWorldEnv.skill_texts(own)
    assert custom is not None and custom.origin.startswith("custom") and custom.for_family("") == "mine"
    assert load_skills("", None) is None  # an env with no texts at all


def test_each_env_picks_as_its_authors_do(tmp_path: Path) -> None:
    book = read_folder(_released_tree(tmp_path / "demo"), "released demo")
    # WebShop: keywords of the prompt, but a prompt that passes the comparison test gets the general text only
    assert WebShopEnv.skill_for_task(book, "3", "", "i want to boil it") == "text of general_skills\n\ntext of boil"
    assert WebShopEnv.skill_for_task(book, "3", "", "which kettle, red or blue") == "text of general_skills"
    # Search: the data source from the task id
    assert data_source_of("popqa/17") == "popqa" and data_source_of("2hop__1_2") == "musique"
    assert data_source_of("5a77ec115542992a6e59dff7") == "hotpotqa"


def _own_pinned(root: Path) -> tuple[tuple[str, str, str], ...]:
    _released_tree(root / "alfworld")
    files = sorted(p for p in root.rglob("*") if p.is_file())
    return tuple((p.relative_to(root).as_posix(), hashlib.sha256(p.read_bytes()).hexdigest(), git_blob_id(p)[:12])
                 for p in files)


def test_agentgym_data_fetch_skills_downloads_and_verifies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    upstream = tmp_path / "upstream"
    pinned = _own_pinned(upstream)
    monkeypatch.setattr(skills_data, "SOURCE", skills_data.skills_source(pinned, upstream.as_uri() + "/"))
    monkeypatch.setenv("AGENTGYM_DATA", str(tmp_path / "data"))
    assert main(["data", "fetch", "skills"]) == 0
    assert "4 file(s) written" in capsys.readouterr().out
    assert (tmp_path / "data" / "skills" / "alfworld" / "skill_mapping.json").exists()
    assert ALFWorldEnv.skill_texts().released  # type: ignore[union-attr]
    assert main(["data", "verify", "skills"]) == 0


def test_fetch_rejects_a_file_that_differs_from_its_pinned_sha256(tmp_path: Path) -> None:
    upstream = tmp_path / "upstream"
    pinned = _own_pinned(upstream)
    (upstream / "alfworld" / "boil.md").write_text("altered")
    with pytest.raises(ChecksumError, match="sha256"):
        fetch(skills_data.skills_source(pinned, upstream.as_uri() + "/"), root=tmp_path / "data")
    assert not (tmp_path / "data" / "skills" / "alfworld").exists()  # nothing placed when one file is bad


def test_the_pinned_files_are_what_upstreams_provider_reads() -> None:
    assert len(skills_data.UPSTREAM_COMMIT) == 40
    by_env: dict[str, set[str]] = {}
    for rel, sha, blob in skills_data.PINNED:
        env, name = rel.split("/")
        by_env.setdefault(env, set()).add(name)
        assert len(sha) == 64 and len(blob) == 12
    assert set(by_env) == {ALFWorldEnv.skills_released, WebShopEnv.skills_released, SearchQAEnv.skills_released}
    assert all("skill_mapping.json" in names and "general_skills.md" in names for names in by_env.values())
    for remote in skills_data.SOURCE.files:
        assert remote.url.startswith(f"https://raw.githubusercontent.com/ZJU-REAL/SDAR/{skills_data.UPSTREAM_COMMIT}/")
