"""Passage retrievers behind one small protocol: local BM25 and Search-R1's HTTP retrieval server.

A retriever's :meth:`~Retriever.search` returns :class:`Passage` objects or raises
:class:`RetrievalError`; the env turns that error into an observation, so a slow or broken
server never crashes a rollout.

The HTTP retriever speaks the API of Search-R1's ``retrieval_server.py``: ``POST <url>`` with
``{"queries": [...], "topk": k, "return_scores": true}``, answered by
``{"result": [[{"document": {"contents": "\\"Title\\"\\ntext"}, "score": s}, ...]]}``.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Protocol, Sequence, runtime_checkable

from agentgym_suite.envs.shared.bm25_index import BM25Index


class RetrievalError(RuntimeError):
    """The retriever could not answer (timeout, HTTP error, malformed reply)."""


@dataclass(frozen=True)
class Passage:
    """One retrieved passage."""

    title: str
    text: str
    score: float | None = None
    raw: str | None = field(default=None, compare=False, repr=False)
    """The corpus's ``contents`` exactly as stored, when the passage came from one."""

    @property
    def contents(self) -> str:
        """Search-R1's document ``contents`` form: as stored, else the quoted title, a newline, the text."""
        return self.raw if self.raw is not None else f'"{self.title}"\n{self.text}'

    @classmethod
    def from_contents(cls, contents: str, score: float | None = None) -> Passage:
        """Split Search-R1 ``contents`` into title (quotes removed) and text, keeping the original."""
        head, _, body = contents.partition("\n")
        return cls(head.strip().strip('"'), body.strip(), score, raw=contents)


@runtime_checkable
class Retriever(Protocol):
    """Anything that returns the top-k passages for a query."""

    def search(self, query: str, topk: int) -> list[Passage]:
        """Return up to ``topk`` passages, best first; raise :class:`RetrievalError` on failure."""
        ...


class BM25Retriever:
    """BM25 over an in-memory list of passages."""

    def __init__(self, passages: Sequence[Passage]) -> None:
        self.passages = list(passages)
        self._index = BM25Index([f"{p.title} {p.text}" for p in self.passages])

    def search(self, query: str, topk: int) -> list[Passage]:
        hits = self._index.search(query, topk)
        return [Passage(self.passages[i].title, self.passages[i].text, score) for i, score in hits]


class HTTPRetriever:
    """Client of a Search-R1-style retrieval server (e.g. an e5 index over Wikipedia-2018).

    Args:
        url: the endpoint, e.g. ``http://127.0.0.1:8000/retrieve``.
        timeout: seconds to wait for an answer.
    """

    def __init__(self, url: str, timeout: float = 10.0) -> None:
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"retriever url {url!r} must start with http:// or https:// (e.g. http://127.0.0.1:8000/retrieve).")
        self.url = url
        self.timeout = float(timeout)

    def search(self, query: str, topk: int) -> list[Passage]:
        body = json.dumps({"queries": [query], "topk": int(topk), "return_scores": True}).encode("utf-8")
        request = urllib.request.Request(self.url, data=body, headers={"Content-Type": "application/json"}, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                reply = json.loads(response.read().decode("utf-8"))
        except urllib.error.HTTPError as err:
            raise RetrievalError(f"the retrieval server answered HTTP {err.code}") from err
        except (urllib.error.URLError, TimeoutError, OSError) as err:
            reason = getattr(err, "reason", err)
            raise RetrievalError(f"the retrieval server at {self.url} did not answer ({reason})") from err
        except (ValueError, UnicodeDecodeError) as err:
            raise RetrievalError("the retrieval server sent a reply that is not JSON") from err
        return self._parse(reply)[:topk]

    @staticmethod
    def _parse(reply: Any) -> list[Passage]:
        try:
            items = reply["result"][0]
            passages = []
            for item in items:
                document = item.get("document", item) if isinstance(item, dict) else {}
                score = item.get("score") if isinstance(item, dict) and "document" in item else None
                passages.append(Passage.from_contents(str(document["contents"]), None if score is None else float(score)))
            return passages
        except (KeyError, IndexError, TypeError, AttributeError, ValueError) as err:
            raise RetrievalError("the retrieval server's reply lacks result[0][i].document.contents") from err
