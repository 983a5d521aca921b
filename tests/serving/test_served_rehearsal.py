"""A served rehearsal env sends its world model's generations once, as generic role generations,
and a client reads EnvACE's records back from them with nothing lost."""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym
import pytest

import agentgym_suite.registration as registration
from agentgym_suite.methods.envace import format_execution_result
from agentgym_suite.methods.envace.generation import simulator_generations
from agentgym_suite.methods.envace.scripted import ScriptedBackend
from agentgym_suite.serving.environment import ServedEnv, ServeSpec
from agentgym_suite.serving.fields import info_from_observation
from agentgym_suite.serving.models import SuiteAction
from serving.conftest import ServerProcess

registration.register_all()

TWO_CALLS = ('\n<tool_call>\n{"name": "search_vehicles", "arguments": {"query": "A"}}\n</tool_call>'
             '\n<tool_call>\n{"name": "search_vehicles", "arguments": {"query": "B"}}\n</tool_call>')


def generation_keys(info: dict[str, Any]) -> list[str]:
    """The info keys whose value is a list of generation records (dicts with completion ids)."""
    return sorted(k for k, v in info.items()
                  if isinstance(v, list) and v and all(isinstance(g, dict) and "completion_ids" in g for g in v))


def test_a_served_rehearsal_step_carries_each_generation_once_and_round_trips() -> None:
    world = ScriptedBackend(lambda name, args: format_execution_result({"echo": args}))
    served = ServedEnv(ServeSpec("EnvACE-Rehearsal-v0", {"world_model": world, "base_env_kwargs": {"seed": 0}}))
    served.reset(seed=0, task_id="w0-t0")
    observation = served.step(SuiteAction(message=TWO_CALLS))
    wire = json.loads(observation.model_dump_json())  # what goes over the socket
    info = info_from_observation(wire)
    assert generation_keys(info) == ["role_generations"] and len(info["role_generations"]) == 2
    sent = served._env.unwrapped.episode_generations  # the env's own records, server side
    assert [g.arguments["query"] for g in sent] == ["A", "B"]
    assert simulator_generations(info) == sent
    served.close()


@pytest.mark.slow  # starts `agentgym serve` with the tiny world model (~20 s)
def test_remote_v0_reads_a_served_rehearsal_envs_generations_once() -> None:
    kwargs = {"world_model": "tiny", "base_env_kwargs": {"seed": 0, "num_tools": 5, "distractors": 0},
              "sampling": {"max_new_tokens": 8}, "max_prompt_chars": 3000}
    local = gym.make("EnvACE-Rehearsal-v0", **kwargs)
    local.reset(seed=1, options={"task_id": "w0-t0"})
    *_, local_info = local.step(TWO_CALLS)
    server = ServerProcess("EnvACE-Rehearsal-v0", kwargs)
    try:
        remote = gym.make("Remote-v0", url=server.url)
        remote.reset(seed=1, options={"task_id": "w0-t0"})
        *_, info = remote.step(TWO_CALLS)
        remote.close()
    finally:
        server.stop()
    assert generation_keys(info) == ["role_generations"]
    assert simulator_generations(info) == simulator_generations(local_info) != []  # same seed, same generations
