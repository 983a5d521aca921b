"""Action formats: turn a model's raw text into a command, and say whether it was valid.

Command envs (TextWorld, ALFWorld, ScienceWorld, WebShop, SearchQA) accept raw model output;
an :class:`ActionFormat` extracts the command. Parsing never raises: a bad action becomes a
:class:`ParsedAction` with ``valid=False`` and a ``reason`` an agent can read.

Formats:

* ``plain`` — the text is the command (surrounding whitespace stripped).
* ``think_action`` — the seeds' format ``<think>…</think><action>…</action>``. Following
  verl-agent, the action is invalid when the ``<action>`` tag or the ``<think>`` tag is
  missing, or when the text holds CJK characters; when ``<action>…</action>`` is present its
  content is still extracted (and executed by default), only the validity flag drops.
* ``action_tag`` — only ``<action>…</action>`` counts (SkillRise's released rule, for models run
  without a thinking block): the text is lower-cased, the command lies between the first
  ``<action>`` and the first ``</action>``, and the action is valid exactly when both occur.
* ``search`` — ``<search>query</search>`` or ``<answer>text</answer>`` (Search-R1), with the
  ``<think>`` block optional unless ``require_think=True``.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Protocol

from agentgym_suite.core.spaces import MAX_ACTION_CHARS

CJK_PATTERN = re.compile(r"[\u4e00-\u9fff]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
MAX_COMMAND_CHARS = 1_000
"""Longest command an env is sent; longer extracted commands are invalid."""
INVALID_TAIL_CHARS = 30
"""verl-agent sends the last 30 characters of an unparseable output to the env."""


@dataclass(frozen=True)
class ParsedAction:
    """The result of parsing one raw action.

    Attributes:
        command: the command to execute, or ``None`` when nothing executable was found.
        valid: whether the raw text followed the format's rules.
        reason: why it is invalid ("" when valid), phrased for the agent.
        kind: the tag the command came from (``action``, ``search``, ``answer``, ``plain``).
        think: the content of ``<think>`` if present.
        raw: the raw text as received.
    """

    command: str | None
    valid: bool
    reason: str = ""
    kind: str = "plain"
    think: str | None = None
    raw: str = ""

    def fallback_command(self, chars: int = INVALID_TAIL_CHARS) -> str:
        """The verl-agent fallback: the last ``chars`` characters of the raw text (30; WebShop's 20)."""
        return self.raw[-chars:].strip()


class ActionFormat(Protocol):
    """Extracts a command from raw model text."""

    name: str
    instructions: str

    def parse(self, raw: str) -> ParsedAction:
        """Parse ``raw``; never raises."""
        ...


_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Zs", "Zl", "Zp"})
"""Unicode categories that show nothing: control and format characters (NUL, ESC, zero-width
space, byte-order mark) and separators."""


def has_visible_text(text: str) -> bool:
    """True when ``text`` holds at least one character that is not whitespace, a control
    character or an invisible format character."""
    return any(not ch.isspace() and unicodedata.category(ch) not in _INVISIBLE_CATEGORIES for ch in text)


def encoding_problem(text: str) -> str:
    """Why ``text`` cannot be encoded as UTF-8 ('' when it can).

    Only lone surrogates (``'\\ud800'``) fail; a backend that talks UTF-8 (ScienceWorld's
    py4j bridge, a JSON log, a tokenizer) would fail on them.
    """
    if text.isascii():
        return ""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"it holds a lone surrogate character ({ascii(exc.object[exc.start:exc.end])} at {exc.start}), which cannot be encoded as UTF-8"
    return ""


def unusable_action(raw: object, kind: str = "plain", noun: str = "action",
                    max_chars: int = MAX_ACTION_CHARS) -> ParsedAction | None:
    """An invalid :class:`ParsedAction` when ``raw`` is unusable as text; else None.

    Unusable: not a string, blank, too long, without a visible character (only control or
    formatting characters, e.g. NUL bytes), or not encodable as UTF-8 (lone surrogates).
    ``noun`` names the text in the reason (``the action is empty``, ``the message is empty``);
    ``max_chars`` is the length limit (a tool env's follows its declared token budget).
    """
    if not isinstance(raw, str):
        problem = f"the action must be a string, got {type(raw).__name__}"
    elif not raw.strip():
        problem = f"the {noun} is empty"
    elif len(raw) > max_chars:
        problem = f"the {noun} is {len(raw)} characters long; the limit is {max_chars}"
    elif not has_visible_text(raw):
        problem = f"the {noun} has no visible text, only control or formatting characters"
    elif encoding := encoding_problem(raw):
        problem = f"the {noun} cannot be used: {encoding}"
    else:
        return None
    return ParsedAction(None, False, problem, kind=kind, raw=raw if isinstance(raw, str) else "")


def _command_problem(command: str) -> str:
    if not command:
        return "the command is empty"
    if len(command) > MAX_COMMAND_CHARS:
        return f"the command is {len(command)} characters long; the limit is {MAX_COMMAND_CHARS}"
    if _CONTROL.search(command):
        return "the command contains control characters"
    if "<" in command and re.search(r"</?[a-zA-Z_]+>", command):
        return "the command contains tags; tags must not be nested"
    return ""


def _single_tag(raw: str, tag: str) -> tuple[str | None, str]:
    """Return (content, problem) for exactly one well-formed ``<tag>…</tag>``."""
    opens = len(re.findall(rf"<{tag}>", raw))
    closes = len(re.findall(rf"</{tag}>", raw))
    if opens == 0 and closes == 0:
        return None, f"missing <{tag}>…</{tag}>"
    if opens != closes:
        return None, f"unbalanced <{tag}> tags ({opens} opening, {closes} closing)"
    if opens > 1:
        return None, f"more than one <{tag}> block"
    start = raw.index(f"<{tag}>") + len(tag) + 2
    end = raw.find(f"</{tag}>", start)
    if end < 0:
        return None, f"</{tag}> comes before <{tag}>"
    return raw[start:end].strip(), ""


@dataclass(frozen=True)
class PlainFormat:
    """The whole text is the command."""

    name: str = "plain"
    instructions: str = "Reply with one command and nothing else."
    reject_cjk: bool = False

    def parse(self, raw: str) -> ParsedAction:
        unusable = unusable_action(raw)
        if unusable:
            return unusable
        command = raw.strip()
        problem = _command_problem(command)
        if not problem and self.reject_cjk and CJK_PATTERN.search(command):
            problem = "the command contains CJK characters"
        if problem:
            return ParsedAction(None, False, problem, raw=raw)
        return ParsedAction(command, True, raw=raw)


@dataclass(frozen=True)
class ThinkActionFormat:
    """The seeds' ``<think>…</think><action>…</action>`` format (verl-agent rules)."""

    name: str = "think_action"
    instructions: str = (
        "First reason step by step inside <think> </think>. Then give exactly one admissible "
        "action inside <action> </action>."
    )

    def parse(self, raw: str) -> ParsedAction:
        unusable = unusable_action(raw, "action")
        if unusable:
            return unusable
        command, problem = _single_tag(raw, "action")
        if command is not None:
            problem = _command_problem(command)
            if problem:
                command = None
        think, think_problem = _single_tag(raw, "think")
        reasons = [p for p in (problem, think_problem) if p]
        if CJK_PATTERN.search(raw):
            reasons.append("the text contains CJK characters")
        return ParsedAction(command, not reasons, "; ".join(reasons), kind="action", think=think, raw=raw)


@dataclass(frozen=True)
class ActionTagFormat:
    """``<action>…</action>`` alone decides (SkillRise's released projection): lower-cased, first tags."""

    name: str = "action_tag"
    instructions: str = (
        "First reason step by step about the current situation. Then choose one admissible action and "
        "write it inside <action> </action> tags."
    )

    def parse(self, raw: str) -> ParsedAction:
        unusable = unusable_action(raw, "action")
        if unusable:
            return unusable
        lowered = raw.lower()
        start, end = lowered.find("<action>"), lowered.find("</action>")
        if start < 0 or end < 0:
            return ParsedAction(None, False, "missing <action>…</action>", kind="action", raw=lowered)
        command = lowered[start + len("<action>"):end].strip()
        problem = _command_problem(command)
        # the tags decide validity; a command the env cannot take is refused, not sent
        return ParsedAction(None if problem else command, True, kind="action", raw=lowered)


@dataclass(frozen=True)
class SearchFormat:
    """Search-R1's ``<search>query</search>`` / ``<answer>text</answer>`` format."""

    name: str = "search"
    require_think: bool = False
    instructions: str = (
        "Reason inside <think> </think> if you like. To look something up, write "
        "<search> query </search>; the results come back inside <information> </information>. "
        "When you know the answer, write <answer> answer </answer>."
    )

    def parse(self, raw: str) -> ParsedAction:
        unusable = unusable_action(raw, "search")
        if unusable:
            return unusable
        think, think_problem = _single_tag(raw, "think")
        found: list[tuple[str, str]] = []
        problems: list[str] = []
        for tag in ("search", "answer"):
            content, tag_problem = _single_tag(raw, tag)
            if content is not None:
                found.append((tag, content))
            elif not tag_problem.startswith("missing"):
                problems.append(tag_problem)
        if len(found) == 2:
            problems.append("give either <search> or <answer>, not both")
        elif not found and not problems:
            problems.append("missing <search>…</search> or <answer>…</answer>")
        if self.require_think and think_problem:
            problems.append(think_problem)
        if problems:
            return ParsedAction(None, False, "; ".join(problems), kind="search", think=think, raw=raw)
        kind, content = found[0]
        problem = _command_problem(content)
        if problem:
            return ParsedAction(None, False, problem, kind=kind, think=think, raw=raw)
        return ParsedAction(content, True, kind=kind, think=think, raw=raw)


ACTION_FORMATS: dict[str, type] = {"plain": PlainFormat, "think_action": ThinkActionFormat, "action_tag": ActionTagFormat,
                                   "search": SearchFormat}


def get_action_format(spec: str | ActionFormat) -> ActionFormat:
    """Return an action format by name (``plain``, ``think_action``, ``action_tag``, ``search``) or pass one through."""
    if not isinstance(spec, str):
        return spec
    try:
        return ACTION_FORMATS[spec]()
    except KeyError:
        raise ValueError(f"Unknown action format {spec!r}; choose one of {sorted(ACTION_FORMATS)}.") from None
