"""Exceptions raised by the suite. Every message says what went wrong and what to do."""

from __future__ import annotations

from typing import Any, Sequence


class AgentGymError(Exception):
    """Base class of every error the suite raises on purpose."""


class DataNotFoundError(AgentGymError, FileNotFoundError):
    """A benchmark's data files are missing from the data directory."""


class UnknownTaskError(AgentGymError, KeyError):
    """A task id that the env's split does not contain."""

    def __str__(self) -> str:  # KeyError would otherwise quote the whole message
        return str(self.args[0]) if self.args else ""


class BackendNotInstalledError(AgentGymError, ImportError):
    """An optional backend package (alfworld, scienceworld, bfcl-eval, vllm) is not installed."""


class NoNetworkError(AgentGymError, ConnectionError):
    """A download was asked for but the upstream host cannot be reached."""


class ResetOptionsError(AgentGymError, TypeError, ValueError):
    """``reset(options=...)`` that is not a mapping, or holds a key the env does not accept.

    A ``TypeError`` (the wrong kind of object) and a ``ValueError`` (a wrong key), so either
    ``except`` clause catches it.
    """


class ClosedEnvError(AgentGymError, RuntimeError):
    """``step`` or ``reset`` on an env after its ``close()``: make a new env instead."""


class EnvNotCopyableError(AgentGymError, TypeError):
    """``copy.deepcopy`` of an env whose backend cannot be copied (a game engine, a JVM, a lock)."""


class BatchActionError(AgentGymError, RuntimeError):
    """A batched agent call (``Agent.act_batch``) that could not act in some envs.

    It lives here, below both the agents and the rollout engine, because agents raise it and the
    engine's agent policy catches it (failing only the envs without an action).

    Attributes:
        actions: one action per env of the call, None where it failed.
        errors: one exception per env, None where the action is good.
    """

    def __init__(self, actions: Sequence[Any], errors: Sequence[BaseException | None]) -> None:
        self.actions = list(actions)
        self.errors = list(errors)
        failed = [e for e in self.errors if e is not None]
        first = f": {type(failed[0]).__name__}: {failed[0]}" if failed else ""
        super().__init__(f"{len(failed)} of {len(self.errors)} envs got no action{first}")


def missing_backend(package: str, extra: str) -> BackendNotInstalledError:
    """Build the error for a missing optional backend, with the exact install command."""
    return BackendNotInstalledError(
        f"This environment needs the optional package '{package}', which is not installed. "
        f"Install it with:  pip install 'agentgym-suite[{extra}]'"
    )
