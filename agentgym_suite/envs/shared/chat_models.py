"""Chat callables for the model-driven parts of a benchmark: simulated users, judges, memory writers.

Benchmarks with a simulated user or an LLM judge (tau2, VitaBench) take either a Python
callable ``(messages) -> str`` or a backend spec string, so the same setting works from
Python, from ``agentgym eval`` flags and from YAML ``env_kwargs``. A spec is anything
:func:`agentgym_suite.llm.load_backend` accepts (``tiny``, ``default``, ``hf:PATH``,
``vllm:PATH``, ``openai:MODEL@URL``), optionally prefixed with ``llm:``.

Backends are loaded on first use and shared within the process, so a user simulator, a judge
and several env copies naming the same spec hold one model. Every call goes through the
role client (:mod:`agentgym_suite.llm.role_client`): cached and accounted for under the
chat's ``role``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

ChatFn = Callable[[list[dict[str, Any]]], str]
"""A chat model as a function: OpenAI-style messages in, the reply text out."""

LLM_PREFIX = "llm:"



def strip_llm_prefix(spec: str) -> str:
    """``llm:hf:x`` -> ``hf:x``; a spec without the prefix is returned as is (stripped)."""
    spec = spec.strip()
    return spec[len(LLM_PREFIX):].strip() if spec.startswith(LLM_PREFIX) else spec


def shared_backend(spec: str) -> Any:
    """The generation backend for ``spec``, loaded once per process."""
    from agentgym_suite.llm.role_client import shared_backend as load_shared  # backends load only when used

    return load_shared(spec)


@dataclass
class BackendChat:
    """A :data:`ChatFn` over a generation backend (loaded lazily from a spec, or given).

    Args:
        spec: backend spec (``llm:`` prefix allowed); ignored when ``backend`` is given.
        backend: a ready backend with ``generate(prompts, params)``.
        temperature: sampling temperature (0 = greedy, the tau2 default for users and judges).
        max_new_tokens: most tokens per reply.
        seed: sampling seed; replies are reproducible for a fixed seed and prompt.
        role: the part the model plays (``user``, ``judge``, ``memory``...): its calls are cached and
            accounted for under this name (:func:`~agentgym_suite.llm.role_client.role_backend`).
    """

    spec: str = ""
    backend: Any = None
    temperature: float = 0.0
    max_new_tokens: int = 512
    seed: int | None = 0
    prompts: list[list[dict[str, Any]]] = field(default_factory=list, repr=False)
    keep_prompts: bool = False
    role: str = "model"

    @property
    def label(self) -> str:
        """``spec`` or the backend's name, for result labels."""
        if self.spec:
            return strip_llm_prefix(self.spec)
        return str(getattr(self.backend, "name", type(self.backend).__name__))

    def __call__(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> str:
        """The model's reply to ``messages``; ``tools`` (OpenAI-format schemas) go to the backend with the prompt."""
        from agentgym_suite.llm.base import SamplingParams

        from agentgym_suite.llm.role_client import role_backend

        if self.backend is None:
            self.backend = role_backend(self.role, strip_llm_prefix(self.spec))
        elif getattr(self.backend, "role", None) != self.role:
            self.backend = role_backend(self.role, self.backend)
        if self.keep_prompts:
            self.prompts.append([dict(m) for m in messages])
        params = SamplingParams(temperature=self.temperature, max_new_tokens=self.max_new_tokens, seed=self.seed)
        rows = self.backend.generate([messages], params, [tools]) if tools else self.backend.generate([messages], params)
        sample = rows[0][0]
        if getattr(sample, "error", None):
            raise RuntimeError(f"the model behind {self.label} failed: {sample.error}")
        return str(sample.text)


def chat_from(setting: str | ChatFn | Any, **options: Any) -> tuple[ChatFn, str]:
    """A chat callable and its label from a spec string, a callable or a backend object.

    Raises:
        TypeError: for anything else.
    """
    if isinstance(setting, str):
        chat = BackendChat(spec=setting, **options)
        return chat, chat.label
    if callable(getattr(setting, "generate", None)) and not callable(setting):
        chat = BackendChat(backend=setting, **options)
        return chat, chat.label
    if callable(setting):
        return setting, str(getattr(setting, "label", None) or getattr(setting, "__name__", type(setting).__name__))
    raise TypeError(f"expected a backend spec string, a chat callable (messages) -> str or a backend; got {type(setting).__name__}.")


__all__ = ["BackendChat", "ChatFn", "LLM_PREFIX", "chat_from", "shared_backend", "strip_llm_prefix"]
