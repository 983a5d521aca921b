"""The TRL environment_factory adapter: its shape, and one plain-TRL training step with it."""

from __future__ import annotations

import inspect
import math

import gymnasium as gym
import pytest

from agentgym_suite.integrations.trl import SuiteEnvironment, as_environment_factory, with_hermes_response_parsing

TEST_ID = "LettersForTRL-v0"


@pytest.fixture(scope="module", autouse=True)
def letters_env():
    if TEST_ID not in gym.registry:
        gym.register(TEST_ID, entry_point=_entry())
    yield


def _entry():
    from trainers.fake_env import LetterEnv

    return LetterEnv


def test_command_env_exposes_act_and_reward():
    cls = as_environment_factory(TEST_ID, horizon=2)
    assert issubclass(cls, SuiteEnvironment)
    env = cls()
    text = env.reset(task_id="t1")
    assert "letter e" in text
    assert "e" in env.act("say e") and env.get_reward() == 1.0
    env.act("say x")
    assert env.get_reward() == 1.0 and "over" in env.act("again")
    public = [n for n, _ in inspect.getmembers(cls, inspect.isfunction) if not n.startswith("_")]
    assert sorted(public) == ["act", "get_reward", "reset"]


def test_unknown_env_id_lists_ready_ids():
    with pytest.raises(ValueError, match="not a registered env id"):
        as_environment_factory("NoSuchEnv-v9")


def test_tool_schema_becomes_typed_method():
    from agentgym_suite.integrations.trl import _tool_method
    from transformers.utils import get_json_schema

    method = _tool_method({"type": "function", "function": {
        "name": "get_weather", "description": "Weather for a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "City name"},
                                                         "days": {"type": "integer", "description": "Days"}},
                       "required": ["city"]}}})
    schema = get_json_schema(method)
    assert schema["function"]["name"] == "get_weather"
    assert schema["function"]["parameters"]["required"] == ["city"]
    assert schema["function"]["parameters"]["properties"]["days"]["type"] == "integer"


def test_one_plain_trl_step_on_the_tiny_model(tmp_path):
    from datasets import Dataset
    from transformers import AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    from agentgym_suite.llm.tiny import tiny_model_dir

    model = str(tiny_model_dir())
    dataset = Dataset.from_dict({"prompt": [[{"role": "user", "content": "Play."}]] * 2, "task_id": ["t0", "t1"]})
    args = GRPOConfig(output_dir=str(tmp_path), max_steps=1, per_device_train_batch_size=2, num_generations=2,
                      max_completion_length=8, max_tool_calling_iterations=1, bf16=False, use_cpu=True,
                      gradient_checkpointing=False, report_to="none", logging_steps=1, learning_rate=1e-2)
    trainer = GRPOTrainer(model=model, args=args, train_dataset=dataset,
                          environment_factory=as_environment_factory(TEST_ID),
                          processing_class=with_hermes_response_parsing(AutoTokenizer.from_pretrained(model)))
    trainer.train()
    assert trainer.state.global_step == 1
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    assert losses and all(math.isfinite(x) for x in losses)


def test_a_scripted_policy_calling_act_gets_the_reward(tmp_path):
    # TRL keys an environment's tools by the function's __name__: the model calls `act` as the adapter documents,
    # TRL's own tool loop runs it, and TRL scores the episode with the env's get_reward
    from datasets import Dataset
    from transformers import AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    from agentgym_suite.llm.tiny import tiny_model_dir

    model = str(tiny_model_dir())
    tokenizer = with_hermes_response_parsing(AutoTokenizer.from_pretrained(model))
    factory = as_environment_factory(TEST_ID, horizon=2)
    assert factory.act.__name__ == "act"
    dataset = Dataset.from_dict({"prompt": [[{"role": "user", "content": "Play."}]] * 2, "task_id": ["t0", "t1"]})
    args = GRPOConfig(output_dir=str(tmp_path), max_steps=1, per_device_train_batch_size=2, num_generations=2,
                      max_completion_length=64, max_tool_calling_iterations=2, bf16=False, use_cpu=True,
                      gradient_checkpointing=False, report_to="none", logging_steps=1, learning_rate=1e-2)
    trainer = GRPOTrainer(model=model, args=args, train_dataset=dataset, environment_factory=factory,
                          processing_class=tokenizer)
    call = '<tool_call>\n{"name": "act", "arguments": {"command": "say aeiou"}}\n</tool_call><|im_end|>'
    script = {0: call}
    turns: list[int] = []

    def scripted(prompt_ids, *_args, **_kwargs):  # first call: the tool call; after the tool's answer: stop
        text = script.get(len(turns), "done<|im_end|>")
        turns.append(len(prompt_ids))
        ids = tokenizer.encode(text, add_special_tokens=False)
        return [list(ids) for _ in prompt_ids], None

    trainer._generate_single_turn = scripted
    trainer.train()
    rewards = [h[k] for h in trainer.state.log_history for k in h if k.startswith("rewards/") and k.endswith("/mean")]
    assert rewards == [1.0]
