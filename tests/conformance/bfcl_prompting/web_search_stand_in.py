"""A network-free stand-in for bfcl-eval's ``WebSearchAPI``, used on both sides of the agentic cases.

bfcl-eval's web search asks SerpAPI and fetches live pages, so its backend cannot run offline. The
agentic prompting cases compare what can be compared without the network: how a reply is decoded,
written into execution strings and executed (which method gets which argument values, nested calls
run first, result texts). Both bfcl-eval's executor (``regenerate_agentic_cases.py``) and the env
(``web_search_backend=...:WebSearchAPI``) run this one class, which keeps upstream's two functions
with their signatures and argument handling (results sliced by ``max_results``, the URL checked
with ``str.startswith``, fetch errors wrapped as upstream wraps them) over three fixed pages, and
records every call it receives in ``received``.
"""

from __future__ import annotations

from typing import Any

PAGES = [
    {"title": "Burj Khalifa - Wikipedia", "href": "https://en.wikipedia.org/wiki/Burj_Khalifa",
     "body": "The Burj Khalifa is a skyscraper in Dubai, 828 m tall."},
    {"title": "Tallest buildings", "href": "https://example.org/tallest",
     "body": "A list of the tallest buildings in the world."},
    {"title": "Tokyo Skytree", "href": "https://example.org/skytree",
     "body": "Tokyo Skytree is a broadcasting tower, 634 m tall."},
]


class WebSearchAPI:
    """bfcl-eval's web-search functions on :data:`PAGES`, recording the arguments they receive."""

    def __init__(self) -> None:
        self.show_snippet = True
        self.received: list[tuple[str, dict[str, Any]]] = []

    def _load_scenario(self, initial_config: dict, long_context: bool = False) -> None:
        self.show_snippet = initial_config["show_snippet"]

    def search_engine_query(self, keywords: str, max_results: int | None = 10, region: str | None = "wt-wt") -> list:
        """The fixed pages, cut as upstream cuts its organic results (``[:max_results]``)."""
        self.received.append(("search_engine_query", {"keywords": keywords, "max_results": max_results,
                                                      "region": region}))
        results = []
        for page in PAGES[:max_results]:
            item = {"title": page["title"], "href": page["href"]}
            if self.show_snippet:
                item["body"] = page["body"]
            results.append(item)
        return results

    def fetch_url_content(self, url: str, mode: str = "raw") -> dict:
        """A fixed page's text, with upstream's URL check and error wrapping."""
        self.received.append(("fetch_url_content", {"url": url, "mode": mode}))
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"Invalid URL: {url}")
        try:
            page = next((p for p in PAGES if p["href"] == url), None)
            if page is None:
                raise RuntimeError(f"404 Client Error: Not Found for url: {url}")
            if mode == "raw":
                return {"content": f"<html><body><h1>{page['title']}</h1><p>{page['body']}</p></body></html>"}
            elif mode == "markdown":
                return {"content": f"# {page['title']}\n\n{page['body']}\n"}
            elif mode == "truncate":
                return {"content": f"{page['title']}\n{page['body']}"}
            else:
                raise ValueError(f"Unsupported mode: {mode}")
        except Exception as e:
            return {"error": f"An error occurred while fetching {url}: {str(e)}"}
