"""Turn an ``--agent`` spec into an agent object.

Specs:

* ``oracle`` — :class:`~agentgym_suite.agents.base.OracleAgent` (follows ``env.unwrapped.oracle()``);
* ``random`` — :class:`~agentgym_suite.agents.base.RandomAgent` (uniform over admissible actions);
* ``hf:PATH``, ``vllm:PATH``, ``openai:MODEL@URL``, ``default``, ``tiny`` — a generation
  backend from :func:`agentgym_suite.llm.load_backend` driven by
  :class:`agentgym_suite.agents.model_agent.ModelAgent`. Those modules are imported only when
  such a spec is used.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

from agentgym_suite.agents.base import Agent, OracleAgent, RandomAgent
from agentgym_suite.core.errors import AgentGymError

MODEL_PREFIXES = ("hf:", "vllm:", "openai:")
MODEL_NAMES = ("default", "tiny")


class AgentSpecError(AgentGymError, ValueError):
    """An ``--agent`` spec that names no known agent, or whose modules are missing."""


def is_model_spec(spec: str) -> bool:
    """True for specs served by a generation backend (``hf:…``, ``vllm:…``, ``openai:…``, ``default``, ``tiny``)."""
    return spec in MODEL_NAMES or spec.startswith(MODEL_PREFIXES)


def _supported_kwargs(factory: Any, options: dict[str, Any]) -> dict[str, Any]:
    """The entries of ``options`` (not None) that ``factory`` accepts as keyword arguments."""
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return {}
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return {k: v for k, v in options.items() if v is not None}
    return {k: v for k, v in options.items() if v is not None and k in params}


LOCAL_MODEL_OPTIONS = frozenset({"autocast"})
"""Backend settings a local ``transformers`` model (``hf:``, ``default``, ``tiny``) takes
(:class:`~agentgym_suite.llm.transformers_backend.TransformersBackend`)."""


def make_model_agent(spec: str, *, prompt_format: str = "single", backend_options: dict[str, Any] | None = None,
                     **options: Any) -> Agent:
    """Load the backend named by ``spec`` and wrap it in a ``ModelAgent``.

    ``options`` (e.g. ``temperature``, ``max_new_tokens``, ``seed``, ``max_context_tokens``) are
    passed to the ``ModelAgent`` constructor when it accepts them; ``backend_options`` (the
    client settings of an ``openai:`` spec: ``timeout``, ``max_retries``…) to ``load_backend``.

    Raises:
        AgentSpecError: ``backend_options`` for a spec that is not ``openai:``.
    """
    backend_options = {k: v for k, v in (backend_options or {}).items() if v is not None}
    local = spec.startswith("hf:") or spec in ("default", "tiny")
    misplaced = sorted(set(backend_options) - (LOCAL_MODEL_OPTIONS if local else set())) \
        if not spec.startswith("openai:") else []
    if misplaced:
        raise AgentSpecError(
            f"the client settings {misplaced} apply to openai:MODEL@URL agents, not to {spec!r}."
        )
    try:
        llm = importlib.import_module("agentgym_suite.llm")
        load_backend = llm.load_backend
        model_agent = importlib.import_module("agentgym_suite.agents.model_agent")
        model_agent_cls = model_agent.ModelAgent
    except (ImportError, AttributeError) as exc:
        raise AgentSpecError(
            f"--agent {spec!r} needs a model agent, but this install lacks it ({exc}). It needs "
            "agentgym_suite.llm.load_backend and agentgym_suite.agents.model_agent.ModelAgent; "
            "use --agent oracle or --agent random, or install a complete agentgym-suite."
        ) from exc
    backend = load_backend(spec, **backend_options) if backend_options else load_backend(spec)
    kwargs = _supported_kwargs(model_agent_cls, {"prompt_format": prompt_format, **options})
    return model_agent_cls(backend, **kwargs)


def make_agent(spec: str | Agent, *, seed: int | None = None, prompt_format: str = "single",
               backend_options: dict[str, Any] | None = None, **options: Any) -> Agent:
    """Return an agent for ``spec``; an object that already is an agent is returned as is.

    ``backend_options`` configure a model agent's backend (see :func:`make_model_agent`).

    Raises:
        AgentSpecError: for an unknown spec, listing the accepted ones, or client settings given
            for an agent without a server behind it.
    """
    if any(v is not None for v in (backend_options or {}).values()) and not (isinstance(spec, str)
                                                                           and is_model_spec(spec)):
        raise AgentSpecError(f"client settings ({sorted(backend_options or {})}) apply to openai:MODEL@URL agents, "
                             f"not to {agent_label(spec)!r}.")
    if not isinstance(spec, str):
        if not callable(getattr(spec, "act", None)) or not callable(getattr(spec, "reset", None)):
            raise AgentSpecError(f"{spec!r} is not an agent: it needs reset(env, seed=) and act(observation, info).")
        return spec
    if spec == "oracle":
        return OracleAgent()
    if spec == "random":
        return RandomAgent(seed=seed)
    if is_model_spec(spec):
        # no constructor seed: each episode's own seed (agent.reset(env, seed=…)) seeds sampling,
        # so the k attempts at one task differ and a resumed episode repeats exactly
        return make_model_agent(spec, prompt_format=prompt_format, backend_options=backend_options, **options)
    raise AgentSpecError(
        f"Unknown agent {spec!r}. Use one of: oracle, random, hf:PATH, vllm:PATH, openai:MODEL@URL, default, tiny."
    )


def agent_label(spec: str | Agent) -> str:
    """A short name of the agent for summaries (the spec, or the agent's ``name``)."""
    if isinstance(spec, str):
        return spec
    return str(getattr(spec, "name", type(spec).__name__))
