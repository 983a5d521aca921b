"""WebShop against upstream's outputs: ``get_reward`` on fixed product/goal pairs, Pyserini's rankings.

The inputs (``webshop/cases.json``, built by ``webshop/build_cases.py``) and upstream's outputs
(``webshop/expected_rewards.json`` from ``regenerate_webshop_rewards.py``,
``webshop/expected_search.json`` from ``regenerate_webshop_search.py``, princeton-nlp/WebShop at
the commit recorded in each file) are replayed through the suite's reward, noun tagger, search
index and ``WebShop-v0`` itself.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentgym_suite.envs.shared.lucene_bm25 import LuceneBM25Index
from agentgym_suite.envs.webshop import WebShopEnv
from agentgym_suite.envs.webshop.engine import product_document
from agentgym_suite.envs.webshop.nouns import load_tagger
from agentgym_suite.envs.webshop.reward import purchase_reward
from agentgym_suite.envs.webshop.synthetic import write_synthetic_catalogue

HERE = Path(__file__).resolve().parent / "webshop"
CASES: list[dict[str, Any]] = json.loads((HERE / "cases.json").read_text(encoding="utf-8"))
EXPECTED = json.loads((HERE / "expected_rewards.json").read_text(encoding="utf-8"))
SEARCH = json.loads((HERE / "expected_search.json").read_text(encoding="utf-8"))
UPSTREAM_COMMIT = "64fa2a5c15c7daa698b9ac93f5bb5437b634c9bd"
REPLAYABLE = ("gold", "wrong_option", "no_options", "same_type_other_product", "wrong_category")
"""Case kinds whose product, price and goal are the env's own, so an episode can reproduce them."""


@pytest.fixture(scope="module")
def nouns() -> dict[str, list[str]]:
    names = [case[side]["name"] for case in CASES for side in ("product", "goal")]
    return load_tagger("spacy").nouns(names)


def test_outputs_come_from_the_pinned_upstream_commit() -> None:
    assert EXPECTED["upstream"]["commit"] == SEARCH["upstream"]["commit"] == UPSTREAM_COMMIT
    assert set(EXPECTED["results"]) == {case["id"] for case in CASES}


def test_nouns_agree_with_upstreams_spacy_tags(nouns: dict[str, list[str]]) -> None:
    disagreements = [
        (case["id"], side, nouns[case[side]["name"]], EXPECTED["results"][case["id"]]["nouns"][side])
        for case in CASES for side in ("product", "goal")
        if nouns[case[side]["name"]] != EXPECTED["results"][case["id"]]["nouns"][side]
    ]
    assert disagreements == []


def test_reward_equals_upstream_get_reward_on_every_case(nouns: dict[str, list[str]]) -> None:
    kinds = {case["kind"] for case in CASES}
    assert {"gold", "wrong_option", "wrong_price", "wrong_attribute", "wrong_category", "option_probe"} <= kinds
    mismatches = []
    for case in CASES:
        expected = EXPECTED["results"][case["id"]]
        reward, parts = purchase_reward(case["product"], case["goal"], case["price"], case["options"], nouns)
        info = expected["info"]
        ours = (reward, parts["r_type"], parts["title_score"], parts["query_match"], parts["category_match"],
                parts["r_att"], parts["r_option"])
        theirs = (expected["reward"], info["r_type"], info["title_score"], info["query_match"], info["category_match"],
                  info["r_att"], info.get("r_option"))
        if ours != theirs:
            mismatches.append((case["id"], ours, theirs))
    assert mismatches == []


def test_perturbations_lower_upstreams_reward() -> None:
    """On the env's own goals, gold purchases score 1.0 upstream and each perturbation costs something.

    (Not so for every hand-written goal: upstream folds "dark navy" onto "dark", which then misses
    a goal option "navy", and the cases keep that.)
    """
    by_goal: dict[tuple, dict[str, float]] = {}
    for case in CASES:
        if case["source"] == "synthetic_catalogue":
            key = (case["source"], case["goals"], case["goal_index"])
            by_goal.setdefault(key, {})[case["kind"]] = EXPECTED["results"][case["id"]]["reward"]
    for key, rewards in by_goal.items():
        assert rewards["gold"] == 1.0, key
        assert rewards["wrong_price"] < 1.0 and rewards["wrong_option"] < 1.0, key


def _play_purchase(env: WebShopEnv, task_id: str, case: dict[str, Any]) -> dict[str, Any]:
    env.reset(options={"task_id": task_id})
    asin = case["product"]["asin"]
    _, _, _, _, info = env.step(f"search[{case['product']['Title']}]")
    while f"click[{asin.lower()}]" not in info["admissible_actions"]:
        assert "click[next >]" in info["admissible_actions"], (case["id"], "product not found by its title")
        _, _, _, _, info = env.step("click[next >]")
    env.step(f"click[{asin.lower()}]")
    for value in case["options"].values():
        env.step(f"click[{value}]")
    _, _, terminated, _, info = env.step("click[buy now]")
    assert terminated
    return info


@pytest.mark.parametrize("goals", ["human", "synthetic"])
def test_env_episodes_score_as_upstream(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, goals: str) -> None:
    monkeypatch.setenv("AGENTGYM_CACHE", str(tmp_path / "cache"))
    env = WebShopEnv(data_dir=write_synthetic_catalogue(tmp_path / "data"), goals=goals, split="all",
                     noun_tagger="spacy")
    replayed = 0
    for case in CASES:
        if case["source"] != "synthetic_catalogue" or case["goals"] != goals:
            continue
        goal = env.catalogue.goals[case["goal_index"]]
        assert {key: goal[key] for key in case["goal"]} == case["goal"], case["id"]
        product = env.catalogue.by_asin[case["product"]["asin"]]
        if case["kind"] in REPLAYABLE:
            assert {key: product[key] for key in case["product"]} == case["product"], case["id"]
            assert env.catalogue.prices[goal["asin"]] == case["price"]
            info = _play_purchase(env, str(case["goal_index"]), dict(case, price=env.catalogue.prices[product["asin"]]))
            if case["kind"] in ("gold", "wrong_option", "no_options"):
                assert info["score"] == EXPECTED["results"][case["id"]]["reward"], case["id"]
                replayed += 1
    assert replayed >= 30


def test_product_documents_are_indexed_as_upstream_builds_them() -> None:
    documents = {doc["id"]: doc["contents"] for doc in SEARCH["corpora"]["catalogue"]["documents"]}
    products = {case["product"]["asin"]: case["product"] for case in CASES if case["source"] != "unit_test"}
    assert {asin: product_document(p) for asin, p in products.items()} == documents


def _assert_same_rankings(index: LuceneBM25Index, results: dict[str, list], k: int) -> None:
    differ = []
    for query, hits in results.items():
        ours = index.search(query, k)
        if [doc for doc, _ in ours] != [doc for doc, _ in hits]:
            differ.append(query)
        for (_, score), (_, reported) in zip(ours, hits):
            assert score == pytest.approx(reported, abs=2e-4), query  # Pyserini reports 4 decimals
    assert differ == []


def test_catalogue_search_ranks_as_pyserini() -> None:
    corpus = SEARCH["corpora"]["catalogue"]
    index = LuceneBM25Index([d["id"] for d in corpus["documents"]], [d["contents"] for d in corpus["documents"]])
    assert len(corpus["results"]) > 300
    _assert_same_rankings(index, corpus["results"], corpus["k"])


def test_human_goal_corpus_search_ranks_as_pyserini() -> None:
    from agentgym_suite.core.data import benchmark_dir

    path = benchmark_dir("webshop") / "baseline_models" / "data" / "human_goals.json"
    if not path.exists():
        pytest.skip(f"{path} is not here (WebShop's human goals, from `agentgym data fetch webshop`)")
    corpus = SEARCH["corpora"]["human_goals"]
    goals = json.loads(path.read_text(encoding="utf-8"))[:3000]
    index = LuceneBM25Index([f"g{n:05d}" for n in range(len(goals))], goals)
    assert len(corpus["results"]) == 1000
    _assert_same_rankings(index, corpus["results"], corpus["k"])


def test_analyzer_splits_and_stems_as_lucene() -> None:
    from agentgym_suite.envs.shared.lucene_bm25 import LuceneEnglishAnalyzer
    from agentgym_suite.envs.shared.porter_stemmer import porter_stem

    analysis = SEARCH["analyzer"]
    analyzer = LuceneEnglishAnalyzer()
    assert {text: analyzer.analyze(text) for text in analysis["texts"]} == analysis["texts"]
    stems = analysis["porter_stems"]
    assert len(stems) > 8000
    assert {word: porter_stem(word) for word in stems} == stems
