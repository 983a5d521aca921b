"""Vector envs: sync and async, several episodes with auto-reset."""

from __future__ import annotations

import pytest

from agentgym_suite import make_vec


@pytest.mark.parametrize("asynchronous", [False, True])
def test_vector_env_steps_through_autoreset(asynchronous: bool) -> None:
    envs = make_vec("TextWorld-v0", 2, asynchronous=asynchronous, n_games=2, challenge="tw-coin_collector",
                    max_episode_steps=4)
    try:
        obs, infos = envs.reset(seed=3)
        assert isinstance(obs, tuple) and len(obs) == 2 and all(isinstance(o, str) and o for o in obs)
        finished = 0
        for _ in range(10):
            obs, rewards, terminated, truncated, infos = envs.step(("look", "inventory"))
            finished += int(sum(terminated) + sum(truncated))
        assert finished >= 4  # every sub-env ran out its 4-turn budget at least twice
        assert len(rewards) == 2
    finally:
        envs.close()


def test_make_vec_rejects_zero() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        make_vec("TextWorld-v0", 0)


ASYNC_IDS = ["TextWorld-v0", "ALFWorld-v0", "SyntheticTools-v0", "Tau2-v0", "SearchQA-v0", "ScienceWorld-v0"]


@pytest.mark.parametrize("env_id", ASYNC_IDS)
def test_every_kind_of_env_runs_in_async_workers(env_id: str) -> None:
    from agentgym_suite.registration import entry, missing_requirements

    missing = missing_requirements(entry(env_id))
    if missing:
        pytest.skip(f"{env_id} cannot run here: {missing}")
    kwargs = {"task": 0} if env_id == "ScienceWorld-v0" else {}
    envs = make_vec(env_id, 2, asynchronous=True, max_episode_steps=3, **kwargs)
    try:
        obs, infos = envs.reset(seed=[0, 1])
        assert len(obs) == 2 and all(isinstance(o, str) for o in obs)
        assert list(infos["task_id"])  # shared info keys survive the worker boundary
        for _ in range(4):
            obs, rewards, terminated, truncated, infos = envs.step(("look", "inventory"))
            assert len(obs) == 2
        assert "action_valid" in infos
    finally:
        envs.close()
