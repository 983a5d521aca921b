"""Train with plain TRL ``GRPOTrainer`` against a served suite env, the way TRL's OpenEnv guide
trains on OpenEnv's Wordle or Echo servers: an ``environment_factory`` class that holds an
OpenEnv client, exposes the env's action as a tool, and keeps the reward TRL reads.

    agentgym serve TextWorld-v0 --port 8000 &
    python examples/trl_openenv_textworld.py --env-url http://127.0.0.1:8000 --model Qwen/Qwen3-0.6B

``--model tiny`` uses the suite's tiny random test model (one quick step on a CPU).
"""

from __future__ import annotations

import argparse
from typing import Any

from datasets import Dataset
from transformers import AutoTokenizer
from trl import GRPOConfig, GRPOTrainer

from agentgym_suite.integrations.trl import with_hermes_response_parsing
from agentgym_suite.serving.client import SuiteAction, SuiteEnvClient

PROMPT = ("You are playing a text adventure. Call the `act` tool with one command at a time "
          "(e.g. 'go east', 'take coin') until you win.")


def make_environment_class(env_url: str) -> type:
    """The ``environment_factory`` class: one OpenEnv session per rollout, as in TRL's guide."""

    class TextWorldEnv:
        def __init__(self) -> None:
            self.client = SuiteEnvClient(base_url=env_url).sync()
            self.reward = 0.0
            self.done = False
            self.steps = 0

        def reset(self, **kwargs: Any) -> str | None:
            seed = kwargs.get("seed")
            result = self.client.reset(seed=None if seed is None else int(seed))
            self.reward, self.done, self.steps = 0.0, False, 0
            observation = result.observation
            commands = ", ".join(observation.admissible_actions or [])
            return observation.text + (f"\nAdmissible commands: {commands}" if commands else "")

        def act(self, command: str) -> str:
            """
            Send one command to the text game and return what it answers.

            Args:
                command: the command to execute, e.g. "go east" or "take coin".

            Returns:
                The game's answer.
            """
            if self.done:
                return "The game is over; no further commands are accepted."
            result = self.client.step(SuiteAction(message=command))
            self.steps += 1
            self.reward += float(result.reward or 0.0)
            self.done = result.done
            return result.observation.text

    return TextWorldEnv


def reward_func(environments: list[Any], **kwargs: Any) -> list[float]:
    """The episode return each env collected (TRL passes the rollouts' env instances)."""
    return [env.reward for env in environments]


def build_trainer(model: str, env_url: str, output_dir: str, *, processing_class: Any = None, episodes: int = 4,
                  **overrides: Any) -> GRPOTrainer:
    """A plain TRL GRPOTrainer on the served env (``overrides`` go to ``GRPOConfig``)."""
    dataset = Dataset.from_dict({"prompt": [[{"role": "user", "content": PROMPT}]] * episodes,
                                 "seed": list(range(episodes))})
    settings = {"max_steps": 1, "per_device_train_batch_size": 2, "num_generations": 2, "max_completion_length": 64,
                "max_tool_calling_iterations": 4, "report_to": "none", "logging_steps": 1,
                "chat_template_kwargs": {"enable_thinking": False}, **overrides}
    return GRPOTrainer(model=model, reward_funcs=reward_func, train_dataset=dataset,
                       args=GRPOConfig(output_dir=output_dir, **settings),
                       environment_factory=make_environment_class(env_url), processing_class=processing_class)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env-url", default="http://127.0.0.1:8000", help="the `agentgym serve TextWorld-v0` server")
    parser.add_argument("--model", default="tiny", help="model path or hub id; 'tiny' = the suite's test model")
    parser.add_argument("--max-steps", type=int, default=1)
    parser.add_argument("--output-dir", default="runs/trl_openenv_textworld")
    cli = parser.parse_args()
    model, tokenizer, overrides = cli.model, None, {}
    if model == "tiny":
        from agentgym_suite.llm.tiny import tiny_model_dir

        model = str(tiny_model_dir())
        tokenizer = with_hermes_response_parsing(AutoTokenizer.from_pretrained(model))
        overrides = {"bf16": False, "use_cpu": True, "gradient_checkpointing": False}
    build_trainer(model, cli.env_url, cli.output_dir, processing_class=tokenizer, max_steps=cli.max_steps,
                  **overrides).train()


if __name__ == "__main__":
    main()
