"""Paired comparison of two methods over the same held-out episodes: McNemar's exact test.

Two methods evaluated on the same held-out tasks with the same episode seeds give paired
outcomes. Only the discordant pairs carry information: ``b`` episodes won by the reference only,
``c`` won by the other method only. Under the null hypothesis (equal success) each discordant
pair is a fair coin, so the two-sided exact p-value is ``min(1, 2 * P[Binomial(b + c, 1/2) <= min(b, c)])``
(McNemar 1947, in its exact binomial form).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Hashable, Mapping


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value of ``b`` and ``c`` discordant pairs (1.0 when there are none)."""
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be >= 0, got b={b}, c={c}.")
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1)) / 2**n
    return min(1.0, 2 * tail)


@dataclass
class PairedResult:
    """A method against the reference over the episodes both played."""

    pairs: int
    reference_only: int
    """``b``: pairs the reference won and the method lost."""
    method_only: int
    """``c``: pairs the method won and the reference lost."""
    difference: float
    """The method's success minus the reference's, over the pairs."""
    p_value: float

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready copy."""
        return asdict(self)


def paired_comparison(reference: Mapping[Hashable, bool], method: Mapping[Hashable, bool]) -> PairedResult:
    """McNemar's exact test over the episode keys both mappings (key -> won) hold."""
    keys = [k for k in reference if k in method]
    b = sum(1 for k in keys if reference[k] and not method[k])
    c = sum(1 for k in keys if method[k] and not reference[k])
    return PairedResult(pairs=len(keys), reference_only=b, method_only=c,
                        difference=(c - b) / len(keys) if keys else 0.0, p_value=mcnemar_exact(b, c))
