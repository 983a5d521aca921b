"""What an OpenAI-compatible chat request carries on the wire, and what its answers teach the client.

* :func:`wire_messages` — a conversation as the chat-completions API accepts it: each message
  keeps only the fields its role allows; an assistant message whose tool calls were written as
  ``<tool_call>`` text (a model that did not use the server's tool parser) gets them as
  ``tool_calls`` again, with the ids the env gave their results; a tool result that answers no
  call of the assistant message before it (a malformed call has no id) goes as a user message
  of ``<tool_response>`` blocks. With the tools in the prompt, the whole conversation is written
  in the Hermes text convention (:func:`~agentgym_suite.llm.chat_templates.hermes_messages`).
* :class:`TokenEstimate` — prompt tokens from characters, calibrated by each answer's
  ``usage.prompt_tokens``; what history trimming measures against the context window.
* :func:`context_overflow` — the context limit and prompt length a "maximum context length"
  error states (vLLM and OpenAI wording).
"""

from __future__ import annotations

import json
import re
from typing import Any

from agentgym_suite.core.tool_calls import parse_tool_calls
from agentgym_suite.llm.chat_templates import hermes_messages

ROLE_FIELDS: dict[str, tuple[str, ...]] = {
    "system": ("role", "content", "name"),
    "developer": ("role", "content", "name"),
    "user": ("role", "content", "name"),
    "assistant": ("role", "content", "name", "tool_calls", "refusal"),
    "tool": ("role", "content", "tool_call_id"),
}
"""Fields the chat-completions API accepts on a message of each role."""

DEFAULT_CHARS_PER_TOKEN = 3.0
"""Characters per prompt token assumed before a server has reported any ``usage`` (on the safe side:
English prose runs near 4, JSON and code near 3)."""

TOKENS_PER_MESSAGE = 6
"""Template tokens around each message (role markers, separators), added to every estimate."""

MIN_CHARS_PER_TOKEN_BOUND = 6.0
"""No tokenizer in use packs more characters than this into a token on average; the tools-unseen
check treats ``chars / 6`` as the fewest tokens a text can take."""

_CONTEXT = re.compile(r"maximum context length(?: is|\s*\()\s*(\d+)", re.IGNORECASE)
_PROMPT_LENGTH = re.compile(
    r"(?:contains (?:at least )?(\d+) input tokens|Input length \((\d+)\)|resulted in (\d+) tokens|"
    r"(\d+) in the messages)", re.IGNORECASE)


def wire_messages(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
                  *, tools_in_prompt: bool = False) -> list[dict[str, Any]]:
    """``messages`` as a chat-completions request carries them (see the module docstring).

    With ``tools_in_prompt`` the tool schemas go into the system message and every message is a
    plain ``role``/``content`` pair; otherwise tools travel in the request's ``tools`` field.
    """
    if tools_in_prompt:
        return hermes_messages(messages, tools)
    out: list[dict[str, Any]] = []
    open_ids: set[str] = set()
    stray: list[str] = []
    for index, message in enumerate(messages):
        role = str(message.get("role"))
        if role != "tool" and stray:
            out.append(_results_as_user(stray))
            stray = []
        if role == "tool":
            call_id = str(message.get("tool_call_id") or "")
            if call_id and call_id in open_ids:
                out.append(_fields(message, role))
                open_ids.discard(call_id)
            else:
                stray.append(_text(message.get("content")))
            continue
        if role == "assistant":
            message = _with_text_calls(message, messages[index + 1:])
            open_ids = {str(c.get("id")) for c in message.get("tool_calls") or [] if isinstance(c, dict)}
        else:
            open_ids = set()
        out.append(_fields(message, role))
    if stray:
        out.append(_results_as_user(stray))
    return out


def _fields(message: dict[str, Any], role: str) -> dict[str, Any]:
    allowed = ROLE_FIELDS.get(role, ("role", "content"))
    out = {k: v for k, v in message.items() if k in allowed}
    if role == "assistant":
        calls = [_call(c) for c in out.get("tool_calls") or [] if isinstance(c, dict)]
        if calls:
            out["tool_calls"] = calls
            out["content"] = out.get("content") or None
        else:
            out.pop("tool_calls", None)
            out["content"] = _text(out.get("content"))
    else:
        content = out.get("content")
        out["content"] = content if isinstance(content, list) else _text(content)
    return out


def _call(call: dict[str, Any]) -> dict[str, Any]:
    fn = call.get("function") if isinstance(call.get("function"), dict) else {}
    arguments = fn.get("arguments", "{}")
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return {"id": str(call.get("id") or ""), "type": "function",
            "function": {"name": str(fn.get("name", "")), "arguments": arguments}}


def _with_text_calls(message: dict[str, Any], following: list[dict[str, Any]]) -> dict[str, Any]:
    """An assistant message whose ``<tool_call>`` text was answered by tool results, with those calls
    as ``tool_calls`` (ids as the env numbered them: ``call_<block index>``)."""
    content = message.get("content")
    if message.get("tool_calls") or not isinstance(content, str) or "<tool_call>" not in content:
        return message
    answered = set()
    for later in following:
        if later.get("role") != "tool":
            break
        answered.add(str(later.get("tool_call_id") or ""))
    parsed = parse_tool_calls(content)
    calls = [c.to_openai() for c in parsed.calls if c.id in answered]
    if not calls:
        return message
    return {**message, "content": parsed.content or None, "tool_calls": calls}


def _results_as_user(results: list[str]) -> dict[str, Any]:
    return {"role": "user", "content": "\n".join(f"<tool_response>\n{r}\n</tool_response>" for r in results)}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "" if content is None else json.dumps(content, ensure_ascii=False)


def request_chars(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> int:
    """Characters of a request's messages and tool schemas, the quantity :class:`TokenEstimate` scales."""
    text = sum(len(_text(m.get("content"))) for m in messages)
    calls = sum(len(json.dumps(m.get("tool_calls"), ensure_ascii=False)) for m in messages if m.get("tool_calls"))
    return text + calls + (len(json.dumps(tools, ensure_ascii=False)) if tools else 0)


class TokenEstimate:
    """Prompt tokens of a request, estimated from its characters.

    Until the server reports ``usage``, :data:`DEFAULT_CHARS_PER_TOKEN` characters make a token;
    then the densest ratio it reported (tokens per character, highest seen) is used, so the
    estimate stays on the safe side for the prompts of one server.
    """

    def __init__(self) -> None:
        self.tokens_per_char: float | None = None

    def observe(self, chars: int, prompt_tokens: int, messages: int) -> None:
        """Learn from one answer: ``prompt_tokens`` for ``chars`` characters in ``messages`` messages."""
        body = prompt_tokens - TOKENS_PER_MESSAGE * messages
        if chars <= 0 or body <= 0:
            return
        ratio = body / chars
        self.tokens_per_char = ratio if self.tokens_per_char is None else max(self.tokens_per_char, ratio)

    def count(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> int:
        """Estimated prompt tokens of ``messages`` (and ``tools``)."""
        ratio = self.tokens_per_char if self.tokens_per_char is not None else 1.0 / DEFAULT_CHARS_PER_TOKEN
        return int(request_chars(messages, tools) * ratio * 1.05) + TOKENS_PER_MESSAGE * len(messages) + 8


def context_overflow(text: str) -> tuple[int | None, int | None] | None:
    """``(context limit, prompt tokens)`` stated by a context-length error, either None when not
    stated; None when ``text`` is no context-length error."""
    if "context length" not in text.lower():
        return None
    limit = _CONTEXT.search(text)
    length = _PROMPT_LENGTH.search(text)
    prompt = next((int(g) for g in length.groups() if g), None) if length else None
    return (int(limit.group(1)) if limit else None), prompt


def tools_unseen(prompt_tokens: int, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> bool:
    """True when a server's count of ``prompt_tokens`` is too small for the messages and tool
    schemas sent: its chat template must have left the tools out.

    Both are measured at :data:`MIN_CHARS_PER_TOKEN_BOUND` characters per token, fewer tokens
    than any tokenizer in use needs, so the check does not fire when the tools were rendered.
    """
    if not tools:
        return False
    return prompt_tokens * MIN_CHARS_PER_TOKEN_BOUND < request_chars(messages, tools)
