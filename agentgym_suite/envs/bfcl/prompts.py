"""BFCL's own prompt texts, read from the installed ``bfcl-eval`` package so they cannot drift.

bfcl-eval prompts a model in one of two ways, and the env offers both (``system_prompt=``):

* ``fc`` (default): the function-calling handlers (e.g. ``QwenFCHandler``, whose Hermes
  ``<tool_call>`` format is the suite's) add no system text of their own. The tools reach the
  model through its chat template; the system message holds only what the test entry brings
  (a live entry's own system prompt, the agentic answer format, the memory instructions).
* ``prompting``: the prompting handlers put bfcl-eval's default system prompt first
  (``DEFAULT_SYSTEM_PROMPT_FORMAT``: python call lists, function docs as JSON, plain text,
  classic style) and the model answers with ``[func(arg=value), ...]``; only that is a call there
  (a ``<tool_call>`` block is the model's words, as bfcl-eval's prompting decoder fails on it).

A function revealed on a later turn (``miss_func``) is announced with bfcl-eval's message,
and every function description gets bfcl-eval's language hint.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

PYTHON_HINT = " Note that the provided function is in Python 3 syntax."
"""What bfcl-eval appends to every function description of the Python categories
(``utils._get_language_specific_hint``)."""

SYSTEM_PROMPT_STYLES = ("fc", "prompting")


@lru_cache(maxsize=1)
def _prompts() -> Any:
    from agentgym_suite.envs.bfcl.data import package_root

    package_root()  # a missing package raises with the install command
    import bfcl_eval.constants.default_prompts as prompts

    return prompts


def check_style(style: str) -> str:
    """Return ``style`` when it is ``fc`` or ``prompting``; explain otherwise."""
    if style not in SYSTEM_PROMPT_STYLES:
        raise ValueError(f"system_prompt={style!r}; choose 'fc' (function calling, the default) or 'prompting'.")
    return style


def with_language_hint(doc: dict[str, Any]) -> dict[str, Any]:
    """A copy of a BFCL function doc whose description ends with bfcl-eval's Python hint."""
    out = dict(doc)
    description = str(doc.get("description", ""))
    out["description"] = description if description.endswith(PYTHON_HINT) else description + PYTHON_HINT
    return out


def default_system_prompt(function_docs: list[dict[str, Any]]) -> str:
    """bfcl-eval's default system prompt for prompting models, with ``function_docs`` as JSON.

    Rebuilt from the templates in ``bfcl_eval.constants.default_prompts`` for the settings of
    ``DEFAULT_SYSTEM_PROMPT_FORMAT`` (``ret_fmt=python&tool_call_tag=False&func_doc_fmt=json
    &prompt_fmt=plaintext&style=classic``), as ``model_handler.utils.formulate_system_prompt`` does.
    """
    p = _prompts()
    style = p.PROMPT_STYLE_TEMPLATES["classic"]
    tool_call_format = style["tool_call_no_tag"].format(
        output_format=p.OUTPUT_FORMAT_MAPPING["python"], param_types=p.PARAM_TYPE_MAPPING["python"],
    )
    available = style["available_tools"].format(format="json", functions=json.dumps(function_docs, indent=4))
    return p.PROMPT_TEMPLATE_MAPPING["plaintext"].format(
        persona=style["persona"], task=style["task"], tool_call_format=tool_call_format,
        multiturn_behavior=style["multiturn_behavior"], available_tools=available,
    )


def more_functions_message(style: str, new_docs: list[dict[str, Any]]) -> str:
    """The user message of a turn that reveals held-out functions (``miss_func``)."""
    p = _prompts()
    if style == "prompting":
        return p.DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_PROMPTING.format(functions=json.dumps(new_docs, indent=4))
    return p.DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC


def agentic_answer_format() -> str:
    """The system text every web-search and memory question starts with (the answer format)."""
    return _prompts().ADDITIONAL_SYSTEM_PROMPT_FOR_AGENTIC_RESPONSE_FORMAT


def memory_instruction(category: str, scenario: str, memory_content: str) -> str:
    """The memory system prompt of a scenario, with the backend's current core memory."""
    p = _prompts()
    template = p.MEMORY_BACKEND_INSTRUCTION_UNIFIED if "rec_sum" in category else p.MEMORY_BACKEND_INSTRUCTION_CORE_ARCHIVAL
    return template.format(scenario_setting=p.MEMORY_AGENT_SETTINGS[scenario], memory_content=memory_content)


def max_steps_per_turn() -> int:
    """bfcl-eval's limit of model steps in one user turn (``MAXIMUM_STEP_LIMIT``)."""
    return int(_prompts().MAXIMUM_STEP_LIMIT)


def join_system(*parts: str) -> str:
    """System texts joined as bfcl-eval joins them (the added text first, a blank line between)."""
    return "\n\n".join(p for p in parts if p)
