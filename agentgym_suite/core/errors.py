"""Exceptions raised by the suite. Every message says what went wrong and what to do."""

from __future__ import annotations


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


def missing_backend(package: str, extra: str) -> BackendNotInstalledError:
    """Build the error for a missing optional backend, with the exact install command."""
    return BackendNotInstalledError(
        f"This environment needs the optional package '{package}', which is not installed. "
        f"Install it with:  pip install 'agentgym-suite[{extra}]'"
    )
