"""The docs' "A new tool env" example (docs/extending.md), run as written.

The example file must appear in the docs page verbatim, and its registration line must match the
docs page's ``ENV_ENTRIES`` line, so the documentation cannot drift from what is tested. Adding
the env touches nothing but its own module and that one line: the rehearsal env, the tests
and the registry code stay as they are.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Iterator

import gymnasium as gym
import pytest

from agentgym_suite.methods.envace.scripted import ScriptedBackend

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "weather_tool_env.py"
README = (ROOT / "docs" / "extending.md").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def example() -> Iterator[ModuleType]:
    """The example module, importable by name so Gymnasium can load its entry point."""
    spec = importlib.util.spec_from_file_location("weather_tool_env", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    gym.registry.pop(module.ENTRY.id, None)
    sys.modules.pop(spec.name, None)


def test_the_readme_shows_the_example_file_verbatim() -> None:
    assert EXAMPLE.read_text(encoding="utf-8").strip() in README


def test_the_readme_registration_line_is_the_examples_entry(example: ModuleType) -> None:
    line = re.search(r'^\s*(EnvEntry\("Weather-v0".*\)),\s*$', README, flags=re.MULTILINE)
    assert line is not None, "the README shows no ENV_ENTRIES line for Weather-v0"
    call = ast.parse(line.group(1), mode="eval").body
    assert isinstance(call, ast.Call)
    env_id, entry_point, steps, summary = (ast.literal_eval(arg) for arg in call.args)
    assert entry_point == "agentgym_suite.envs.weather.env:WeatherEnv"  # where it lives inside the suite
    entry = example.ENTRY
    assert (env_id, steps, summary) == (entry.id, entry.max_episode_steps, entry.summary)
    assert entry.entry_point == "weather_tool_env:WeatherEnv"  # the same class, loaded from examples/


def test_the_example_runs(example: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    example.main()  # register, check_env, oracle, rehearsal with a scripted world model
    assert "a rehearsed episode scores 1.0" in capsys.readouterr().out


class RecordingWorld(ScriptedBackend):
    """The example's scripted world model, keeping every simulator prompt it is sent."""

    def __init__(self, fn: Any) -> None:
        super().__init__(fn)
        self.prompts: list[str] = []

    def generate(self, prompts: Any, params: Any, tools: Any = None) -> Any:
        self.prompts += [p[-1]["content"] if isinstance(p, list) else str(p) for p in prompts]
        return super().generate(prompts, params, tools)


def test_rehearsal_reaches_the_example_only_through_its_hooks(example: ModuleType) -> None:
    example.main()
    world = RecordingWorld(example.scripted_world)
    criteria_seen: list[list[str]] = []

    def judge(transcript: str, criteria: list[str]) -> list[bool]:
        criteria_seen.append(criteria)
        return ["64.4" in transcript for _ in criteria]

    env = gym.make("EnvACE-Rehearsal-v0", base_env="Weather-v0", world_model=world, reward_mode="judge", judge=judge,
                   grounding="task")  # the example's recorded_examples (another city's run) are shown as they are
    env.reset(options={"task_id": "paris"})
    for action in env.unwrapped.oracle():
        _, reward, terminated, _, info = env.step(action)
    assert terminated and reward == 1.0 and info["won"]
    # the world model answered both calls and saw the recorded examples for another city
    assert world.calls == [("get_temperature", {"city": "paris"}), ("to_fahrenheit", {"celsius": 18.0})]
    assert all('"city": "cairo"' in prompt for prompt in world.prompts)
    # nothing ran: the log holds the imagined 20 degrees, not Paris's real 18
    assert env.unwrapped.tool_log[0].result == {"city": "paris", "celsius": 20.0}
    # the judge graded the env's own success criterion, then the gold calls
    [criteria] = criteria_seen
    assert criteria[0] == "The assistant tells the user it is 64.4 degrees Fahrenheit."
    assert [c.split(" with ")[0] for c in criteria[1:]] == ["The assistant calls get_temperature",
                                                             "The assistant calls to_fahrenheit"]
