"""How a SkillRise trial reads the model's answers, by the rules of the released SkillRise code.

* A Solve answer is projected as the released ALFWorld trials project it: the whole text is
  lower-cased; the command is what lies between the first ``<action>`` and the first
  ``</action>`` (stripped; empty when the closing tag comes first), and the answer is valid
  exactly when both tags occur. Without them the command is the text's last 30 characters
  (lower-cased, unstripped) and the answer is invalid. Nothing else counts: no ``<think>``
  block is required and no other language check is made (the recipe runs the model in
  non-thinking mode).
* A Curate answer's document is what lies between the last ``<skill>`` and the last
  ``</skill>`` (tags matched exactly), stripped and cut to ``max_chars``; it may be empty
  (an empty document then replaces the old one). Without such a block the answer is invalid
  and the old document stays.
"""

from __future__ import annotations

from typing import NamedTuple

TAIL_CHARS = 30
"""Characters of an answer without ``<action>`` tags that become its command."""


class SolveProjection(NamedTuple):
    """A Solve answer read as a command."""

    command: str
    """The command sent to the base env and kept in the history."""
    valid: bool
    """Whether the answer held ``<action>`` and ``</action>``."""


def project_solve_action(text: str) -> SolveProjection:
    """The command of a Solve answer and whether the answer was valid (see the module docstring)."""
    lowered = text.lower() if isinstance(text, str) else ""
    start, end = lowered.find("<action>"), lowered.find("</action>")
    if start < 0 or end < 0:
        return SolveProjection(lowered[-TAIL_CHARS:], False)
    return SolveProjection(lowered[start + len("<action>"):end].strip(), True)


def parse_skill(text: str, max_chars: int) -> str | None:
    """The document of a Curate answer (possibly empty), or None when it holds no
    ``<skill>…</skill>`` block (or is not a string)."""
    if not isinstance(text, str):
        return None
    start, end = text.rfind("<skill>"), text.rfind("</skill>")
    if start < 0 or end < 0 or end <= start:
        return None
    return text[start + len("<skill>"):end].strip()[:max_chars]
