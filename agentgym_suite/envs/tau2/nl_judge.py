"""The NL-assertion judge: a chat model grading each natural-language assertion of a tau2 task.

Follows τ²-bench's NL-assertions evaluator in substance: the judge gets the conversation as
``role: content`` lines and the list of expected outcomes, and answers with a JSON object
``{"results": [{"expectedOutcome": ..., "reasoning": ..., "metExpectation": true|false}, ...]}``,
one entry per outcome in order; the basis scores 1 only when every outcome is met. A reply
that cannot be read, or that grades another number of outcomes, counts every outcome as not
met (τ²-bench would stop with an error instead).
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable

from agentgym_suite.envs.shared.chat_models import ChatFn

JUDGE_INSTRUCTIONS = (
    "You grade a customer-service conversation between an agent and a customer against a list of expected "
    "outcomes. Grade each expected outcome on its own: does the agent's behaviour in the conversation satisfy it?\n"
    "Answer with one JSON object and nothing else:\n"
    '{"results": [{"expectedOutcome": "<the outcome, repeated>", "reasoning": "<short reason>", '
    '"metExpectation": true or false}, ...]}\n'
    "Give exactly one result per expected outcome, in the order they are listed."
)


def transcript(messages: list[dict[str, Any]]) -> str:
    """The conversation as ``role: content`` lines (system prompt left out)."""
    return "\n".join(f"{m.get('role')}: {m.get('content') or ''}" for m in messages if m.get("role") != "system")


def parse_verdicts(reply: str, n: int) -> list[bool] | None:
    """One verdict per outcome from a judge reply, or None when the reply cannot be read as ``n`` results."""
    match = re.search(r"\{.*\}", str(reply), re.DOTALL)
    if match is None:
        return None
    try:
        results = json.loads(match.group(0)).get("results")
    except (ValueError, AttributeError, RecursionError):  # RecursionError: a reply nested too deep to read
        return None
    if not isinstance(results, list) or len(results) != n:
        return None
    verdicts = []
    for result in results:
        met = result.get("metExpectation") if isinstance(result, dict) else None
        if not isinstance(met, bool):
            return None
        verdicts.append(met)
    return verdicts


class ModelNLJudge:
    """An :data:`~agentgym_suite.envs.tau2.evaluation.NLJudge` over a chat model.

    Args:
        chat: the judge model as ``(messages) -> str``.
        label: how results name this judge.
    """

    def __init__(self, chat: ChatFn | Callable[[list[dict[str, Any]]], str], label: str = "") -> None:
        self.chat = chat
        self.label = label or str(getattr(chat, "label", "") or "model")
        self.last_reply = ""

    def prompt(self, assertions: list[str], messages: list[dict[str, Any]]) -> list[dict[str, str]]:
        """The judge's chat messages for one episode."""
        outcomes = "\n".join(f"{i + 1}. {a}" for i, a in enumerate(assertions))
        return [{"role": "system", "content": JUDGE_INSTRUCTIONS},
                {"role": "user", "content": f"Conversation:\n{transcript(messages)}\n\nExpected outcomes:\n{outcomes}"}]

    def __call__(self, assertions: list[str], messages: list[dict[str, Any]]) -> list[bool]:
        self.last_reply = str(self.chat(self.prompt(assertions, messages)))
        verdicts = parse_verdicts(self.last_reply, len(assertions))
        return verdicts if verdicts is not None else [False] * len(assertions)


__all__ = ["JUDGE_INSTRUCTIONS", "ModelNLJudge", "parse_verdicts", "transcript"]
