"""``RehearsalEnv``: a tool env whose tools are answered by a world model (EnvACE).

Design: the rehearsal env *holds* an instance of the base tool env and lets it run the
episode as usual - its tasks, system prompt, user turns, tool list (including tools revealed
later), oracle and bookkeeping stay the base env's own - but it sets the base's
``call_runner`` (the injectable replacement of validate + execute for one call) to
:meth:`RehearsalEnv._run_call`. Before each step the rehearsal env sends every call of the
message - unknown tools and arguments that break the schema included - to the world model in
one batched generation: the simulator validates, as in the released code, where the env's own
tool and schema checks are off (``MCPChecklistTool``'s ``disable_phase0_tool_check`` and
``disable_schema`` default True). The base's dispatch loop then receives the simulated results
in order. No base handler is called, so nothing is executed. The env still runs the real
validation of each call and records the verdict on the generation (``expected_error``). With
``world_model="real"`` the runner forwards to the base's own ``execute_call`` (a pass-through
used as the fidelity reference and in tests).

Two variants (``variant``). ``released`` (default) follows the released code: the message is
read by the released Caller parser's rules (:mod:`.released_calls`); one it cannot read ends
the trajectory at once, with an ``error_tool_call`` result and no simulator call
(``envs.ChecklistEnv.async_step``); every simulator row gets the trajectory's score. The
opt-in ``validation`` variant is ours: a block that does not parse is answered by the
simulator too (an extra simulator row; the episode still ends), and the simulator gets a
validation reward for each call (``validation_reward``: 1 for rejecting an invalid call with
its code, 0.5 with another error code, 0 for accepting it or for rejecting a valid call), which
the trainer uses as that simulator row's return.

The base env is used only through the public ``ToolEnv`` API and its hooks
(``recorded_examples``, ``execution_free``, ``rehearsed_score``, ``success_criteria``,
``checklists``, ``tool_index``, ``call_runner``): a tool env supports rehearsal by overriding those, with no
change here.

Ending rule (EnvACE): a malformed message, or an ``error_tool_call`` result (a simulator's
validation error, a simulator output that breaks the contract, a tool that crashed) ends the
episode when ``end_on_tool_error`` is set (default): the open user turn earns nothing, the
turns closed before it keep their reward (the checklist reward is paid turn by turn, as the
released rollout accumulates it). With a real world the env's own validation answers, so an
unknown tool or bad arguments end it too. A domain error that a tool reports in its normal
result (``{"error": "no such file"}``) is a result like any other: BFCL's own ground truth
produces such results.
"""

from __future__ import annotations

import warnings
from collections import deque
from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym

from agentgym_suite.core.actions import ParsedAction
from agentgym_suite.core.fixture_profile import FixtureProfile
from agentgym_suite.core.info import REQUIRED_INFO_KEYS
from agentgym_suite.methods.envace.generation import SimulatorGeneration
from agentgym_suite.core.text_env import StepOutcome, TaskStart
from agentgym_suite.core.tool_calls import (
    INVALID_PARAMETERS,
    INVALID_TOOL_CALL_FORMAT,
    TOOL_NOT_AVAILABLE,
    ToolCall,
    ToolCallError,
    error_payload,
    parse_tool_calls,
    validate_call,
)
from agentgym_suite.core.tool_env import ToolEnv, ToolRecord
from agentgym_suite.envs.shared.checklists import (
    JUDGE_ATTEMPTS,
    JUDGE_MAX_NEW_TOKENS,
    JUDGE_TEMPERATURE,
    JUDGE_TOP_P,
    ChecklistJudge,
    TurnScore,
    episode_score,
    score_turn,
    validate_checklists,
)
from agentgym_suite.methods.envace.contract import ends_episode, is_error_result
from agentgym_suite.methods.envace.grounding import ExampleBank, cached_bank, collect_examples
from agentgym_suite.methods.envace.prompts import SimulatorRequest, conversation_lines
from agentgym_suite.methods.envace.released_calls import normalised_command, read_released
from agentgym_suite.methods.envace.rewards import (
    REWARD_MODES,
    Call,
    canonical,
    gold_call_score,
    gold_calls_from_oracle,
    judge_score,
    task_criteria,
)
from agentgym_suite.methods.envace.scripted import stand_in_result
from agentgym_suite.methods.envace.world_model import POLICY, REAL, Simulation, WorldModel

DEFAULT_BASE_ENV = "SyntheticTools-v0"
GROUNDINGS = ("auto", "task", "training", "none")
VARIANTS = ("released", "validation")
"""``released``: the released code's rules; ``validation``: ours, opt-in (see :class:`RehearsalEnv`)."""
PROTOCOL_ERROR = (
    "the episode ended with reward 0: a tool call was malformed or got an error_tool_call result, "
    "and end_on_tool_error is set"
)


def make_base_env(base_env: Any, base_env_kwargs: dict[str, Any] | None) -> ToolEnv:
    """The base tool env: an env id (made with its registered kwargs) or an env instance."""
    if isinstance(base_env, str):
        import agentgym_suite.registration as registration

        registration.register_all()
        if base_env == "EnvACE-Rehearsal-v0":
            raise ValueError("base_env cannot be the rehearsal env itself; name a tool env such as BFCL-v0 or Tau2-v0.")
        env = gym.make(base_env, **dict(base_env_kwargs or {})).unwrapped
    elif isinstance(base_env, gym.Env):
        if base_env_kwargs:
            raise ValueError("base_env_kwargs only apply when base_env is an env id; configure the instance directly.")
        env = base_env.unwrapped
    else:
        raise TypeError(f"base_env must be a tool env id such as 'BFCL-v0' or a tool env instance; got {type(base_env).__name__}.")
    if not isinstance(env, ToolEnv):
        raise ValueError(
            f"{type(env).__name__} is not a tool env; the rehearsal env wraps tool envs only "
            "(subclasses of ToolEnv such as BFCL-v0, Tau2-v0, VitaBench-v0, FinMCP-v0, SyntheticTools-v0)."
        )
    return env


class RehearsalEnv(ToolEnv):
    """EnvACE world rehearsal over any tool env of the suite.

    Args:
        base_env: the tool env supplying tasks, tools, instructions, user turns, recorded
            examples and its success check: an env id (default ``SyntheticTools-v0``) or an
            instance. ``base_env_id`` is accepted as an alias (the trainer's name for it). A
            list of ids makes a mixture (EnvACE trains on BFCL and tau2 together): task ids
            become ``"<env id>/<task id>"``.
        base_env_kwargs: keyword arguments for ``gymnasium.make(base_env, ...)``; for a
            mixture, a mapping from env id to its kwargs.
        world_model: a backend spec (``default`` - the embedded model, ``tiny``, ``hf:...``),
            a backend object (the trainer passes the policy it trains), ``"policy"`` (a
            placeholder the trainer fills with :meth:`set_world_model`), or ``"real"`` to run
            the base env's real tools. Specs load on the first simulated call.
        reward_mode: ``auto`` (default: ``base`` when the world is real or the base check
            needs no execution, else ``checklist`` when the base env has checklists, else
            ``gold_calls``), ``base``, ``checklist`` (EnvACE's per-turn checklist reward),
            ``gold_calls`` (imitation of the oracle's calls), ``judge`` or ``none``; see
            :mod:`agentgym_suite.methods.envace.rewards`.
        judge: a fixed judge model, never the policy being trained: a backend spec or object,
            or a callable. For ``checklist`` it grades the standards without a machine
            check (callable: ``(prompt) -> verdict``); for ``judge`` it grades the whole
            transcript (callable: ``(transcript, criteria) -> list[bool] | float``).
        end_on_tool_error: a malformed call or an error result ends the episode (EnvACE's rule;
            default True): reward 0 for the open user turn, the closed turns keep theirs.
        grounding: where the simulator's recorded examples come from (see
            :mod:`agentgym_suite.methods.envace.grounding`): ``auto`` (default: ``task`` for
            training worlds, ``training`` for benchmarks), ``task`` (the task's own
            ``recorded_examples``), ``training`` (oracle runs on the base env's training split,
            ``ToolEnv.training_tasks``; never the task being played), ``none``, or an
            :class:`~agentgym_suite.methods.envace.grounding.ExampleBank`.
        use_recorded_examples: False is ``grounding="none"`` (older name).
        sampling: simulator sampling: ``evaluation`` (default, except for ``"policy"``:
            temperature 0.6, top-p 0.8, at most 128 tokens, decoded under the output contract),
            ``training`` (default for ``"policy"``: temperature 1, free text, so the trainer's
            log-probs are the policy's), a dict of ``SamplingParams`` fields over a profile
            (``{"profile": "training", "max_new_tokens": 256}``), or SamplingParams.
        max_prompt_chars: longest simulator user prompt.
        prompt_style: the simulator prompt: ``full``, ``compact`` or ``auto`` (compact for the
            embedded models ``default`` and ``tiny``); see :mod:`agentgym_suite.methods.envace.prompts`.
        judge_temperature, judge_top_p, judge_max_new_tokens, judge_attempts: the checklist judge's
            sampling and its requests per standard while a reply is not JSON (the released 0.6,
            0.8, 6000 and 5; the verdict's JSON schema goes with every request, see
            :class:`~agentgym_suite.envs.shared.checklists.ChecklistJudge`).
        variant: ``released`` (default): EnvACE's released rules - a message the released Caller
            parser cannot read (:mod:`.released_calls`) ends the episode with no simulator call,
            every simulator row is scored with the trajectory's score, and an action is invalid
            only when its text is empty. ``validation`` (ours, opt-in): blocks that do not parse
            are sent to the simulator too (extra simulator rows), and a simulator row for a call
            the real validation rejects is scored on its validation (``validation_reward``).
            Both end the episode on a tool error and keep the reward of the turns closed before it.
        action_format: ignored (the whole assistant message is the action in tool envs).
        **kwargs: see :class:`~agentgym_suite.core.tool_env.ToolEnv` (``privileged``, ...).

    Info keys (besides the shared ones of :mod:`agentgym_suite.core.info`):
        ``base_env_id``: str: the tool env whose tasks are rehearsed.
        ``world_model``: str: the world model's name ('real' for the base env's own tools).
        ``reward_mode``: str: how the rehearsed episode is scored (base | checklist | gold_calls | judge | none).
        ``checklist_turn_scores``: list[float], with reward_mode='checklist': the score of each user turn closed so far (met standards' weights summed over checklists).
        ``checklist_judge_invalid``: list[str], with reward_mode='checklist': why each unusable judge reply so far was unusable (not JSON, or outside the verdict schema); such a turn ends the episode.

    The world model's generations of a step go, in call order, to the shared ``role_generations``
    key as records of role ``simulator`` (empty after reset); EnvACE's fields ride in each record's
    ``details``, and :func:`~agentgym_suite.methods.envace.generation.simulator_generations` reads
    them back as :class:`~agentgym_suite.methods.envace.generation.SimulatorGeneration` records.
    """

    benchmark: ClassVar[str] = "rehearsal"
    info_keys: ClassVar[dict[str, str]] = {
        "base_env_id": "str: the tool env whose tasks are rehearsed.",
        "world_model": "str: the world model's name ('real' for the base env's own tools).",
        "reward_mode": "str: how the rehearsed episode is scored (base | checklist | gold_calls | judge | none).",
        "checklist_turn_scores": "list[float], with reward_mode='checklist': the score of each user turn closed so far (met standards' weights summed over checklists).",
        "checklist_judge_invalid": "list[str], with reward_mode='checklist': why each unusable judge reply so far was unusable (not JSON, or outside the verdict schema); such a turn ends the episode.",
    }
    """The info keys this env adds to the shared ones (:mod:`agentgym_suite.core.info`)."""
    fixture_profile: ClassVar[FixtureProfile] = FixtureProfile(goes_on_kwargs={"end_on_tool_error": False,
                                                                               "variant": "validation"},
                                                               role_kwargs={"reward_mode": "judge"},
                                                               role_replies={"world_model": stand_in_result})
    """EnvACE ends an episode at the first malformed call by design; the hostile-input tests turn that
    off and use the validation variant, where the base env's own validation marks refused actions.
    Served by stand-in models, the world model answers in its contract and the judge scores the end."""
    policy_setting: ClassVar[str] = "world_model"
    """A trainer lends its policy as the world model (EnvACE trains the Simulator role)."""
    judge_setting: ClassVar[str] = "judge"
    """``agentgym eval --judge`` (and ``--rescore``) set the fixed judge: the checklist judge of standards
    without a machine check (``reward_mode='checklist'``) or the transcript judge (``reward_mode='judge'``)."""
    wraps_setting: ClassVar[str] = "base_env_id"

    def __init__(
        self,
        base_env: Any = None,
        base_env_kwargs: dict[str, Any] | None = None,
        world_model: Any = "default",
        *,
        reward_mode: str = "auto",
        judge: Any = None,
        end_on_tool_error: bool = True,
        use_recorded_examples: bool = True,
        grounding: Any = "auto",
        sampling: Any = None,
        max_prompt_chars: int = 24_000,
        prompt_style: str = "auto",
        variant: str = "released",
        judge_temperature: float = JUDGE_TEMPERATURE,
        judge_top_p: float = JUDGE_TOP_P,
        judge_max_new_tokens: int = JUDGE_MAX_NEW_TOKENS,
        judge_attempts: int = JUDGE_ATTEMPTS,
        base_env_id: str | None = None,
        action_format: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(end_on_tool_error=end_on_tool_error, **kwargs)
        if variant not in VARIANTS:
            raise ValueError(f"variant={variant!r}; choose one of {VARIANTS} (released = EnvACE's released rules).")
        self.variant = variant
        self._released_error: dict[str, Any] | None = None
        self.mixture = isinstance(base_env, (list, tuple))
        if self.mixture:
            if base_env_id is not None and base_env_id not in base_env:
                raise ValueError(f"base_env_id={base_env_id!r} is not among base_env={list(base_env)}; pass one of them.")
            per_env = dict(base_env_kwargs or {})
            self.bases = {str(i): make_base_env(str(i), per_env.get(str(i))) for i in base_env}
        else:
            if base_env is not None and base_env_id is not None and base_env != base_env_id:
                raise ValueError(f"base_env={base_env!r} and base_env_id={base_env_id!r} disagree; pass one of them.")
            one = make_base_env(base_env if base_env is not None else (base_env_id or DEFAULT_BASE_ENV), base_env_kwargs)
            self.bases = {one.spec.id if one.spec is not None else type(one).__name__: one}
        self.base_env_id, self.base = next(iter(self.bases.items()))
        self.real = isinstance(world_model, str) and world_model == REAL
        self.world_model: WorldModel | None = None if self.real else WorldModel(
            world_model, sampling=sampling, max_prompt_chars=max_prompt_chars, prompt_style=prompt_style)
        self._reward_mode_arg = reward_mode
        if isinstance(judge, str) and judge in ("policy", "real"):
            raise ValueError(f"judge={judge!r}: the judge is a fixed model (a backend spec such as 'hf:Qwen/Qwen3-8B'), "
                             "never the policy being trained.")
        modes = set()
        for base in self.bases.values():
            base.end_on_tool_error = False  # this env applies EnvACE's ending rule itself (see _execute)
            base.privileged = self.privileged  # its info["privileged"] is passed on (see _privileged_info)
            self.reward_mode = self._resolve_reward_mode(reward_mode, base)
            modes.add(self.reward_mode)
        if judge is not None and not modes & {"checklist", "judge"}:
            warnings.warn(f"judge={judge!r} is never asked: reward_mode resolves to {sorted(modes)}, and only "
                          "'checklist' (standards without a machine check) and 'judge' ask a judge. Pass "
                          "reward_mode='judge' to score the transcripts with it.", stacklevel=2)
        self.reward_mode = self._resolve_reward_mode(reward_mode, self.base)
        if self.reward_mode == "judge" and judge is None:
            raise ValueError("reward_mode='judge' needs judge=<backend spec, backend or callable>: a fixed model, "
                             "never the policy being trained.")
        self._judge_spec = judge
        self._judge_sampling: dict[str, Any] = {"temperature": judge_temperature, "top_p": judge_top_p,
                                "max_new_tokens": judge_max_new_tokens, "attempts": judge_attempts}
        self._judge: Any = None
        self.use_recorded_examples = use_recorded_examples
        if not use_recorded_examples:
            grounding = "none"
        if not isinstance(grounding, (str, ExampleBank)) or (isinstance(grounding, str) and grounding not in GROUNDINGS):
            raise ValueError(f"grounding={grounding!r}; choose one of {GROUNDINGS} or pass an ExampleBank.")
        self.grounding = grounding
        self._banks: dict[str, ExampleBank] = {}
        for base in self.bases.values():
            base.call_runner = self._run_call  # see the module docstring
            base.error_runner = None if self.real else self._answer_malformed
        self._pending: deque[tuple[ToolCall, Simulation]] = deque()
        self._pending_errors: deque[Simulation] = deque()
        self._step_generations: list[SimulatorGeneration] = []
        self.episode_generations: list[SimulatorGeneration] = []
        self._made: list[Call] = []
        self._gold: list[Call] = []
        self._examples: list[dict[str, Any]] = []
        self._base_privileged: dict[str, Any] = {}
        self._protocol_error = False
        self._checklists: list[Any] = []
        self._turn_scores: list[TurnScore] = []
        self._checklist_judge: ChecklistJudge | None = None

    @classmethod
    def fixture_kwargs(cls, scratch: Path) -> dict[str, Any]:
        """The real tools as the world model: no model weights needed."""
        return {"world_model": REAL}

    def inner_envs(self) -> list[ToolEnv]:
        """The base envs, whose info keys a rehearsed step passes on (see
        :func:`agentgym_suite.core.info.documented_keys`)."""
        return list(self.bases.values())

    # ------------------------------------------------------------------ configuration
    def _resolve_reward_mode(self, mode: str, base: ToolEnv) -> str:
        if mode == "auto":
            if self.real or base.execution_free:
                return "base"
            return "checklist" if type(base).checklists is not ToolEnv.checklists else "gold_calls"
        if mode not in REWARD_MODES:
            raise ValueError(f"reward_mode={mode!r}; choose auto or one of {REWARD_MODES}.")
        if mode == "base" and not self.real and not base.execution_free:
            raise ValueError(
                f"reward_mode='base' needs a base check that runs without real tools, but {type(base).__name__}'s "
                "check reads the state its tools change. Use reward_mode='gold_calls' or 'judge', or world_model='real'."
            )
        return mode

    @property
    def env(self) -> ToolEnv:
        """The base env the current task plays on (as a ``gymnasium.Wrapper`` names its inner env;
        ``unwrapped`` stays this env, whose dynamics the caller drives)."""
        return self.base

    def wants_policy(self) -> bool:
        """True when this env was made with ``world_model='policy'``."""
        return self.world_model is not None and isinstance(self.world_model.spec, str) and self.world_model.spec == POLICY

    def lend_policy(self, backend: Any) -> None:
        """The trainer's policy backend becomes the world model (see :meth:`set_world_model`)."""
        self.set_world_model(backend)

    def set_world_model(self, world_model: Any) -> None:
        """Swap the world model (e.g. the trainer's current policy backend); takes effect at the next call."""
        if isinstance(world_model, str) and world_model == REAL:
            raise ValueError("set_world_model cannot switch to 'real'; make a new env with world_model='real'.")
        if self.real:
            raise ValueError("this env was made with world_model='real'; make a new env to rehearse with a model.")
        assert self.world_model is not None
        if world_model is not None and world_model is self._judge_spec:
            raise ValueError("the world model cannot be the judge: the judge is a fixed model, never the policy being trained.")
        self.world_model = WorldModel(world_model, sampling=self.world_model.sampling,
                                      max_prompt_chars=self.world_model.max_prompt_chars,
                                      prompt_style=self.world_model.prompt_style, cpu_threads=self.world_model.cpu_threads)

    # ------------------------------------------------------------------ pass-through
    def task_ids(self) -> list[str]:
        if self.mixture:
            return [f"{name}/{t}" for name, base in self.bases.items() for t in base.task_ids()]
        return self.base.task_ids()

    def oracle(self) -> list[str]:
        return self.base.oracle()

    def task_family(self, task_id: str) -> str:
        if self.mixture:
            env_id, inner = task_id.split("/", 1)
            return self.bases[env_id].task_family(inner)
        return self.base.task_family(task_id)

    def _privileged_info(self) -> dict[str, Any]:
        """The base env's privileged info from its last reset or step."""
        return dict(self._base_privileged)

    def close(self) -> None:
        for base in self.bases.values():
            base.close()
        super().close()

    # ------------------------------------------------------------------ episode
    def _load_task(self, task_id: str) -> TaskStart:
        seed = int(self.np_random.integers(2**31 - 1))
        if self.mixture:
            self.base_env_id, task_id = task_id.split("/", 1)
            self.base = self.bases[self.base_env_id]
            self.reward_mode = self._resolve_reward_mode(self._reward_mode_arg, self.base)
        observation, info = self.base.reset(seed=seed, options={"task_id": task_id})
        self.messages = self.base.messages
        self.tool_log = self.base.tool_log
        self._pending.clear()
        self.episode_generations = []
        self._step_generations = []
        self._made = []
        self._examples = [] if self.real else self._grounding_examples(task_id)
        needs_gold = self.reward_mode in ("gold_calls", "judge")
        self._gold = gold_calls_from_oracle(self.base.oracle()) if needs_gold else []
        self._turn_scores = []
        if self.reward_mode == "checklist":
            self._load_checklists()
        return TaskStart(observation, str(info.get("task", "")), info.get("admissible_actions"), info.get("tools"),
                         self._extra(info))

    def _execute(self, command: str, parsed: ParsedAction) -> StepOutcome:
        self._step_generations = []
        self._released_error = None
        if self.variant == "released":
            reading = read_released(command)
            if reading.error is not None:  # the released env ends here: no call runs, no simulator is asked
                self._released_error = reading.payload()
            elif reading.calls:
                core = parse_tool_calls(command)
                if core.errors or [(c.name, dict(c.arguments)) for c in core.calls] != reading.calls:
                    command = normalised_command(reading)  # the shared parser now sees the released calls
        message = parse_tool_calls(command)
        self._protocol_error = bool(message.errors) or self._released_error is not None
        if not self.real and self._released_error is None:
            self._simulate_message(command)
        observation, reward, terminated, truncated, info = self.base.step(command)
        self._pending.clear()
        self._pending_errors.clear()
        self._tools = info.get("tools")
        won, score = bool(info.get("won")), float(info.get("score") or 0.0)
        forced_fail = self.end_on_tool_error and self._protocol_error
        extra = self._extra(info)
        if self.reward_mode == "checklist":
            reward, score, won, terminated = self._checklist_step(message.has_tool_calls, info, forced_fail, terminated)
            extra["checklist_turn_scores"] = [t.score for t in self._turn_scores]
            extra["checklist_judge_invalid"] = [p for t in self._turn_scores for p in t.judge_problems]
        elif terminated and not forced_fail and self.reward_mode != "base":
            score, won = self._mode_score()
            reward = score
        elif terminated and not forced_fail and not self.real:
            recomputed = self.base.rehearsed_score(list(self._made))
            if recomputed is not None:
                score, won = recomputed
                reward = score
        if forced_fail:
            if self.reward_mode != "checklist":
                reward, score = 0.0, 0.0
            won, terminated = False, True
            extra["error"] = PROTOCOL_ERROR
        return StepOutcome(observation, float(reward), score, won, bool(terminated), bool(truncated),
                           action_valid=self._action_valid(command, info),
                           admissible_actions=info.get("admissible_actions"), extra=extra)

    def _action_valid(self, command: str, info: dict[str, Any]) -> bool:
        """Released variant: the released agents' validity (the generated text is not empty), so a
        malformed call is valid and ends the episode instead; validation variant: the base env's."""
        if self.variant == "released":
            return bool(command.strip())
        return bool(info.get("action_valid", True))

    def _checklist_step(self, has_calls: bool, info: dict[str, Any], forced_fail: bool,
                        terminated: bool) -> tuple[float, float, bool, bool]:
        """(reward, score, won, terminated) of a step under the per-turn checklist reward.

        A text reply closes the user turn: the turn is scored and its share
        ``turn score / (num_checklists * num_turns)`` is this step's reward, so the episode
        return is the sum over closed turns, as the released rollout accumulates turn rewards.
        A turn that leaves a required standard unmet, or whose judge answered outside the
        verdict schema, ends the episode after it (``ChecklistInteraction.generate_response``).
        A tool error ends the episode with reward 0 for the open turn; the closed turns keep theirs.
        """
        before = episode_score(self._turn_scores, self._checklists)
        if not forced_fail and not has_calls and info.get("action_valid", True):
            turn = self._score_turn(len(self._turn_scores))
            terminated = terminated or turn.required_unmet or bool(turn.judge_problems)
        if terminated and not forced_fail and self.variant == "validation":
            reached = len([m for m in self.base.messages if m.get("role") == "user"])
            stopped = bool(self._turn_scores) and (self._turn_scores[-1].required_unmet or self._turn_scores[-1].judge_problems)
            if len(self._turn_scores) < reached and not stopped:  # ended inside a turn (turn limit, end_on_goal)
                self._score_turn(len(self._turn_scores))
        score = episode_score(self._turn_scores, self._checklists)
        turns = max(len(c) for c in self._checklists)
        won = (not forced_fail and len(self._turn_scores) >= turns
               and all(all(all(m) for m in t.met) for t in self._turn_scores))
        return score - before, score, won, terminated or forced_fail

    def _extra(self, info: dict[str, Any]) -> dict[str, Any]:
        self._base_privileged = dict(info.get("privileged") or {})
        extra = {k: v for k, v in info.items() if k not in REQUIRED_INFO_KEYS and k != "privileged"}
        extra.update(
            role_generations=[g.as_role_generation() for g in self._step_generations],
            base_env_id=self.base_env_id,
            world_model=REAL if self.real else self.world_model.name,  # type: ignore[union-attr]
            reward_mode=self.reward_mode,
        )
        return extra

    # ------------------------------------------------------------------ grounding
    @property
    def examples(self) -> list[dict[str, Any]]:
        """The recorded examples the simulator is shown for the current task (a copy)."""
        return list(self._examples)

    def grounding_mode(self, base: ToolEnv | None = None) -> str:
        """The grounding this env uses for ``base`` (default the current base env)."""
        base = base if base is not None else self.base
        if isinstance(self.grounding, ExampleBank):
            return "bank"
        if self.grounding == "auto":
            return "task" if base.examples_are_training_data else "training"
        return str(self.grounding)

    def example_bank(self) -> ExampleBank:
        """The current base env's examples from its training split (oracle runs; built once, on first use)."""
        if isinstance(self.grounding, ExampleBank):
            return self.grounding
        if self.base_env_id not in self._banks:
            overrides, tasks = self.base.training_tasks()
            spec = self.base.spec
            kwargs = {**dict(spec.kwargs or {}), **overrides} if spec is not None else dict(overrides)
            key = f"{spec.id if spec is not None else type(self.base).__name__}:{canonical(kwargs)}"

            def build() -> ExampleBank:
                env = gym.make(spec.id, **kwargs) if spec is not None else type(self.base)(**kwargs)
                try:
                    return collect_examples(env, tasks)
                finally:
                    env.close()
            self._banks[self.base_env_id] = cached_bank(key, build)
        return self._banks[self.base_env_id]

    def _grounding_examples(self, task_id: str) -> list[dict[str, Any]]:
        mode = self.grounding_mode()
        if mode == "none":
            return []
        if mode == "task":
            return list(self.base.recorded_examples())
        same_split = mode == "bank" or not self.base.training_tasks()[0]
        return self.example_bank().for_tools(self.base.tool_index, exclude_task=task_id if same_split else None)

    # ------------------------------------------------------------------ simulation
    def _simulate_message(self, command: str) -> None:
        """Simulate every call of the message that parses in one batched generation (none is filtered)."""
        assert self.world_model is not None
        tool_index = self.base.tool_index
        parsed = parse_tool_calls(command)
        calls = list(parsed.calls)
        errors = list(parsed.errors) if self.variant == "validation" else []  # extra rows: the validation variant's
        if not calls and not errors:
            return
        history = list(self.base.messages)
        tools = list(tool_index.values())
        # blocks that do not parse come first, as in the base's results; the simulator answers them too
        requests = [SimulatorRequest(tools, self._examples, history, command, e.name, {}, raw=e.raw or command)
                    for e in errors]
        requests += [SimulatorRequest(tools, self._examples, history, command, c.name, dict(c.arguments)) for c in calls]
        meta = [{"call_id": e.id, "turn": self.turn, "index": i} for i, e in enumerate(errors)]
        meta += [{"call_id": c.id, "turn": self.turn, "index": len(errors) + i} for i, c in enumerate(calls)]
        seed = int(self.np_random.integers(2**31 - 1))
        simulations = self.world_model.simulate(requests, seed=seed, meta=meta)
        for error, simulation in zip(errors, simulations):
            simulation.record.expected_error = error.code
            simulation.record.validation_reward = validation_reward(error.code, simulation.result)
            self._pending_errors.append(simulation)
            self._step_generations.append(simulation.record)
            self.episode_generations.append(simulation.record)
        for call, simulation in zip(calls, simulations[len(errors):]):
            expected = validate_call(call, tool_index)
            simulation.record.expected_error = expected.code if expected is not None else ""
            if self.variant == "validation":
                simulation.record.validation_reward = validation_reward(simulation.record.expected_error, simulation.result)
            self._pending.append((call, simulation))
            self._step_generations.append(simulation.record)
            self.episode_generations.append(simulation.record)

    def _answer_malformed(self, error: ToolCallError) -> Any:
        """The base's ``error_runner``: the simulator's answer to a block that did not parse (the
        episode still ends on it when ``end_on_tool_error`` is set, as the released parser does)."""
        if self._released_error is not None:
            return self._released_error
        if not self._pending_errors:
            return error_payload(error)
        return self._pending_errors.popleft().result

    def _run_call(self, call: ToolCall) -> tuple[str, Any, str]:
        """The base's ``call_runner`` while rehearsing: simulated results, in the order the calls come."""
        if self._released_error is not None:  # a malformed message: the released env runs none of its calls
            self._protocol_error = True
            return call.name, self._released_error, "invalid"
        if self.real:
            name, result, status = self.base.execute_call(call)
        else:
            name, result, status = self._simulated_call(call)
        if status != "invalid":
            self._made.append((call.name, dict(call.arguments)))
        self._protocol_error = self._protocol_error or status == "invalid" or ends_episode(result)
        return name, result, status

    def _simulated_call(self, call: ToolCall) -> tuple[str, Any, str]:
        if not self._pending or self._pending[0][0] != call:
            message = f"{call.name} reached the rehearsal env without a simulated result; nothing was executed"
            result: Any = error_payload(ToolCallError("SIMULATOR_FAILED", message, name=call.name))
            self.base.tool_log.append(ToolRecord(call.name, call.arguments, result, False, self.turn))
            return call.name, result, "error"
        _, simulation = self._pending.popleft()
        ok = not is_error_result(simulation.result)
        self.base.tool_log.append(ToolRecord(call.name, call.arguments, simulation.result, ok, self.turn))
        status = "ok" if ok else ("invalid" if validation_code(simulation.result) else "error")
        return call.name, simulation.result, status

    # ------------------------------------------------------------------ scoring
    def _load_checklists(self) -> None:
        checklists = self.base.checklists()
        if not checklists:
            raise ValueError(
                f"reward_mode='checklist' but this task of {self.base_env_id} has no checklists; train on "
                "SyntheticTools-v0 or ChecklistTools-v0 (or use reward_mode='judge' with success criteria)."
            )
        self._checklists = validate_checklists(checklists)
        needs_judge = any("check" not in s for c in self._checklists for t in c for s in t)
        if needs_judge and self._checklist_judge is None:
            if self._judge_spec is None:
                raise ValueError(
                    "this task's checklist has standards without a machine check: pass judge=<backend spec> "
                    "(a fixed judge model such as 'hf:Qwen/Qwen3-8B', never the policy being trained)."
                )
            spec = self._judge_spec
            self._checklist_judge = spec if isinstance(spec, ChecklistJudge) else ChecklistJudge(spec, **self._judge_sampling)

    def _score_turn(self, turn: int) -> TurnScore:
        seed = int(self.np_random.integers(2**31 - 1))
        scored = score_turn(self.base.messages, self._checklists, turn, self._checklist_judge, seed=seed)
        self._turn_scores.append(scored)
        return scored

    def _mode_score(self) -> tuple[float, bool]:
        """(score, won) of the ended episode by ``reward_mode`` (``gold_calls``, ``judge`` or ``none``;
        ``checklist`` is scored turn by turn, :meth:`_checklist_step`)."""
        if self.reward_mode == "none":
            return 0.0, False
        if self.reward_mode == "gold_calls":
            return gold_call_score(self._made, self._gold)
        criteria = task_criteria(self.base.success_criteria(), self._task_text, self._gold)
        transcript = "\n".join(conversation_lines(self.base.messages))
        score, won, _ = judge_score(self._judge_backend(), transcript, criteria, seed=int(self.np_random.integers(2**31 - 1)))
        return score, won

    def _judge_backend(self) -> Any:
        if self._judge is None:
            spec = self._judge_spec
            from agentgym_suite.llm.role_client import role_backend

            self._judge = role_backend("judge", spec, shared=False)  # a spec or backend answers as the cached, accounted judge
        return self._judge


VALIDATION_CODES = (INVALID_TOOL_CALL_FORMAT, TOOL_NOT_AVAILABLE, INVALID_PARAMETERS)
"""The ``error_tool_call`` codes of the simulator's validation step (format, whitelist, schema)."""


def validation_code(result: Any) -> str:
    """The validation code of an ``error_tool_call`` result, or "" (not an error, or another error)."""
    if isinstance(result, dict) and isinstance(result.get("error_tool_call"), dict):
        code = str(result["error_tool_call"].get("code", ""))
        return code if code in VALIDATION_CODES else ""
    return ""


def validation_reward(expected: str, result: Any) -> float | None:
    """The simulator's reward for validating one call (see the module docstring); None for a
    valid call it did not reject (that row carries the episode return)."""
    given = validation_code(result)
    if expected:
        if given == expected:
            return 1.0
        return 0.5 if ends_episode(result) else 0.0
    return 0.0 if given else None
