"""Generation backends behind one protocol, and the models the suite ships.

Public names:

* :class:`Backend` / :class:`TokenBackend` — the protocol; :class:`SamplingParams` in,
  :class:`Sample` records out.
* :func:`load_backend` — ``hf:…``, ``vllm:…``, ``openai:MODEL@URL``, ``default``, ``tiny``.
* :class:`TransformersBackend` (with ``score`` for teacher log-probs), :class:`OpenAIBackend`,
  :class:`VLLMBackend` (optional extra).
* :func:`default_model_dir` (embedded SmolLM2-135M-Instruct), :func:`tiny_model_dir`.

Heavy modules (torch, transformers, vllm) load only when a backend is built.
"""

from __future__ import annotations

from typing import Any

from agentgym_suite.llm.base import Backend, BackendError, Prompt, Sample, SamplingParams, TokenBackend
from agentgym_suite.llm.registry import load_backend

_LAZY = {
    "TransformersBackend": "agentgym_suite.llm.transformers_backend",
    "OpenAIBackend": "agentgym_suite.llm.openai_backend",
    "VLLMBackend": "agentgym_suite.llm.vllm_backend",
    "default_model_dir": "agentgym_suite.llm.smollm2",
    "find_smollm2_gguf": "agentgym_suite.llm.smollm2",
    "tiny_model_dir": "agentgym_suite.llm.tiny",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'agentgym_suite.llm' has no attribute {name!r}")


__all__ = ["Backend", "BackendError", "Prompt", "Sample", "SamplingParams", "TokenBackend", "load_backend", *_LAZY]
