"""Suite envs as verifiers environments (``agentgym_suite.integrations.verifiers.load_environment``),
evaluated through verifiers' own API with the same policy ``agentgym eval`` plays."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

vf = pytest.importorskip("verifiers")

from verifiers.types import Response, ResponseMessage, ToolCall  # noqa: E402

from agentgym_suite.evaluation.runner import evaluate  # noqa: E402
from agentgym_suite.integrations.verifiers import load_environment  # noqa: E402
from agentgym_suite.rollout.seeding import episode_seed  # noqa: E402
from reliability.registered import cheap_kwargs  # noqa: E402


class SuiteOracleClient(vf.Client):
    """A verifiers client whose every reply is the suite oracle's next action for the rollout's own env,
    the policy ``agentgym eval --agent oracle`` plays; with ``native_calls`` its tool calls come as the
    message's native tool calls (as a function-calling model sends them)."""

    def __init__(self, native_calls: bool = False) -> None:
        super().__init__(None)
        self.native_calls = native_calls

    def setup_client(self, config: Any) -> None:
        return None

    async def to_native_tool(self, tool: Any) -> Any:
        return tool

    async def to_native_prompt(self, messages: Any) -> tuple[Any, dict]:
        return messages, {}

    async def get_native_response(self, prompt: Any, model: str, sampling_args: Any, tools: Any = None, **kwargs: Any) -> str:
        return kwargs["state"]["suite_env"].unwrapped.oracle()[0]

    async def raise_from_native_response(self, response: Any) -> None:
        return None

    async def from_native_response(self, response: str) -> Any:
        from agentgym_suite.core.tool_calls import parse_tool_calls

        parsed = parse_tool_calls(response) if self.native_calls else None
        if parsed is not None and parsed.calls:
            calls = [ToolCall(id=f"c{i}", name=c.name, arguments=json.dumps(c.arguments)) for i, c in enumerate(parsed.calls)]
            message = ResponseMessage(content=parsed.content, tool_calls=calls, finish_reason="tool_calls", is_truncated=False)
        else:
            message = ResponseMessage(content=response, finish_reason="stop", is_truncated=False)
        return Response(id="oracle", created=0, model="oracle", message=message)

    async def close(self) -> None:
        return None


def eval_and_verifiers(env_id: str, env_kwargs: dict[str, Any], tmp_path: Path, episodes: int,
                       native_calls: bool = False) -> tuple[list[tuple[str, float, bool]], list[tuple[str, float, bool]]]:
    """(task, return, won) per episode from ``agentgym eval``'s runner and from verifiers' ``evaluate``."""
    result = evaluate(env_id, "oracle", out_dir=tmp_path / "eval", episodes=episodes, seed=3, env_kwargs=env_kwargs,
                      progress=False)
    records = sorted(result.records, key=lambda r: r.task_id)
    ours = [(r.task_id, float(r.episode_return), bool(r.won)) for r in records]
    environment = load_environment(env_id, task_ids=[r.task_id for r in records], seeds=[r.seed for r in records],
                                   **env_kwargs)
    outputs = environment.evaluate_sync(SuiteOracleClient(native_calls), "oracle")["outputs"]
    theirs = []
    for output in sorted(outputs, key=lambda o: o["example_id"]):
        assert output["error"] is None, output["error"]
        theirs.append((records[output["example_id"]].task_id, float(output["reward"]), bool(output["metrics"]["suite_won"])))
    return ours, theirs


@pytest.mark.parametrize("native_calls", [False, True], ids=["text-calls", "native-calls"])
def test_synthetic_tools_through_verifiers_evaluate_pays_what_agentgym_eval_pays(tmp_path: Path, native_calls: bool) -> None:
    ours, theirs = eval_and_verifiers("SyntheticTools-v0", {}, tmp_path, episodes=3, native_calls=native_calls)
    assert ours == theirs and all(won for _, _, won in ours)


@pytest.mark.slow
def test_textworld_through_verifiers_evaluate_pays_what_agentgym_eval_pays(tmp_path: Path) -> None:
    kwargs = cheap_kwargs("TextWorld-v0", tmp_path / "data")
    ours, theirs = eval_and_verifiers("TextWorld-v0", kwargs, tmp_path, episodes=2)
    assert ours == theirs and any(won for _, _, won in ours)


def test_the_dataset_carries_the_opening_messages_and_tools() -> None:
    environment = load_environment("SyntheticTools-v0", num_tasks=2, seed=5)
    rows = list(environment.get_eval_dataset())
    assert len(rows) == 2
    info = json.loads(rows[0]["info"])  # a JSON string in the dataset, as verifiers stores nested info
    assert rows[0]["prompt"][-1]["role"] == "user" and info["seed"] == episode_seed(5, info["task_id"])  # as eval
    assert info["tool_defs"] and {"name", "description", "parameters"} <= set(info["tool_defs"][0])


def test_hostile_model_messages_are_the_suites_invalid_actions(tmp_path: Path) -> None:
    """Malformed native calls and junk text go to the env as they are; the rollout goes on and is scored."""

    class JunkClient(SuiteOracleClient):
        async def get_native_response(self, prompt, model, sampling_args, tools=None, **kwargs):
            return "junk"

        async def from_native_response(self, response):
            call = ToolCall(id="c0", name="no_such_tool", arguments="{not json")
            message = ResponseMessage(content="\x00", tool_calls=[call], finish_reason="tool_calls", is_truncated=False)
            return Response(id="junk", created=0, model="junk", message=message)

    environment = load_environment("SyntheticTools-v0", num_tasks=1, max_turns=3)
    (output,) = environment.evaluate_sync(JunkClient(), "junk")["outputs"]
    assert output["error"] is None and output["reward"] == 0.0 and output["metrics"]["num_turns"] == 3


def test_verifiers_own_loader_finds_it_by_module_path() -> None:
    """What ``vf-eval agentgym_suite.integrations.verifiers.environment -a '{"suite_env": ...}'`` loads."""
    environment = vf.load_environment("agentgym_suite.integrations.verifiers.environment",
                                      suite_env="SyntheticTools-v0", num_tasks=2)
    assert environment.suite_env_id == "SyntheticTools-v0" and len(environment.get_eval_dataset()) == 2
    with pytest.raises(TypeError, match="name the suite env"):
        load_environment(num_tasks=2)
