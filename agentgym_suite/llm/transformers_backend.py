"""Generation with Hugging Face ``transformers`` on CPU or GPU.

Batches are left-padded; each prompt is repeated ``n`` times; greedy when
``temperature == 0``. With per-prompt seeds (``SamplingParams.seeds``) every row samples from
a generator of its own, so a prompt's samples do not depend on the other prompts of the batch;
with one ``seed`` the batch shares one RNG stream (its samples depend on the batch). What batch
composition can still change is arithmetic: a padded batch is computed with other matrix shapes
than a single prompt, so logits can differ in the last bits (more so in bfloat16 on GPU), which
flips a sampled or greedy token only when two candidates are that close. Log-probabilities are recorded during generation (no second pass).
:meth:`TransformersBackend.score` computes log-probs of given completions under given
prompts in batch (teacher log-probs for the trainer).
"""

from __future__ import annotations

import contextlib
import logging

from pathlib import Path
from typing import Any, Sequence

import torch

from agentgym_suite.llm.base import BackendError, Prompt, Sample, SamplingParams, TokenizerMixin, Tools, check_prompt
from agentgym_suite.llm.chat_templates import render_chat
from agentgym_suite.llm.prefill import cache_kwarg, ragged_prefill_cache
from agentgym_suite.llm.sampling import RecordingProcessor, SeededRows, StopStrings, row_seeds


_SAMPLING_KEYS = {"do_sample", "temperature", "top_p", "top_k", "min_p", "repetition_penalty", "max_new_tokens",
                  "eos_token_id", "pad_token_id"}
"""GenerationConfig keys the backend sets itself from SamplingParams."""

AUTOCAST_DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16}
"""Dtype names generation may autocast to (:class:`TransformersBackend`'s ``autocast``)."""

PREFILL_MODES = ("auto", "ragged", "padded")
"""How a batch's prompts are prefilled (see :class:`TransformersBackend`)."""

logger = logging.getLogger(__name__)


def default_device() -> str:
    """``cuda`` when a GPU is visible, else ``cpu``."""
    return "cuda" if torch.cuda.is_available() else "cpu"


class TransformersBackend(TokenizerMixin):
    """A :class:`~agentgym_suite.llm.base.TokenBackend` over a ``transformers`` causal LM.

    Args:
        model: a loaded ``PreTrainedModel`` (use :meth:`from_pretrained` to load from a path).
        tokenizer: its tokenizer; needs a chat template for chat prompts.
        max_batch_size: rows (prompts × n) per ``generate`` call; larger batches are split.
        name: label for logs.
        prefill: ``ragged`` computes each distinct prompt's cache once without padding
            (:mod:`~agentgym_suite.llm.prefill`), ``padded`` leaves the prefill to ``generate``;
            ``auto`` (default) is ragged on CPU, where prefill is compute-bound, else padded.
        generation_kwargs: further ``GenerationConfig`` settings for every call (e.g.
            ``no_repeat_ngram_size``, ``suppress_tokens``); sampling settings belong in
            :class:`~agentgym_suite.llm.base.SamplingParams`. Processors they add act before the
            log-probs are recorded.
        chat_template_kwargs: further variables of the chat template (e.g. ``{"enable_thinking": False}``).
        logprobs_at_temperature: each sample's ``logprobs`` are those of ``logits / temperature``
            (what TRL's loss computes) instead of the raw logits' (see
            :class:`~agentgym_suite.llm.sampling.RecordingProcessor`).
        autocast: a dtype name (``bfloat16``) that generation autocasts to (``torch.autocast``; the
            weights stay as loaded), or None for none. On a CPU with native bf16 the prefill of a
            135M model runs about 1.75x faster in bf16 (docs/demo.md); greedy choices can differ
            where two tokens are that close.
    """

    supports_token_prompts = True

    def __init__(self, model: Any, tokenizer: Any, *, max_batch_size: int = 64, name: str | None = None,
                 prefill: str = "auto", generation_kwargs: dict[str, Any] | None = None,
                 chat_template_kwargs: dict[str, Any] | None = None, logprobs_at_temperature: bool = False,
                 autocast: str | None = None) -> None:
        if max_batch_size < 1:
            raise ValueError(f"max_batch_size must be >= 1, got {max_batch_size}.")
        if prefill not in PREFILL_MODES:
            raise ValueError(f"prefill={prefill!r}; choose one of {PREFILL_MODES}.")
        self.prefill = prefill
        if autocast is not None and autocast not in AUTOCAST_DTYPES:
            raise ValueError(f"autocast={autocast!r}; choose one of {sorted(AUTOCAST_DTYPES)} or None.")
        self.autocast = autocast
        self.logprobs_at_temperature = logprobs_at_temperature
        clash = sorted(set(generation_kwargs or {}) & _SAMPLING_KEYS)
        if clash:
            raise ValueError(f"generation_kwargs {clash} are sampling settings; pass them in SamplingParams.")
        self.generation_kwargs = dict(generation_kwargs or {})
        self.chat_template_kwargs = dict(chat_template_kwargs or {})
        """Extra chat-template variables of every rendered prompt (e.g. ``{"enable_thinking": False}``)."""
        self.model = model
        self.tokenizer = tokenizer
        self.max_batch_size = max_batch_size
        self.name = name or f"hf:{getattr(model.config, '_name_or_path', '') or type(model).__name__}"
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token
        self.pad_token_id = int(tokenizer.pad_token_id)
        eos = getattr(model.generation_config, "eos_token_id", None)
        if eos is None:
            eos = tokenizer.eos_token_id
        self.eos_token_ids: set[int] = set(eos if isinstance(eos, list) else [eos]) - {None}
        if tokenizer.eos_token_id is not None:
            self.eos_token_ids.add(int(tokenizer.eos_token_id))

    @classmethod
    def from_pretrained(
        cls,
        path: str | Path,
        *,
        device: str | None = None,
        dtype: torch.dtype | str | None = None,
        max_batch_size: int = 64,
        autocast: str | None = None,
        **model_kwargs: Any,
    ) -> TransformersBackend:
        """Load a model directory or hub id (``HF_HUB_OFFLINE=1`` is respected).

        ``dtype`` defaults to float32 on CPU and bfloat16 on GPU; ``autocast`` as in the class.
        """
        from transformers import AutoModelForCausalLM, AutoTokenizer

        device = device or default_device()
        if dtype is None:
            dtype = torch.float32 if device == "cpu" else torch.bfloat16
        tokenizer = AutoTokenizer.from_pretrained(str(path))
        model = AutoModelForCausalLM.from_pretrained(str(path), dtype=dtype, **model_kwargs).to(device)
        model.eval()
        return cls(model, tokenizer, max_batch_size=max_batch_size, name=f"hf:{path}", autocast=autocast)

    @property
    def device(self) -> torch.device:
        """Device the model lives on."""
        return next(self.model.parameters()).device

    # ------------------------------------------------------------------ text <-> tokens
    def render_prompt(self, prompt: Prompt, tools: Tools | None = None, *, add_generation_prompt: bool = True) -> str:
        """The exact text fed to the model: strings as-is, messages through the chat template."""
        check_prompt(prompt)
        if isinstance(prompt, str):
            return prompt
        if not getattr(self.tokenizer, "chat_template", None):
            raise BackendError(f"{self.name}: the tokenizer has no chat template; pass plain-text prompts instead.")
        return render_chat(self.tokenizer, prompt, tools, add_generation_prompt=add_generation_prompt,
                           template_kwargs=self.chat_template_kwargs)

    # ------------------------------------------------------------------ generation
    def generate_from_ids(self, prompt_ids: Sequence[Sequence[int]], params: SamplingParams) -> list[list[Sample]]:
        """Generate from token ids; returns ``params.n`` samples per prompt, in order."""
        params.check_seeds(len(prompt_ids))
        rows = [list(p) for p in prompt_ids for _ in range(params.n)]
        if any(not r for r in rows):
            raise BackendError(f"{self.name}: an empty prompt cannot be generated from; give at least one token.")
        seeds = None if params.seeds is None or params.greedy else row_seeds(list(params.seeds), params.n)
        samples: list[Sample] = []
        for start in range(0, len(rows), self.max_batch_size):
            chunk = slice(start, start + self.max_batch_size)
            samples.extend(self._generate_rows(rows[chunk], params, None if seeds is None else seeds[chunk]))
        return [samples[i * params.n : (i + 1) * params.n] for i in range(len(prompt_ids))]

    def _generate_rows(self, rows: list[list[int]], params: SamplingParams,
                       seeds: list[int | None] | None = None) -> list[Sample]:
        """Generate one batch of rows; with ``seeds`` (one per row), each row samples from its own
        generator (:class:`~agentgym_suite.llm.sampling.SeededRows`), else all rows share the RNG
        seeded with ``params.seed``."""
        from transformers import GenerationConfig, LogitsProcessorList, StoppingCriteriaList

        width = max(len(r) for r in rows)
        input_ids = torch.full((len(rows), width), self.pad_token_id, dtype=torch.long)
        attention = torch.zeros((len(rows), width), dtype=torch.long)
        for i, row in enumerate(rows):
            input_ids[i, width - len(row) :] = torch.tensor(row, dtype=torch.long)
            attention[i, width - len(row) :] = 1
        recorder = RecordingProcessor(params.temperature, params.top_p, params.greedy, top_k=params.top_k,
                                      min_p=params.min_p, repetition_penalty=params.repetition_penalty,
                                      logprobs_at_temperature=self.logprobs_at_temperature)
        config = GenerationConfig(
            do_sample=not params.greedy,
            temperature=1.0,
            top_p=1.0,
            **({} if params.greedy else {"top_k": 0}),
            max_new_tokens=params.max_new_tokens,
            eos_token_id=sorted(self.eos_token_ids),
            pad_token_id=self.pad_token_id,
            **self.generation_kwargs,
        )
        device = self.device
        devices = [device.index or 0] if device.type == "cuda" else []
        # A seeded call must not disturb the global RNG; an unseeded one must advance it, or
        # every unseeded call would replay the same draws.
        seeded = all(s is not None for s in seeds) if seeds is not None else params.seed is not None
        isolate = torch.random.fork_rng(devices=devices) if seeded else contextlib.nullcontext()
        processors: list[Any] = [recorder]
        if params.structured:  # before the recorder, so the recorded log-probs are of the masked distribution
            from agentgym_suite.llm.structured import ExecutionResultConstraint

            eos = self.tokenizer.eos_token_id if self.tokenizer.eos_token_id in self.eos_token_ids else min(self.eos_token_ids)
            processors.insert(0, ExecutionResultConstraint(self.tokenizer, int(eos), width, params.max_new_tokens,
                                                           special_ids=sorted(self.eos_token_ids)))
        if seeds is not None:
            processors.append(SeededRows(seeds))
        autocast = torch.autocast(device.type, dtype=AUTOCAST_DTYPES[self.autocast]) if self.autocast \
            else contextlib.nullcontext()
        with autocast:
            cache = self._ragged_cache(rows, width) if len(rows) > 1 and self._ragged(device) else None
        extra = {} if cache is None else {cache_kwarg(self.model): cache}
        with torch.no_grad(), isolate, autocast:
            if params.seed is not None and seeds is None:
                torch.manual_seed(params.seed)
            out = self.model.generate(
                input_ids=input_ids.to(device),
                attention_mask=attention.to(device),
                generation_config=config,
                logits_processor=LogitsProcessorList(processors),
                stopping_criteria=StoppingCriteriaList([StopStrings(self.tokenizer, params.stop, width)] if params.stop else []),
                **extra,
            )
        sequences = out if isinstance(out, torch.Tensor) else out.sequences
        new_tokens = sequences[:, width:].cpu()
        recorder.collect(sequences[:, -1])
        logprobs = recorder.logprobs()
        return [self._sample(rows[i], new_tokens[i].tolist(), logprobs[i].tolist(), params) for i in range(len(rows))]

    def _ragged(self, device: torch.device) -> bool:
        return self.prefill == "ragged" or (self.prefill == "auto" and device.type == "cpu")

    def _ragged_cache(self, rows: list[list[int]], width: int) -> Any | None:
        """The ragged prefill's cache, or None (then ``generate`` prefills the padded batch); on
        ``auto``, a model whose cache cannot be assembled this way is not asked again."""
        try:
            cache = ragged_prefill_cache(self.model, rows, width)
        except Exception as exc:  # an unusual cache layout: fall back to the padded prefill
            logger.info("%s: ragged prefill unavailable (%s); using padded prefill.", self.name, exc)
            cache = None
        if cache is None and self.prefill == "auto" and any(len(r) > 1 for r in rows):
            self.prefill = "padded"
        return cache

    def _sample(self, prompt: list[int], generated: list[int], logprobs: list[float], params: SamplingParams) -> Sample:
        end, reason = len(generated), "length"
        for i, token in enumerate(generated):
            if token in self.eos_token_ids:
                end, reason = i + 1, "stop"
                break
        if params.stop and reason == "length":
            cut = self._stop_string_end(generated, params.stop)
            if cut is not None:
                end, reason = cut, "stop"
        ids = generated[:end]
        return Sample(
            text=self.decode(ids),
            prompt_ids=list(prompt),
            completion_ids=ids,
            logprobs=[float(x) for x in logprobs[:end]],
            finish_reason=reason,
        )

    def _stop_string_end(self, generated: list[int], stops: tuple[str, ...]) -> int | None:
        text = self.decode(generated, skip_special_tokens=False)
        if not any(s in text for s in stops):
            return None
        for k in range(1, len(generated) + 1):
            if any(s in self.decode(generated[:k], skip_special_tokens=False) for s in stops):
                return k
        return None

    # ------------------------------------------------------------------ scoring
    def score(
        self,
        prompt_ids: Sequence[Sequence[int]],
        completion_ids: Sequence[Sequence[int]],
        *,
        batch_size: int = 8,
    ) -> list[list[float]]:
        """Log-prob of each completion token given its prompt (one list per pair, no gradient).

        Used for teacher log-probs: the trainer passes the privileged prompt with the
        completion the student generated.
        """
        if len(prompt_ids) != len(completion_ids):
            raise ValueError(f"score() got {len(prompt_ids)} prompts but {len(completion_ids)} completions.")
        results: list[list[float]] = []
        for start in range(0, len(prompt_ids), batch_size):
            chunk = list(zip(prompt_ids[start : start + batch_size], completion_ids[start : start + batch_size]))
            results.extend(self._score_chunk([list(p) for p, _ in chunk], [list(c) for _, c in chunk]))
        return results

    def _score_chunk(self, prompts: list[list[int]], completions: list[list[int]]) -> list[list[float]]:
        if any(not p for p in prompts):
            raise ValueError("score() needs at least one prompt token per row.")
        width = max(len(p) + len(c) for p, c in zip(prompts, completions))
        input_ids = torch.full((len(prompts), width), self.pad_token_id, dtype=torch.long)
        attention = torch.zeros((len(prompts), width), dtype=torch.long)
        for i, (p, c) in enumerate(zip(prompts, completions)):
            seq = p + c
            input_ids[i, : len(seq)] = torch.tensor(seq, dtype=torch.long)
            attention[i, : len(seq)] = 1
        device = self.device
        with torch.no_grad():
            logits = self.model(input_ids=input_ids.to(device), attention_mask=attention.to(device)).logits
        out: list[list[float]] = []
        for i, (p, c) in enumerate(zip(prompts, completions)):
            if not c:
                out.append([])
                continue
            rows = logits[i, len(p) - 1 : len(p) + len(c) - 1].float()
            target = torch.tensor(c, device=rows.device).view(-1, 1)
            out.append(torch.log_softmax(rows, dim=-1).gather(-1, target).squeeze(-1).cpu().tolist())
        return out
