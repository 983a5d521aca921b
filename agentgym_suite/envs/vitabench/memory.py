"""Memory backends for VitaBench 2.0's sequences of sub-tasks per user.

A memory is updated with each finished episode's messages and read with the next sub-task's
request; what ``read`` returns is put into the agent's system prompt.
"""

from __future__ import annotations

from typing import Any, Callable, Protocol


def _lines(interactions: list[dict[str, Any]]) -> list[str]:
    return [f"{m.get('role')}: {m.get('content')}" for m in interactions if m.get("content") and m.get("role") in ("user", "assistant", "tool")]


class Memory(Protocol):
    """``read(query) -> str`` and ``update(interactions)``."""

    def read(self, query: str) -> str:
        """Text relevant to ``query``."""

    def update(self, interactions: list[dict[str, Any]]) -> None:
        """Store a finished episode's messages."""


class NoMemory:
    """Remembers nothing."""

    def read(self, query: str) -> str:
        """Always empty."""
        return ""

    def update(self, interactions: list[dict[str, Any]]) -> None:
        """Ignore the interactions."""


class FullContextMemory:
    """Returns every stored line (the last ``max_chars`` characters)."""

    def __init__(self, max_chars: int = 20_000) -> None:
        self.max_chars = max_chars
        self.lines: list[str] = []

    def read(self, query: str) -> str:
        """All history, truncated from the front."""
        return "\n".join(self.lines)[-self.max_chars:]

    def update(self, interactions: list[dict[str, Any]]) -> None:
        """Append the episode's lines."""
        self.lines.extend(_lines(interactions))


class RewriteMemory:
    """Keeps one summary, rewritten after each episode by ``summarise(previous, new_lines) -> str``."""

    def __init__(self, summarise: Callable[[str, str], str]) -> None:
        self.summarise = summarise
        self.summary = ""

    def read(self, query: str) -> str:
        """The current summary."""
        return self.summary

    def update(self, interactions: list[dict[str, Any]]) -> None:
        """Fold the episode into the summary."""
        self.summary = self.summarise(self.summary, "\n".join(_lines(interactions)))


class BM25Memory:
    """Stores lines and returns the ``top_k`` most relevant to the query (bm25s)."""

    def __init__(self, top_k: int = 5) -> None:
        self.top_k = top_k
        self.lines: list[str] = []
        self._index: Any = None

    def read(self, query: str) -> str:
        """Top lines for ``query`` in store order."""
        if not self.lines or not query.strip():
            return ""
        import bm25s

        if self._index is None:
            self._index = bm25s.BM25()
            self._index.index(bm25s.tokenize(self.lines, show_progress=False), show_progress=False)
        k = min(self.top_k, len(self.lines))
        docs, scores = self._index.retrieve(bm25s.tokenize([query], show_progress=False), k=k, show_progress=False)
        picked = sorted(int(d) for d, s in zip(docs[0], scores[0]) if s > 0)
        return "\n".join(self.lines[i] for i in picked)

    def update(self, interactions: list[dict[str, Any]]) -> None:
        """Add lines; the index is rebuilt on the next read."""
        self.lines.extend(_lines(interactions))
        self._index = None


def make_memory(kind: str | Memory, summarise: Callable[[str, str], str] | None = None) -> Memory:
    """``none``, ``full``, ``rewrite`` (needs ``summarise``), ``bm25``, or a ready Memory."""
    if not isinstance(kind, str):
        return kind
    if kind == "none":
        return NoMemory()
    if kind == "full":
        return FullContextMemory()
    if kind == "bm25":
        return BM25Memory()
    if kind == "rewrite":
        if summarise is None:
            raise ValueError("memory='rewrite' needs summarise=callable(previous_summary, new_text) -> str.")
        return RewriteMemory(summarise)
    raise ValueError(f"Unknown memory {kind!r}; choose none, full, rewrite or bm25.")
