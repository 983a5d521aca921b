"""Regenerate ``metrics.json``: upstream VitaBench 2.0's ``compute_metrics`` on fixed result records.

Not run by pytest. Needs the upstream source (meituan-longcat/VitaBench-2.0 at the commit in
``UPSTREAM_COMMIT``) unpacked in a scratch folder outside the project, and a Python with its
dependencies (pandas, pydantic, loguru), e.g.::

    cd /work/scratch/vita2 && VITA_MODEL_CONFIG_PATH=/tmp/models.yaml PYTHONPATH=src \\
        /work/scratch/vita/venv/bin/python /work/wt/vita2/tests/conformance/vitabench_v2/regenerate_metrics.py

(``/tmp/models.yaml`` may hold just ``x: 1``.) Each case lists the scored subtask episodes as rows
``{sequence_id, subtask_index, trial, reward, skill_tested}``; a trial that crashed or a subtask
upstream did not evaluate simply has no row. The rows become upstream ``SimulationRun`` records
(one per user and trial, with ``subtask_rewards`` / ``subtask_skill_tested`` as its
personalization orchestrator writes them) and upstream's numbers are stored next to the rows.
"""

from __future__ import annotations

import json
from pathlib import Path

from vita.data_model.simulation import AgentInfo, Info, Results, RewardInfo, SimulationRun, UserInfo
from vita.data_model.tasks import Task
from vita.environment.environment import EnvironmentInfo
from vita.metrics.agent_metrics import compute_metrics

UPSTREAM = "meituan-longcat/VitaBench-2.0"
UPSTREAM_COMMIT = "f60169e89f30499cb7883f3dad76bd03facc908d"
OUT = Path(__file__).with_name("metrics.json")

# Subtasks per user and their skill_tested, shared by every case.
USERS = {"u1": [[], ["proactive"], ["update"]], "u2": [["proactive"], []], "u3": [[], []]}


def rows(spec: dict[tuple[str, int], list[float | None]]) -> list[dict]:
    """Rows from {(user, subtask): [reward per trial, None = no result]}."""
    out = []
    for (user, index), rewards in spec.items():
        for trial, reward in enumerate(rewards):
            if reward is not None:
                out.append({"sequence_id": user, "subtask_index": index, "trial": trial, "reward": reward,
                            "skill_tested": USERS[user][index]})
    return out


CASES = {
    "all_trials_written": (3, rows({("u1", 0): [1.0, 1.0, 0.0], ("u1", 1): [0.0, 1.0, 0.5], ("u1", 2): [1.0, 1.0, 1.0],
                                     ("u2", 0): [0.0, 0.0, 0.0], ("u2", 1): [1.0, 0.0, 1.0]})),
    "one_trial_crashed": (3, rows({("u1", 0): [1.0, None, 1.0], ("u1", 1): [1.0, None, 0.0], ("u1", 2): [1.0, None, 1.0],
                                    ("u2", 0): [1.0, 1.0, 0.0], ("u2", 1): [1.0, 1.0, 1.0]})),
    "user_never_scored": (2, rows({("u1", 0): [1.0, 1.0], ("u1", 1): [0.0, 1.0], ("u1", 2): [0.5, 1.0],
                                    ("u2", 0): [1.0, 0.0], ("u2", 1): [1.0, 1.0]})),
    "subtask_not_evaluated": (4, rows({("u1", 0): [1.0, 1.0, 1.0, 0.0], ("u1", 1): [1.0, None, 1.0, 1.0],
                                        ("u1", 2): [None, None, 1.0, None], ("u2", 0): [0.0, 1.0, None, 1.0],
                                        ("u2", 1): [1.0, 1.0, 1.0, 1.0]})),
    "last_subtask_never_scored": (2, rows({("u1", 0): [1.0, 0.0], ("u1", 1): [1.0, 1.0], ("u2", 0): [1.0, 1.0]})),
    "single_trial": (1, rows({("u1", 0): [1.0], ("u1", 1): [0.0], ("u2", 0): [1.0], ("u2", 1): [0.3]})),
}


def results_for(num_trials: int, case_rows: list[dict]) -> Results:
    by_sim: dict[tuple[str, int], dict[int, float]] = {}
    for row in case_rows:
        by_sim.setdefault((row["sequence_id"], row["trial"]), {})[row["subtask_index"]] = row["reward"]
    sims = []
    for (user, trial), rewards in sorted(by_sim.items()):
        breakdown = {f"subtask_{i}_reward": r for i, r in sorted(rewards.items())}
        skills = {f"subtask_{i}": s for i, s in enumerate(USERS[user])}
        info = {"num_subtasks": len(USERS[user]), "num_evaluated": len(rewards), "subtask_rewards": breakdown,
                "subtask_skill_tested": skills, "aggregation": "average"}
        sims.append(SimulationRun(id=f"{user}-{trial}", task_id=user, trial=trial, start_time="20260101_000000",
                                  end_time="20260101_000100", duration=60.0, termination_reason="user_stop",
                                  agent_cost=0.0, messages=[],
                                  reward_info=RewardInfo(reward=sum(rewards.values()) / len(rewards), info=info)))
    tasks = [Task(id=u, domain="personalization", environment={}, user_scenario={"user_profile": {}}, instructions="")
             for u in USERS]
    info = Info(git_commit="x", num_trials=num_trials, max_steps=300, max_errors=10,
                user_info=UserInfo(implementation="user"), agent_info=AgentInfo(implementation="agent"),
                environment_info=EnvironmentInfo(domain_name="personalization"))
    return Results(info=info, tasks=tasks, simulations=sims)


def main() -> None:
    cases = {}
    for name, (num_trials, case_rows) in CASES.items():
        metrics = compute_metrics(results_for(num_trials, case_rows))
        expected = {"num_trials": num_trials}
        if metrics.subtask_pass_hat_ks:
            expected.update(
                subtask_pass_hat_ks={str(k): float(v) for k, v in metrics.subtask_pass_hat_ks.items()},
                subtask_pass_at_n={str(k): float(v) for k, v in metrics.subtask_pass_at_n.items()},
                subtask_average_at_n={str(k): float(v) for k, v in metrics.subtask_average_at_n.items()},
                subtask_num_units=metrics.subtask_num_units)
        expected["skill_split_metrics"] = metrics.skill_split_metrics or {}
        cases[name] = {"num_trials": num_trials, "rows": case_rows, "upstream": expected}
    OUT.write_text(json.dumps({"upstream": UPSTREAM, "commit": UPSTREAM_COMMIT, "cases": cases}, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
