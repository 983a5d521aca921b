"""Prompting-style replies decoded by bfcl-eval's own decoders, with a guard in front.

bfcl-eval reads a prompting model's reply with ``default_decode_ast_prompting``
(``model_handler/utils.py``): Python call lists through ``ast`` and its own value rules, Java and
JavaScript through its tree-sitter parsers (``model_handler/parser/``), every argument value of
those two kept as source text for the checker's type converters. This module calls that decoder
itself, so a reply in a code fence, a tuple, a positional argument, an escaped quote, ``5L``,
``Enum.VALUE`` or a Python keyword as a parameter name decodes here exactly as on the
leaderboard, and the single-turn checker receives the decoder's output unchanged
(:attr:`UpstreamDecode.output`).

The guard in front keeps model output away from ``eval``: bfcl-eval's Python decoder evaluates
arithmetic (``ast.BinOp``) and lambdas with ``eval``. A Python reply holding either is decoded by
the suite's own decoder instead (:mod:`.prompting_decoder`: arithmetic on literals computed by a
bounded evaluator, anything else refused), the one named departure
(:data:`~agentgym_suite.envs.bfcl.env.PYTHON_DECODE_DEPARTURE`). Any reply the env reads (up to its
token budget's worth of characters, ``BFCLEnv.max_reply_chars``) goes to bfcl-eval's decoder whatever
its length, as on the leaderboard; only texts over :data:`MAX_DECODED_REPLY_CHARS` are read as words. A
decoder exception, or output that is not a list of ``{name: {arguments}}``, means the reply is
not a call list: bfcl-eval then fails a single-turn entry (``ast_decoder:decoder_failed``) and
takes a multi-turn reply as the model's words, and so does the env.

In multi-turn entries bfcl-eval does not call the decoded output directly: it writes it back as
execution strings (``decoded_output_to_execution_list``) and ``eval``s them after prefixing method
names with instance names (``execute_multi_turn_func_call``). :func:`execution_calls` and
:func:`executed_value` give the argument values that path gives, without ``eval``: tuples stay tuples,
a dict of dicts is a call (:class:`NestedCall`) run first through the backend, dict keys become
strings, names followed by ``(`` inside strings are rewritten (:func:`rewrite_call_names`, read back
with ``ast.literal_eval``), and a reply whose conversion raises (an empty dict) is no call list.

Decoded calls become :class:`~agentgym_suite.core.tool_calls.ToolCall` objects with JSON
arguments (tuples as lists) for execution and the transcript; a value JSON cannot carry (bytes,
a complex number, a dict key that is not a string, a lone surrogate) makes that call a
:class:`~agentgym_suite.core.tool_calls.ToolCallError` the agent is shown.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Callable, Mapping

from agentgym_suite.core.actions import encoding_problem
from agentgym_suite.core.tool_calls import (
    INVALID_PARAMETERS,
    INVALID_TOOL_CALL_FORMAT,
    ToolCall,
    ToolCallError,
    limit_problem,
)
from agentgym_suite.envs.bfcl.prompting_decoder import DecodedCall, decode_call_list

MAX_DECODED_REPLY_CHARS = 1_000_000
"""Longest text handed to bfcl-eval's decoder: above every reply limit an env derives from a token budget
(:func:`~agentgym_suite.core.spaces.reply_char_limit`), so the env's reply limit decides, not this bound.
(The suite's own decoder, used for arithmetic only, keeps its smaller
:data:`~agentgym_suite.envs.bfcl.prompting_decoder.MAX_CALL_LIST_CHARS`.)"""

_EVALUATED = (ast.BinOp, ast.Lambda)
"""Nodes bfcl-eval's Python decoder hands to ``eval``."""


@dataclass
class UpstreamDecode:
    """One prompting reply as bfcl-eval's decoder read it."""

    calls: list[DecodedCall] = field(default_factory=list)
    """The calls for the conversation: a :class:`ToolCall` or a :class:`ToolCallError` each."""
    output: list[dict[str, Any]] | None = None
    """bfcl-eval's decoded output (``[{name: {argument: value}}]``, tuples and source texts kept),
    what its AST checker receives; None when the guard's own decoder read the reply."""


def _return_format(language: str) -> Any:
    from bfcl_eval.constants.enums import ReturnFormat

    return {"python": ReturnFormat.PYTHON, "java": ReturnFormat.JAVA, "javascript": ReturnFormat.JAVASCRIPT}[language]


def needs_eval(text: str) -> bool:
    """True when bfcl-eval's Python decoder would ``eval`` part of ``text`` (arithmetic or a lambda)."""
    body = text.strip("`\n ")
    body = body if body.startswith("[") else "[" + body
    body = body if body.endswith("]") else body + "]"
    try:
        tree = ast.parse(body.strip().strip("'"), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return False  # bfcl-eval's own parse fails the same way, before any eval
    return any(isinstance(node, _EVALUATED) for node in ast.walk(tree))


def decode_prompting_reply(text: Any, language: str = "python") -> UpstreamDecode | None:
    """The calls of a prompting reply, decoded by bfcl-eval for ``language`` (python, java, javascript).

    Returns None when the reply is not a call list (bfcl-eval's decoder raises or returns another
    shape), an :class:`UpstreamDecode` otherwise. Never raises and never evaluates model output.
    """
    if not isinstance(text, str) or len(text) > MAX_DECODED_REPLY_CHARS:
        return None
    if language == "python" and needs_eval(text):
        own = decode_call_list(text)
        return UpstreamDecode(calls=own) if own else None
    from bfcl_eval.model_handler.utils import default_decode_ast_prompting
    from bfcl_eval.utils import is_function_calling_format_output

    try:
        output = default_decode_ast_prompting(text, _return_format(language))
        if not output or not is_function_calling_format_output(output):
            return None
    except Exception:  # noqa: BLE001 - any decoder failure is bfcl-eval's decoder_failed
        return None
    return UpstreamDecode(calls=[_as_call(item, index) for index, item in enumerate(output)], output=output)


def _as_call(item: dict[str, Any], index: int) -> DecodedCall:
    [(name, arguments)] = item.items()
    if not isinstance(name, str) or not name:  # e.g. ``f()()``: bfcl-eval names the call ""
        return ToolCallError(INVALID_TOOL_CALL_FORMAT, "the function must be a name such as f or a.b.f", repr(item)[:500])
    try:
        if not all(isinstance(k, str) for k in arguments):  # ``**{...}``: bfcl-eval keeps it under the key None
            raise _NoJSON("**arguments have no parameter name; name every argument, as in f(x=1)")
        converted = {k: _json(v) for k, v in arguments.items()}
    except _NoJSON as exc:
        return ToolCallError(INVALID_PARAMETERS, f"{name}: {exc}", repr(item)[:500], str(name))
    problem = limit_problem(converted)
    if problem:
        return ToolCallError(INVALID_PARAMETERS, f"{name}: the arguments are refused: {problem}", repr(item)[:500], name)
    return ToolCall(name=str(name), arguments=converted, id=f"call_{index}")


class _NoJSON(ValueError):
    """A decoded value a tool call cannot carry."""


def _json(value: Any) -> Any:
    if isinstance(value, str):
        if encoding_problem(value):
            raise _NoJSON("a string argument holds characters that cannot be encoded (a lone surrogate)")
        return value
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, (list, tuple)):
        return [_json(v) for v in value]
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise _NoJSON("a dict argument has a key that is not a string; BFCL parameters take string keys")
        return {k: _json(v) for k, v in value.items()}
    raise _NoJSON(f"a {type(value).__name__} argument matches no BFCL parameter type")


@dataclass(frozen=True)
class NestedCall:
    """A call with keyword arguments written as an argument value (``cd(folder=pwd(a=1))``).

    bfcl-eval's multi-turn executor writes it back into the execution string and ``eval`` runs it
    before the outer call, passing its result; the env runs it the same way through the backend
    (:meth:`~agentgym_suite.envs.bfcl.env.BFCLEnv.execution_arguments`), never through ``eval``."""

    name: str
    arguments: dict[str, Any]


class NotExecutable(ValueError):
    """A decoded reply bfcl-eval's executor cannot turn into execution strings (its decode fails)."""


def execution_value(value: Any) -> Any:
    """One decoded argument value as bfcl-eval's multi-turn executor passes it.

    Its ``decoded_output_to_execution_list`` writes each value back as source (``parse_nested_value``)
    and ``eval`` reads it: a dict whose values are all dicts is a call (its first key the name, that
    key's dict the arguments: a :class:`NestedCall`), other dicts keep their values so converted and
    take their keys as strings, and every other value (lists, tuples, strings, numbers) comes back
    as itself, tuples included. An empty dict, a call with no name, raises :class:`NotExecutable`, as
    upstream's conversion raises (then the reply is not a call list)."""
    if not isinstance(value, dict):
        return value
    if all(isinstance(item, dict) for item in value.values()):
        if not value:
            raise NotExecutable("an empty dict is read by bfcl-eval's executor as a call with no name")
        name = next(iter(value))
        return NestedCall(str(name), {str(k): execution_value(v) for k, v in value[name].items()})
    return {str(k): execution_value(v) for k, v in value.items()}


def _json_view(value: Any) -> Any:
    """An execution value as the transcript shows it: a nested call as ``{name: {arguments}}``."""
    if isinstance(value, NestedCall):
        return {value.name: {k: _json_view(v) for k, v in value.arguments.items()}}
    if isinstance(value, dict):
        return {k: _json_view(v) for k, v in value.items()}
    return value


def execution_calls(decoded: UpstreamDecode) -> list[tuple[DecodedCall, dict[str, Any] | None]] | None:
    """The calls of a multi-turn prompting reply with the argument values bfcl-eval's executor runs them
    with (:func:`execution_value`; None for a call that is an error); None when its executor's
    conversion fails, which makes the reply no call list (:class:`NotExecutable`)."""
    if decoded.output is None:
        return [(call, None) for call in decoded.calls]
    try:
        values = [{k: execution_value(v) for k, v in arguments.items()} if isinstance(arguments, dict) else None
                  for item in decoded.output for arguments in item.values()]
    except NotExecutable:
        return None
    out: list[tuple[DecodedCall, dict[str, Any] | None]] = []
    for index, (item, arguments) in enumerate(zip(decoded.output, values)):
        name = next(iter(item))
        call = _as_call({name: _json_view(arguments)}, index) if arguments is not None else decoded.calls[index]
        out.append((call, arguments if isinstance(call, ToolCall) else None))
    return out


_CALL_NAME = re.compile(r"\b([a-zA-Z_]\w*)\s*(?=\()")
"""bfcl-eval's pattern of a function name in an execution string (``_process_method_calls``)."""


def instance_name(entry_id: str, class_name: str, model: str = "agentgym") -> str:
    """The name bfcl-eval's executor gives a backend instance (``{model}_{entry}_{class}_instance``, with
    ``-./:`` as ``_``); ``model`` stands for the model name it puts first."""
    return re.sub(r"[-./:]", "_", f"{model}_{entry_id}_{class_name}_instance")


def rewrite_call_names(text: str, instances: Mapping[str, str]) -> str:
    """``text`` as bfcl-eval's executor rewrites its execution string before ``eval``: every name followed by
    ``(`` loses the spaces before the parenthesis and, when it is a method of an involved backend
    (``instances``: method name -> instance name), gets the instance name in front. The pattern runs over
    the whole string, so it also rewrites the text inside string arguments (``echo(content='run ls()')``
    stores ``run <instance>.ls()``), a quirk reproduced as is."""
    return _CALL_NAME.sub(lambda m: f"{instances[m.group(1)]}.{m.group(1)}" if m.group(1) in instances
                          else m.group(1), text)


def names_rewritten(value: Any, instances: Mapping[str, str]) -> bool:
    """True when :func:`executed_value` would rewrite a name inside ``value``'s strings or dict keys (a backend
    method name followed by ``(``), the text in which the instance name, and so the model's name, shows."""
    if isinstance(value, NestedCall):
        return names_rewritten(value.arguments, instances)
    if isinstance(value, dict):
        return any(rewrite_call_names(str(k), instances) != str(k) or names_rewritten(v, instances)
                   for k, v in value.items())
    if isinstance(value, (str, list, tuple)):  # as executed_value reads them: their source form
        return rewrite_call_names(repr(value), instances) != repr(value)
    return False


def executed_value(value: Any, instances: Mapping[str, str], run: Callable[[NestedCall], Any]) -> Any:
    """An :func:`execution_value` as the executor's ``eval`` of the rewritten string gives it: text inside
    strings, lists and tuples rewritten (:func:`rewrite_call_names` over their source form, read back as
    literals), dict keys rewritten, and each :class:`NestedCall` replaced by what ``run`` returns for it
    (its arguments done the same way first). Raises what ``run`` raises."""
    if isinstance(value, NestedCall):
        arguments = {key: executed_value(item, instances, run) for key, item in value.arguments.items()}
        return run(NestedCall(value.name, arguments))
    if isinstance(value, dict):
        return {rewrite_call_names(str(key), instances): executed_value(item, instances, run)
                for key, item in value.items()}
    if isinstance(value, (str, list, tuple)):
        source = repr(value)
        rewritten = rewrite_call_names(source, instances)
        return value if rewritten == source else ast.literal_eval(rewritten)
    return value


REFUSED_NAMES = ("kill", "exit", "quit", "remove", "unlink", "popen", "Popen", "run")
"""Names bfcl-eval's executor refuses to call (``execute_multi_turn_func_call``)."""
_DOTTED_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


@cache
def _names_upstream_resolves() -> frozenset[str]:
    """Names bfcl-eval's ``eval`` of an execution string finds: Python's builtins and keywords, the globals
    of its executor module and the local variables of ``execute_multi_turn_func_call``."""
    import builtins
    import keyword

    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils as executor

    code = executor.execute_multi_turn_func_call.__code__
    return frozenset(dir(builtins)) | frozenset(keyword.kwlist) | frozenset(vars(executor)) | frozenset(code.co_varnames)


def name_error_text(name: str) -> str | None:
    """The result bfcl-eval's executor gives a call to ``name`` when ``name`` is no backend method and its first
    part resolves to nothing there: ``Error during execution: name 'x' is not defined`` (its ``eval`` looks the
    callee up before the arguments, so nothing else runs). None when upstream would do something else: a name
    that is no dotted identifier, a Python builtin or keyword, a name of its executor, a name it refuses
    (:data:`REFUSED_NAMES`) or one of its instance names."""
    if not _DOTTED_NAME.fullmatch(name):
        return None
    parts = name.split(".")
    if parts[0] in _names_upstream_resolves() or parts[0].endswith("_instance") or \
            any(part in REFUSED_NAMES for part in parts):
        return None
    return f"Error during execution: name '{parts[0]}' is not defined"
