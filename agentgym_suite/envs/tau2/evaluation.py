"""tau2 reward: the product of the task's reward bases, with a per-basis breakdown.

Bases (``evaluation_criteria.reward_basis``, default ``DB`` and ``COMMUNICATE``):

- ``DB``: 1 when the hashes of both databases after the episode, the agent's and the customer's
  (the phone in telecom), equal the hashes after replaying the gold actions on a fresh copy, as
  τ²-bench's environment evaluator requires (deterministic).
- ``COMMUNICATE``: 1 when every ``communicate_info`` string occurs (case-insensitive, commas
  ignored) in some assistant message.
- ``ACTION``: 1 when every gold action was called with matching arguments (``compare_args``
  restricts the compared keys; an empty list compares the name only).
- ``ENV_ASSERTION``: 1 when every environment assertion holds on the final state.
- ``NL_ASSERTION``: needs a judge ``(assertions, messages) -> list[bool]`` (see
  :mod:`~agentgym_suite.envs.tau2.nl_judge`); 1 when every assertion is met. τ²-bench cannot
  score such a task without its judge model, so neither do we: without a judge the episode is
  *not scorable* (``scorable=False``, reward 0, ``NL_ASSERTION`` listed in ``unscored``) and
  evaluation summaries leave it out of the success rate and count it instead. A task whose
  basis names NL_ASSERTION but lists no assertion scores 1 on it, as upstream.

A basis this module does not know also makes the episode not scorable.
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


@dataclass
class RewardBreakdown:
    """Per-basis scores, the bases that could not be scored, and the final reward."""

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
    return list((task.get("evaluation_criteria") or {}).get("reward_basis") or DEFAULT_BASIS)


def action_matches(gold: dict[str, Any], name: str, arguments: dict[str, Any]) -> bool:
    """True when a call (``name``, ``arguments``) satisfies gold action ``gold``."""
    if gold["name"] != name:
        return False
    expected = gold.get("arguments") or {}
    keys = gold.get("compare_args")
    keys = list(expected) if keys is None else list(keys)
    return all(arguments.get(k) == expected.get(k) for k in keys)


def actions_done(golds: list[dict[str, Any]], calls: list[tuple[str, dict[str, Any]]]) -> list[bool]:
    """For each gold action, whether some call matches it."""
    return [any(action_matches(g, n, a) for n, a in calls) for g in golds]


def communicated(infos: list[str], messages: list[dict[str, Any]]) -> list[bool]:
    """For each required info string, whether an assistant message contains it."""
    texts = [str(m.get("content") or "").lower().replace(",", "") for m in messages if m.get("role") == "assistant"]
    return [any(str(info).lower().replace(",", "") in t for t in texts) for info in infos]


def env_assertions_hold(world: World, assertions: list[dict[str, Any]]) -> list[bool]:
    """For each env assertion, whether its function returns the expected value on ``world``."""
    verdicts = []
    for assertion in assertions:
        try:
            value = world.run(assertion.get("env_type", "assistant"), assertion["func_name"], assertion.get("arguments") or {})
        except (ValueError, KeyError, TypeError):
            verdicts.append(False)
            continue
        verdicts.append(bool(value) == bool(assertion.get("assert_value", True)))
    return verdicts


def evaluate(
    task: dict[str, Any],
    world: World,
    gold: GoldHashes,
    messages: list[dict[str, Any]],
    calls: list[tuple[str, dict[str, Any]]],
    nl_judge: NLJudge | None = None,
) -> RewardBreakdown:
    """Score an ended episode of ``task`` against the gold run's database hashes ``gold``."""
    criteria = task.get("evaluation_criteria") or {}
    out = RewardBreakdown(reward=1.0)
    for basis in reward_basis(task):
        if basis == "DB":
            final, final_user = world.state_hash(), world.user_state_hash()
            out.components["DB"] = float(final == gold[0] and final_user == gold[1])
            out.details.update(db_hash=final, gold_db_hash=gold[0], user_db_hash=final_user, gold_user_db_hash=gold[1])
        elif basis == "COMMUNICATE":
            verdicts = communicated(list(criteria.get("communicate_info") or []), messages)
            out.components["COMMUNICATE"] = float(all(verdicts))
            out.details["communicate"] = verdicts
        elif basis == "ACTION":
            verdicts = actions_done(list(criteria.get("actions") or []), calls)
            out.components["ACTION"] = float(all(verdicts))
            out.details["actions"] = verdicts
        elif basis == "ENV_ASSERTION":
            verdicts = env_assertions_hold(world, list(criteria.get("env_assertions") or []))
            out.components["ENV_ASSERTION"] = float(all(verdicts))
            out.details["env_assertions"] = verdicts
        elif basis == "NL_ASSERTION":
            assertions = [str(a) for a in criteria.get("nl_assertions") or []]
            if not assertions:
                out.components["NL_ASSERTION"] = 1.0
            elif nl_judge is None:
                out.unscored.append("NL_ASSERTION")
                out.details["note"] = f"{len(assertions)} NL assertion(s) need a judge (judge=<backend spec>); not scorable without one"
            else:
                try:
                    verdicts = [bool(v) for v in nl_judge(assertions, messages)]
                except Exception as exc:  # a failing judge leaves the episode unscored, never a crash or a silent 0
                    out.unscored.append("NL_ASSERTION")
                    out.details["note"] = f"the NL judge failed: {type(exc).__name__}: {exc}"
                    continue
                if len(verdicts) != len(assertions):
                    verdicts = [False] * len(assertions)
                out.components["NL_ASSERTION"] = float(all(verdicts))
                out.details["nl_assertions"] = verdicts
        else:
            out.unscored.append(basis)
    product = 1.0
    for value in out.components.values():
        product *= value
    out.scorable = not out.unscored
    out.reward = product if out.scorable else 0.0
    return out
