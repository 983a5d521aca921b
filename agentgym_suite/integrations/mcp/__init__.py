"""MCP bridges: any MCP server as a suite env (``MCP-v0``: :mod:`.env`), and a suite tool env served
as an MCP server (``agentgym serve --mcp``: :mod:`.server`).

Built on the official ``mcp`` SDK (the ``mcp`` extra); see docs/integrations.md. Names are
imported lazily, so ``agentgym --help`` does not load the SDK.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "McpEnv": "agentgym_suite.integrations.mcp.env",
    "McpConnection": "agentgym_suite.integrations.mcp.session",
    "McpServerError": "agentgym_suite.integrations.mcp.session",
    "ServerAddress": "agentgym_suite.integrations.mcp.session",
    "McpEnvServer": "agentgym_suite.integrations.mcp.server",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
