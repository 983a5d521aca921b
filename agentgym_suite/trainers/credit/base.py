"""The credit-assignment protocol: the batch a plug-in sees, what it returns, and the base
class every plug-in derives from.

A trainer talks to a plug-in in two places:

1. once per generation batch, ``assigner.advantages(batch)`` returns per-token advantages
   ``(R, T)`` that replace TRL's per-sequence advantages (zero on every masked token);
2. in every optimisation micro-batch, when ``assigner.has_aux_loss`` is true,
   ``assigner.aux_loss(batch.select(rows), logprobs, logits)`` returns a scalar (already
   multiplied by the plug-in's coefficient) that is added to TRL's loss.

A plug-in declares everything else the trainer needs to know about it as class attributes,
so the trainer never branches on a plug-in's name:

* ``needs_*`` flags and ``extra_fields``: the optional batch inputs to compute
  (``required_fields``; ``check_batch`` turns a missing one into an error that names it);
* ``teacher_logit_prompts``: for a plug-in with ``needs_full_logits``, the teacher prompts whose
  logits over the completion the trainer stores in ``CreditBatch.aux_extras`` (VAD's ``x+``/``x-``);
* ``row_inputs``: inputs of this method alone, as providers computed from the trainer's rows
  into ``CreditBatch.extras`` (:mod:`~agentgym_suite.trainers.credit.inputs`);
* ``needs_fixed_teacher``: the teacher is fixed weights, not the moving policy (VAD);
* ``teacher_context``: for a plug-in with ``needs_teacher_logprobs`` or ``needs_full_logits``, how
  its teacher's context is built: the privileged text of each row and the teacher prompt it goes
  into (:class:`TeacherContext`; the self-distillation plug-ins share one, in
  ``trainers/credit/self_distillation/``);
* ``roles``: the row roles it trains, the first being the role of a plain single-role
  episode's rows; a plug-in listing the role of an env's extra generations (an env declares it,
  e.g. a rehearsal env's world model) also trains those generations;
* ``own_invalid_penalty``: its paper fixes the invalid-action penalty, so the trainer's
  ``invalid_action_penalty`` is not passed to it;
* ``trainer_defaults``: parameters a trainer passes unless the user sets them;
* ``env_defaults``: env keyword arguments a trainer passes unless ``env_kwargs`` sets them
  (the setting the method's paper trains that env with, e.g. SkillRise's ALFWorld reward 10);
* ``wrap_env_factory``: a hook that wraps the factory of the env being trained on (a no-op
  unless the method plays episodes of its own shape, e.g. SkillRise's trials);
* ``rows_with_other_terms``: the rows whose loss has a term besides the advantage-weighted
  policy term (its auxiliary loss). A trainer skips the forward and backward of a row whose
  advantage is zero only when this says the row carries nothing else;
* ``conformance``: what its tests check against the method's released code
  (:class:`~agentgym_suite.core.conformance.MethodConformance`), which ``agentgym conformance``
  runs and reports.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Mapping, Protocol, runtime_checkable

import torch
from torch import Tensor

from agentgym_suite.core.conformance import MethodConformance
from agentgym_suite.trainers.credit.inputs import RowInput, RowValues, check_row_values, select_row_values

if TYPE_CHECKING:
    import gymnasium as gym


@dataclass
class CreditBatch:
    """The rows of one generation batch, as a credit plug-in sees them.

    Per-row fields have length ``R``; per-token tensors have shape ``(R, T)``. A *row* is
    one trained generation: one agent turn in the ``turn`` layout, a whole episode in the
    ``trajectory`` layout.
    """

    group_ids: Sequence[Hashable]
    """Group of each row: rows of the G rollouts of one task (same task id and seed)."""
    traj_ids: Sequence[Hashable]
    """Trajectory (episode or SkillRise trial) each row belongs to; unique across groups."""
    turn_idx: Sequence[int]
    """Order of the row inside its trajectory (0-based turn index)."""
    roles: Sequence[str]
    """Role of each row, one of the plug-in's ``CreditAssigner.roles`` (built in: ``agent``,
    ``caller`` | ``simulator`` for EnvACE, ``solve`` | ``curate`` for SkillRise)."""
    returns: Tensor
    """``(R,)`` episode return of the row's trajectory, in the env's own scale. SkillRise:
    the reward of the task at the row's position (ignored on curate rows)."""
    invalid: Tensor
    """``(R,)`` bool: the row's action was invalid (penalised by ``invalid_penalty``)."""
    completion_mask: Tensor
    """``(R, T)`` 1 on model tokens that are trained, 0 on env/prompt/padding tokens."""
    old_logprobs: Tensor | None = None
    """``(R, T)`` log-probs of the sampled tokens under the rollout weights (detached)."""
    teacher_logprobs: Tensor | None = None
    """``(R, T)`` same weights as ``old_logprobs`` with privileged text in the prompt."""
    step: int = 0
    """Optimiser steps the trainer completed before this batch (0 for the first batch), for
    schedules such as RLSD's decay; the batch trains step ``step + 1``."""
    extras: Mapping[str, RowValues] = field(default_factory=dict)
    """Inputs of one method, by name: what the plug-in's ``row_inputs`` providers computed from the
    rows (a list of values or a tensor with the rows first; e.g. SkillRise's ``positions``)."""
    aux_extras: Mapping[str, Tensor] = field(default_factory=dict)
    """Inputs only the plug-in's ``aux_loss`` reads, by name, each a tensor with the rows first: the
    teacher logits its ``teacher_logit_prompts`` asked for, ``(R, T, K)`` and detached, and under
    :data:`VOCAB_INDEX` the token ids they are restricted to when a top-k was kept. Computed on each
    process's own rows and not gathered over processes: a batch merged from several processes holds
    ``(R, 0)`` placeholders here."""

    def __post_init__(self) -> None:
        """Check that every field agrees on the number of rows and tokens."""
        if self.completion_mask.dim() != 2:
            raise ValueError(
                f"completion_mask must have shape (rows, tokens); got {tuple(self.completion_mask.shape)}. "
                "Pad the completions of all rows to one length and mask the padding with 0."
            )
        rows = self.completion_mask.shape[0]
        for name in ("group_ids", "traj_ids", "turn_idx", "roles"):
            _check_len(name, getattr(self, name), rows)
        for name in ("returns", "invalid"):
            value = getattr(self, name)
            if tuple(value.shape) != (rows,):
                raise ValueError(f"{name} must have shape ({rows},), one value per row; got {tuple(value.shape)}.")
        for name in ("old_logprobs", "teacher_logprobs"):
            value = getattr(self, name)
            if value is not None and value.shape != self.completion_mask.shape:
                raise ValueError(
                    f"{name} must have the completion_mask's shape {tuple(self.completion_mask.shape)}; "
                    f"got {tuple(value.shape)}. Compute it on the same padded completions."
                )
        bad = sorted({repr(r) for r in self.roles if not isinstance(r, str) or not r})
        if bad:
            raise ValueError(f"row roles must be non-empty strings; got {bad}.")
        for name, value in self.extras.items():
            check_row_values(name, value, rows, "tensor" if isinstance(value, Tensor) else "values")
        for name, value in self.aux_extras.items():
            check_row_values(name, value, rows, "tensor")
        if not torch.isfinite(self.returns.float()).all():
            raise ValueError("returns contain NaN or inf; give failed episodes a finite return (e.g. 0).")

    @property
    def num_rows(self) -> int:
        """Number of rows ``R``."""
        return int(self.completion_mask.shape[0])

    @property
    def mask(self) -> Tensor:
        """The completion mask as a float tensor."""
        return self.completion_mask.to(torch.float32)

    def select(self, rows: Sequence[int] | Tensor) -> CreditBatch:
        """The sub-batch of the given row indices (for micro-batched auxiliary losses)."""
        idx = torch.as_tensor(rows, dtype=torch.long)
        picks = idx.tolist()
        updates: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None or f.name == "step":
                continue
            if f.name in ("extras", "aux_extras"):
                updates[f.name] = select_row_values(value, picks)
            elif isinstance(value, Tensor):
                updates[f.name] = value[idx.to(value.device)]
            else:
                updates[f.name] = [value[i] for i in picks]
        return replace(self, **updates)


@dataclass
class CreditOutput:
    """What ``CreditAssigner.advantages`` returns."""

    advantages: Tensor
    """``(R, T)`` per-token advantages, exactly 0 where the completion mask is 0."""
    metrics: dict[str, float] = field(default_factory=dict)
    """Scalars to log, named ``credit/<plugin>/<metric>``."""


@dataclass
class AuxLossOutput:
    """What ``CreditAssigner.aux_loss`` returns."""

    loss: Tensor
    """Scalar with gradient, already scaled by the plug-in's coefficient; add it to TRL's loss."""
    metrics: dict[str, float] = field(default_factory=dict)
    """Scalars to log, named ``credit/<plugin>/<metric>``."""


@dataclass
class CreditConfig:
    """Base of every plug-in's config: a flat dataclass validated in ``__post_init__``."""

    def __post_init__(self) -> None:
        """Validate the fields (subclasses extend this)."""


VOCAB_INDEX = "vocab_index"
"""Key in ``CreditBatch.aux_extras`` of the ``(R, T, K)`` token ids the stored teacher logits are
restricted to (top-k storage); absent when they cover the full vocabulary. The trainer gathers the
student's logits at these ids before ``aux_loss``."""

Encode = Callable[[str], Sequence[int]]
"""Text -> token ids, without special tokens."""


@dataclass(frozen=True)
class TeacherLogitPrompts:
    """What a plug-in with ``needs_full_logits`` asks the trainer to compute: teacher logits over each
    row's completion after each of these prompts.

    ``prompts`` maps a name to one prompt (token ids) per row; the trainer runs the teacher on each
    prompt followed by the row's completion and stores the logits in ``CreditBatch.aux_extras`` under
    the name. ``top_k``: the vocabulary kept per token, the tokens most likely after the *first*
    prompt set (their ids go to ``aux_extras[VOCAB_INDEX]``); None keeps the full vocabulary.
    """

    prompts: Mapping[str, Sequence[Sequence[int]]]
    top_k: int | None = None


TEACHER_SOURCES = ("skills", "oracle", "env_response")
"""Where a row's privileged text may come from (the config's ``teacher_context``): the env's skill
texts, its oracle walkthrough, or the real env's response to each action."""


@dataclass(frozen=True)
class TeacherSettings:
    """What a run sets about its teacher's context (the trainer's config), given to a plug-in's
    :attr:`CreditAssigner.teacher_context` once per run."""

    source: str
    """Where each row's privileged text comes from (the config's ``teacher_context``)."""
    texts_dir: str | None = None
    """A folder of the user's own privileged texts (the config's ``skills_dir``), or None."""
    env_id: str = ""
    """The env trained on (its declared texts are the teacher's unless ``texts_dir`` is given)."""
    env_factory: Callable[[], Any] | None = None
    """The run's own env factory, when it has one (the class of an env it makes is asked instead of ``env_id``'s)."""


Decode = Callable[[Sequence[int]], str]
"""Token ids -> text (special tokens kept)."""


@runtime_checkable
class TeacherContext(Protocol):
    """The teacher's context of a run, built once from :class:`TeacherSettings` by a plug-in's
    :attr:`CreditAssigner.teacher_context`: the trainer asks it for each row's privileged text and
    for the teacher prompt of a teacher log-prob pass (a plug-in with ``needs_full_logits`` builds
    its prompts from the texts in ``teacher_logit_prompts``)."""

    @property
    def records_oracle(self) -> bool:
        """The rollouts must record the env's oracle at every turn (the texts are read from it)."""
        ...

    @property
    def origin(self) -> str | None:
        """Where the texts come from, logged with the run's config (None when not from files)."""
        ...

    def text(self, row: Any, decode: Decode) -> str:
        """The privileged text of one of the trainer's rows (``trainers.rows.Row``)."""
        ...

    def prompt_ids(self, text: str, prompt_ids: Sequence[int], encode: Encode, max_prompt_tokens: int) -> list[int]:
        """The teacher prompt of a row whose privileged text is ``text`` and whose student prompt is ``prompt_ids``."""
        ...


class CreditAssigner(ABC):
    """Base class of credit-assignment plug-ins.

    Subclasses set ``name``, ``config_cls`` and the declarations below that differ from the
    defaults, and implement ``advantages``; those with an auxiliary loss set
    ``has_aux_loss`` and override ``aux_loss``.
    """

    name: ClassVar[str]
    """Registry name."""
    config_cls: ClassVar[type[CreditConfig]]
    """Dataclass holding the plug-in's parameters with the papers' defaults."""
    needs_old_logprobs: ClassVar[bool] = False
    """The trainer must fill ``CreditBatch.old_logprobs``."""
    needs_teacher_logprobs: ClassVar[bool] = False
    """The trainer must run the teacher prompt and fill ``CreditBatch.teacher_logprobs``."""
    needs_full_logits: ClassVar[bool] = False
    """The trainer fills ``CreditBatch.aux_extras`` with the teacher logits ``teacher_logit_prompts``
    asks for and passes the student's current logits to ``aux_loss``."""
    needs_fixed_teacher: ClassVar[bool] = False
    """The trainer runs the teacher's passes (``teacher_logprobs``, the teacher logits) on
    fixed weights: TRL's reference model, a PEFT policy's base weights, or else a frozen copy
    of the initial weights it builds itself. ``False``: the teacher is the current policy."""
    teacher_context: ClassVar[Callable[[TeacherSettings], TeacherContext] | None] = None
    """How the teacher's context is built, for a plug-in with ``needs_teacher_logprobs`` or
    ``needs_full_logits`` (e.g. ``self_distillation.PrivilegedTextTeacher``); ``None`` for one
    without a teacher pass (:meth:`make_teacher_context` says what to set when it is missing)."""
    extra_fields: ClassVar[tuple[str, ...]] = ()
    """Further inputs the plug-in needs, by name: optional ``CreditBatch`` fields, or the
    ``aux_extras`` its ``teacher_logit_prompts`` names (``check_batch`` checks each is there)."""
    row_inputs: ClassVar[tuple[RowInput, ...]] = ()
    """Inputs of this method alone: providers the trainer runs on its rows, whose values the plug-in
    reads from ``CreditBatch.extras`` by name (:mod:`~agentgym_suite.trainers.credit.inputs`)."""
    has_aux_loss: ClassVar[bool] = False
    """``aux_loss`` returns a term to add to the policy loss."""
    roles: ClassVar[tuple[str, ...]] = ("agent",)
    """Row roles this plug-in trains; the first (``primary_role``) is the role of the rows of a
    plain single-role episode. ``check_batch`` rejects rows of any other role."""
    run_needs: ClassVar[str] = ""
    """What a run of this plug-in needs beyond rollouts of the chosen env, in one sentence a user
    reads before training (``agentgym compare`` prints it); empty for nothing more."""
    own_invalid_penalty: ClassVar[bool] = False
    """The plug-in's paper fixes its invalid-action penalty (its config's default): a trainer
    does not pass its own ``invalid_action_penalty`` to it."""
    trainer_defaults: ClassVar[Mapping[str, Any]] = {}
    """Parameters a trainer passes unless the user sets them, where a trainer's needs differ
    from the paper's defaults in ``config_cls`` (VAD stores only the teacher's top-64 logits)."""
    conformance: ClassVar[MethodConformance | None] = None
    """What ``tests/conformance/`` checks of this plug-in against its authors' released code (``None``:
    nothing yet); ``agentgym conformance`` runs and reports it."""

    def __init__(self, config: CreditConfig | None = None, **params: Any) -> None:
        """Build from a config object or from keyword parameters of ``config_cls``."""
        if config is not None and params:
            raise ValueError(f"{self.name}: pass either config= or keyword parameters, not both.")
        if config is None:
            known = [f.name for f in fields(self.config_cls)]
            unknown = sorted(set(params) - set(known))
            if unknown:
                raise ValueError(
                    f"{self.name}: unknown parameter(s) {unknown}; known parameters: {known}."
                )
            config = self.config_cls(**params)
        elif not isinstance(config, self.config_cls):
            raise ValueError(
                f"{self.name}: config must be a {self.config_cls.__name__}, got {type(config).__name__}."
            )
        self.config = config

    @property
    def primary_role(self) -> str:
        """Role of the rows of a plain single-role episode (the first of ``roles``)."""
        return self.roles[0]

    def env_defaults(self, env_id: str) -> dict[str, Any]:
        """Env keyword arguments a trainer passes when it makes ``env_id`` and ``env_kwargs`` does not
        set them: the env setting the method's paper trains with. Default: none."""
        return {}

    def wrap_env_factory(self, make_env: Callable[[], gym.Env], env_id: str) -> Callable[[], gym.Env]:
        """The env factory a trainer plays episodes with, given the factory of the env it trains
        on (``env_id``). The default returns ``make_env`` unchanged; a method whose episodes have
        their own shape (SkillRise's multi-task trials) wraps each env here."""
        return make_env

    @classmethod
    def make_teacher_context(cls, settings: TeacherSettings) -> TeacherContext:
        """The run's teacher context from this plug-in's declared :attr:`teacher_context`.

        Raises:
            ValueError: when the plug-in runs a teacher pass but declares no teacher context.
        """
        if cls.teacher_context is None:
            raise ValueError(
                f"credit plug-in '{cls.name}' declares a teacher pass (needs_teacher_logprobs or needs_full_logits) "
                "but no teacher_context; set teacher_context = PrivilegedTextTeacher "
                "(agentgym_suite.trainers.credit.self_distillation) or a TeacherContext of your own.")
        return cls.teacher_context(settings)

    def teacher_logit_prompts(self, rows: Sequence[Any], texts: Sequence[str], encode: Encode,
                              max_prompt_tokens: int) -> TeacherLogitPrompts:
        """The teacher prompts of a plug-in with ``needs_full_logits``, given the trainer's rows
        (``trainers.rows.Row``), each row's privileged text (``teacher_context``), the tokenizer's
        ``encode`` and the prompt budget (the student prompt's oldest tokens go first; see
        ``trainers.credit.self_distillation.teacher_prompt_ids``). A plug-in with ``needs_full_logits`` overrides it."""
        raise NotImplementedError(
            f"credit plug-in '{self.name}' declares needs_full_logits but not which teacher prompts to run; "
            "override CreditAssigner.teacher_logit_prompts.")

    @property
    def required_fields(self) -> tuple[str, ...]:
        """Optional ``CreditBatch`` fields and inputs this plug-in reads: those of its ``needs_*`` flags,
        its ``extra_fields``, then the names of its ``row_inputs`` (extras)."""
        needed: list[str] = []
        if self.needs_old_logprobs:
            needed.append("old_logprobs")
        if self.needs_teacher_logprobs:
            needed.append("teacher_logprobs")
        return tuple(needed) + tuple(self.extra_fields) + tuple(p.name for p in self.row_inputs)

    def check_batch(self, batch: CreditBatch) -> None:
        """Raise ``ValueError`` naming every required field the batch lacks, or the row roles
        this plug-in does not train."""
        missing = [n for n in self.required_fields
                   if getattr(batch, n, None) is None and n not in batch.extras and n not in batch.aux_extras]
        if missing:
            raise ValueError(
                f"credit plug-in '{self.name}' needs batch field(s) {missing}; "
                "compute them in the trainer (see the plug-in's needs_* flags) before calling it."
            )
        bad = sorted({r for r in batch.roles if r not in self.roles})
        if bad:
            allowed = " or ".join(repr(r) for r in self.roles)
            raise ValueError(
                f"credit plug-in '{self.name}' trains rows of role {allowed}; got {bad}. "
                "Use a plug-in whose roles cover the env's rows."
            )

    def rows_with_other_terms(self, batch: CreditBatch) -> Tensor:
        """``(R,)`` bool: rows whose loss under this plug-in has a term besides the advantage-weighted
        policy term, so that they must be trained even where their advantage is zero. Default: every
        row when the plug-in has an auxiliary loss (a token mean over the micro-batch, which every row
        enters), none otherwise. A plug-in whose auxiliary loss is switched off by its config, or that
        puts it on some rows only, overrides this."""
        return torch.full((batch.num_rows,), bool(self.has_aux_loss), dtype=torch.bool)

    def one_turn_equivalent(self) -> tuple[str, float]:
        """``(base plug-in, scale)`` such that on one-row-per-trajectory batches with an
        uninformative teacher (teacher log-probs == old log-probs) this plug-in's advantages
        equal ``scale`` times the base plug-in's."""
        return ("grpo", 1.0)

    @abstractmethod
    def advantages(self, batch: CreditBatch) -> CreditOutput:
        """Per-token advantages ``(R, T)`` for the batch (zero on masked tokens)."""

    def aux_loss(
        self, batch: CreditBatch, logprobs: Tensor, logits: Tensor | None = None
    ) -> AuxLossOutput | None:
        """Auxiliary loss given the current log-probs ``(R, T)`` (with gradient) and, for
        plug-ins with ``needs_full_logits``, the current logits ``(R, T, V)``."""
        return None

    def metric(self, key: str) -> str:
        """Namespaced metric name ``credit/<name>/<key>``."""
        return f"credit/{self.name}/{key}"


def masked_mean(values: Tensor, mask: Tensor) -> Tensor:
    """Mean of ``values`` over the tokens where ``mask`` is 1 (0 when nothing is masked in)."""
    mask = mask.to(values.dtype)
    return (values * mask).sum() / mask.sum().clamp(min=1.0)


def where_mask(values: Tensor, mask: Tensor) -> Tensor:
    """``values`` on masked-in tokens, exactly 0 elsewhere (also removes NaN/inf padding)."""
    return torch.where(mask.bool(), values, torch.zeros_like(values))


def check_logprobs(name: str, logprobs: Tensor, batch: CreditBatch) -> None:
    """Raise when ``logprobs`` does not have the batch's ``(R, T)`` shape."""
    if logprobs.shape != batch.completion_mask.shape:
        raise ValueError(
            f"{name} must have shape {tuple(batch.completion_mask.shape)} (rows, tokens) like the "
            f"batch's completion_mask; got {tuple(logprobs.shape)}."
        )


def require(condition: bool, message: str) -> None:
    """Config validation helper: raise ``ValueError(message)`` unless ``condition``."""
    if not condition:
        raise ValueError(message)


def finite(value: float) -> bool:
    """True for a finite float."""
    return isinstance(value, (int, float)) and math.isfinite(value)


def _check_len(name: str, value: Sequence[Any], rows: int) -> None:
    if len(value) != rows:
        raise ValueError(
            f"{name} has {len(value)} entries but completion_mask has {rows} rows; give one per row."
        )
