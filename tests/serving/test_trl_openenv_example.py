"""``examples/trl_openenv_textworld.py``: plain TRL GRPOTrainer against ``agentgym serve
TextWorld-v0`` through OpenEnv's client, for one step on the tiny model."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

from serving.conftest import ServerProcess

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "trl_openenv_textworld.py"


def _example():
    spec = importlib.util.spec_from_file_location("trl_openenv_textworld", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_one_trl_step_against_the_served_textworld(textworld_server: ServerProcess, tmp_path: Path) -> None:
    from transformers import AutoTokenizer

    from agentgym_suite.integrations.trl import with_hermes_response_parsing
    from agentgym_suite.llm.tiny import tiny_model_dir

    example = _example()
    model = str(tiny_model_dir())
    tokenizer = with_hermes_response_parsing(AutoTokenizer.from_pretrained(model))
    trainer = example.build_trainer(model, textworld_server.http, str(tmp_path), processing_class=tokenizer,
                                    episodes=2, max_completion_length=48, max_tool_calling_iterations=2, bf16=False,
                                    use_cpu=True, gradient_checkpointing=False, learning_rate=1e-2)
    call = '<tool_call>\n{"name": "act", "arguments": {"command": "look"}}\n</tool_call><|im_end|>'
    calls: list[int] = []

    def scripted(prompt_ids, *_args, **_kwargs):  # the first turn calls the tool, the next ends the episode
        text = call if not calls else "done<|im_end|>"
        calls.append(len(prompt_ids))
        ids = tokenizer.encode(text, add_special_tokens=False)
        return [list(ids) for _ in prompt_ids], None

    trainer._generate_single_turn = scripted
    trainer.train()
    assert trainer.state.global_step == 1
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    assert losses and all(math.isfinite(x) for x in losses)
    envs = [env for pool in trainer._environment_pool.values() for env in pool]
    assert envs and any(env.steps == 1 for env in envs), "the act tool never reached the server"
    assert all(env.client.state().env_id == "TextWorld-v0" for env in envs)
    for env in envs:  # TRL keeps its env instances; free their sessions for the package's other tests
        env.client.close()
