"""An EnvACE-Rehearsal evaluation whose world model and transcript judge are models behind a local
OpenAI-compatible stub: the judge is the env's declared judge, so ``--judge`` sets it and ``--rescore``
scores the rehearsed transcripts again (the world model replays from the cache)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from agentgym_suite.methods.envace.scripted import stand_in_result
from agentgym_suite.evaluation.rescore import rescore
from agentgym_suite.evaluation.runner import evaluate
from agentgym_suite.evaluation.store import TrajectoryStore
from reliability.stub_openai import stub_server

ENV_ID, SEED, EPISODES = "EnvACE-Rehearsal-v0", 3, 3


def role_play(body: dict[str, Any]) -> str:
    """The world model answers every call with a success; ``judge-a`` marks every criterion met, any other judge none."""
    if body["model"] == "wm":
        return stand_in_result(body["messages"])
    criteria = re.findall(r"^\d+\. ", str(body["messages"][-1]["content"]).split("# Criteria")[-1], re.MULTILINE)
    verdict = "yes" if body["model"] == "judge-a" else "no"
    return "\n".join(f"{i}: {verdict}" for i in range(1, len(criteria) + 1))


def _run(out: Path, url: str, *, judge: str | None = "judge-a", **options: Any) -> Any:
    kwargs = {"world_model": f"openai:wm@{url}", "reward_mode": "judge"}
    if judge is not None:
        kwargs["judge"] = f"openai:{judge}@{url}"
    return evaluate(ENV_ID, "oracle", out_dir=out, episodes=EPISODES, seed=SEED, env_kwargs=kwargs, progress=False,
                    **options)


def _models(state: Any) -> list[str]:
    return [e.body["model"] for e in state.answered()]


def _episodes(out: Path) -> dict[str, Any]:
    records = TrajectoryStore(out).load()[0]
    return {key: {"actions": [t.completion_text for t in r.turns], "observations": [t.observation for t in r.turns],
                  "score": r.score, "won": r.won} for key, r in records.items()}


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("rehearsed")
    with stub_server(faults={}, reply=role_play) as (url, state):
        result = _run(root / "run", url)
        yield root, url, state, result


def test_the_judge_is_asked_and_accounted_as_the_judge_role(played: Any) -> None:
    root, _, state, result = played
    asked = _models(state)
    assert asked.count("judge-a") == EPISODES and asked.count("wm") > 0
    roles = result.summary["model_calls"]["roles"]
    assert roles["judge"]["calls"] == EPISODES and roles["world_model"]["calls"] == asked.count("wm")
    episodes = _episodes(root / "run")
    assert len(episodes) == EPISODES and all(e["score"] == 1.0 and e["won"] for e in episodes.values())


def test_rescore_with_the_same_judge_makes_no_call(played: Any) -> None:
    root, _, state, first = played
    before = len(state.answered())
    result = rescore(ENV_ID, root / "run", root / "same")
    assert len(state.answered()) == before
    assert result.summary["model_calls"]["this_invocation"]["calls"] == 0
    info = result.summary["rescore"]
    assert (info["changed_scores"], info["diverged"], info["missing"]) == (0, 0, 0)
    assert info["judge"] == info["source_judge"]
    assert _episodes(root / "same") == _episodes(root / "run")
    assert result.summary["mean_score"] == first.summary["mean_score"]


def test_rescore_with_another_judge_changes_only_its_verdicts(played: Any) -> None:
    root, url, state, _ = played
    before = len(state.answered())
    result = rescore(ENV_ID, root / "run", root / "other", judge=f"openai:judge-b@{url}")
    assert _models(state)[before:] == ["judge-b"] * EPISODES  # the world model replays from the cache
    roles = result.summary["model_calls"]["roles"]
    assert roles["world_model"]["calls"] == 0 and roles["world_model"]["cache_hits"] > 0
    info = result.summary["rescore"]
    assert info["judge"].startswith("openai:judge-b") and info["source_judge"].startswith("openai:judge-a")
    assert (info["changed_scores"], info["diverged"]) == (EPISODES, 0)
    old, new = _episodes(root / "run"), _episodes(root / "other")
    assert old.keys() == new.keys()
    for key, episode in old.items():
        assert new[key]["actions"] == episode["actions"] and new[key]["observations"] == episode["observations"]
        assert (new[key]["score"], new[key]["won"]) == (0.0, False)


def test_a_judge_the_reward_mode_never_asks_is_warned_about(tmp_path: Path) -> None:
    import gymnasium as gym

    with pytest.warns(UserWarning, match="never asked"):
        gym.make(ENV_ID, world_model="real", judge="openai:j@http://127.0.0.1:9").close()
