"""A small MCP server (the official ``mcp`` SDK's FastMCP): a notebook and a calculator.

What ``MCP-v0``'s fixture, docs/integrations.md and examples/integrations_bridges.py play. Run over stdio by
``gym.make("MCP-v0", server="stdio:python -m agentgym_suite.integrations.mcp.demo_server", ...)``, or over
streamable HTTP with ``python -m agentgym_suite.integrations.mcp.demo_server http 8765`` (then
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
    """Keep a note; answers with its id."""
    NOTES.append(text)
    return f"note-{len(NOTES)}"


@server.tool()
def read_note(note_id: str) -> str:
    """The text of a note, by the id save_note gave."""
    return NOTES[_index(note_id)]


@server.tool()
def delete_note(note_id: str) -> str:
    """Delete a note, by the id save_note gave (the ids of later notes do not change)."""
    NOTES[_index(note_id)] = ""
    return f"deleted {note_id}"


def _index(note_id: str) -> int:
    number = note_id.removeprefix("note-")
    if not number.isdigit() or not 1 <= int(number) <= len(NOTES) or not NOTES[int(number) - 1]:
        raise ValueError(f"no note {note_id!r}; ids look like note-1")
    return int(number) - 1


@server.tool()
def list_notes() -> list[str]:
    """Every note kept so far."""
    return [note for note in NOTES if note]


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "http":
        server.settings.port = int(sys.argv[2])
        server.run(transport="streamable-http")
    else:
        server.run()
