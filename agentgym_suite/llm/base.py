"""The one generation protocol every backend implements, and the records it returns.

A backend takes a batch of prompts — plain strings, or chat-message lists (optionally with
OpenAI-format tool schemas) — plus :class:`SamplingParams`, and returns ``n``
:class:`Sample` records per prompt: the text, the exact prompt and completion token ids,
the per-token log-probabilities and why generation stopped.

Conventions shared by every backend that sees tokens (transformers, vLLM):

* ``completion_ids`` are the tokens as sampled, including the end-of-turn token when the
  model emitted one; ``text == tokenizer.decode(completion_ids, skip_special_tokens=True)``.
* a stop string ends generation after the token that completed it; the stop string stays
  in ``text`` (so text and token ids always agree).
* ``logprobs[i]`` is the log-probability of ``completion_ids[i]`` under the model's own
  distribution (temperature 1, no top-p), the quantity a policy-gradient trainer needs.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Any, Protocol, Sequence, runtime_checkable

from agentgym_suite.core.errors import AgentGymError

Message = dict[str, Any]
Prompt = str | list[Message]
"""A raw text prompt, or a list of chat messages (``{"role": ..., "content": ...}``)."""
Tools = list[dict[str, Any]]


class BackendError(AgentGymError, RuntimeError):
    """A generation backend failed (server error, timeout, malformed answer, bad prompt)."""


STRUCTURES = ("", "execution_result")
"""Values of ``SamplingParams.structured``."""


@dataclass(frozen=True)
class SamplingParams:
    """How to sample. ``temperature=0`` means greedy decoding.

    Attributes:
        n: samples per prompt.
        temperature: softmax temperature; 0 selects greedy decoding.
        top_p: nucleus sampling mass (1.0 = off).
        max_new_tokens: most tokens generated per sample.
        stop: strings that end generation (kept in the returned text).
        seed: seed for sampling; the same seed and prompts give the same samples.
        seeds: one seed per prompt of a ``generate`` call (None entries: unseeded), overriding
            ``seed``. Each prompt is then sampled from its own seed alone, so its samples do not
            depend on which other prompts share the batch (see :meth:`seed_for`).
        top_k: keep only the ``top_k`` most likely tokens (0 = off).
        min_p: drop tokens less likely than ``min_p`` times the most likely one (0 = off).
        repetition_penalty: penalty on tokens already in the prompt or completion (1 = off), as
            in Hugging Face and vLLM.
        structured: a named output structure to decode under ("" = free text;
            ``"execution_result"``: the simulator's output contract, see
            :mod:`agentgym_suite.llm.structured`). The ``transformers`` backends (``hf:``,
            ``default``, ``tiny``) enforce it; other backends generate freely and the parser
            judges the text.
        json_schema: a JSON schema (as JSON text) the reply must satisfy ("" = none). The
            OpenAI-compatible backend sends it as ``response_format`` (guided decoding on
            vLLM/SGLang servers); other backends sample freely and the caller validates the reply.
        json_schema_name: the schema's name in ``response_format``.
    """

    n: int = 1
    temperature: float = 1.0
    top_p: float = 1.0
    max_new_tokens: int = 256
    stop: tuple[str, ...] = ()
    seed: int | None = None
    seeds: tuple[int | None, ...] | None = None
    top_k: int = 0
    min_p: float = 0.0
    repetition_penalty: float = 1.0
    structured: str = ""
    json_schema: str = ""
    json_schema_name: str = "reply"

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ValueError(f"SamplingParams.n must be >= 1, got {self.n}.")
        if self.temperature < 0:
            raise ValueError(f"SamplingParams.temperature must be >= 0 (0 = greedy), got {self.temperature}.")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"SamplingParams.top_p must be in (0, 1], got {self.top_p}.")
        if self.max_new_tokens < 1:
            raise ValueError(f"SamplingParams.max_new_tokens must be >= 1, got {self.max_new_tokens}.")
        if self.top_k < 0:
            raise ValueError(f"SamplingParams.top_k must be >= 0 (0 = off), got {self.top_k}.")
        if not 0 <= self.min_p < 1:
            raise ValueError(f"SamplingParams.min_p must be in [0, 1) (0 = off), got {self.min_p}.")
        if not self.repetition_penalty > 0:
            raise ValueError(f"SamplingParams.repetition_penalty must be > 0 (1 = off), got {self.repetition_penalty}.")
        if self.structured not in STRUCTURES:
            raise ValueError(f"SamplingParams.structured must be one of {STRUCTURES}, got {self.structured!r}.")
        if self.json_schema:
            import json

            try:
                schema = json.loads(self.json_schema)
            except ValueError as exc:
                raise ValueError(f"SamplingParams.json_schema must be a JSON schema as JSON text: {exc}") from None
            if not isinstance(schema, dict):
                raise ValueError("SamplingParams.json_schema must be a JSON object (a JSON schema).")
        if isinstance(self.stop, str):
            object.__setattr__(self, "stop", (self.stop,))
        else:
            object.__setattr__(self, "stop", tuple(self.stop))
        if self.seeds is not None:
            try:
                seeds = tuple(None if s is None else operator.index(s) for s in self.seeds)
            except TypeError:
                raise ValueError(f"SamplingParams.seeds must hold ints or None, got {self.seeds!r}.") from None
            if any(isinstance(s, bool) for s in self.seeds):
                raise ValueError(f"SamplingParams.seeds must hold ints or None, got {self.seeds!r}.")
            object.__setattr__(self, "seeds", seeds)

    def seed_for(self, index: int) -> int | None:
        """The seed of prompt ``index``: ``seeds[index]`` when per-prompt seeds are set, else ``seed``."""
        return self.seed if self.seeds is None else self.seeds[index]

    def check_seeds(self, prompts: int) -> None:
        """Raise ValueError when per-prompt ``seeds`` are set but not one per prompt."""
        if self.seeds is not None and len(self.seeds) != prompts:
            raise ValueError(f"SamplingParams.seeds has {len(self.seeds)} seeds for {prompts} prompts; give one per prompt.")

    @property
    def greedy(self) -> bool:
        """True when decoding is greedy."""
        return self.temperature == 0


@dataclass
class Sample:
    """One generated completion.

    Attributes:
        text: the completion text.
        prompt_ids: the exact token ids the model was conditioned on.
        completion_ids: the generated token ids (empty when the backend cannot return them).
        logprobs: log-probability of each completion token (empty when unavailable).
        finish_reason: ``stop`` (end-of-turn token or stop string), ``length`` or ``error``.
        has_token_ids: False when the backend could not return token ids (remote APIs).
        error: why generation failed (``finish_reason == "error"``), else None.
        message: for chat requests to a server, the assistant message it returned (``content``
            and ``tool_calls`` with the server's call ids); None otherwise.
        usage: the server's token counts for the request (``prompt_tokens``,
            ``completion_tokens``…; shared by the ``n`` samples of one request), when reported.
        server_finish_reason: the server's own ``finish_reason`` (``tool_calls``,
            ``content_filter``…), when there is one; ``finish_reason`` keeps the three values above.
        request: the request body sent to a server (what a record keeps), when there was one.
    """

    text: str
    prompt_ids: list[int] = field(default_factory=list)
    completion_ids: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    finish_reason: str = "stop"
    has_token_ids: bool = True
    error: str | None = None
    message: dict[str, Any] | None = None
    usage: dict[str, Any] | None = None
    server_finish_reason: str | None = None
    request: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        """True unless generation failed."""
        return self.error is None


@runtime_checkable
class Backend(Protocol):
    """A text generator the rollout engine and the model agent can drive.

    Attributes:
        name: a short label for logs (``hf:…``, ``vllm:…``, ``openai:…``).
        supports_token_prompts: True when :meth:`generate_from_ids` works (needed for the
            rollout engine's incremental ``chat`` mode).
    """

    name: str
    supports_token_prompts: bool

    def generate(
        self,
        prompts: Sequence[Prompt],
        params: SamplingParams,
        tools: Sequence[Tools | None] | None = None,
    ) -> list[list[Sample]]:
        """Generate ``params.n`` samples for each prompt, in one batched call.

        ``tools`` is None or one tool list (or None) per prompt; it only applies to chat prompts.
        """
        ...


@runtime_checkable
class TokenBackend(Backend, Protocol):
    """A backend that also works on token ids (transformers, vLLM)."""

    def generate_from_ids(self, prompt_ids: Sequence[Sequence[int]], params: SamplingParams) -> list[list[Sample]]:
        """Generate from already tokenised prompts (used by the incremental chat rollout)."""
        ...

    def render_prompt(self, prompt: Prompt, tools: Tools | None = None, *, add_generation_prompt: bool = True) -> str:
        """The exact text a prompt is turned into (chat template applied to message lists)."""
        ...

    def encode(self, text: str) -> list[int]:
        """Tokenise ``text`` without adding special tokens."""
        ...

    def decode(self, ids: Sequence[int], *, skip_special_tokens: bool = True) -> str:
        """Turn token ids back into text."""
        ...


def normalise_tools(prompts: Sequence[Prompt], tools: Sequence[Tools | None] | None) -> list[Tools | None]:
    """One tool list (or None) per prompt; raises when the lengths differ."""
    if tools is None:
        return [None] * len(prompts)
    tools = list(tools)
    if len(tools) != len(prompts):
        raise ValueError(f"got {len(tools)} tool lists for {len(prompts)} prompts; pass one per prompt or None.")
    return tools


def check_prompt(prompt: Any) -> None:
    """Raise ValueError when ``prompt`` is neither a string nor a list of role/content messages."""
    if isinstance(prompt, str):
        return
    if isinstance(prompt, list) and all(isinstance(m, dict) and "role" in m for m in prompt) and prompt:
        return
    raise ValueError(
        "a prompt must be a string or a non-empty list of chat messages like "
        f"{{'role': 'user', 'content': '...'}}; got {type(prompt).__name__}: {str(prompt)[:80]!r}"
    )


class TokenizerMixin:
    """``encode``, ``decode`` and ``generate`` for backends that hold a ``tokenizer``.

    The backend supplies ``render_prompt`` and ``generate_from_ids``; ``generate`` renders
    and tokenises each prompt and hands the ids to ``generate_from_ids``, so chat and
    token-id generation go through one path.
    """

    tokenizer: Any

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` with no special tokens added."""
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def decode(self, ids: Sequence[int], *, skip_special_tokens: bool = True) -> str:
        """Text of ``ids``."""
        return self.tokenizer.decode(list(ids), skip_special_tokens=skip_special_tokens)

    def generate(
        self,
        prompts: Sequence[Prompt],
        params: SamplingParams,
        tools: Sequence[Tools | None] | None = None,
    ) -> list[list[Sample]]:
        """Render and tokenise each prompt, then generate ``params.n`` samples per prompt."""
        tool_lists = normalise_tools(prompts, tools)
        params.check_seeds(len(prompts))
        ids = [self.encode(self.render_prompt(p, t)) for p, t in zip(prompts, tool_lists)]  # type: ignore[attr-defined]
        return self.generate_from_ids(ids, params)  # type: ignore[attr-defined]
