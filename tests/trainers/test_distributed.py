"""The single-process side of ``trainers.distributed``: merging credit batches, the group check,
the lockstep backend, and metrics over processes (the two-process side is test_multiprocess)."""

from __future__ import annotations

import pytest
import torch

from agentgym_suite.llm.base import BackendError, Sample, SamplingParams
from agentgym_suite.trainers.credit import get_credit_assigner
from agentgym_suite.trainers.distributed import (
    LockstepBackend,
    ProcessSync,
    check_groups,
    credit_over_processes,
    merge_credit_batches,
    portable_batch,
)
from trainers.credit.conftest import build_batch
from trainers.credit.test_credit_contract import multi_turn_rows


def test_one_process_credit_equals_the_plugins_own():
    plugin = get_credit_assigner("gigpo")
    batch = build_batch(multi_turn_rows(plugin), seed=1)
    result = credit_over_processes(plugin, batch, ProcessSync())
    torch.testing.assert_close(result.advantages, plugin.advantages(batch).advantages)
    assert result.total_rows == batch.num_rows


def test_merging_pads_narrower_parts_and_keeps_aux_fields_local():
    plugin = get_credit_assigner("vad")
    batch = build_batch(multi_turn_rows(plugin), seed=2)
    first, second = batch.select(range(4)), batch.select(range(4, batch.num_rows))
    from dataclasses import replace

    second = replace(second, **{k: getattr(second, k)[:, :4] for k in ("completion_mask", "old_logprobs",
                                                                        "teacher_logprobs")},
                     aux_extras={k: v[:, :4] for k, v in second.aux_extras.items()})
    merged, offsets = merge_credit_batches([portable_batch(first), portable_batch(second)])
    assert offsets == [0, 4] and merged.num_rows == batch.num_rows
    assert merged.completion_mask.shape == batch.completion_mask.shape
    assert (merged.completion_mask[4:, 4:] == 0).all()
    assert set(merged.aux_extras) == set(batch.aux_extras) == set(plugin.extra_fields)
    assert all(v.shape == (batch.num_rows, 0) for v in merged.aux_extras.values())  # names only, not gathered
    assert torch.isfinite(plugin.advantages(merged).advantages).all()


def test_a_group_of_two_tasks_is_reported():
    with pytest.raises(ValueError, match="consecutive"):
        check_groups(["g", "g"], ["t1", "t2"])
    check_groups(["g", "g", "h"], ["t1", "t1", "t1"])  # one task in two groups is fine (two seeds)
    batch = build_batch([dict(group="g", traj="a"), dict(group="g", traj="b")])
    with pytest.raises(ValueError, match="consecutive"):  # the trainer's path: the rows' tasks beside the batch
        credit_over_processes(get_credit_assigner("grpo"), batch, ProcessSync(), task_ids=["t1", "t2"])


class _Recorder:
    supports_token_prompts = True

    def __init__(self, fail: bool = False) -> None:
        self.calls: list[list[list[int]]] = []
        self.fail = fail

    def generate_from_ids(self, prompt_ids, params):
        self.calls.append([list(p) for p in prompt_ids])
        if self.fail:
            raise BackendError("out of memory")
        return [[Sample(text="x", prompt_ids=list(p), completion_ids=[5])] for p in prompt_ids]


def test_lockstep_backend_makes_one_call_per_call():
    inner = _Recorder()
    backend = LockstepBackend(inner, pad_token_id=0)
    assert backend.generate_from_ids([], SamplingParams(max_new_tokens=8)) == []
    assert inner.calls == [[[0]]] and backend.empty_calls == 1
    failing = LockstepBackend(_Recorder(fail=True), pad_token_id=0)
    out = failing.generate_from_ids([[1, 2], [3]], SamplingParams())
    assert [s[0].error for s in out] == [out[0][0].error] * 2 and "out of memory" in out[0][0].error
    assert len(failing.backend.calls) == 1  # no retry prompt by prompt


def test_metrics_of_one_process_are_its_own_means():
    assert ProcessSync().mean_metrics({"a": [1.0, 3.0], "b": [float("nan")], "c": []}) == {"a": 2.0}


def test_merging_carries_a_plug_ins_own_inputs_and_refuses_different_ones():
    from dataclasses import replace

    plugin = get_credit_assigner("grpo")
    batch = build_batch(multi_turn_rows(plugin), seed=3)
    tokens = torch.arange(batch.num_rows * 6, dtype=torch.float32).reshape(batch.num_rows, 6)
    batch = replace(batch, extras={**batch.extras, "per_token": tokens, "keys": list(range(batch.num_rows))})
    first, second = batch.select(range(4)), batch.select(range(4, batch.num_rows))
    assert second.extras["keys"] == list(range(4, batch.num_rows))
    merged, _ = merge_credit_batches([portable_batch(first), portable_batch(second)])
    assert merged.extras["keys"] == batch.extras["keys"]
    torch.testing.assert_close(merged.extras["per_token"], tokens)
    with pytest.raises(ValueError, match="credit inputs differ between processes"):
        merge_credit_batches([portable_batch(first), portable_batch(replace(second, extras={}))])
    with pytest.raises(ValueError, match="'keys' must be a list of"):
        replace(batch, extras={"keys": [1]})
