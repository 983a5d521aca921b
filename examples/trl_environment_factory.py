"""Train with plain TRL on a suite env through ``environment_factory``.

    python examples/trl_environment_factory.py --env TextWorld-v0 --model tiny --max-steps 1

TRL runs the tool-calling loop itself: the model calls ``act(command)`` (command envs) or
the env's own tools (tool envs), and the reward is the episode return from ``get_reward()``.
"""

from __future__ import annotations

import argparse

from datasets import Dataset
from transformers import AutoTokenizer
from trl import GRPOConfig, GRPOTrainer

from agentgym_suite.integrations.trl import as_environment_factory, with_hermes_response_parsing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="TextWorld-v0")
    parser.add_argument("--model", default="tiny", help="model path or hub id; 'tiny' = the suite's test model")
    parser.add_argument("--max-steps", type=int, default=1)
    parser.add_argument("--output-dir", default="runs/trl_env_factory")
    cli = parser.parse_args()

    model = cli.model
    if model == "tiny":
        from agentgym_suite.llm.tiny import tiny_model_dir

        model = str(tiny_model_dir())
    environment = as_environment_factory(cli.env)
    import gymnasium as gym

    task_ids = gym.make(cli.env).unwrapped.task_ids()[:4]
    dataset = Dataset.from_dict({
        "prompt": [[{"role": "user", "content": "Solve the task by calling the tools."}]] * len(task_ids),
        "task_id": task_ids,
    })
    args = GRPOConfig(output_dir=cli.output_dir, max_steps=cli.max_steps, per_device_train_batch_size=2,
                      num_generations=2, max_completion_length=32, max_tool_calling_iterations=2,
                      bf16=False, use_cpu=True, gradient_checkpointing=False, report_to="none", logging_steps=1)
    trainer = GRPOTrainer(model=model, args=args, train_dataset=dataset, environment_factory=environment,
                          processing_class=with_hermes_response_parsing(AutoTokenizer.from_pretrained(model)))
    trainer.train()


if __name__ == "__main__":
    main()
