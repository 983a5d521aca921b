"""A scripted world-model backend: deterministic simulator output from a Python function.

Useful for unit tests and demos of the rehearsal env without a model: ``ScriptedBackend(fn)``
calls ``fn(name, arguments)`` for each simulator prompt it receives and returns the text
``fn`` gives (wrap a result with
:func:`~agentgym_suite.methods.envace.contract.format_execution_result` to meet the contract).
Its samples carry no token ids.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Sequence

from agentgym_suite.llm.base import Sample, SamplingParams

_NAME = re.compile(r"^Name: (.*)$", re.MULTILINE)
_ARGS = re.compile(r"^Arguments: (.*)$", re.MULTILINE)


def call_in_prompt(prompt: Any) -> tuple[str, dict[str, Any]]:
    """The (tool name, arguments) a simulator prompt asks about (from its last section)."""
    text = prompt[-1]["content"] if isinstance(prompt, list) else str(prompt)
    tail = text[text.rfind("## Tool call to simulate"):]
    name = _NAME.search(tail)
    args = _ARGS.search(tail)
    if name is None or args is None:
        raise ValueError("not a simulator prompt: it has no 'Tool call to simulate' section")
    return name.group(1).strip(), json.loads(args.group(1))


def stand_in_result(messages: Sequence[Any]) -> str:
    """A stand-in world model's answer to a simulator request's chat messages: a success result for the
    call it asks about, in the output contract (the rehearsal env's ``fixture_profile.role_replies``, so
    a test that serves every role with a stand-in plays a rehearsed episode to its end)."""
    from agentgym_suite.methods.envace.contract import format_execution_result

    name, arguments = call_in_prompt(list(messages))
    return format_execution_result({"status": "ok", "tool": name, "arguments": arguments})


class ScriptedBackend:
    """A backend answering simulator prompts with ``fn(name, arguments) -> text``.

    Attributes:
        calls: every (name, arguments) seen, in order; ``batches`` the size of each generate call.
    """

    supports_token_prompts = False

    def __init__(self, fn: Callable[[str, dict[str, Any]], str], name: str = "scripted") -> None:
        self.fn = fn
        self.name = name
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.batches: list[int] = []

    def generate(self, prompts: Sequence[Any], params: SamplingParams, tools: Any = None) -> list[list[Sample]]:
        """One sample per prompt (``params.n`` copies), text from ``fn``."""
        self.batches.append(len(prompts))
        rows = []
        for prompt in prompts:
            name, arguments = call_in_prompt(prompt)
            self.calls.append((name, arguments))
            text = self.fn(name, arguments)
            rows.append([Sample(text=text, has_token_ids=False) for _ in range(params.n)])
        return rows
