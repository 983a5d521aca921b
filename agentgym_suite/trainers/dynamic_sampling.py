"""DAPO's dynamic sampling: groups that teach nothing are replaced by groups that do.

A group whose episodes all got the same return has a zero group-relative advantage on every
row (DAPO, Yu et al. 2025, section 3.2: "dynamic sampling"). :func:`fill_batch` drops such groups
from a generation batch and plays groups of new tasks in their place, round after round, until
the batch has as many informative groups as it was given or the bound on extra rollouts is spent;
a batch that is still short trains on the informative groups it has.

Every decision is taken on the whole generation batch (every process's episodes, one gather
per round), so all processes drop the same groups, play the same number of rounds and stay in
lockstep. A replacement round gives each process the same number of whole groups.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from agentgym_suite.rollout.records import Trajectory


@dataclass
class DynamicSamplingStats:
    """What one step's dynamic sampling did (whole generation batch, all processes)."""

    groups_dropped: int = 0
    """Groups played this step (first batch and replacements) whose returns were all equal."""
    extra_rollouts: int = 0
    """Rollouts played to replace dropped groups."""
    groups_missing: int = 0
    """Informative groups the batch is short of when the bound on extra rollouts was reached."""

    def metrics(self) -> dict[str, float]:
        """The stats as ``dynamic_sampling/<name>`` metrics."""
        return {f"dynamic_sampling/{k}": float(v) for k, v in vars(self).items()}


def group_record(trajectory: Trajectory) -> tuple[str, float | None]:
    """``(group id, return)`` of one episode; the return is ``None`` for a broken episode (not trained on)."""
    return str(trajectory.group_id), None if trajectory.broken else float(trajectory.episode_return)


def informative_groups(records: Sequence[tuple[str, float | None]]) -> list[str]:
    """Group ids, in first-seen order, whose trained episodes (at least two) got different returns."""
    returns: dict[str, list[float]] = {}
    for group, ret in records:
        values = returns.setdefault(group, [])
        if ret is not None:
            values.append(ret)
    return [g for g, values in returns.items() if len(values) >= 2 and max(values) != min(values)]


def fill_batch(first: list[Trajectory], *, target_groups: int, group_size: int, max_extra_rollouts: int,
               play_more: Callable[[int, int], list[Trajectory]], sync: Any) -> tuple[list[Trajectory], DynamicSamplingStats]:
    """The episodes of this process to train on, and the step's stats.

    Args:
        first: this process's episodes of the generation batch as given.
        target_groups: groups of the whole generation batch (all processes).
        group_size: rollouts per group (G).
        max_extra_rollouts: most replacement rollouts over all processes.
        play_more: ``play_more(groups_per_process, round)`` plays that many new groups on this
            process (round 1, 2, ...) and returns their episodes; every process calls it together.
        sync: the trainer's :class:`~agentgym_suite.trainers.distributed.ProcessSync`.
    """
    stats = DynamicSamplingStats()
    kept, taken = _informative(first, target_groups, sync, stats)
    round_ = 0
    while taken < target_groups:
        needed = target_groups - taken
        fits = (max_extra_rollouts - stats.extra_rollouts) // (sync.world_size * group_size)
        per_process = min(math.ceil(needed / sync.world_size), fits)
        if per_process <= 0:
            break
        round_ += 1
        new = play_more(per_process, round_)
        stats.extra_rollouts += per_process * sync.world_size * group_size
        more, count = _informative(new, needed, sync, stats)
        kept += more
        taken += count
    stats.groups_missing = target_groups - taken
    return kept, stats


def _informative(episodes: list[Trajectory], at_most: int, sync: Any,
                 stats: DynamicSamplingStats) -> tuple[list[Trajectory], int]:
    """This process's episodes of the first ``at_most`` informative groups (over all processes), and
    how many groups that is; the uninformative groups are counted as dropped."""
    records = [r for part in sync.gather([group_record(t) for t in episodes]) for r in part]
    played = list(dict.fromkeys(group for group, _ in records))
    informative = informative_groups(records)
    stats.groups_dropped += len(played) - len(informative)
    chosen = set(informative[:at_most])
    return [t for t in episodes if str(t.group_id) in chosen], len(chosen)
