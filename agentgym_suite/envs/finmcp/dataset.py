"""Load FinMCP-Bench samples (DianJin-TIR format) and derive tool schemas from the recordings.

A data file is a JSON list of samples; each has ``id``, ``task`` (``single step`` /
``multi step`` / ``multi turn``), ``question``, ``answer``, ``tool_list`` and ``messages``
(OpenAI chat: user turns, assistant turns with ``tool_calls`` whose ``arguments`` are JSON
strings, tool turns with ``tool_call_id`` and the recorded ``content``). The samples carry
no tool schemas, so each tool's parameters are inferred from the arguments recorded for it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentgym_suite.core.data import benchmark_dir
from agentgym_suite.core.errors import DataNotFoundError

_JSON_TYPES = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"), (list, "array"), (dict, "object"))


@dataclass(frozen=True)
class RecordedCall:
    """One recorded tool call and the output the server returned."""

    name: str
    arguments: dict[str, Any]
    output: str


@dataclass
class Turn:
    """One user turn: the user message, then the recorded assistant steps."""

    user: str
    steps: list[list[RecordedCall]] = field(default_factory=list)
    final_answer: str = ""


@dataclass
class Sample:
    """One FinMCP sample, split into user turns."""

    id: str
    task: str
    question: str
    answer: str
    turns: list[Turn]
    raw: dict[str, Any]

    @property
    def gold_names(self) -> list[str]:
        """Tool names of the recorded calls, in order (all turns)."""
        return [c.name for t in self.turns for step in t.steps for c in step]

    @property
    def recorded_calls(self) -> list[RecordedCall]:
        """Every recorded call of the sample, in order."""
        return [c for t in self.turns for step in t.steps for c in step]


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw) if isinstance(raw, str) and raw.strip() else {}
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def parse_sample(raw: dict[str, Any]) -> Sample:
    """Split a raw sample's messages into user turns with their recorded calls."""
    outputs = {m.get("tool_call_id"): m.get("content", "") for m in raw.get("messages", []) if m.get("role") == "tool"}
    turns: list[Turn] = []
    for message in raw.get("messages", []):
        role = message.get("role")
        if role == "user":
            turns.append(Turn(user=str(message.get("content", ""))))
        elif role == "assistant" and turns:
            calls = [
                RecordedCall(
                    (c.get("function") or {}).get("name", ""),
                    _arguments((c.get("function") or {}).get("arguments")),
                    str(outputs.get(c.get("id"), "")),
                )
                for c in message.get("tool_calls") or []
            ]
            if calls:
                turns[-1].steps.append(calls)
            elif message.get("content"):
                turns[-1].final_answer = str(message["content"])
    if not turns:
        turns = [Turn(user=str(raw.get("question", "")))]
    return Sample(str(raw["id"]), str(raw.get("task", "")), str(raw.get("question", "")), str(raw.get("answer", "")), turns, raw)


def _json_type(value: Any) -> str:
    for py, name in _JSON_TYPES:
        if isinstance(value, py):
            return name
    return "string"


def infer_tools(samples: list[Sample]) -> list[dict[str, Any]]:
    """OpenAI tool schemas inferred from every recorded call (parameter types from the values)."""
    params: dict[str, dict[str, set[str]]] = {}
    for sample in samples:
        for call in sample.recorded_calls:
            props = params.setdefault(call.name, {})
            for key, value in call.arguments.items():
                props.setdefault(key, set()).add(_json_type(value))
    tools = []
    for name in sorted(params):
        properties = {}
        for key, types in sorted(params[name].items()):
            if types == {"integer", "number"}:
                types = {"number"}
            properties[key] = {"type": sorted(types)[0]} if len(types) == 1 else {"type": sorted(types)}
        tools.append({
            "type": "function",
            "function": {
                "name": name,
                "description": f"Financial data service '{name}' (recorded outputs of the Qieman MCP server).",
                "parameters": {"type": "object", "properties": properties},
            },
        })
    return tools


def sample_files(path: str | Path | None) -> list[Path]:
    """JSON sample files at ``path`` (a file or folder), default ``$AGENTGYM_DATA/finmcp/``."""
    hint = (
        "FinMCP-Bench data is not redistributed: put the official JSON files (e.g. benchmark_final.json, "
        "demo_infer.json) in $AGENTGYM_DATA/finmcp/, or write the committed fixtures with "
        "`python -m agentgym_suite.envs.finmcp.fixtures DIR` and pass data_path=DIR."
    )
    if path is None:
        try:
            root = benchmark_dir("finmcp")
        except DataNotFoundError as exc:
            raise DataNotFoundError(f"{exc} {hint}") from None
    else:
        root = Path(path)
    files = [root] if root.is_file() else sorted(root.glob("*.json")) if root.is_dir() else []
    if not files:
        raise DataNotFoundError(f"No FinMCP sample files (*.json) at {root}. {hint}")
    return files


def load_samples(path: str | Path | None = None, task: str | None = None) -> dict[str, Sample]:
    """Samples by id from every file at ``path``; ``task`` keeps one kind (``single step``...)."""
    samples: dict[str, Sample] = {}
    for file in sample_files(path):
        try:
            items = json.loads(file.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise DataNotFoundError(f"{file} is not valid JSON ({exc.msg}); expected a list of FinMCP samples.") from None
        if not isinstance(items, list):
            continue
        for raw in items:
            if isinstance(raw, dict) and "id" in raw and "messages" in raw:
                sample = parse_sample(raw)
                if task is None or sample.task == task:
                    samples[sample.id] = sample
    if not samples:
        raise DataNotFoundError(f"No FinMCP samples found in {[str(f) for f in sample_files(path)]} (task={task!r}).")
    return samples
