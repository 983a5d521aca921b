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


def count_verl_updates(trainer: Any, monkeypatch: pytest.MonkeyPatch) -> tuple[list[int], list[int]]:
    """Record, while ``trainer`` trains: the rows each generation batch's verl plan was made for, and
    (in a one-item list) the optimizer steps taken. Both lists fill as the trainer runs."""
    from agentgym_suite.trainers import verl_updates

    rows: list[int] = []
    real_plan = verl_updates.plan_updates
    monkeypatch.setattr(verl_updates, "plan_updates",
                        lambda chunks, r, *a, **kw: rows.append(r) or real_plan(chunks, r, *a, **kw))
    steps = [0]
    real_create = trainer.create_optimizer

    def create_counted_optimizer() -> Any:
        optimizer = real_create()
        optimizer.register_step_post_hook(lambda *_: steps.__setitem__(0, steps[0] + 1))
        return optimizer

    monkeypatch.setattr(trainer, "create_optimizer", create_counted_optimizer)
    return rows, steps
