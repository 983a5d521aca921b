"""World models for the rehearsal env: a generation backend that answers tool calls.

:class:`WorldModel` wraps any :class:`~agentgym_suite.llm.base.Backend` (or a spec string,
loaded on first use) and simulates a batch of tool calls with **one** backend call: one
generation per call, each parsed with the strict output contract. Every generation is
returned as a :class:`Simulation` whose ``record`` is the
:class:`~agentgym_suite.methods.envace.generation.SimulatorGeneration` whose generic record
(role ``simulator``) goes into ``info["role_generations"]``.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, replace
from typing import Any, Iterator, Sequence

from agentgym_suite.core.policy_loan import POLICY  # the placeholder a trainer replaces with its policy backend
from agentgym_suite.methods.envace.generation import SimulatorGeneration
from agentgym_suite.methods.envace.contract import SIMULATOR_FAILED, contract_error, is_error_result, parse_execution_result
from agentgym_suite.methods.envace.prompts import STYLES, SimulatorRequest, build_simulator_messages
from agentgym_suite.llm.base import SamplingParams

REAL = "real"
"""The ``world_model`` value that executes the base env's real tools (fidelity reference)."""

EMBEDDED = ("default", "tiny")
"""Specs of the embedded small models (compact prompt by default)."""
STOP = ("</execution_result>",)
SAMPLING_PROFILES: dict[str, SamplingParams] = {
    # Evaluation and test-time rehearsal: the released simulator's sampling (MCPChecklistTool:
    # temperature 0.6, top_p 0.8), decoded under the output contract so a small model's
    # answers are always well-formed, and short.
    "evaluation": SamplingParams(temperature=0.6, top_p=0.8, max_new_tokens=128, stop=STOP, structured="execution_result"),
    # Training rollouts (the Simulator is the policy): temperature 1, free text, so the
    # recorded log-probs are the policy's own and the format is learned, not imposed.
    "training": SamplingParams(temperature=1.0, max_new_tokens=512, stop=STOP),
}
"""Simulator sampling by use; ``sampling`` picks one by name, or a dict overrides one (``profile`` key)."""
DEFAULT_SAMPLING = SAMPLING_PROFILES["evaluation"]
SAMPLING_KEYS = {"temperature", "top_p", "max_new_tokens", "stop", "seed", "n", "top_k", "min_p",
                 "repetition_penalty", "structured"}


def default_profile(backend: Any) -> str:
    """``training`` for the policy placeholder (the trainer's own model), else ``evaluation``."""
    return "training" if isinstance(backend, str) and backend == POLICY else "evaluation"


def sampling_params(value: SamplingParams | dict[str, Any] | str | None, profile: str = "evaluation") -> SamplingParams:
    """Accept SamplingParams, a profile name, a dict of fields over a profile (its ``profile``
    key, else ``profile``), or None (``profile``); ``n`` is forced to 1."""
    if value is None:
        value = profile
    if isinstance(value, str):
        if value not in SAMPLING_PROFILES:
            raise ValueError(f"sampling={value!r}; choose a profile {sorted(SAMPLING_PROFILES)} or give a dict of fields.")
        params = SAMPLING_PROFILES[value]
    elif isinstance(value, SamplingParams):
        params = value
    elif isinstance(value, dict):
        fields = dict(value)
        base = fields.pop("profile", profile)
        if base not in SAMPLING_PROFILES:
            raise ValueError(f"sampling profile {base!r}; choose one of {sorted(SAMPLING_PROFILES)}.")
        unknown = set(fields) - SAMPLING_KEYS
        if unknown:
            raise ValueError(f"unknown simulator sampling keys {sorted(unknown)}; use profile and {sorted(SAMPLING_KEYS)}.")
        if "stop" in fields and isinstance(fields["stop"], list):
            fields["stop"] = tuple(fields["stop"])
        params = replace(SAMPLING_PROFILES[base], **fields)
    else:
        raise TypeError(f"sampling must be SamplingParams, a profile name, a dict or None; got {type(value).__name__}.")
    return params if params.n == 1 else replace(params, n=1)


@contextlib.contextmanager
def _threads(count: int) -> Iterator[None]:
    """Run with ``count`` torch CPU threads (0: leave torch's setting), then restore it."""
    if not count:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@dataclass
class Simulation:
    """The simulated answer to one call and the record of its generation."""

    result: Any
    contract_valid: bool
    record: SimulatorGeneration

    @property
    def failed(self) -> bool:
        """True when the result is an error (a contract violation or an error the simulator reported)."""
        return is_error_result(self.result)


class WorldModel:
    """A backend playing the environment.

    Args:
        backend: a backend object (anything with ``generate(prompts, params)``) or a spec for
            :func:`~agentgym_suite.llm.load_backend` (``tiny``, ``default``, ``hf:...``), loaded
            the first time a call is simulated.
        sampling: simulator sampling: a profile name (``evaluation``, ``training``), a dict of
            ``SamplingParams`` fields over a profile (``{"profile": "training", "max_new_tokens": 256}``)
            or SamplingParams; default ``training`` for ``"policy"``, else ``evaluation``.
        max_prompt_chars: longest simulator user prompt (older conversation is dropped first).
        prompt_style: ``full`` (the released prompt's sections), ``compact`` (see
            :mod:`agentgym_suite.methods.envace.prompts`) or ``auto``: compact for the embedded
            small models (``default``, ``tiny``), full otherwise.
        cpu_threads: torch CPU threads while simulating (restored after each batch); ``auto``:
            1 for the embedded models, which on a shared 2-core machine ran a call about ten
            times slower with torch's two threads competing (``benchmarks/rehearsal_speed.py``),
            else torch's own setting (0).
    """

    def __init__(self, backend: Any, *, sampling: SamplingParams | dict[str, Any] | str | None = None,
                 max_prompt_chars: int = 24_000, prompt_style: str = "auto", cpu_threads: int | str = "auto") -> None:
        if isinstance(backend, str):
            if backend == REAL:
                raise ValueError("world_model='real' executes the base env's tools and needs no WorldModel.")
            self.spec: str | None = backend
            self._backend: Any = None
        elif callable(getattr(backend, "generate", None)):
            self.spec = None
            self._backend = backend
        else:
            raise TypeError(
                f"world_model must be 'real', a backend spec string (tiny, default, hf:PATH, vllm:PATH, openai:MODEL@URL) "
                f"or a backend object with generate(prompts, params); got {type(backend).__name__}."
            )
        self.sampling = sampling_params(sampling, default_profile(backend))
        self.max_prompt_chars = int(max_prompt_chars)
        if prompt_style == "auto":
            prompt_style = "compact" if isinstance(backend, str) and backend in EMBEDDED else "full"
        if prompt_style not in STYLES:
            raise ValueError(f"prompt_style={prompt_style!r}; choose auto or one of {STYLES}.")
        self.prompt_style = prompt_style
        if cpu_threads == "auto":
            cpu_threads = 1 if isinstance(backend, str) and backend in EMBEDDED else 0
        if not isinstance(cpu_threads, int) or isinstance(cpu_threads, bool) or cpu_threads < 0:
            raise ValueError(f"cpu_threads={cpu_threads!r}; give auto, 0 (torch's setting) or a thread count.")
        self.cpu_threads = cpu_threads

    @property
    def name(self) -> str:
        """A label for logs and info."""
        if self.spec is not None:
            return self.spec
        return str(getattr(self._backend, "name", type(self._backend).__name__))

    @property
    def loaded(self) -> bool:
        """True once the backend exists (specs load lazily)."""
        return self._backend is not None

    @property
    def backend(self) -> Any:
        """The backend, loading it from the spec on first access."""
        if self._backend is None:
            from agentgym_suite.llm.role_client import role_backend

            assert self.spec is not None
            if self.spec == POLICY:
                raise RuntimeError(
                    "world_model='policy' is a placeholder: the trainer must call "
                    "env.unwrapped.set_world_model(<its generation backend>) before the first tool call."
                )
            self._backend = role_backend("world_model", self.spec, shared=False)
        return self._backend

    def simulate(self, requests: Sequence[SimulatorRequest], *, seed: int | None = None,
                 meta: Sequence[dict[str, Any]] | None = None) -> list[Simulation]:
        """Simulate every request with one batched backend call; never raises on backend failure.

        ``meta`` gives, per request, where the call came from (``call_id``, ``turn``, ``index``:
        fields of :class:`~agentgym_suite.methods.envace.generation.SimulatorGeneration`).
        """
        if not requests:
            return []
        meta = list(meta) if meta is not None else [{} for _ in requests]
        prompts = [build_simulator_messages(r, max_chars=self.max_prompt_chars, style=self.prompt_style) for r in requests]
        params = self.sampling if seed is None or self.sampling.seed is not None else replace(self.sampling, seed=seed)
        try:
            with _threads(self.cpu_threads):
                rows = self.backend.generate(prompts, params)
            if len(rows) != len(prompts):
                raise ValueError(f"the backend returned {len(rows)} rows for {len(prompts)} prompts")
            samples = [row[0] for row in rows]
        except Exception as exc:  # a failing world model is data for the episode, not a crash
            message = f"the world model could not generate: {type(exc).__name__}: {exc}"
            return [self._failed(r, p, m, message) for r, p, m in zip(requests, prompts, meta)]
        return [self._simulation(r, p, s, m) for r, p, s, m in zip(requests, prompts, samples, meta)]

    # ------------------------------------------------------------------ internals
    def _prompt_text(self, prompt: list[dict[str, str]]) -> str:
        render = getattr(self._backend, "render_prompt", None)
        if callable(render):
            try:
                return str(render(prompt))
            except Exception:  # a backend whose template cannot render: keep the plain messages
                pass
        return "\n\n".join(f"[{m['role']}]\n{m['content']}" for m in prompt)

    def _record(self, request: SimulatorRequest, prompt: list[dict[str, str]], meta: dict[str, Any],
                **generated: Any) -> SimulatorGeneration:
        return SimulatorGeneration(tool_name=request.name, arguments=dict(request.arguments), **meta,
                                   prompt_messages=prompt, prompt_text=self._prompt_text(prompt), **generated)

    def _simulation(self, request: SimulatorRequest, prompt: list[dict[str, str]], sample: Any, meta: dict[str, Any]) -> Simulation:
        if getattr(sample, "error", None):
            return self._failed(request, prompt, meta, f"the world model could not generate: {sample.error}")
        parsed = parse_execution_result(sample.text)
        record = self._record(
            request, prompt, meta,
            prompt_ids=list(sample.prompt_ids),
            completion_ids=list(sample.completion_ids),
            logprobs=[float(x) for x in sample.logprobs],
            completion_text=sample.text,
            finish_reason=sample.finish_reason,
            has_token_ids=bool(getattr(sample, "has_token_ids", True)),
            contract_valid=parsed.valid,
            result=parsed.result,
        )
        return Simulation(parsed.result, parsed.valid, record)

    def _failed(self, request: SimulatorRequest, prompt: list[dict[str, str]], meta: dict[str, Any], message: str) -> Simulation:
        result = contract_error(SIMULATOR_FAILED, message)
        record = self._record(request, prompt, meta, finish_reason="error", has_token_ids=False,
                              contract_valid=False, result=result)
        return Simulation(result, False, record)
