"""A small MCP server (the official ``mcp`` SDK's FastMCP) for the MCP-v0 example: a notebook and a calculator.

Run over stdio by ``gym.make("MCP-v0", server="stdio:python examples/mcp_notes_server.py", ...)``, or
over streamable HTTP with ``python examples/mcp_notes_server.py http 8765`` (then
``server="http://127.0.0.1:8765/mcp"``).
"""

from __future__ import annotations

import sys

from mcp.server.fastmcp import FastMCP

server = FastMCP("notes", log_level="WARNING")
NOTES: list[str] = []


@server.tool()
def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


@server.tool()
def save_note(text: str) -> str:
    """Keep a note."""
    NOTES.append(text)
    return f"saved note {len(NOTES)}"


@server.tool()
def list_notes() -> list[str]:
    """Every note kept so far."""
    return list(NOTES)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "http":
        server.settings.port = int(sys.argv[2])
        server.run(transport="streamable-http")
    else:
        server.run()
