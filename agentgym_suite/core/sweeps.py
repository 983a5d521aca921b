"""A benchmark's evaluation sweep, as a declaration its env package owns.

``agentgym eval ENV --sweep NAME[:ARGS]`` runs several evaluations of one agent (the variants) and
combines them into one aggregate: a benchmark's overall score over its categories, a
leaderboard view over its domains, a comparison of memory backends. A benchmark declares each
sweep beside its env (``envs/<benchmark>/sweep.py``, named by ``TextEnv.sweeps()``) as a
:class:`Sweep`: a pure function from the request to the variants (env-kwargs overlays, or
another env id, plus evaluation settings of their own) and a pure aggregate from every
variant's result (its summary and its episode records) to a :class:`SweepOutcome`: data, an
optional table and the files to write. Nothing here runs an evaluation, prints or writes:
:mod:`agentgym_suite.evaluation.sweep` runs the variants resumably, renders the table and
writes the files, so an env package never imports the evaluation layer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence


@dataclass(frozen=True)
class Variant:
    """One evaluation of a sweep.

    ``folder`` is where it runs under the sweep's output directory (default: ``name``; ``""``
    runs it in the output directory itself, for a one-variant sweep). ``env_id`` replaces the
    swept env id (a trial env run over the swept one); ``options`` replace evaluation settings
    (keyword arguments of :func:`~agentgym_suite.evaluation.runner.evaluate`, e.g. ``max_turns``).
    """

    name: str
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    env_id: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    folder: str | None = None
    replace_kwargs: bool = False
    """True: ``env_kwargs`` are the variant's whole kwargs, not an overlay on the swept ones."""

    def out_dir(self, root: Path) -> Path:
        """Where this variant runs."""
        folder = self.name if self.folder is None else self.folder
        return root / folder if folder else root


@dataclass(frozen=True)
class SweepRequest:
    """What a sweep is asked for: ``agentgym eval ENV_ID --sweep NAME:ARGS`` with these settings."""

    env_id: str
    args: str
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    """The evaluation settings every variant shares (``k``, ``max_turns``, ``episodes``...)."""
    agent: str = ""
    """The agent's name as reports show it."""
    agent_model: str | None = None
    """The agent's model backend spec (None when the agent is not a model), for variants that follow it."""
    out_dir: Path = Path(".")
    """The sweep's output directory (each variant runs in a folder of it)."""


@dataclass
class VariantResult:
    """One finished variant: its ``summary.json`` data, where it ran, and its episode records.

    ``records`` are the run's trajectory records (``rollout.Trajectory``): an aggregate reads
    ``task_id``, ``attempt``, ``score``, ``won``, ``broken``/``failed`` and each turn's ``info``.
    """

    name: str
    summary: dict[str, Any]
    out_dir: Path
    records: Sequence[Any] = ()


@dataclass
class SweepTable:
    """A table for the terminal: a title, column headers, rows of cell text and a caption.

    ``left`` names the columns aligned left (the others align right); ``sections`` are row
    indexes before which a separating line goes.
    """

    title: str
    columns: list[str]
    rows: list[list[str]] = field(default_factory=list)
    caption: str = ""
    left: tuple[str, ...] = ()
    sections: tuple[int, ...] = ()


@dataclass
class SweepOutcome:
    """A sweep's aggregate.

    ``data`` is written to ``sweep.json`` (and printed by ``--json``); ``table`` is printed (None:
    each variant's summary is printed instead); ``files`` are further JSON files written into the
    sweep's output directory (file name -> data); ``notes`` are lines printed after the table;
    ``value`` is the benchmark's own typed result, for callers of the library.
    """

    data: dict[str, Any]
    table: SweepTable | None = None
    notes: list[str] = field(default_factory=list)
    files: dict[str, Any] = field(default_factory=dict)
    value: Any = None


@dataclass(frozen=True)
class Sweep:
    """A benchmark's declared sweep.

    ``variants(request)`` returns the variants for ``request.args`` (raising ValueError with the
    accepted syntax on bad input); ``aggregate(request, results)`` combines the finished variants
    (``results``: variant name -> :class:`VariantResult`, in variant order). ``any_env``: the
    sweep applies to every env id (declared once, by the env that plays over the others).
    ``alias``: an older ``agentgym eval`` flag (``--NAME VALUE``) that means ``--sweep name:VALUE``;
    ``alias_help`` is its help text.
    """

    name: str
    usage: str
    variants: Callable[[SweepRequest], list[Variant]]
    aggregate: Callable[[SweepRequest, dict[str, VariantResult]], SweepOutcome]
    any_env: bool = False
    alias: str = ""
    alias_help: str = ""
    alias_metavar: str = ""


def split_list(args: str, what: str, example: str) -> list[str]:
    """A comma list of distinct names (ValueError when empty or repeated)."""
    names = [n.strip() for n in args.split(",") if n.strip()]
    if not names:
        raise ValueError(f"the sweep needs at least one {what}, e.g. {example}")
    if len(set(names)) != len(names):
        raise ValueError(f"a {what} is listed twice: {args!r}")
    return names


def summaries_outcome(request: SweepRequest, results: dict[str, VariantResult]) -> SweepOutcome:
    """The aggregate of a sweep without one of its own: each variant's summary (printed one after another)."""
    return SweepOutcome({"runs": {name: result.summary for name, result in results.items()}})


def kwarg_sweep(name: str, kwarg: str, example: str,
                aggregate: Callable[[SweepRequest, dict[str, VariantResult]], SweepOutcome] | None = None,
                alias: str = "", alias_help: str = "") -> Sweep:
    """A sweep over the values of one env kwarg (``--sweep NAME:a,b``), each value in ``<out>/<value>/``.

    Without ``aggregate`` the outcome lists each variant's summary (printed one after another).
    """

    def variants(request: SweepRequest) -> list[Variant]:
        if kwarg in request.env_kwargs:
            raise ValueError(f"the {name} sweep sets {kwarg!r}; drop it from --env-kwargs.")
        return [Variant(value, {kwarg: value}) for value in split_list(request.args, kwarg, f"{name}:{example}")]

    return Sweep(name, f"{name}:A,B,... over the env kwarg {kwarg!r}", variants, aggregate or summaries_outcome,
                 alias=alias, alias_help=alias_help, alias_metavar="A,B,..." if alias else "")


__all__ = ["Sweep", "SweepOutcome", "SweepRequest", "SweepTable", "Variant", "VariantResult", "kwarg_sweep",
           "split_list", "summaries_outcome"]
