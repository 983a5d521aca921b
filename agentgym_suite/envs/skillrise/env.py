"""SkillRise trials (ALGORITHMS §4): K related tasks solved in a row with a skill document
curated in between, as one env episode.

``Solve(x0) → Curate → Solve(x1) → Curate → … → Solve(x_{K-1})``. The skill document starts
empty in every trial and lives only in the prompts. A Curate turn answers with the new
document inside ``<skill>…</skill>`` (the last block, cut to ``max_chars``, may be empty);
when no block parses, the old document is kept and the turn is invalid
(:mod:`~agentgym_suite.envs.skillrise.projection`).

Prompts are laid out as the released SkillRise trials lay them out
(:mod:`~agentgym_suite.envs.skillrise.prompts`): a Solve prompt shows the whole skill
document, the task's first observation, the last 15 steps of the task as projected actions
and observations, and the admissible actions; a Curate prompt shows the document and the
whole attempt (up to 50 steps) with its outcome (:mod:`~agentgym_suite.envs.skillrise.history`).
Every prompt says ``info["prompt_truncation"] = "error"``: the model's backend must refuse a
prompt longer than its limit instead of cutting its start, where the skill document is, as
the released run stops on an over-long prompt (``data.truncation=error``).

``projection="action_tag"`` reads Solve answers by the released rule (``<action>`` tags
only, the text lower-cased, the last 30 characters when the tags are missing); the base env
reads the same tags (``action_format="action_tag"``; with ``invalid_action="forward_tail"`` an
answer without tags sends its last 30 characters, as released) or takes the command
(``action_format="plain"``). The trial's ``action_valid`` is then the tag rule's.
``projection="env"`` (the default) leaves the answer to the base env's action format (any
env, tool envs included).

Which tasks a trial plays:

* ``groups=`` (curated groups, :mod:`~agentgym_suite.envs.skillrise.groups`): the trial's task
  ids are the group ids, in the order a run serves them (shuffled once with ``group_seed``);
  a trial plays its group's tasks in the group's order (shorter plans first). This is how the
  released code trains.
* otherwise the other tasks of a trial are drawn from the first task's family, and ordered
  from easier to harder (``order="easy_first"``): by ``difficulty``, by default the length of
  the base env's oracle from the task's start (ALFWorld's expert plan, ScienceWorld's gold
  path, a tool env's gold calls); ties keep the drawn order. ``order="drawn"`` keeps the drawn
  order. ``mode="repeat"`` makes a trial of the same task ``k`` times (the paper's evaluation of
  repeated attempts), curating in between.

The env reports, for the turn about to be prompted, ``info["role"]`` (``solve``/``curate``)
and ``info["position"]`` (task index p), plus ``info["position_rewards"]`` (reward of each
finished task), which is what the ``skillrise`` credit plug-in needs. That plug-in wraps the
trainer's env factory in these trials (``SkillRiseCredit.wrap_env_factory``). When a task
ends, that step's info says which (``finished_position``, ``finished_task_id``,
``finished_won``), which is what evaluation reads.
"""

from __future__ import annotations

from typing import Any, Callable, ClassVar, Sequence

import gymnasium as gym

from agentgym_suite.core.actions import unusable_action
from agentgym_suite.core.lifecycle import check_reset_options, deepcopy_env, refuse_if_closed
from agentgym_suite.core.spaces import action_space, observation_space
from agentgym_suite.envs.skillrise.groups import TaskGroup, serving_order
from agentgym_suite.envs.skillrise.history import CURATE_HISTORY, SOLVE_HISTORY, Step, format_history
from agentgym_suite.envs.skillrise.projection import parse_skill, project_solve_action
from agentgym_suite.envs.skillrise.prompts import ACTION_INSTRUCTIONS, curate_slots, render, solve_slots

MODES = ("sequence", "repeat")
ORDERS = ("easy_first", "drawn")
PROJECTIONS = ("env", "action_tag")


class SkillRiseTrial(gym.Env[str, str]):
    """A trial of ``k`` tasks of one family from ``env`` with Solve and Curate turns.

    Args:
        env: the base env (a suite ``TextEnv``, possibly wrapped).
        family_of: the family of a task id; the other tasks of a trial are drawn from the
            first task's family. ``None``: the base env's own ``task_family`` (e.g. the
            ALFWorld task type), or one family for an env without it.
        k: tasks per trial.
        turns_per_task: turn budget of each Solve task.
        max_chars: longest skill document kept.
        mode: ``sequence`` (k related tasks) or ``repeat`` (one task k times).
        order: ``easy_first`` (by ``difficulty``, the paper's order) or ``drawn``.
        difficulty: a task id's difficulty; ``None``: the length of the base env's oracle
            from the task's start (computed once per task and kept).
        projection: ``env`` (the base env's action format reads Solve answers) or ``action_tag``
            (the released rule; the base env's action format must be ``action_tag`` or ``plain``).
        groups: curated task groups; the trial's task ids are then their group ids.
        group_seed: the seed of the one shuffle that fixes the order groups are served in.

    Info keys (besides the shared ones of :mod:`agentgym_suite.core.info`):
        ``skill_document``: str: the skill document the trial carries from task to task.
        ``trial_tasks``: list[str]: the task ids of the trial, in order.
        ``finished_position``: int, on the step a task ends: that task's position.
        ``finished_task_id``: str, on the step a task ends: that task's id.
        ``finished_won``: bool, on the step a task ends: whether it was solved.
        ``role``: str: the role the next prompt asks the model to play (solve | curate); the rollout engine labels the turn with it.
        ``position``: int: index of the current task inside the trial (the engine records it on the turn).
        ``position_rewards``: dict[int, float]: reward of the task at each position of the trial (the engine keeps it on the trajectory; the trainer's returns read it).
    """

    reset_options = frozenset({"task_id"})
    """The keys ``reset(options=...)`` accepts: ``task_id`` picks the trial's first task."""
    info_keys: ClassVar[dict[str, str]] = {
        "skill_document": "str: the skill document the trial carries from task to task.",
        "trial_tasks": "list[str]: the task ids of the trial, in order.",
        "finished_position": "int, on the step a task ends: that task's position.",
        "finished_task_id": "str, on the step a task ends: that task's id.",
        "finished_won": "bool, on the step a task ends: whether it was solved.",
        "role": "str: the role the next prompt asks the model to play (solve | curate); the rollout engine "
                "labels the turn with it.",
        "position": "int: index of the current task inside the trial (the engine records it on the turn).",
        "position_rewards": "dict[int, float]: reward of the task at each position of the trial (the engine keeps "
                            "it on the trajectory; the trainer's returns read it).",
    }
    """The info keys this env adds to the shared ones (:mod:`agentgym_suite.core.info`)."""

    def __init__(self, env: gym.Env, *, family_of: Callable[[str], str] | None = None, k: int = 3,
                 turns_per_task: int = 10, max_chars: int = 4000, mode: str = "sequence", order: str = "easy_first",
                 difficulty: Callable[[str], float] | None = None, projection: str = "env",
                 groups: Sequence[TaskGroup] | None = None, group_seed: int = 0):
        if k < 1 or turns_per_task < 1 or max_chars < 1:
            raise ValueError("SkillRiseTrial needs k, turns_per_task and max_chars >= 1.")
        if mode not in MODES:
            raise ValueError(f"mode={mode!r}; choose one of {MODES}.")
        if order not in ORDERS:
            raise ValueError(f"order={order!r}; choose one of {ORDERS}.")
        if projection not in PROJECTIONS:
            raise ValueError(f"projection={projection!r}; choose one of {PROJECTIONS}.")
        self._base_format = getattr(getattr(env.unwrapped, "action_format", None), "name", "")
        if projection == "action_tag" and self._base_format not in ("plain", "action_tag"):
            raise ValueError("projection='action_tag' reads Solve answers by their <action> tags; give the base env "
                             "action_format='action_tag' (it reads the same tags) or 'plain' (it gets the command), "
                             f"not {self._base_format!r} (action_format: action_tag in a training config).")
        self.projection = projection
        self.groups = serving_order(list(groups), group_seed) if groups else []
        self._group_by_id = {g.group_id: g for g in self.groups}
        if self.groups and any(len(g.task_ids) != k for g in self.groups):
            raise ValueError(f"the curated groups hold {len(self.groups[0].task_ids)} tasks each but k={k}; set k to "
                             "the groups' size.")
        self.env = env
        self.mode = mode
        self.order = order
        self.difficulty = difficulty or self.oracle_length
        self._difficulty: dict[str, float] = {}
        own = getattr(env.unwrapped, "task_family", None)
        self.family_of = family_of or (own if callable(own) else (lambda task_id: ""))
        self.k = k
        self.turns_per_task = turns_per_task
        self.max_chars = max_chars
        self.observation_space = observation_space()
        self.action_space = action_space()
        self.tasks: list[str] = []
        self.doc = ""
        self.position = 0
        self.role = "solve"
        self.rewards: dict[int, float] = {}
        self._seed: int | None = None
        self._closed = False
        self._steps: list[Step] = []
        self._init_obs = ""
        self.slots: dict[str, Any] = {}
        """What filled the last prompt (see :mod:`~agentgym_suite.envs.skillrise.prompts`)."""
        self._obs = ""
        self._info: dict[str, Any] = {}
        self._task_turns = 0
        self._task_reward = 0.0
        self._task_won = False

    # ------------------------------------------------------------------ task pass-through
    def inner_envs(self) -> list[gym.Env]:
        """The base env, whose info keys a trial passes on (see :func:`agentgym_suite.core.info.documented_keys`)."""
        return [self.env]

    def task_ids(self) -> list[str]:
        """The curated group ids in serving order, or else the base env's task ids (each the first
        task of a trial)."""
        if self.groups:
            return [g.group_id for g in self.groups]
        return list(self.env.unwrapped.task_ids())

    @property
    def action_format(self) -> Any:
        """The base env's action format (Solve turns are its actions)."""
        return getattr(self.env.unwrapped, "action_format", None)

    def format_action(self, command: str) -> str:
        """``command`` as this turn's answer: the base env's action format while solving, a
        ``<skill>`` block while curating (what agents that pick commands, such as the random one, send)."""
        if self.role == "curate":
            return f"<skill>{command}</skill>"
        return str(self.env.unwrapped.format_action(command))

    def oracle(self) -> list[str]:
        """The base env's oracle while solving; while curating, a reply that keeps the document."""
        if self.role == "curate":
            return [f"<skill>{self.doc or 'No lesson yet.'}</skill>"]
        return list(self.env.unwrapped.oracle())

    def oracle_length(self, task_id: str) -> float:
        """Actions the base env's oracle needs from the start of ``task_id`` (the default difficulty).

        Resets the base env to the task once; the value is kept for later trials. A task whose
        oracle cannot be read counts as 0 (it keeps its drawn place among equals).
        """
        if task_id not in self._difficulty:
            try:
                self.env.reset(seed=self._seed, options={"task_id": task_id})
                self._difficulty[task_id] = float(len(self.env.unwrapped.oracle()))
            except Exception:  # an env without a usable oracle keeps the drawn order
                self._difficulty[task_id] = 0.0
        return self._difficulty[task_id]

    # ------------------------------------------------------------------ Gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        refuse_if_closed(self, "reset")
        options = check_reset_options(self, options, self.reset_options)
        super().reset(seed=seed)
        self._seed = seed
        first = options.get("task_id")
        ids = self.task_ids()
        if first is None:
            first = ids[int(self.np_random.integers(len(ids)))]
        if self.groups:
            self.tasks = self._group_tasks(str(first))
        elif self.mode == "repeat":
            self.tasks = [str(first)] * self.k
        else:
            family = self.family_of(str(first))
            same = [t for t in ids if t != str(first) and self.family_of(t) == family]
            picks = list(self.np_random.permutation(len(same)))[: self.k - 1] if same else []
            self.tasks = [str(first)] + [same[int(i)] for i in picks]
            while len(self.tasks) < self.k:  # a family smaller than k repeats its tasks
                self.tasks.append(self.tasks[len(self.tasks) % max(1, len(self.tasks))])
            if self.order == "easy_first":
                self.tasks = sorted(self.tasks, key=self.difficulty)  # stable: ties keep the drawn order
        self.doc, self.position, self.rewards = "", 0, {}
        return self._start_task()

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        refuse_if_closed(self, "step")
        if self.role == "curate":
            return self._curate(action)
        if self.projection == "action_tag":
            command, valid = project_solve_action(action)
            obs, reward, terminated, truncated, info = self.env.step(command if self._base_format == "plain" else action)
            info = dict(info, projected_action=command)
            if valid:
                info.pop("invalid_reason", None)
            else:
                info["invalid_reason"] = "no <action>...</action> tags; the last 30 characters were sent as the command"
        else:
            obs, reward, terminated, truncated, info = self.env.step(action)
            valid = bool(info.get("action_valid", True))
            command = str(info.get("projected_action", action))
        self._steps.append(Step(command, obs, bool(terminated or truncated)))
        self._obs, self._info = obs, info
        self._task_turns += 1
        self._task_reward += float(reward)
        self._task_won = bool(info.get("won", False))
        if not (terminated or truncated or self._task_turns >= self.turns_per_task):
            return self._prompt_info(obs, info, float(reward), valid)
        self.rewards[self.position] = self._task_reward
        finished = {"finished_position": self.position, "finished_task_id": self.tasks[self.position],
                    "finished_won": self._task_won}
        if self.position == self.k - 1:
            out_obs, out_info = self._render("solve", obs, info)
            out_info.update(action_valid=valid, won=self._task_won, position_rewards=dict(self.rewards), **finished)
            return out_obs, float(reward), True, False, out_info
        self.role = "curate"
        prompt, out = self._render("curate", obs, info)
        out.update(action_valid=valid, position_rewards=dict(self.rewards), **finished)
        return prompt, float(reward), False, False, out

    def close(self) -> None:
        """Close the base env; later ``step``/``reset`` calls raise ``ClosedEnvError``."""
        self._closed = True
        self.env.close()

    def __deepcopy__(self, memo: dict[int, Any]) -> SkillRiseTrial:
        """A copy with its own base env (``EnvNotCopyableError`` when the base env cannot be copied)."""
        return deepcopy_env(self, memo)

    # ------------------------------------------------------------------ internals
    def _group_tasks(self, group_id: str) -> list[str]:
        group = self._group_by_id.get(group_id)
        if group is None:
            raise ValueError(f"{group_id!r} is not one of the trial's curated groups; its task ids are group ids "
                             f"such as {self.groups[0].group_id!r}.")
        known = set(self.env.unwrapped.task_ids())
        missing = [t for t in group.task_ids if t not in known]
        if missing:
            raise ValueError(f"group {group_id!r} holds tasks the base env does not have ({missing[:2]}); the group "
                             "file was made for another split or data folder (rebuild it with "
                             "python -m agentgym_suite.envs.skillrise.build_groups).")
        return list(group.task_ids)

    def _start_task(self) -> tuple[str, dict[str, Any]]:
        self.role = "solve"
        self._steps, self._task_turns, self._task_reward, self._task_won = [], 0, 0.0, False
        obs, info = self.env.reset(seed=self._seed, options={"task_id": self.tasks[self.position]})
        self._obs, self._info, self._init_obs = obs, info, obs
        return self._render("solve", obs, info)

    def _curate(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        unusable = unusable_action(action, noun="skill document")
        new = parse_skill(action, self.max_chars)
        valid = new is not None
        if new is not None:
            self.doc = new
        self.position += 1
        obs, info = self._start_task()
        info.update(action_valid=valid, position_rewards=dict(self.rewards))
        if not valid:
            why = unusable.reason if unusable is not None else "no <skill>...</skill> block"
            info["invalid_reason"] = f"{why}; the old skill document was kept"
        return obs, 0.0, False, False, info

    def _prompt_info(self, obs: str, info: dict[str, Any], reward: float, valid: bool):
        prompt, out = self._render("solve", obs, info)
        out.update(action_valid=valid, position_rewards=dict(self.rewards))
        return prompt, reward, False, False, out

    def _render(self, role: str, obs: str, info: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        if role == "solve":
            history = format_history(self._steps, SOLVE_HISTORY) if self._task_turns else ""
            self.slots = solve_slots(turn=self._task_turns, init_observation=self._init_obs, history=history,
                                     admissible=info.get("admissible_actions"), skill=self.doc)
        else:
            self.slots = curate_slots(history=format_history(self._steps, CURATE_HISTORY), skill=self.doc,
                                      won=self._task_won)
        base = self.env.unwrapped
        environment = getattr(base, "prompt_description", "") or f"the {type(base).__name__} environment"
        instructions = ACTION_INSTRUCTIONS
        if self.projection == "env":
            instructions = getattr(getattr(base, "action_format", None), "instructions", "") or ACTION_INSTRUCTIONS
        text = render(self.slots, environment, instructions)
        out = dict(info)
        out.update(role=role, position=self.position, raw_observation=obs if role == "solve" else "<curate>",
                   prompt_messages=[{"role": "user", "content": text}], skill_document=self.doc,
                   trial_tasks=list(self.tasks), prompt_truncation="error")
        if role == "curate":  # a Curate turn answers with a document: no commands or tools apply
            out.update(admissible_actions=None, tools=None)
        return text, out
