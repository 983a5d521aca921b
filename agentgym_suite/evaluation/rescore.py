"""``agentgym eval ID --rescore RUN_DIR``: score a finished run's transcripts again, with the same judge or another.

The run's episodes are played again with the same seeds by a :class:`ReplayAgent` that sends the
recorded actions, while every model-played role except the judge may only answer from the model
cache (so the simulated user says what it said, at no cost: a missing answer is an error, never
a new conversation). The judge answers from the cache when it already judged these transcripts
(the same judge: 0 new calls, the same scores) or is asked (``--judge`` another model: only its
verdicts change). The new run is written like any evaluation (``trajectories.jsonl``,
``summary.json``) and its summary says which judge scored what under ``rescore``::

    {"source_run": "...", "source_judge": "openai:a@...", "judge": "openai:b@...",
     "episodes": 8, "changed_scores": 3, "diverged": 0, "missing": 0}

``diverged`` counts episodes whose replay did not see the recorded observations (the cache did
not hold the user's answers, or the env changed); their scores are not comparable.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium as gym

from agentgym_suite.core.errors import AgentGymError
from agentgym_suite.evaluation.store import CONFIG_FILE, SUMMARY_FILE, TrajectoryStore
from agentgym_suite.llm.role_client import ROLES, declared_roles
from agentgym_suite.registration import env_class
from agentgym_suite.rollout.records import Trajectory


class RescoreError(AgentGymError, ValueError):
    """A run cannot be rescored as asked (no such run, another env, no judge to change)."""


class ReplayAgent:
    """Plays each episode's recorded actions again, the episode found by its seed.

    Args:
        records: the finished run's trajectories.
    """

    name = "replay"

    def __init__(self, records: list[Trajectory]) -> None:
        self.actions = {int(r.seed): [t.completion_text for t in r.turns] for r in records if r.seed is not None}
        self._playing: list[str] = []

    def reset(self, env: gym.Env, *, seed: int | None = None) -> None:
        """Start replaying the episode played with ``seed``."""
        if seed is None or int(seed) not in self.actions:
            raise RescoreError(f"the run being rescored has no episode with seed {seed}; rescore with its own settings.")
        self._playing = list(self.actions[int(seed)])

    def act(self, observation: str, info: dict[str, Any]) -> str:
        """The next recorded action (an empty action once the record has no more)."""
        return self._playing.pop(0) if self._playing else ""


def _read_config(run_dir: Path) -> dict[str, Any]:
    try:
        config = json.loads((run_dir / CONFIG_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RescoreError(f"--rescore {run_dir}: no readable {CONFIG_FILE} there ({exc}); name the --out folder of a "
                           "finished `agentgym eval` run.") from None
    if not isinstance(config, dict) or "env_id" not in config:
        raise RescoreError(f"--rescore {run_dir}: {CONFIG_FILE} is not an evaluation's config.")
    return config


def rescore(env_id: str, run_dir: str | Path, out_dir: str | Path, *, judge: str | None = None,
            model_cache: str | Path | None = "auto", prices: dict[str, dict[str, float]] | None = None,
            progress: bool = False) -> Any:
    """Rescore the run in ``run_dir`` into ``out_dir`` (see the module docstring); returns the
    :class:`~agentgym_suite.evaluation.runner.EvalResult` of the new run, its summary with ``rescore``.

    ``judge``: a backend spec for the env's judge setting (None: the run's own judge).
    ``model_cache``: ``"auto"`` uses the folder the run used (recorded in its config), else the given one.
    """
    from agentgym_suite.evaluation.runner import _write_json, evaluate

    source = Path(run_dir)
    config = _read_config(source)
    if config["env_id"] != env_id:
        raise RescoreError(f"--rescore {source} holds a {config['env_id']} run, not {env_id}.")
    if Path(out_dir).resolve() == source.resolve():
        raise RescoreError("--out must be a new folder: rescoring writes a new run beside the one it rescores.")
    setting = str(getattr(env_class(env_id), "judge_setting", "") or "")
    if not setting:
        raise RescoreError(f"{env_id} declares no judge (judge_setting), so there is nothing to rescore.")
    kwargs = dict(config.get("env_kwargs") or {})
    source_judge = kwargs.get(setting)
    if judge is not None:
        kwargs[setting] = judge
    if kwargs.get(setting) is None:
        raise RescoreError(f"the run in {source} had no judge; pass --judge SPEC to score it with one.")
    records = list(TrajectoryStore(source).load()[0].values())
    if model_cache == "auto":
        model_cache = config.get("model_cache") or "auto"
    result = evaluate(env_id, ReplayAgent(records), out_dir=out_dir, episodes=config.get("episodes"),
                      k=int(config.get("k") or 1), seed=int(config.get("seed") or 0), env_kwargs=kwargs,
                      max_turns=config.get("max_turns"), progress=progress, model_cache=model_cache, prices=prices,
                      replay_roles=tuple(sorted((set(ROLES) | set(declared_roles(env_class(env_id)).values())) - {"judge"})))
    before = {r.key: r for r in records}
    diverged = changed = 0
    for record in result.records:
        old = before.get(record.key)
        if old is None:
            continue
        if [t.observation for t in old.turns] != [t.observation for t in record.turns]:
            diverged += 1
        elif old.score != record.score or old.won != record.won:
            changed += 1
    result.summary["rescore"] = {
        "source_run": str(source.resolve()), "source_judge": source_judge, "judge": kwargs[setting],
        "episodes": len(result.records), "changed_scores": changed, "diverged": diverged,
        "missing": sum(1 for key in before if key not in {r.key for r in result.records}),
    }
    _write_json(Path(out_dir) / SUMMARY_FILE, result.summary)
    return result


__all__ = ["ReplayAgent", "RescoreError", "rescore"]
