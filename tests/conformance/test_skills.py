"""The released skill texts are picked per task as the authors' ``SkillProvider`` picks them.

``skills/expected.json`` holds upstream's picks (skill names only) on the inputs of
``skills/cases.py``, made by ``skills/regenerate_skills.py`` from ZJU-REAL/SDAR at the pinned
commit. The released files come from ``$AGENTGYM_DATA/skills`` when fetched, else from a local
git mirror of the repo through ``agentgym data fetch``'s own download-and-verify path (which
checks every pinned sha256 too); without either the test is skipped.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
from pathlib import Path

import pytest

from agentgym_suite.core import fetch as fetch_module
from agentgym_suite.core.data import data_dir
from agentgym_suite.core.skills import SkillBook, read_mapped, released_folder
from agentgym_suite.envs.alfworld.env import ALFWorldEnv
from agentgym_suite.envs.searchqa.search_r1_env import SearchR1Env
from agentgym_suite.envs.shared import skills_data
from agentgym_suite.envs.webshop.env import WebShopEnv

HERE = Path(__file__).parent / "skills"
EXPECTED = json.loads((HERE / "expected.json").read_text(encoding="utf-8"))
MIRROR = Path("/work/.mirror/ZJU-REAL+SDAR/repo")


def _from_mirror(url: str, target: Path, timeout: float) -> None:
    rel = url.split(f"{skills_data.UPSTREAM_COMMIT}/", 1)[1]
    target.write_bytes(subprocess.run(["git", f"--git-dir={MIRROR}", "show", f"{skills_data.UPSTREAM_COMMIT}:{rel}"],
                                      check=True, capture_output=True).stdout)


@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if (released_folder("alfworld", data_dir()) / "skill_mapping.json").exists():
        return data_dir() / "skills"
    if not MIRROR.exists():
        pytest.skip("needs the released skill texts (`agentgym data fetch skills`) or a git mirror of ZJU-REAL/SDAR")
    root = tmp_path_factory.mktemp("data")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fetch_module, "_download", _from_mirror)
        fetch_module.fetch(skills_data.SOURCE, root=root)
    return root / "skills"


def _named(folder: Path) -> SkillBook:
    """The released book with each text replaced by its name, as ``expected.json`` records picks."""
    book = read_mapped(folder, "released")
    return dataclasses.replace(book, texts={name: f"<{name}>" for name in book.texts})


def test_alfworld_picks_by_game_path(released: Path) -> None:
    book = _named(released / "alfworld")
    assert {task: ALFWorldEnv.skill_for_task(book, task, "", "") for task in EXPECTED["alfworld"]} == EXPECTED["alfworld"]


def test_search_picks_by_data_source_and_prompt(released: Path) -> None:
    book = _named(released / "search")
    ours = [[source, prompt, SearchR1Env.skill_for_task(book, f"{source}/0", "", prompt)]
            for source, prompt, _ in EXPECTED["search"]]
    assert ours == EXPECTED["search"]


def test_webshop_picks_by_the_prompts_keywords(released: Path) -> None:
    book = _named(released / "webshop")
    assert [[p, WebShopEnv.skill_for_task(book, "0", "", p)] for p, _ in EXPECTED["webshop"]] == EXPECTED["webshop"]
