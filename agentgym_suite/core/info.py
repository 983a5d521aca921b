"""Every ``info`` key the suite's envs report, documented in one place.

* :data:`INFO_KEYS` — keys with one meaning everywhere: the required ones every env fills in
  (:data:`REQUIRED_INFO_KEYS`), and optional ones an env sets only when they apply (``error``,
  ``privileged``, tool-env conversations, env-rendered prompts, rehearsal generations…).
* :data:`ENV_INFO_KEYS` — keys one benchmark adds for its own metrics and state.

A key that is in neither is a mistake: the registration tests play every env and fail on an
undocumented key (:func:`undocumented_keys`). Add a new key here, with its type and meaning,
when an env starts to report it.
"""

from __future__ import annotations

from typing import Any, Iterable

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
    "scorable": "bool, optional, at the end: False when the env could not score the episode (e.g. a judge it needs is "
                "missing); evaluation leaves such episodes out of its rates and counts them.",
    "user_simulator": "str, optional: who played the simulated user (``scripted``, ``llm:<backend spec>``…).",
    "sequence_id": "str, optional: the sequence (user) a task belongs to, for per-sequence metrics (VitaBench 2.0).",
    "error": "str, optional: why the episode ended abnormally (a backend crash, a timeout, a failed tool call "
             "under end_on_tool_error).",
    "privileged": "dict, only with privileged=True: oracle solution, skills, gold answer.",
    "invalid_reason": "str, optional: why the last action was not valid (set with action_valid=False).",
    "messages": "list[dict], tool envs: the conversation so far in OpenAI chat format (system, user, assistant, "
                "tool messages).",
    "task_type": "str, optional: the task's family within its benchmark (ALFWorld's six task types; evaluation "
                 "summaries break success down by it).",
    "raw_observation": "str, optional: the observation without prompt rendering, when the env renders its own "
                       "prompts (the anchor state of GiGPO).",
    "prompt_messages": "list[dict], optional: the whole prompt of the next turn when the env renders it itself "
                       "(SkillRise trials); sent to the model as it is.",
    "role": "str, optional: the role the next prompt asks the model to play (SkillRise: solve | curate).",
    "position": "int, optional: index of the current task inside a multi-task trial (SkillRise).",
    "position_rewards": "dict[int, float], optional: reward of the task at each position of a multi-task trial.",
    "skill_document": "str, optional: the skill document a SkillRise trial carries from task to task.",
    "trial_tasks": "list[str], optional: the task ids of a SkillRise trial, in order.",
    "finished_position": "int, optional, on the step a task of a SkillRise trial ends: that task's position.",
    "finished_task_id": "str, optional, on the step a task of a SkillRise trial ends: that task's id.",
    "finished_won": "bool, optional, on the step a task of a SkillRise trial ends: whether it was solved.",
    "simulator_generations": "list[SimulatorGeneration], rehearsal env: the world model's generations of the "
                             "step, in call order (empty after reset).",
    "base_env_id": "str, rehearsal env: the tool env whose tasks are rehearsed.",
    "world_model": "str, rehearsal env: the world model's name ('real' for the base env's own tools).",
    "reward_mode": "str, rehearsal env: how the rehearsed episode is scored (base | checklist | gold_calls | judge | none).",
    "checklist_turn_scores": "list[float], rehearsal env with reward_mode='checklist': the score of each user turn "
                             "closed so far (met standards' weights summed over checklists).",
    "rehearsal_memory": "str, optional: the summary of imagined attempts a RehearsingAgent put into the info it "
                        "passes to the agent it wraps.",
    "game_file": "str, optional: the game file of a text game; read with task_type to pick a skill family.",
    "question_type": "str, optional: a QA task's question type; read to pick a skill family.",
    "source": "str, optional: a QA task's source dataset; read to pick a skill family.",
}
"""Key -> type and meaning. Only the :data:`REQUIRED_INFO_KEYS` are always present."""

ENV_INFO_KEYS: dict[str, str] = {
    "command": "str, TextWorld/ALFWorld: the command the action was read as.",
    "command_admissible": "bool, TextWorld/ALFWorld: that command was among the admissible ones.",
    "policy_commands": "list[str], TextWorld with planner_infos: the planner's commands from this state.",
    "max_score": "int, TextWorld: the game's maximum score.",
    "scienceworld_score": "int, ScienceWorld: the simulator's raw score (0..100).",
    "variation": "int, ScienceWorld: the task variation played.",
    "off_gold_path": "bool, ScienceWorld: the agent left the gold action sequence.",
    "purchased": "dict, WebShop: the product bought (asin and chosen options).",
    "reward_parts": "dict, WebShop: the parts of the purchase reward (type, attribute, option and price matches).",
    "search_query": "str, SearchQA: the query of a <search> action.",
    "retrieval_error": "str, SearchQA: why the retriever failed on the query.",
    "answer": "str, SearchQA: the submitted answer.",
    "f1": "float, SearchQA: token F1 of the answer against the gold answers.",
    "bfcl_category": "str, BFCL: the test category of the task.",
    "bfcl_turn": "int, BFCL multi-turn: index of the current user turn.",
    "bfcl_turn_checks": "list[dict], BFCL multi-turn: the result of each finished turn's check.",
    "bfcl_check": "dict, BFCL single-turn and agentic: whether the calls or the final reply passed the check and why "
                  "(when the episode ended).",
    "bfcl_memory_phase": "str, BFCL memory: 'prereq' while the scenario's memory-writing conversations are held, "
                         "then 'question'.",
    "bfcl_memory_prereqs_left": "int, BFCL memory: memory-writing conversations still to hold, the current one included.",
    "domain": "str, τ²: the domain of the task (airline, retail, telecom).",
    "nl_judge": "str, τ²: who graded the task's natural-language assertions ('none' without a judge).",
    "tau2_end": "str, τ² (when the episode ended): how the conversation ended (the user's stop, transfer or "
                "out-of-scope token, the agent's reply, a user error, or 'none').",
    "db_match": "bool or None, τ² (when the episode ended): both databases equal the gold run's (None: not checked, "
                "the conversation ended early).",
    "termination_reason": "str, τ² (when the episode ended): the end in τ²-bench's terms: user_stop, max_steps, "
                          "too_many_errors, user_error or none.",
    "user_error": "str, τ²/VitaBench: why the simulated user failed (the episode then scores 0, as upstream).",
    "judge": "str, VitaBench: who graded the rubrics ('none' without a judge).",
    "scoring": "str, VitaBench (when the episode ended): rubric_judge or state_check.",
    "memory": "str, VitaBench 2.0: the memory backend the agent's memory came from.",
    "subtask_index": "int, VitaBench 2.0: position of the subtask in its user's sequence.",
    "skill_tested": "str, VitaBench 2.0: the skills the subtask tests, comma-separated.",
    "reward_breakdown": "dict, τ²: the reward's components and details (when the episode ended).",
    "user_tool_calls": "list[dict], τ² telecom: the tool calls the simulated user made on their device.",
    "vitabench_domain": "str, VitaBench: the domain of the task.",
    "vitabench_state": "dict, VitaBench: whether the final state check passed, and its problems.",
    "vitabench_rubrics": "dict, VitaBench: the rubric judgements (or 'unscored' without a judge).",
    "vitabench_memory": "str, VitaBench 2.0: what earlier episodes of the same user left in memory, given to the agent.",
    "finmcp_called": "list[str], FinMCP: names of the tools called so far.",
    "finmcp_replay": "dict, FinMCP: recorded calls matched and unmatched by the replay.",
    "finmcp_metrics": "dict, FinMCP: tool precision, recall and the other task metrics (when the episode ended).",
    "theme": "str, SyntheticTools: the theme of the generated world.",
}
"""Key -> ``type, benchmark: meaning`` of the keys one benchmark adds."""

REQUIRED_INFO_KEYS = ("task_id", "task", "won", "score", "action_valid", "turn", "admissible_actions", "tools")

DOCUMENTED_INFO_KEYS = frozenset(INFO_KEYS) | frozenset(ENV_INFO_KEYS)
"""Every key documented in this module."""


def undocumented_keys(info: Iterable[str]) -> list[str]:
    """The keys of ``info`` (a dict or any iterable of keys) that this module does not document, sorted."""
    return sorted(str(key) for key in info if key not in DOCUMENTED_INFO_KEYS)


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
