"""bfcl-eval's own AST checker and function-doc preprocessing, reached from the installed wheel.

Single-turn verdicts come from ``bfcl_eval.eval_checker.ast_eval.ast_checker`` itself (with
its Java and JavaScript type converters), so they cannot drift from the leaderboard's.

The checker module imports ``bfcl_eval.constants.model_config``, which imports every
provider's inference handler (``anthropic``, ``cohere``, ``tree_sitter``...). The no-deps
install of bfcl-eval lacks those, so when that import fails the checker is loaded against a
stand-in model table whose only job is the one fact the checker reads from it: the model
receives function names with ``.`` replaced by ``_`` (``underscore_to_dot``), as bfcl-eval's
function-calling handlers send them to OpenAI-compatible servers. The stand-in is removed
from ``sys.modules`` right after the import, so nothing else sees it.
"""

from __future__ import annotations

import copy
import importlib
import sys
import types
from functools import cache
from typing import Any

CHECKER_MODEL_NAME = "agentgym-FC"
"""Model name given to the checker when the stand-in table is in use."""
PROMPTING_MODEL_NAME = "agentgym-prompting"
"""A stand-in model that gets function names as they are (bfcl-eval's prompting handlers)."""


class _UnderscoreToDotConfig:
    """What bfcl-eval's checker and leaderboard code read of a model's config: a function-calling
    model that gets ``_`` for ``.``, with no price (its cost columns read N/A)."""

    underscore_to_dot = True
    input_price = None
    output_price = None
    url = ""
    org = ""
    license = ""

    def __init__(self, name: str = CHECKER_MODEL_NAME) -> None:
        self.display_name = name


class _AnyModel(dict):  # type: ignore[type-arg]
    """A model table answering every name with a function-calling model that gets ``_`` for ``.``."""

    def __missing__(self, key: str) -> _UnderscoreToDotConfig:
        config = _UnderscoreToDotConfig(key)
        config.underscore_to_dot = key != PROMPTING_MODEL_NAME
        return config


@cache
def _checker() -> tuple[Any, str]:
    """(the ast_checker module, the model name to pass to it)."""
    return import_with_model_table("bfcl_eval.eval_checker.ast_eval.ast_checker")


def checker_model_name(underscore_to_dot: bool = True) -> str:
    """A model name whose config has ``underscore_to_dot`` as given, for bfcl-eval's checker: the
    emulated model gets (and must send) ``_`` for ``.`` in function names, or the names as they are."""
    module, dotted_to_underscore = _checker()
    if underscore_to_dot:
        return dotted_to_underscore
    if dotted_to_underscore == CHECKER_MODEL_NAME:  # the stand-in table
        return PROMPTING_MODEL_NAME
    mapping = importlib.import_module("bfcl_eval.constants.model_config").MODEL_CONFIG_MAPPING
    return next(k for k, v in mapping.items() if not getattr(v, "underscore_to_dot", True)).replace("/", "_")


def import_with_model_table(name: str) -> tuple[Any, str]:
    """Import a bfcl-eval module that reads its model table: (the module, a model name to give it).

    With every provider's dependencies installed the real table is used (the model name is one
    whose config replaces dots); otherwise the stand-in described in the module docstring.
    """
    from agentgym_suite.envs.bfcl.data import package_root

    package_root()  # a missing wheel raises with the install command
    try:
        module = importlib.import_module(name)
        mapping = importlib.import_module("bfcl_eval.constants.model_config").MODEL_CONFIG_MAPPING
        key = next(k for k, v in mapping.items() if getattr(v, "underscore_to_dot", False))
        return module, key.replace("/", "_")
    except ImportError:
        pass
    config_name = "bfcl_eval.constants.model_config"
    stand_in = types.ModuleType(config_name)
    stand_in.MODEL_CONFIG_MAPPING = _AnyModel()  # type: ignore[attr-defined]
    sys.modules[config_name] = stand_in
    try:
        module = importlib.import_module(name)
    finally:
        if sys.modules.get(config_name) is stand_in:
            del sys.modules[config_name]
    return module, CHECKER_MODEL_NAME


def language_of(category: str) -> Any:
    """bfcl-eval's ``Language`` of an upstream category name."""
    from bfcl_eval.constants.enums import Language

    if "javascript" in category:
        return Language.JAVASCRIPT
    if "java" in category:
        return Language.JAVA
    return Language.PYTHON


def check_calls(category: str, docs: list[dict[str, Any]], calls: list[tuple[str, dict[str, Any]]],
                answer: list[dict[str, Any]], underscore_to_dot: bool = True) -> dict[str, Any]:
    """bfcl-eval's AST verdict for ``calls`` (names as the model sent them).

    Args:
        category: bfcl-eval's category name (``simple_python``, ``live_multiple``...).
        docs: the entry's function docs as in the data file (no language hint).
        calls: (function name, arguments) pairs in the order the model made them.
        answer: the entry's possible answers.
        underscore_to_dot: the emulated model's config: True when it gets ``_`` for ``.`` in
            function names (bfcl-eval's OpenAI-compatible FC handlers), False when it gets them as
            they are (its prompting handlers, ``QwenFCHandler``).

    Returns:
        The checker's dict: ``valid`` and, when invalid, ``error`` and ``error_type``.
    """
    module, _ = _checker()
    model_name = checker_model_name(underscore_to_dot)
    output = [{name: dict(arguments)} for name, arguments in calls]
    if not output:  # what bfcl-eval's runner reports before calling the checker
        return {"valid": False, "error": ["Empty output: no function call."], "error_type": "ast_decoder:decoder_wrong_output_format"}
    try:
        return dict(module.ast_checker(copy.deepcopy(docs), output, copy.deepcopy(answer), language_of(category),
                                       category, model_name))
    except Exception as exc:  # the checker failing on odd output is a failed entry, as upstream records it
        return {"valid": False, "error": [f"checker error: {type(exc).__name__}: {exc}"], "error_type": "ast_checker:exception"}


def model_function_name(name: str, underscore_to_dot: bool = True) -> str:
    """A function name as bfcl-eval's handlers send it: ``.`` -> ``_`` for a model config with
    ``underscore_to_dot`` (its FC handlers for OpenAI-compatible servers), else as it is."""
    return name.replace(".", "_") if underscore_to_dot else name


def language_specific_docs(docs: list[dict[str, Any]], category: str) -> list[dict[str, Any]]:
    """Function docs as bfcl-eval shows them to the model: its language hint on each description
    and, for Java and JavaScript, every parameter turned into a string with its type in words."""
    from bfcl_eval.utils import _func_doc_language_specific_pre_processing

    return list(_func_doc_language_specific_pre_processing(copy.deepcopy(list(docs)), category))
