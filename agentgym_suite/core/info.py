"""The ``info`` keys every env of the suite fills in, documented in one place.

Env-specific keys may be added beside these (``scienceworld_score``, ``f1``, ``messages``…);
these keep the same meaning everywhere.
"""

from __future__ import annotations

from typing import Any

INFO_KEYS: dict[str, str] = {
    "task_id": "str: id of the current task, one of env.unwrapped.task_ids().",
    "task": "str: the instruction the agent is asked to accomplish.",
    "won": "bool: the task is solved.",
    "score": "float in [0, 1]: normalised task score so far (1.0 when won).",
    "action_valid": "bool: the last action was well-formed and accepted (True after reset).",
    "turn": "int: number of agent actions taken in this episode.",
    "admissible_actions": "list[str] | None: commands the env accepts now (command envs).",
    "tools": "list[dict] | None: OpenAI-format tool schemas (tool envs).",
    "task_family": "str, in the reset info: the task's family (e.g. the ALFWorld task type), '' for none; "
    "see TextEnv.task_family.",
    "error": "str, optional: why the episode ended abnormally (a backend crash, a timeout).",
    "privileged": "dict, only with privileged=True: oracle solution, skills, gold answer.",
    "scorable": "bool, optional, at the end: False when the env could not score the episode (e.g. a judge it needs is "
                "missing); evaluation leaves such episodes out of its rates and counts them.",
    "user_simulator": "str, optional: who played the simulated user (``scripted``, ``llm:<backend spec>``…).",
    "sequence_id": "str, optional: the sequence (user) a task belongs to, for per-sequence metrics (VitaBench 2.0).",
}
"""Key -> meaning. ``task_family`` is in the reset info only; ``error``, ``privileged`` and the optional
keys are present only when they apply."""

REQUIRED_INFO_KEYS = ("task_id", "task", "won", "score", "action_valid", "turn", "admissible_actions", "tools")


def base_info(**values: Any) -> dict[str, Any]:
    """Return an info dict holding every required key (``None``/defaults where unknown)."""
    info: dict[str, Any] = {
        "task_id": "",
        "task": "",
        "won": False,
        "score": 0.0,
        "action_valid": True,
        "turn": 0,
        "admissible_actions": None,
        "tools": None,
    }
    info.update(values)
    return info
