"""tau2 reward: the product of the task's reward bases, scored as τ²-bench's evaluator scores them.

Every check runs on every ended episode (as upstream's ``EvaluationType.ALL``), and the reward
is the product of the parts whose bases the task lists (``evaluation_criteria.reward_basis``,
default ``DB`` and ``COMMUNICATE``):

- environment part (bases ``DB`` and ``ENV_ASSERTION``): ``db_match`` is True when the hashes
  of both databases after the episode, the agent's and the customer's (the phone in telecom),
  equal the hashes after replaying the gold actions on a fresh copy. ``env_assertions`` holds
  one verdict per environment assertion, run on the final state. A task with neither ``actions``
  nor ``env_assertions`` passes this part without a breakdown entry.
- ``ACTION``: for each gold action, whether some call of the episode (the agent's or the
  customer's, failed ones included) matches it: same name, and equal values on the compared
  keys, which are ``compare_args`` when the task gives it (an empty list compares the name
  only) and otherwise **the keys of the call made** (a call that leaves out a gold argument can
  still match; one with an extra argument cannot).
- ``COMMUNICATE``: for each ``communicate_info`` string, whether its lower-cased text occurs in
  some assistant message, lower-cased with its commas removed (the string keeps its own commas).
- ``NL_ASSERTION``: needs a judge ``(assertions, messages) -> list[bool]`` (see
  :mod:`~agentgym_suite.envs.tau2.nl_judge`). Without one the episode is *not scorable*
  (``scorable=False``, reward 0, ``NL_ASSERTION`` in ``unscored``), never scored on the other
  bases alone; a basis that lists no assertion scores 1, as upstream.

Conversations that did not end with the customer's (or agent's) stop score 0 with no checks
(``max_steps``, ``too_many_errors``, ``user_error``), as upstream. Checked against upstream's
own outputs by ``tests/conformance/test_tau2.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from agentgym_suite.envs.tau2.world import World

NLJudge = Callable[[list[str], list[dict[str, Any]]], Sequence[bool]]
"""(natural-language assertions, conversation messages) -> one verdict per assertion."""

GoldHashes = tuple[str, str]
"""(agent database hash, user database hash) after replaying the gold actions."""

DEFAULT_BASIS = ("DB", "COMMUNICATE")
ENV_BASES = ("DB", "ENV_ASSERTION")
KNOWN_BASES = ("DB", "ENV_ASSERTION", "ACTION", "COMMUNICATE", "NL_ASSERTION")


@dataclass
class RewardBreakdown:
    """Per-basis scores, the bases that could not be scored, and the final reward.

    ``details`` holds the checks as upstream reports them: ``db_match`` (None when not checked),
    ``actions``, ``communicate``, ``env_assertions`` and ``nl_assertions`` (lists of verdicts,
    None when the check had nothing to check), the database hashes and any ``note``.
    """

    reward: float
    components: dict[str, float] = field(default_factory=dict)
    unscored: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    scorable: bool = True

    def as_info(self) -> dict[str, Any]:
        """Plain dict for ``info``."""
        return {"reward": self.reward, "components": dict(self.components), "unscored": list(self.unscored),
                "details": dict(self.details), "scorable": self.scorable}


def reward_basis(task: dict[str, Any]) -> list[str]:
    """The task's reward bases."""
    criteria = task.get("evaluation_criteria") or {}
    basis = criteria.get("reward_basis")
    return list(DEFAULT_BASIS if basis is None else basis)


def action_matches(gold: dict[str, Any], name: str, arguments: dict[str, Any]) -> bool:
    """True when a call (``name``, ``arguments``) satisfies gold action ``gold``.

    The compared keys are ``compare_args`` when the gold action sets it, else the call's own keys.
    """
    if gold["name"] != name:
        return False
    expected = gold.get("arguments") or {}
    keys = gold.get("compare_args")
    keys = list(arguments) if keys is None else list(keys)
    if not keys:
        return True
    return {k: v for k, v in arguments.items() if k in keys} == {k: v for k, v in expected.items() if k in keys}


def actions_done(golds: list[dict[str, Any]], calls: list[tuple[str, dict[str, Any]]]) -> list[bool]:
    """For each gold action, whether some call matches it."""
    return [any(action_matches(g, n, a) for n, a in calls) for g in golds]


def communicated(infos: list[str], messages: list[dict[str, Any]]) -> list[bool]:
    """For each required info string, whether an assistant message contains it (message commas ignored)."""
    texts = [str(m.get("content") or "").lower().replace(",", "") for m in messages
             if m.get("role") == "assistant" and str(m.get("content") or "").strip()]
    return [any(str(info).lower() in t for t in texts) for info in infos]


def env_assertions_hold(world: World, assertions: list[dict[str, Any]]) -> list[bool]:
    """For each env assertion, whether its function returns the expected value on ``world``.

    An assertion whose function refuses (e.g. an id that does not exist) is not met; upstream's
    evaluator stops with that error instead (see ``tests/conformance/tau2``).
    """
    verdicts = []
    for assertion in assertions:
        try:
            value = world.run(assertion.get("env_type", "assistant"), assertion["func_name"], assertion.get("arguments") or {})
        except (ValueError, KeyError, TypeError):
            verdicts.append(False)
            continue
        verdicts.append(bool(value) == bool(assertion.get("assert_value", True)))
    return verdicts


def _nl_part(criteria: dict[str, Any], messages: list[dict[str, Any]], nl_judge: NLJudge | None,
             out: RewardBreakdown) -> float | None:
    """The NL-assertion part's reward, or None when it cannot be scored (recorded in ``out``)."""
    assertions = [str(a) for a in criteria.get("nl_assertions") or []]
    if not assertions:
        out.details["nl_assertions"] = []
        return 1.0
    if nl_judge is None:
        out.unscored.append("NL_ASSERTION")
        out.details["note"] = (f"{len(assertions)} NL assertion(s) need a judge (agentgym eval --judge SPEC, or "
                               "judge=<backend spec>); not scorable without one")
        return None
    try:
        verdicts = [bool(v) for v in nl_judge(assertions, messages)]
    except Exception as exc:  # a failing judge leaves the episode unscored, never a crash or a silent 0
        out.unscored.append("NL_ASSERTION")
        out.details["note"] = f"the NL judge failed: {type(exc).__name__}: {exc}"
        return None
    if len(verdicts) != len(assertions):
        verdicts = [False] * len(assertions)
    out.details["nl_assertions"] = verdicts
    return float(all(verdicts))


def evaluate(
    task: dict[str, Any],
    world: World,
    gold: GoldHashes,
    messages: list[dict[str, Any]],
    calls: list[tuple[str, dict[str, Any]]],
    nl_judge: NLJudge | None = None,
) -> RewardBreakdown:
    """Score an episode of ``task`` that ended with a stop, against the gold run's database hashes ``gold``."""
    criteria = task.get("evaluation_criteria")
    if criteria is None:
        return RewardBreakdown(reward=1.0, details={"note": "No evaluation criteria"})
    basis = reward_basis(task)
    out = RewardBreakdown(reward=1.0)
    parts: list[float] = []
    # environment part
    if criteria.get("actions") is None and criteria.get("env_assertions") is None:
        out.details["db_match"] = True
        env_components: dict[str, float] = {}
    else:
        final, final_user = world.state_hash(), world.user_state_hash()
        out.details.update(db_hash=final, gold_db_hash=gold[0], user_db_hash=final_user, gold_user_db_hash=gold[1])
        out.details["db_match"] = final == gold[0] and final_user == gold[1]
        verdicts = env_assertions_hold(world, list(criteria.get("env_assertions") or []))
        out.details["env_assertions"] = verdicts
        env_components = {"DB": float(out.details["db_match"]), "ENV_ASSERTION": float(all(verdicts))}
    if set(basis) & set(ENV_BASES):
        for name in ENV_BASES:
            if name in basis and name in env_components:
                out.components[name] = env_components[name]
                parts.append(env_components[name])
    # action part
    golds = list(criteria.get("actions") or [])
    action_checks = actions_done(golds, calls) if golds else None
    out.details["actions"] = action_checks
    if "ACTION" in basis:
        out.components["ACTION"] = float(all(action_checks or []))
        parts.append(out.components["ACTION"])
    # NL part
    if "NL_ASSERTION" in basis:
        value = _nl_part(criteria, messages, nl_judge, out)
        if value is not None:
            out.components["NL_ASSERTION"] = value
            parts.append(value)
    # communicate part
    infos = [str(i) for i in criteria.get("communicate_info") or []]
    out.details["communicate"] = communicated(infos, messages) if infos else None
    if "COMMUNICATE" in basis:
        out.components["COMMUNICATE"] = float(all(out.details["communicate"] or []))
        parts.append(out.components["COMMUNICATE"])
    out.unscored += [b for b in basis if b not in KNOWN_BASES]
    product = 1.0
    for value in parts:
        product *= value
    out.scorable = not out.unscored
    out.reward = product if out.scorable else 0.0
    return out


def premature_end(reason: str, note: str) -> RewardBreakdown:
    """The score of a conversation that ended before a stop (step or error limit, user failure): 0, no checks."""
    return RewardBreakdown(reward=0.0, details={"termination_reason": reason, "note": note, "db_match": None})
