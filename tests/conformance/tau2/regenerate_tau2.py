"""Regenerate the τ²-bench conformance cases by running the official harness (not run by pytest).

Each case is a fixed conversation script built from a task's gold actions (the gold run, and
perturbations of it: a step dropped, a wrong argument, a wrong id, an extra write, a call after
a failed one, the required information left unsaid, ten failing calls, a run past the step
limit). The script is played by upstream's own half-duplex ``Orchestrator`` (scripted agent and
scripted user in place of the LLMs, upstream's environment executing every call, upstream's
step and error limits) and scored by upstream's ``evaluate_simulation`` (EvaluationType.ALL).
Natural-language assertions are answered by a stub judge that marks every assertion met (no
LLM runs here), so the combination of the bases is still upstream's.

What is written, per domain, to ``cases_<domain>.json``: the inputs (the script) and upstream's
outputs only — termination reason, reward, reward breakdown, DB / action / communicate /
env-assertion verdicts, every tool result string with its error flag, and the agent and user DB
hashes of the run and of the gold replay. ``tests/conformance/test_tau2.py`` replays the same
scripts through ``Tau2-v0`` and demands equal outputs.

Usage (upstream installed in a scratch venv outside the project, data of the pinned commit in
its ``data/`` folder; see ``README.md`` in this folder)::

    /work/scratch/tau2/venv/bin/python tests/conformance/tau2/regenerate_tau2.py \
        --upstream-src /work/scratch/tau2/src [--domains retail,airline,telecom,mock] [--tasks-per-domain N]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
from copy import deepcopy
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
UPSTREAM_REPO = "sierra-research/tau2-bench"
UPSTREAM_COMMIT = "a2c024725189473d2d7cea3a5cfdbcc67478e41f"
MAX_STEPS = 200
MAX_ERRORS = 10
STOP = "###STOP###"
OPENING = "Hi, I need help with my account."
ASK_USER = "Please do that on your phone and tell me when it is done."
USER_DONE = "Done."


# ----------------------------------------------------------------------------- case scripts
def _mutated(value: Any) -> Any:
    """A different value of the same kind."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value + 1.0
    if isinstance(value, str):
        return value + "X" if value else "X"
    if isinstance(value, list):
        return value[:-1] if len(value) > 1 else value + value
    if isinstance(value, dict):
        return {}
    return "X"


def _wrong_id(value: Any) -> Any:
    if isinstance(value, str) and value:
        last = value[-1]
        return value[:-1] + ("7" if last != "7" else "8") + "0"
    return _mutated(value)


def _id_key(action: dict[str, Any]) -> str | None:
    for key in action.get("arguments") or {}:
        if "id" in key.split("_") or key.endswith("_id") or key == "id":
            return key
    return None


def _plain_key(action: dict[str, Any]) -> str | None:
    for key in action.get("arguments") or {}:
        if key != _id_key(action) and not key.endswith("_id"):
            return key
    return None


def _inner(action: dict[str, Any]) -> dict[str, Any] | None:
    """The arguments a banking call passes on as a JSON string (``call_discoverable_*_tool``), when it has any."""
    raw = (action.get("arguments") or {}).get("arguments")
    if not isinstance(raw, str):
        return None
    try:
        inner = json.loads(raw)
    except json.JSONDecodeError:
        return None
    return inner if isinstance(inner, dict) and inner else None


def _with_inner(action: dict[str, Any], key: str, change: Any) -> dict[str, Any]:
    """``action`` with its passed-on argument ``key`` changed by ``change``."""
    out = deepcopy(action)
    inner = _inner(out) or {}
    inner[key] = change(inner[key])
    out["arguments"]["arguments"] = json.dumps(inner)
    return out


def banking_cases(actions: list[dict[str, Any]], closing: str) -> list[dict[str, Any]]:
    """Perturbations inside the JSON arguments of the discoverable-tool calls, and a call made without unlocking."""
    out = []
    nested = [i for i, a in enumerate(actions) if _inner(a)]
    plain = next((i for i in reversed(nested) if _plain_key({"arguments": _inner(actions[i])})), None)
    if plain is not None:
        key = str(_plain_key({"arguments": _inner(actions[plain])}))
        changed = actions[:plain] + [_with_inner(actions[plain], key, _mutated)] + actions[plain + 1:]
        out.append({"variant": "wrong_inner_arg", "script": script(changed, closing)})
    with_id = next((i for i in nested if _id_key({"arguments": _inner(actions[i])})), None)
    if with_id is not None:
        key = str(_id_key({"arguments": _inner(actions[with_id])}))
        failing = _with_inner(actions[with_id], key, _wrong_id)
        out.append({"variant": "wrong_inner_id", "script": script(actions[:with_id] + [failing] + actions[with_id + 1:], closing)})
        out.append({"variant": "inner_call_after_failure",
                    "script": script(actions[:with_id] + [failing] + actions[with_id:], closing)})
    unlock = next((i for i, a in enumerate(actions) if a["name"] == "unlock_discoverable_agent_tool"), None)
    if unlock is not None:
        out.append({"variant": "call_without_unlock", "script": script(actions[:unlock] + actions[unlock + 1:], closing)})
    return out


def _call(action: dict[str, Any]) -> dict[str, Any]:
    return {"name": action["name"], "arguments": deepcopy(action.get("arguments") or {}),
            "requestor": action.get("requestor", "assistant")}


def script(calls: list[dict[str, Any]], closing: str) -> list[dict[str, Any]]:
    """The conversation, message by message, in which ``calls`` are made in order and the agent ends with ``closing``."""
    items: list[dict[str, Any]] = [{"role": "user", "content": OPENING}]
    i = 0
    while i < len(calls):
        call = calls[i]
        if call["requestor"] == "user":
            items.append({"role": "assistant", "content": ASK_USER})
            while i < len(calls) and calls[i]["requestor"] == "user":
                items.append({"role": "user", "tool_call": {"name": calls[i]["name"], "arguments": calls[i]["arguments"]}})
                i += 1
            items.append({"role": "user", "content": USER_DONE})
            continue
        items.append({"role": "assistant", "tool_call": {"name": call["name"], "arguments": call["arguments"]}})
        i += 1
    items.append({"role": "assistant", "content": closing})
    items.append({"role": "user", "content": STOP})
    return items


def closing_text(task: dict[str, Any]) -> str:
    infos = (task.get("evaluation_criteria") or {}).get("communicate_info") or []
    if not infos:
        return "Your request is complete."
    return "Your request is complete. For your reference: " + "; ".join(str(i) for i in infos) + "."


def cases_for(task: dict[str, Any], tool_types: dict[str, str], limits: bool) -> list[dict[str, Any]]:
    """The gold script of ``task`` and its perturbations (``limits``: also runs into the error and step limits)."""
    actions = [_call(a) for a in ((task.get("evaluation_criteria") or {}).get("actions") or [])]
    closing = closing_text(task)
    out = [{"variant": "gold", "script": script(actions, closing)}]
    agent_side = [i for i, a in enumerate(actions) if a["requestor"] == "assistant"]
    writes = [i for i in agent_side if tool_types.get(actions[i]["name"]) == "write"]
    if actions:
        dropped = writes[-1] if writes else len(actions) - 1
        out.append({"variant": "drop_step", "script": script(actions[:dropped] + actions[dropped + 1:], closing)})
    plain = next((i for i in reversed(writes or agent_side) if _plain_key(actions[i])), None)
    if plain is not None:
        changed = deepcopy(actions)
        key = _plain_key(changed[plain])
        changed[plain]["arguments"][key] = _mutated(changed[plain]["arguments"][key])
        out.append({"variant": "wrong_arg", "script": script(changed, closing)})
    with_id = next((i for i in (writes or agent_side) if _id_key(actions[i])), None)
    if with_id is not None:
        changed = deepcopy(actions)
        key = _id_key(changed[with_id])
        changed[with_id]["arguments"][key] = _wrong_id(changed[with_id]["arguments"][key])
        out.append({"variant": "wrong_id", "script": script(changed, closing)})
        failing = deepcopy(actions[with_id])
        failing["arguments"][key] = _wrong_id(failing["arguments"][key])
        out.append({"variant": "call_after_failure", "script": script([failing] + actions, closing)})
        if limits:
            out.append({"variant": "too_many_errors", "script": script([deepcopy(failing) for _ in range(MAX_ERRORS)] + actions, closing)})
    if writes:
        out.append({"variant": "extra_write", "script": script(actions + [deepcopy(actions[writes[-1]])], closing)})
    if (task.get("evaluation_criteria") or {}).get("communicate_info"):
        out.append({"variant": "unsaid_info", "script": script(actions, "Your request is complete.")})
    reads = [i for i in agent_side if tool_types.get(actions[i]["name"]) == "read"]
    if limits and reads:
        out.append({"variant": "max_steps", "script": script([deepcopy(actions[reads[0]]) for _ in range(MAX_STEPS // 2 + 1)], closing)})
    return out + banking_cases(actions, closing)


# ----------------------------------------------------------------------------- upstream run
LONG_RESULT = 300
"""Tool results longer than this are stored as their SHA-256 and length (the test hashes ours the same way)."""


def result_record(message: Any) -> dict[str, Any]:
    """A tool message as stored: its text (or hash when long), error flag and requestor."""
    text = message.content or ""
    body: dict[str, Any] = {"content": text} if len(text) <= LONG_RESULT else {
        "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(), "chars": len(text)}
    return {**body, "error": bool(message.error), "requestor": message.requestor}


BANKING_RETRIEVAL = "bm25_grep"
"""The banking runs' retrieval configuration (``Tau2-v0``'s default; upstream's own default needs hosted embeddings)."""


def _cache_banking_retrieval() -> None:
    """Build upstream's knowledge base and its BM25/grep indexes once per process instead of once per environment
    (each case makes several environments). They are read-only once built, so the outputs are unchanged."""
    import functools

    import tau2.domains.banking_knowledge.environment as environment
    import tau2.domains.banking_knowledge.retrieval as retrieval

    if getattr(environment.get_knowledge_base, "cache_info", None) is not None:
        return
    environment.get_knowledge_base = functools.lru_cache(maxsize=1)(environment.get_knowledge_base)
    kb_pipelines: dict[Any, Any] = {}
    grep_pipelines: dict[Any, Any] = {}
    make_kb, make_grep = retrieval._create_kb_pipeline, retrieval._create_grep_pipeline

    def kb_pipeline(spec: Any, knowledge_base: Any) -> Any:
        key = (spec.type, spec.embedder_type, spec.embedder_model, spec.top_k, spec.reranker, spec.reranker_min_score)
        if key not in kb_pipelines:
            kb_pipelines[key] = make_kb(spec, knowledge_base)
        return kb_pipelines[key]

    def grep_pipeline(spec: Any, knowledge_base: Any) -> Any:
        key = (spec.top_k, spec.case_sensitive)
        if key not in grep_pipelines:
            grep_pipelines[key] = make_grep(spec, knowledge_base)
        return grep_pipelines[key]

    retrieval._create_kb_pipeline, retrieval._create_grep_pipeline = kb_pipeline, grep_pipeline


def env_kwargs_for(domain: str, task_obj: Any) -> dict[str, Any]:
    """What upstream's runner passes the environment constructor for ``task_obj`` (banking: the retrieval
    configuration, the task, and the reads its gold actions make, whose calls are logged)."""
    if domain != "banking_knowledge":
        return {}
    from tau2.runner.build import _derive_read_log_allowlist

    _cache_banking_retrieval()
    return {"retrieval_variant": BANKING_RETRIEVAL, "task": task_obj, "read_log_allowlist": _derive_read_log_allowlist(task_obj)}


def run_upstream(domain: str, task_obj: Any, items: list[dict[str, Any]]) -> dict[str, Any]:
    """Play ``items`` with upstream's orchestrator and score the run with upstream's evaluator."""
    from tau2.agent.base_agent import HalfDuplexAgent
    from tau2.data_model.message import AssistantMessage, ToolCall, ToolMessage, UserMessage
    from tau2.data_model.tasks import RewardType  # noqa: F401
    from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation
    from tau2.orchestrator.orchestrator import Orchestrator
    from tau2.registry import registry
    from tau2.user.user_simulator_base import HalfDuplexUser, UserState
    from tau2.user.user_simulator import UserSimulator

    queue = list(items)
    counter = {"n": 0}

    def next_item(role: str) -> dict[str, Any]:
        if not queue:
            raise RuntimeError(f"script exhausted when the {role} had to speak")
        item = queue.pop(0)
        if item["role"] != role:
            raise RuntimeError(f"script gives a {item['role']} message where the {role} speaks: {item}")
        return item

    def tool_calls(item: dict[str, Any], requestor: str) -> list[ToolCall]:
        counter["n"] += 1
        call = item["tool_call"]
        return [ToolCall(id=f"call_{counter['n']}", name=call["name"], arguments=deepcopy(call["arguments"]), requestor=requestor)]

    class ScriptAgent(HalfDuplexAgent):
        def get_init_state(self, message_history=None):
            return {"messages": list(message_history or [])}

        def generate_next_message(self, message, state):
            item = next_item("assistant")
            if "tool_call" in item:
                return AssistantMessage(role="assistant", content=None, tool_calls=tool_calls(item, "assistant")), state
            return AssistantMessage(role="assistant", content=item["content"]), state

    class ScriptUser(HalfDuplexUser):
        def get_init_state(self, message_history=None):
            return UserState(system_messages=[], messages=[])

        @classmethod
        def is_stop(cls, message):
            return UserSimulator.is_stop(message)

        def generate_next_message(self, message, state):
            item = next_item("user")
            if "tool_call" in item:
                return UserMessage(role="user", content=None, tool_calls=tool_calls(item, "user")), state
            return UserMessage(role="user", content=item["content"]), state

    env_kwargs = env_kwargs_for(domain, task_obj)
    environment = registry.get_env_constructor(domain)(**env_kwargs)
    orchestrator = Orchestrator(domain=domain, agent=ScriptAgent(tools=environment.get_tools(), domain_policy=environment.get_policy()),
                                user=ScriptUser(), environment=environment, task=task_obj, max_steps=MAX_STEPS,
                                max_errors=MAX_ERRORS, seed=0, simulation_id="conformance")
    simulation = orchestrator.run()
    try:
        reward_info = evaluate_simulation(simulation=simulation, task=task_obj, evaluation_type=EvaluationType.ALL,
                                          solo_mode=False, domain=domain, env_kwargs=env_kwargs)
    except Exception as exc:  # e.g. an env assertion whose function raises: upstream's evaluation stops there
        reward_info = None
        evaluation_error = f"{type(exc).__name__}: {exc}"
    else:
        evaluation_error = None
    tool_results = [result_record(m) for m in simulation.messages if isinstance(m, ToolMessage)]
    gold_env = registry.get_env_constructor(domain)(**env_kwargs)
    initial = task_obj.initial_state
    gold_env.set_state(initialization_data=initial.initialization_data if initial else None,
                       initialization_actions=initial.initialization_actions if initial else None,
                       message_history=(initial.message_history or []) if initial else [])
    for action in (task_obj.evaluation_criteria.actions or []) if task_obj.evaluation_criteria else []:
        try:
            gold_env.make_tool_call(tool_name=action.name, requestor=action.requestor, **action.arguments)
        except Exception:  # upstream's evaluator logs and skips a failing gold action too
            pass

    def listed(checks: Any, flag: str) -> list[bool] | None:
        return None if checks is None else [bool(getattr(c, flag)) for c in checks]

    if reward_info is None:
        return {"termination_reason": str(getattr(simulation.termination_reason, "value", simulation.termination_reason)),
                "messages": len(simulation.messages), "evaluation_error": evaluation_error,
                "tool_results": [result_record(m) for m in simulation.messages if isinstance(m, ToolMessage)]}
    breakdown = reward_info.reward_breakdown
    return {
        "termination_reason": simulation.termination_reason.value if hasattr(simulation.termination_reason, "value") else str(simulation.termination_reason),
        "messages": len(simulation.messages),
        "reward": reward_info.reward,
        "reward_breakdown": None if breakdown is None else {getattr(k, "value", str(k)): v for k, v in breakdown.items()},
        "db_match": None if reward_info.db_check is None else bool(reward_info.db_check.db_match),
        "action_checks": listed(reward_info.action_checks, "action_match"),
        "communicate_checks": listed(reward_info.communicate_checks, "met"),
        "env_assertions": listed(reward_info.env_assertions, "met"),
        "nl_assertions": listed(reward_info.nl_assertions, "met"),
        "tool_results": tool_results,
        "db_hash": environment.get_db_hash(),
        "user_db_hash": environment.get_user_db_hash(),
        "gold_db_hash": gold_env.get_db_hash(),
        "gold_user_db_hash": gold_env.get_user_db_hash(),
    }


def stub_nl_judge() -> None:
    """Replace upstream's LLM NL-assertion judge with one that marks every assertion met."""
    from tau2.data_model.simulation import NLAssertionCheck
    from tau2.evaluator.evaluator_nl_assertions import NLAssertionsEvaluator

    def all_met(cls, trajectory, nl_assertions):
        return [NLAssertionCheck(nl_assertion=a, met=True, justification="stub judge: met") for a in nl_assertions]

    NLAssertionsEvaluator.evaluate_nl_assertions = classmethod(all_met)


METRIC_TRIALS = [
    # (task id, [(reward, db_match or None, termination reason) per trial])
    ("a", [(1.0, True, "user_stop"), (1.0, True, "user_stop"), (1.0, True, "user_stop"), (1.0, True, "user_stop")]),
    ("b", [(1.0, True, "user_stop"), (0.0, False, "user_stop"), (1.0, True, "user_stop"), (0.0, None, "max_steps")]),
    ("c", [(0.0, None, "too_many_errors"), (0.0, False, "user_stop"), (0.0, None, "user_error"), (1.0, True, "user_stop")]),
    ("d", [(0.0, False, "user_stop"), (0.0, False, "user_stop"), (0.0, True, "user_stop"), (0.0, None, "max_steps")]),
    ("e", [(1.0, True, "user_stop"), (1.0, True, "user_stop"), (0.0, True, "user_stop"), (1.0, True, "user_stop")]),
]
"""Synthetic trial outcomes scored by upstream's ``compute_metrics`` (Pass^k, DB-match and termination counts)."""


def upstream_metrics() -> dict[str, Any]:
    """Upstream's metrics of :data:`METRIC_TRIALS`."""
    from tau2.data_model.simulation import (AgentInfo, DBCheck, Info, Results, RewardInfo, SimulationRun,
                                            TerminationReason, UserInfo)
    from tau2.data_model.tasks import Task
    from tau2.environment.environment import EnvironmentInfo
    from tau2.metrics.agent_metrics import compute_metrics

    tasks = [Task.model_validate({"id": task_id, "user_scenario": {"instructions": "x"}, "evaluation_criteria": {"actions": []}})
             for task_id, _ in METRIC_TRIALS]
    sims = []
    for task_id, trials in METRIC_TRIALS:
        for trial, (reward, db_match, end) in enumerate(trials):
            info = RewardInfo(reward=reward, db_check=None if db_match is None else DBCheck(db_match=db_match, db_reward=float(db_match)))
            sims.append(SimulationRun(id=f"{task_id}-{trial}", task_id=task_id, start_time="t", end_time="t", duration=0.0,
                                      termination_reason=TerminationReason(end), reward_info=info, messages=[], trial=trial))
    results = Results(info=Info(git_commit="x", num_trials=4, max_steps=MAX_STEPS, max_errors=MAX_ERRORS,
                                user_info=UserInfo(implementation="x"), agent_info=AgentInfo(implementation="x"),
                                environment_info=EnvironmentInfo(domain_name="x", policy="")),
                      tasks=tasks, simulations=sims)
    m = compute_metrics(results)
    return {"trials": METRIC_TRIALS, "expected": {
        "avg_reward": m.avg_reward, "pass_hat_k": {str(k): v for k, v in m.pass_hat_ks.items()},
        "db": {"match": m.db_match_count, "mismatch": m.db_mismatch_count, "not_checked": m.db_not_checked},
        "termination": {"user_stop": m.termination_user_stop, "agent_stop": m.termination_agent_stop,
                        "max_steps": m.termination_max_steps, "error": m.termination_error}}}


RETRIEVAL_QUERIES = [
    "credit card annual fee", "How do I dispute a debit card transaction?", "overdraft fee refund",
    "transfer_to_human_agents reason", "unlock_discoverable_agent_tool", "Gold Rewards Card cash back",
    "close savings account early closure fee", "ATM deposit not credited", "Rho-Bank+ subscription benefits",
    "replacement card lost stolen", "PIN reset", "business checking account eligibility", "zzzz unknown words qqq",
    "the", "   ",
]
"""Queries for the retrieval conformance: KB topics, tool names, a stop word, unknown words, a blank query."""

GREP_PATTERNS = ["annual fee", "credit.*card", "fee|charge", "get_all_user_accounts_by_user_id_3847", "[unclosed",
                 "nothing-matches-this-xyz", "Rho-Bank\\+"]


TOOL_TEXT_QUERIES = ["credit card annual fee", "PIN reset", "zzzz unknown words qqq"]
TOOL_TEXT_PATTERNS = ["get_all_user_accounts_by_user_id_3847", "nothing-matches-this-xyz"]


def _digest_text(text: str) -> dict[str, Any]:
    return {"sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(), "chars": len(text)}


def upstream_tool_texts() -> dict[str, Any]:
    """What the agent reads from upstream's ``KB_search`` (its timing line cut off: it measures the run) and ``grep``
    tools of the ``bm25_grep`` configuration."""
    from tau2.domains.banking_knowledge.environment import get_environment

    tools = get_environment(retrieval_variant="bm25_grep").tools
    return {"KB_search": [{"query": q, **_digest_text(tools.KB_search(q).split("\n\n[Timing:")[0])} for q in TOOL_TEXT_QUERIES],
            "grep": [{"pattern": p, **_digest_text(tools.grep(p))} for p in TOOL_TEXT_PATTERNS]}


def upstream_retrieval() -> dict[str, Any]:
    """Upstream's BM25 and grep pipelines on the banking knowledge base: ids and scores per query."""
    from tau2.domains.banking_knowledge.environment import get_knowledge_base
    from tau2.domains.banking_knowledge.retrieval import create_bm25_retrieval_pipeline, create_grep_retrieval_pipeline

    kb = get_knowledge_base()
    bm25 = create_bm25_retrieval_pipeline(kb, top_k=10)
    grep = create_grep_retrieval_pipeline(kb, top_k=10)
    return {"kb_order": [doc.id for doc in kb.get_all_documents()],
            "bm25": [{"query": q, "results": [[d, s] for d, s in bm25.retrieve(q)]} for q in RETRIEVAL_QUERIES],
            "grep": [{"pattern": p, "results": [[d, s] for d, s in grep.retrieve(p)]} for p in GREP_PATTERNS]}


def _agent(name: str, /, **arguments: Any) -> list[dict[str, Any]]:
    """Unlock agent tool ``name`` and call it with ``arguments``."""
    return [{"side": "assistant", "name": "unlock_discoverable_agent_tool", "arguments": {"agent_tool_name": name}},
            {"side": "assistant", "name": "call_discoverable_agent_tool",
             "arguments": {"agent_tool_name": name, "arguments": json.dumps(arguments)}}]


def _user(name: str, /, **arguments: Any) -> list[dict[str, Any]]:
    """The agent hands customer tool ``name`` over, and the customer calls it with ``arguments``."""
    return [{"side": "assistant", "name": "give_discoverable_user_tool", "arguments": {"discoverable_tool_name": name}},
            {"side": "user", "name": "call_discoverable_user_tool",
             "arguments": {"discoverable_tool_name": name, "arguments": json.dumps(arguments)}}]


def _plain(side: str, name: str, /, **arguments: Any) -> list[dict[str, Any]]:
    return [{"side": side, "name": name, "arguments": arguments}]


def banking_probes(db: dict[str, Any]) -> list[dict[str, Any]]:
    """Calls of every banking tool (valid and refused ones) on the pristine database, to compare result strings
    and database effects tool by tool (the gold scripts use only some of the tools)."""
    cards = db["debit_cards"]["data"]
    pending = {c["issue_reason"]: c for c in cards.values() if c["status"] == "PENDING"}
    dispute = {"transaction_id": "txn_8d1aa1219382", "card_action": "keep_active", "card_last_4_digits": "4821",
               "full_name": "Kenji Tanaka", "user_id": "6680a37184", "phone": "206-555-0293", "email": "k@example.com",
               "address": "1 Main St", "contacted_merchant": True, "purchase_date": "10/02/2025",
               "issue_noticed_date": "10/20/2025", "dispute_reason": "incorrect_amount",
               "resolution_requested": "partial_refund", "eligible_for_provisional_credit": True, "partial_refund_amount": 20}
    debit = {"transaction_id": "btxn_bd30d42f67a2", "account_id": "chk_538bfb9cba", "card_id": "dbc_538bfb9cba",
             "user_id": "lj82d4f1a9", "dispute_category": "card_not_present_fraud", "transaction_date": "11/01/2025",
             "discovery_date": "11/05/2025", "disputed_amount": 600, "transaction_type": "online_purchase",
             "card_in_possession": True, "pin_compromised": "yes_shared", "contacted_merchant": False,
             "police_report_filed": False, "written_statement_provided": True, "provisional_credit_eligible": True,
             "customer_max_liability_amount": 50, "card_action": "freeze_pending_investigation"}
    activation = {"expiration_date": "11/29", "cvv": "123", "pin": "1357"}
    probes: dict[str, list[dict[str, Any]]] = {
        "example": _agent("example_agent_tool_0000"),
        "rewards": _agent("update_transaction_rewards_3847", transaction_id="txn_8d1aa1219382", new_rewards_earned="500 points")
        + _agent("update_transaction_rewards_3847", transaction_id="txn_nope", new_rewards_earned="1 points"),
        "transfers": _agent("initial_transfer_to_human_agent_0218") + _agent("initial_transfer_to_human_agent_1822")
        + _agent("emergency_credit_bureau_incident_transfer_1114")
        + _plain("assistant", "transfer_to_human_agents", summary="s", reason="fraud_or_security_concern")
        + _plain("assistant", "transfer_to_human_agents", summary="s", reason="bogus"),
        "cc_dispute": _agent("file_credit_card_transaction_dispute_4829", **dispute)
        + _agent("file_credit_card_transaction_dispute_4829", **dispute)
        + _agent("file_credit_card_transaction_dispute_4829", **{**dispute, "dispute_reason": "nope"})
        + _agent("get_user_dispute_history_7291", user_id="6680a37184"),
        "debit_dispute": _agent("file_debit_card_transaction_dispute_6281", **debit)
        + _agent("file_debit_card_transaction_dispute_6281", **{**debit, "disputed_amount": 0})
        + _agent("get_debit_dispute_status_7483", user_id="lj82d4f1a9"),
        "recurring": _agent("set_debit_card_recurring_block_7382", card_id="dbc_lj82d4f1a9_bluest", block_recurring=True)
        + _agent("set_debit_card_recurring_block_7382", card_id=pending["new_account"]["card_id"], block_recurring=False),
        "atm_images": _agent("get_atm_deposit_images_8473", transaction_id="btxn_nope")
        + _agent("get_atm_deposit_images_8473", transaction_id="btxn_bd30d42f67a2"),
        "replacement": _agent("order_replacement_credit_card_7291", credit_card_account_id="cc_lj82d4f1a9_silver",
                              user_id="lj82d4f1a9", shipping_address="1 Main St", reason="damaged", expedited_shipping=True)
        + _agent("order_replacement_credit_card_7291", credit_card_account_id="cc_lj82d4f1a9_silver",
                 user_id="lj82d4f1a9", shipping_address="1 Main St", reason="bored")
        + _agent("get_pending_replacement_orders_5765", credit_card_account_id="cc_lj82d4f1a9_silver"),
        "closure": _agent("log_credit_card_closure_reason_4521", credit_card_account_id="cc_76ad9cc60e_gold",
                          user_id="76ad9cc60e", closure_reason="annual_fee")
        + _agent("get_closure_reason_history_8293", credit_card_account_id="cc_76ad9cc60e_gold")
        + _agent("close_credit_card_account_7834", credit_card_account_id="cc_76ad9cc60e_gold", user_id="76ad9cc60e")
        + _agent("close_credit_card_account_7834", credit_card_account_id="cc_nope", user_id="76ad9cc60e"),
        "credits_and_flags": _agent("apply_statement_credit_8472", user_id="76ad9cc60e",
                                    credit_card_account_id="cc_76ad9cc60e_gold", amount=25, reason="retention_offer")
        + _agent("apply_statement_credit_8472", user_id="76ad9cc60e", credit_card_account_id="cc_76ad9cc60e_gold",
                 amount=-5, reason="other")
        + _agent("apply_credit_card_account_flag_6147", credit_card_account_id="cc_76ad9cc60e_gold", user_id="76ad9cc60e",
                 flag_type="annual_fee_waived", expiration_date="11/14/2026", reason="retention_offer"),
        "card_payment": _agent("pay_credit_card_from_checking_9182", user_id="lj82d4f1a9",
                               checking_account_id="chk_lj82d4f1a9", credit_card_account_id="cc_lj82d4f1a9_silver", amount=100)
        + _agent("pay_credit_card_from_checking_9182", user_id="lj82d4f1a9", checking_account_id="chk_lj82d4f1a9",
                 credit_card_account_id="cc_lj82d4f1a9_silver", amount=99999),
        "credit_limit": _agent("submit_credit_limit_increase_request_7392", credit_card_account_id="cc_584f9c5d00_gold",
                               user_id="584f9c5d00", requested_increase_amount=2500)
        + _agent("submit_credit_limit_increase_request_7392", credit_card_account_id="cc_584f9c5d00_gold",
                 user_id="584f9c5d00", requested_increase_amount=2500.5)
        + _agent("get_credit_limit_increase_history_4829", credit_card_account_id="cc_584f9c5d00_gold")
        + _agent("get_payment_history_6183", credit_card_account_id="cc_584f9c5d00_gold", months=3)
        + _agent("approve_credit_limit_increase_5847", credit_card_account_id="cc_584f9c5d00_gold", user_id="584f9c5d00",
                 new_credit_limit=7500)
        + _agent("deny_credit_limit_increase_5848", credit_card_account_id="cc_584f9c5d00_gold", user_id="584f9c5d00",
                 denial_reason="high_utilization")
        + _agent("deny_credit_limit_increase_5848", credit_card_account_id="cc_584f9c5d00_gold", user_id="584f9c5d00",
                 denial_reason="nope"),
        "bank_accounts": _agent("open_bank_account_4821", user_id="lj82d4f1a9", account_type="savings",
                                account_class="Gold Account")
        + _agent("open_bank_account_4821", user_id="lj82d4f1a9", account_type="business_savings", account_class="x")
        + _agent("close_bank_account_7392", account_id="01")
        + _agent("close_bank_account_7392", account_id="01", waive_early_closure_fee=True)
        + _agent("get_all_user_accounts_by_user_id_3847", user_id="lj82d4f1a9")
        + _agent("transfer_funds_between_bank_accounts_7291", source_account_id="03", destination_account_id="04", amount=100)
        + _agent("apply_checking_account_credit_5829", account_id="03", amount=15, credit_type="fee_refund")
        + _agent("apply_savings_account_credit_6831", account_id="04", amount=3.5, credit_type="interest_correction")
        + _agent("submit_interest_discrepancy_report_7294", account_id="04", user_id="125", expected_apy=2.775,
                 actual_apy=2.5, amount_difference=1.25)
        + _agent("get_bank_account_transactions_9173", account_id="chk_538bfb9cba"),
        "debit_order": _agent("order_debit_card_5739", account_id="01", user_id="123", delivery_option="standard",
                              delivery_fee=0, card_design="classic", design_fee=0, shipping_address="1 Main St")
        + _agent("order_debit_card_5739", account_id="05", user_id="224959b99e", delivery_option="expedited",
                 delivery_fee=15, card_design="premium", design_fee=10, shipping_address="1 Main St")
        + _agent("get_debit_cards_by_account_id_7823", account_id="05"),
        "activation": _agent("activate_debit_card_8291", card_id=pending["stolen"]["card_id"],
                             last_4_digits=pending["stolen"]["last_4_digits"], **activation)
        + _agent("activate_debit_card_8292", card_id=pending["stolen"]["card_id"],
                 last_4_digits=pending["stolen"]["last_4_digits"], **{**activation, "pin": "1234"})
        + _agent("activate_debit_card_8292", card_id=pending["stolen"]["card_id"],
                 last_4_digits=pending["stolen"]["last_4_digits"], **activation)
        + _agent("activate_debit_card_8291", card_id=pending["new_account"]["card_id"],
                 last_4_digits=pending["new_account"]["last_4_digits"], **activation)
        + _agent("activate_debit_card_8293", card_id=pending["expired"]["card_id"],
                 last_4_digits=pending["expired"]["last_4_digits"], **activation),
        "debit_cards": _agent("close_debit_card_4721", card_id="dbc_kj93a7b2e1_blue", reason="fraud_suspected")
        + _agent("freeze_debit_card_3892", card_id="dbc_kj93a7b2e1_green")
        + _agent("unfreeze_debit_card_3893", card_id="dbc_kj93a7b2e1_green")
        + _agent("clear_debit_card_fraud_alert_4892", card_id="dbc_lj82d4f1a9_bluest", reason="velocity_clear")
        + _agent("reset_debit_card_pin_6284", card_id="dbc_lj82d4f1a9_bluest", last_4_digits="4821", new_pin="1234")
        + _agent("reset_debit_card_pin_6284", card_id="dbc_lj82d4f1a9_bluest", last_4_digits="4821", new_pin="2580")
        + _agent("change_debit_card_pin_6285", card_id="dbc_lj82d4f1a9_bluest", current_pin="1111", new_pin="2580")
        + _agent("get_debit_cards_by_account_id_7823", account_id="chk_kj93a7b2e1_1")
        + _agent("request_temporary_debit_card_limit_increase_8374", card_id="dbc_lj82d4f1a9_bluest", limit_type="atm",
                 new_limit=2000)
        + _agent("request_temporary_debit_card_limit_increase_8374", card_id="dbc_kj93a7b2e1_green", limit_type="atm",
                 new_limit=700),
        "customer_tools": _user("submit_cash_back_dispute_0589", user_id="01f21c9970", transaction_id="txn_8d1aa1219382")
        + _user("get_referral_link", user_id="76ad9cc60e", card_name="Gold Rewards Card")
        + _user("get_card_last_4_digits", credit_card_account_id="cc_76ad9cc60e_gold")
        + _user("deposit_check_3847", account_id="03", check_amount=250)
        + [{"side": "user", "name": "call_discoverable_user_tool",
            "arguments": {"discoverable_tool_name": "deposit_check_3847", "arguments": "{\"account_id\": \"03\"}"}}]
        + _plain("user", "apply_for_credit_card", card_type="Gold Rewards Card", customer_name="Sarah Bosch",
                 annual_income=100000, rho_bank_subscription=True)
        + _plain("user", "apply_for_credit_card", card_type="Tin Card", customer_name="Sarah Bosch", annual_income=1)
        + _plain("user", "submit_referral", user_id="76ad9cc60e", account_type="Gold Rewards Card")
        + _plain("user", "submit_transaction", user_id="76ad9cc60e", credit_card_type="Silver Rewards Card",
                 merchant_name="Delta", amount=412.5, category="Travel")
        + _plain("user", "request_human_agent_transfer") + _plain("user", "request_human_agent_transfer")
        + _plain("user", "list_discoverable_user_tools"),
        "agent_listed": _plain("assistant", "get_current_time")
        + _plain("assistant", "get_user_information_by_name", customer_name="Kenji Tanaka")
        + _plain("assistant", "get_user_information_by_name", customer_name='Ke"nji')
        + _plain("assistant", "get_user_information_by_email", email="kenji.tanaka@outlook.com")
        + _plain("assistant", "change_user_email", user_id="6680a37184", new_email="kt@example.com")
        + _plain("assistant", "get_referrals_by_user", user_id="76ad9cc60e")
        + _plain("assistant", "get_credit_card_accounts_by_user", user_id="76ad9cc60e")
        + _plain("assistant", "log_verification", name="Kenji Tanaka", user_id="6680a37184", address="a", email="e",
                 phone_number="p", date_of_birth="07/22/1985", time_verified="2025-11-14 03:40:00 EST")
        + _plain("assistant", "log_verification", name="Kenji Tanaka", user_id="6680a37184", address="a", email="e",
                 phone_number="p", date_of_birth="07/22/1985", time_verified="2025-11-14 03:40:00 EST")
        + _plain("assistant", "list_discoverable_agent_tools")
        + _plain("assistant", "unlock_discoverable_agent_tool", agent_tool_name="no_such_tool_0000")
        + _plain("assistant", "call_discoverable_agent_tool", agent_tool_name="freeze_debit_card_3892", arguments="{}")
        + _agent("freeze_debit_card_3892", card="x")
        + _plain("assistant", "give_discoverable_user_tool", discoverable_tool_name="deposit_check_3847",
                 arguments='{"amount": 1}'),
    }
    return [{"probe": name, "calls": calls} for name, calls in probes.items()]


def upstream_probes() -> list[dict[str, Any]]:
    """Upstream's answers to :func:`banking_probes` (fresh environment per probe) and the SHA-256 of each table the
    probe changed."""
    from tau2.domains.banking_knowledge.environment import get_db, get_environment

    pristine = get_db().model_dump()
    out = []
    for probe in banking_probes(pristine):
        env = get_environment(retrieval_variant="no_knowledge")
        results = []
        for call in probe["calls"]:
            toolkit = env.user_tools if call["side"] == "user" else env.tools
            try:
                results.append(str(getattr(toolkit, call["name"])(**call["arguments"])))
            except Exception as exc:  # noqa: BLE001 (recorded as the outcome)
                results.append(f"raised {type(exc).__name__}: {exc}")
        after = env.tools.db.model_dump()
        changed = {t: table_sha256(after[t]) for t in sorted(after) if after[t] != pristine.get(t)}
        out.append({**probe, "results": results, "changed_tables": changed})
    return out


def table_sha256(table: Any) -> str:
    """The SHA-256 of a database table in canonical JSON."""
    return hashlib.sha256(json.dumps(table, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


POLICY_VARIANTS = ["bm25_grep", "bm25", "grep_only", "no_knowledge", "full_kb"]


def upstream_policies() -> dict[str, Any]:
    """SHA-256 and length of the policy upstream builds: banking per retrieval configuration (and, for
    ``golden_retrieval``, for the first task), telecom-workflow's."""
    from tau2.data_model.tasks import Task
    from tau2.domains.banking_knowledge.environment import get_environment, get_tasks
    from tau2.registry import registry

    def digest(text: str) -> dict[str, Any]:
        return {"sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(), "chars": len(text)}

    task: Task = get_tasks()[0]
    out = {f"banking_knowledge:{v}": digest(get_environment(retrieval_variant=v).get_policy()) for v in POLICY_VARIANTS}
    out[f"banking_knowledge:golden_retrieval:{task.id}"] = digest(get_environment(retrieval_variant="golden_retrieval",
                                                                                  task=task).get_policy())
    out["telecom-workflow"] = digest(registry.get_env_constructor("telecom-workflow")().get_policy())
    return out


FULL_TASKS = {"retail": 30, "airline": 25, "telecom": 25, "mock": 10, "banking_knowledge": 60}
"""Tasks per domain (first ones of each domain's file) in the committed set; the slow test replays them all."""

TASK_STRIDE = {"banking_knowledge": 2}
"""Every n-th task of the domain's file is in the committed set (banking: spread over all 97 tasks, whose tools
differ from one part of the file to the next)."""

LIMIT_TASKS = 2
"""Tasks per domain that also get the ``too_many_errors`` and ``max_steps`` scripts."""

FAST_TASKS = {"retail": 3, "airline": 3, "telecom": 3, "mock": 4, "banking_knowledge": 4}
"""Tasks per domain (first ones of each domain's file, in order) marked ``fast`` for the default test run."""

COMPACT = ("banking_knowledge",)
"""Domains whose case files do not store the scripts (a banking script repeats its long JSON arguments in each of
~10 variants) and keep each distinct tool-result record once (``tool_results`` in the header; a case lists
indices into it): the test rebuilds each with :func:`cases_for` from the task (the data is checked against upstream's
blob ids), the upstream tool types recorded in the file and the case's ``limits``, and ``script_sha256`` proves it is
the script upstream played."""


def pool_results(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Move the cases' tool-result records into one table of distinct records (returned), leaving indices in place
    (the same results recur across a task's variants)."""
    table: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for case in cases:
        indices = []
        for record in case["expected"].get("tool_results") or []:
            key = json.dumps(record, sort_keys=True)
            if key not in seen:
                seen[key] = len(table)
                table.append(record)
            indices.append(seen[key])
        case["expected"]["tool_results"] = indices
    return table


def script_sha256(items: list[dict[str, Any]]) -> str:
    """The SHA-256 of a script in canonical JSON."""
    return hashlib.sha256(json.dumps(items, ensure_ascii=False, sort_keys=True).encode("utf-8")).hexdigest()


FAST_IDS = {"banking_knowledge": ("task_015", "task_021", "task_026")}
"""Further tasks marked ``fast``: banking tasks that hand over, unlock and call discoverable tools."""


def upstream_tasks_raw(src: Path, domain: str) -> list[dict]:
    """The tasks upstream's loader reads: banking_knowledge's ``tasks/task_*.json`` in sorted order (its
    ``get_tasks``; the combined tasks.json differs from them), every other domain's ``tasks.json``."""
    folder = src / "data" / "tau2" / "domains" / domain
    if domain == "banking_knowledge":
        return [json.loads(p.read_text(encoding="utf-8")) for p in sorted((folder / "tasks").glob("task_*.json"))]
    return json.loads((folder / "tasks.json").read_text(encoding="utf-8"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream-src", required=True, help="checkout of tau2-bench at the pinned commit (with its data/)")
    parser.add_argument("--domains", default="retail,airline,telecom,mock")
    parser.add_argument("--tasks-per-domain", type=int, default=None, help="the first N tasks of each domain (default: FULL_TASKS)")
    parser.add_argument("--metrics-only", action="store_true", help="only regenerate metrics.json")
    parser.add_argument("--retrieval-only", action="store_true", help="only regenerate retrieval_and_policies.json")
    parser.add_argument("--first-task", type=int, default=0, help="skip the tasks before this index (spot checks)")
    parser.add_argument("--out-dir", default=str(HERE), help="where to write the files (default: next to this script)")
    args = parser.parse_args()
    src = Path(args.upstream_src)
    os.environ.setdefault("TAU2_DATA_DIR", str(src / "data"))
    commit = subprocess.run(["git", "-C", str(src), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip() or UPSTREAM_COMMIT
    from loguru import logger

    logger.remove()
    stub_nl_judge()
    from tau2.data_model.tasks import Task
    from tau2.environment.toolkit import get_tool_types
    from tau2.registry import registry

    metrics = {"upstream": {"repo": UPSTREAM_REPO, "commit": commit, "function": "tau2.metrics.agent_metrics.compute_metrics"},
               **upstream_metrics()}
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "metrics.json").write_text(json.dumps(metrics, indent=1) + "\n", encoding="utf-8")
    if args.metrics_only:
        return 0
    (out_dir / "retrieval_and_policies.json").write_text(json.dumps(
        {"upstream": {"repo": UPSTREAM_REPO, "commit": commit,
                      "pipelines": "tau2.domains.banking_knowledge.retrieval create_bm25_retrieval_pipeline / "
                                   "create_grep_retrieval_pipeline (top_k 10)"},
         **upstream_retrieval(), "policies": upstream_policies(), "probes": upstream_probes(),
         "tool_texts": upstream_tool_texts()}, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    if args.retrieval_only:
        return 0
    for domain in args.domains.split(","):
        tasks_raw = upstream_tasks_raw(src, domain)
        tasks_raw = [t for t in tasks_raw if not (t.get("initial_state") or {}).get("message_history")]
        stride = TASK_STRIDE.get(domain, 1)
        tasks_raw = [t for i, t in enumerate(tasks_raw) if i % stride == 0 or str(t["id"]) in FAST_IDS.get(domain, ())]
        tasks_raw = tasks_raw[args.first_task:args.first_task + (args.tasks_per_domain or FULL_TASKS.get(domain, len(tasks_raw)))]
        env = registry.get_env_constructor(domain)(**env_kwargs_for(domain, Task.model_validate(tasks_raw[0])))
        tool_types = {k: getattr(v, "value", str(v)) for k, v in get_tool_types(env.tools).items()}
        if env.user_tools is not None:
            tool_types.update({k: getattr(v, "value", str(v)) for k, v in get_tool_types(env.user_tools).items()})
        cases = []
        for index, raw in enumerate(tasks_raw):
            task_obj = Task.model_validate(raw)
            for case in cases_for(raw, tool_types, limits=index < LIMIT_TASKS):
                expected = run_upstream(domain, task_obj, case["script"])
                entry = {"task_id": str(raw["id"]), "variant": case["variant"], "expected": expected,
                         "fast": index < FAST_TASKS.get(domain, 2) or str(raw["id"]) in FAST_IDS.get(domain, ())}
                if domain in COMPACT:
                    entry.update(limits=index < LIMIT_TASKS, script_sha256=script_sha256(case["script"]))
                else:
                    entry["script"] = case["script"]
                cases.append(entry)
            print(f"{domain}: task {raw['id']} done ({len(cases)} cases)", file=sys.stderr, flush=True)
        out = {"upstream": {"repo": UPSTREAM_REPO, "commit": commit, "nl_judge": "stub: every assertion met",
                            "max_steps": MAX_STEPS, "max_errors": MAX_ERRORS,
                            "generated_by": "tests/conformance/tau2/regenerate_tau2.py"},
               "domain": domain, "cases": cases}
        if domain in COMPACT:
            out["tool_types"] = tool_types
            out["tool_results"] = pool_results(cases)
        lines = [json.dumps(case, ensure_ascii=False, sort_keys=True) for case in out.pop("cases")]
        head = json.dumps(out, ensure_ascii=False, sort_keys=True)
        (out_dir / f"cases_{domain}.json").write_text(head[:-1] + ', "cases": [\n' + ",\n".join(lines) + "\n]}\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
