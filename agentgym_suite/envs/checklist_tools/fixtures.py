"""A small training set in EnvACE's published checklist format, for tests and demos.

Two tasks over a tiny weather-and-calendar tool set: one single-turn, one over two user
turns. Its standards carry no machine check, as in the published data, so a judge grades them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "description": "Current weather of a city.",
                                      "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "add_event", "description": "Add a calendar event.",
                                      "parameters": {"type": "object", "properties": {"title": {"type": "string"}, "date": {"type": "string"}},
                                                     "required": ["title", "date"]}}},
]


def _call(i: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def _standard(question: str, focus: str, condition: str, snippet: str, weight: float, required: bool) -> dict[str, Any]:
    return {"question": question, "focus_on": focus, "pass_condition": condition,
            "failure_examples": ["the assistant does something else"], "evidence": [{"snippet": snippet}],
            "weight": weight, "required_for_next_turn": required}


def items() -> list[dict[str, Any]]:
    """The fixture items."""
    system = {"role": "system", "content": "You are a helpful assistant with tools."}
    one = [system, {"role": "user", "content": "What is the weather in Oslo?"},
           {"role": "assistant", "content": "", "tool_calls": [_call(0, "get_weather", {"city": "Oslo"})]},
           {"role": "tool", "name": "get_weather", "content": json.dumps({"city": "Oslo", "celsius": 4, "sky": "cloudy"})},
           {"role": "assistant", "content": "It is 4 degrees and cloudy in Oslo."}]
    two = [system, {"role": "user", "content": "Is it sunny in Rome?"},
           {"role": "assistant", "content": "", "tool_calls": [_call(0, "get_weather", {"city": "Rome"})]},
           {"role": "tool", "name": "get_weather", "content": json.dumps({"city": "Rome", "celsius": 21, "sky": "sunny"})},
           {"role": "assistant", "content": "Yes, sunny and 21 degrees."},
           {"role": "user", "content": "Then add a picnic on 2025-06-01."},
           {"role": "assistant", "content": "", "tool_calls": [_call(1, "add_event", {"title": "picnic", "date": "2025-06-01"})]},
           {"role": "tool", "name": "add_event", "content": json.dumps({"event_id": "ev-1", "title": "picnic"})},
           {"role": "assistant", "content": "Added the picnic on 2025-06-01."}]
    weather = _standard("Does the assistant look up the weather of the city asked about?", "assistant.tool_calls",
                        "get_weather is called with the city from the user's message", '{"name": "get_weather"}', 0.5, True)
    answer = _standard("Does the assistant answer with the weather it found?", "assistant.content",
                       "the reply states the temperature or sky from the tool result", "degrees", 0.5, False)
    event = _standard("Does the assistant add the event?", "assistant.tool_calls",
                      "add_event is called with the title and date the user gave", '{"name": "add_event"}', 0.5, True)
    confirm = _standard("Does the assistant confirm the event?", "assistant.content", "the reply confirms the event", "Added", 0.5, False)
    return [
        {"data_source": "checklist", "messages": one[:2], "extra_info": {
            "index": 0, "original_index": "weather-1", "tools": json.dumps(TOOLS), "messages": one,
            "interaction_kwargs": {"checklist_list": [[[weather, answer]]]}}},
        {"data_source": "checklist", "messages": two[:2], "extra_info": {
            "index": 1, "original_index": "plan-2", "tools": json.dumps(TOOLS), "messages": two,
            "interaction_kwargs": {"checklist_list": [[[weather, answer], [event, confirm]]]}}},
    ]


def snippet_rule(prompt: str) -> bool:
    """The fixtures' verdict rule: a standard passes when its reference snippet (for a call
    snippet, the tool name) appears in the messages under evaluation of a released judge prompt."""
    try:
        snippets = json.loads(prompt.split("**Reference snippet:** ", 1)[1].split("\n\n# Previous Messages", 1)[0])
        current = prompt.split("# Current Messages to Evaluate", 1)[1].split("# Special rule of tool call", 1)[0]
    except (IndexError, json.JSONDecodeError):
        return False
    needles = [json.loads(s).get("name", s) if s.startswith("{") else s for s in snippets if isinstance(s, str)]
    return bool(needles) and all(n in current for n in needles)


def snippet_judge(prompt: str) -> str:
    """A deterministic stand-in judge for the fixtures: a verdict in the released schema by :func:`snippet_rule`."""
    answer = snippet_rule(prompt)
    return json.dumps({"high_level_understanding_of_the_question": "fixture rule",
                       "analysis_of_if_focus_on": "fixture rule", "analysis_of_pass_condition": "fixture rule",
                       "analysis_of_failure_examples": "not triggered", "answer": answer})


def write_fixtures(folder: Path) -> Path:
    """Write the fixture set as ``train.json`` in ``folder``; return the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "train.json").write_text(json.dumps(items(), indent=1), encoding="utf-8")
    return folder
