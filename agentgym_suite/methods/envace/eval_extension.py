"""EnvACE's test-time private rehearsal as an evaluation extension of ``agentgym eval``.

``agentgym eval ... --rehearsal-budget N [--rehearsal-mode parallel|sequential]
[--rehearsal-world-model SPEC]`` wraps the agent in a
:class:`~agentgym_suite.methods.envace.rehearsing_agent.RehearsingAgent`: N imagined attempts per
task against a world model before the real one. ``config.json`` records the options under
``rehearsal`` (a resumed run must share them) and ``summary.json`` gets the ``rehearsal`` counts
(real env steps and tool calls vs imagined ones), summed over the agent's parallel copies.

This package declares it as an ``agentgym_suite.eval`` entry point in its ``ENTRY_POINTS``
(:class:`~agentgym_suite.core.eval_extensions.EvalExtension`); the generic eval layers only
ask the declared extensions. From Python: ``evaluate(..., extensions={"rehearsal": {"budget": 2,
"mode": "parallel", "world_model": "same"}})``.

It also brings EnvACE's own subcommand, ``agentgym fidelity`` (the world-model fidelity report,
:mod:`~agentgym_suite.methods.envace.fidelity_command`).
"""

from __future__ import annotations

import argparse
from typing import Any, Mapping, Sequence

from agentgym_suite.core.eval_extensions import CommandKit
from agentgym_suite.methods.envace.rehearsing_agent import MODES, RehearsingAgent


class RehearsalEvalExtension:
    """The ``--rehearsal-*`` flags of ``agentgym eval``, the rehearsing agent and its counts, and ``agentgym fidelity``."""

    name = "rehearsal"
    """Key of the options in ``config.json`` and of the counts in ``summary.json``."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Add ``--rehearsal-budget``, ``--rehearsal-mode`` and ``--rehearsal-world-model``."""
        parser.add_argument("--rehearsal-budget", type=int, default=0, metavar="N",
                            help="test-time private rehearsal: N imagined attempts per task before the real one "
                                 "(default 0: off)")
        parser.add_argument("--rehearsal-mode", choices=MODES, default="parallel",
                            help="rehearsal attempts independent (parallel) or each seeing the previous ones (sequential)")
        parser.add_argument("--rehearsal-world-model", default="same", metavar="SPEC",
                            help="world model for rehearsal: 'same' (the agent's own model) or a backend spec")

    def options_from_args(self, args: argparse.Namespace) -> dict[str, Any] | None:
        """``{"budget", "mode", "world_model"}`` when ``--rehearsal-budget`` is above 0, else ``None``.

        Raises:
            ValueError: ``--rehearsal-budget`` is negative.
        """
        budget = int(getattr(args, "rehearsal_budget", 0) or 0)
        if budget < 0:
            raise ValueError(f"--rehearsal-budget must be >= 0, got {budget}.")
        if not budget:
            return None
        return {"budget": budget, "mode": args.rehearsal_mode, "world_model": args.rehearsal_world_model}

    def wrap_agent(self, agent: Any, options: Mapping[str, Any]) -> Any:
        """``agent`` in a :class:`~agentgym_suite.methods.envace.rehearsing_agent.RehearsingAgent`
        (a budget of 0 leaves it as it is)."""
        settings = dict(options)
        if not settings.get("budget"):
            return agent
        return RehearsingAgent(agent, settings.pop("world_model", "same") or "same", **settings)

    def add_commands(self, subparsers: Any, kit: CommandKit) -> None:
        """Add ``agentgym fidelity`` (:mod:`~agentgym_suite.methods.envace.fidelity_command`)."""
        from agentgym_suite.methods.envace.fidelity_command import register

        register(subparsers, kit)

    def summary(self, agents: Sequence[Any]) -> dict[str, Any] | None:
        """The rehearsing agents' counts added up (``None`` when none of them rehearsed)."""
        stats = [agent.rehearsal_stats() for agent in agents if callable(getattr(agent, "rehearsal_stats", None))]
        return merged_stats(stats) if stats else None


def merged_stats(stats: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts of several agent copies added up (numbers summed; ``budget``, ``mode`` and other entries from the first)."""
    merged = dict(stats[0]) if stats else {}
    for other in stats[1:]:
        for key, value in other.items():
            if key not in ("budget", "mode") and isinstance(value, (int, float)) and not isinstance(value, bool):
                merged[key] = merged.get(key, 0) + value
    return merged


EXTENSION = RehearsalEvalExtension()
"""The instance the ``EnvACE-Rehearsal-v0`` registration entry names."""

__all__ = ["EXTENSION", "RehearsalEvalExtension", "merged_stats"]
