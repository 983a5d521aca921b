"""Teacher context (ALGORITHMS §3): the privileged text put before a row's prompt.

The teacher is the same pre-update policy whose prompt is prefixed, as raw text before the
chat-templated prompt, with ``"[Privileged Skill Information]\\n{text}\\n\\n"``. The text comes
from one of three sources:

* ``skills`` — the suite's skill texts: ``general.md`` plus the file of the task's family
  (ALFWorld task type, WebShop product category, Search question kind);
* ``oracle`` — the env's oracle walkthrough from the row's state;
* ``env_response`` — the real env's response to the row's action.

When the prefixed prompt is too long, the student prompt loses its oldest tokens (history)
and the privileged text is kept whole.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

PRIVILEGED_HEADER = "[Privileged Skill Information]\n"
SKILLS_DIR = Path(__file__).parent / "skills"

ALFWORLD_TYPES: tuple[tuple[str, str], ...] = (
    ("pick_two_obj", "pick_two"),
    ("look_at_obj_in_light", "look_at_obj_in_light"),
    ("pick_clean_then_place", "clean"),
    ("pick_heat_then_place", "heat"),
    ("pick_cool_then_place", "cool"),
    ("pick_and_place", "pick_and_place"),
)
"""ALFWorld game-path fragments and the skill file of each task type (most specific first)."""

WEBSHOP_CATEGORIES: dict[str, tuple[str, ...]] = {
    "webshop_apparel": ("shirt", "dress", "shoe", "sneaker", "boot", "jacket", "pant", "jean", "sock", "hoodie",
                        "sweater", "skirt", "bra", "legging", "coat", "sandal", "hat", "t-shirt", "shorts"),
    "webshop_beauty": ("shampoo", "conditioner", "lotion", "cream", "serum", "makeup", "lipstick", "nail", "hair",
                       "skin", "perfume", "deodorant", "toothpaste", "soap", "mascara", "brush"),
    "webshop_food": ("snack", "coffee", "tea", "chocolate", "cookie", "sauce", "gluten", "organic", "candy", "nut",
                     "flavor", "protein", "juice", "cereal", "spice", "jerky"),
    "webshop_home": ("table", "chair", "lamp", "pillow", "curtain", "rug", "kitchen", "cable", "charger", "speaker",
                     "headphone", "case", "bed", "sofa", "shelf", "light", "camera", "tv"),
}
"""WebShop product category by keyword of the instruction."""


def task_family(env_id: str, task_id: str | None, task_text: str = "", info: dict[str, Any] | None = None) -> str:
    """The skill family of a task (a file name in the skills directory without ``.md``), or ``""``."""
    info = info or {}
    key = f"{task_id or ''} {info.get('game_file', '')} {info.get('task_type', '')}".lower()
    if env_id.startswith("ALFWorld") or any(frag in key for frag, _ in ALFWORLD_TYPES):
        for frag, family in ALFWORLD_TYPES:
            if frag in key:
                return family
        return ""
    if env_id.startswith("WebShop"):
        words = task_text.lower()
        best, hits = "", 0
        for family, keywords in WEBSHOP_CATEGORIES.items():
            count = sum(1 for w in keywords if w in words)
            if count > hits:
                best, hits = family, count
        return best
    if env_id.startswith("SearchQA"):
        kind = str(info.get("question_type", "") or info.get("source", "")).lower()
        if "comparison" in kind:
            return "search_comparison"
        if "bridge" in kind or "multi" in kind or "musique" in kind or "hotpot" in kind:
            return "search_multi_hop"
        return "search_single_hop"
    return ""


@lru_cache(maxsize=64)
def _read(path: str) -> str:
    return Path(path).read_text(encoding="utf-8").strip()


def skill_text(family: str, skills_dir: str | Path | None = None) -> str:
    """``general.md`` plus ``<family>.md`` from ``skills_dir`` (default: the suite's texts)."""
    root = Path(skills_dir) if skills_dir else SKILLS_DIR
    general = root / "general.md"
    if not general.exists():
        raise FileNotFoundError(
            f"no general.md in skills directory {root}; write one (plus <family>.md files) or unset skills_dir."
        )
    parts = [_read(str(general))]
    if family and re.fullmatch(r"[A-Za-z0-9_\-]+", family) and (root / f"{family}.md").exists():
        parts.append(_read(str(root / f"{family}.md")))
    return "\n\n".join(parts)


def oracle_text(actions: Sequence[str] | None) -> str:
    """Privileged text from an oracle walkthrough."""
    if not actions:
        return "No oracle walkthrough is available from this state."
    steps = "\n".join(f"{i + 1}. {a}" for i, a in enumerate(actions))
    return f"An action sequence that solves the task from the current state:\n{steps}"


def env_response_text(response: str) -> str:
    """Privileged text from the real env's response to the row's action."""
    return f"The environment answers the next action with:\n{response}"


def privileged_prefix(text: str) -> str:
    """The raw text put before the chat-templated student prompt."""
    return f"{PRIVILEGED_HEADER}{text}\n\n"


def teacher_prompt_ids(prefix_ids: Sequence[int], prompt_ids: Sequence[int], max_tokens: int) -> list[int]:
    """Privileged prefix + student prompt, truncating the prompt's oldest tokens, never the prefix.

    If the prefix alone exceeds ``max_tokens`` it is kept whole and only the last quarter of
    the budget (at least one token) is left for the prompt.
    """
    room = max(max_tokens - len(prefix_ids), max(1, max_tokens // 4))
    kept = list(prompt_ids)[-room:]
    return list(prefix_ids) + kept
