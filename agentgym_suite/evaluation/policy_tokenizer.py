"""The policy's tokenizer for envs that count its tokens (``TextEnv.policy_tokenizer_setting``).

An env whose benchmark measures observations in the policy's tokens (Search-R1 cuts each to 500 of
them) declares the constructor argument that names the tokenizer; ``agentgym eval`` fills it with
the agent's model when the spec names one it can load (``hf:PATH``, ``vllm:PATH``, ``tiny``), unless
the user set it. For ``openai:MODEL@URL`` and ``default`` the served model's tokenizer is not known
here: the env keeps its own default and says so.
"""

from __future__ import annotations

from typing import Any

from agentgym_suite.registration import env_class

LOCAL_PREFIXES = ("hf:", "vllm:")
"""Agent specs whose rest is a model id or folder a tokenizer loads from."""


def agent_tokenizer(agent: Any) -> str | None:
    """The tokenizer (model id or folder) of an agent spec, when the spec names one; None otherwise."""
    if not isinstance(agent, str):
        return None
    if agent == "tiny":
        from agentgym_suite.llm.tiny import tiny_model_dir

        return str(tiny_model_dir())
    for prefix in LOCAL_PREFIXES:
        if agent.startswith(prefix) and agent[len(prefix):]:
            return agent[len(prefix):]
    return None


def with_policy_tokenizer(env_id: str, env_kwargs: dict[str, Any], agent: Any) -> dict[str, Any]:
    """``env_kwargs`` with the env's ``policy_tokenizer_setting`` set to the agent's tokenizer, unless set
    already or unknown."""
    setting = getattr(env_class(env_id), "policy_tokenizer_setting", None)
    if not setting or setting in env_kwargs:
        return env_kwargs
    tokenizer = agent_tokenizer(agent)
    return env_kwargs if tokenizer is None else {**env_kwargs, setting: tokenizer}
