"""The docs' worked example of a new credit plug-in (docs/extending.md) (``examples/discounted_grpo.py``): the page
shows exactly that file, it passes the shared contract, and the trainer trains it by its import path."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
import torch

from agentgym_suite.trainers import AgentGRPOTrainer
from agentgym_suite.trainers.credit import CreditAssigner, get_credit_assigner
from trainers.conftest import changed, snapshot
from trainers.credit.conftest import EXAMPLES
from trainers.credit.test_credit_contract import TestCreditContract as _SharedContract
from trainers.fake_env import make_letter_env

ROOT = Path(__file__).resolve().parents[3]
IMPORT_PATH = "discounted_grpo:DiscountedGRPOCredit"


@pytest.fixture
def plugin(on_path: None) -> CreditAssigner:
    return get_credit_assigner(IMPORT_PATH)


class TestExampleCreditContract(_SharedContract):
    """Every check the registered plug-ins pass, run on the example."""


def test_readme_shows_exactly_the_example_file() -> None:
    readme = (ROOT / "docs" / "extending.md").read_text(encoding="utf-8")
    section = readme.split("## A new credit plug-in", 1)[1]
    block = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert block is not None, "the docs page's 'A new credit plug-in' subsection has no python block"
    assert block.group(1) == (EXAMPLES / "discounted_grpo.py").read_text(encoding="utf-8")
    assert f"--credit {IMPORT_PATH}" in section


def test_discount_by_hand(on_path: None, make_batch) -> None:
    # group g: trajectory a has 3 turns with return 1, trajectory b 1 turn with return 0.
    # GRPO over the 4 rows: scores [1, 1, 1, 0], mean 0.75, unbiased std 0.5 -> [0.5, 0.5, 0.5, -1.5]
    # discount gamma=0.5 by turns to the end: a -> [0.25, 0.5, 1], b -> [1]
    rows = [dict(group="g", traj="a", turn=t, ret=1.0) for t in range(3)] + [dict(group="g", traj="b", ret=0.0)]
    out = get_credit_assigner(IMPORT_PATH, gamma=0.5).advantages(make_batch(rows))
    expected = torch.tensor([0.125, 0.25, 0.5, -1.5]) * 0.5 / (0.5 + 1e-6)
    assert out.advantages[:, 1].tolist() == pytest.approx(expected.tolist(), abs=1e-6)
    assert out.metrics["credit/discounted_grpo/discount_mean"] == pytest.approx((0.25 + 0.5 + 1 + 1) / 4)
    with pytest.raises(ValueError, match="gamma must be in"):
        get_credit_assigner(IMPORT_PATH, gamma=0.0)


def test_trains_a_step_by_its_import_path(on_path: None, make_config) -> None:
    trainer = AgentGRPOTrainer(args=make_config(credit=IMPORT_PATH, credit_params={"gamma": 0.8}, max_steps=1),
                               env_factory=make_letter_env)
    before = snapshot(trainer.model)
    trainer.train()
    assert trainer.state.global_step == 1 and changed(before, trainer.model)
    assert type(trainer.credit).__name__ == "DiscountedGRPOCredit" and trainer.credit.config.gamma == 0.8
    logged = {k: v for h in trainer.state.log_history for k, v in h.items()}
    assert "credit/discounted_grpo/discount_mean" in logged and math.isfinite(logged["loss"])
