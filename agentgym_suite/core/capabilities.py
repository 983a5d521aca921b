"""The env contract in layers: a small core every env implements, and optional capabilities.

``TextEnv`` and ``ToolEnv`` carry defaults for every hook, so an env implements its core and
opts into a capability by overriding that capability's members; it never has to learn the rest.
Each layer is a :class:`typing.Protocol` here: its members, their types and their docstrings
say what the env provides and who reads it. Nothing inherits these protocols (the bases keep
the defaults, so every existing env and class attribute keeps working); they are the contract's
table of contents, and :func:`capabilities_of` tells which an env class opts into.

The layers (``docs/extending.md`` lists them, the core first, with when to add each):

* :class:`TextEnvCore` / :class:`ToolEnvCore`: what every env implements.
* :class:`Reporting`: how the benchmark's papers evaluate and report (splits, scales, metrics, sweeps).
* :class:`RehearsalSupport`: what a world model and a judge may see of a tool env's task (EnvACE).
* :class:`SkillsAndPrivilegedText`: skill texts and privileged text a teacher prompt is given.
* :class:`SimulatedRoles`: a simulated user, an LLM judge, or a borrowed policy inside the env.
* :class:`PlaysOverAnotherEnv`: the env plays over another env id.
* :class:`FixturesAndTestProfile`: a small offline instance and how the generic tests play it.
* :class:`ServingHints`: how the env may be copied, reset and fed unparsable text.
* :class:`ConversationHooks`: finer control of a tool env's turns.

Members the bases provide for every env (``reset``, ``step``, ``tool_index``, ...) are in
:data:`PROVIDED`, by base; an env does not override them. ``tests/core/test_capabilities.py`` checks
that every member of ``TextEnv`` and ``ToolEnv`` sits in exactly one layer or in :data:`PROVIDED`,
so a new hook must be placed in a layer (and documented there) to pass.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, Sequence

if TYPE_CHECKING:
    from agentgym_suite.core.actions import ParsedAction
    from agentgym_suite.core.fixture_profile import FixtureProfile
    from agentgym_suite.core.skills import SkillBook
    from agentgym_suite.core.text_env import StepOutcome, TaskStart
    from agentgym_suite.core.tool_calls import ToolCall
    from agentgym_suite.core.tool_env import Conversation, ParsedMessage


class TextEnvCore(Protocol):
    """What every text env implements: its tasks, how a task starts, what an action does, an oracle,
    and what it reports (``info`` keys beyond the shared ones of :mod:`agentgym_suite.core.info`)."""

    benchmark: ClassVar[str]
    """The benchmark's name (its folder under ``$AGENTGYM_DATA``, its data source's name)."""
    default_action_format: ClassVar[str]
    """How a completion becomes an action unless ``action_format`` says otherwise."""
    info_keys: ClassVar[dict[str, str]]
    """The env's own ``info`` keys: key -> type and meaning (also listed in the class docstring)."""

    def task_ids(self) -> list[str]:
        """Every task id, in a stable order."""

    def oracle(self) -> list[str]:
        """Actions that solve the current task from the current state (the tests play them)."""

    def _load_task(self, task_id: str) -> TaskStart:
        """Start ``task_id``: the first observation, the task text, admissible actions or tools."""

    def _execute(self, command: str, parsed: ParsedAction) -> StepOutcome:
        """Apply one parsed action: observation, reward, score, and whether the episode ended."""


class ToolEnvCore(Protocol):
    """What every tool env (a ``ToolEnv`` subclass) implements instead of ``_load_task``/``_execute``:
    the conversation a task opens with, the user's replies, the final check, and extra ``info``."""

    def task_ids(self) -> list[str]:
        """Every task id, in a stable order."""

    def oracle(self) -> list[str]:
        """The assistant messages (tool calls, then the answer) that solve the current task."""

    def _start_conversation(self, task_id: str) -> Conversation:
        """The task's tools, their handlers and the opening messages."""

    def _user_reply(self, assistant_text: str) -> str | None:
        """The user's answer to a text reply; None ends the conversation."""

    def _evaluate(self) -> tuple[float, bool]:
        """The episode's score in [0, 1] and whether it is won."""

    def _extra_info(self) -> dict[str, Any]:
        """The env's own ``info`` keys for this step (declared in ``info_keys``)."""


class Reporting(Protocol):
    """How the benchmark's papers evaluate and report. Add it when ``agentgym eval`` should follow
    the official harness (its split, sampling, score scale, metrics) or the env has sweeps."""

    evaluation_defaults: ClassVar[dict[str, Any]]
    """Constructor arguments evaluation uses unless set (e.g. ``{"split": "test"}``)."""
    eval_sampling_defaults: ClassVar[dict[str, Any]]
    """The official harness's sampling: ``temperature``, ``max_new_tokens``, ``k``."""
    score_scale: ClassVar[float]
    """The scale the papers report scores on (ScienceWorld: 100)."""
    policy_tokenizer_setting: ClassVar[str | None]
    """The constructor argument evaluation fills with the agent's model, for an env that counts the
    policy's tokens (Search-R1's observation cut)."""
    label_keys: ClassVar[tuple[str, ...]]
    """``info`` keys that say how a result was obtained, listed under ``labels`` in summaries."""

    def evaluation_split(self) -> str:
        """The split being played, as summaries name it."""

    def leaderboard_departures(self) -> list[str]:
        """How this configuration departs from the official leaderboard's (empty: it matches)."""

    @classmethod
    def benchmark_metrics(cls, final_infos: Sequence[dict[str, Any]], *, k: int | None = None) -> dict[str, Any]:
        """The benchmark's own aggregate metrics over the episodes' final ``info``."""

    @classmethod
    def sweeps(cls) -> list[Any]:
        """The evaluation sweeps the benchmark declares (``core.sweeps.Sweep``)."""


class RehearsalSupport(Protocol):
    """What a world model and a judge may see of a tool env's task (EnvACE rehearsal, ``agentgym
    fidelity``). Every tool env rehearses with the defaults (scored against the oracle's calls);
    add these when the benchmark has data for them."""

    examples_are_training_data: ClassVar[bool]
    """The task's own ``recorded_examples`` are training data (a generated world, a training set)."""

    def recorded_examples(self) -> list[dict[str, Any]]:
        """Real ``{"name", "arguments", "result"}`` examples the world model is shown."""

    def success_criteria(self) -> list[str]:
        """Success stated in words, for a judge (``reward_mode="judge"``)."""

    def checklists(self) -> list[list[list[dict[str, Any]]]]:
        """Per-turn checklists (``reward_mode="checklist"``)."""

    def training_tasks(self) -> tuple[dict[str, Any], list[str]]:
        """The published training split, whose oracle runs ground the world model."""

    def evaluation_tasks(self) -> list[str]:
        """The tasks outside the training split."""

    @property
    def execution_free(self) -> bool:
        """The check reads only the calls made, so a rehearsed episode keeps the env's own reward."""

    def rehearsed_score(self, calls: Sequence[tuple[str, dict[str, Any]]]) -> tuple[float, bool] | None:
        """The score recomputed from the calls when the check counts what the handlers saw."""


class SkillsAndPrivilegedText(Protocol):
    """Skill texts and privileged text a teacher prompt is given (self-distillation plug-ins,
    ``teacher_context``). Add it when the benchmark's tasks fall into families with skill texts,
    or the env can state privileged facts about a task."""

    skills_released: ClassVar[str]
    """The released skill texts' name under the shared skills data (empty: none)."""
    skills_fallback: ClassVar[Path | None]
    """The env's own skill texts, used when the released ones are absent."""

    def task_family(self, task_id: str) -> str:
        """The task's family (reported as ``info["task_family"]``)."""

    @classmethod
    def skill_texts(cls, skills_dir: str | Path | None = None) -> SkillBook | None:
        """The skill book: the released texts, else the fallback."""

    @classmethod
    def skill_for_task(cls, book: SkillBook, task_id: str, family: str, prompt_text: str) -> str:
        """The skill text one task's teacher prompt gets."""

    def _privileged_info(self) -> dict[str, Any]:
        """Privileged facts about the current task, put into ``info["privileged"]`` when asked for."""


class SimulatedRoles(Protocol):
    """A simulated user, an LLM judge, or the policy being trained playing a part inside the env.
    Add it when a model other than the agent takes part in an episode."""

    user_setting: ClassVar[str]
    """The constructor argument that chooses the simulated user (``agentgym eval --user``)."""
    judge_setting: ClassVar[str]
    """The constructor argument that chooses the LLM judge (``agentgym eval --judge``)."""
    policy_setting: ClassVar[str]
    """The constructor argument through which the env borrows the policy being trained."""

    @classmethod
    def user_is_set(cls, kwargs: dict[str, Any]) -> bool:
        """Whether ``kwargs`` already say who plays the user."""

    @classmethod
    def with_agent_model(cls, kwargs: dict[str, Any], model: str | None) -> dict[str, Any]:
        """``kwargs`` with the settings that follow the evaluated agent's model filled in."""

    @classmethod
    def borrows_policy(cls, kwargs: dict[str, Any]) -> bool:
        """Whether an env made with ``kwargs`` borrows the policy (and must live in the training process)."""

    def wants_policy(self) -> bool:
        """Whether this env waits for the policy to be lent."""

    def lend_policy(self, backend: Any) -> None:
        """Take the policy's generation backend for the coming rollout."""


class PlaysOverAnotherEnv(Protocol):
    """The env plays over another env id (rehearsal, trials). Add it when the env's tasks come
    from another registered env; expose that env as ``.env`` and through ``inner_envs()``."""

    wraps_setting: ClassVar[str]
    """The constructor argument naming the env id it plays over."""


class FixturesAndTestProfile(Protocol):
    """A small offline instance for the generic tests, and how they play it. Add it when the env
    needs data or programs the test machine may lack, or plays differently under fuzz."""

    fixture_replaces_data: ClassVar[bool]
    """:meth:`fixture_kwargs` points the env at data it generates (the benchmark folder may be absent)."""
    fixture_profile: ClassVar[FixtureProfile]
    """Fuzz and oracle budgets, kwargs that keep an episode going, programs it needs."""

    @classmethod
    def fixture_kwargs(cls, scratch: Path) -> dict[str, Any]:
        """Constructor arguments of a small offline instance (files may be written to ``scratch``)."""


class ServingHints(Protocol):
    """How the env may be copied, reset and fed unparsable text (vector envs, servers, the engine).
    Add it when the backend cannot be copied, ``reset`` takes more options, or the benchmark
    forwards a different tail of unparsable completions."""

    copyable: ClassVar[bool]
    """False when the backend cannot be copied (``copy.deepcopy`` then fails at once)."""
    reset_options: ClassVar[frozenset[str]]
    """The keys ``reset(options=...)`` accepts."""
    invalid_tail_chars: ClassVar[int]
    """Characters of an unparsable completion that ``forward_tail`` sends."""

    def _copied(self, memo: dict[int, Any]) -> None:
        """Fix up a deep copy (reopen handles, share read-only data)."""


class ConversationHooks(Protocol):
    """Finer control of a tool env's turns. Add it when a call batch can end the episode, or
    messages are parsed differently from the suite's tool-call format."""

    def _after_calls(self, calls: list[ToolCall]) -> bool:
        """Called after a batch of calls ran; True ends the episode."""

    def _parse_message(self, command: str) -> ParsedMessage:
        """Split an assistant message into text and tool calls."""


@dataclass(frozen=True)
class Layer:
    """One layer of the contract: its name, the base class it applies to, and its protocol."""

    name: str
    base: str
    """``TextEnv`` (every env) or ``ToolEnv`` (tool envs only)."""
    protocol: type

    @property
    def members(self) -> tuple[str, ...]:
        """The names the protocol declares (annotations, methods and properties), in source order."""
        return protocol_members(self.protocol)

    @property
    def when(self) -> str:
        """When to add it: the protocol's docstring, on one line."""
        return " ".join((self.protocol.__doc__ or "").split())


CORE: tuple[Layer, ...] = (Layer("core", "TextEnv", TextEnvCore), Layer("tool core", "ToolEnv", ToolEnvCore))
"""What every env implements (a tool env: the tool core instead of ``_load_task``/``_execute``)."""

CAPABILITIES: tuple[Layer, ...] = (
    Layer("reporting", "TextEnv", Reporting),
    Layer("rehearsal", "ToolEnv", RehearsalSupport),
    Layer("skills and privileged text", "TextEnv", SkillsAndPrivilegedText),
    Layer("simulated roles", "TextEnv", SimulatedRoles),
    Layer("plays over another env", "TextEnv", PlaysOverAnotherEnv),
    Layer("fixtures and test profile", "TextEnv", FixturesAndTestProfile),
    Layer("serving hints", "TextEnv", ServingHints),
    Layer("conversation hooks", "ToolEnv", ConversationHooks),
)
"""The optional capabilities an env opts into by overriding their members."""

PROVIDED: dict[str, frozenset[str]] = {
    "TextEnv": frozenset({
        "metadata", "reset", "step", "close", "render", "format_action", "task_id", "turn", "resolve_task_id",
        "_info", "_explain_invalid", "_maybe_render", "__init__", "__deepcopy__",
    }),
    "ToolEnv": frozenset({  # ToolEnv implements the text core's _load_task/_execute over the tool core
        "_load_task", "_execute", "tool_index", "run_call", "execute_call", "_set_tools", "_result_ids", "_continue",
        "_finish", "_running_score", "format_action", "_info", "__init__",
    }),
}
"""Members each base implements for every env; an env does not override them (``__init__`` is
extended with the env's own arguments)."""


def protocol_members(protocol: type) -> tuple[str, ...]:
    """The member names a protocol class declares itself, annotations first, then methods and properties."""
    own = vars(protocol)
    names = list(own.get("__annotations__", {}))
    names += [name for name, value in own.items()
              if not (name.startswith("__") and name.endswith("__"))
              and (inspect.isfunction(value) or isinstance(value, (classmethod, staticmethod, property)))]
    return tuple(dict.fromkeys(names))


def _base(env_cls: type) -> type:
    from agentgym_suite.core.text_env import TextEnv
    from agentgym_suite.core.tool_env import ToolEnv

    return ToolEnv if issubclass(env_cls, ToolEnv) else TextEnv


def _overrides(env_cls: type, base: type, name: str) -> bool:
    """Whether ``env_cls`` (or a class it mixes in) defines ``name`` differently from ``base``."""
    mine, theirs = inspect.getattr_static(env_cls, name, None), inspect.getattr_static(base, name, None)
    return mine is not theirs and mine != theirs


def capabilities_of(env_cls: type) -> list[str]:
    """The names of the capabilities ``env_cls`` opts into: those with a member it overrides."""
    base = _base(env_cls)
    applies = {"TextEnv"} | ({"ToolEnv"} if base.__name__ == "ToolEnv" else set())
    return [layer.name for layer in CAPABILITIES
            if layer.base in applies and any(_overrides(env_cls, base, m) for m in layer.members)]


def missing_core(env_cls: type) -> list[str]:
    """The core members ``env_cls`` leaves to the base (which raises ``NotImplementedError``). A tool
    env implements the tool core, or the text core's ``_load_task`` and ``_execute`` itself (an env
    that plays over another env's tools)."""
    base = _base(env_cls)
    tool = base.__name__ == "ToolEnv" and not all(_overrides(env_cls, base, m) for m in ("_load_task", "_execute"))
    layer = CORE[1] if tool else CORE[0]
    required = [m for m in layer.members if inspect.isfunction(getattr(layer.protocol, m, None))]
    optional = {"_extra_info"}  # the tool core's info hook defaults to no extra keys
    from agentgym_suite.core.text_env import TextEnv

    return [m for m in required if m not in optional and not _overrides(env_cls, TextEnv if not tool else base, m)]
