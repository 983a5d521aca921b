"""Regenerate ``expected.json``: SkillRise's released pure-python pieces run on fixed inputs.

Not run by pytest. Upstream is lyq1119/SkillRise-reproduction-and-refinement at
``UPSTREAM_COMMIT`` (the release copy; no git snapshot could be fetched, so the functions below
were read from the public index and saved unchanged under ``$SKILLRISE_UPSTREAM``, default
``/work/scratch/skillrise/upstream``; parts of those files the pieces do not use, such as the
LaMer reflect prompts and the GiGPO functions with their ``verl`` import, were left out):

* ``agent_system/environments/skillrise_alfworld/projection.py`` (``skillrise_projection``),
* ``agent_system/environments/skillrise_alfworld/prompt.py`` (``get_skillrise_prompt``, whose
  arguments are recorded: the prompt's slots),
* ``agent_system/environments/skillrise_alfworld/group_loader.py`` (``GroupLoader``),
* ``agent_system/multi_turn_rollout/skillrise_rollout_loop.py``
  (``TrajectoryCollector.skillrise_credit_assignment``, as a function),
* ``verl/trainer/ppo/core_gigpo.py`` (``compute_skillrise_outcome_advantage``),
* the history memory ``SimpleMemory`` it imports from ``agent_system/environments/alfworld/memory.py``,
  which the index does not hold for this repo: the same file of the repo it builds on,
  mlbio-epfl/LaMer at ``LAMER_COMMIT``.

The env manager (``SkillRiseAlfWorldEnvironmentManager``) and the rollout loop need Ray and
ALFWorld workers, so :func:`play_trial` replays their calls for one row in their order
(reset -> build_text_obs(play) -> step(play) ... -> curate -> step(curate) -> advance), with
history lengths 15 (solve) and 50 (curate) as ``build_text_obs`` passes them, and the
invalid-action penalty applied as verl's ``apply_invalid_action_penalty`` does (0.5, the
script's coefficient) before the advantage.

Run: ``/work/scratch/skillrise/venv/bin/python tests/conformance/skillrise/regenerate_skillrise.py``
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

UPSTREAM = Path(os.environ.get("SKILLRISE_UPSTREAM", "/work/scratch/skillrise/upstream"))
UPSTREAM_REPO = "lyq1119/SkillRise-reproduction-and-refinement"
UPSTREAM_COMMIT = "79bbd911cf5a477e13679bd7eb0728dfd871c632"
LAMER_REPO = "mlbio-epfl/LaMer"
LAMER_COMMIT = "a53df44645dc1148779dc57fe294a205e5a34242"
INVALID_PENALTY = 0.5
TRAJ_GAMMA = 0.6
OUT = Path(__file__).resolve().parent / "expected.json"

sys.path.insert(0, str(UPSTREAM))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import agent_system.environments.skillrise_alfworld.prompt as prompt_module  # noqa: E402
from agent_system.environments.alfworld.memory import SimpleMemory  # noqa: E402
from agent_system.environments.skillrise_alfworld.group_loader import GroupLoader  # noqa: E402
from agent_system.environments.skillrise_alfworld.projection import skillrise_projection  # noqa: E402
from agent_system.skillrise_credit import skillrise_credit_assignment  # noqa: E402
from verl.trainer.ppo.core_gigpo import compute_skillrise_outcome_advantage  # noqa: E402

PLAY_OUTPUTS = [
    "The mug is probably on the desk.\n<action>go to desk 1</action>",
    "<ACTION>Take Mug 1 from Desk 1</ACTION>",
    "no tags here, I would just go to desk 1 and take the mug",
    "<action>go to desk 1",
    "</action> first, then <action>open drawer 2</action>",
    "<think>hmm</think><action>  use desklamp 1  </action> and some trailing text",
    "<action>go to desk 1</action><action>open drawer 1</action>",
    "",
    "先想一想 <action>go to bed 1</action>",
    "   short tail   ",
    "<action></action>",
    "<action>\nput mug 1 in/on shelf 2\n</action>",
]
CURATE_OUTPUTS = [
    "Reasoning first.\n<skill>## Workflow\n- find the object, take it, use the lamp</skill>",
    "<skill>first draft</skill> on second thought <skill>second draft</skill>",
    "<skill>never closed",
    "</skill> reversed <skill>",
    "<skill>   </skill>",
    "<skill>" + "x" * 4100 + "</skill>",
    "<SKILL>capitals</SKILL>",
    "no document at all",
]


def _step(completion, obs, reward=0.0, done=False, won=False):
    return {"completion": completion, "obs": obs, "reward": reward, "done": done, "won": won}


def _task(init, admissible, steps):
    return {"init_observation": init, "admissible": admissible, "steps": steps}


ADM_A = ["go to desk 1", "go to shelf 1", "inventory", "look", "help"]
ADM_B = ["go to sidetable 1", "use desklamp 1", "take plate 1 from sidetable 1", "help"]
INIT_A = "You are in the middle of a room. Looking quickly around you, you see a desk 1, a shelf 1.\n\nYour task is to: examine the mug with the desklamp."
INIT_B = "You are in the middle of a room. You see a sidetable 1.\n\nYour task is to: look at plate under the desklamp."
INIT_C = "You are in the middle of a room. You see a bed 1, a drawer 2.\n\nYour task is to: examine the book with the desklamp."

TRIALS = [
    {   # all three tasks solved; one invalid solve turn; curate turns valid
        "group": "g0", "traj": "g0-t0", "max_turns": 10,
        "tasks": [
            _task(INIT_A, ADM_A, [_step("<action>go to desk 1</action>", "On the desk 1, you see a mug 1, a desklamp 1."),
                                  _step("I take it", "Nothing happens."),
                                  _step("<action>take mug 1 from desk 1</action>", "You pick up the mug 1 from the desk 1."),
                                  _step("<action>use desklamp 1</action>", "You turn on the desklamp 1.", 10.0, True, True)]),
            _task(INIT_B, ADM_B, [_step("<action>go to sidetable 1</action>", "On the sidetable 1, you see a plate 1."),
                                  _step("<action>use desklamp 1</action>", "You turn on the desklamp 1."),
                                  _step("<action>take plate 1 from sidetable 1</action>", "You pick up the plate 1.", 10.0, True, True)]),
            _task(INIT_C, ADM_A, [_step("<action>go to bed 1</action>", "On the bed 1, you see a book 1.", 10.0, True, True)]),
        ],
        "curate": [CURATE_OUTPUTS[0], CURATE_OUTPUTS[1]],
    },
    {   # the middle task fails by the turn limit; the first curate turn is invalid (document kept)
        "group": "g0", "traj": "g0-t1", "max_turns": 3,
        "tasks": [
            _task(INIT_A, ADM_A, [_step("<action>go to shelf 1</action>", "On the shelf 1, you see nothing."),
                                  _step("<action>go to desk 1</action>", "On the desk 1, you see a mug 1."),
                                  _step("<action>take mug 1 from desk 1</action>", "You pick up the mug 1.")]),
            _task(INIT_B, ADM_B, [_step("<action>look</action>", "You are in the middle of a room."),
                                  _step("<action>go to sidetable 1</action>", "On the sidetable 1, you see a plate 1."),
                                  _step("nothing parseable", "Nothing happens.")]),
            _task(INIT_C, ADM_A, [_step("<action>go to bed 1</action>", "On the bed 1, you see a book 1."),
                                  _step("<action>use desklamp 1</action>", "You turn on the desklamp 1.", 10.0, True, True)]),
        ],
        "curate": [CURATE_OUTPUTS[2], CURATE_OUTPUTS[0]],
    },
    {   # only the last task solved; an empty <skill> block empties the document
        "group": "g0", "traj": "g0-t2", "max_turns": 3,
        "tasks": [
            _task(INIT_A, ADM_A, [_step("<action>inventory</action>", "You are not carrying anything."),
                                  _step("<action>look</action>", "You are in the middle of a room."),
                                  _step("<action>look</action>", "You are in the middle of a room.")]),
            _task(INIT_B, ADM_B, [_step("<action>take plate 1 from sidetable 1</action>", "Nothing happens."),
                                  _step("<action>go to sidetable 1</action>", "On the sidetable 1, you see a plate 1."),
                                  _step("<action>take plate 1 from sidetable 1</action>", "You pick up the plate 1.", 10.0, True, True)]),
            _task(INIT_C, ADM_A, [_step("<action>go to bed 1</action>", "On the bed 1, you see a book 1.", 10.0, True, True)]),
        ],
        "curate": [CURATE_OUTPUTS[4], CURATE_OUTPUTS[5]],
    },
    {   # a group of one trial: its advantages are its raw scores
        "group": "g1", "traj": "g1-t0", "max_turns": 2,
        "tasks": [
            _task(INIT_B, ADM_B, [_step("<action>go to sidetable 1</action>", "On the sidetable 1, you see a plate 1."),
                                  _step("bad", "Nothing happens.")]),
            _task(INIT_A, ADM_A, [_step("<action>go to desk 1</action>", "On the desk 1, you see a mug 1.", 10.0, True, True)]),
        ],
        "curate": [CURATE_OUTPUTS[6]],
    },
    {   # a long task: the solve history holds the last 15 steps only
        "group": "g2", "traj": "g2-t0", "max_turns": 18,
        "tasks": [
            _task(INIT_A, ADM_A, [_step(f"<action>go to shelf {i % 3 + 1}</action>", f"Step {i} observation.")
                                  for i in range(17)]
                  + [_step("<action>use desklamp 1</action>", "You turn on the desklamp 1.", 10.0, True, True)]),
            _task(INIT_B, ADM_B, [_step("<action>look</action>", "You are in the middle of a room.", 0.0, True, False)]),
        ],
        "curate": [CURATE_OUTPUTS[0]],
    },
]


def play_trial(trial):
    """Replay the env manager's and the rollout loop's calls for one row; return the rows the
    policy answered (phase, position, prompt arguments, projection) and the trial's steps."""
    calls = []
    original = prompt_module.get_skillrise_prompt

    def recording(**kwargs):
        calls.append(dict(kwargs))
        return original(**kwargs)

    K = len(trial["tasks"])
    memories = [SimpleMemory() for _ in range(K)]
    for memory in memories:
        memory.reset(1)
    skills = [""]
    rows = []

    def row_won(pos):
        return any(rec.get("won") for rec in memories[pos]._data[0])

    for pos, task in enumerate(trial["tasks"]):
        init_states = [task["init_observation"]]
        adm = ",\n ".join(f"'{s}'" for s in task["admissible"] if s != "help")
        for turn, step in enumerate(task["steps"][: trial["max_turns"]]):
            curr_traj = [""] if turn == 0 else memories[pos].fetch(history_length=15)[0]
            recording(phase="play", turn_idx=turn, init_observation=init_states[0], curr_traj=curr_traj[0],
                      admissible_actions=adm, skill=skills[0])
            actions, valids = skillrise_projection([step["completion"]], [task["admissible"]], phase="play")
            memories[pos].store({"text_obs": [step["obs"]], "action": actions, "reward": [step["reward"]],
                                 "dones": [step["done"]], "won": [step["won"]]})
            rows.append({"phase": "play", "traj_idx": pos, "rewards": step["reward"], "valid": bool(valids[0]),
                         "projected": actions[0], "prompt_args": calls[-1]})
            if step["done"]:
                break
        if pos < K - 1:
            traj, _ = memories[pos].fetch(history_length=50)
            recording(phase="curate", curr_traj=traj[0], skill=skills[0], won=row_won(pos))
            new, valids = skillrise_projection([trial["curate"][pos]], phase="curate")
            if new[0] is not None:
                skills[0] = new[0]
            rows.append({"phase": "curate", "traj_idx": pos, "rewards": 0.0, "valid": bool(valids[0]),
                         "skill_after": skills[0], "prompt_args": calls[-1]})
    return rows


def advantages(trials_rows):
    """Credit, penalty and advantage as the released trainer computes them, one value per row."""
    batch = [[{"phase": r["phase"], "traj_idx": r["traj_idx"], "rewards": r["rewards"]} for r in rows]
             for _, rows in trials_rows]
    episode_rewards, _ = skillrise_credit_assignment(batch, max(len(t["tasks"]) for t, _ in trials_rows), TRAJ_GAMMA)
    flat, index, traj_index, task_pos, role = [], [], [], [], []
    for (trial, rows), rewards in zip(trials_rows, episode_rewards):
        for row, reward in zip(rows, rewards):
            flat.append(reward - INVALID_PENALTY * (0.0 if row["valid"] else 1.0))
            index.append(trial["group"])
            traj_index.append(trial["traj"])
            task_pos.append(row["traj_idx"])
            role.append(row["phase"])
    token_level = torch.tensor(flat, dtype=torch.float32).unsqueeze(-1)
    adv, _ = compute_skillrise_outcome_advantage(
        token_level_rewards=token_level, response_mask=torch.ones_like(token_level),
        index=np.array(index, dtype=object), traj_index=np.array(traj_index, dtype=object),
        task_pos=np.array(task_pos, dtype=object), role=np.array(role, dtype=object),
        curate_loss_weight=1.0, mode="mean_norm")
    scores = [list(map(float, r)) for r in episode_rewards]
    return scores, [float(a) for a in adv[:, 0]]


def group_order(seed: int, batch_groups: int, batches: int):
    """GroupLoader over a synthetic group file: the order groups are served in, batch by batch."""
    lines = [{"group_id": f"type{t}_K3_{i}", "task_type": f"type{t}", "K": 3,
              "tasks": [{"task_dir": f"type{t}-x-{i}-{j}", "trial": "trial_0"} for j in range(3)]}
             for t in range(3) for i in range(5)]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "groups.jsonl"
        path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
        loader = GroupLoader(str(path), batch_groups, seed=seed)
        served = [[g["group_id"] for g in loader.next_batch()] for _ in range(batches)]
    return {"seed": seed, "batch_groups": batch_groups, "file_order": [line["group_id"] for line in lines],
            "served": served}


def main() -> None:
    play, play_valid = skillrise_projection(list(PLAY_OUTPUTS), phase="play")
    skills, skill_valid = skillrise_projection(list(CURATE_OUTPUTS), phase="curate")
    trials_rows = [(trial, play_trial(trial)) for trial in TRIALS]
    scores, adv = advantages(trials_rows)
    out = {
        "upstream": {"repo": UPSTREAM_REPO, "commit": UPSTREAM_COMMIT,
                     "memory_from": {"repo": LAMER_REPO, "commit": LAMER_COMMIT}},
        "settings": {"invalid_penalty": INVALID_PENALTY, "traj_gamma": TRAJ_GAMMA, "solve_history": 15,
                     "curate_history": 50, "max_skill_chars": 4000},
        "projection_play": [{"completion": c, "action": a, "valid": bool(v)}
                            for c, a, v in zip(PLAY_OUTPUTS, play, play_valid)],
        "projection_curate": [{"completion": c, "skill": s, "valid": bool(v)}
                              for c, s, v in zip(CURATE_OUTPUTS, skills, skill_valid)],
        "trials": [{"trial": trial, "rows": rows} for trial, rows in trials_rows],
        "row_scores": scores,
        "advantages": adv,
        "group_order": [group_order(0, 4, 5), group_order(7, 6, 3)],
    }
    OUT.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
