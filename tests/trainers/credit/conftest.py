"""Batch builders shared by the credit plug-in tests."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest
import torch

from pathlib import Path
from types import SimpleNamespace

from agentgym_suite.trainers.credit import CreditBatch, compute_row_inputs, credit_assigners

VOCAB = 7


EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
"""The repository's ``examples/`` folder (the worked plug-in examples)."""


@pytest.fixture
def on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The examples folder on sys.path, as ``PYTHONPATH=examples`` puts it for the CLI."""
    monkeypatch.syspath_prepend(str(EXAMPLES))


def build_batch(
    rows: Sequence[dict[str, Any]],
    *,
    tokens: int = 6,
    seed: int = 0,
    teacher_equals_old: bool = False,
    mask: torch.Tensor | None = None,
    row_inputs: Sequence[Any] = (),
    **overrides: Any,
) -> CreditBatch:
    """A ``CreditBatch`` from row dicts (keys: group, traj, turn, role, ret, invalid, pos,
    anchor), with every optional field filled from a seeded generator.

    The default mask has model tokens at positions 1..(T-2) with a masked env token in the
    middle, so each row has masked-out tokens at both ends and inside. ``extras`` holds every
    registered plug-in's inputs and those of the ``row_inputs`` providers given (a plug-in outside the
    registry), ``aux_extras`` random teacher logits under every name :func:`registered_aux_extras`
    gives; an override named like an input sets it (``None`` removes it).
    """
    gen = torch.Generator().manual_seed(seed)
    n = len(rows)
    if mask is None:
        mask = torch.zeros(n, tokens, dtype=torch.long)
        mask[:, 1 : tokens - 1] = 1
        mask[:, tokens // 2] = 0
    old = -torch.rand(n, tokens, generator=gen) * 3.0
    teacher = old.clone() if teacher_equals_old else old + torch.randn(n, tokens, generator=gen)
    fields: dict[str, Any] = dict(
        group_ids=[r["group"] for r in rows],
        traj_ids=[r["traj"] for r in rows],
        turn_idx=[r.get("turn", 0) for r in rows],
        roles=[r.get("role", "agent") for r in rows],
        returns=torch.tensor([float(r.get("ret", 0.0)) for r in rows]),
        invalid=torch.tensor([bool(r.get("invalid", False)) for r in rows]),
        completion_mask=mask,
        old_logprobs=old,
        teacher_logprobs=teacher,
        step=0,
    )
    extras = registered_row_inputs(rows, mask, row_inputs)
    aux_extras = {name: torch.randn(n, tokens, VOCAB, generator=gen) for name in registered_aux_extras()}
    for inputs in (extras, aux_extras):
        for name in [k for k in overrides if k in inputs]:  # an input given (or removed with None) by the test
            value = overrides.pop(name)
            if value is None:
                del inputs[name]
            else:
                inputs[name] = value
    fields["extras"], fields["aux_extras"] = extras, aux_extras
    fields.update(overrides)
    return CreditBatch(**fields)


def registered_row_inputs(rows: Sequence[dict[str, Any]], mask: torch.Tensor,
                          more: Sequence[Any] = ()) -> dict[str, Any]:
    """Every registered plug-in's declared inputs (``row_inputs``) and ``more`` providers, computed by
    the providers from rows that stand in for the trainer's (``pos`` is a row's ``position``; a row's
    completion has as many tokens as its mask trains; ``anchor`` its raw observation; ``task`` its
    episode's task, by default its group; ``step_reward`` its step reward, by default sparse: the
    return on its trajectory's last turn, 0 before)."""
    last_turn: dict[Any, int] = {}
    for r in rows:
        last_turn[r["traj"]] = max(last_turn.get(r["traj"], 0), r.get("turn", 0))
    stand_ins = [SimpleNamespace(
        position=r.get("pos", 0), turn_idx=r.get("turn", 0), role=r.get("role", "agent"),
        completion_ids=[1] * int(m.sum()), anchor=r.get("anchor", f"obs-{r['group']}-{r.get('turn', 0)}"),
        episode=SimpleNamespace(task_id=r.get("task", r["group"])),
        step_reward=r.get("step_reward", float(r.get("ret", 0.0)) if r.get("turn", 0) == last_turn[r["traj"]] else 0.0),
    ) for r, m in zip(rows, mask)]
    extras: dict[str, Any] = compute_row_inputs(list(more), stand_ins)
    for plugin_class in credit_assigners().values():
        extras.update(compute_row_inputs(plugin_class.row_inputs, stand_ins))
    return extras


def registered_aux_extras() -> list[str]:
    """The names of the teacher logits every registered plug-in with ``needs_full_logits`` reads
    (its ``extra_fields`` that are not ``CreditBatch`` fields); the batch holds random ``(R, T, VOCAB)``
    logits under each."""
    names: list[str] = []
    for plugin_class in credit_assigners().values():
        if plugin_class.needs_full_logits:
            names += [n for n in plugin_class.extra_fields if n not in CreditBatch.__dataclass_fields__ and n not in names]
    return names


@pytest.fixture
def make_batch() -> Callable[..., CreditBatch]:
    """The ``build_batch`` function as a fixture."""
    return build_batch
