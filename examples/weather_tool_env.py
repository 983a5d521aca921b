"""A new tool env with rehearsal support: look up a city's temperature, answer in Fahrenheit.

Run it with ``python examples/weather_tool_env.py``: it registers the env, checks it with
Gymnasium's ``check_env``, plays its oracle, then rehearses the task in EnvACE-Rehearsal-v0
with a scripted world model answering the tool calls.
"""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym
from gymnasium.utils.env_checker import check_env

from agentgym_suite.core.tool_env import Conversation, ToolEnv
from agentgym_suite.methods.envace import format_execution_result
from agentgym_suite.methods.envace.scripted import ScriptedBackend
from agentgym_suite.registration import EnvEntry, register_entry

CELSIUS = {"cairo": 31.0, "oslo": 4.5, "paris": 18.0}
TOOLS = [
    {"type": "function", "function": {
        "name": "get_temperature", "description": "The current temperature of a city, in degrees Celsius.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
    {"type": "function", "function": {
        "name": "to_fahrenheit", "description": "Convert degrees Celsius to degrees Fahrenheit.",
        "parameters": {"type": "object", "properties": {"celsius": {"type": "number"}}, "required": ["celsius"]}}},
]


def fahrenheit(celsius: float) -> float:
    """Degrees Fahrenheit, one decimal."""
    return round(celsius * 9 / 5 + 32, 1)


def tool_call(name: str, **arguments: Any) -> str:
    """An assistant message that makes one tool call."""
    return "<tool_call>\n" + json.dumps({'name': name, 'arguments': arguments}) + "\n</tool_call>"


class WeatherEnv(ToolEnv):
    """One task per city: the agent must tell the user the temperature there in Fahrenheit."""

    benchmark = "weather"

    def task_ids(self) -> list[str]:
        return sorted(CELSIUS)

    def _start_conversation(self, task_id: str) -> Conversation:
        self.city, self.answer = task_id, ""
        question = f"How warm is it in {task_id.title()}, in degrees Fahrenheit?"
        handlers = {
            "get_temperature": lambda city: {"city": city, "celsius": CELSIUS[city.lower()]},
            "to_fahrenheit": lambda celsius: {"fahrenheit": fahrenheit(celsius)},
        }
        return Conversation(task=question, tools=TOOLS, handlers=handlers, first_user_message=question)

    def _user_reply(self, assistant_text: str) -> str | None:
        self.answer = assistant_text  # a text reply answers the question and ends the conversation
        return None

    def _evaluate(self) -> tuple[float, bool]:
        won = f"{fahrenheit(CELSIUS[self.city]):g}" in self.answer
        return float(won), won

    def oracle(self) -> list[str]:
        """The calls not made yet, then the answer."""
        made = {record.name for record in self.tool_log if record.ok}
        plan = [] if "get_temperature" in made else [tool_call("get_temperature", city=self.city)]
        plan += [] if "to_fahrenheit" in made else [tool_call("to_fahrenheit", celsius=CELSIUS[self.city])]
        return plan + [f"It is {fahrenheit(CELSIUS[self.city]):g} degrees Fahrenheit in {self.city.title()}."]

    # ---- rehearsal hooks: what a world model may see, and what a judge grades
    def recorded_examples(self) -> list[dict[str, Any]]:
        """Real results for another city, so the world model learns the format, not the answer."""
        other = next(city for city in sorted(CELSIUS) if city != self.city)
        return [
            {"name": "get_temperature", "arguments": {"city": other}, "result": {"city": other, "celsius": CELSIUS[other]}},
            {"name": "to_fahrenheit", "arguments": {"celsius": CELSIUS[other]},
             "result": {"fahrenheit": fahrenheit(CELSIUS[other])}},
        ]

    def success_criteria(self) -> list[str]:
        return [f"The assistant tells the user it is {fahrenheit(CELSIUS[self.city]):g} degrees Fahrenheit."]


ENTRY = EnvEntry("Weather-v0", f"{__name__}:WeatherEnv", 6, "city temperatures in Fahrenheit from two tools")


def scripted_world(name: str, arguments: dict[str, Any]) -> str:
    """A world model that imagines 20 degrees Celsius everywhere (in training, the policy plays it)."""
    if name == "get_temperature":
        return format_execution_result({"city": arguments["city"], "celsius": 20.0})
    return format_execution_result({"fahrenheit": fahrenheit(arguments["celsius"])})


def main() -> None:
    register_entry(ENTRY)
    env = gym.make("Weather-v0")
    check_env(env.unwrapped, skip_render_check=True)

    obs, info = env.reset(options={"task_id": "paris"})
    while True:
        obs, reward, terminated, truncated, info = env.step(env.unwrapped.oracle()[0])
        if terminated or truncated:
            break
    assert info["won"] and reward == 1.0

    rehearsal = gym.make("EnvACE-Rehearsal-v0", base_env="Weather-v0", world_model=ScriptedBackend(scripted_world))
    obs, info = rehearsal.reset(options={"task_id": "paris"})
    for action in rehearsal.unwrapped.oracle():  # planned at reset; the world model answers each call
        obs, reward, terminated, truncated, info = rehearsal.step(action)
    assert terminated and reward == 1.0 and info["reward_mode"] == "gold_calls"
    print("Weather-v0: check_env passed, the oracle wins, and a rehearsed episode scores", reward)


if __name__ == "__main__":
    main()
