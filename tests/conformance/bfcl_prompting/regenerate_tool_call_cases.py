"""Regenerate ``tool_call_cases.json``: ``<tool_call>`` replies in the prompting style, judged by bfcl-eval.

A prompting model's reply is read by bfcl-eval's prompting decoder alone
(``default_decode_ast_prompting``; ``default_decode_execute_prompting`` in multi-turn), which fails
on a ``<tool_call>`` block. For each fixed single-turn reply below this script does what bfcl-eval's
evaluation does for a prompting model (``eval_runner._evaluate_single_ast_entry`` and
``_evaluate_single_relevance_entry``): decode (a failure is ``ast_decoder:decoder_failed``), check the
output's format, then its ``ast_checker`` with a prompting model config (``underscore_to_dot=False``);
the relevance categories count a call when the decode succeeds with a non-empty output. Each
``<tool_call>`` reply comes with the same calls written as a call list, which upstream accepts. For
the multi-turn replies it records the decode error that makes bfcl-eval's inference take the reply
as the model's words.

Not run by pytest; run with bfcl-eval installed (its model table is imported through the suite's
stand-in, ``upstream.import_with_model_table``, as the env's checker does)::

    PYTHONPATH=. python tests/conformance/bfcl_prompting/regenerate_tool_call_cases.py
"""

from __future__ import annotations

import copy
import importlib.metadata
import json
from pathlib import Path
from typing import Any

OUT = Path(__file__).with_name("tool_call_cases.json")


def _block(name: str, arguments: dict[str, Any]) -> str:
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": arguments}) + "\n</tool_call>"


SINGLE_TURN = [
    ("simple_python", "simple_python_0", _block("calculate_triangle_area", {"base": 10, "height": 5, "unit": "units"})),
    ("simple_python", "simple_python_0", "[calculate_triangle_area(base=10, height=5, unit='units')]"),
    ("simple_python", "simple_python_0", "<tool_call>\n[calculate_triangle_area(base=10, height=5, unit='units')]\n"
                                         "</tool_call>"),
    ("parallel", "parallel_0", _block("spotify.play", {"artist": "Taylor Swift", "duration": 20}) + "\n"
     + _block("spotify.play", {"artist": "Maroon 5", "duration": 15})),
    ("parallel", "parallel_0", "[spotify.play(artist='Taylor Swift', duration=20), spotify.play(artist='Maroon 5', "
                               "duration=15)]"),
    ("simple_java", "simple_java_0", _block("GeometryPresentation.createPresentation",
                                            {"controller": "mapController", "parent": "mapArea"})),
    ("simple_java", "simple_java_0", "[GeometryPresentation.createPresentation(controller=mapController, parent=mapArea)]"),
    ("simple_javascript", "simple_javascript_0", _block("validateUserInput",
                                                        {"inputField": "userInputField", "isComplete": "true"})),
    ("simple_javascript", "simple_javascript_0", "[validateUserInput(inputField=userInputField, isComplete=true)]"),
    ("irrelevance", "irrelevance_0", _block("determine_body_mass_index", {"weight": 70, "height": 1.75})),
    ("live_relevance", "live_relevance_0-0-0", _block("search_engine.query", {"prompt": "value"})),
    ("live_relevance", "live_relevance_0-0-0", "[search_engine.query(prompt='value')]"),
]
"""(bfcl-eval category, entry id, reply)."""

MULTI_TURN = [
    ("multi_turn_base_0", _block("ls", {})),
    ("multi_turn_base_0", _block("mkdir", {"dir_name": "new"}) + "\n" + _block("ls", {"a": True})),
    ("multi_turn_base_0", "<tool_call>\n[mkdir(dir_name='new')]\n</tool_call>"),
]
"""(entry id, reply): replies bfcl-eval's multi-turn prompting decode fails on."""


def _entries(category: str) -> tuple[dict[str, Any], dict[str, Any]]:
    import bfcl_eval

    root = Path(bfcl_eval.__file__).parent / "data"
    read = lambda path: {e["id"]: e for e in map(json.loads, filter(str.strip, path.read_text("utf-8").splitlines()))}  # noqa: E731
    answers = root / "possible_answer" / f"BFCL_v4_{category}.json"
    return read(root / f"BFCL_v4_{category}.json"), read(answers) if answers.exists() else {}


def single_turn_verdict(category: str, entry_id: str, reply: str) -> dict[str, Any]:
    """bfcl-eval's verdict for a prompting model's ``reply`` to one single-turn entry."""
    from bfcl_eval.constants.enums import Language, ReturnFormat
    from bfcl_eval.model_handler.utils import default_decode_ast_prompting
    from bfcl_eval.utils import is_empty_output, is_function_calling_format_output

    from agentgym_suite.envs.bfcl import upstream

    questions, answers = _entries(category)
    entry = questions[entry_id]
    language = {"simple_java": Language.JAVA, "simple_javascript": Language.JAVASCRIPT}.get(category, Language.PYTHON)
    relevance = "relevance" in category
    try:
        decoded = default_decode_ast_prompting(reply, ReturnFormat.PYTHON if relevance else ReturnFormat(language.value))
    except Exception as exc:  # noqa: BLE001 - any failure is upstream's decoder_failed
        if relevance:
            return {"valid": "irrelevance" in category, "decode_error": type(exc).__name__}
        return {"valid": False, "error_type": "ast_decoder:decoder_failed", "decode_error": type(exc).__name__}
    if relevance:
        made = not is_empty_output(decoded)
        return {"valid": made != ("irrelevance" in category)}
    if not is_function_calling_format_output(decoded):
        return {"valid": False, "error_type": "ast_decoder:decoder_wrong_output_format"}
    module, _ = upstream._checker()
    verdict = module.ast_checker(copy.deepcopy(entry["function"]), decoded, copy.deepcopy(answers[entry_id]["ground_truth"]),
                                 language, category, upstream.checker_model_name(False))
    return {"valid": bool(verdict["valid"]), **({"error_type": verdict.get("error_type")} if not verdict["valid"] else {})}


def multi_turn_decode(reply: str) -> dict[str, Any]:
    """What bfcl-eval's multi-turn prompting decode makes of ``reply``."""
    from bfcl_eval.model_handler.utils import default_decode_execute_prompting

    try:
        return {"execution": default_decode_execute_prompting(reply)}
    except Exception as exc:  # noqa: BLE001 - upstream's inference then takes the reply as words
        return {"decode_error": type(exc).__name__}


def main() -> None:
    """Judge every reply with bfcl-eval and write the record."""
    record = {
        "upstream": {"package": "bfcl-eval", "version": importlib.metadata.version("bfcl-eval"),
                     "functions": ["model_handler.utils.default_decode_ast_prompting",
                                   "model_handler.utils.default_decode_execute_prompting",
                                   "eval_checker.ast_eval.ast_checker.ast_checker"],
                     "model_config": "a prompting model, underscore_to_dot=False"},
        "single_turn": [{"category": c, "entry": e, "reply": r, **single_turn_verdict(c, e, r)} for c, e, r in SINGLE_TURN],
        "multi_turn": [{"entry": e, "reply": r, **multi_turn_decode(r)} for e, r in MULTI_TURN],
    }
    OUT.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(record['single_turn'])} single-turn and {len(record['multi_turn'])} multi-turn cases to {OUT}")


if __name__ == "__main__":
    main()
