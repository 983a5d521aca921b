"""AgentGRPOConfig validation: bad values fail with messages that say how to fix them."""

from __future__ import annotations

import pytest

from agentgym_suite.trainers import AgentGRPOConfig
from agentgym_suite.trainers.agent_grpo import default_env_factory
from agentgym_suite.trainers.config import AgentGRPOConfig as Direct

BASE = dict(output_dir="/tmp/agentgym-config-test", bf16=False, use_cpu=True, report_to="none")


def make(**kw):
    return AgentGRPOConfig(**{**BASE, **kw})


def test_every_new_field_has_help():
    from dataclasses import fields

    from trl import GRPOConfig

    inherited = {f.name for f in fields(GRPOConfig)}
    new = [f for f in fields(Direct) if f.name not in inherited]
    assert len(new) >= 15
    assert all(f.metadata.get("help") for f in new), [f.name for f in new if not f.metadata.get("help")]


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        (dict(env_mode="simulated"), "env_mode='simulated' is not supported; choose one of: real, synthetic, rehearsal"),
        (dict(row_layout="episode"), "choose one of: turn, trajectory"),
        (dict(prompt_format="xml"), "choose one of: single, chat"),
        (dict(teacher_context="gold"), "choose one of: skills, oracle, env_response"),
        (dict(credit="ppo"), "unknown credit assigner 'ppo'; choose one of"),
        (dict(group_size=1), "group_size must be >= 2"),
        (dict(max_turns=0), "max_turns must be >= 1"),
        (dict(history_length=-1), "history_length must be >= 0"),
        (dict(invalid_action_penalty=-0.5), "invalid_action_penalty must be >= 0"),
        (dict(row_layout="trajectory", prompt_format="single"), "set prompt_format: chat"),
        (dict(env_kwargs="{not json"), "not valid JSON"),
        (dict(credit_params=[1, 2]), "credit_params must be a mapping"),
    ],
)
def test_bad_values_say_how_to_fix(kwargs, fragment):
    with pytest.raises(ValueError, match=None) as err:
        make(**kwargs)
    assert fragment in str(err.value)


def test_group_size_sets_num_generations_and_json_strings_parse():
    cfg = make(group_size=4, per_device_train_batch_size=8, env_kwargs='{"split": "train"}',
               credit_params='{"beta": 0}', credit="sdar")
    assert cfg.num_generations == 4
    assert cfg.env_kwargs == {"split": "train"} and cfg.credit_params == {"beta": 0}


@pytest.mark.parametrize("mode, env_id", [("synthetic", "SyntheticTools-v0"), ("rehearsal", "EnvACE-Rehearsal-v0")])
def test_env_modes_map_to_env_ids(mode, env_id):
    import gymnasium as gym

    import agentgym_suite  # noqa: F401

    cfg = make(env_mode=mode, per_device_train_batch_size=8)
    assert cfg.train_env_id == env_id
    if env_id in gym.registry:
        assert callable(default_env_factory(cfg))
    else:
        with pytest.raises(ValueError, match="is not registered in this install"):
            default_env_factory(cfg)


def test_unknown_credit_parameter_is_rejected():
    from agentgym_suite.trainers.agent_grpo import build_credit

    with pytest.raises(ValueError, match="unknown parameter"):
        build_credit(make(credit="sdar", credit_params={"gamma_typo": 1}, per_device_train_batch_size=8))


def test_an_unset_simulated_user_is_warned_about(caplog: pytest.LogCaptureFixture) -> None:
    """Tau2 and VitaBench play the scripted test double when no user is set: training on it says so."""
    import logging

    caplog.set_level(logging.WARNING, logger="agentgym_suite")
    default_env_factory(make(env_id="Tau2-v0", per_device_train_batch_size=8))
    default_env_factory(make(env_id="VitaBench-v0", per_device_train_batch_size=8), held_out=True)
    warned = [r.getMessage() for r in caplog.records if "scripted test double" in r.getMessage()]
    assert len(warned) == 2 and "Tau2-v0" in warned[0] and "rewards" in warned[0] and "held-out numbers" in warned[1]
    assert all("env_kwargs.user: llm:<backend spec>" in w for w in warned)
    caplog.clear()
    for env_id, kwargs in (("Tau2-v0", {"user": "scripted"}), ("Tau2-v0", {"user": "llm:tiny"}), ("TextWorld-v0", {})):
        default_env_factory(make(env_id=env_id, env_kwargs=kwargs, per_device_train_batch_size=8))
    assert not [r for r in caplog.records if "scripted test double" in r.getMessage()]
