"""SkillRise trials (ALGORITHMS §4): K related tasks solved in a row with a skill document
curated in between, as one env episode.

``Solve(x0) → Curate → Solve(x1) → Curate → … → Solve(x_{K-1})``. The skill document starts
empty in every trial and lives only in the prompts. A Curate turn must answer with the new
document inside ``<skill>…</skill>`` (the last block is taken, cut to ``max_chars``); when no
block parses, the old document is kept and the turn is marked invalid.

The tasks of a trial are ordered from easier to harder, as the paper orders them. The
difficulty of a task is the length of the base env's oracle from the task's start (ALFWorld's
expert plan, ScienceWorld's gold path, a tool env's gold calls): the number of actions the
task needs at the least, which is what the agent must get right in a row, and success falls
with that horizon. Ties keep the order the tasks were drawn in. ``difficulty=`` takes any
other measure; ``order="drawn"`` keeps the drawn order.

``mode="repeat"`` makes a trial of the same task ``k`` times (the paper's evaluation of
repeated attempts), curating in between.

The env reports, for the turn about to be prompted, ``info["role"]`` (``solve``/``curate``)
and ``info["position"]`` (task index p), plus ``info["position_rewards"]`` (reward of each
finished task), which is what the ``skillrise`` credit plug-in needs. That plug-in wraps the
trainer's env factory in these trials (``SkillRiseCredit.wrap_env_factory``). When a task
ends, that step's info says which (``finished_position``, ``finished_task_id``,
``finished_won``), which is what evaluation reads.
"""

from __future__ import annotations

import re
from typing import Any, Callable, ClassVar

import gymnasium as gym

from agentgym_suite.core.actions import unusable_action
from agentgym_suite.core.lifecycle import check_reset_options, deepcopy_env, refuse_if_closed
from agentgym_suite.core.spaces import action_space, observation_space

SKILL_BLOCK = re.compile(r"<skill>(.*?)</skill>", re.DOTALL)
SOLVE_HISTORY = 15
CURATE_HISTORY = 50
MODES = ("sequence", "repeat")
ORDERS = ("easy_first", "drawn")


def parse_skill(text: str, max_chars: int) -> str | None:
    """Content of the last ``<skill>…</skill>`` block, cut to ``max_chars``; None when absent or empty
    (or when ``text`` is not a string)."""
    if not isinstance(text, str):
        return None
    blocks = SKILL_BLOCK.findall(text)
    if not blocks or not blocks[-1].strip():
        return None
    return blocks[-1].strip()[:max_chars]


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

    Info keys (besides the shared ones of :mod:`agentgym_suite.core.info`):
        ``skill_document``: str: the skill document the trial carries from task to task.
        ``trial_tasks``: list[str]: the task ids of the trial, in order.
        ``finished_position``: int, on the step a task ends: that task's position.
        ``finished_task_id``: str, on the step a task ends: that task's id.
        ``finished_won``: bool, on the step a task ends: whether it was solved.
    """

    reset_options = frozenset({"task_id"})
    """The keys ``reset(options=...)`` accepts: ``task_id`` picks the trial's first task."""
    info_keys: ClassVar[dict[str, str]] = {
        "skill_document": "str: the skill document the trial carries from task to task.",
        "trial_tasks": "list[str]: the task ids of the trial, in order.",
        "finished_position": "int, on the step a task ends: that task's position.",
        "finished_task_id": "str, on the step a task ends: that task's id.",
        "finished_won": "bool, on the step a task ends: whether it was solved.",
    }
    """The info keys this env adds to the shared ones (:mod:`agentgym_suite.core.info`)."""

    def __init__(self, env: gym.Env, *, family_of: Callable[[str], str] | None = None, k: int = 3,
                 turns_per_task: int = 10, max_chars: int = 4000, mode: str = "sequence", order: str = "easy_first",
                 difficulty: Callable[[str], float] | None = None):
        if k < 1 or turns_per_task < 1 or max_chars < 1:
            raise ValueError("SkillRiseTrial needs k, turns_per_task and max_chars >= 1.")
        if mode not in MODES:
            raise ValueError(f"mode={mode!r}; choose one of {MODES}.")
        if order not in ORDERS:
            raise ValueError(f"order={order!r}; choose one of {ORDERS}.")
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
        self._history: list[tuple[str, str]] = []
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
        """The base env's task ids (each is the first task of a trial)."""
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
        if self.mode == "repeat":
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
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._history.append((self._obs, action))
        self._obs, self._info = obs, info
        self._task_turns += 1
        self._task_reward += float(reward)
        self._task_won = bool(info.get("won", False))
        valid = bool(info.get("action_valid", True))
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
    def _start_task(self) -> tuple[str, dict[str, Any]]:
        self.role = "solve"
        self._history, self._task_turns, self._task_reward, self._task_won = [], 0, 0.0, False
        obs, info = self.env.reset(seed=self._seed, options={"task_id": self.tasks[self.position]})
        self._obs, self._info = obs, info
        return self._render("solve", obs, info)

    def _curate(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        unusable = unusable_action(action, noun="skill document")
        new = None if unusable is not None else parse_skill(action, self.max_chars)
        valid = new is not None
        if valid:
            self.doc = new  # type: ignore[assignment]
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
        text = self._solve_prompt(obs, info) if role == "solve" else self._curate_prompt()
        out = dict(info)
        out.update(role=role, position=self.position, raw_observation=obs if role == "solve" else "<curate>",
                   prompt_messages=[{"role": "user", "content": text}], skill_document=self.doc,
                   trial_tasks=list(self.tasks))
        if role == "curate":  # a Curate turn answers with a document: no commands or tools apply
            out.update(admissible_actions=None, tools=None)
        return text, out

    def _solve_prompt(self, obs: str, info: dict[str, Any]) -> str:
        fmt = getattr(self.env.unwrapped, "action_format", None)
        lines = [
            "You are an expert agent. A skill document distilled from earlier attempts is below; use it only "
            "when you are confident it applies.",
            f"<skill_document>\n{self.doc or '(empty)'}\n</skill_document>",
            f"Your task is: {info.get('task', '')}",
        ]
        recent = self._history[-SOLVE_HISTORY:]
        if recent:
            lines.append("Recent trajectory:\n" + "\n".join(f"[Observation: {o!r}, Action: {a!r}]" for o, a in recent))
        lines.append(f"Current observation: {obs}")
        if info.get("admissible_actions"):
            lines.append("Admissible actions: [" + ", ".join(repr(a) for a in info["admissible_actions"]) + "]")
        lines.append(getattr(fmt, "instructions", "") or "Give your action inside <action> </action>.")
        return "\n\n".join(lines)

    def _curate_prompt(self) -> str:
        attempt = "\n".join(f"Observation: {o}\nAction: {a}" for o, a in self._history[-CURATE_HISTORY:])
        outcome = "SUCCESS" if self._task_won else "FAILURE"
        return (
            "You maintain a skill document that helps solve tasks of this kind.\n\n"
            f"Current document:\n<skill_document>\n{self.doc or '(empty)'}\n</skill_document>\n\n"
            f"Your last attempt:\n{attempt}\nOutcome: {outcome}\n\n"
            "Rewrite the document. Rules: abstract away task-specific names and numbers; every statement must be "
            "grounded in the attempt above; list pitfalls you hit; be concise. Suggested headings: "
            "## When to use / ## Workflow / ## Pitfalls. "
            f"Answer with the whole new document inside <skill> </skill> (at most {self.max_chars} characters)."
        )

