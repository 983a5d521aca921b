"""SkillRise against the released code's outputs (``skillrise/expected.json``, made by
``skillrise/regenerate_skillrise.py`` from lyq1119/SkillRise-reproduction-and-refinement at the
commit recorded there).

Replayed through the suite: the Solve projection (``<action>`` tags only) and the Curate parse;
whole trials of scripted answers through ``SkillRiseTrial`` (the arguments each prompt is built
from: the task's first observation, the history of projected actions and observations, the
admissible actions, the skill document, the outcome; the validity of every answer; the command
the base env receives); the rows' advantages through the ``skillrise`` credit plug-in; and the
order curated groups are served in.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch

from agentgym_suite.core.actions import ParsedAction
from agentgym_suite.core.text_env import StepOutcome, TaskStart, TextEnv
from agentgym_suite.envs.skillrise import SkillRiseTrial
from agentgym_suite.envs.skillrise.groups import TaskGroup, serving_order
from agentgym_suite.envs.skillrise.projection import parse_skill, project_solve_action
from agentgym_suite.trainers.credit import CreditBatch, get_credit_assigner

HERE = Path(__file__).resolve().parent / "skillrise"
EXPECTED: dict[str, Any] = json.loads((HERE / "expected.json").read_text(encoding="utf-8"))
UPSTREAM_COMMIT = "79bbd911cf5a477e13679bd7eb0728dfd871c632"


def test_outputs_come_from_the_pinned_upstream_commit() -> None:
    assert EXPECTED["upstream"]["commit"] == UPSTREAM_COMMIT
    assert EXPECTED["settings"] == {"invalid_penalty": 0.5, "traj_gamma": 0.6, "solve_history": 15,
                                    "curate_history": 50, "max_skill_chars": 4000}


@pytest.mark.parametrize("case", EXPECTED["projection_play"], ids=lambda c: repr(c["completion"][:24]))
def test_solve_projection_matches(case: dict[str, Any]) -> None:
    assert tuple(project_solve_action(case["completion"])) == (case["action"], case["valid"])


@pytest.mark.parametrize("case", EXPECTED["projection_curate"], ids=lambda c: repr(c["completion"][:24]))
def test_curate_parse_matches(case: dict[str, Any]) -> None:
    assert parse_skill(case["completion"], 4000) == case["skill"]
    assert (parse_skill(case["completion"], 4000) is not None) == case["valid"]


class ScriptedTasks(TextEnv):
    """Plays a trial's scripted tasks: each step answers with the script's next observation,
    whatever the command (the commands it receives are kept in ``received``)."""

    benchmark = "scripted"
    default_action_format = "plain"
    prompt_description = "a scripted household"

    def __init__(self, tasks: list[dict[str, Any]], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.tasks = {f"task{i}": task for i, task in enumerate(tasks)}
        self.current: dict[str, Any] = {}
        self.received: list[str] = []

    def task_ids(self) -> list[str]:
        return sorted(self.tasks)

    def _load_task(self, task_id: str) -> TaskStart:
        self.current = self.tasks[task_id]
        return TaskStart(self.current["init_observation"], "scripted", list(self.current["admissible"]))

    def _execute(self, command: str, parsed: ParsedAction) -> StepOutcome:
        self.received.append(command)
        step = self.current["steps"][self.turn - 1]
        return StepOutcome(step["obs"], step["reward"], 1.0 if step["won"] else 0.0, won=step["won"],
                           terminated=step["done"], admissible_actions=list(self.current["admissible"]))


def play(trial: dict[str, Any]) -> tuple[list[dict[str, Any]], SkillRiseTrial, ScriptedTasks]:
    """Play one scripted trial; one record per model turn (the prompt's slots, the turn's role,
    position, validity and the document after it) and the final position rewards."""
    base = ScriptedTasks(trial["tasks"])
    group = TaskGroup("group", "scripted", tuple(base.task_ids()), (0,) * len(trial["tasks"]),
                      (False,) * len(trial["tasks"]))
    env = SkillRiseTrial(base, k=len(trial["tasks"]), turns_per_task=trial["max_turns"], projection="action_tag",
                         groups=[group])
    _, info = env.reset(seed=0, options={"task_id": "group"})
    solve_answers = [[s["completion"] for s in task["steps"]] for task in trial["tasks"]]
    records: list[dict[str, Any]] = []
    done = False
    while not done:
        role, position, slots = info["role"], info["position"], dict(env.slots)
        prompt, truncation = info["prompt_messages"][0]["content"], info["prompt_truncation"]
        answer = solve_answers[position].pop(0) if role == "solve" else trial["curate"][position]
        _, _, done, _, info = env.step(answer)
        records.append({"role": role, "position": position, "slots": slots, "valid": info["action_valid"],
                        "projected": info.get("projected_action"), "doc": env.doc, "prompt": prompt,
                        "truncation": truncation})
    for record in records:
        record["return"] = info["position_rewards"].get(record["position"], 0.0)
    return records, env, base


@pytest.mark.parametrize("index", range(len(EXPECTED["trials"])), ids=lambda i: EXPECTED["trials"][i]["trial"]["traj"])
def test_trials_build_the_same_prompts_and_read_the_same_answers(index: int) -> None:
    trial, rows = EXPECTED["trials"][index]["trial"], EXPECTED["trials"][index]["rows"]
    records, env, base = play(trial)
    assert [(r["role"], r["position"]) for r in records] == [
        ("solve" if row["phase"] == "play" else "curate", row["traj_idx"]) for row in rows]
    for record, row in zip(records, rows):
        assert record["slots"] == row["prompt_args"]
        assert record["valid"] == row["valid"]
        if row["phase"] == "play":
            assert record["projected"] == row["projected"]
        else:
            assert record["doc"] == row["skill_after"]
    sent = [row["projected"].strip() for row in rows if row["phase"] == "play"]
    assert base.received == sent  # the base env gets the projected command
    for record in records:  # every prompt holds its whole skill document and history, and may not be cut
        assert record["slots"]["skill"].strip() in record["prompt"] and record["slots"]["curr_traj"] in record["prompt"]
        assert record["truncation"] == "error"


def _batch(plays: list[tuple[dict[str, Any], list[dict[str, Any]]]]) -> CreditBatch:
    rows = [(trial, k, r) for trial, records in plays for k, r in enumerate(records)]
    n = len(rows)
    return CreditBatch(group_ids=[t["group"] for t, _, _ in rows], traj_ids=[t["traj"] for t, _, _ in rows],
                       turn_idx=[k for _, k, _ in rows], roles=[r["role"] for _, _, r in rows],
                       returns=torch.tensor([r["return"] for _, _, r in rows]),
                       invalid=torch.tensor([not r["valid"] for _, _, r in rows]),
                       completion_mask=torch.ones(n, 2, dtype=torch.long),
                       extras={"positions": [r["position"] for _, _, r in rows]})


def test_advantages_match() -> None:
    plays = [(case["trial"], play(case["trial"])[0]) for case in EXPECTED["trials"]]
    credit = get_credit_assigner("skillrise", gamma=0.6, invalid_penalty=0.5)
    out = credit.advantages(_batch(plays))
    assert out.advantages[:, 0].tolist() == pytest.approx(EXPECTED["advantages"], abs=1e-5)


@pytest.mark.parametrize("case", EXPECTED["group_order"], ids=lambda c: f"seed{c['seed']}")
def test_groups_are_served_in_the_released_order(case: dict[str, Any]) -> None:
    groups = [TaskGroup(g, g.split("_")[0], ("a", "b", "c"), (0, 0, 0), (False,) * 3) for g in case["file_order"]]
    order = [g.group_id for g in serving_order(groups, case["seed"])]
    served = [order[i % len(order)] for i in range(sum(len(b) for b in case["served"]))]
    assert served == [g for batch in case["served"] for g in batch]
