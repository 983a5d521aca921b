"""What a user gets with an env id: its source benchmark, data licence, conformance checks,
published reference scores and measured cost.

Each benchmark package declares one :class:`EnvCard` beside its env (``envs/<name>/card.py``)
and its registration entry points to it, so ``agentgym list``, the generated
``docs/catalogue.md`` and ``agentgym eval`` read the same facts without a table keyed by
env id. Importing a card must stay cheap: no backend process, no data.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ReferenceScore:
    """One published number to put next to a run of the same model on the same split."""

    value: float
    """The score as published, on the scale ``metric`` names (a rate in [0, 1] is written as such)."""
    metric: str
    """What was measured, e.g. ``success rate`` or ``exact match``."""
    model: str
    """The model as the source names it (e.g. ``Qwen2.5-7B-Instruct``), with the method in ``method``."""
    split: str
    """The split or dataset it was measured on, in the words the env's :meth:`evaluation_split` uses."""
    source: str
    """Where it is published: paper + table (or leaderboard + date)."""
    method: str = ""
    """The training method or prompting behind the number (``GiGPO``, ``Search-R1 (PPO)``)."""
    summary_key: str = "success_rate"
    """The ``summary.json`` key (also looked up per task type) holding the run's own number on
    the same scale: ``success_rate`` (success, exact match) or ``mean_score``."""

    def same_model(self, agent: str) -> bool:
        """True when ``agent`` (a spec such as ``hf:Qwen/Qwen2.5-7B-Instruct`` or
        ``openai:Qwen2.5-7B-Instruct@http://...``) names this score's model. Names compare without
        case, on the last path part."""
        name = agent.split("@", 1)[0].rstrip("/").rsplit("/", 1)[-1].split(":")[-1].lower()
        return bool(name) and name == self.model.lower()


@dataclass(frozen=True)
class EpisodeCost:
    """The measured cost of stepping the env here, from a script in ``benchmarks/``."""

    steps_per_s: float
    measured_by: str
    """The benchmark script and the row that measured it."""
    machine: str = "2-core x86_64 machine shared with other jobs"


@dataclass(frozen=True)
class EnvCard:
    """Declared facts about one env id (see the module docstring)."""

    benchmark: str
    """The source benchmark's name."""
    version: str
    """The pinned upstream version (package version, release or commit) the env follows."""
    upstream: str
    """Where the official harness lives (repository or package)."""
    data_licence: str
    """The licence of the benchmark's data."""
    conformance: tuple[str, ...] = ()
    """What ``tests/conformance/`` checks against upstream's own outputs, one line per check
    (empty: nothing is checked against upstream yet)."""
    references: tuple[ReferenceScore, ...] = ()
    cost: EpisodeCost | None = None
    notes: str = ""
    """What a user should know when comparing (which split the papers use, departures by default)."""
    conformance_tests: tuple[str, ...] = ()
    """Test files (paths from the repository root) that hold the checks listed in :attr:`conformance`."""
    unchecked: str = ""
    """Why nothing is checked against upstream, when :attr:`conformance` is empty: no upstream harness
    exists (generated here, scored by another env), or what stands in its place. Shown instead of
    "none against upstream yet"."""

    def references_for(self, agent: str, split: str) -> list[ReferenceScore]:
        """The reference scores measured with the model of ``agent`` on ``split``."""
        return [ref for ref in self.references if ref.split == split and ref.same_model(agent)]
