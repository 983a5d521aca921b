"""Rows that teach nothing cost no forward or backward pass, and DAPO's dynamic sampling replaces
groups whose returns are all equal (tiny model, letter env)."""

from __future__ import annotations

import json

import pytest
import torch

from agentgym_suite.trainers import AgentGRPOTrainer
from agentgym_suite.trainers.agent_grpo import build_credit
from agentgym_suite.trainers.credit import get_credit_assigner
from agentgym_suite.trainers.distributed import ProcessSync
from agentgym_suite.trainers.dynamic_sampling import fill_batch, informative_groups
from agentgym_suite.rollout.records import Trajectory
from trainers.conftest import changed, snapshot, tiny_config
from trainers.fake_env import LetterEnv, make_letter_env
from trainers.fixed_credit import NothingToLearnCredit, OddTrajectoriesCredit
from trainers.credit.conftest import build_batch
from trainers.credit.test_credit_contract import multi_turn_rows


def _trainer(tmp_path, name: str, credit, env_factory=make_letter_env, **overrides) -> AgentGRPOTrainer:
    args = tiny_config(str(tmp_path / name), optim="sgd", max_steps=1, **overrides)
    trainer = AgentGRPOTrainer(args=args, env_factory=env_factory, credit=credit)
    trainer.seen_rows = []  # rows of every forward pass with gradient: (all rows, rows with tokens to train)
    logps = trainer._get_per_token_logps_and_entropies

    def recorded(model, input_ids, attention_mask, *a, **kw):
        trainer.seen_rows.append((int(input_ids.shape[0]), int((attention_mask.sum(1) > 1).sum())))
        return logps(model, input_ids, attention_mask, *a, **kw)

    trainer._get_per_token_logps_and_entropies = recorded
    return trainer


def _logged(trainer, key: str) -> list[float]:
    return [h[key] for h in trainer.state.log_history if key in h]


def test_skipping_zero_advantage_rows_leaves_the_update_unchanged(tmp_path):
    # one after the other: each trainer seeds the RNG when it is built, so both play the same episodes
    every = _trainer(tmp_path, "every", OddTrajectoriesCredit(), skip_uninformative_rows=False)
    start = snapshot(every.model)
    every.train()
    skipping = _trainer(tmp_path, "skipping", OddTrajectoriesCredit())
    assert all(torch.equal(start[n], p) for n, p in skipping.model.named_parameters()), "same initial weights"
    skipping.train()
    assert _logged(every, "episodes/return_mean") == _logged(skipping, "episodes/return_mean")
    assert changed(start, skipping.model)
    for name, param in skipping.model.named_parameters():
        torch.testing.assert_close(param.detach(), dict(every.model.named_parameters())[name].detach(),
                                   atol=1e-6, rtol=1e-5)
    rows = _logged(skipping, "episodes/rows")[0]
    skipped = _logged(skipping, "rows/skipped_zero_advantage")[0]
    assert 0 < skipped < rows  # the even rollouts' rows
    trained_every = sum(real for _, real in every.seen_rows)
    trained_skipping = sum(real for _, real in skipping.seen_rows)
    assert trained_every == rows and trained_skipping == rows - skipped


def test_a_step_with_nothing_to_learn_costs_only_its_rollouts(tmp_path):
    trainer = _trainer(tmp_path, "nothing", NothingToLearnCredit())
    before = snapshot(trainer.model)
    trainer.train()
    assert trainer.state.global_step == 1
    assert not changed(before, trainer.model)
    assert _logged(trainer, "rows/skipped_zero_advantage") == _logged(trainer, "episodes/rows")
    # the forward pass saw only the padding TRL needs to split the batch: no row with a completion token
    assert trainer.seen_rows and all(real == 0 for _, real in trainer.seen_rows)
    assert sum(rows for rows, _ in trainer.seen_rows) == trainer.args.steps_per_generation


def test_other_loss_terms_keep_their_rows(tmp_path):
    grpo = get_credit_assigner("grpo")
    batch = build_batch(multi_turn_rows(grpo), seed=1)
    assert not grpo.rows_with_other_terms(batch).any()
    assert get_credit_assigner("sdar").rows_with_other_terms(batch).all()
    assert not get_credit_assigner("sdar", lambda_=0.0).rows_with_other_terms(batch).any()
    assert get_credit_assigner("vad").rows_with_other_terms(batch).all()
    # the KL term is on every row: nothing is skipped
    trainer = AgentGRPOTrainer(args=tiny_config(str(tmp_path / "kl"), beta=0.01), env_factory=make_letter_env,
                               credit=NothingToLearnCredit())
    zero = torch.zeros(batch.completion_mask.shape)
    assert trainer._rows_to_train(batch, zero, batch.completion_mask) == list(range(batch.num_rows))
    trainer.beta = 0.0
    assert trainer._rows_to_train(batch, zero, batch.completion_mask) == []
    with_aux = build_credit(tiny_config(str(tmp_path / "sdar"), credit="sdar"))
    trainer.credit = with_aux
    assert trainer._rows_to_train(batch, zero, batch.completion_mask) == list(range(batch.num_rows))


# ---------------------------------------------------------------------------------- dynamic sampling
def _episode(group: str, ret: float, broken: bool = False) -> Trajectory:
    return Trajectory(task_id="t", group_id=group, traj_id=f"{group}/{ret}", episode_return=ret,
                      error="boom" if broken else None, error_stage="env_step" if broken else None)


def test_informative_groups_need_two_different_returns():
    records = [("a", 1.0), ("a", 1.0), ("b", 0.0), ("b", 1.0), ("c", 1.0), ("c", None), ("d", 0.5), ("d", 0.0)]
    assert informative_groups(records) == ["b", "d"]


def test_fill_batch_replaces_dropped_groups_within_the_bound():
    first = [_episode("g0", 1), _episode("g0", 1), _episode("g1", 0), _episode("g1", 1)]
    rounds = []

    def play_more(groups: int, round_: int) -> list[Trajectory]:
        rounds.append(groups)
        # round 1: one more all-won group; round 2: an informative one
        ret = (1.0, 1.0) if round_ == 1 else (0.0, 1.0)
        return [_episode(f"r{round_}", r) for r in ret]

    kept, stats = fill_batch(first, target_groups=2, group_size=2, max_extra_rollouts=8, play_more=play_more,
                             sync=ProcessSync(None))
    assert [t.group_id for t in kept] == ["g1", "g1", "r2", "r2"]
    assert rounds == [1, 1]
    assert (stats.groups_dropped, stats.extra_rollouts, stats.groups_missing) == (2, 4, 0)
    kept, stats = fill_batch(first, target_groups=2, group_size=2, max_extra_rollouts=2,
                             play_more=lambda g, r: [_episode(f"x{r}", 1.0)] * 2, sync=ProcessSync(None))
    assert [t.group_id for t in kept] == ["g1", "g1"]
    assert (stats.groups_dropped, stats.extra_rollouts, stats.groups_missing) == (2, 2, 1)


class SilentLetterEnv(LetterEnv):
    """The letter env whose every step scores 0: every group's returns are equal."""

    def _execute(self, command, parsed):
        outcome = super()._execute(command, parsed)
        outcome.reward, outcome.score, outcome.won = 0.0, 0.0, False
        return outcome


def test_dynamic_sampling_drops_groups_that_teach_nothing(tmp_path):
    trainer = _trainer(tmp_path, "dapo", get_credit_assigner("grpo"), env_factory=SilentLetterEnv,
                       dynamic_sampling=True, dynamic_sampling_max_rollouts=4)
    trainer.train()
    assert _logged(trainer, "dynamic_sampling/groups_dropped") == [4.0]  # 2 given, 2 replacements
    assert _logged(trainer, "dynamic_sampling/extra_rollouts") == [4.0]
    assert _logged(trainer, "dynamic_sampling/groups_missing") == [2.0]
    assert _logged(trainer, "episodes/rows") == [0.0]  # nothing left to train on
    lines = [json.loads(x) for x in (tmp_path / "dapo" / "trajectories" / "step_000001.jsonl").read_text().splitlines()]
    assert len(lines) == 8 and len({line["group"] for line in lines}) == 4  # every played episode is recorded


def test_dynamic_sampling_needs_a_valid_bound(tmp_path):
    with pytest.raises(ValueError, match="dynamic_sampling_max_rollouts"):
        tiny_config(str(tmp_path), dynamic_sampling=True, dynamic_sampling_max_rollouts=-1)
