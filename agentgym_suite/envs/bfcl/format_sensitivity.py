"""BFCL-v4's format-sensitivity category: 200 single-turn entries under 26 system-prompt formats.

bfcl-eval runs it for prompting models only: each entry id
``format_sensitivity_<i>:<config>:<original id>`` names a prompt configuration (return format
python / json / verbose or concise XML, with or without ``<TOOLCALL>`` tags, function docs as
python / xml / json, plaintext or markdown, classic or experimental wording). The model's reply
is decoded in that return format and checked with the AST checker of the original category.
The category is not part of the overall score; bfcl-eval reports the accuracy per
configuration, their largest difference (``accuracy_max_delta``) and standard deviation
(``accuracy_std``), both in points, and the variance (:func:`sensitivity_report`).

The ids, configurations, system prompts and the JSON/XML decoders are bfcl-eval's own (its
prompting utilities need ``tree_sitter`` and ``tenacity``, see :data:`INSTALL`). The python
return format is read by bfcl-eval's decoder too, behind the suite's guard
(:func:`~agentgym_suite.envs.bfcl.upstream_decode.decode_prompting_reply`: a reply holding
arithmetic or a lambda, which bfcl-eval evaluates with ``eval``, is read by the suite's own
evaluator instead); a reply holding a value JSON cannot carry (bytes, a complex number) fails to
decode.
"""

from __future__ import annotations

import re
import statistics
from collections import defaultdict
from functools import cache
from typing import Any, Iterable, Mapping

from agentgym_suite.core.errors import BackendNotInstalledError
from agentgym_suite.core.tool_calls import ToolCall

CATEGORY = "format_sensitivity"
INSTALL = 'pip install "tree_sitter==0.21.3" "tree-sitter-java==0.21.0" "tree-sitter-javascript==0.21.4" "tenacity>=8.5"'


def _prompting_utils() -> Any:
    try:
        import bfcl_eval.model_handler.utils as utils
    except ImportError as exc:
        raise BackendNotInstalledError(f"BFCL format_sensitivity uses bfcl-eval's prompting utilities, which need "
                                       f"more packages ({exc}); install them with:  {INSTALL}") from exc
    return utils


@cache
def entries() -> dict[str, tuple[dict[str, Any], list[dict[str, Any]]]]:
    """bfcl-eval's format-sensitivity entries by id: (test entry, its ground truth)."""
    from bfcl_eval.utils import load_format_sensitivity_ground_truth_entry, load_format_sensitivity_test_cases

    questions = load_format_sensitivity_test_cases()
    answers = load_format_sensitivity_ground_truth_entry()
    return {q["id"]: (q, a["ground_truth"]) for q, a in zip(questions, answers)}


def config_of(entry_id: str) -> str:
    """The prompt configuration named in an entry id."""
    return entry_id.split(":")[1]


def original_id(entry_id: str) -> str:
    """The id of the entry a format-sensitivity id re-runs (what its checker is told as category)."""
    return entry_id.split(":")[-1]


def system_prompt(entry_id: str, function_docs: list[dict[str, Any]]) -> str:
    """bfcl-eval's system prompt for the entry's configuration."""
    return str(_prompting_utils().formulate_system_prompt(config_of(entry_id), function_docs))


def decode(entry_id: str, text: str) -> list[tuple[str, dict[str, Any]]] | None:
    """The calls of a reply in the entry's return format, with the values bfcl-eval's decoder gives (a
    python tuple stays a tuple, which its checker refuses where a list is expected); None when it does
    not decode."""
    from agentgym_suite.envs.bfcl.upstream_decode import decode_prompting_reply

    utils = _prompting_utils()
    return_format, has_tag, _, _, _ = utils.parse_prompt_variation_params(config_of(entry_id))
    body = text
    if has_tag:
        match = re.search(r"<TOOLCALL>(.*?)</TOOLCALL>", body, re.DOTALL)
        if match is None:
            return None
        body = match.group(1)
    if return_format == "python":  # bfcl-eval's own decoder, behind the guard that keeps eval away
        decoded = decode_prompting_reply(body, "python")
        if decoded is None or not all(isinstance(c, ToolCall) for c in decoded.calls):  # a refused call fails the decode
            return None
        if decoded.output is None:  # the guard's own reading (arithmetic): JSON values
            return [(c.name, dict(c.arguments)) for c in decoded.calls]
        return [(str(name), dict(arguments)) for item in decoded.output for name, arguments in item.items()]
    from bfcl_eval.constants.enums import ReturnFormat

    try:
        decoded = utils.ast_parse(body, ReturnFormat(return_format), False)
    except Exception:  # the upstream decoder rejecting the reply is a failed decode, as its runner records it
        return None
    calls = []
    for item in decoded if isinstance(decoded, list) else []:
        if not isinstance(item, dict) or len(item) != 1:
            return None
        (name, arguments), = item.items()
        if not isinstance(arguments, dict):
            return None
        calls.append((str(name), arguments))
    return calls


def sensitivity_report(results: Iterable[tuple[str, bool]]) -> dict[str, Any]:
    """bfcl-eval's format-sensitivity summary from (configuration, passed) pairs, one per entry.

    Returns ``accuracy_max_delta``, ``accuracy_variance``, ``accuracy_std`` (points, rounded to
    2 decimals as upstream) and, per configuration, ``accuracy``, ``correct_count``, ``total_count``.
    """
    stats: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for config, passed in results:
        counts = stats[config]
        counts[0] += int(passed)
        counts[1] += 1
    by_config = {cfg: {"accuracy": c / t, "correct_count": c, "total_count": t} for cfg, (c, t) in stats.items()}
    accuracies = [v["accuracy"] for v in by_config.values()]
    spread: Mapping[str, float] = {"accuracy_max_delta": 0.0, "accuracy_variance": 0.0, "accuracy_std": 0.0}
    if len(accuracies) > 1:
        spread = {
            "accuracy_max_delta": round((max(accuracies) - min(accuracies)) * 100, 2),
            "accuracy_variance": round(statistics.variance(accuracies) * 100**2, 2),
            "accuracy_std": round(statistics.stdev(accuracies) * 100, 2),
        }
    return {**spread, **by_config}


def _xml_type(value: Any) -> str:
    for kind, name in ((bool, "boolean"), (int, "integer"), (float, "float"), (str, "string"), (dict, "dict")):
        if isinstance(value, kind):
            return name
    return "array"


def render_calls(entry_id: str, calls: list[tuple[str, dict[str, Any]]]) -> str:
    """``calls`` written in the entry's return format (the oracle's reply)."""
    import json
    from xml.sax.saxutils import escape, quoteattr

    return_format, has_tag, _, _, _ = _prompting_utils().parse_prompt_variation_params(config_of(entry_id))
    if return_format == "python":
        body = "[" + ", ".join(f"{n}(" + ", ".join(f"{k}={v!r}" for k, v in a.items()) + ")" for n, a in calls) + "]"
    elif return_format == "json":
        body = json.dumps([{"function": n, "parameters": a} for n, a in calls])
    else:
        def text(value: Any) -> str:
            return value if isinstance(value, str) else repr(value) if not isinstance(value, bool) else str(value).lower()
        functions = []
        for name, arguments in calls:
            if return_format == "verbose_xml":
                params = "".join(f"<param name={quoteattr(k)} value={quoteattr(text(v))} type=\"{_xml_type(v)}\"/>"
                                 for k, v in arguments.items())
                functions.append(f"<function name={quoteattr(name)}><params>{params}</params></function>")
            else:
                params = "".join(f"<param name={quoteattr(k)} type=\"{_xml_type(v)}\">{escape(text(v))}</param>"
                                 for k, v in arguments.items())
                functions.append(f"<function name={quoteattr(name)}>{params}</function>")
        body = "<functions>" + "".join(functions) + "</functions>"
    return f"<TOOLCALL>{body}</TOOLCALL>" if has_tag else body
