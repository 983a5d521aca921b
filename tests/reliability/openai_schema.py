"""Checks a request body the way the OpenAI API does, from the ``openai`` package's request types.

:func:`chat_request_problems` walks the body against ``CompletionCreateParamsNonStreaming`` (the
TypedDicts the official client is typed with): unknown fields, missing required fields, values of
the wrong type or outside a ``Literal``, at any depth (messages, content parts, tool calls, tool
schemas). It adds the conversation rules the API enforces and the types cannot state: a ``tool``
message answers a ``tool_calls`` id of the assistant message just before it, and every call of
an assistant message is answered before the conversation goes on.
"""

from __future__ import annotations

import collections.abc
import types
import typing
from typing import Any

import pytest
import typing_extensions

chat_params = pytest.importorskip(
    "openai.types.chat.completion_create_params",
    reason="the strict stub server checks requests with the openai package's types: pip install 'agentgym-suite[dev]'",
)
from openai.types import completion_create_params as text_params  # noqa: E402

_SEQUENCES = {list, tuple, collections.abc.Iterable, collections.abc.Sequence, collections.abc.Iterator}
_MAPPINGS = {dict, collections.abc.Mapping}


def chat_request_problems(body: Any) -> list[str]:
    """Every way ``body`` breaks the chat-completions request schema or its conversation rules."""
    problems: list[str] = []
    _check(body, chat_params.CompletionCreateParamsNonStreaming, "body", problems)
    if isinstance(body, dict) and isinstance(body.get("messages"), list):
        problems.extend(_conversation_problems(body["messages"]))
    return problems


def completion_request_problems(body: Any) -> list[str]:
    """Every way ``body`` breaks the (legacy) completions request schema."""
    problems: list[str] = []
    _check(body, text_params.CompletionCreateParamsNonStreaming, "body", problems)
    return problems


def _conversation_problems(messages: list[Any]) -> list[str]:
    problems: list[str] = []
    open_ids: set[str] = set()
    after_calls = False
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if not after_calls or call_id not in open_ids:
                problems.append(f"messages[{i}]: a 'tool' message must answer a tool_call_id of the assistant "
                                f"message before it; {call_id!r} answers none")
            open_ids.discard(call_id)
            continue
        if open_ids:
            problems.append(f"messages[{i}]: the tool calls {sorted(open_ids)} were not answered before a "
                            f"{role!r} message")
        open_ids, after_calls = set(), False
        if role == "assistant":
            calls = message.get("tool_calls") or []
            if message.get("content") is None and not calls:
                problems.append(f"messages[{i}]: an assistant message needs content or tool_calls")
            open_ids = {c.get("id") for c in calls if isinstance(c, dict)}
            after_calls = bool(calls)
    if open_ids:
        problems.append(f"the tool calls {sorted(open_ids)} of the last assistant message were not answered")
    return problems


def _hints(typed_dict: type) -> dict[str, Any]:
    return typing_extensions.get_type_hints(typed_dict, include_extras=True)


def _unwrap(tp: Any) -> tuple[Any, bool | None]:
    """The type inside Required/NotRequired/Annotated, and True/False for Required/NotRequired."""
    required: bool | None = None
    while True:
        origin = typing.get_origin(tp)
        if origin in (typing.Required, typing_extensions.Required):
            required, tp = True, typing.get_args(tp)[0]
        elif origin in (typing.NotRequired, typing_extensions.NotRequired):
            required, tp = False, typing.get_args(tp)[0]
        elif origin in (typing.Annotated, typing_extensions.Annotated):
            tp = typing.get_args(tp)[0]
        else:
            return tp, required


def _check(value: Any, tp: Any, path: str, problems: list[str]) -> None:
    tp, _ = _unwrap(tp)
    if tp is Any or tp is object:
        return
    if typing_extensions.is_typeddict(tp):
        _check_typed_dict(value, tp, path, problems)
        return
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Union or origin is types.UnionType:
        _check_union(value, args, path, problems)
    elif origin in (typing.Literal, typing_extensions.Literal):
        if value not in args:
            problems.append(f"{path}: {value!r} is not one of {list(args)}")
    elif origin in _SEQUENCES:
        if not isinstance(value, (list, tuple)):
            problems.append(f"{path}: expected a list, got {type(value).__name__}")
            return
        for i, item in enumerate(value):
            _check(item, args[0] if args else Any, f"{path}[{i}]", problems)
    elif origin in _MAPPINGS:
        if not isinstance(value, dict):
            problems.append(f"{path}: expected an object, got {type(value).__name__}")
            return
        for key, item in value.items():
            _check(item, args[1] if len(args) > 1 else Any, f"{path}.{key}", problems)
    elif tp is type(None):
        if value is not None:
            problems.append(f"{path}: expected null, got {type(value).__name__}")
    elif tp is bool:
        if not isinstance(value, bool):
            problems.append(f"{path}: expected a boolean, got {type(value).__name__}")
    elif tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            problems.append(f"{path}: expected an integer, got {type(value).__name__}")
    elif tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            problems.append(f"{path}: expected a number, got {type(value).__name__}")
    elif tp is str:
        if not isinstance(value, str):
            problems.append(f"{path}: expected a string, got {type(value).__name__}")
    elif isinstance(tp, type) and tp in (dict, list):
        if not isinstance(value, tp):
            problems.append(f"{path}: expected {tp.__name__}, got {type(value).__name__}")


def _check_typed_dict(value: Any, tp: type, path: str, problems: list[str]) -> None:
    if not isinstance(value, dict):
        problems.append(f"{path}: expected an object, got {type(value).__name__}")
        return
    hints = _hints(tp)
    total = getattr(tp, "__total__", True)
    for key in value:
        if key not in hints:
            problems.append(f"{path}: unknown field {key!r}")
    for key, hint in hints.items():
        _, required = _unwrap(hint)
        if (required or (required is None and total)) and key not in value:
            problems.append(f"{path}: missing required field {key!r}")
        if key in value:
            _check(value[key], hint, f"{path}.{key}", problems)


def _check_union(value: Any, members: tuple[Any, ...], path: str, problems: list[str]) -> None:
    best: list[str] | None = None
    for member in members:
        found: list[str] = []
        _check(value, member, path, found)
        if not found:
            return
        if best is None or len(found) < len(best):
            best = found
    problems.extend(best or [f"{path}: matches no allowed type"])
