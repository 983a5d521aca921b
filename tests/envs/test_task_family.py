"""Each env reports its tasks' family (``info["task_family"]`` at reset, ``task_family(task_id)``).

The family decides which fallback skill text a teacher gets (``<family>.md`` in the env's
``skills_fallback`` folder) and which tasks a SkillRise trial groups, so every family an env
reports must name one of its env's fallback texts.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentgym_suite.core.data import has_benchmark_data
from agentgym_suite.methods.envace import RehearsalEnv
from agentgym_suite.envs.searchqa.datasets import Question, question_family
from agentgym_suite.envs.webshop.families import product_family
from agentgym_suite.envs.alfworld.env import ALFWorldEnv
from agentgym_suite.envs.scienceworld.env import ScienceWorldEnv
from agentgym_suite.envs.searchqa.env import SearchQAEnv
from agentgym_suite.envs.webshop.env import WebShopEnv

from envs.echo_env import EchoEnv



def skill_families(env_class: type) -> set[str]:
    """The families the env's fallback skill texts cover (``<family>.md`` beside the env, ``general.md`` aside)."""
    return {p.stem for p in env_class.skills_fallback.glob("*.md")} - {"general"}


class FamilyEchoEnv(EchoEnv):
    def task_family(self, task_id: str) -> str:
        return f"family-of-{task_id}"


def test_reset_info_carries_the_family_and_the_default_is_none() -> None:
    _, info = EchoEnv().reset(seed=0)
    assert info["task_family"] == ""
    _, info = FamilyEchoEnv().reset(seed=0)
    assert info["task_family"] == "family-of-only"


def test_rehearsal_reports_its_base_envs_family() -> None:
    env = RehearsalEnv(base_env=FamilyEchoEnv(), world_model="real")
    _, info = env.reset(seed=0)
    assert info["task_family"] == env.task_family("only") == "family-of-only"


@pytest.mark.skipif(not has_benchmark_data("alfworld", "json_2.1.1/valid_unseen"), reason="ALFWorld data not found")
def test_alfworld_families_are_its_six_task_types() -> None:
    from agentgym_suite.envs.alfworld.env import TASK_FAMILIES, task_type_of

    env = ALFWorldEnv(split="valid_unseen")
    families = {task_type_of(t): env.task_family(t) for t in env.task_ids()}
    assert set(families.values()) == set(TASK_FAMILIES.values()) <= skill_families(ALFWorldEnv)
    assert families["pick_two_obj_and_place"] == "pick_two" and families["pick_heat_then_place_in_recep"] == "heat"


@pytest.mark.parametrize("goal,family", [
    ({"category": "fashion", "product_category": "Clothing, Shoes & Jewelry › Men › Shirts"}, "webshop_apparel"),
    ({"category": "food", "product_category": "Grocery & Gourmet Food › Snacks"}, "webshop_food"),
    ({"category": "beauty", "product_category": "Beauty & Personal Care › Skin Care"}, "webshop_beauty"),
    ({"category": "furniture", "product_category": "Home & Kitchen › Furniture › Tables"}, "webshop_home"),
    ({"category": "electronics", "product_category": "Electronics › Headphones"}, "webshop_home"),
    ({"category": "", "product_category": "Grocery & Gourmet Food › Beverages › Tea"}, "webshop_food"),
    ({"category": "toys", "product_category": "Toys & Games › Puzzles"}, ""),
    ({}, ""),
])
def test_webshop_family_comes_from_the_category_tree(goal: dict, family: str) -> None:
    assert product_family(goal) == family
    assert family == "" or family in skill_families(WebShopEnv)


def test_webshop_env_reports_the_department_of_each_goal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentgym_suite.envs.webshop.synthetic import write_synthetic_catalogue

    monkeypatch.setenv("AGENTGYM_CACHE", str(tmp_path / "cache"))
    env = WebShopEnv(data_dir=write_synthetic_catalogue(tmp_path / "data"))
    task_id = env.task_ids()[0]
    _, info = env.reset(options={"task_id": task_id})
    assert info["task_family"] == env.task_family(task_id) == product_family(env.catalogue.goals[int(task_id)])
    by_department = {}
    for t in env.task_ids():
        goal = env.catalogue.goals[int(t)]
        by_department.setdefault(goal["category"], set()).add(env.task_family(t))
    assert by_department == {"beauty": {"webshop_beauty"}, "fashion": {"webshop_apparel"}, "grocery": {"webshop_food"},
                             "home": {"webshop_home"}, "electronics": {"webshop_home"}}
    # the instruction's words do not decide: "coffee table" is furniture, though "coffee" names a food
    tables = [t for t in env.task_ids() if "coffee table" in env.catalogue.goals[int(t)]["instruction_text"]]
    assert tables and {env.task_family(t) for t in tables} == {"webshop_home"}


@pytest.mark.parametrize("kind,dataset,family", [
    ("comparison", "hotpotqa", "search_comparison"),
    ("bridge", "hotpotqa", "search_multi_hop"),
    ("", "musique", "search_multi_hop"),
    ("", "nq", "search_single_hop"),
])
def test_search_family_is_the_question_kind(kind: str, dataset: str, family: str) -> None:
    assert question_family(Question("q", "?", ("a",), (), kind), dataset) == family
    assert family in skill_families(SearchQAEnv)


@pytest.mark.skipif(not has_benchmark_data("searchqa", "hipporag_hotpotqa"), reason="SearchQA data not found")
def test_searchqa_reports_hotpotqa_question_types() -> None:
    env = SearchQAEnv(dataset="hotpotqa")
    by_kind = {q.kind: env.task_family(q.id) for q in env.questions.values()}
    assert by_kind == {"bridge": "search_multi_hop", "comparison": "search_comparison"}
    _, info = env.reset(seed=0)
    assert info["task_family"] in {"search_multi_hop", "search_comparison"}


def test_scienceworld_families_are_the_papers_ten_topics() -> None:
    pytest.importorskip("scienceworld")
    from agentgym_suite.envs.scienceworld.tasks import TASKS

    env = ScienceWorldEnv(task="all", split="all")  # no JVM: families need only the task table
    families = {task.number: env.task_family(f"{task.name}/0") for task in TASKS}
    assert len(set(families.values())) == 10 and set(families.values()) <= skill_families(ScienceWorldEnv)
    assert families["1-1"] == families["1-4"] == "scienceworld_matter"
    assert families["5-2"] == "scienceworld_plants" and families["10-2"] == "scienceworld_genetics"
    assert {env.task_family(t) for t in env.task_ids()[:100]} == {"scienceworld_matter"}  # boil/melt first
    env.close()
