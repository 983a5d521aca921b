"""Use any suite env inside plain TRL: ``GRPOTrainer(environment_factory=as_environment_factory(...))``.

TRL (>= 1.16) calls ``factory()`` once per concurrent rollout, then per episode
``env.reset(**dataset_row)`` (the returned text is appended to the prompt), exposes the
instance's public methods as tools the model calls, and reads ``env.get_reward()`` at the end.
The adapter maps the suite's contract onto that:

* command envs (TextWorld, ALFWorld, WebShop, …) get one tool, ``act(command)`` (TRL names a tool
  by its function's ``__name__``, so the function is called ``act``);
* tool envs get one method per tool of their schema, each forwarding a Hermes tool call;
* ``get_reward()`` is the episode return (sum of step rewards).

A dataset row may carry ``task_id`` and ``seed`` columns to pick the episode.
"""

from __future__ import annotations

import inspect
import json
from typing import Any

import gymnasium as gym

_PY_TYPES = {"string": str, "integer": int, "number": float, "boolean": bool, "array": list, "object": dict}


class SuiteEnvironment:
    """Base of the generated adapter classes (one per env id)."""

    env_id: str = ""
    env_kwargs: dict[str, Any] = {}

    def __init__(self) -> None:
        import agentgym_suite  # noqa: F401  (registers the env ids)

        self._env = gym.make(self.env_id, **self.env_kwargs)
        self._return = 0.0
        self._done = False

    def reset(self, **kwargs: Any) -> str:
        """Start an episode (``task_id``/``seed`` columns of the dataset row pick it); returns the task text."""
        task_id = kwargs.get("task_id")
        seed = kwargs.get("seed")
        obs, info = self._env.reset(seed=None if seed is None else int(seed),
                                    options={"task_id": task_id} if task_id is not None else None)
        self._return, self._done = 0.0, False
        task = str(info.get("task") or "")
        text = f"Task: {task}\n\n{obs}" if task and task not in obs else obs
        if info.get("admissible_actions"):
            text += "\nAdmissible commands: " + ", ".join(info["admissible_actions"])
        return text

    def get_reward(self) -> float:
        """Episode return so far."""
        return self._return

    def _send(self, action: str) -> str:
        if self._done:
            return "The episode is over; no further actions are accepted."
        obs, reward, terminated, truncated, info = self._env.step(action)
        self._return += float(reward)
        self._done = bool(terminated or truncated)
        if info.get("admissible_actions") and not self._done:
            obs += "\nAdmissible commands: " + ", ".join(info["admissible_actions"])
        return obs + ("\n[episode finished]" if self._done else "")


def act(self, command: str) -> str:  # noqa: ANN001 (self stays unannotated for TRL's schema)
    """Send one command to the environment and return what it answers.

    Args:
        command: the command to execute, e.g. "go north" or "take apple from table 1".
    """
    return self._send(command)


def _tool_method(schema: dict[str, Any]):
    fn_schema = schema.get("function", schema)
    name = str(fn_schema["name"])
    params = fn_schema.get("parameters", {}) or {}
    props: dict[str, Any] = params.get("properties", {}) or {}
    required = set(params.get("required", []) or [])

    def method(self, **arguments: Any) -> str:  # noqa: ANN001
        call = json.dumps({"name": name, "arguments": arguments})
        return self._send(f"<tool_call>\n{call}\n</tool_call>")

    sig_params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {"return": str}
    arg_docs = []
    for pname, spec in props.items():
        if not pname.isidentifier():
            continue
        kind = spec.get("type", "string") if isinstance(spec, dict) else "string"
        py = _PY_TYPES.get(kind if isinstance(kind, str) else "string", str)
        default = inspect.Parameter.empty if pname in required else None
        sig_params.append(inspect.Parameter(pname, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=py))
        annotations[pname] = py if pname in required else (py | None)
        desc = (spec.get("description") if isinstance(spec, dict) else "") or pname
        arg_docs.append(f"    {pname}: {' '.join(str(desc).split())}")
    method.__name__ = method.__qualname__ = name
    method.__signature__ = inspect.Signature(sig_params, return_annotation=str)  # type: ignore[attr-defined]
    method.__annotations__ = annotations
    summary = " ".join(str(fn_schema.get("description") or f"Call the {name} tool.").split())
    method.__doc__ = summary + ("\n\nArgs:\n" + "\n".join(arg_docs) if arg_docs else "")
    return method


def as_environment_factory(env_id: str, **env_kwargs: Any) -> type[SuiteEnvironment]:
    """A class for ``GRPOTrainer(environment_factory=...)`` that plays ``env_id``.

    Command envs expose ``act(command)``; tool envs expose their tools (read from a probe
    episode's ``info["tools"]``). Unknown env ids fail with the list of registered ones.
    """
    import agentgym_suite  # noqa: F401

    if env_id not in gym.registry:
        from agentgym_suite.registration import all_entries

        known = ", ".join(e.id for e in all_entries() if e.id in gym.registry)
        raise ValueError(f"{env_id!r} is not a registered env id here; ready ids: {known}. See `agentgym list`.")
    probe = gym.make(env_id, **env_kwargs)
    try:
        _, info = probe.reset(seed=0)
        tools = info.get("tools") or []
    finally:
        probe.close()
    namespace: dict[str, Any] = {"env_id": env_id, "env_kwargs": dict(env_kwargs),
                                 "__doc__": f"{env_id} as a TRL environment."}
    if tools:
        for schema in tools:
            method = _tool_method(schema)
            namespace[method.__name__] = method
    else:
        namespace["act"] = act  # TRL keys tools by __name__, so the function itself is named act
    safe = "".join(ch if ch.isalnum() else "_" for ch in env_id)
    return type(f"{safe}Environment", (SuiteEnvironment,), namespace)


def with_hermes_response_parsing(tokenizer: Any) -> Any:
    """Give a tokenizer with a ChatML/Hermes chat template that TRL does not recognise (such as
    the suite's tiny test model) TRL's Qwen response parser, so TRL can read its tool calls.
    Tokenizers that already have a parser are returned unchanged."""
    from trl import chat_template_utils as ctu

    if getattr(tokenizer, "response_template", None) is not None or getattr(tokenizer, "response_schema", None):
        return tokenizer
    template = str(getattr(tokenizer, "chat_template", "") or "")
    if "<|im_start|>" not in template or "<tool_call>" not in template:
        raise ValueError(
            "the tokenizer's chat template is not ChatML with <tool_call> blocks; set its response template "
            "yourself (see TRL's chat_template_utils.add_response_schema)."
        )
    if ctu._SUPPORTS_RESPONSE_TEMPLATE:
        tokenizer.response_template = ctu.qwen3_template
    else:
        tokenizer.response_schema = ctu.qwen3_schema
    return tokenizer
