"""τ² banking_knowledge in ``Tau2-v0``: data, retrieval settings, departures, the customer's tools, and whole
episodes played by the oracle (the same for the telecom-workflow policy variant). Fidelity to upstream is
``tests/conformance/test_tau2.py`` and ``test_tau2_banking_retrieval.py``."""

from __future__ import annotations

import hashlib
from typing import Sequence

import pytest

from agentgym_suite.core.data import has_benchmark_data
from agentgym_suite.core.errors import DataNotFoundError
from agentgym_suite.envs.tau2 import Tau2Env
from agentgym_suite.envs.tau2.banking.data import BANKING_FILES

from .oracle import play_oracle

needs_banking = pytest.mark.skipif(not has_benchmark_data("tau2", *BANKING_FILES),
                                   reason="τ² banking_knowledge data not found: run `agentgym data fetch tau2`")


def _play_oracle(env: Tau2Env, task_id: str) -> tuple[float, dict]:
    played = play_oracle(env, task_id, 80)
    return played.reward, played.info


def test_missing_banking_data_says_what_to_fetch(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    (tmp_path / "tau2" / "domains").mkdir(parents=True)
    monkeypatch.setenv("AGENTGYM_DATA", str(tmp_path))
    with pytest.raises(DataNotFoundError, match=r"banking_knowledge/db\.json.*agentgym data fetch tau2"):
        Tau2Env(domain="banking_knowledge")


@needs_banking
@pytest.mark.parametrize(("retrieval", "match"), [("alltools", "hosted embeddings and a sandboxed shell"),
                                                  ("bm25_reranker", "LLM reranker"), ("nope", "choose one of"),
                                                  ("openai_embeddings", "embedder=")])
def test_retrieval_settings_that_cannot_run_are_clear_errors(retrieval: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        Tau2Env(domain="banking_knowledge", retrieval=retrieval)


def _names(env: Tau2Env) -> set[str]:
    assert env.world is not None
    return {s["function"]["name"] for s in env.world.agent.schemas()}


@needs_banking
def test_default_is_bm25_and_grep_and_its_departure_is_named() -> None:
    env = Tau2Env(domain="banking_knowledge")
    env.reset(options={"task_id": "task_001"})
    assert {"KB_search", "grep", "unlock_discoverable_agent_tool"} <= _names(env)
    assert not {"KB_search_bm25", "KB_search_dense"} & _names(env)
    assert "uses BM25" in env.messages[0]["content"]
    assert [r for r in env.leaderboard_departures() if "'alltools'" in r]
    plain = Tau2Env(domain="banking_knowledge", retrieval="no_knowledge")
    plain.reset(options={"task_id": "task_001"})
    assert not {"KB_search", "grep"} & _names(plain)


def _toy_embedder(texts: Sequence[str]) -> list[list[float]]:
    """Hashed bag of words (a stand-in for a local embedding model)."""
    out = []
    for text in texts:
        vector = [0.0] * 64
        for word in text.lower().split():
            vector[int(hashlib.md5(word.encode()).hexdigest(), 16) % 64] += 1.0
        out.append(vector)
    return out


@needs_banking
def test_dense_search_runs_on_a_pluggable_embedder_and_says_it_is_not_upstreams() -> None:
    env = Tau2Env(domain="banking_knowledge", retrieval="openai_embeddings", embedder=_toy_embedder)
    env.reset(options={"task_id": "task_001"})
    _, _, _, _, info = env.step('<tool_call>{"name": "KB_search", "arguments": {"query": "credit card annual fee"}}</tool_call>')
    result = env.tool_messages[-1]
    assert not result["error"] and result["content"].startswith("1. ") and "Score: " in result["content"]
    assert "[Timing: retrieval=" in result["content"]
    assert [r for r in env.leaderboard_departures() if "embedder" in r]


@needs_banking
def test_the_customer_sees_the_tools_its_task_lists() -> None:
    env = Tau2Env(domain="banking_knowledge")
    env.reset(options={"task_id": "task_001"})  # its task lists apply_for_credit_card only
    assert [s["function"]["name"] for s in env._user_tool_schemas()] == ["apply_for_credit_card"]


@needs_banking
def test_a_discoverable_tool_must_be_unlocked_then_its_call_is_logged() -> None:
    env = Tau2Env(domain="banking_knowledge")
    env.reset(options={"task_id": "task_005"})
    assert env.world is not None
    agent = env.world.agent
    name = "get_all_user_accounts_by_user_id_3847"
    assert "has not been unlocked" in agent.call("call_discoverable_agent_tool", {"agent_tool_name": name, "arguments": "{}"})
    assert agent.call("unlock_discoverable_agent_tool", {"agent_tool_name": name}).startswith(f"Tool unlocked: {name}")
    answer = agent.call("call_discoverable_agent_tool", {"agent_tool_name": name, "arguments": "{}"})
    assert answer.startswith("Error: Invalid arguments: KnowledgeTools.get_all_user_accounts_by_user_id_3847() missing")
    assert "Unknown agent tool" in agent.call("unlock_discoverable_agent_tool", {"agent_tool_name": "rm_rf_0000"})


@needs_banking
@pytest.mark.parametrize("task_id", ["task_001", "task_005", "task_020", "task_102"])  # 102: its instructions name ###STOP###
def test_the_oracle_solves_banking_tasks(task_id: str) -> None:
    # task_102's file (what upstream loads) grades an NL assertion too: a judge that finds it met
    env = Tau2Env(domain="banking_knowledge", judge=lambda assertions, messages: [True] * len(assertions))
    reward, info = _play_oracle(env, task_id)
    assert reward == 1.0 and info["termination_reason"] == "user_stop" and info["db_match"] is True


def test_telecom_workflow_still_plays() -> None:
    env = Tau2Env(domain="telecom-workflow")
    reward, info = _play_oracle(env, env.task_ids()[0])
    assert reward == 1.0 and info["termination_reason"] == "user_stop"
    assert "<tech_support_policy>" in env.messages[0]["content"]


@needs_banking
def test_tasks_come_from_the_task_files_upstream_loads() -> None:
    """Upstream's get_tasks reads tasks/task_*.json; the combined tasks.json differs from them in 13 tasks."""
    import json

    from agentgym_suite.envs.tau2.banking.data import FOLDER, banking_root

    folder = banking_root() / FOLDER
    files = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted((folder / "tasks").glob("task_*.json"))}
    combined = {str(t["id"]): t for t in json.loads((folder / "tasks.json").read_text(encoding="utf-8"))}
    env = Tau2Env(domain="banking_knowledge")
    assert env.task_ids() == list(files)
    assert all(env.data.tasks[task_id] == files[task_id] for task_id in files)
    differing = [task_id for task_id in files if combined.get(task_id) != files[task_id]]
    assert "task_102" in differing and files["task_102"]["evaluation_criteria"]["nl_assertions"]
    assert not combined["task_102"]["evaluation_criteria"].get("nl_assertions")
