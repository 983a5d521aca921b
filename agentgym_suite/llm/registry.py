"""``load_backend(spec)``: build a generation backend from a short spec string."""

from __future__ import annotations

from typing import Any

from agentgym_suite.llm.base import Backend

SPEC_FORMS = (
    "hf:PATH_OR_ID        a transformers model (CPU or GPU)",
    "vllm:PATH_OR_ID      vLLM offline engine (GPU, pip install 'agentgym-suite[vllm]')",
    "openai:MODEL@BASE_URL  an OpenAI-compatible server, e.g. openai:gpt-4o-mini@https://api.openai.com/v1\n"
    "                    (client options after '?': openai:m@http://127.0.0.1:8000/v1?timeout=120&concurrency=4)",
    "default             the embedded SmolLM2-135M-Instruct (offline, CPU)",
    "tiny                a tiny random model for tests",
)


def _bad(spec: object, why: str) -> ValueError:
    forms = "\n  ".join(SPEC_FORMS)
    return ValueError(f"Bad backend spec {spec!r}: {why}. Use one of:\n  {forms}")


def load_backend(spec: str, **kwargs: Any) -> Backend:
    """Build the backend named by ``spec``; ``kwargs`` go to the backend's constructor/loader.

    Forms: ``hf:PATH_OR_ID``, ``vllm:PATH_OR_ID``, ``openai:MODEL@BASE_URL`` (client options after ``?``,
    see :data:`~agentgym_suite.llm.openai_backend.SPEC_OPTIONS`), ``default``, ``tiny``.
    Raises ValueError listing the forms when ``spec`` matches none of them.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise _bad(spec, "it is empty")
    spec = spec.strip()
    if spec in ("default", "tiny"):
        from agentgym_suite.llm.transformers_backend import TransformersBackend

        if spec == "tiny":
            from agentgym_suite.llm.tiny import tiny_model_dir

            path = tiny_model_dir()
        else:
            from agentgym_suite.llm.smollm2 import default_model_dir

            path = default_model_dir()
        backend = TransformersBackend.from_pretrained(path, **kwargs)
        backend.name = spec
        return backend
    kind, sep, rest = spec.partition(":")
    if not sep or not rest:
        raise _bad(spec, "no 'kind:' prefix with a model after it")
    if kind == "hf":
        from agentgym_suite.llm.transformers_backend import TransformersBackend

        return TransformersBackend.from_pretrained(rest, **kwargs)
    if kind == "vllm":
        from agentgym_suite.llm.vllm_backend import VLLMBackend

        return VLLMBackend(rest, **kwargs)
    if kind == "openai":
        from agentgym_suite.llm.openai_backend import OpenAIBackend, parse_openai_spec

        try:
            model, base_url, options = parse_openai_spec(rest)
        except ValueError as exc:
            raise _bad(spec, str(exc)) from None
        headers = {**options.pop("headers", {}), **(kwargs.pop("headers", None) or {})}
        options.update(kwargs)  # settings given in code (or on the command line) win over the spec's
        if headers:
            options["headers"] = headers
        return OpenAIBackend(model, base_url, **options) if base_url else OpenAIBackend(model, **options)
    raise _bad(spec, f"unknown kind {kind!r}")
