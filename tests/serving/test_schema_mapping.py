"""How Remote-v0 maps a foreign OpenEnv env's action model (from /schema) and observations to text."""

from __future__ import annotations

from agentgym_suite.serving.remote_env import SchemaMapping

TEXT_ACTION = {"properties": {"metadata": {"type": "object"}, "message": {"type": "string"}}, "required": ["message"]}
JSON_ACTION = {"properties": {"metadata": {"type": "object"}, "row": {"type": "integer"}, "col": {"type": "integer"}},
               "required": ["row", "col"]}


def test_one_text_field_takes_the_action_text() -> None:
    mapping = SchemaMapping.from_schema(TEXT_ACTION)
    assert mapping.text_field == "message" and mapping.tools() is None
    assert mapping.action("go north") == ({"message": "go north"}, "")


def test_other_models_take_json_bare_or_as_a_tool_call() -> None:
    mapping = SchemaMapping.from_schema(JSON_ACTION)
    assert mapping.text_field is None
    [tool] = mapping.tools()
    assert tool["function"]["name"] == "step" and set(tool["function"]["parameters"]["properties"]) == {"row", "col"}
    assert mapping.action('{"row": 1, "col": 2}') == ({"row": 1, "col": 2}, "")
    call = 'I will move.\n<tool_call>\n{"name": "step", "arguments": {"row": 0, "col": 1}}\n</tool_call>'
    assert mapping.action(call) == ({"row": 0, "col": 1}, "")
    data, why = mapping.action("row one please")
    assert data is None and "row, col" in why
    data, why = mapping.action("[1, 2]")
    assert data is None and "list" in why


def test_observations_become_text() -> None:
    assert SchemaMapping.text({"prompt": "Guess a word", "metadata": {}, "done": False, "reward": None}) == "Guess a word"
    text = SchemaMapping.text({"board": [[0, 1]], "message": "your move", "hint": "", "metadata": {}})
    assert text == "board: [[0, 1]]\nmessage: your move"
