"""MkDocs hook: the env catalogue page is generated when the site is built.

``docs/catalogue.md`` is what ``agentgym list --markdown`` prints; the site shows that output as of
the build, so a new env's card appears on the site with no hand-run step. The committed file is
kept equal to it by ``tests/test_env_catalogue.py``, which prints the one command that rewrites it.
"""

from __future__ import annotations

from typing import Any

CATALOGUE_PAGE = "catalogue.md"


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    """The catalogue page's text, regenerated from the registered envs' cards; other pages unchanged."""
    if page.file.src_uri != CATALOGUE_PAGE:
        return markdown
    from agentgym_suite.commands.list_envs import markdown as catalogue_markdown

    return catalogue_markdown()
