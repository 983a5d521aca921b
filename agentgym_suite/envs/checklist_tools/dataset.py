"""Reading tool-use training sets in EnvACE's published checklist format.

One item (a JSON list of items, or JSON Lines) is, as the released ``ChecklistDataset`` and
``MCPChecklistTool`` read it::

    {"data_source": "checklist",
     "messages": [system, first user message],              # the prompt (data.prompt_key=messages)
     "extra_info": {
         "index": 0, "original_index": "17",
         "tools": "[{\"type\": \"function\", \"function\": {...}}, ...]",   # JSON text or a list
         "messages": [... the whole recorded conversation: user turns, assistant calls, tool results ...],
         "interaction_kwargs": {"checklist_list": [[[standard, ...], ...], ...]}}}

``checklist_list`` is checklists x user turns x standards (see
:mod:`agentgym_suite.envs.shared.checklists`). The recorded (name, arguments, result)
triples are the assistant calls of ``extra_info.messages`` paired with the tool messages that
follow them (``MCPChecklistTool._get_called_tools_and_response_static``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentgym_suite.core.data import benchmark_dir
from agentgym_suite.envs.shared.checklists import validate_checklists

BENCHMARK = "envace_checklist"


@dataclass
class ChecklistSample:
    """One training task."""

    id: str
    tools: list[dict[str, Any]]
    system_prompt: str
    user_turns: list[str]
    checklists: list[Any]
    recorded: list[dict[str, Any]] = field(default_factory=list)
    """(name, arguments, result) of the recorded conversation's calls."""
    conversation: list[dict[str, Any]] = field(default_factory=list)
    """The recorded conversation (``extra_info.messages``)."""


def _tools(value: Any, where: str) -> list[dict[str, Any]]:
    tools = json.loads(value) if isinstance(value, str) else value
    if not isinstance(tools, list) or not all(isinstance(t, dict) and isinstance(t.get("function"), dict) for t in tools):
        raise ValueError(f"{where}: extra_info.tools must be a list (or JSON text of a list) of OpenAI function schemas.")
    return tools


def _recorded(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i, message in enumerate(messages):
        calls = message.get("tool_calls") or [] if message.get("role") == "assistant" else []
        answers = [m for m in messages[i + 1:i + 1 + len(calls)] if m.get("role") in ("tool", "observation")]
        for call, answer in zip(calls, answers):
            fn = call.get("function", {})
            arguments = fn.get("arguments")
            try:
                arguments = json.loads(arguments) if isinstance(arguments, str) else arguments
                result = json.loads(answer["content"]) if isinstance(answer.get("content"), str) else answer.get("content")
            except (json.JSONDecodeError, ValueError):
                result = answer.get("content")
            out.append({"name": fn.get("name"), "arguments": arguments if isinstance(arguments, dict) else {}, "result": result})
    return out


def parse_item(item: Any, where: str) -> ChecklistSample:
    """One item of the published format as a :class:`ChecklistSample`; a clear ValueError otherwise."""
    if not isinstance(item, dict) or not isinstance(item.get("extra_info"), dict):
        raise ValueError(f"{where}: an item is an object with 'extra_info' (tools, messages, interaction_kwargs).")
    extra = item["extra_info"]
    conversation = extra.get("messages")
    if not isinstance(conversation, list) or not conversation:
        raise ValueError(f"{where}: extra_info.messages must be the recorded conversation (a non-empty list of messages).")
    prompt = item.get("messages") if isinstance(item.get("messages"), list) else item.get("prompt")
    system = next((str(m.get("content") or "") for m in (prompt or conversation) if m.get("role") == "system"), "")
    users = [str(m.get("content") or "") for m in conversation if m.get("role") == "user"]
    if not users:
        raise ValueError(f"{where}: extra_info.messages has no user message.")
    checklists = validate_checklists((extra.get("interaction_kwargs") or {}).get("checklist_list"))
    sample_id = str(extra.get("original_index", extra.get("index", where)))
    return ChecklistSample(sample_id, _tools(extra.get("tools", []), where), system, users, checklists,
                           _recorded(conversation), conversation)


def load_checklist_samples(path: str | Path | None = None) -> dict[str, ChecklistSample]:
    """Samples by id from a file or folder (``*.json`` lists, ``*.jsonl`` lines); default ``$AGENTGYM_DATA/envace_checklist/``."""
    root = Path(path) if path is not None else benchmark_dir(BENCHMARK)
    files = sorted(root.glob("*.json*")) if root.is_dir() else [root]
    if not files or not all(f.exists() for f in files):
        raise FileNotFoundError(f"no checklist data at {root}; put JSON or JSON Lines files in the published checklist format there.")
    samples: dict[str, ChecklistSample] = {}
    for file in files:
        text = file.read_text(encoding="utf-8")
        items = json.loads(text) if file.suffix == ".json" else [json.loads(line) for line in text.splitlines() if line.strip()]
        for k, item in enumerate(items if isinstance(items, list) else [items]):
            sample = parse_item(item, f"{file.name} item {k}")
            if sample.id in samples:
                sample.id = f"{file.stem}/{sample.id}"
            samples[sample.id] = sample
    return samples
