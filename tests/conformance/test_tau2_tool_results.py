"""τ²-bench tool-result strings for direct tool calls: ``Tau2Env`` against upstream's ``get_response``.

``tau2/tool_results.json`` holds what upstream's ``Environment.get_response`` returned (content and
error flag) for fixed agent-side calls, each probe in a fresh environment (``regenerate_tool_results.py``
wrote it at the commit it names): records with datetimes (written with a space, as ``str`` writes them),
numbers inside messages as upstream's tools compute them, ``calculate`` results, and refusals (an
unknown tool, an unknown record, a missing or unexpected argument in Python's words), and arguments of
the wrong JSON type, which upstream hands to the tool unchecked (the tool answers in its own words,
raises, or succeeds). The same calls go through ``Tau2Env`` on a task that changes nothing before the
conversation starts; each call's text, error flag and whether it changed the agent's database must
equal upstream's. Some probes are the customer's own calls (telecom's phone, mock's notifications), run
as the env runs an LLM customer's calls.
"""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from agentgym_suite.envs.tau2 import Tau2Env

RECORD = json.loads((Path(__file__).parent / "tau2" / "tool_results.json").read_text(encoding="utf-8"))


def _untouched_task(env: Tau2Env) -> str:
    """A task whose start changes nothing on the agent's side (upstream's probes ran in a fresh environment)."""
    for task_id in env.task_ids():
        state = env.data.tasks[task_id].get("initial_state") or {}
        actions = state.get("initialization_actions") or []
        if not state.get("initialization_data") and all(a.get("env_type") == "user" for a in actions):
            return task_id
    raise AssertionError("every task of the domain sets an initial state")


def _same_text(ours: str, upstreams: str) -> bool:
    """Equal, but for the pydantic release named in its error-doc links (``errors.pydantic.dev/2.14/v/...``): the
    recording's pydantic and the one installed here may differ in minor version; the message itself may not."""
    return _PYDANTIC_DOCS.sub("errors.pydantic.dev/X/", ours) == _PYDANTIC_DOCS.sub("errors.pydantic.dev/X/", upstreams)


_PYDANTIC_DOCS = re.compile(r"errors\.pydantic\.dev/\d+\.\d+/")


def _fresh_customer_side(env: Tau2Env) -> None:
    """Give the episode the customer's side as a fresh environment has it (upstream's probes ran without a task, so
    no task had set up the phone)."""
    assert env.world is not None and env.world.user is not None
    env.world.user = type(env.world.user)(env.data.fresh_user_db())
    env.world.agent.attach(env.world.user)


@pytest.mark.parametrize("probe", RECORD["probes"], ids=[f"{p['domain']}-{i}" for i, p in enumerate(RECORD["probes"])])
def test_tool_results_equal_upstreams(probe: dict[str, Any]) -> None:
    try:
        env = Tau2Env(domain=probe["domain"])
    except Exception as exc:  # noqa: BLE001 - the domain's data is not on this machine
        pytest.skip(f"tau2 {probe['domain']} data not available: {exc}")
    env.reset(options={"task_id": _untouched_task(env)})
    if probe.get("requestor") == "user":
        _fresh_customer_side(env)
    assert env.world is not None
    for call, expected in zip(probe["calls"], probe["results"]):
        before = env.world.state_hash()
        if probe.get("requestor") == "user":  # the customer's call, as the LLM user's calls are run
            with contextlib.suppress(ValueError):  # a refusal also answers the customer with an error
                env._run_user_tool(call["name"], call["arguments"])
            tool = env.tool_messages[-1]
        else:
            _, _, terminated, _, info = env.step("<tool_call>\n" + json.dumps(call) + "\n</tool_call>")
            tool = info["messages"][-1]
            assert tool["role"] == "tool" and not terminated, (call, tool)
        assert _same_text(tool["content"], expected["content"]), (call, tool["content"], expected["content"])
        assert env.tool_messages[-1]["error"] == expected["error"], call
        if "db_changed" in expected:
            assert (env.world.state_hash() != before) == expected["db_changed"], call
