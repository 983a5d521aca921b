"""BFCL's web-search tools on a local corpus: no network, no SerpAPI key.

bfcl-eval's ``WebSearchAPI`` sends ``search_engine_query`` to DuckDuckGo through SerpAPI and
``fetch_url_content`` to the live page. :class:`LocalWebSearchAPI` keeps the two functions,
their arguments and their result format, but answers from a :class:`WebCorpus`:

* by default one page per source the benchmark's possible-answer file cites for each hop of
  each question (``source``: the sub-question, its answer and the URL it came from), pages
  that share a URL merged; every other question's pages are the distractors;
* or any JSONL file of ``{"href", "title", "body", "content"?}`` records (``web_corpus=PATH``).

Search ranks pages with BM25 over title, snippet and URL words. Scores made this way are
**not** bfcl-eval's live-web numbers: the generated pages state each hop's answer in one line,
while the live web has to be read; treat them as a reproducible offline variant.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Sequence
from urllib.parse import unquote, urlsplit

from agentgym_suite.envs.shared.bm25_index import BM25Index

_TEXT_FRAGMENT = "#:~:text="
_SLUG_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9']*")


@dataclass(frozen=True)
class WebPage:
    """One page of the local web: its URL, title, search snippet and full text."""

    href: str
    title: str
    body: str
    content: str


def canonical_url(url: str) -> str:
    """A URL without its text fragment and trailing slash, so cited variants of a page meet."""
    url = url.strip()
    if _TEXT_FRAGMENT in url:
        url = url.split(_TEXT_FRAGMENT, 1)[0]
    return url.rstrip("/")


def title_from_url(url: str) -> str:
    """A page title read from a URL: its last meaningful path segment, then the site name."""
    parts = urlsplit(url)
    site = parts.netloc.lower().removeprefix("www.")
    segments = [s for s in unquote(parts.path).split("/") if s]
    for segment in reversed(segments):
        stem = re.sub(r"\.(html?|php|aspx?)$", "", segment)
        words = " ".join(_SLUG_WORD.findall(stem.replace("_", " ").replace("-", " ")))
        if sum(ch.isalpha() for ch in words) > 3:
            return f"{words[:1].upper()}{words[1:]} - {site}"
    return site


def _sentence(subquestion: str, answer: str) -> str:
    question = subquestion.strip().rstrip("?.").strip()
    return f"{question}: {str(answer).strip()}."


def pages_from_hops(records: Iterable[dict[str, Any]]) -> list[WebPage]:
    """One page per cited source URL of the web-search possible answers (hops of one URL merged)."""
    facts: dict[str, list[str]] = {}
    raw_url: dict[str, str] = {}
    for record in records:
        for hop in record.get("source") or []:
            url = str(hop.get("source") or "").strip()
            if not url.startswith(("http://", "https://")):
                continue
            key = canonical_url(url)
            raw_url.setdefault(key, key)
            line = _sentence(str(hop.get("subquestion", "")), str(hop.get("answer", "")))
            if line not in facts.setdefault(key, []):
                facts[key].append(line)
    pages = []
    for key, lines in facts.items():
        title = title_from_url(key)
        body = " ".join(lines)
        pages.append(WebPage(href=raw_url[key], title=title, body=body, content=f"{title}\n\n" + "\n".join(lines)))
    return pages


def pages_from_jsonl(path: str | Path) -> list[WebPage]:
    """Pages from a JSONL file of ``{"href", "title", "body", "content"?}`` records."""
    file = Path(path)
    if not file.is_file():
        raise FileNotFoundError(f"web_corpus {file} does not exist; give a JSONL file of href/title/body records.")
    pages = []
    with file.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                href, title, body = str(item["href"]), str(item["title"]), str(item["body"])
            except (ValueError, KeyError, TypeError) as exc:
                raise ValueError(f"{file}:{number} is not a JSON object with href, title and body ({exc}).") from None
            pages.append(WebPage(canonical_url(href), title, body, str(item.get("content") or f"{title}\n\n{body}")))
    return pages


class WebCorpus:
    """Pages searchable with BM25 and fetchable by URL."""

    def __init__(self, pages: Sequence[WebPage]) -> None:
        self.pages = list(pages)
        self._by_url = {canonical_url(p.href): p for p in self.pages}
        words = [f"{p.title} {p.body} {' '.join(_SLUG_WORD.findall(p.href))}" for p in self.pages]
        self._index = BM25Index(words)

    def search(self, query: str, k: int) -> list[WebPage]:
        """Up to ``k`` pages for ``query``, best first (none when no word of it is indexed)."""
        return [self.pages[i] for i, _ in self._index.search(query, k)]

    def page(self, url: str) -> WebPage | None:
        """The page at ``url`` (text fragment and trailing slash ignored), or None."""
        return self._by_url.get(canonical_url(url))


@lru_cache(maxsize=4)
def load_corpus(source: str | None = None) -> WebCorpus:
    """The corpus of ``source``: None for the pages generated from the benchmark's hop sources,
    or a JSONL path."""
    if source is None:
        from agentgym_suite.envs.bfcl.data import load_answer_records

        return WebCorpus(pages_from_hops(load_answer_records("web_search_base").values()))
    return WebCorpus(pages_from_jsonl(source))


class LocalWebSearchAPI:
    """bfcl-eval's ``WebSearchAPI`` (same functions, arguments and results) on a :class:`WebCorpus`.

    Args:
        corpus: the pages to search and fetch.
    """

    def __init__(self, corpus: WebCorpus) -> None:
        self._corpus = corpus
        self.show_snippet = True

    def _load_scenario(self, initial_config: dict[str, Any], long_context: bool = False) -> None:
        self.show_snippet = bool(initial_config.get("show_snippet", True))

    def search_engine_query(self, keywords: str, max_results: int | None = 10, region: str | None = "wt-wt") -> list[dict[str, str]]:
        """Search the corpus; results carry ``title`` and ``href``, and ``body`` when snippets are shown.
        ``region`` is accepted and ignored (the corpus has one region).

        The ranked pages (at least 10, as one page of a search engine) are cut with ``[:max_results]``,
        as bfcl-eval cuts its search results: ``None`` keeps them all, a negative count drops from the
        end, and a count that is no integer (``'3'``, ``2.0``) raises the ``TypeError`` upstream raises."""
        page_size = max_results if isinstance(max_results, int) and max_results > 10 else 10
        results = []
        for page in self._corpus.search(str(keywords), page_size)[:max_results]:
            item = {"title": page.title, "href": page.href}
            if self.show_snippet:
                item["body"] = page.body
            results.append(item)
        return results

    def fetch_url_content(self, url: str, mode: str = "raw") -> dict[str, str]:
        """The page at ``url`` as ``raw`` HTML, ``markdown`` or ``truncate`` (plain text), in bfcl-eval's format
        (a ``url`` that is no string fails as upstream's ``url.startswith`` fails)."""
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"Invalid URL: {url}")
        page = self._corpus.page(url)
        if page is None:
            return {"error": f"An error occurred while fetching {url}: 404 Client Error: Not Found for url: {url}"}
        if mode == "raw":
            paragraphs = "".join(f"<p>{html.escape(line)}</p>" for line in page.content.splitlines()[1:] if line.strip())
            return {"content": f"<html><head><title>{html.escape(page.title)}</title></head><body><h1>"
                               f"{html.escape(page.title)}</h1>{paragraphs}</body></html>"}
        if mode == "markdown":
            head, _, rest = page.content.partition("\n")
            return {"content": f"# {head}\n{rest}"}
        if mode == "truncate":
            return {"content": "\n".join(line for line in page.content.splitlines() if line.strip())}
        return {"error": f"An error occurred while fetching {url}: Unsupported mode: {mode}"}


WEB_SEARCH_ENV_VAR = "AGENTGYM_BFCL_WEB_SEARCH"
"""Environment variable naming the web-search backend when the env is not given one."""
WEB_SEARCH_BACKENDS = ("local", "serpapi")
"""``local``: :class:`LocalWebSearchAPI` (offline, the default); ``serpapi``: bfcl-eval's own
``WebSearchAPI`` (DuckDuckGo through SerpAPI, live pages; needs ``SERPAPI_API_KEY``). Any other
value is read as ``package.module:ClassName`` of a class with bfcl-eval's two functions and
``_load_scenario``."""
SERPAPI_INSTALL = "pip install google-search-results html2text beautifulsoup4 requests"


def backend_name(name: str | None) -> str:
    """The backend to use: ``name``, else ``$AGENTGYM_BFCL_WEB_SEARCH``, else ``local``."""
    import os

    chosen = (name or os.environ.get(WEB_SEARCH_ENV_VAR) or "local").strip()
    if chosen not in WEB_SEARCH_BACKENDS and ":" not in chosen:
        raise ValueError(f"web_search_backend={chosen!r}: choose {' or '.join(WEB_SEARCH_BACKENDS)}, or give "
                         "package.module:ClassName of your own backend.")
    return chosen


def make_backend(name: str, corpus: str | None = None) -> Any:
    """A fresh web-search backend instance (``_load_scenario`` not yet called)."""
    import importlib
    import os

    from agentgym_suite.core.errors import BackendNotInstalledError

    if name == "local":
        return LocalWebSearchAPI(load_corpus(corpus))
    if name == "serpapi":
        if not os.environ.get("SERPAPI_API_KEY"):
            raise ValueError("web_search_backend='serpapi' is bfcl-eval's live search: set SERPAPI_API_KEY "
                             "(a SerpAPI key), or use the offline 'local' backend.")
        try:
            module = importlib.import_module("bfcl_eval.eval_checker.multi_turn_eval.func_source_code.web_search")
        except ImportError as exc:
            raise BackendNotInstalledError(f"bfcl-eval's live web search needs more packages ({exc}); install "
                                           f"them with:  {SERPAPI_INSTALL}") from exc
        return module.WebSearchAPI()
    module_name, _, class_name = name.partition(":")
    try:
        backend_class = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"web_search_backend={name!r} does not name an importable class ({exc}).") from exc
    return backend_class()


def departure(name: str, corpus: str | None) -> str | None:
    """Why web-search scores from this backend are not the leaderboard's (None for bfcl-eval's own)."""
    if name == "serpapi":
        return None
    if name == "local":
        source = f"the pages in {corpus}" if corpus else "pages generated from the benchmark's cited hop sources"
        return (f"BFCL web search answered from a local corpus ({source}), not the live web through SerpAPI as "
                f"bfcl-eval does; set web_search_backend='serpapi' (or ${WEB_SEARCH_ENV_VAR}=serpapi) with a key")
    return f"BFCL web search answered by {name}, not bfcl-eval's SerpAPI backend"
