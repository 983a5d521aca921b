"""Fixed inputs for the EnvACE conformance suite, shared by the regeneration script (run against
the released code in a scratch interpreter) and ``tests/conformance/test_envace.py`` (run against
ours). Plain data and one verdict rule; nothing here imports the project or upstream."""

from __future__ import annotations

import json
from typing import Any

# ---------------------------------------------------------------------- advantages
# One generation batch of rows: task (uid), role, trajectory, the trajectory's summed turn rewards
# and the checklist shape that normalises them, and the row's generated text ("" = empty row).
ADVANTAGE_ROWS: list[dict[str, Any]] = [
    # task T1: three trajectories; a (two closed turns of 1.0), b (one of 1.0), c (ended on a malformed call)
    *[{"uid": "T1", "role": "caller", "traj": "a", "episode_reward": 2.0, "text": t} for t in ("call", "", "reply")],
    *[{"uid": "T1", "role": "simulator", "traj": "a", "episode_reward": 2.0, "text": t} for t in ("{}", "{}")],
    *[{"uid": "T1", "role": "caller", "traj": "b", "episode_reward": 1.0, "text": t} for t in ("call", "reply")],
    {"uid": "T1", "role": "simulator", "traj": "b", "episode_reward": 1.0, "text": "  "},
    {"uid": "T1", "role": "caller", "traj": "c", "episode_reward": 0.0, "text": "<tool_call>{bad"},
    # task T2: one trajectory; its single simulator row is a group of one
    *[{"uid": "T2", "role": "caller", "traj": "d", "episode_reward": 1.5, "text": t} for t in ("call", "reply")],
    {"uid": "T2", "role": "simulator", "traj": "d", "episode_reward": 1.5, "text": "{}"},
    # task T3: a lone caller row, two checklists of one turn; and a lone empty caller row
    {"uid": "T3", "role": "caller", "traj": "e", "episode_reward": 0.5, "text": "reply", "num_checklists": 2,
     "max_num_turns": 1},
    {"uid": "T4", "role": "caller", "traj": "f", "episode_reward": 1.0, "text": ""},
]
"""Rows default to one checklist of two turns (``num_checklists=1``, ``max_num_turns=2``)."""

# ---------------------------------------------------------------------- the Caller parser
_W = '{"name": "get_weather", "arguments": {"city": "Rome"}}'
CALLER_MESSAGES: dict[str, str] = {
    "plain_reply": "It is sunny in Rome.",
    "one_block": "Checking.\n<tool_call>\n" + _W + "\n</tool_call>",
    "two_blocks": "Both.\n<tool_call>\n" + _W + "\n</tool_call>\n<tool_call>\n"
                  '{"name": "add_event", "arguments": {"title": "x", "date": "d"}}\n</tool_call>',
    "list_in_a_block": '\n<tool_call>\n[{"name": "a", "arguments": {}}, {"name": "b", "parameters": {"x": 1}}]\n</tool_call>',
    "parameters_key": '\n<tool_call>\n{"name": "a", "parameters": {"y": 2}, "arguments": {"z": 3}}\n</tool_call>',
    "think_first": "<think>I should look it up.</think>\n\n<tool_call>\n" + _W + "\n</tool_call>",
    "text_after_the_block": "Checking.\n<tool_call>\n" + _W + "\n</tool_call>\nthen I will answer.",
    "string_arguments": '\n<tool_call>\n{"name": "a", "arguments": "{\\"x\\": 1}"}\n</tool_call>',
    "one_line_block": "Checking.<tool_call>" + _W + "</tool_call>",
    "block_at_the_start": "<tool_call>\n" + _W + "\n</tool_call>",
    "unclosed_block": "Checking.\n<tool_call>\n" + _W,
    "tag_mentioned": "I would write <tool_call> tags here.",
    "bad_json": "Checking.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {city: Rome}}\n</tool_call>",
    "no_arguments": '\n<tool_call>\n{"name": "get_weather"}\n</tool_call>',
    "null_arguments": '\n<tool_call>\n{"name": "get_weather", "arguments": null}\n</tool_call>',
    "blank_name": '\n<tool_call>\n{"name": "  ", "arguments": {}}\n</tool_call>',
    "number_name": '\n<tool_call>\n{"name": 3, "arguments": {}}\n</tool_call>',
    "not_an_object": '\n<tool_call>\n"get_weather"\n</tool_call>',
    "good_then_bad": "Two.\n<tool_call>\n" + _W + "\n</tool_call>\n<tool_call>\n{oops}\n</tool_call>",
}
PARSER_DEPARTURES = {"block_at_the_start": "the released Caller always thinks first, so its blocks follow a newline; "
                                           "ours may start the message (released_calls module docstring)"}

# ---------------------------------------------------------------------- judge replies
_KEYS = ("high_level_understanding_of_the_question", "analysis_of_if_focus_on", "analysis_of_pass_condition",
         "analysis_of_failure_examples")


def verdict_text(value_of_answer: Any, **changes: Any) -> str:
    """A verdict in the released schema (``changes`` add, replace or, with None, drop keys)."""
    value: dict[str, Any] = {k: "analysis" for k in _KEYS}
    value["answer"] = value_of_answer
    for key, new in changes.items():
        if new is None:
            value.pop(key, None)
        else:
            value[key] = new
    return json.dumps(value)


JUDGE_REPLIES: dict[str, str] = {
    "valid_true": verdict_text(True),
    "valid_false": verdict_text(False),
    "answer_as_text": verdict_text("true"),
    "not_json": "The standard is met.",
    "fenced_json": "```json\n" + verdict_text(True) + "\n```",
    "json_then_words": verdict_text(True) + " I am sure.",
    "empty": "",
    "json_list": "[true]",
    "answer_missing": verdict_text(True, answer=None),
    "only_the_answer": json.dumps({"answer": True}),
    "answer_one": verdict_text(1),
    "extra_key": verdict_text(True, confidence="high"),
}
JUDGE_DEPARTURES = {
    name: "upstream requests the schema from the server (guided decoding), so only its 'answer' is read; "
          "a backend without guided decoding is checked against the whole schema here"
    for name in ("only_the_answer", "answer_one", "extra_key")
}
JUDGE_RETRY = 5
"""``JUDGE_RETRY`` of the released launcher: requests per standard while the reply is not JSON."""

# ---------------------------------------------------------------------- episodes
TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "description": "Current weather of a city.",
                                      "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                                     "required": ["city"]}}},
    {"type": "function", "function": {"name": "add_event", "description": "Add a calendar event.",
                                      "parameters": {"type": "object", "properties": {"title": {"type": "string"},
                                                                                      "date": {"type": "string"}},
                                                     "required": ["title", "date"]}}},
]


def _standard(question: str, focus: str, snippet: str, required: bool) -> dict[str, Any]:
    return {"question": question, "focus_on": focus, "pass_condition": question, "failure_examples": ["something else"],
            "evidence": [{"snippet": snippet}], "weight": 0.5, "required_for_next_turn": required}


def _call(i: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


SYSTEM = {"role": "system", "content": "You are a helpful assistant with tools."}
CONVERSATION = [
    SYSTEM, {"role": "user", "content": "Is it sunny in Rome?"},
    {"role": "assistant", "content": "", "tool_calls": [_call(0, "get_weather", {"city": "Rome"})]},
    {"role": "tool", "name": "get_weather", "content": json.dumps({"city": "Rome", "celsius": 21, "sky": "sunny"})},
    {"role": "assistant", "content": "Yes, sunny and 21 degrees."},
    {"role": "user", "content": "Then add a picnic on 2025-06-01."},
    {"role": "assistant", "content": "", "tool_calls": [_call(1, "add_event", {"title": "picnic", "date": "2025-06-01"})]},
    {"role": "tool", "name": "add_event", "content": json.dumps({"event_id": "ev-1", "title": "picnic"})},
    {"role": "assistant", "content": "Added the picnic on 2025-06-01."},
]
CHECKLIST_LIST = [[
    [_standard("Does the assistant look up the weather?", "assistant.tool_calls", '{"name": "get_weather"}', True),
     _standard("Does the assistant answer with the weather?", "assistant.content", "degrees", False)],
    [_standard("Does the assistant add the event?", "assistant.tool_calls", '{"name": "add_event"}', True),
     _standard("Does the assistant confirm the event?", "assistant.content", "Added", False)],
]]
TASK_ID = "plan-2"
TASK_ITEM = {"data_source": "checklist", "messages": CONVERSATION[:2], "extra_info": {
    "index": 0, "original_index": TASK_ID, "tools": json.dumps(TOOLS), "messages": CONVERSATION,
    "interaction_kwargs": {"checklist_list": CHECKLIST_LIST}}}
"""The task in the published checklist format (``ChecklistDataset`` / ``MCPChecklistTool``)."""


def snippet_verdict(prompt: str) -> bool:
    """The fixed judge of the episodes: a standard passes when its reference snippet (for a call
    snippet, the tool name) appears in the messages under evaluation of the released judge prompt."""
    try:
        snippets = json.loads(prompt.split("**Reference snippet:** ", 1)[1].split("\n\n# Previous Messages", 1)[0])
        current = prompt.split("# Current Messages to Evaluate", 1)[1].split("# Special rule of tool call", 1)[0]
    except (IndexError, json.JSONDecodeError):
        return False
    needles = [json.loads(s).get("name", s) if s.startswith("{") else s for s in snippets if isinstance(s, str)]
    return bool(needles) and all(n in current for n in needles)


def _block(name: str, arguments: dict[str, Any]) -> str:
    return "\n<tool_call>\n" + json.dumps({"name": name, "arguments": arguments}) + "\n</tool_call>"


def _result(value: Any) -> str:
    return "<think>as recorded</think>\n<execution_result>\n" + json.dumps(value) + "\n</execution_result>"


CALL_W = "I will look it up." + _block("get_weather", {"city": "Rome"})
REPLY_W = "Yes, sunny and 21 degrees."
CALL_E = "Adding it." + _block("add_event", {"title": "picnic", "date": "2025-06-01"})
REPLY_E = "Added the picnic on 2025-06-01."
SIM_W = _result({"city": "Rome", "celsius": 21, "sky": "sunny"})
SIM_E = _result({"event_id": "ev-1", "title": "picnic"})
SIM_ERROR = _result({"error_tool_call": {"code": "INVALID_PARAMETERS", "message": "date", "details": ""}})

EPISODES: dict[str, dict[str, list[str]]] = {
    "gold": {"caller": [CALL_W, REPLY_W, CALL_E, REPLY_E], "simulator": [SIM_W, SIM_E]},
    "simulator_error_in_turn_2": {"caller": [CALL_W, REPLY_W, CALL_E, REPLY_E], "simulator": [SIM_W, SIM_ERROR]},
    "simulator_breaks_the_contract": {"caller": [CALL_W, REPLY_W], "simulator": ["The weather is nice."]},
    "malformed_json_in_turn_2": {"caller": [CALL_W, REPLY_W, "Adding.\n<tool_call>\n{not json}\n</tool_call>", REPLY_E],
                                 "simulator": [SIM_W, SIM_E]},
    "one_line_block_in_turn_2": {"caller": [CALL_W, REPLY_W, "Adding.<tool_call>" + json.dumps(
        {"name": "add_event", "arguments": {"title": "picnic", "date": "2025-06-01"}}) + "</tool_call>", REPLY_E],
                                 "simulator": [SIM_W, SIM_E]},
    "no_arguments_in_turn_1": {"caller": ['Checking.\n<tool_call>\n{"name": "get_weather"}\n</tool_call>', REPLY_W],
                               "simulator": [SIM_W]},
    "required_standard_unmet": {"caller": ["It is 21 degrees, I think.", CALL_E, REPLY_E], "simulator": [SIM_E]},
    "parallel_calls": {"caller": ["Two cities." + _block("get_weather", {"city": "Rome"}) + _block(
        "get_weather", {"city": "Oslo"}), REPLY_W, CALL_E, REPLY_E], "simulator": [SIM_W, SIM_W, SIM_E]},
    "unknown_tool_answered": {"caller": ["Launching." + _block("launch_rocket", {}), REPLY_W, CALL_E, REPLY_E],
                              "simulator": [_result({"launched": True}), SIM_E]},
}
"""Scripted Caller messages and Simulator generations, each consumed in order until the episode ends."""
