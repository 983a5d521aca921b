"""verifiers bridges: a verifiers environment as a suite env (``Verifiers-v0``: :mod:`.env`), and any suite
env as a verifiers environment (:func:`load_environment`, :mod:`.environment`).

Built on the official ``verifiers`` package (the ``verifiers`` extra; its classic
``vf.Environment`` API, 0.3.x); see docs/integrations.md. Names are imported lazily.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "VerifiersEnv": "agentgym_suite.integrations.verifiers.env",
    "VerifiersEpisodeError": "agentgym_suite.integrations.verifiers.stepped",
    "load_environment": "agentgym_suite.integrations.verifiers.environment",
    "SuiteEnvironment": "agentgym_suite.integrations.verifiers.environment",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
