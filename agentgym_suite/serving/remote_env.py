"""``Remote-v0``: a suite env whose episodes play on an OpenEnv server, ours or someone else's.

``gym.make("Remote-v0", url="ws://host:port")`` reads the server's ``/schema`` and ``/metadata``
and then behaves like any suite env (text in, text out, the ``info`` contract):

* against ``agentgym serve`` (its observation schema is
  :class:`~agentgym_suite.serving.models.SuiteObservation`), observations, rewards,
  ``terminated``/``truncated`` and ``info`` are the served env's own, so a seeded episode is
  the same as ``gym.make`` of that id locally; ``task_ids()`` come from the server's task routes;
* against another OpenEnv env (:class:`SchemaMapping`), the observation's fields become text
  (a single text field as it is, several as ``name: value`` lines), the action model comes from
  ``/schema``: one text field takes the action text as it is, any other model takes a JSON
  object (bare or in a ``<tool_call>`` block; the env then offers one tool, ``step``, with the
  action's schema); ``won`` is "the episode ended with a positive reward", ``score`` that reward
  clipped to [0, 1], and ``task_ids()`` are ``episode-0`` … (``num_tasks`` of them), each reset
  with its seed.

A broken connection or a server that stopped raises
:class:`~agentgym_suite.serving.wire.ServerGone` (a dead worker to the rollout engine).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import gymnasium as gym

from agentgym_suite.core.fixture_profile import FixtureProfile
from agentgym_suite.core.info import base_info
from agentgym_suite.core.spaces import action_space, observation_space
from agentgym_suite.serving.wire import DEFAULT_MESSAGE_TIMEOUT_S, RemoteSessionError, WireSession

_SUITE_FIELDS = {"text", "won", "score", "action_valid", "terminated", "truncated", "info"}
_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)
_BASE_FIELDS = {"metadata", "done", "reward"}


@dataclass(frozen=True)
class SchemaMapping:
    """How text maps onto a foreign OpenEnv env's action and observation models (from ``/schema``).

    Attributes:
        text_field: the action's one text field (None: the action is a JSON object).
        action_schema: the action's JSON schema without OpenEnv's ``metadata``.
    """

    text_field: str | None
    action_schema: dict[str, Any]

    @classmethod
    def from_schema(cls, action: dict[str, Any]) -> SchemaMapping:
        """Read the mapping from ``/schema``'s ``action`` entry."""
        props = {k: v for k, v in (action.get("properties") or {}).items() if k not in _BASE_FIELDS}
        required = [k for k in action.get("required") or [] if k in props]
        schema = {"type": "object", "properties": props, "required": required}
        if "$defs" in action:
            schema["$defs"] = action["$defs"]
        strings = [k for k, v in props.items() if isinstance(v, dict) and v.get("type") == "string"]
        if len(strings) == 1 and set(required) <= set(strings):
            return cls(strings[0], schema)
        return cls(None, schema)

    def tools(self) -> list[dict[str, Any]] | None:
        """The one ``step`` tool a JSON-action env offers (None for a text action)."""
        if self.text_field is not None:
            return None
        return [{"type": "function", "function": {"name": "step", "description": "Send one action to the environment.",
                                                  "parameters": self.action_schema}}]

    def action(self, text: str) -> tuple[dict[str, Any] | None, str]:
        """``(action data, "")`` for ``text``, or ``(None, why it is not an action)``."""
        if self.text_field is not None:
            return {self.text_field: text}, ""
        match = _TOOL_CALL.search(text)
        body = match.group(1) if match else text.strip()
        try:
            value = json.loads(body)
        except ValueError:
            return None, ("The action must be a JSON object with the fields " + ", ".join(self.action_schema["properties"])
                          + " (bare, or as the arguments of a <tool_call> to the step tool).")
        if isinstance(value, dict) and isinstance(value.get("arguments"), dict) and "name" in value:
            value = value["arguments"]
        if not isinstance(value, dict):
            return None, "The action must be a JSON object, not " + type(value).__name__ + "."
        return value, ""

    @staticmethod
    def text(observation: dict[str, Any]) -> str:
        """A foreign observation as text."""
        fields = {k: v for k, v in observation.items() if k not in _BASE_FIELDS}
        strings = [k for k, v in fields.items() if isinstance(v, str)]
        if len(fields) == 1 and strings:
            return str(fields[strings[0]])
        lines = []
        for key, value in fields.items():
            if value in (None, "", [], {}):
                continue
            lines.append(f"{key}: {value if isinstance(value, str) else json.dumps(value, default=str)}")
        return "\n".join(lines)


@dataclass(frozen=True)
class RemoteActionFormat:
    """The served env's action format as prompts read it (its name and answer instructions)."""

    name: str
    instructions: str


class RemoteTextEnv(gym.Env[str, str]):
    """A suite env played on an OpenEnv server (see the module docstring).

    Args:
        url: the server's address: ``ws://host:port`` (``http://``, ``host:port`` work too).
        message_timeout: seconds to wait for one answer before the server counts as gone.
        num_tasks: how many ``episode-N`` task ids a server without task routes gets.
        token: the server's bearer token (default: ``$AGENTGYM_SERVE_TOKEN``, if set); sent as
            ``Authorization: Bearer`` on every request, never shown. The variable is the better
            place: a keyword argument is kept in ``env.spec.kwargs`` (eval masks it in what it writes).
    """

    metadata: dict[str, Any] = {"render_modes": []}
    fixture_profile = FixtureProfile(needs_server=True)
    """Made against a running server only (the registration tests leave it to tests/serving)."""

    def __init__(self, url: str, message_timeout: float | None = DEFAULT_MESSAGE_TIMEOUT_S, num_tasks: int = 100,
                 token: str | None = None) -> None:
        self.url = url
        self.observation_space = observation_space()
        self.action_space = action_space()
        self._session = WireSession(url, message_timeout, token=token)
        schema = self._session.http_json("/schema")
        observation = (schema or {}).get("observation") or {}
        self.ours = _SUITE_FIELDS <= set(observation.get("properties") or {})
        self.mapping = None if self.ours else SchemaMapping.from_schema((schema or {}).get("action") or {})
        self.remote_name = str((self._session.http_json("/metadata") or {}).get("name") or "")
        described = self._described() if self.ours else {}
        self.prompt_description = described.get("description") or f"the {self.remote_name or 'remote'} environment"
        self.action_format = RemoteActionFormat(described.get("action_format") or "plain",
                                                described.get("action_instructions") or "")
        self.num_tasks = int(num_tasks)
        self._task_ids: list[str] | None = None
        self._task_text = ""
        self._turn = 0
        self._task_id = ""

    # ------------------------------------------------------------------ suite API
    def task_ids(self) -> list[str]:
        """The server's task ids (its task routes), or ``episode-0`` … ``episode-{num_tasks-1}``."""
        if self._task_ids is None:
            self._task_ids = self._served_task_ids() or [f"episode-{i}" for i in range(self.num_tasks)]
        return list(self._task_ids)

    def format_action(self, command: str) -> str:
        """A bare command wrapped in the served env's action format, as the local env wraps it."""
        from agentgym_suite.core.text_env import TextEnv

        return TextEnv.format_action(self, str(command))  # type: ignore[arg-type]  (reads only action_format)

    def oracle(self) -> list[str]:
        """A remote env shares no oracle."""
        raise NotImplementedError("a remote env has no oracle; play it with a model or a scripted agent.")

    # ------------------------------------------------------------------ gym API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        options = dict(options or {})
        task_id = options.pop("task_id", None)
        data: dict[str, Any] = {}
        if seed is not None:
            data["seed"] = int(seed)
        if self.ours:
            if task_id is not None:
                data["task_id"] = str(task_id)
            if options:
                data["options"] = options
            answer = self._session.request("reset", data)
            text, _, _, _, info = self._ours(answer)
            return text, info
        if task_id is not None:
            data["episode_id"] = str(task_id)
        answer = self._session.request("reset", data)
        self._turn, self._task_id = 0, str(task_id or "")
        observation = answer.get("observation") or {}
        text = SchemaMapping.text(observation)
        self._task_text = text
        return text, self._foreign_info(observation, 0.0, False, True)

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self.ours:
            return self._ours(self._session.request("step", {"message": str(action)}))
        assert self.mapping is not None
        self._turn += 1
        data, why = self.mapping.action(str(action))
        if data is None:
            info = self._foreign_info({}, 0.0, False, False)
            info["invalid_reason"] = why
            return why, 0.0, False, False, info
        try:
            answer = self._session.request("step", data)
        except RemoteSessionError as exc:
            if exc.code != "VALIDATION_ERROR":
                raise
            info = self._foreign_info({}, 0.0, False, False)
            info["invalid_reason"] = str(exc)
            return f"The environment rejected the action: {exc}", 0.0, False, False, info
        observation = answer.get("observation") or {}
        reward = float(answer.get("reward") or 0.0)
        done = bool(answer.get("done"))
        return SchemaMapping.text(observation), reward, done, False, self._foreign_info(observation, reward, done, True)

    def close(self) -> None:
        self._session.close()

    # ------------------------------------------------------------------ internals
    def _ours(self, answer: dict[str, Any]) -> tuple[str, float, bool, bool, dict[str, Any]]:
        from agentgym_suite.serving.fields import info_from_observation

        observation = answer.get("observation") or {}
        return (str(observation.get("text", "")), float(answer.get("reward") or 0.0),
                bool(observation.get("terminated")), bool(observation.get("truncated")),
                info_from_observation(observation))

    def _foreign_info(self, observation: dict[str, Any], reward: float, done: bool, valid: bool) -> dict[str, Any]:
        won = bool(observation.get("won")) if "won" in observation else (done and reward > 0)
        return base_info(task_id=self._task_id, task=self._task_text, won=won,
                         score=min(1.0, max(0.0, reward)) if done else 0.0, action_valid=valid, turn=self._turn,
                         tools=self.mapping.tools() if self.mapping else None)

    def _described(self) -> dict[str, str]:
        try:
            answer = self._session.http_json("/agentgym/describe")
        except RemoteSessionError:  # an older or foreign server: the defaults serve
            return {}
        return {str(k): str(v) for k, v in answer.items()} if isinstance(answer, dict) else {}

    def _served_task_ids(self) -> list[str]:
        if not self.remote_name:
            return []
        try:
            splits = self._session.http_json(f"/{self.remote_name}/splits")
            split = (splits or [{}])[0].get("name", "default")
            tasks = self._session.http_json(f"/{self.remote_name}/tasks", {"split": split})
        except RemoteSessionError:  # no task routes (HTTP 501/404): the episode-N ids serve
            return []
        return [str(t.get("id", t.get("index"))) if isinstance(t, dict) else str(t) for t in tasks.get("tasks") or []]

    def __repr__(self) -> str:
        return f"<RemoteTextEnv {self.remote_name or '?'} at {self._session.ws_url}>"
