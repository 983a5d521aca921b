"""``TextEnv``: the one contract every env of the suite follows.

A subclass supplies the benchmark's dynamics through four small methods
(:meth:`TextEnv.task_ids`, :meth:`TextEnv._load_task`, :meth:`TextEnv._execute`,
:meth:`TextEnv.oracle`); this base class does the rest the same way for every benchmark:
task selection from ``options`` or the seeded ``np_random``, action parsing and validity,
turn counting, the shared ``info`` keys, opt-in privileged info and rendering.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Sequence

import gymnasium as gym
from gymnasium.error import ResetNeeded

from agentgym_suite.core.actions import INVALID_TAIL_CHARS, ActionFormat, ParsedAction, get_action_format
from agentgym_suite.core.errors import UnknownTaskError
from agentgym_suite.core.fixture_profile import FixtureProfile
from agentgym_suite.core.info import base_info
from agentgym_suite.core.policy_loan import asks_for_policy
from agentgym_suite.core.lifecycle import check_reset_options, deepcopy_env, refuse_if_closed
from agentgym_suite.core.skills import SkillBook, load_skills
from agentgym_suite.core.spaces import action_space, observation_space

INVALID_ACTION_MODES = ("explain", "forward_tail")


@dataclass
class TaskStart:
    """What :meth:`TextEnv._load_task` returns: the first observation and the task's info."""

    observation: str
    task: str
    admissible_actions: list[str] | None = None
    tools: list[dict[str, Any]] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class StepOutcome:
    """What :meth:`TextEnv._execute` returns for one executed command.

    ``reward`` is the per-step reward in the env's own scale; ``score`` the normalised task
    score after the step; ``terminated`` means the episode is over for good (won or lost).
    """

    observation: str
    reward: float
    score: float
    won: bool = False
    terminated: bool = False
    truncated: bool = False
    action_valid: bool = True
    admissible_actions: list[str] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class TextEnv(gym.Env[str, str]):
    """Base class of every text environment of the suite.

    Args:
        action_format: ``plain``, ``think_action`` or ``search`` (or an ``ActionFormat``).
        privileged: put oracle solutions and other privileged text into ``info["privileged"]``.
        invalid_action: what to do with an action that has no extractable command:
            ``explain`` (default) answers with an observation that says what was wrong and
            leaves the env untouched; ``forward_tail`` sends its last 30 characters to the env
            as verl-agent does.
        render_mode: ``ansi`` (``render()`` returns the last observation) or ``human`` (prints it).
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi", "human"]}  # an instance attribute in gymnasium.Env
    benchmark: ClassVar[str] = ""
    default_action_format: ClassVar[str] = "plain"
    info_keys: ClassVar[dict[str, str]] = {}
    """The ``info`` keys this env adds to the shared ones of :mod:`agentgym_suite.core.info`: key ->
    type and meaning, one line each, also listed in the class docstring (as Gymnasium envs document
    theirs). :func:`~agentgym_suite.core.info.documented_keys` unions them over the class's MRO, so a
    subclass declares only the keys it adds."""
    label_keys: ClassVar[tuple[str, ...]] = ()
    """Keys of :attr:`info_keys` that say how a result was obtained (who judged it, which memory or
    retriever served the agent); evaluation summaries list their values under ``labels`` (see
    :func:`~agentgym_suite.core.info.declared_label_keys`)."""
    fixture_replaces_data: ClassVar[bool] = False
    """True when :meth:`fixture_kwargs` points the env at data it generates, so the env runs
    where its benchmark folder is absent (data that cannot be redistributed)."""
    invalid_tail_chars: ClassVar[int] = INVALID_TAIL_CHARS
    """Characters of an unparsable completion that ``forward_tail`` sends and the projected action keeps
    (verl-agent's projections: 30; its WebShop projection 20)."""
    evaluation_defaults: ClassVar[dict[str, Any]] = {}
    """Constructor arguments ``agentgym eval`` uses unless the user sets them: the split the
    benchmark's papers evaluate on (e.g. ``{"split": "test"}``), where the constructor's own
    default serves training."""
    policy_tokenizer_setting: ClassVar[str | None] = None
    """The constructor argument that takes the policy's tokenizer (a model id or folder), for an env
    that counts the policy's tokens as its benchmark does; ``agentgym eval`` fills it with the
    agent's model (``hf:PATH``, ``vllm:PATH``, ``tiny``) and the trainer's env factory with the model
    being trained, unless the user sets it."""
    score_scale: ClassVar[float] = 1.0
    """The scale the benchmark's papers report scores on (``info["score"]`` is in [0, 1]);
    ``agentgym eval`` reports the mean score times this too when it is not 1 (ScienceWorld: 100)."""
    reset_options: ClassVar[frozenset[str]] = frozenset({"task_id"})
    """The keys ``reset(options=...)`` accepts; any other key is an error (see
    :mod:`~agentgym_suite.core.lifecycle` for why an error and not a warning). An env that reads
    more options from :meth:`reset` adds them here."""
    copyable: ClassVar[bool] = True
    """False for envs whose backend cannot be copied (a game engine, a JVM): ``copy.deepcopy``
    then raises :class:`~agentgym_suite.core.errors.EnvNotCopyableError` at once."""
    fixture_profile: ClassVar[FixtureProfile] = FixtureProfile()
    """How the generic test suites play the env made with :meth:`fixture_kwargs` (fuzz and oracle
    budgets, kwargs that keep an episode going after hostile actions, programs it needs...); see
    :class:`~agentgym_suite.core.fixture_profile.FixtureProfile`."""
    eval_sampling_defaults: ClassVar[dict[str, Any]] = {}
    """How the benchmark's official harness runs an agent, for ``agentgym eval`` to use when no flag says
    otherwise: ``temperature`` and ``max_new_tokens`` of the agent's sampling, ``k`` trials per task.
    Empty: the suite's own defaults. The values used are written into ``summary.json``."""

    user_setting: ClassVar[str] = ""
    """The constructor argument that chooses who plays the benchmark's simulated user (``""``: the env
    has none). ``agentgym eval --user`` sets it; left unset (see :meth:`user_is_set`), evaluation
    fills it in with :meth:`with_agent_model` and training warns that the scripted test double plays."""
    judge_setting: ClassVar[str] = ""
    """The constructor argument that chooses the benchmark's LLM judge (``""``: none); ``agentgym eval
    --judge`` sets it."""
    policy_setting: ClassVar[str] = ""
    """The constructor argument through which the env borrows the policy being trained (``""``: it
    never does; see :mod:`~agentgym_suite.core.policy_loan`). A trainer sets it to ``POLICY`` unless
    given, calls :meth:`lend_policy` before every rollout, and keeps the env in its own process."""
    wraps_setting: ClassVar[str] = ""
    """The constructor argument naming the env id this env plays over (``""``: none). A training
    ``env_mode`` that trains on such an env gives it the run's ``env_id`` unless set."""

    def __init__(
        self,
        *,
        action_format: str | ActionFormat | None = None,
        privileged: bool = False,
        invalid_action: str = "explain",
        render_mode: str | None = None,
    ) -> None:
        if invalid_action not in INVALID_ACTION_MODES:
            raise ValueError(f"invalid_action={invalid_action!r}; choose one of {INVALID_ACTION_MODES}.")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode={render_mode!r}; choose one of {self.metadata['render_modes']} or None.")
        self.observation_space = observation_space()
        self.action_space = action_space()
        self.action_format = get_action_format(action_format or self.default_action_format)
        self.privileged = privileged
        self.invalid_action = invalid_action
        self.render_mode = render_mode
        self._task_id: str | None = None
        self._task_text = ""
        self._turn = 0
        self._score = 0.0
        self._won = False
        self._finished = False
        self._observation = ""
        self._admissible: list[str] | None = None
        self._tools: list[dict[str, Any]] | None = None
        self._closed = False

    # ------------------------------------------------------------------ subclass API
    def task_ids(self) -> list[str]:
        """The task ids of this env's split, in a stable order."""
        raise NotImplementedError

    def oracle(self) -> list[str]:
        """Action strings (in this env's action format) that solve the episode from its current state."""
        raise NotImplementedError

    def _load_task(self, task_id: str) -> TaskStart:
        """Start task ``task_id`` and return its first observation."""
        raise NotImplementedError

    def _execute(self, command: str, parsed: ParsedAction) -> StepOutcome:
        """Execute one extracted command."""
        raise NotImplementedError

    def _privileged_info(self) -> dict[str, Any]:
        """Privileged text for teachers; the default holds the oracle solution."""
        return {"oracle": self.oracle()}

    @classmethod
    def fixture_kwargs(cls, scratch: Path) -> dict[str, Any]:
        """Keyword arguments for a small, quick, offline instance: what tests, fuzzing and smoke
        runs make this env with. May write fixture files under ``scratch`` (an empty folder).

        The default is no arguments. Override to pick a short task, a few generated games, or
        fixture data in the published format (then set :attr:`fixture_replaces_data`).
        """
        return {}

    def task_family(self, task_id: str) -> str:
        """The family of task ``task_id``: tasks alike enough to share advice, ``""`` for none.

        Reported at reset as ``info["task_family"]``. A family that names one of the env's
        fallback skill texts (``<family>.md`` in :attr:`skills_fallback`) gets that text as
        teacher context, and SkillRise trials group tasks by family. The default puts every task
        in no family.
        """
        return ""

    skills_released: ClassVar[str] = ""
    """Folder under ``$AGENTGYM_DATA/skills/`` with the authors' released skill texts for this
    benchmark (``agentgym data fetch skills`` fills it); ``""`` when none are released."""
    skills_fallback: ClassVar[Path | None] = None
    """The env's own skill texts (``general.md`` plus ``<family>.md``), read when the released ones
    are absent; ``None`` when the env has none."""

    @classmethod
    def skill_texts(cls, skills_dir: str | Path | None = None) -> SkillBook | None:
        """The skill texts a self-distilling teacher of this env reads (see :mod:`~agentgym_suite.core.skills`).

        ``skills_dir`` (a folder of the user's) wins; else the released texts when fetched; else
        :attr:`skills_fallback` with a warning; ``None`` when the env has no skill texts.
        """
        return load_skills(cls.skills_released, cls.skills_fallback, skills_dir=skills_dir, env_name=cls.__name__)

    @classmethod
    def skill_for_task(cls, book: SkillBook, task_id: str, family: str, prompt_text: str) -> str:
        """The privileged text of a teacher prompt for task ``task_id`` (of ``family``) whose
        student prompt is ``prompt_text``, chosen from ``book`` as the benchmark's authors choose.

        The default: in the released layout, upstream's generic rule (the task types whose
        keywords the prompt contains, :meth:`SkillBook.for_prompt`); in the family layout,
        general text plus the family's text. A benchmark whose authors select otherwise (by game
        file, by data source) overrides this.
        """
        return book.for_prompt(prompt_text) if book.mapped else book.for_family(family)

    def leaderboard_departures(self) -> list[str]:
        """Why this instance's scores cannot be put next to the official leaderboard's, one reason each.

        Empty (the default) means the env scores episodes as the benchmark's official harness does,
        as far as the conformance suite (``tests/conformance/``) checks. An env returns a reason for
        each departure that its current settings bring (a local stand-in for an online service, a
        fallback scorer used when no judge model is given, ...). ``agentgym eval`` writes them into
        ``summary.json`` (``comparable_to_leaderboard``, ``leaderboard_departures``) and prints them
        under the results table.
        """
        return []

    @classmethod
    def benchmark_metrics(cls, final_infos: Sequence[dict[str, Any]], *, k: int | None = None) -> dict[str, Any]:
        """The benchmark's own aggregate metrics over a run's scored episodes (their final infos).

        Empty (the default) for benchmarks whose official numbers are the success rates that
        every run reports. A benchmark whose official harness reports other aggregates (FinMCP's
        macro/micro F1 by group) computes them here; ``agentgym eval`` writes them into
        ``summary.json`` as ``benchmark_metrics``. ``k`` is the run's planned attempts per task
        (``agentgym eval --k``), so a metric over trials counts an attempt that left no scored
        episode (a crash) as upstream counts a failed trial; None when the caller does not know it.
        """
        return {}

    def evaluation_split(self) -> str:
        """The split (or task set) this instance plays, in the words reference scores use
        (``valid_seen``, ``test``, ...); ``agentgym eval`` prints it and writes it into
        ``summary.json``. Empty (the default) for envs without splits."""
        return ""

    @classmethod
    def user_is_set(cls, kwargs: dict[str, Any]) -> bool:
        """True when constructor ``kwargs`` already say who plays the simulated user (always True for an
        env without one). The default reads :attr:`user_setting`; an env with other ways to give the
        user (a chat callable under another name) overrides it."""
        return not cls.user_setting or kwargs.get(cls.user_setting) is not None

    @classmethod
    def borrows_policy(cls, kwargs: dict[str, Any]) -> bool:
        """True when an env made with constructor ``kwargs`` asks for the trainer's policy (its
        :attr:`policy_setting` is unset or ``POLICY``); always False without a policy setting."""
        return bool(cls.policy_setting) and asks_for_policy(kwargs.get(cls.policy_setting))

    def wants_policy(self) -> bool:
        """True when this instance asked for the policy being trained (see :attr:`policy_setting`)."""
        return False

    def lend_policy(self, backend: Any) -> None:
        """Give the env the trainer's current policy backend (called before every rollout while the env
        :meth:`wants_policy`; the backend is rebuilt each time)."""
        raise NotImplementedError(f"{type(self).__name__} declares no policy_setting and borrows no policy.")

    @classmethod
    def with_agent_model(cls, kwargs: dict[str, Any], model: str | None) -> dict[str, Any]:
        """Constructor ``kwargs`` with the settings that follow the evaluated agent filled in.

        ``model`` is the agent's backend spec (None when the agent is not a model). The default
        plays an unset simulated user with the agent's own model (``llm:<model>``), as the official
        harnesses play the customer with a model, and with the scripted test double for other
        agents. An env with more such settings (a memory that rewrites with the agent's model)
        overrides it and calls this one.
        """
        filled = dict(kwargs)
        if not cls.user_is_set(filled):
            filled[cls.user_setting] = f"llm:{model}" if model else "scripted"
        return filled

    @classmethod
    def sweeps(cls) -> list[Any]:
        """The evaluation sweeps this benchmark declares (``agentgym eval ID --sweep NAME[:ARGS]``):
        ``"module:factory"`` paths (by convention ``envs/<benchmark>/sweep.py``, imported only when
        sweeps are looked up) of functions returning :class:`~agentgym_suite.core.sweeps.Sweep`
        declarations, or Sweep objects themselves (an env defined outside the package), each turning its arguments into
        variants (env-kwargs overlays) and combining their results (BFCL's overall score, τ²-bench's
        per-domain leaderboard view, VitaBench's memory comparison). Empty (the default) for none.
        A sweep with ``any_env=True`` is offered for every env id."""
        return []

    # ------------------------------------------------------------------ helpers for subclasses
    @property
    def task_id(self) -> str | None:
        """Id of the current task (``None`` before the first reset)."""
        return self._task_id

    @property
    def turn(self) -> int:
        """Number of actions taken in the current episode."""
        return self._turn

    def format_action(self, command: str) -> str:
        """Wrap a bare command in this env's action format (used by oracles)."""
        name = getattr(self.action_format, "name", "plain")
        if name == "think_action":
            return f"<think>I follow the plan.</think><action>{command}</action>"
        return command

    def resolve_task_id(self, task_id: Any, ids: Sequence[str] | None = None) -> str:
        """Check ``task_id`` against ``ids`` (default: :meth:`task_ids`) and return it as a string."""
        ids = list(self.task_ids() if ids is None else ids)
        key = str(task_id)
        if key in ids:
            return key
        close = difflib.get_close_matches(key, ids, n=3)
        hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
        raise UnknownTaskError(
            f"Unknown task id {key!r} for {type(self).__name__} ({len(ids)} tasks in this split).{hint} "
            f"See env.unwrapped.task_ids() for the valid ids."
        )

    def _copied(self, memo: dict[int, Any]) -> None:
        """Called on a copy that ``copy.deepcopy`` just made (``memo`` maps the original's objects to
        their copies): an env that owns files or processes gives the copy its own here."""

    # ------------------------------------------------------------------ Gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """Start an episode: ``options={"task_id": ...}`` picks the task, else one is drawn with ``seed``.

        Raises:
            ResetOptionsError: ``options`` is not a mapping or holds a key outside :attr:`reset_options`.
            ClosedEnvError: the env was closed.
        """
        refuse_if_closed(self, "reset")
        options = check_reset_options(self, options, self.reset_options)
        super().reset(seed=seed)
        ids = self.task_ids()
        if "task_id" in options and options["task_id"] is not None:
            task_id = self.resolve_task_id(options["task_id"], ids)
        else:
            if not ids:
                raise UnknownTaskError(f"{type(self).__name__} has no tasks in this split; check its kwargs and data.")
            task_id = ids[int(self.np_random.integers(len(ids)))]
        start = self._load_task(task_id)
        self._task_id = task_id
        self._task_text = start.task
        self._turn = 0
        self._score = 0.0
        self._won = False
        self._finished = False
        self._observation = start.observation
        self._admissible = start.admissible_actions
        self._tools = start.tools
        info = self._info(action_valid=True, **{**start.extra, "task_family": self.task_family(task_id)})
        self._maybe_render()
        return start.observation, info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        refuse_if_closed(self, "step")
        if self._task_id is None:
            raise ResetNeeded("Call env.reset() before env.step().")
        if self._finished:
            return self._observation, 0.0, True, False, self._info(
                action_valid=False, error="the episode is over; call env.reset()"
            )
        self._turn += 1
        parsed = self.action_format.parse(action)
        command = parsed.command
        if command is None and self.invalid_action == "forward_tail":
            command = parsed.fallback_command(self.invalid_tail_chars) or None
        projected = projected_action(parsed, command, self.invalid_tail_chars)
        if command is None:
            observation = self._explain_invalid(parsed)
            self._observation = observation
            info = self._info(action_valid=False, invalid_reason=parsed.reason, projected_action=projected)
            self._maybe_render()
            return observation, 0.0, False, False, info
        outcome = self._execute(command, parsed)
        valid = parsed.valid and outcome.action_valid
        self._score = float(outcome.score)
        self._won = bool(outcome.won)
        self._finished = bool(outcome.terminated)
        self._observation = outcome.observation
        if outcome.admissible_actions is not None:
            self._admissible = outcome.admissible_actions
        extra = {"projected_action": projected, **outcome.extra}
        if not parsed.valid:
            extra.setdefault("invalid_reason", parsed.reason)
        info = self._info(action_valid=valid, **extra)
        self._maybe_render()
        return outcome.observation, float(outcome.reward), bool(outcome.terminated), bool(outcome.truncated), info

    def close(self) -> None:
        """Release the env's backend; later ``step``/``reset`` calls raise ``ClosedEnvError``.

        Subclasses free their backend and then call ``super().close()``. Calling it again is harmless.
        """
        self._closed = True
        super().close()

    def __deepcopy__(self, memo: dict[int, Any]) -> TextEnv:
        """A copy that plays on its own (see :func:`~agentgym_suite.core.lifecycle.deepcopy_env`), or
        ``EnvNotCopyableError`` saying how to get a second env."""
        clone: TextEnv = deepcopy_env(self, memo)
        clone._copied(memo)
        return clone

    def render(self) -> str | None:
        if self.render_mode == "ansi":
            return self._observation
        if self.render_mode == "human":
            print(self._observation)
        return None

    # ------------------------------------------------------------------ internals
    def _explain_invalid(self, parsed: ParsedAction) -> str:
        text = f"Invalid action: {parsed.reason}. {self.action_format.instructions}"
        if self._admissible:
            shown = ", ".join(self._admissible[:40])
            text += f" Admissible actions: {shown}"
        return text

    def _info(self, *, action_valid: bool, **extra: Any) -> dict[str, Any]:
        info = base_info(
            task_id=self._task_id or "",
            task=self._task_text,
            won=self._won,
            score=self._score,
            action_valid=action_valid,
            turn=self._turn,
            admissible_actions=list(self._admissible) if self._admissible is not None else None,
            tools=self._tools,
        )
        info.update(extra)
        if self.privileged:
            info["privileged"] = self._privileged_info()
        return info

    def _maybe_render(self) -> None:
        if self.render_mode == "human":
            self.render()


def projected_action(parsed: ParsedAction, command: str | None, tail_chars: int = INVALID_TAIL_CHARS) -> str:
    """The action as verl-agent's projection functions turn a completion into one (what its prompt
    history shows): the extracted command lower-cased, or the last 30 characters lower-cased when
    none was found; search formats keep the tag, ``<search>q</search>`` or ``<answer>a</answer>``
    (case kept), and an empty string when neither was found. Reported as ``info["projected_action"]``."""
    if parsed.kind in ("search", "answer"):
        return f"<{parsed.kind}>{command}</{parsed.kind}>" if command is not None else ""
    return (command if command is not None else parsed.fallback_command(tail_chars)).lower()
