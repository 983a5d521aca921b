"""``SuiteEnvClient``: OpenEnv's typed client for a served suite env, as each OpenEnv env package
ships one (``EchoEnv``, ``TextArenaEnv``…). TRL's OpenEnv recipes hold one in their
``environment_factory`` class; see ``examples/trl_openenv_textworld.py``::

    from agentgym_suite.serving.client import SuiteAction, SuiteEnvClient

    with SuiteEnvClient(base_url="http://127.0.0.1:8000").sync() as client:
        result = client.reset(seed=0)
        print(result.observation.text, result.observation.admissible_actions)
        result = client.step(SuiteAction(message="go east"))
        print(result.reward, result.done, result.observation.won)

Against a server with a token, pass ``token=...`` or set ``AGENTGYM_SERVE_TOKEN``: it goes as
``Authorization: Bearer`` on the WebSocket handshake (OpenEnv's ``headers=`` argument, which any
OpenEnv client such as ``GenericEnvClient`` takes too).
"""

from __future__ import annotations

from typing import Any

from openenv.core import EnvClient
from openenv.core.client_types import StepResult

from agentgym_suite.serving.models import SuiteAction, SuiteObservation, SuiteState

__all__ = ["SuiteAction", "SuiteEnvClient", "SuiteObservation", "SuiteState"]


class SuiteEnvClient(EnvClient[SuiteAction, SuiteObservation, SuiteState]):
    """A WebSocket session on ``agentgym serve`` with typed actions and observations.

    Args:
        base_url: the server's address (``http://host:port`` or ``ws://host:port``).
        token: the server's bearer token (None: ``$AGENTGYM_SERVE_TOKEN``, if set).
        **kwargs: the rest of OpenEnv's ``EnvClient`` arguments (``headers`` included).
    """

    def __init__(self, base_url: str | None = None, token: str | None = None, **kwargs: Any) -> None:
        from agentgym_suite.serving.auth import auth_headers, token_from_env

        headers = {**auth_headers(token_from_env(token)), **dict(kwargs.pop("headers", None) or {})}
        super().__init__(base_url, headers=headers or None, **kwargs)

    def _step_payload(self, action: SuiteAction | str) -> dict[str, Any]:
        return {"message": action if isinstance(action, str) else action.message}

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[SuiteObservation]:
        data = dict(payload.get("observation") or {})
        data.update(reward=payload.get("reward"), done=bool(payload.get("done", False)))
        observation = SuiteObservation.model_validate(data)
        return StepResult(observation=observation, reward=observation.reward, done=observation.done,
                          metadata=payload.get("metadata"))

    def _parse_state(self, payload: dict[str, Any]) -> SuiteState:
        return SuiteState.model_validate(payload)
