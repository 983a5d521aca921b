"""τ² banking_knowledge: knowledge retrieval, tool answers and database effects, and policies equal to upstream's
outputs (and telecom-workflow's policy, which runs without the banking data).

``tests/conformance/tau2/retrieval_and_policies.json`` was produced by ``regenerate_tau2.py`` with the official
code (its BM25 and grep pipelines of ``tau2.domains.banking_knowledge.retrieval`` over the pinned commit's 698
documents, and the policies its environments build). The knowledge base order upstream used (its directory
listing) is recorded too: ranked over that order ours must give the very same list (ids, scores, ties); over the
suite's own order (file names) only equal scores may swap, and the ``full_kb`` policy lists the same documents in
the suite's order.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from agentgym_suite.core.data import benchmark_dir, has_benchmark_data
from agentgym_suite.envs.tau2.banking.data import BANKING_FILES, FOLDER
from agentgym_suite.envs.tau2.banking.knowledge import Document, bm25_rank, grep_rank, load_documents

needs_banking = pytest.mark.skipif(not has_benchmark_data("tau2", *BANKING_FILES),
                                reason="τ² banking_knowledge data not found: run `agentgym data fetch tau2` (it places "
                                       "domains/banking_knowledge/ and tools_source.py under $AGENTGYM_DATA/tau2)")

EXPECTED = json.loads((Path(__file__).parent / "tau2" / "retrieval_and_policies.json").read_text(encoding="utf-8"))


def _documents() -> tuple[Document, ...]:
    return load_documents(str(benchmark_dir("tau2") / FOLDER / "documents"))


def _in_upstream_order() -> tuple[Document, ...]:
    by_id = {d.id: d for d in _documents()}
    assert sorted(by_id) == sorted(EXPECTED["kb_order"]), "the knowledge base differs from the pinned commit's"
    return tuple(by_id[i] for i in EXPECTED["kb_order"])


def _same(ours: list[tuple[str, float]], theirs: list[list[Any]]) -> None:
    assert [d for d, _ in ours] == [d for d, _ in theirs]
    assert [s for _, s in ours] == pytest.approx([s for _, s in theirs], rel=1e-12, abs=1e-12)


@needs_banking
@pytest.mark.parametrize("case", EXPECTED["bm25"], ids=lambda c: c["query"][:30] or "blank")
def test_bm25_ranking_is_upstreams(case: dict[str, Any]) -> None:
    _same(bm25_rank(_in_upstream_order(), case["query"], 10), case["results"])
    ours = bm25_rank(_documents(), case["query"], 10)  # the suite's order: the same scores, ties may swap
    assert [s for _, s in ours] == pytest.approx([s for _, s in case["results"]], rel=1e-12, abs=1e-12)
    assert {d for d, s in ours if s > 0} == {d for d, s in case["results"] if s > 0} or len(
        {s for _, s in ours}) < len(ours)


@needs_banking
@pytest.mark.parametrize("case", EXPECTED["grep"], ids=lambda c: c["pattern"][:30])
def test_grep_ranking_is_upstreams(case: dict[str, Any]) -> None:
    _same(grep_rank(_in_upstream_order(), case["pattern"], 10), case["results"])


def _digest(text: str) -> dict[str, Any]:
    return {"sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(), "chars": len(text)}


@pytest.mark.parametrize("key", sorted(EXPECTED["policies"]))
def test_policy_is_upstreams(key: str) -> None:
    from agentgym_suite.envs.tau2 import Tau2Env

    domain, _, rest = key.partition(":")
    variant, _, task_id = rest.partition(":")
    if domain == "banking_knowledge" and not has_benchmark_data("tau2", *BANKING_FILES):
        pytest.skip("τ² banking_knowledge data not found: run `agentgym data fetch tau2`")
    if domain == "telecom-workflow":
        policy = Tau2Env(domain=domain).data.policy
    elif variant == "full_kb":  # the whole knowledge base inlined, in the order upstream loaded it
        from agentgym_suite.envs.tau2.banking.policy import build_policy, variant as banking_variant

        prompts = benchmark_dir("tau2") / FOLDER / "prompts"
        policy = build_policy(prompts, banking_variant("full_kb"), _in_upstream_order(), None)
        assert _digest(build_policy(prompts, banking_variant("full_kb"), _documents(), None))["chars"] == len(policy)
    else:
        env = Tau2Env(domain=domain, retrieval=variant)
        env.reset(options={"task_id": task_id or env.task_ids()[0]})
        system = env.messages[0]["content"]
        policy = system[system.index("<policy>\n") + len("<policy>\n"): system.rindex("\n</policy>")]
    assert _digest(policy) == EXPECTED["policies"][key]


def test_the_expected_outputs_name_the_upstream_commit() -> None:
    assert EXPECTED["upstream"]["repo"] == "sierra-research/tau2-bench" and len(EXPECTED["upstream"]["commit"]) == 40
    assert len(EXPECTED["kb_order"]) == 698
    assert any(case["results"] for case in EXPECTED["bm25"]) and any(not case["results"] for case in EXPECTED["bm25"])


def _table_sha256(table: Any) -> str:
    return hashlib.sha256(json.dumps(table, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


@needs_banking
@pytest.mark.parametrize("probe", EXPECTED["probes"], ids=lambda p: p["probe"])
def test_each_tool_answers_and_changes_the_database_as_upstreams(probe: dict[str, Any]) -> None:
    """Every banking tool, called directly on a fresh database (valid and refused calls): the same answers, and
    the tables it changed equal to upstream's (their canonical JSON's SHA-256)."""
    from agentgym_suite.envs.tau2.data import load_domain
    from agentgym_suite.envs.tau2.world import build_world

    data = load_domain("banking_knowledge")
    world = build_world(data, {"id": "probe"})
    answers = []
    for call in probe["calls"]:
        toolkit = world.user if call["side"] == "user" else world.agent
        try:
            answers.append(str(getattr(toolkit, call["name"])(**call["arguments"])))
        except Exception as exc:  # noqa: BLE001 (compared with upstream's outcome)
            answers.append(f"raised {type(exc).__name__}: {exc}")
    assert answers == probe["results"]
    pristine = data.pristine_db
    changed = {t: _table_sha256(world.agent.db[t]) for t in sorted(world.agent.db) if world.agent.db[t] != pristine.get(t)}
    assert changed == probe["changed_tables"]


@needs_banking
def test_search_tools_read_as_upstreams() -> None:
    """``KB_search`` (its timing line aside: it measures the run) and ``grep`` answers, over upstream's document order."""
    from agentgym_suite.envs.tau2.banking.knowledge import Retrieval

    retrieval = Retrieval(_in_upstream_order(), kb_search="bm25", grep_tool=True)
    for case in EXPECTED["tool_texts"]["KB_search"]:
        text = retrieval.search("kb", case["query"])
        assert text.split("\n\n[Timing:")[0] != text  # the timing line is there, as upstream's
        assert _digest(text.split("\n\n[Timing:")[0]) == {"sha256": case["sha256"], "chars": case["chars"]}, case["query"]
    for case in EXPECTED["tool_texts"]["grep"]:
        assert _digest(retrieval.grep(case["pattern"])) == {"sha256": case["sha256"], "chars": case["chars"]}, case["pattern"]
