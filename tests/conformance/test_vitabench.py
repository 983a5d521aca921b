"""VitaBench's tools against upstream's outputs on the same call sequences.

Inputs (``vitabench/inputs_<domain>.json``: per task, the oracle's gold calls and perturbations
of them, the read tools, failures) and upstream's outputs (``vitabench/expected_<domain>.json``
and ``vitabench/upstream_schemas.json``) come from ``vitabench/regenerate_vitabench.py``, run on
meituan-longcat/vitabench at the commit recorded in each file. Every result string and the
hash of the final order/book/reservation tables must be equal. The first tasks of each domain
run by default; all 200 tasks are ``slow``. The first 30 Chinese delivery tasks (upstream's
default language) are played too when upstream's ``tasks.json`` is in the data folder.

Episode rules come from ``vitabench/episodes.json`` (``regenerate_vitabench_episodes.py``:
upstream's orchestrator with a scripted agent and user): the agent's system prompt, the
greeting, the turn order and the step count under several step limits.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from agentgym_suite.core.data import has_benchmark_data
from agentgym_suite.envs.vitabench import VitaBenchEnv
from agentgym_suite.envs.vitabench.tools import VitaTools

HERE = Path(__file__).resolve().parent / "vitabench"
sys.path.insert(0, str(HERE))
from replay import canonical_tables, digest, mask, resolve, run_sequence  # noqa: E402

UPSTREAM_COMMIT = "96f3b8529d8ea38d330de2405af7e32a1454f6cd"
DOMAINS = ("delivery", "instore")
SETS = {"delivery": ("delivery", "english"), "instore": ("instore", "english"), "delivery_zh": ("delivery", "chinese")}
"""Fixture name -> (domain, language); the Chinese set needs upstream's ``tasks.json`` in the data folder."""
FAST = 4
"""Tasks per set in the default run."""

pytestmark = pytest.mark.skipif(not has_benchmark_data("vitabench", "domains/delivery/tasks_en.json", "domains/instore/tasks_en.json"),
                                reason="VitaBench data not found (agentgym data fetch vitabench)")


def _load(name: str) -> dict[str, Any]:
    return json.loads((HERE / name).read_text(encoding="utf-8"))


INPUTS = {k: _load(f"inputs_{k}.json") for k in SETS}
EXPECTED = {k: _load(f"expected_{k}.json") for k in SETS}
EXPECTED_V2 = {k: _load(f"expected_{k}_v2.json") for k in DOMAINS}
"""VitaBench-2.0's tools on the first English tasks of each domain (``regenerate_vitabench.py expected --version v2``)."""
V2_COMMIT = "f60169e89f30499cb7883f3dad76bd03facc908d"
CASES = [(k, tid) for k in SETS for tid in INPUTS[k]["tasks"]]
FAST_CASES = [c for k in SETS for c in [x for x in CASES if x[0] == k][:FAST]]


def _needs(key: str) -> None:
    domain, language = SETS[key]
    if language == "chinese" and not has_benchmark_data("vitabench", f"domains/{domain}/tasks.json"):
        pytest.skip(f"upstream's Chinese {domain} tasks (domains/{domain}/tasks.json) are not in the data folder")


def _tables(toolkit: Any) -> dict[str, dict[str, Any]]:
    names = ("orders", "books", "reservations") if "books" in toolkit.db else ("orders",)
    return {n: toolkit.db[n] for n in names}


def _replay(key: str, task_id: str, version: int = 1) -> list[str]:
    _needs(key)
    domain, language = SETS[key]
    env = VitaBenchEnv(domain=domain, language=language)
    task = env.tasks[task_id]
    expected = EXPECTED if version == 1 else EXPECTED_V2
    mismatches = []
    for seq_name, calls in INPUTS[key]["tasks"][task_id].items():
        toolkit = VitaTools(task_id, domain, task["environment"], language, version=version)
        results, created = run_sequence(calls, lambda name, args, tk=toolkit: tk.call(name, **args),
                                        lambda tk=toolkit: {k for t in _tables(tk).values() for k in t})
        want = expected[key]["results"][task_id][seq_name]
        for i, (ours, theirs) in enumerate(zip(results, want["results"])):
            if ours != theirs:
                mismatches.append(f"{task_id}/{seq_name}#{i} {calls[i][0]}:\n  ours:     {ours!r}\n  upstream: {theirs!r}")
        db_hash = hashlib.sha256(canonical_tables(_tables(toolkit), created).encode()).hexdigest()
        if db_hash != want["db_sha256"]:
            mismatches.append(f"{task_id}/{seq_name}: final tables differ ({len(created)} created, upstream {want['created']})")
    return mismatches


def test_fixtures_come_from_the_pinned_upstream_commit() -> None:
    for key, (_, language) in SETS.items():
        assert INPUTS[key]["upstream"]["commit"] == EXPECTED[key]["upstream"]["commit"] == UPSTREAM_COMMIT
        assert INPUTS[key]["language"] == EXPECTED[key]["language"] == language
        assert set(EXPECTED[key]["results"]) == set(INPUTS[key]["tasks"])
    assert len([c for c in CASES if SETS[c[0]][1] == "english"]) == 200


def test_tool_parameters_equal_upstreams() -> None:
    schemas = _load("upstream_schemas.json")["schemas"]

    def shape(parameters: dict[str, Any]) -> dict[str, Any]:
        props = {name: {k: v for k, v in p.items() if k in ("type", "items", "default")} for name, p in parameters.get("properties", {}).items()}
        return {"properties": props, "required": sorted(parameters.get("required") or [])}

    for domain in DOMAINS:
        ours = {s["function"]["name"]: shape(s["function"]["parameters"]) for s in VitaTools("t", domain, {"time": "2025-01-01 00:00:00"}).schemas}
        theirs = {name: shape(p) for name, p in schemas[domain].items()}
        assert ours == theirs


@pytest.mark.parametrize(("key", "task_id"), FAST_CASES)
def test_results_and_tables_equal_upstreams(key: str, task_id: str) -> None:
    mismatches = _replay(key, task_id)
    assert not mismatches, "\n".join(mismatches[:10])


@pytest.mark.slow
@pytest.mark.parametrize(("key", "task_id"), [c for c in CASES if c not in FAST_CASES])
def test_results_and_tables_equal_upstreams_all_tasks(key: str, task_id: str) -> None:
    mismatches = _replay(key, task_id)
    assert not mismatches, "\n".join(mismatches[:10])


V2_CASES = [(k, tid) for k in DOMAINS for tid in EXPECTED_V2[k]["results"]]


@pytest.mark.parametrize(("key", "task_id"), [c for c in V2_CASES if c[0] == "delivery"][:3] + [c for c in V2_CASES if c[0] == "instore"][:3])
def test_version_2_tools_equal_vitabench_2(key: str, task_id: str) -> None:
    """2.0's toolkits: products read from the database, in-store searches of 100 hits, no user-history tool."""
    assert EXPECTED_V2[key]["upstream"]["commit"] == V2_COMMIT
    mismatches = _replay(key, task_id, version=2)
    assert not mismatches, "\n".join(mismatches[:10])


@pytest.mark.slow
@pytest.mark.parametrize(("key", "task_id"), V2_CASES)
def test_version_2_tools_equal_vitabench_2_all_recorded_tasks(key: str, task_id: str) -> None:
    mismatches = _replay(key, task_id, version=2)
    assert not mismatches, "\n".join(mismatches[:10])


@pytest.mark.parametrize("domain", DOMAINS)
def test_version_2_tool_parameters_equal_vitabench_2(domain: str) -> None:
    def shape(parameters: dict[str, Any]) -> dict[str, Any]:
        props = {name: {k: v for k, v in p.items() if k in ("type", "items", "default")} for name, p in parameters.get("properties", {}).items()}
        return {"properties": props, "required": sorted(parameters.get("required") or [])}

    toolkit = VitaTools("t", domain, {"time": "2025-01-01 00:00:00"}, version=2)
    assert {s["function"]["name"]: shape(s["function"]["parameters"]) for s in toolkit.schemas} == \
        {name: shape(p) for name, p in EXPECTED_V2[domain]["schemas"].items()}


@pytest.mark.parametrize("domain", DOMAINS)
def test_env_answers_the_gold_calls_as_upstream(domain: str) -> None:
    """Through the env (parsing, dispatch, the tool messages the agent reads), not only the toolkit."""
    task_id = next(t for t, seqs in INPUTS[domain]["tasks"].items() if seqs["gold"])  # the English sets are keyed by domain
    env = VitaBenchEnv(domain=domain)
    env.reset(options={"task_id": task_id})
    gold = INPUTS[domain]["tasks"][task_id]["gold"]
    created: list[str] = []
    for i, (name, arguments) in enumerate(gold):
        before = {k for t in _tables(env._vt).values() for k in t}
        env.step("<tool_call>\n" + json.dumps({"name": name, "arguments": resolve(arguments, created)}) + "\n</tool_call>")
        created.extend(sorted({k for t in _tables(env._vt).values() for k in t} - before))
        content = env.messages[-1]["content"]
        assert env.messages[-1]["role"] == "tool"
        assert digest(mask(content, created)) == EXPECTED[domain]["results"][task_id]["gold"]["results"][i]


EPISODES = _load("episodes.json")
ID_IN_RESULT = re.compile(r"(?:order_id:|book_id=|reservation_id=)(\w+)")


def _masked(text: str | None) -> str | None:
    return text if text is None else ID_IN_RESULT.sub("<id>", text)


def test_agent_system_prompt_is_upstreams() -> None:
    """The policy with the task's time and weekday, nothing appended (``regenerate_vitabench_episodes.py``)."""
    assert EPISODES["upstream"]["commit"] == UPSTREAM_COMMIT
    for key, prompt in EPISODES["system_prompts"].items():
        domain, task_id = key.split("/")
        _, info = VitaBenchEnv(domain=domain).reset(options={"task_id": task_id})
        assert info["messages"][0] == {"role": "system", "content": prompt}


@pytest.mark.parametrize("episode", EPISODES["episodes"], ids=lambda e: e["name"])
def test_episode_unfolds_as_upstreams_orchestrator(episode: dict[str, Any]) -> None:
    """Greeting, turn order, tool answers, step count and how the episode ends, under several step limits."""
    from regenerate_vitabench_episodes import resolve as fill

    replies = iter(episode["user"])
    env = VitaBenchEnv(domain=episode["domain"], user=lambda messages: next(replies), max_steps=episode["max_steps"])
    _, info = env.reset(options={"task_id": episode["task"]})
    user_id = env.tasks[episode["task"]]["environment"]["user_id"]
    terminated, reward, last_tool = False, 0.0, ""
    for step in episode["agent"]:
        if terminated:
            break
        if isinstance(step, str):
            action = step
        else:
            action = "\n".join("<tool_call>" + json.dumps({"name": n, "arguments": fill(a, last_tool, user_id)}) + "</tool_call>" for n, a in step)
        _, reward, terminated, _, info = env.step(action)
        if not isinstance(step, str):  # the results of this message's calls
            last_tool = "\n".join(m["content"] for m in info["messages"][-len(step):] if m["role"] == "tool")
    ours = [m for m in info["messages"] if m["role"] != "system"]
    theirs = episode["trajectory"]
    assert [m["role"] for m in ours] == [m["role"] for m in theirs]
    for mine, want in zip(ours, theirs):
        if want.get("tool_calls"):
            assert [c["function"]["name"] for c in mine["tool_calls"]] == want["tool_calls"]
        elif want["role"] == "tool":
            assert _masked(mine["content"]) == _masked(want["content"])
        else:
            assert mine["content"] == want["content"]
    assert terminated and info["steps"] == episode["steps"]
    assert (info.get("termination") == "max_steps") == (episode["termination"] == "max_steps")
    if episode["termination"] == "max_steps":
        assert reward == 0.0
