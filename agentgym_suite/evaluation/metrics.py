"""Scores of an evaluation: success rate, mean score and turns, invalid actions, pass@k, pass^k.

With ``n`` attempts at a task of which ``c`` succeeded, the unbiased estimators are

* pass@k = 1 - C(n-c, k) / C(n, k): the chance that at least one of k attempts drawn without
  replacement succeeds (Chen et al., 2021);
* pass^k = C(c, k) / C(n, k): the chance that all k drawn attempts succeed (the tau-bench
  reliability metric).

Both are averaged over the tasks with ``n >= k``; tasks with fewer attempts are left out and
counted in ``pass_k_tasks_skipped``.

A crashed episode (:attr:`~agentgym_suite.rollout.records.Trajectory.broken`: the env, the agent
or the server failed before the env judged it) is not a loss: it is counted in ``crashed`` and
left out of every rate — the success rate, the mean score, turns and reward, and pass@k/pass^k
count only completed episodes. An episode the env ended on an error it judged (a malformed tool
call under ``end_on_tool_error``) is completed and lost.

An env may report an episode as not scorable (final ``info["scorable"] is False``: e.g. a tau2
task with NL assertions and no judge). Such episodes carry no verdict, so they are left out of
the success rate, the mean score and pass@k/pass^k, and counted in ``unscorable_episodes``.
The labels of how a result was obtained (the keys envs declare as ``label_keys``, e.g. which
simulated user played the customer) are collected into ``labels``.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from agentgym_suite.registration import label_keys
from agentgym_suite.rollout.records import Trajectory
from agentgym_suite.rollout.summary import EpisodeOutcome, final_info, is_scorable, summarize_outcomes


def _check(n: int, c: int, k: int) -> None:
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}.")
    if not 0 <= c <= n:
        raise ValueError(f"need 0 <= c <= n, got n={n}, c={c}.")
    if n < k:
        raise ValueError(f"pass@k needs at least k attempts: n={n} < k={k}.")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k for one task: ``1 - C(n-c, k) / C(n, k)``."""
    _check(n, c, k)
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased pass^k for one task: ``C(c, k) / C(n, k)``."""
    _check(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def per_task_counts(records: Iterable[Trajectory]) -> dict[str, tuple[int, int]]:
    """Task id -> (attempts, successes)."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for record in records:
        counts[record.task_id][0] += 1
        counts[record.task_id][1] += int(bool(record.won))
    return {task: (n, c) for task, (n, c) in counts.items()}


def mean_pass(counts: dict[str, tuple[int, int]], k: int, *, hat: bool = False) -> tuple[float | None, int]:
    """Mean pass@k (or pass^k with ``hat=True``) over tasks with ``n >= k``, and how many were used."""
    estimator = pass_hat_k if hat else pass_at_k
    values = [estimator(n, c, k) for n, c in counts.values() if n >= k]
    return (sum(values) / len(values) if values else None), len(values)


def result_labels(records: Iterable[Trajectory], keys: Sequence[str] | None = None) -> dict[str, list[str]]:
    """For each label key some episode reported, the sorted distinct values; ``keys`` defaults to those
    every registered env declares (:func:`agentgym_suite.registration.label_keys`)."""
    seen: dict[str, set[str]] = defaultdict(set)
    for record in records:
        info = final_info(record)
        for key in keys if keys is not None else label_keys():
            if info.get(key) is not None:
                seen[key].add(str(info[key]))
    return {key: sorted(values) for key, values in sorted(seen.items())}


_HTTP_STATUS = re.compile(r"HTTP (\d{3})")
_EXCEPTION = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Timeout|Interrupt|Exit))\b")
_FAILURE_WORDS = ("timed out", "cannot reach", "not valid JSON", "unexpected shape", "maximum context length",
                  "did not return within", "malformed backend output")


def crash_kind(record: Trajectory) -> str:
    """A short label grouping crashes by cause: the stage, the exception type, an HTTP status and a
    few telling phrases of the message (``"agent: BackendError, HTTP 404"``)."""
    error = record.error or ""
    parts = []
    exception = _EXCEPTION.match(error)
    if exception:
        parts.append(exception.group(1))
    status = _HTTP_STATUS.search(error)
    if status:
        parts.append(f"HTTP {status.group(1)}")
    parts.extend(word for word in _FAILURE_WORDS if word in error)
    if not parts:
        parts.append(" ".join(error.split()[:6])[:60] or "no message")
    return f"{record.error_stage or 'unknown'}: {', '.join(parts)}"


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def summarize(records: list[Trajectory], k: int = 1) -> dict[str, Any]:
    """The summary metrics of a set of episodes.

    Keys: ``episodes``, ``tasks``, ``completed``, ``crashed`` (see the module docstring),
    ``won`` / ``lost`` (completed, scorable episodes), ``success_rate``, ``mean_score``,
    ``mean_turns``, ``mean_reward`` (all four over completed episodes), ``invalid_action_rate``
    (invalid actions / all actions), ``errors`` (episodes with an error, crashed or judged),
    ``error_rate``, ``crash_kinds`` (crashed episodes per :func:`crash_kind`), ``k``, ``pass@k``, ``pass^k``, ``pass_at`` / ``pass_hat`` (every j <= k),
    ``pass_k_tasks``, ``pass_k_tasks_skipped``, ``completion_tokens``, ``agent_time_s``,
    ``tokens_per_s`` (None unless the agent reported tokens), ``by_task_type``,
    ``task_type_macro_success_rate`` (the mean of the task types' success rates, as Search-R1's
    "average" over its datasets; None with fewer than two task types),
    ``success_rate_all_episodes`` (when some are unscorable: the rate over every completed episode,
    unscorable ones counted as failures, a lower bound), ``unscorable_episodes`` / ``unscorable_tasks`` (left out of the rates, see the module
    docstring), ``labels`` and, when the env reports per-user sequences, ``by_sequence`` and
    ``sequence_metrics`` (see :mod:`~agentgym_suite.evaluation.sequence_metrics`). Rates are None
    when there are no (scorable) episodes.
    """
    base = summarize_outcomes(EpisodeOutcome.of(r) for r in records)  # what the trainer's held-out metrics are too
    actions = sum(r.num_turns for r in records)
    invalid = sum(r.invalid_count for r in records)
    crashed = [r for r in records if r.broken]
    completed = [r for r in records if not r.broken]
    scored = [r for r in completed if is_scorable(r)]
    unscorable = [r for r in completed if not is_scorable(r)]
    counts = per_task_counts(scored)
    pass_at: dict[str, float | None] = {}
    pass_hat: dict[str, float | None] = {}
    for j in range(1, k + 1):
        pass_at[str(j)], _ = mean_pass(counts, j)
        pass_hat[str(j)], _ = mean_pass(counts, j, hat=True)
    _, used = mean_pass(counts, k)
    token_records = [r for r in records if r.completion_tokens is not None]
    tokens = sum(r.completion_tokens or 0 for r in token_records)
    token_time = sum(r.policy_s for r in token_records)
    by_type: dict[str, list[Trajectory]] = defaultdict(list)
    for record in scored:
        if record.task_type:
            by_type[record.task_type].append(record)
    return {
        "episodes": base["episodes"],
        "tasks": len({r.task_id for r in records}),
        "completed": base["completed"],
        "crashed": base["crashed"],
        "won": base["won"],
        "lost": base["lost"],
        "success_rate": base["success_rate"],
        "mean_score": base["mean_score"],
        "mean_turns": base["mean_turns"],
        "mean_reward": base["mean_reward"],
        "invalid_action_rate": (invalid / actions) if actions else (0.0 if records else None),
        "errors": base["errors"],
        "error_rate": base["error_rate"],
        "crash_kinds": dict(Counter(crash_kind(r) for r in crashed).most_common()),
        "k": k,
        "pass@k": pass_at[str(k)],
        "pass^k": pass_hat[str(k)],
        "pass_at": pass_at,
        "pass_hat": pass_hat,
        "pass_k_tasks": used,
        "pass_k_tasks_skipped": len(counts) - used,
        "completion_tokens": tokens if token_records else None,
        "agent_time_s": sum(r.policy_s for r in records),
        "tokens_per_s": (tokens / token_time) if token_records and token_time > 0 else None,
        "by_task_type": {
            name: {"episodes": len(rs), "success_rate": _mean([float(r.won) for r in rs]),
                   "mean_score": _mean([float(r.score) for r in rs])}
            for name, rs in sorted(by_type.items())
        },
        "task_type_macro_success_rate": _mean([sum(float(r.won) for r in rs) / len(rs) for rs in by_type.values()])
        if len(by_type) > 1 else None,
        "unscorable_episodes": base["unscorable"],
        "unscorable_tasks": len({r.task_id for r in unscorable}),
        "success_rate_all_episodes": _mean([float(r.won and is_scorable(r)) for r in completed]) if unscorable else None,
        "labels": result_labels(records),
        **_sequences(scored, k),
    }


def _sequences(records: list[Trajectory], k: int) -> dict[str, Any]:
    """``by_sequence`` and ``sequence_metrics`` (Avg@k/Pass@k/Pass^k per user) when the env reports sequences."""
    from agentgym_suite.evaluation.sequence_metrics import sequence_summary

    result = sequence_summary(records, k)
    if result is None:
        return {}
    return {"by_sequence": result["by_sequence"], "sequence_metrics": {"overall": result["overall"], "user_level": result["user_level"]}}
