"""One session's env on the server: a registered suite id behind OpenEnv's ``Environment`` API.

The server makes one :class:`ServedEnv` per WebSocket session (and short-lived ones for
``/metadata`` and the task routes, which never make the gym env). The gym env is made with
``gymnasium.make`` on the first ``reset``, so a session plays exactly what ``gym.make`` of the
same id and kwargs plays locally, seed for seed.

Failures stay inside the session: an env that raises is closed (a JVM or a subprocess goes with
it) and the client gets a short message without file paths or traceback; the next ``reset``
makes a fresh env. A step slower than ``step_timeout`` ends the episode truncated (see
:class:`~agentgym_suite.core.guards.StepTimeout`) and the env is replaced at the next reset. A
session the server expires (idle too long) or closes (the client went away) closes its env;
later messages on it get an error that says so.
"""

from __future__ import annotations

import logging
import re
import threading
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import EnvironmentMetadata

from agentgym_suite.core.errors import AgentGymError
from agentgym_suite.core.guards import guard_env, needs_replacement
from agentgym_suite.serving.models import SuiteAction, SuiteObservation, SuiteState, observation_from_step

logger = logging.getLogger(__name__)

_PATH = re.compile(r"(?:[A-Za-z]:)?(?:[/\\][\w.\-~@+]+){2,}[/\\]?")


class SessionError(RuntimeError):
    """What a session answers instead of an env's own exception (the message is safe to send)."""


@dataclass
class ServeSpec:
    """What a server serves: one registered id, its ``gym.make`` kwargs and the session limits.

    Attributes:
        env_id: a registered env id.
        env_kwargs: keyword arguments for ``gymnasium.make``.
        step_timeout: seconds one step may take (None: no limit).
        show_errors: put the env's own exception text into error messages (paths are still
            masked); off by default, when a client sees only the exception's type.
    """

    env_id: str
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    step_timeout: float | None = None
    show_errors: bool = False
    _task_ids: list[str] | None = field(default=None, repr=False)
    _split: str = field(default="default", repr=False)
    _described: dict[str, str] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def make(self) -> gym.Env:
        """A fresh env of the served id."""
        return guard_env(gym.make(self.env_id, **self.env_kwargs), self.step_timeout)

    def task_ids(self) -> list[str]:
        """The served split's task ids (read once from a probe env, then cached)."""
        self._probe()
        return list(self._task_ids or [])

    def split(self) -> str:
        """The served split's name (the env's ``split`` attribute, or ``default``)."""
        self._probe()
        return self._split

    def describe(self) -> dict[str, str]:
        """What prompts say about the env (its description, action format and instructions), as
        the rollout engine reads them from a local env, so remote prompts are the same."""
        self._probe()
        return dict(self._described)

    def _probe(self) -> None:
        with self._lock:
            if self._task_ids is None:
                probe = gym.make(self.env_id, **self.env_kwargs)
                try:
                    self._task_ids = [str(t) for t in probe.unwrapped.task_ids()]  # type: ignore[attr-defined]
                    self._split = str(getattr(probe.unwrapped, "split", None) or "default")
                    unwrapped = probe.unwrapped
                    fmt = getattr(unwrapped, "action_format", None)
                    self._described = {
                        "env_id": self.env_id,
                        "description": str(getattr(unwrapped, "prompt_description", "")
                                           or f"the {type(unwrapped).__name__} environment"),
                        "action_format": str(getattr(fmt, "name", "") or ""),
                        "action_instructions": str(getattr(fmt, "instructions", "") or ""),
                    }
                finally:
                    _close_quietly(probe)


def public_message(exc: BaseException, when: str, show_errors: bool) -> str:
    """A message about ``exc`` fit to send to a client: the suite's own errors (written for users)
    and, with ``show_errors``, any error's text, with file paths masked; otherwise its type only."""
    if isinstance(exc, (AgentGymError, gym.error.ResetNeeded)) or show_errors:
        text = _PATH.sub("<path>", str(exc)).strip()
        return f"{type(exc).__name__} during {when}: {text}" if text else f"{type(exc).__name__} during {when}"
    return f"the env raised {type(exc).__name__} during {when} (details are in the server's log)"


class ServedEnv(Environment[SuiteAction, SuiteObservation, SuiteState]):
    """A suite env for one OpenEnv session (see the module docstring)."""

    SUPPORTS_CONCURRENT_SESSIONS = True  # every session has its own gym env

    def __init__(self, spec: ServeSpec) -> None:
        super().__init__()
        self.spec = spec
        self._env: gym.Env | None = None
        self._state = SuiteState(env_id=spec.env_id)
        self._closed = False

    # ------------------------------------------------------------------ OpenEnv API
    def reset(self, seed: int | None = None, episode_id: str | None = None, task_id: str | None = None,
              options: dict[str, Any] | None = None) -> SuiteObservation:
        """Start an episode: ``seed`` and ``task_id`` (or ``options``) as ``env.reset`` takes them."""
        self._check_open()
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise SessionError(f"seed must be an integer or null, got {type(seed).__name__}.")
        if options is not None and not isinstance(options, dict):
            raise SessionError(f"options must be an object or null, got {type(options).__name__}.")
        reset_options = dict(options or {})
        if task_id is not None:
            reset_options["task_id"] = str(task_id)
        if self._env is not None and needs_replacement(self._env):
            self._drop_env()
        try:
            if self._env is None:
                self._env = self.spec.make()
            text, info = self._env.reset(seed=seed, options=reset_options or None)
        except Exception as exc:
            raise self._failed(exc, "reset") from None
        self._state = SuiteState(env_id=self.spec.env_id, episode_id=episode_id, step_count=0,
                                 task_id=str(info.get("task_id", "")))
        return observation_from_step(text, 0.0, False, False, info)

    def step(self, action: SuiteAction, timeout_s: float | None = None, **kwargs: Any) -> SuiteObservation:  # type: ignore[override]
        """One ``env.step(action.message)``."""
        self._check_open()
        if self._env is None:
            raise SessionError("no episode is running in this session; send a reset first.")
        try:
            text, reward, terminated, truncated, info = self._env.step(action.message)
        except Exception as exc:
            raise self._failed(exc, "step") from None
        self._state.step_count += 1
        if needs_replacement(self._env):  # the step timed out: free the env now (its cleanup is bounded)
            logger.warning("%s session: %s; the env is closed", self.spec.env_id, info.get("error", "step timed out"))
            self._drop_env()
        return observation_from_step(text, reward, terminated, truncated, info)

    @property
    def state(self) -> SuiteState:
        """The session's episode id, step count, served id and task."""
        return self._state

    def get_metadata(self) -> EnvironmentMetadata:
        """The served id, its one-line summary and the suite's version (no env is made)."""
        from agentgym_suite import __version__
        from agentgym_suite.registration import all_entries

        summary = next((e.summary for e in all_entries() if e.id == self.spec.env_id), "")
        return EnvironmentMetadata(name=self.spec.env_id, version=__version__,
                                   description=f"{self.spec.env_id} from agentgym-suite" + (f": {summary}" if summary else ""))

    def close(self) -> None:
        """Close the session's env (its JVM or subprocess too); later calls get an error."""
        self._closed = True
        self._drop_env()

    # ------------------------------------------------------------------ OpenEnv task API
    def list_splits(self) -> list[str]:
        """The one split a server serves (the env's ``split``, or ``default``)."""
        return [self.spec.split()]

    def list_tasks(self, split: str) -> list[dict[str, Any]]:
        """``[{"id": task_id, "index": i}, ...]`` of the served split."""
        self._check_split(split)
        return [{"id": task_id, "index": i} for i, task_id in enumerate(self.spec.task_ids())]

    def num_tasks(self, split: str) -> int:
        """How many tasks the served split holds."""
        self._check_split(split)
        return len(self.spec.task_ids())

    def get_task(self, split: str, index: int) -> dict[str, Any]:
        """The task at ``index`` (``IndexError`` out of range)."""
        self._check_split(split)
        ids = self.spec.task_ids()
        if not 0 <= index < len(ids):
            raise IndexError(index)
        return {"id": ids[index], "index": index}

    # ------------------------------------------------------------------ internals
    def _check_split(self, split: str) -> None:
        if split not in self.list_splits():
            raise IndexError(f"unknown split {split!r}")

    def _check_open(self) -> None:
        if self._closed:
            raise SessionError("this session was closed by the server (idle too long, or shutting down); "
                               "open a new connection.")

    def _failed(self, exc: BaseException, when: str) -> SessionError:
        logger.warning("%s session: %s failed", self.spec.env_id, when, exc_info=exc)
        self._drop_env()
        message = public_message(exc, when, self.spec.show_errors)
        return SessionError(f"{message}. The episode is over; send a reset to start a new one with a fresh env.")

    def _drop_env(self) -> None:
        env, self._env = self._env, None
        if env is not None:
            _close_quietly(env)


def _close_quietly(env: gym.Env) -> None:
    try:
        env.close()
    except Exception:  # closing a crashed backend may fail again; nothing is left to save
        logger.debug("closing %r failed", env, exc_info=True)
