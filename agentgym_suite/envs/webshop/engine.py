"""The WebShop site as a text state machine: pages, clickables, transitions and rendering.

Pages and their clickables (all matched lower-case, as WebShop's text env does):

* ``search`` — the start page; only ``search[query]`` works here.
* ``results`` — 10 products per page out of the top 50 hits of a Pyserini-compatible BM25
  (:mod:`agentgym_suite.envs.shared.lucene_bm25`, over the document text WebShop indexes): ``back to search``,
  ``< prev`` (from page 2), ``next >`` (while more results follow), and each product's ASIN.
* ``item`` — a product: ``back to search``, ``< prev`` (to the results), one clickable per
  option value, ``description``, ``features``, ``reviews`` and ``buy now``.
* ``sub`` — description / features / reviews of the item: ``back to search``, ``< prev``.
* ``done`` — after ``buy now``; nothing is clickable.

Observations follow WebShop's "simple" text mode: the page's visible texts joined by
`` [SEP] ``, each page opening with the instruction. Like upstream's text mode, the item page
does not say which options are chosen; ``show_selected_options=True`` adds a non-upstream
``Selected options: name: value`` element after the option lists (off by default, and a declared
departure from the official harness when on).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from agentgym_suite.envs.shared.lucene_bm25 import LuceneBM25Index
from agentgym_suite.envs.webshop.catalogue import Catalogue

SEARCH_RETURN_N = 50
PRODUCT_WINDOW = 10
BACK_TO_SEARCH = "back to search"
NEXT_PAGE = "next >"
PREV_PAGE = "< prev"
BUY_NOW = "buy now"
SUB_PAGES = ("description", "features", "reviews")
SEP = " [SEP] "
MAX_QUERY_CHARS = 500
_ACTION = re.compile(r"^\s*(search|click)\s*\[(.*)\]\s*$", re.DOTALL)


def product_document(product: dict[str, Any]) -> str:
    """The text WebShop indexes a product under: title, description, first feature, option lists."""
    option_text = ", and ".join(f"{name}: {', '.join(values)}" for name, values in product["options"].items())
    first_feature = product["BulletPoints"][0] if product["BulletPoints"] else ""
    return " ".join([product["Title"], product["Description"], first_feature, option_text]).lower()


class ProductSearch:
    """Pyserini-compatible BM25 search over a catalogue's products (top 50 ASINs per query, like WebShop)."""

    def __init__(self, catalogue: Catalogue) -> None:
        self._index = LuceneBM25Index([p["asin"] for p in catalogue.products],
                                      [product_document(p) for p in catalogue.products])
        self._cache: dict[str, list[str]] = {}

    def search(self, query: str) -> list[str]:
        """ASINs of the top hits for ``query``, best first."""
        key = query.lower().strip()
        if key not in self._cache:
            if len(self._cache) > 4096:
                self._cache.clear()
            self._cache[key] = [asin for asin, _ in self._index.search(key, SEARCH_RETURN_N)]
        return list(self._cache[key])


@dataclass
class Transition:
    """The result of one action on the site."""

    valid: bool
    message: str = ""
    bought: bool = False


@dataclass
class Session:
    """One shopper's browsing state."""

    instruction: str
    page: str = "search"
    keywords: str = ""
    results: list[str] = field(default_factory=list)
    page_number: int = 1
    asin: str | None = None
    options: dict[str, str] = field(default_factory=dict)
    sub_page: str = ""
    visited: list[str] = field(default_factory=list)
    show_selected_options: bool = False
    """Add the non-upstream ``Selected options`` element to the item page."""

    # ------------------------------------------------------------------ clickables
    def clickables(self, catalogue: Catalogue) -> dict[str, tuple[str, str]]:
        """Lower-case clickable text -> (kind, value) on the current page."""
        found: dict[str, tuple[str, str]] = {}
        if self.page == "results":
            found[BACK_TO_SEARCH] = ("nav", BACK_TO_SEARCH)
            if self.page_number > 1:
                found[PREV_PAGE] = ("nav", PREV_PAGE)
            if self.page_number * PRODUCT_WINDOW < len(self.results):
                found[NEXT_PAGE] = ("nav", NEXT_PAGE)
            for asin in self.page_results():
                found[asin.lower()] = ("product", asin)
        elif self.page == "item":
            product = catalogue.by_asin[self.asin or ""]
            found[BACK_TO_SEARCH] = ("nav", BACK_TO_SEARCH)
            found[PREV_PAGE] = ("nav", PREV_PAGE)
            for name in SUB_PAGES:
                found[name] = ("sub", name)
            found[BUY_NOW] = ("buy", BUY_NOW)
            for option_name, values in product["options"].items():
                for value in values:
                    found[value] = ("option", option_name)
        elif self.page == "sub":
            found[BACK_TO_SEARCH] = ("nav", BACK_TO_SEARCH)
            found[PREV_PAGE] = ("nav", PREV_PAGE)
        return found

    def admissible_actions(self, catalogue: Catalogue) -> list[str]:
        """Commands accepted on the current page."""
        if self.page == "search":
            return ["search[<your query>]"]
        return [f"click[{text}]" for text in self.clickables(catalogue)]

    def page_results(self) -> list[str]:
        """ASINs shown on the current results page."""
        start = (self.page_number - 1) * PRODUCT_WINDOW
        return self.results[start:start + PRODUCT_WINDOW]

    # ------------------------------------------------------------------ transitions
    def act(self, command: str, catalogue: Catalogue, engine: ProductSearch) -> Transition:
        """Apply ``search[...]`` or ``click[...]``; invalid commands leave the state unchanged."""
        match = _ACTION.match(command)
        if match is None:
            return Transition(False, "Invalid action: write search[your query] on the search page or click[element] "
                                     "with one of the clickable elements.")
        verb, argument = match.group(1), match.group(2).strip().lower()
        if verb == "search":
            if self.page != "search":
                return Transition(False, "Invalid action: you can only search on the search page; "
                                         "click[back to search] first.")
            if not argument:
                return Transition(False, "Invalid action: the search query is empty; write search[your query].")
            if len(argument) > MAX_QUERY_CHARS:
                return Transition(False, f"Invalid action: the search query is {len(argument)} characters long; "
                                         f"keep it under {MAX_QUERY_CHARS}.")
            self.keywords = argument
            self.results = engine.search(argument)
            self.page, self.page_number, self.asin, self.options = "results", 1, None, {}
            return Transition(True)
        clickables = self.clickables(catalogue)
        if argument == "search" or argument not in clickables:
            shown = ", ".join(clickables) if clickables else "nothing (use search[your query])"
            return Transition(False, f"Invalid action: {argument!r} is not clickable on this page. "
                                     f"Clickable: {shown}.")
        kind, value = clickables[argument]
        if kind == "buy":
            self.page = "done"
            return Transition(True, bought=True)
        if kind == "product":
            self.asin, self.options, self.page = value, {}, "item"
            self.visited.append(value)
        elif kind == "option":
            self.options[value] = argument
        elif kind == "sub":
            self.page, self.sub_page = "sub", argument
        elif argument == BACK_TO_SEARCH:
            self.page, self.keywords, self.results, self.asin, self.options = "search", "", [], None, {}
            self.page_number = 1
        elif argument == NEXT_PAGE:
            self.page_number += 1
        elif argument == PREV_PAGE:
            if self.page == "results":
                self.page_number -= 1
            elif self.page == "item":
                self.page, self.asin, self.options = "results", None, {}
            else:
                self.page = "item"
        return Transition(True)

    # ------------------------------------------------------------------ rendering
    def render(self, catalogue: Catalogue, *, score: float | None = None) -> str:
        """The current page in WebShop's simple text mode."""
        head = ["Instruction:", self.instruction]
        if self.page == "search":
            return SEP.join(["WebShop", *head, "Search"])
        if self.page == "results":
            parts = [*head, "Back to Search", f"Page {self.page_number} (Total results: {len(self.results)})"]
            if self.page_number > 1:
                parts.append("< Prev")
            if self.page_number * PRODUCT_WINDOW < len(self.results):
                parts.append("Next >")
            if not self.results:
                parts.append("No products matched your query.")
            for asin in self.page_results():
                product = catalogue.by_asin[asin]
                parts += [asin, product["Title"], product["Price"]]
            return SEP.join(parts)
        product = catalogue.by_asin[self.asin] if self.asin else None
        if self.page == "item" and product is not None:
            parts = [*head, "Back to Search", "< Prev"]
            for option_name, values in product["options"].items():
                parts += [option_name, *values]
            if self.options and self.show_selected_options:
                parts.append("Selected options: " + ", ".join(f"{k}: {v}" for k, v in self.options.items()))
            parts += [product["Title"], f"Price: {product['Price']}", f"Rating: {product['Rating']}",
                      "Description", "Features", "Reviews", "Buy Now"]
            return SEP.join(parts)
        if self.page == "sub" and product is not None:
            parts = [*head, "Back to Search", "< Prev"]
            if self.sub_page == "description":
                parts.append(product["Description"] or "No description.")
            elif self.sub_page == "features":
                parts += [b for b in product["BulletPoints"] if b] or ["No features listed."]
            else:
                for review in product["Reviews"]:
                    parts += [str(review["title"]), str(review["score"]), str(review["body"])]
                if not product["Reviews"]:
                    parts.append("No reviews yet.")
            return SEP.join(parts)
        bought = self.asin or ""
        chosen = ", ".join(f"{k}: {v}" for k, v in self.options.items()) or "none"
        shown = "unknown" if score is None else f"{score:.3f}"
        return SEP.join(["Thank you for shopping with us!", f"Purchased: {bought}", f"Options: {chosen}",
                         "Your score (min 0.0, max 1.0)", shown])
