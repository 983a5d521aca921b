"""Regenerate ``user_view.json``: the exact messages τ²-bench's LLM user simulator sends to its model.

Not run by pytest. Each conversation is played through upstream's own ``UserSimulator`` (its
``get_init_state``, ``generate_next_message``, ``UserState.flip_roles``) with upstream's
``tau2.utils.llm_utils.generate`` replaced by a recorder: it stores what the real ``generate``
would send to the model (``to_litellm_messages`` of the messages, the tools' ``openai_schema``)
and answers with the conversation's next scripted customer message. No model is called. The
customer's tool calls are answered by upstream's ``Environment.get_response`` (requestor
``user``), one ``ToolMessage`` or a ``MultiToolMessage`` as its orchestrator wraps them; the
environment is initialised from the task's ``initial_state`` and tools are synced after each
step, as its orchestrator does. The tool-call ids in the scripts are the ones the suite gives the
customer's calls (``user_call_<n>``), since upstream takes them from the model's answer. The tools, the same
in every call of a conversation, are stored once per conversation.

``tests/conformance/test_tau2_user_view.py`` plays the same scripts through ``Tau2Env`` with an
LLM customer whose model is the same script, and demands the same messages.

Set up the scratch environment as ``README.md`` in this folder says, then::

    /work/scratch/tau2/venv/bin/python tests/conformance/tau2/regenerate_user_view.py \\
        --upstream-src /work/scratch/tau2/src
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
UPSTREAM_REPO = "github.com/sierra-research/tau2-bench"
GREETING = "Hi! How can I help you today?"


def say(text: str) -> dict[str, Any]:
    """A scripted customer message without tool calls."""
    return {"content": text, "tool_calls": []}


def use(*calls: tuple[str, dict[str, Any]], content: str | None = None) -> dict[str, Any]:
    """A scripted customer message with tool calls (ids filled in by :func:`conversations`)."""
    return {"content": content, "tool_calls": [{"name": name, "arguments": arguments} for name, arguments in calls]}


def conversations() -> list[dict[str, Any]]:
    """The scripts (inputs only): per agent message, the customer's answers until one has no tool call."""
    data_task = "[mobile_data_issue]data_mode_off|data_usage_exceeded[PERSONA:None]"
    scripts = [
        {"name": "telecom_tools_single_multi_and_errors", "domain": "telecom", "task_id": data_task, "turns": [
            {"agent": GREETING, "user": [say("My mobile data is not working at all.")]},
            {"agent": "Could you check your status bar and tell me what you see?",
             "user": [use(("check_status_bar", {})),
                      say("It shows 5G signal but no data icon.")]},
            {"agent": "Please check your network status and turn mobile data on.",
             "user": [use(("check_network_status", {}), ("toggle_data", {}), content="Let me look at that."),
                      use(("launch_rocket", {"speed": "fast"})),
                      use(("check_app_status", {"app_name": 5})),
                      say("Data is on now, but it is slow.")]},
            {"agent": "Thanks. Is data roaming enabled? Please run a speed test.",
             "user": [use(("toggle_roaming", {}), ("run_speed_test", {})),
                      say("Speed test says it is very slow. ###STOP###")]},
        ]},
        {"name": "telecom_apn_then_more_calls", "domain": "telecom", "task_id": data_task, "turns": [
            {"agent": GREETING, "user": [say("Hi, my phone's internet is broken.")]},
            {"agent": "Please reset your APN settings and check them.",
             "user": [use(("set_apn_settings", {"apn_settings": "internet"})),
                      use(("check_apn_settings", {})),
                      use(("reset_apn_settings", {})),
                      use(("check_apn_settings", {}), ("check_status_bar", {})),
                      say("I tried; the APN looks odd. Café wi-fi works — ça va.")]},
            {"agent": "Please set the APN name to 'internet' properly.",
             "user": [use(("set_apn_settings", {"apn_settings": {"name": "internet"}})),
                      use(("check_apn_settings", {})),
                      say("Done, I think.")]},
        ]},
        {"name": "telecom_unicode_arguments", "domain": "telecom", "task_id": data_task, "turns": [
            {"agent": GREETING, "user": [use(("check_status_bar", {}), content=None),
                                         say("Hello — my data is off, I think.")]},
            {"agent": "Please grant the messaging app the storage permission.",
             "user": [use(("grant_app_permission", {"app_name": "messaging", "permission": "stöcould"})),
                      use(("grant_app_permission", {"app_name": "messaging", "permission": "storage"})),
                      say("OK, it's granted.")]},
        ]},
        {"name": "airline_no_user_tools", "domain": "airline", "task_id": "0", "turns": [
            {"agent": GREETING, "user": [say("I want to cancel my reservation.")]},
            {"agent": "Sure, what is your user id?", "user": [say("It is mia_li_3668.")]},
        ]},
        {"name": "mock_history", "domain": "mock", "task_id": "update_task_with_message_history", "turns": [
            {"agent": None, "user": [say("Please also mark it as completed.")]},
            {"agent": "Which task do you mean?", "user": [say("The project review task. ###STOP###")]},
        ]},
    ]
    for script in scripts:
        number = 0
        for turn in script["turns"]:
            for reply in turn["user"]:
                for call in reply["tool_calls"]:
                    call["id"] = f"user_call_{number}"
                    number += 1
    return scripts


def run(src: Path) -> list[dict[str, Any]]:
    os.environ.setdefault("TAU2_DATA_DIR", str(src / "data"))
    from loguru import logger

    logger.remove()
    import tau2.user.user_simulator as user_module
    from tau2.data_model.message import AssistantMessage, MultiToolMessage, ToolCall
    from tau2.orchestrator.orchestrator import DEFAULT_FIRST_AGENT_MESSAGE
    from tau2.registry import registry
    from tau2.user.user_simulator import UserSimulator
    from tau2.user.user_simulator_base import is_valid_user_history_message
    from tau2.utils.llm_utils import to_litellm_messages

    assert DEFAULT_FIRST_AGENT_MESSAGE.content == GREETING
    out = []
    for script in conversations():
        env = registry.get_env_constructor(script["domain"])()
        tasks = {t.id: t for t in registry.get_tasks_loader(script["domain"])()}
        task = tasks[script["task_id"]]
        initial = task.initial_state
        history = list(initial.message_history or []) if initial is not None else []
        env.set_state(initialization_data=initial.initialization_data if initial else None,
                      initialization_actions=initial.initialization_actions if initial else None,
                      message_history=history)
        try:  # as tau2.runner.build.build_user does
            user_tools = env.get_user_tools(include=task.user_tools) or None
        except Exception:
            user_tools = None
        user = UserSimulator(llm="scripted", instructions=str(task.user_scenario), tools=user_tools)
        answers = [reply for turn in script["turns"] for reply in turn["user"]]
        calls: list[dict[str, Any]] = []

        def recorder(model: str, messages: list, tools: list | None = None, *, calls: list = calls,
                     answers: list = answers, **kwargs: Any) -> AssistantMessage:
            calls.append({"messages": to_litellm_messages(messages),
                          "tools": [tool.openai_schema for tool in tools] if tools else None})
            reply = answers[len(calls) - 1]
            tool_calls = [ToolCall(id=c["id"], name=c["name"], arguments=c["arguments"]) for c in reply["tool_calls"]]
            return AssistantMessage(role="assistant", content=reply["content"], tool_calls=tool_calls or None)

        user_module.generate = recorder
        if history:  # the orchestrator's start from a history ending with an agent message
            state = user.get_init_state(message_history=[m for m in history[:-1] if is_valid_user_history_message(m)])
        else:
            state = user.get_init_state()
        for turn in script["turns"]:
            if turn["agent"] is None:
                message: Any = history[-1]
            elif turn["agent"] == GREETING and not history:
                message = DEFAULT_FIRST_AGENT_MESSAGE.model_copy(deep=True)
            else:
                message = AssistantMessage(role="assistant", content=turn["agent"])
            while True:
                user_message, state = user.generate_next_message(message, state)
                env.sync_tools()
                if not user_message.is_tool_call():
                    break
                results = [env.get_response(call) for call in user_message.tool_calls]
                env.sync_tools()
                message = results[0] if len(results) == 1 else MultiToolMessage(role="tool", tool_messages=results)
        assert len(calls) == len(answers), f"{script['name']}: {len(calls)} model calls for {len(answers)} answers"
        tools = calls[0]["tools"]
        assert all(call["tools"] == tools for call in calls), "the customer's tools changed within a conversation"
        out.append({**script, "tools": tools, "model_calls": [{"messages": call["messages"]} for call in calls]})
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream-src", required=True, help="checkout of tau2-bench at the pinned commit (with data/)")
    args = parser.parse_args()
    src = Path(args.upstream_src)
    commit = subprocess.run(["git", "-C", str(src), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    payload = {"upstream": {"repo": UPSTREAM_REPO, "commit": commit or "a2c024725189473d2d7cea3a5cfdbcc67478e41f",
                            "function": "tau2.user.user_simulator.UserSimulator.generate_next_message -> "
                                        "tau2.utils.llm_utils.generate (to_litellm_messages, Tool.openai_schema)"},
               "conversations": run(src)}
    (HERE / "user_view.json").write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
