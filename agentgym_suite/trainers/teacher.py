"""Teacher context (ALGORITHMS §3): the privileged text put before a row's prompt.

The teacher is the same pre-update policy whose prompt is prefixed, as raw text before the
chat-templated prompt, with ``"[Privileged Skill Information]\\n{text}\\n\\n"``. The text comes
from one of three sources:

* ``skills`` — the suite's skill texts: ``general.md`` plus the file of the task's family,
  which the env reports at reset as ``info["task_family"]`` (ALFWorld task type, WebShop
  product category, Search question kind; see ``TextEnv.task_family``);
* ``oracle`` — the env's oracle walkthrough from the row's state;
* ``env_response`` — the real env's response to the row's action.

When the prefixed prompt is too long, the student prompt loses its oldest tokens (history)
and the privileged text is kept whole.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Sequence

PRIVILEGED_HEADER = "[Privileged Skill Information]\n"
SKILLS_DIR = Path(__file__).parent / "skills"


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
