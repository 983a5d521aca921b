"""The four bridges of docs/integrations.md, each run once (offline, no model): ``python examples/integrations_bridges.py``.

1. ``MCP-v0``: an MCP server (agentgym_suite/integrations/mcp/demo_server.py) played by the oracle on two tasks;
2. ``agentgym serve --mcp``: SyntheticTools-v0 served as an MCP server, played by the mcp SDK's own client;
3. ``Verifiers-v0``: a verifiers SingleTurnEnv played as a suite env;
4. ``load_environment``: SyntheticTools-v0 evaluated through verifiers' own ``evaluate``, the replies
   given by a client that plays the suite's oracle.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import gymnasium as gym

import agentgym_suite  # noqa: F401  (registers MCP-v0 and Verifiers-v0)

HERE = Path(__file__).resolve().parent
TASKS = [
    {"id": "sum", "instruction": "What is 2.5 + 4? Use the add tool.",
     "expected_calls": [{"name": "add", "arguments": {"a": 2.5, "b": 4}}], "answer": {"contains": "6.5"}},
    {"id": "note", "instruction": "Note down 'buy milk'.",
     "expected_calls": [{"name": "save_note", "arguments": {"text": "buy milk"}}], "oracle_answer": "Noted."},
]


def mcp_server_as_env() -> list[float]:
    """Bridge 1: the oracle's reward on each task of an MCP server played as ``MCP-v0``."""
    env = gym.make("MCP-v0", server=f"stdio:{sys.executable} -m agentgym_suite.integrations.mcp.demo_server", tasks=TASKS)
    rewards = []
    try:
        for task_id in env.unwrapped.task_ids():
            env.reset(options={"task_id": task_id})
            terminated = truncated = False
            while not (terminated or truncated):
                _, reward, terminated, truncated, info = env.step(env.unwrapped.oracle()[0])
            rewards.append(reward)
    finally:
        env.close()
    return rewards


async def suite_env_as_mcp_server() -> dict[str, Any]:
    """Bridge 2: ``agentgym serve --mcp SyntheticTools-v0 --transport stdio``, played by the SDK's client
    with the moves a local oracle makes; returns the server's ``score()``."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from agentgym_suite.core.tool_calls import parse_tool_calls

    local = gym.make("SyntheticTools-v0")
    local.reset(seed=1)
    params = StdioServerParameters(command=sys.executable, args=["-m", "agentgym_suite.cli", "serve", "SyntheticTools-v0",
                                                                 "--mcp", "--transport", "stdio"])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.call_tool("reset", {"seed": 1})
        terminated = truncated = False
        while not (terminated or truncated):
            action = local.unwrapped.oracle()[0]
            _, _, terminated, truncated, _ = local.step(action)
            message = parse_tool_calls(action)
            for call in message.calls:
                await session.call_tool(call.name, call.arguments)
            if not message.calls:
                await session.call_tool("send_message", {"text": action})
        local.close()
        return (await session.call_tool("score", {})).structuredContent


def verifiers_env_as_suite_env() -> float:
    """Bridge 3: a verifiers SingleTurnEnv with an exact-match rubric, played as ``Verifiers-v0``."""
    import verifiers as vf
    from datasets import Dataset

    def exact(completion: Any, answer: str, **kwargs: Any) -> float:
        return float(completion[-1]["content"].strip() == answer)

    data = Dataset.from_list([{"question": "What is 6 * 7?", "answer": "42"}])
    environment = vf.SingleTurnEnv(dataset=data, eval_dataset=data, rubric=vf.Rubric(funcs=[exact]))
    env = gym.make("Verifiers-v0", env=environment)
    env.reset(options={"task_id": "0"})
    _, reward, _, _, _ = env.step("42")
    env.close()
    return float(reward)


def suite_env_as_verifiers_env() -> list[float]:
    """Bridge 4: SyntheticTools-v0 as a verifiers environment, evaluated with ``Environment.evaluate_sync``."""
    import verifiers as vf
    from verifiers.types import Response, ResponseMessage

    from agentgym_suite.integrations.verifiers import load_environment

    class OracleClient(vf.Client):
        """Replies with the suite oracle's next action for the rollout's env (a model client goes here)."""

        def __init__(self) -> None:
            super().__init__(None)

        def setup_client(self, config: Any) -> None:
            return None

        async def to_native_tool(self, tool: Any) -> Any:
            return tool

        async def to_native_prompt(self, messages: Any) -> tuple[Any, dict]:
            return messages, {}

        async def get_native_response(self, prompt: Any, model: str, sampling_args: Any, tools: Any = None,
                                      **kwargs: Any) -> str:
            return kwargs["state"]["suite_env"].unwrapped.oracle()[0]

        async def raise_from_native_response(self, response: Any) -> None:
            return None

        async def from_native_response(self, response: str) -> Any:
            return Response(id="oracle", created=0, model="oracle",
                            message=ResponseMessage(content=response, finish_reason="stop", is_truncated=False))

        async def close(self) -> None:
            return None

    environment = load_environment("SyntheticTools-v0", num_tasks=3, seed=0)
    outputs = environment.evaluate_sync(OracleClient(), "oracle")["outputs"]
    return [float(o["reward"]) for o in outputs]


def main() -> None:
    print("1. MCP-v0 oracle rewards:", mcp_server_as_env())
    print("2. agentgym serve --mcp, score():", {k: v for k, v in anyio.run(suite_env_as_mcp_server).items() if k != "info"})
    print("3. Verifiers-v0 reward:", verifiers_env_as_suite_env())
    print("4. verifiers evaluate on SyntheticTools-v0:", suite_env_as_verifiers_env())


if __name__ == "__main__":
    main()
