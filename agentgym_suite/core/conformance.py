"""Conformance declared by a method: what a credit plug-in or a trainer part checks against upstream.

An env declares its conformance on its card (:class:`~agentgym_suite.core.env_card.EnvCard`'s
``conformance`` and ``conformance_tests``). A method that is not one env's (a credit plug-in, a
part of the trainer such as verl's update schedule or the teacher's skill picks) declares a
:class:`MethodConformance` in its own home:

* a credit plug-in as its class attribute ``conformance``
  (:attr:`~agentgym_suite.trainers.credit.base.CreditAssigner.conformance`), found by walking the
  credit registry, installed plug-ins included;
* a part of the trainer as the class attribute ``conformance`` of one of the trainer's bases
  (its mixins), found by walking the trainer class's bases.

``agentgym conformance`` runs the declared test files next to the env cards' and reports each
declaration with its upstream code, commit, checks and agreement.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MethodConformance:
    """What one method checks against its upstream code's own outputs, and where the checks are."""

    name: str
    """A short id, unique among the method declarations of its kind (``verl_schedule``)."""
    subject: str
    """What is checked, in words (``verl-agent's update schedule``)."""
    upstream: str
    """Where the official code lives (repository or package)."""
    version: str
    """The upstream commit or version the recorded outputs come from."""
    checks: tuple[str, ...]
    """What the tests check against upstream's outputs, one line per check."""
    tests: tuple[str, ...]
    """Test files (paths from the repository root) that hold the checks."""

    def __post_init__(self) -> None:
        if not self.checks or not self.tests:
            raise ValueError(f"method conformance {self.name!r} must name at least one check and one test file.")
