"""The banking agent's policy (its system prompt) per retrieval configuration, built from upstream's prompt
templates in the data folder (``prompts/<template>.md`` with ``{{component:NAME}}`` parts from ``prompts/components``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentgym_suite.envs.tau2.banking.knowledge import Document


@dataclass(frozen=True)
class Variant:
    """One of upstream's retrieval configurations that this suite plays."""

    template: str
    kb_search: str | None = None
    grep: bool = False
    prompt: str = "standard"


VARIANTS: dict[str, Variant] = {
    "bm25_grep": Variant("classic_rag_bm25", kb_search="bm25", grep=True),
    "bm25": Variant("classic_rag_bm25_no_grep", kb_search="bm25"),
    "grep_only": Variant("grep_only", grep=True),
    "no_knowledge": Variant("no_knowledge"),
    "full_kb": Variant("full_kb", prompt="full_kb"),
    "golden_retrieval": Variant("required_docs", prompt="golden"),
    "qwen_embeddings_grep": Variant("classic_rag_qwen", kb_search="dense", grep=True),
    "qwen_embeddings": Variant("classic_rag_qwen_no_grep", kb_search="dense"),
    "openai_embeddings_grep": Variant("classic_rag_openai", kb_search="dense", grep=True),
    "openai_embeddings": Variant("classic_rag_openai_no_grep", kb_search="dense"),
}
"""Upstream's configurations this suite plays (the embedding ones need an ``embedder``)."""

NOT_PLAYED = {
    "alltools": "needs OpenAI's hosted embeddings and a sandboxed shell",
    "alltools-qwen": "needs OpenRouter's hosted embeddings and a sandboxed shell",
    "terminal_use": "needs a sandboxed shell", "terminal_use_write": "needs a sandboxed shell",
}
NOT_PLAYED.update({f"{base}_reranker{tail}": "needs an LLM reranker" for base in ("bm25", "qwen_embeddings", "openai_embeddings")
                   for tail in ("", "_grep")})
DEFAULT_VARIANT = "bm25_grep"
LEADERBOARD_VARIANT = "alltools"
"""The configuration upstream defaults to and the leaderboard's banking entries use (BM25 + OpenAI
``text-embedding-3-large`` + a sandboxed shell)."""

_COMPONENT = re.compile(r"\{\{component:(\w+)\}\}")


def variant(name: str) -> Variant:
    if name in VARIANTS:
        return VARIANTS[name]
    if name in NOT_PLAYED or name == "AllTools":
        raise ValueError(f"retrieval={name!r} is upstream's configuration but {NOT_PLAYED.get(name, NOT_PLAYED['alltools'])}, "
                         f"which this suite does not run; choose one of {sorted(VARIANTS)}.")
    raise ValueError(f"retrieval={name!r}; choose one of {sorted(VARIANTS)}.")


def build_policy(prompts: Path, chosen: Variant, documents: tuple[Document, ...], task: dict[str, Any] | None) -> str:
    """The system-prompt policy of ``chosen`` (for ``golden_retrieval``: with ``task``'s required documents inlined)."""
    text = (prompts / f"{chosen.template}.md").read_text(encoding="utf-8")
    text = _COMPONENT.sub(lambda m: (prompts / "components" / f"{m.group(1)}.md").read_text(encoding="utf-8"), text)
    if chosen.prompt == "full_kb" and "{{full_knowledge_base}}" in text:
        full = "\n\n---\n\n".join(f"## {d.title}\n\n{d.content}" for d in documents)
        text = text.replace("{{full_knowledge_base}}", full)
    if chosen.prompt == "golden":
        by_title = {d.title: d for d in documents}
        by_id = {d.id: d for d in documents}
        wanted = [by_title.get(ref) or by_id.get(ref) for ref in ((task or {}).get("required_documents") or [])]
        parts = [f"## {d.title}\n\n{d.content}" for d in wanted if d is not None]
        text = text.replace("{{required_documents}}", "\n\n---\n\n".join(parts) if parts else "(No documents provided)")
    if not text.strip():
        raise ValueError(f"the {chosen.template}.md policy template is empty")
    return text
