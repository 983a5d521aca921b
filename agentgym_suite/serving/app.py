"""``agentgym serve``: a registered env id behind OpenEnv's own server.

:func:`build_app` hands OpenEnv's ``create_app`` a factory of
:class:`~agentgym_suite.serving.environment.ServedEnv` sessions and the suite's wire models.
The app runs in OpenEnv's *production* mode: it has the ``/ws`` sessions (``reset``, ``step``,
``state``, ``close`` messages), ``/health``, ``/schema``, ``/metadata`` and the task routes
(``/<env id>/tasks``…), plus :data:`DESCRIBE_PATH`, and not the stateless HTTP ``/reset``/``/step``, which would make an
env per request outside the session limit. With a token every route but ``/health`` needs
``Authorization: Bearer <token>`` (:mod:`agentgym_suite.serving.auth`). :func:`serve` runs it
with uvicorn, with a bound on the frame size and a keep-alive ping that notices clients that
vanished, and refuses a non-loopback address without a token unless told ``insecure``.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from typing import Any

import gymnasium as gym

from agentgym_suite.serving.environment import ServedEnv, ServeSpec

logger = logging.getLogger(__name__)

DESCRIBE_PATH = "/agentgym/describe"
"""The one route beyond OpenEnv's: the env's prompt description and action format, so
``Remote-v0`` prompts a model exactly as the local env would."""


@dataclass(frozen=True)
class ServerLimits:
    """What one server holds.

    Attributes:
        max_sessions: concurrent sessions (one env each); a session beyond them gets OpenEnv's
            ``CAPACITY_REACHED`` error ("Server at capacity") and is closed.
        idle_timeout: seconds a session may go without a message before its env is closed
            (None: never). OpenEnv's reaper looks at least every 5 s.
        max_message_bytes: the largest WebSocket frame accepted; a larger one closes that
            connection with code 1009 (message too big).
        ping_interval: seconds between keep-alive pings; a client that answers none within as
            long again is dropped and its env closed.
    """

    max_sessions: int = 64
    idle_timeout: float | None = 600.0
    max_message_bytes: int = 4 * 1024 * 1024
    ping_interval: float = 10.0

    def __post_init__(self) -> None:
        if self.max_sessions < 1:
            raise ValueError(f"max_sessions must be >= 1, got {self.max_sessions}.")
        if self.idle_timeout is not None and not self.idle_timeout > 0:
            raise ValueError(f"idle_timeout must be a positive number of seconds or None, got {self.idle_timeout}.")
        if not self.ping_interval > 0:
            raise ValueError(f"ping_interval must be a positive number of seconds, got {self.ping_interval}.")
        if self.max_message_bytes < 1024:
            raise ValueError(f"max_message_bytes must be at least 1024, got {self.max_message_bytes}.")


def check_env_id(env_id: str, env_kwargs: dict[str, Any]) -> None:
    """Make (and close) one env of ``env_id`` so a bad id, missing data or a wrong kwarg fails at
    start-up with its own message rather than in every session."""
    import agentgym_suite  # noqa: F401  (registers the suite's ids)

    if env_id not in gym.registry:
        from agentgym_suite.registration import all_entries

        known = ", ".join(e.id for e in all_entries() if e.id in gym.registry)
        raise ValueError(f"{env_id!r} is not a registered env id here; ready ids: {known}. See `agentgym list`.")
    env = gym.make(env_id, **env_kwargs)
    env.close()


def build_app(spec: ServeSpec, limits: ServerLimits | None = None, token: str | None = None) -> Any:
    """OpenEnv's FastAPI app serving ``spec`` (see the module docstring); with ``token``, every
    route but ``/health`` needs it as a bearer token."""
    from openenv.core.env_server import create_app
    from openenv.core.env_server.types import ConcurrencyConfig

    from agentgym_suite.serving.models import SuiteAction, SuiteObservation, SuiteState

    limits = limits or ServerLimits()
    app = create_app(
        functools.partial(ServedEnv, spec),
        SuiteAction,
        SuiteObservation,
        env_name=spec.env_id,
        concurrency_config=ConcurrencyConfig(max_concurrent_envs=limits.max_sessions,
                                             session_timeout=limits.idle_timeout),
        state_cls=SuiteState,
        mode="production",
    )

    @app.get(DESCRIBE_PATH, tags=["Environment Info"], summary="What prompts say about the env (agentgym-suite)")
    def describe() -> dict[str, str]:
        return spec.describe()

    if token:
        from agentgym_suite.serving.auth import BearerTokenMiddleware, redacting_logger

        app.add_middleware(BearerTokenMiddleware, token=token)
        redacting_logger("uvicorn.error")  # uvicorn hands it to websockets, which logs handshake headers at debug
    return app


def serve(spec: ServeSpec, host: str = "127.0.0.1", port: int = 8000, limits: ServerLimits | None = None,
          log_level: str = "warning", token: str | None = None, insecure: bool = False) -> None:
    """Serve ``spec`` on ``host:port`` until interrupted (loopback unless ``host`` says otherwise).

    Raises:
        ValueError: ``host`` is reachable from other machines, no ``token`` is set and
            ``insecure`` is not (see :func:`~agentgym_suite.serving.auth.check_bind`).
    """
    import uvicorn

    from agentgym_suite.serving.auth import check_bind

    limits = limits or ServerLimits()
    check_bind(host, token, insecure)
    check_env_id(spec.env_id, spec.env_kwargs)
    app = build_app(spec, limits, token=token)
    config = uvicorn.Config(app, host=host, port=port, log_level=log_level, ws_max_size=limits.max_message_bytes,
                            ws_ping_interval=limits.ping_interval, ws_ping_timeout=limits.ping_interval,
                            server_header=False, access_log=False)
    access = "bearer token required except on /health" if token else "no token: anyone who reaches the port may connect"
    print(f"serving {spec.env_id} on ws://{host}:{port}/ws (OpenEnv protocol; at most {limits.max_sessions} "
          f"sessions; {access})", flush=True)
    uvicorn.Server(config).run()
