"""Asynchronous rollouts in the trainer: a run trains on queued groups with every turn's policy
version recorded and the per-step metrics logged; the importance weight the loss sees is always
truncated; DAPO's dynamic sampling takes its replacements from the queue; every registered credit
plug-in either trains under async or is refused with the reason; the launches async cannot serve
are refused."""

from __future__ import annotations

import json
import math

import pytest
import torch

from agentgym_suite.trainers import AgentGRPOTrainer
from agentgym_suite.trainers.async_rollouts import async_refusal, check_async_setup
from agentgym_suite.trainers.async_rollouts.worker import RolloutWorker
from agentgym_suite.trainers.credit import CREDIT_ASSIGNERS, available_credit_assigners
from agentgym_suite.trainers.credit.grpo import GRPOCredit
from trainers.conftest import changed, count_verl_updates, snapshot
from trainers.fake_env import make_letter_env

ASYNC_METRICS = {"async/staleness_hist/0", "async/staleness_mean", "async/staleness_max", "async/dropped_groups",
                 "async/dropped_episodes", "async/learner_idle_share", "async/generator_idle_share",
                 "async/queue_depth", "async/policy_version"}


def _async_config(make_config, **overrides):
    values = dict(async_rollouts=True, max_staleness=1, print_step_times=False)
    values.update(overrides)
    return make_config(**values)


def _logged(trainer, key):
    return [h[key] for h in trainer.state.log_history if key in h]


def test_async_run_trains_on_versioned_groups_and_logs_the_queue(make_config, tmp_path):
    trainer = AgentGRPOTrainer(args=_async_config(make_config, max_steps=3, async_episode_update="continue",
                                                  async_correction="tis"), env_factory=make_letter_env)
    before = snapshot(trainer.model)
    trainer.train()
    assert trainer.state.global_step == 3 and changed(before, trainer.model)
    assert trainer._async.workers == []  # the rollout threads were stopped and joined at the end
    logged = set().union(*(h.keys() for h in trainer.state.log_history))
    assert ASYNC_METRICS <= logged, sorted(ASYNC_METRICS - logged)
    assert max(_logged(trainer, "async/staleness_max")) <= 1
    assert max(_logged(trainer, "async/is_weight_max")) <= 2.0  # the default cap of the tis weight
    assert _logged(trainer, "async/policy_version") == [0.0, 1.0, 2.0]
    for share in _logged(trainer, "async/learner_idle_share") + _logged(trainer, "async/generator_idle_share"):
        assert 0.0 <= share <= 1.0
    for step, path in enumerate(sorted((tmp_path / "run" / "trajectories").glob("step_*.jsonl"))):
        lines = [json.loads(x) for x in path.read_text().splitlines()]
        assert len(lines) == 4 and len({line["group"] for line in lines}) == 2  # 2 whole groups of G=2
        for line in lines:
            versions = [turn["policy_version"] for turn in line["turns"]]
            assert all(isinstance(v, int) for v in versions) and versions == sorted(versions)
            assert 0 <= step - versions[0] <= 1  # the learner was at version `step` and drops older than 1


def test_the_loss_never_sees_an_unclipped_importance_ratio(make_config, monkeypatch):
    """The generator's log-probs are made far lower than the learner's (raw ratio about e^6): every
    advantage TRL's loss reads is the credit advantage times a weight of at most async_is_cap."""
    play = RolloutWorker.play

    def distant_generator(self, batch):
        groups = play(self, batch)
        for group in groups:
            for episode in group.episodes:
                for turn in episode.turns:
                    turn.logprobs = [x - 6.0 for x in turn.logprobs]
        return groups

    monkeypatch.setattr(RolloutWorker, "play", distant_generator)
    trainer = AgentGRPOTrainer(args=_async_config(make_config, max_steps=2, async_is_cap=1.5, async_correction="tis",
                                                  skip_uninformative_rows=False), env_factory=make_letter_env)
    seen: list[tuple[torch.Tensor, torch.Tensor]] = []
    loss_phase = trainer._loss_phase

    def recording(scored, mode):
        output = loss_phase(scored, mode)
        seen.append((scored.advantages.detach().clone(), output["advantages"].detach().clone()))
        return output

    trainer._loss_phase = recording
    trainer.train()
    assert min(_logged(trainer, "async/is_ratio_raw_max")) > math.exp(5)
    assert max(_logged(trainer, "async/is_weight_max")) <= 1.5 + 1e-6
    weighted = False
    for credit_advantages, loss_advantages in seen:
        assert torch.all(loss_advantages.abs() <= 1.5 * credit_advantages.abs() + 1e-6)
        weighted |= bool(torch.any(loss_advantages.abs() > 1.01 * credit_advantages.abs()))
    assert weighted or all(not torch.any(c) for c, _ in seen)  # the capped weight was applied where it could be


def test_behaviour_clip_clips_against_the_generator_with_a_capped_ratio(make_config):
    """TRL AsyncGRPOTrainer's choice: PPO's ratio is taken to the generator's log-probs and TRL's delta
    (the cap) bounds it from above; no learner log-prob pass is added."""
    config = _async_config(make_config, max_steps=2, async_correction="behaviour_clip", async_is_cap=1.5,
                           skip_uninformative_rows=False)
    assert config.delta == 1.5
    trainer = AgentGRPOTrainer(args=config, env_factory=make_letter_env)
    assert not trainer._async.needs_learner_logps
    seen = []
    loss_phase = trainer._loss_phase

    def recording(scored, mode):
        output = loss_phase(scored, mode)
        seen.append((output, scored))
        return output

    trainer._loss_phase = recording
    trainer.train()
    assert seen
    for output, scored in seen:
        rows = scored.rows  # skip_uninformative_rows off: the loss gets every row, then padding rows
        width = output["completion_ids"].size(1)
        generator = torch.tensor([r.logprobs + [0.0] * (width - len(r.logprobs)) for r in rows])
        mask = output["completion_mask"][:len(rows)].bool().cpu()
        assert mask.any()
        assert torch.allclose(output["old_per_token_logps"][:len(rows)].cpu()[mask], generator[mask])
        assert torch.equal(output["advantages"], scored.advantages)  # no weight folded into the advantages
    assert not _logged(trainer, "async/is_weight_max")


def test_dynamic_sampling_replaces_groups_from_the_queue(make_config):
    trainer = AgentGRPOTrainer(args=_async_config(make_config, max_steps=2, dynamic_sampling=True, max_staleness=2,
                                                  async_rollout_threads=2,
                                                  dynamic_sampling_max_rollouts=8), env_factory=make_letter_env)
    trainer.train()
    dropped = _logged(trainer, "dynamic_sampling/groups_dropped")
    missing = _logged(trainer, "dynamic_sampling/groups_missing")
    extra = _logged(trainer, "dynamic_sampling/extra_rollouts")
    assert len(dropped) == len(missing) == 2
    for d, e in zip(dropped, extra):
        assert e <= 8 and (e == 0 if d == 0 else e > 0)  # replacements only for dropped groups, within the bound
    batch = trainer._credit_batch  # the last step trained only on informative groups
    returns: dict = {}
    for group, ret in zip(batch.group_ids, batch.returns.tolist()):
        returns.setdefault(group, set()).add(ret)
    assert all(len(values) >= 2 for values in returns.values())  # informative groups only
    assert returns or missing[-1] == 2  # empty only when no informative group could be found
    trained = trainer._async.controller.trained
    assert len(trained) == len(set(trained))  # a replacement is a new group, never one trained before


@pytest.mark.parametrize("credit", available_credit_assigners())
def test_every_credit_plugin_trains_under_async_or_is_refused_with_the_reason(make_config, credit):
    refusal = async_refusal(CREDIT_ASSIGNERS[credit])
    config = _async_config(make_config, credit=credit, max_steps=1, max_turns=1)
    if refusal is not None:
        assert "async_rollouts: false" in refusal and credit in refusal
        with pytest.raises(ValueError, match="async_rollouts is not available") as error:
            AgentGRPOTrainer(args=config, env_factory=make_letter_env)
        assert refusal in str(error.value)
        return
    trainer = AgentGRPOTrainer(args=config, env_factory=make_letter_env)
    before = snapshot(trainer.model)
    trainer.train()
    assert trainer.state.global_step == 1 and changed(before, trainer.model), f"{credit}: no update under async"
    assert all(math.isfinite(x) for x in _logged(trainer, "loss"))
    assert _logged(trainer, "async/policy_version") == [0.0]


def test_plugins_with_an_auxiliary_loss_are_the_ones_refused():
    for name, cls in CREDIT_ASSIGNERS.items():
        assert (async_refusal(cls) is not None) == bool(cls.has_aux_loss), name

    class OffPolicyAux(GRPOCredit):
        name = "off_policy_aux"
        has_aux_loss = True
        async_rollouts_refusal = None  # declares its auxiliary loss valid on stale samples

    assert async_refusal(OffPolicyAux) is None


def test_multi_process_async_is_refused(make_config):
    with pytest.raises(ValueError, match="one process"):
        check_async_setup(_async_config(make_config), GRPOCredit(), world_size=2)


def test_env_that_borrows_the_policy_is_refused(make_config):
    config = _async_config(make_config, env_id="SyntheticTools-v0", env_mode="rehearsal",
                           env_kwargs={"base_env_kwargs": {"num_worlds": 1, "tasks_per_world": 2}})
    with pytest.raises(ValueError, match="world model"):
        check_async_setup(config, GRPOCredit(), world_size=1)


@pytest.mark.parametrize("overrides, message", [
    ({"max_staleness": -1}, "max_staleness"),
    ({"async_episode_update": "later"}, "async_episode_update"),
    ({"async_is_cap": float("inf")}, "never an unclipped"),
    ({"async_is_cap": 0.5}, "async_is_cap"),
    ({"async_correction": "none"}, "async_correction"),
    ({"async_rollout_threads": 0}, "async_rollout_threads"),
    ({"async_correction": "behaviour_clip", "delta": float("inf")}, "finite"),
    ({"loss_type": "vespo"}, "vespo"),
])
def test_async_settings_are_checked(make_config, overrides, message):
    with pytest.raises(ValueError, match=message):
        _async_config(make_config, **overrides)


def test_async_rollouts_take_the_verl_schedule_with_one_version_per_generation_batch(make_config, monkeypatch):
    """With rows_per_update, an async generation batch still takes verl-agent's ceil(rows / mini) optimizer
    steps, and the policy version counts generation batches (trainer steps), not optimizer steps."""
    args = _async_config(make_config, per_device_train_batch_size=4, steps_per_generation=2, rows_per_update=2,
                         max_steps=2, max_turns=2, max_rows_per_pass=3)
    trainer = AgentGRPOTrainer(args=args, env_factory=make_letter_env)
    rows, steps = count_verl_updates(trainer, monkeypatch)
    trainer.train()
    assert len(rows) == 2 and steps[0] == sum(math.ceil(r / 2) for r in rows) > 2 * args.steps_per_generation
    assert _logged(trainer, "async/policy_version") == [0.0, 1.0]


def test_generator_log_probs_are_the_learners_at_the_sampling_temperature(make_config):
    """At temperature 0.5 with nothing stale (max_staleness 0), the in-process generator's log-probs
    equal the learner's own, which TRL computes from ``logits / temperature``; raw (temperature 1)
    log-probs would put the correction's ratio off 1 for every token of the current version."""
    config = _async_config(make_config, max_steps=2, max_staleness=0, async_correction="tis", temperature=0.5,
                           cpu_bf16="off", skip_uninformative_rows=False)
    trainer = AgentGRPOTrainer(args=config, env_factory=make_letter_env)
    pairs = []
    loss_inputs = trainer._async.loss_inputs

    def recording(output, learner_logps, generator_logps, loss_mask):
        pairs.append((learner_logps.detach().clone(), generator_logps.detach().clone(), loss_mask.bool().clone()))
        return loss_inputs(output, learner_logps, generator_logps, loss_mask)

    trainer._async.loss_inputs = recording
    trainer.train()
    assert pairs
    for learner, generator, mask in pairs:
        assert mask.any()
        assert torch.allclose(learner[mask], generator[mask], atol=1e-3), (learner[mask] - generator[mask]).abs().max()
