"""What the model-played roles of an evaluation cost: calls, tokens, cache hits, seconds and money per role.

An ``agentgym eval`` run keeps a ledger of its roles' model calls (``<out>/model_calls.sqlite``,
written by :mod:`agentgym_suite.llm.role_client` from every process of the run) and answers
them from a cache folder (``--model-cache DIR``; by default ``model-cache/`` beside the run's
folder, so runs side by side share it; ``--no-model-cache``: none). :func:`account` sums the
ledger into ``summary.json``'s ``model_calls``::

    {"roles": {"user": {"calls": 12, "cache_hits": 0, "prompt_tokens": ..., "completion_tokens": ...,
                         "wall_s": ..., "cost": 0.0021}, "judge": {...}},
     "total": {...}, "this_invocation": {"calls": 0, "cache_hits": 14},
     "cache": "/runs/model-cache", "prices": "prices.json"}

``calls`` are the calls paid for (sent to a model), ``cache_hits`` those the cache answered;
tokens and cost count paid calls only. A cost appears when ``--prices FILE`` gives the model's
prices: a JSON object of model -> ``{"prompt": USD per million tokens, "completion": USD per
million tokens}``, the model named as in the spec (``openai:gpt-4o-mini@https://…``) or by its
name alone (``gpt-4o-mini``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentgym_suite.llm.call_cache import LEDGER_FILE, CallLedger
from agentgym_suite.llm.role_client import ModelCallSettings

DEFAULT_CACHE_DIR = "model-cache"
"""The default cache folder's name, beside the run's output folder."""
COUNTS = ("calls", "cache_hits", "prompt_tokens", "completion_tokens", "wall_s")


def default_cache_dir(out_dir: str | Path) -> Path:
    """``model-cache/`` beside ``out_dir`` (runs in the same parent folder share it)."""
    out = Path(out_dir).resolve()
    return out.parent / DEFAULT_CACHE_DIR


def call_settings(out_dir: str | Path, model_cache: str | Path | None = "auto",
                  replay_only: tuple[str, ...] = ()) -> ModelCallSettings:
    """The run's cache and ledger: ``model_cache`` ``"auto"`` (the default folder), a folder, or None (no cache)."""
    if model_cache == "auto":
        cache: Path | None = default_cache_dir(out_dir)
    else:
        cache = None if model_cache is None else Path(model_cache).resolve()
    return ModelCallSettings(cache_dir=cache, ledger=Path(out_dir).resolve() / LEDGER_FILE, replay_only=replay_only)


def load_prices(path: str | Path) -> dict[str, dict[str, float]]:
    """Prices per model from a JSON file (see the module docstring); raises ValueError saying what is wrong."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"--prices {path}: cannot read it as JSON ({exc}); give an object such as "
                         '{"gpt-4o-mini": {"prompt": 0.15, "completion": 0.6}} (USD per million tokens).') from None
    if not isinstance(data, dict):
        raise ValueError(f"--prices {path}: the file must hold a JSON object of model -> prices.")
    prices: dict[str, dict[str, float]] = {}
    for model, entry in data.items():
        if not isinstance(entry, dict) or not {"prompt", "completion"} <= set(entry):
            raise ValueError(f"--prices {path}: {model!r} needs 'prompt' and 'completion' prices (USD per million tokens).")
        try:
            prices[str(model)] = {"prompt": float(entry["prompt"]), "completion": float(entry["completion"])}
        except (TypeError, ValueError):
            raise ValueError(f"--prices {path}: {model!r}'s prices must be numbers.") from None
        if min(prices[str(model)].values()) < 0:
            raise ValueError(f"--prices {path}: {model!r}'s prices must not be negative.")
    return prices


def price_of(model: str, prices: dict[str, dict[str, float]]) -> dict[str, float] | None:
    """The prices of ``model`` (by its full id, or by the name between ``kind:`` and ``@``), or None."""
    if model in prices:
        return prices[model]
    name = model.split(":", 1)[-1].split("@", 1)[0]
    return prices.get(name)


def served_envs_note(env_workers: Any) -> dict[str, Any] | None:
    """What ``summary.json``'s ``model_calls`` says under ``served_envs`` when the envs are sessions on
    servers (``env_workers`` of kind ``openenv``), None otherwise.

    A served env plays its model-played roles in the server's process, with the server's own settings
    (``agentgym serve --model-cache DIR --model-ledger FILE``): this run's cache settings do not reach it,
    its cache file may be on another machine, and its calls are in no ledger of this run.
    """
    if getattr(env_workers, "kind", None) != "openenv":
        return None
    return {
        "env_workers": str(env_workers),
        "cache": "the servers' own (agentgym serve --model-cache DIR); this run's --model-cache does not reach them",
        "accounted": False,
        "note": "the envs run on OpenEnv servers, whose simulated users, judges and world models call their models "
                "there: those calls are cached by the servers (if started with --model-cache) and are not counted "
                "here (agentgym serve --model-ledger FILE records them on the server).",
    }


def _empty() -> dict[str, Any]:
    return {key: 0 for key in COUNTS}


def account(out_dir: str | Path, invocation: str = "", prices: dict[str, dict[str, float]] | None = None
            ) -> dict[str, Any]:
    """The ledger of the run in ``out_dir`` summed per role and in total (empty dict when no role called a model).

    ``cost`` (USD) appears per role and in total when ``prices`` are given; it is None for a role
    whose models are not all priced, and the unpriced models are listed under ``unpriced``.
    """
    path = Path(out_dir) / LEDGER_FILE
    if not path.exists():
        return {}
    rows = CallLedger(path).rows()
    if not rows:
        return {}
    roles: dict[str, dict[str, Any]] = {}
    now = {"calls": 0, "cache_hits": 0}
    unpriced: set[str] = set()
    for row in rows:
        stats = roles.setdefault(row["role"], {**_empty(), "models": [], "cost": 0.0})
        hit = bool(row["cached"])
        stats["cache_hits" if hit else "calls"] += 1
        stats["prompt_tokens"] += row["prompt_tokens"]
        stats["completion_tokens"] += row["completion_tokens"]
        stats["wall_s"] += row["wall_s"]
        if row["model"] not in stats["models"]:
            stats["models"].append(row["model"])
        if row["invocation"] == invocation:
            now["cache_hits" if hit else "calls"] += 1
        if prices is not None and not hit:
            price = price_of(row["model"], prices)
            if price is None:
                unpriced.add(row["model"])
                stats["cost"] = None
            elif stats["cost"] is not None:
                stats["cost"] += (row["prompt_tokens"] * price["prompt"] + row["completion_tokens"] * price["completion"]) / 1e6
    total: dict[str, Any] = _empty()
    for stats in roles.values():
        for key in COUNTS:
            total[key] += stats[key]
        if prices is None:
            del stats["cost"]
    if prices is not None:
        costs = [stats["cost"] for stats in roles.values()]
        total["cost"] = None if any(c is None for c in costs) else sum(costs)
    out: dict[str, Any] = {"roles": dict(sorted(roles.items())), "total": total, "this_invocation": now}
    if unpriced:
        out["unpriced"] = sorted(unpriced)
    return out


def model_calls_table(summary: dict[str, Any]) -> Any:
    """A rich table of the summary's ``model_calls`` (one row per role and the total), or None without any."""
    calls = summary.get("model_calls") or {}
    if not calls.get("roles"):
        return None
    from rich.table import Table

    now = calls.get("this_invocation") or {}
    table = Table(title=f"model-played roles · this invocation: {now.get('calls', 0)} calls, "
                        f"{now.get('cache_hits', 0)} cache hits")
    priced = "cost" in calls.get("total", {})
    for column in ("role", "calls", "cache hits", "prompt tokens", "completion tokens", "wall (s)",
                   *(("cost (USD)",) if priced else ()), "models"):
        table.add_column(column, justify="left" if column in ("role", "models") else "right", overflow="fold")

    def cells(stats: dict[str, Any]) -> list[str]:
        row = [str(stats.get(key, 0)) for key in ("calls", "cache_hits", "prompt_tokens", "completion_tokens")]
        row.append(f"{float(stats.get('wall_s', 0.0)):.1f}")
        if priced:
            cost = stats.get("cost")
            row.append("-" if cost is None else f"{cost:.4f}")
        return row

    for role, stats in calls["roles"].items():
        table.add_row(role, *cells(stats), ", ".join(stats.get("models", [])))
    table.add_row("total", *cells(calls.get("total", {})), "")
    return table


def rescore_lines(summary: dict[str, Any]) -> list[str]:
    """What a rescored run's summary says about who scored what (empty for other runs)."""
    info = summary.get("rescore")
    if not info:
        return []
    return [f"rescored {info.get('source_run')}: judged by {info.get('judge')} (the run was judged by "
            f"{info.get('source_judge')}); {info.get('changed_scores')} of {info.get('episodes')} episode scores "
            f"changed, {info.get('diverged')} replays diverged from the record"]


__all__ = ["DEFAULT_CACHE_DIR", "account", "served_envs_note", "model_calls_table", "rescore_lines", "call_settings", "default_cache_dir", "load_prices", "price_of"]
