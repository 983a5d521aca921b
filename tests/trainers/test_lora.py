"""``lora_r``: the trainer trains a LoRA adapter and saves it merged into a plain model."""

from __future__ import annotations

import pytest
from transformers import AutoModelForCausalLM

from agentgym_suite.trainers import AgentGRPOTrainer
from agentgym_suite.trainers.agent_grpo import resolve_model_path
from trainers.fake_env import make_letter_env


def test_lora_adapter_is_trained_and_saved_merged(make_config, tmp_path) -> None:
    trainer = AgentGRPOTrainer(args=make_config(max_steps=1, lora_r=2), env_factory=make_letter_env)
    trainable = [n for n, p in trainer.model.named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in n for n in trainable)
    trainer.train()
    saved = trainer.save_merged(str(tmp_path / "merged"))
    assert not (tmp_path / "merged" / "adapter_config.json").exists()
    merged = AutoModelForCausalLM.from_pretrained(saved)
    base = AutoModelForCausalLM.from_pretrained(resolve_model_path("tiny"))
    assert set(merged.state_dict()) == set(base.state_dict())
    assert hasattr(trainer.model, "peft_config")  # the trainer's own model keeps its adapter


def test_negative_rank_is_refused(make_config) -> None:
    with pytest.raises(ValueError, match="lora_r must be >= 0"):
        make_config(lora_r=-1)


def test_lora_with_a_kl_term_takes_the_reference_from_the_base_weights(make_config) -> None:
    # beta != 0 with an adapter: TRL builds no reference model, the trainer's reference pass runs the
    # policy with its adapter off (trl.trainer.utils.use_adapter, listed in trainers/trl_seam.py)
    trainer = AgentGRPOTrainer(args=make_config(max_steps=1, lora_r=2, beta=0.05), env_factory=make_letter_env)
    assert trainer.ref_model is None
    trainer.train()
    kl = [entry["kl"] for entry in trainer.state.log_history if "kl" in entry]
    assert kl and all(value == value and value >= 0 for value in kl)
