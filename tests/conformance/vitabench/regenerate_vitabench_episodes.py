"""Regenerate ``episodes.json``: upstream's orchestrator on scripted episodes (not run by pytest).

Runs meituan-longcat/vitabench's ``Orchestrator`` (at ``UPSTREAM_COMMIT``) with a scripted agent
and a scripted user on fixed scenarios of one delivery and one in-store task, under several step
limits, and records the trajectory (roles, texts, tool results), the termination reason and the
step count, plus the agent system prompt upstream's ``LLMAgent`` builds for a few tasks. Run it
in upstream's virtualenv from its checkout::

    cd /work/scratch/vita && VITA_MODEL_CONFIG_PATH=/tmp/models.yaml PYTHONPATH=src \\
      venv/bin/python /path/to/tests/conformance/vitabench/regenerate_vitabench_episodes.py --data /work/shared/data/vitabench

A scripted agent message is text or a list of ``[tool, arguments]``; an argument ``"$LAST_ID"``
stands for the id in the latest tool result (``order_id:<id>`` or ``book_id=<id>``), which both
sides resolve the same way.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
UPSTREAM = "meituan-longcat/vitabench"
UPSTREAM_COMMIT = "96f3b8529d8ea38d330de2405af7e32a1454f6cd"
LAST_ID = re.compile(r"(?:order_id:|book_id=|reservation_id=)(\w+)")

DELIVERY_TASK, INSTORE_TASK = "10711001", "10826001"
_create = ["create_delivery_order", {"user_id": "U000001", "store_id": "S85277471199200385_S98778",
                                     "product_ids": ["S26110520013660896_P88296"], "product_cnts": [1],
                                     "address": "Yunnan University Affiliated Hospital, 160 meters southeast of the intersection of "
                                                "Xinmin Lane and Pingzheng Street, Wuhua District, Kunming, Yunnan Province",
                                     "dispatch_time": "2025-06-21 11:30:00"}]
DELIVERY_AGENT: list[Any] = [
    "May I have your user id?",
    [_create],
    [["pay_delivery_order", {"order_id": "$LAST_ID"}], ["get_delivery_order_status", {"order_id": "nope"}]],
    "Your order is placed and paid. Anything else?",
    "Goodbye.",
]
DELIVERY_USER = ["I want mild rice noodles delivered to my hospital.", "My id is U000001.", "No, thanks. ###STOP###"]
SCENARIOS: list[dict[str, Any]] = [
    {"name": "delivery_user_stops", "domain": "delivery", "task": DELIVERY_TASK, "max_steps": 300, "agent": DELIVERY_AGENT, "user": DELIVERY_USER},
    *({"name": f"delivery_limit_{n}", "domain": "delivery", "task": DELIVERY_TASK, "max_steps": n, "agent": DELIVERY_AGENT, "user": DELIVERY_USER}
      for n in (3, 4, 5, 6, 7, 8)),
    {"name": "delivery_agent_stops", "domain": "delivery", "task": DELIVERY_TASK, "max_steps": 300,
     "agent": [[_create], "Done. ###STOP###"], "user": ["Rice noodles please, I am U000001."]},
    {"name": "instore_calls_then_user_stops", "domain": "instore", "task": INSTORE_TASK, "max_steps": 300,
     "agent": [[["get_instore_orders", {"user_id": "$USER"}], ["no_such_tool", {}]], "Anything else?"],
     "user": ["Show my orders.", "No. ###STOP###"]},
]
PROMPT_TASKS = {"delivery": ["10711001", "10716001"], "instore": ["10826001"]}


def resolve(arguments: dict[str, Any], last_tool_text: str, user_id: str) -> dict[str, Any]:
    """Arguments with ``$LAST_ID`` and ``$USER`` filled in."""
    found = LAST_ID.findall(last_tool_text)
    fill = {"$LAST_ID": found[0] if found else "none", "$USER": user_id}
    return {k: fill.get(v, v) if isinstance(v, str) else v for k, v in arguments.items()}


def main() -> None:
    from vita.agent.llm_agent import LLMAgent
    from vita.data_model.message import AssistantMessage, MultiToolMessage, ToolCall, UserMessage
    from vita.data_model.tasks import Location, ProductBaseModel, StoreBaseModel, Task
    from vita.orchestrator.orchestrator import Orchestrator
    from vita.registry import registry

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, required=True)
    args = parser.parse_args()
    tasks = {d: {str(t["id"]): t for t in json.loads((args.data / "domains" / d / "tasks_en.json").read_text(encoding="utf-8"))}
             for d in ("delivery", "instore")}

    class ScriptedAgent:
        STOP_TOKEN = "###STOP###"

        def __init__(self, script: list[Any], user_id: str) -> None:
            self.script, self.user_id, self.last_tool = list(script), user_id, ""

        def get_init_state(self, message_history: Any = None) -> dict[str, Any]:
            return {}

        def set_seed(self, seed: int) -> None:
            pass

        def is_stop(self, message: Any) -> bool:
            return message.content is not None and self.STOP_TOKEN in message.content

        def generate_next_message(self, message: Any, state: Any) -> tuple[Any, Any]:
            if isinstance(message, MultiToolMessage):
                self.last_tool = "\n".join(m.content or "" for m in message.tool_messages)
            elif getattr(message, "role", "") == "tool":
                self.last_tool = message.content or ""
            step = self.script.pop(0)
            if isinstance(step, str):
                return AssistantMessage(role="assistant", content=step), state
            calls = [ToolCall(id=f"call_{i}", name=n, arguments=resolve(a, self.last_tool, self.user_id)) for i, (n, a) in enumerate(step)]
            return AssistantMessage(role="assistant", content=None, tool_calls=calls), state

    class ScriptedUser:
        def __init__(self, script: list[str]) -> None:
            self.script = list(script)

        def get_init_state(self, message_history: Any = None) -> dict[str, Any]:
            return {}

        def set_seed(self, seed: int) -> None:
            pass

        def generate_next_message(self, message: Any, state: Any) -> tuple[Any, Any]:
            return UserMessage(role="user", content=self.script.pop(0)), state

    episodes = []
    for scenario in SCENARIOS:
        for base in (StoreBaseModel, ProductBaseModel, Location):
            base.clear_thread_data()
        raw = tasks[scenario["domain"]][scenario["task"]]
        task = Task.model_validate(raw)
        env = registry.get_env_constructor(scenario["domain"])(json.loads(json.dumps(raw["environment"])), "english")
        orchestrator = Orchestrator(domain=scenario["domain"], agent=ScriptedAgent(scenario["agent"], raw["environment"]["user_id"]),
                                    user=ScriptedUser(scenario["user"]), environment=env, task=task,
                                    max_steps=scenario["max_steps"], max_errors=10, language="english")
        orchestrator.initialize()
        while not orchestrator.done:
            orchestrator.step()
            if orchestrator.step_count >= orchestrator.max_steps:
                orchestrator.done = True
                orchestrator.termination_reason = "max_steps"
        trajectory = []
        for m in orchestrator.trajectory:
            item: dict[str, Any] = {"role": m.role, "content": m.content}
            if getattr(m, "tool_calls", None):
                item["tool_calls"] = [c.name for c in m.tool_calls]
            trajectory.append(item)
        reason = orchestrator.termination_reason
        episodes.append({**scenario, "termination": getattr(reason, "value", reason), "steps": orchestrator.step_count,
                         "trajectory": trajectory})
    prompts = {}
    for domain, ids in PROMPT_TASKS.items():
        for task_id in ids:
            env = registry.get_env_constructor(domain)(json.loads(json.dumps(tasks[domain][task_id]["environment"])), "english")
            agent = LLMAgent(tools=[], domain_policy=env.get_policy(), time=env.tools.db.time, language="english")
            prompts[f"{domain}/{task_id}"] = agent.system_prompt
    payload = {"upstream": {"repo": UPSTREAM, "commit": UPSTREAM_COMMIT}, "episodes": episodes, "system_prompts": prompts}
    (HERE / "episodes.json").write_text(json.dumps(payload, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(len(episodes), "episodes")


if __name__ == "__main__":
    main()
