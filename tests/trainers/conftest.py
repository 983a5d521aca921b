"""Shared settings for the trainer tests: tiny model, tiny budgets, the letter env."""

from __future__ import annotations

from typing import Any, Callable

import pytest
import torch

from agentgym_suite.trainers import AgentGRPOConfig


def tiny_config(output_dir: str, **overrides: Any) -> AgentGRPOConfig:
    """A config that trains the tiny model for 2 steps of 2 tasks x G=2 on CPU in seconds."""
    values: dict[str, Any] = dict(
        output_dir=output_dir, model_name_or_path="tiny", max_steps=2, per_device_train_batch_size=4,
        num_generations=2, max_completion_length=6, max_turns=2, bf16=False, gradient_checkpointing=False,
        report_to="none", logging_steps=1, action_format=None, learning_rate=1e-2, save_strategy="no",
        use_cpu=True, seed=7, disable_tqdm=True,
    )
    values.update(overrides)
    return AgentGRPOConfig(**values)


@pytest.fixture
def make_config(tmp_path) -> Callable[..., AgentGRPOConfig]:
    """``make_config(**overrides)`` -> a tiny AgentGRPOConfig writing under tmp_path."""
    return lambda **overrides: tiny_config(str(tmp_path / "run"), **overrides)


def snapshot(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """Copies of every parameter."""
    return {n: p.detach().clone() for n, p in model.named_parameters()}


def changed(before: dict[str, torch.Tensor], model: torch.nn.Module) -> list[str]:
    """Names of the parameters that differ from ``before``."""
    return [n for n, p in model.named_parameters() if not torch.equal(before[n], p.detach())]
