"""The two prompts of a SkillRise trial, laid out as the released trials lay them out (the
wording is ours).

Solve: who the agent is; the skill document (whole; a placeholder while it is empty); the
task's first observation; from the second turn on, the task's trajectory so far
(:mod:`~agentgym_suite.envs.skillrise.history`); the admissible actions; and the request to
reason and then answer inside ``<action> </action>``.

Curate: the old document; the finished attempt (its whole trajectory) and its outcome; the
rules for rewriting the document; and the request to answer with the whole new document
inside ``<skill> </skill>``.

:func:`solve_slots` and :func:`curate_slots` return what fills each prompt under the names the
released prompt builder takes as arguments, so a conformance test can compare them.
"""

from __future__ import annotations

from typing import Any, Sequence

EMPTY_DOCUMENT = "(Empty: no skill has been written down yet.)"

SOLVE_TEMPLATE = """You are an expert agent acting in {environment}.

## Skill document
Skills written down from earlier tasks of this same family. Apply a skill only when you are sure it fits \
the current situation; otherwise leave it aside.
{skill_document}

{init_observation}{trajectory}

The actions you can take now:
[{admissible_actions}]

{instructions}"""

ACTION_INSTRUCTIONS = ("It is your turn. First reason step by step about the situation. Then choose one of the actions "
                       "above and write it inside <action> </action> tags.")
"""The Solve prompt's last paragraph when the trial reads ``<action>`` tags itself."""

TRAJECTORY_TEMPLATE = """
What you have done so far in this task, and what you observed after each action:
{history}"""

CURATE_TEMPLATE = """You keep a SKILL DOCUMENT for an agent that solves a family of related tasks in \
{environment}. The agent has just made one attempt at a task. Revise the document so that the agent solves \
the NEXT tasks of this family more reliably.

## Current skill document
{skill_document}

## The attempt (the actions taken and what was observed)
{history}
Outcome: {outcome}

## How to revise
Start from the current document and improve it with what this attempt showed:
- Generalise. Replace specific objects, receptacle numbers and places (such as "mug 2" or "drawer 3") by \
roles ("the object to find", "a receptacle").
- Write down only what the attempt supports; invent no steps it did not show.
- If the attempt failed, state where it went wrong as a pitfall.
- Keep it short and precise; no generic advice. If the attempt taught little, change little.
- Do not retell the attempt: keep a reusable procedure.

Headings that often fit (use those that help):
## When to use
## Workflow
## Pitfalls

Reason first; then give the WHOLE revised document inside <skill> </skill> tags."""

SUCCESS, FAILURE = "SUCCESS", "FAILURE (task not completed)"


def admissible_text(actions: Sequence[str] | None) -> str | None:
    """The admissible actions as the prompt lists them (quoted, ``help`` left out); None without a list."""
    if actions is None:
        return None
    return ",\n ".join(f"'{a}'" for a in actions if a != "help")


def solve_slots(*, turn: int, init_observation: str, history: str, admissible: Sequence[str] | None,
                skill: str) -> dict[str, Any]:
    """What fills a Solve prompt, under the released builder's argument names."""
    return {"phase": "play", "turn_idx": turn, "init_observation": init_observation, "curr_traj": history,
            "admissible_actions": admissible_text(admissible), "skill": skill}


def curate_slots(*, history: str, skill: str, won: bool) -> dict[str, Any]:
    """What fills a Curate prompt, under the released builder's argument names."""
    return {"phase": "curate", "curr_traj": history, "skill": skill, "won": won}


def render(slots: dict[str, Any], environment: str, instructions: str = ACTION_INSTRUCTIONS) -> str:
    """The prompt text of ``slots`` (from :func:`solve_slots` or :func:`curate_slots`); a Solve prompt
    ends with ``instructions`` (how to answer)."""
    document = (slots["skill"] or "").strip() or EMPTY_DOCUMENT
    if slots["phase"] == "curate":
        return CURATE_TEMPLATE.format(environment=environment, skill_document=document, history=slots["curr_traj"],
                                      outcome=SUCCESS if slots["won"] else FAILURE)
    trajectory = TRAJECTORY_TEMPLATE.format(history=slots["curr_traj"]) if slots["turn_idx"] > 0 else ""
    text = SOLVE_TEMPLATE.format(environment=environment, skill_document=document,
                                 init_observation=slots["init_observation"], trajectory=trajectory,
                                 admissible_actions=slots["admissible_actions"] or "",
                                 instructions=instructions)
    if slots["admissible_actions"] is None:  # an env without a command list (e.g. tool calls)
        text = text.replace("\n\nThe actions you can take now:\n[]", "")
    return text
