"""Recipe cards: the authors' released hyper-parameters next to a resolved config.

A card (``configs/recipes/<method>.yaml``, written by ``configs/recipes/build_cards.py`` from
the upstream scripts) holds, per released env script, the value each of our config fields must
take (``ours``), the upstream keys and lines it comes from, and a hand-written list of
``departures`` (field, our value, reason). :func:`compare` checks a resolved
:class:`~agentgym_suite.trainers.AgentGRPOConfig` against one entry: every field is the card's
value, or a listed departure with exactly that value; anything else is an unlisted difference.
:func:`format_comparison` prints the two side by side (``agentgym train --print-recipe``).
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from agentgym_suite.registration import env_class

SAME, DEPARTURE, UNLISTED, STALE = "same", "departure", "UNLISTED", "STALE"
"""Status of one field: equal to the card; a listed departure; a difference the card does not
list; a listed departure whose value is not the config's (the card or the config is out of date)."""


@dataclass(frozen=True)
class FieldCheck:
    """One field of a config against its card."""

    field: str
    card: Any
    ours: Any
    status: str
    reason: str = ""
    source: str = ""


def recipes_dir(config_path: str | Path) -> Path:
    """The cards' folder: ``recipes/`` next to the config file (``configs/recipes``)."""
    return Path(config_path).resolve().parent / "recipes"


def load_cards(folder: str | Path) -> dict[str, dict[str, Any]]:
    """Every card in ``folder`` by method name."""
    cards = {}
    for path in sorted(Path(folder).glob("*.yaml")):
        card = yaml.safe_load(path.read_text(encoding="utf-8"))
        if isinstance(card, dict) and "envs" in card:
            cards[str(card.get("method", path.stem))] = card
    return cards


def find_entry(config_path: str | Path, cards: dict[str, dict[str, Any]] | None = None
               ) -> tuple[dict[str, Any], str, dict[str, Any]] | None:
    """``(card, env_key, entry)`` whose ``configs`` list names ``config_path`` (by file name), or None."""
    cards = load_cards(recipes_dir(config_path)) if cards is None else cards
    name = Path(config_path).name
    for card in cards.values():
        for env_key, entry in (card.get("envs") or {}).items():
            if any(Path(c).name == name for c in entry.get("configs") or []):
                return card, env_key, entry
    return None


def resolved_value(config: Any, field: str) -> Any:
    """The value a config really runs with for a card field: plain fields as set; ``credit_params.x``
    as the credit plug-in resolves them (its defaults and the trainer's); ``env_kwargs.x`` as set, else
    the env's own default."""
    if field.startswith("credit_params."):
        from agentgym_suite.trainers.agent_grpo import build_credit

        return getattr(build_credit(config).config, field.split(".", 1)[1], None)
    if field.startswith("env_kwargs."):
        key = field.split(".", 1)[1]
        if key in (config.env_kwargs or {}):
            return config.env_kwargs[key]
        return _env_default(config.train_env_id, key)
    return getattr(config, field, None)


def _env_default(env_id: str, key: str) -> Any:
    parameter = inspect.signature(env_class(env_id)).parameters.get(key)
    return None if parameter is None or parameter.default is inspect.Parameter.empty else parameter.default


def same(a: Any, b: Any) -> bool:
    """Equal, with floats compared to a relative 1e-9 (1e-6 written as 1.0e-06 and so on)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b or a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=0.0)
    return bool(a == b)


def compare(entry: dict[str, Any], config: Any) -> list[FieldCheck]:
    """Every card field of ``entry`` against ``config``, plus listed departures of fields the card
    does not hold (extra departures: our own fields the authors have no value for)."""
    departures = {d["field"]: d for d in entry.get("departures") or []}
    checks = []
    fields = dict(entry.get("ours") or {})
    for name in departures:
        fields.setdefault(name, {"value": departures[name].get("card"), "from": []})
    for name, spec in fields.items():
        card_value, ours = spec.get("value"), resolved_value(config, name)
        source = ", ".join(spec.get("from") or [])
        listed = departures.get(name)
        if listed is None:
            status = SAME if same(card_value, ours) else UNLISTED
            checks.append(FieldCheck(name, card_value, ours, status, source=source))
        elif same(listed.get("ours"), ours) and not same(card_value, ours):
            checks.append(FieldCheck(name, card_value, ours, DEPARTURE, str(listed.get("reason", "")), source))
        else:
            why = f"the departure lists ours={listed.get('ours')!r}"
            checks.append(FieldCheck(name, card_value, ours, STALE, why, source))
    return checks


def problems(checks: list[FieldCheck]) -> list[FieldCheck]:
    """The checks a recipe test fails on (unlisted differences, stale departures)."""
    return [c for c in checks if c.status in (UNLISTED, STALE)]


def format_comparison(card: dict[str, Any], env_key: str, entry: dict[str, Any], checks: list[FieldCheck]) -> str:
    """The card beside the resolved config, one field a line, departures marked with their reasons."""
    upstream = card.get("upstream") or {}
    lines = [
        f"recipe: {card.get('method')} / {env_key}  ({upstream.get('repo')}@{str(upstream.get('commit'))[:12]}, "
        f"{entry.get('script')})",
        f"{'field':34} {'card':>26} {'this config':>26}  status",
    ]
    marks = {SAME: "", DEPARTURE: "departure", UNLISTED: "UNLISTED DIFFERENCE", STALE: "STALE DEPARTURE"}
    for check in checks:
        lines.append(f"{check.field:34} {_short(check.card):>26} {_short(check.ours):>26}  {marks[check.status]}")
        if check.reason:
            lines.append(f"{'':36}-> {check.reason}")
    for note in card.get("notes") or []:
        lines.append(f"note: {note}")
    return "\n".join(lines)


def _short(value: Any) -> str:
    value = getattr(value, "value", value)  # enums (TRL's SchedulerType) as their text
    text = repr(value) if not isinstance(value, str) else value
    return text if len(text) <= 26 else text[:23] + "..."
