"""Inputs a credit plug-in declares: providers that compute a per-row value from the trainer's rows.

``CreditBatch`` holds what every method reads (groups, trajectories, turns, roles, returns, the
mask and the log-prob tensors the ``needs_*`` flags ask for). An input that one method alone reads
is declared by that method as a :class:`RowInput` in its ``row_inputs``: its name, what it
requires of a row, how it is computed from the rows, and its type. The trainer's one generic
"inputs" step (:func:`compute_row_inputs`) runs every provider the plug-in declares when it builds
the credit batch and stores the results in ``CreditBatch.extras`` under their names; gathering the
batch over processes and selecting rows carry them along. Adding an input therefore creates files
of the method only: no edit to ``CreditBatch``, the rows, the trainer or the distributed code.

A provider's ``compute`` receives the rows of one process's generation batch (``trainers.rows.Row``
objects: ``episode``, ``turns``, ``turn_idx``, ``role``, ``family``, ``position``, ``anchor`` and
the token lists) and returns one value per row: a list (Python values, e.g. ints or hashable
keys) or a tensor whose first axis is the rows (``(R,)`` or ``(R, T)``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Callable, Literal, Protocol, runtime_checkable

import torch
from torch import Tensor

RowValues = list[Any] | Tensor
"""What a provider returns: one value per row, as a list or a tensor whose first axis is the rows."""


@runtime_checkable
class RowInput(Protocol):
    """A provider of one ``CreditBatch.extras`` entry, computed from the trainer's rows."""

    @property
    def name(self) -> str:
        """Key in ``CreditBatch.extras`` (also how ``check_batch`` names it when missing)."""
        ...

    @property
    def kind(self) -> Literal["values", "tensor"]:
        """``values``: a list of Python values, one per row; ``tensor``: a tensor with the rows first."""
        ...

    @property
    def requires(self) -> str:
        """What the provider reads of a row (documentation for the plug-in's users)."""
        ...

    def compute(self, rows: Sequence[Any]) -> RowValues:
        """One value per row of ``rows``."""
        ...


@dataclass(frozen=True)
class RowField:
    """A :class:`RowInput` given as a function of the rows (the common case).

    Example: ``RowField("positions", lambda rows: [r.position for r in rows], requires="Row.position")``.
    """

    name: str
    function: Callable[[Sequence[Any]], RowValues]
    requires: str = ""
    kind: Literal["values", "tensor"] = "values"

    def compute(self, rows: Sequence[Any]) -> RowValues:
        """``function(rows)``."""
        return self.function(rows)


def check_row_values(name: str, value: Any, rows: int, kind: str) -> None:
    """Raise ``ValueError`` unless ``value`` holds one entry per row, of the declared ``kind``."""
    if kind == "tensor":
        if not isinstance(value, Tensor) or value.dim() == 0 or value.shape[0] != rows:
            shape = tuple(value.shape) if isinstance(value, Tensor) else type(value).__name__
            raise ValueError(f"credit input {name!r} must be a tensor with {rows} rows first; got {shape}. "
                             "Fix the provider's compute().")
        return
    if isinstance(value, Tensor) or not isinstance(value, Sequence) or isinstance(value, str) or len(value) != rows:
        got = len(value) if isinstance(value, Sequence) and not isinstance(value, str) else type(value).__name__
        raise ValueError(f"credit input {name!r} must be a list of {rows} values, one per row; got {got}. "
                         "Fix the provider's compute() or declare kind='tensor'.")


def compute_row_inputs(inputs: Sequence[RowInput], rows: Sequence[Any],
                       device: torch.device | str | None = None) -> dict[str, RowValues]:
    """The generic inputs step: every declared provider run on ``rows``, checked, by name (tensors
    moved to ``device``)."""
    out: dict[str, RowValues] = {}
    for provider in inputs:
        if provider.name in out:
            raise ValueError(f"two credit inputs are named {provider.name!r}; give each its own name.")
        value = provider.compute(rows)
        check_row_values(provider.name, value, len(rows), provider.kind)
        out[provider.name] = value.to(device) if isinstance(value, Tensor) and device is not None else (
            value if isinstance(value, Tensor) else list(value))
    return out


def select_row_values(extras: Mapping[str, RowValues], picks: Sequence[int]) -> dict[str, RowValues]:
    """The entries of ``extras`` at rows ``picks`` (for micro-batched auxiliary losses)."""
    index = torch.as_tensor(list(picks), dtype=torch.long)
    return {k: v[index.to(v.device)] if isinstance(v, Tensor) else [v[i] for i in picks] for k, v in extras.items()}
