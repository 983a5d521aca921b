"""``env_workers: "openenv://host:port[,host2:port2…]"``: the pool's envs are sessions on OpenEnv
servers (``agentgym serve ENV_ID`` on any machines), spread over the servers: an env pool that
spans machines without Ray.

Each env is a :class:`~agentgym_suite.serving.remote_env.RemoteTextEnv` session, placed on the
server holding the fewest of this pool's sessions (servers that cannot be reached are skipped
while another one answers). A batch of resets or steps goes to all its sessions at once
(threads; each waits on its own socket), so the servers work in parallel. A server that stops,
is killed or does not answer fails only its sessions' calls with
:class:`~agentgym_suite.serving.wire.ServerGone` (an
:class:`~agentgym_suite.core.process_groups.EnvWorkerDied`): those episodes are lost, the run goes
on, and the pool makes new sessions (on the servers that answer) before the next rollout.

The servers must serve the env the pool asks for: a pool for ``TextWorld-v0`` refuses a server
whose ``/metadata`` names another id; ``Remote-v0`` takes whatever the servers serve.

Servers started with a token (``agentgym serve --token`` / ``AGENTGYM_SERVE_TOKEN``) get it from
the same variable on this side, or from ``token=``; a refused token is an error that says so
(:class:`~agentgym_suite.serving.wire.TokenRefused`), not a dead server.
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Sequence

import gymnasium as gym

from agentgym_suite.registration import REMOTE_ENV_ID
from agentgym_suite.rollout.workers.base import EnvExecutor, ExecutorHandle, ResetCall, StepCall
from agentgym_suite.rollout.workers.calls import reset_env, step_env
from agentgym_suite.rollout.workers.remote import ANSWER_GRACE_S
from agentgym_suite.serving.wire import DEFAULT_MESSAGE_TIMEOUT_S, ServerGone

logger = logging.getLogger(__name__)

MAX_THREADS = 64
"""Most sessions one batch waits on at once."""


class ServedEnv(ExecutorHandle):
    """The engine's handle of one session on a server (not a ``gymnasium.Env``, so the engine
    sends its calls through :attr:`executor` in batches)."""

    def __init__(self, executor: OpenEnvServers, env: gym.Env, server: str, spec: Any) -> None:
        self.executor = executor
        self.env = env
        self.server = server
        self.spec = spec
        self.unwrapped = env.unwrapped
        self.lost: str | None = None
        """Why the session can no longer be used (None while it can)."""

    def __repr__(self) -> str:
        return f"<ServedEnv {getattr(self.spec, 'id', '?')} on {self.server}>"


class OpenEnvServers(EnvExecutor):
    """Envs as sessions on OpenEnv servers (see the module docstring).

    Args:
        servers: ``host:port`` (or ``ws://host:port``) of each server.
        step_timeout: seconds one step may take before its server counts as gone (plus a grace);
            None: :data:`~agentgym_suite.serving.wire.DEFAULT_MESSAGE_TIMEOUT_S`.
        token: the servers' bearer token (None: ``$AGENTGYM_SERVE_TOKEN``, read by each session).
    """

    kind = "openenv"

    def __init__(self, servers: Sequence[str], step_timeout: float | None = None, token: str | None = None) -> None:
        if not servers:
            raise ValueError("openenv:// needs at least one server, e.g. openenv://127.0.0.1:8000.")
        self.servers = [s if "://" in s else f"ws://{s}" for s in servers]
        self.message_timeout = DEFAULT_MESSAGE_TIMEOUT_S if step_timeout is None else step_timeout + ANSWER_GRACE_S
        self._token = token
        self._live: dict[int, ServedEnv] = {}
        self._threads: ThreadPoolExecutor | None = None
        self._closed = False

    def make(self, factory: Callable[[], gym.Env], n: int) -> list[Any]:
        if self._closed:
            raise RuntimeError("this openenv executor was closed; make a new one.")
        spec = getattr(factory, "spec", None)
        wanted = getattr(spec, "id", None)
        kwargs = getattr(factory, "kwargs", {}) or {}
        options = {k: kwargs[k] for k in ("message_timeout", "num_tasks", "token") if k in kwargs}
        options.setdefault("message_timeout", self.message_timeout)
        if self._token is not None:
            options.setdefault("token", self._token)
        made: list[ServedEnv] = []
        for _ in range(n):
            env = self._make_one(wanted, spec, options)
            self._live[id(env)] = env  # counted in the next one's placement
            made.append(env)
        return made

    def _make_one(self, wanted: str | None, spec: Any, options: dict[str, Any]) -> ServedEnv:
        load = {server: 0 for server in self.servers}
        for env in self._live.values():
            load[env.server] = load.get(env.server, 0) + 1
        failures: list[str] = []
        for server in sorted(self.servers, key=lambda s: (load[s], self.servers.index(s))):
            try:
                env = gym.make(REMOTE_ENV_ID, url=server, **options)
            except ServerGone as gone:
                failures.append(str(gone))
                continue
            served = env.unwrapped.remote_name  # type: ignore[attr-defined]
            if wanted not in (None, REMOTE_ENV_ID) and served != wanted:
                env.close()
                raise ValueError(f"the server at {server} serves {served or 'an unnamed env'}, not {wanted}; point "
                                 f"env_workers at servers started with `agentgym serve {wanted}`.")
            return ServedEnv(self, env, server, spec if wanted not in (None, REMOTE_ENV_ID) else env.spec)
        raise ServerGone("no env server answered: " + " ".join(failures), reason="unreachable")

    def usable(self, env: Any) -> bool:
        return isinstance(env, ServedEnv) and env.executor is self and not self._closed and env.lost is None

    def discard(self, envs: Sequence[Any]) -> None:
        for env in envs:
            if isinstance(env, ServedEnv) and self._live.pop(id(env), None) is not None:
                env.env.close()

    def reset(self, calls: Sequence[ResetCall]) -> list[Any]:
        return self._batch(reset_env, [(env, (seed, options, oracle)) for env, seed, options, oracle in calls])

    def step(self, calls: Sequence[StepCall]) -> list[Any]:
        return self._batch(step_env, [(env, (action, oracle)) for env, action, oracle in calls])

    def close(self) -> None:
        """End every session (each close is bounded by a second)."""
        self._closed = True
        envs, self._live = list(self._live.values()), {}
        for env in envs:
            env.env.close()
        if self._threads is not None:
            self._threads.shutdown(wait=False)
            self._threads = None

    def describe(self) -> str:
        return f"{len(self.servers)} OpenEnv server(s)"

    def _batch(self, fn: Callable[..., Any], calls: Sequence[tuple[Any, tuple]]) -> list[Any]:
        if self._threads is None:
            self._threads = ThreadPoolExecutor(max_workers=MAX_THREADS, thread_name_prefix="openenv-session")
        futures = [self._threads.submit(self._attempt, fn, env, args) for env, args in calls]
        return [future.result() for future in futures]

    def _attempt(self, fn: Callable[..., Any], env: Any, args: tuple) -> Any:
        if not self.usable(env):
            why = getattr(env, "lost", None) or "does not belong to this pool"
            return ServerGone(f"{env!r} can no longer be used ({why}); it is made again before the next rollout.",
                              reason=str(why))
        try:
            return fn(env.env, *args)
        except ServerGone as gone:
            env.lost = gone.reason or str(gone)
            return gone
        except Exception as exc:  # a broken env is data, not a crash of the batch
            return exc
