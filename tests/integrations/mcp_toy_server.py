"""A small MCP server for the bridge tests: the suite's demo server (a notebook and a calculator,
:mod:`agentgym_suite.integrations.mcp.demo_server`) with hostile tools added.

Run as ``python mcp_toy_server.py`` (stdio) or ``python mcp_toy_server.py http PORT`` (streamable HTTP).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # this checkout's package, whatever the server's environment

from agentgym_suite.integrations.mcp.demo_server import server  # noqa: E402  (its add, save_note, read_note, list_notes...)


@server.tool()
def fail(reason: str) -> str:
    """Always fails with the reason given."""
    raise ValueError(f"refused: {reason}")


@server.tool()
def huge(n: int) -> str:
    """A result of n characters."""
    return "x" * n


@server.tool()
def stall(seconds: float) -> str:
    """Answers after the given seconds (blocking the server)."""
    time.sleep(seconds)
    return "woke up"


@server.tool()
def die() -> str:
    """Kills the server process."""
    os._exit(3)


@server.tool()
def garble() -> str:
    """Writes a line that is not JSON-RPC onto the protocol stream, then answers."""
    sys.stdout.write("this is not json\n")
    sys.stdout.flush()
    return "garbled"


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "http":
        server.settings.port = int(sys.argv[2])
        server.run(transport="streamable-http")
    else:
        server.run()


def mentions_milk(task, calls, answer) -> tuple[float, bool]:
    """A task verifier named by import path: the reply must mention the saved note."""
    won = "milk" in answer.lower() and any(c["name"] == "list_notes" for c in calls)
    return float(won), won
