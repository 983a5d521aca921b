"""The demo's memory bounds: the cloning stage trains a step in passes of at most
``SFT_ROWS_PER_PASS`` episodes with the gradient of one pass, and a finished stage's objects are
freed before the next stage (``release_memory``)."""

from __future__ import annotations

import gc
import weakref

import pytest
import torch

from agentgym_suite.demo.memory import release_memory
from agentgym_suite.demo.oracle_sft import SFT_ROWS_PER_PASS, rows_per_pass, train_sft


def test_rows_per_pass_is_the_largest_divisor_up_to_the_bound() -> None:
    assert SFT_ROWS_PER_PASS == 4
    assert [rows_per_pass(b) for b in (1, 2, 3, 4, 6, 8, 12)] == [1, 2, 3, 4, 3, 4, 4]
    assert rows_per_pass(5) == 1  # no divisor between 2 and 4: single rows, the step's gradient unchanged
    assert rows_per_pass(8, most=8) == 8
    with pytest.raises(ValueError, match="sft_batch_size"):
        rows_per_pass(0)


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_release_memory_frees_objects_held_only_by_reference_cycles() -> None:
    was_enabled = gc.isenabled()
    gc.disable()  # no automatic collection in between: only release_memory can free the cycle
    try:
        held = _Cycle()
        alive = weakref.ref(held)
        del held
        assert alive() is not None
        release_memory()
        assert alive() is None
    finally:
        if was_enabled:
            gc.enable()


def _rows(tokenizer) -> list[dict[str, list[int]]]:
    texts = ["go north", "take the lamp from the table", "open the door and go east", "look"]
    rows = []
    for i, text in enumerate(texts):  # rows of different lengths: the passes pad differently
        prompt = tokenizer(f"task {i}: where is it?", add_special_tokens=False)["input_ids"]
        action = tokenizer(" " + text, add_special_tokens=False)["input_ids"]
        rows.append({"input_ids": prompt + action, "assistant_masks": [0] * len(prompt) + [1] * len(action)})
    return rows


def test_sft_step_in_passes_trains_the_same_weights_as_one_pass(tmp_path) -> None:
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from agentgym_suite.llm.tiny import tiny_model_dir

    model_dir = str(tiny_model_dir())
    dataset = Dataset.from_list(_rows(AutoTokenizer.from_pretrained(model_dir)))
    weights = {}
    for most in (4, 1):  # one pass of 4 episodes, then 4 accumulated passes of 1
        path, history, _ = train_sft(model_dir, dataset, tmp_path / f"passes-of-{most}", epochs=1.0,
                                     learning_rate=1e-2, batch_size=4, lora_r=4, seed=0, max_rows_per_pass=most)
        assert sum("loss" in h for h in history) == 1  # one optimizer step either way
        weights[most] = AutoModelForCausalLM.from_pretrained(path).state_dict()
    base = AutoModelForCausalLM.from_pretrained(model_dir).state_dict()
    assert any(not torch.equal(weights[4][k], base[k]) for k in base)  # the step trained something
    for key in base:
        torch.testing.assert_close(weights[1][key], weights[4][key], rtol=1e-4, atol=1e-5)


def test_the_demo_evaluates_in_bf16_only_where_asked_or_native() -> None:
    from agentgym_suite.demo.pipeline import eval_autocast
    from agentgym_suite.trainers.cpu_speed import cpu_flags, native_bf16

    assert eval_autocast("off") is None
    assert eval_autocast("on") == "bfloat16"
    assert eval_autocast("auto") == ("bfloat16" if native_bf16(cpu_flags()) else None)
    with pytest.raises(ValueError, match="cpu_bf16 must be one of"):
        eval_autocast("yes")


FAULTS_SCRIPT = """
import resource, sys
import torch
from agentgym_suite.demo.memory import keep_freed_memory
took = keep_freed_memory() if sys.argv[1] == "keep" else None
torch.ones(1)
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(20):
    block = torch.ones(16 * 2**20)  # 64 MiB: above glibc's largest mmap threshold
    del block
print(took, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="glibc's mallopt")
def test_keep_freed_memory_reuses_large_blocks_instead_of_faulting_them_in_again() -> None:
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root) + os.pathsep + os.environ.get("PYTHONPATH", "")}

    def faults(mode: str) -> tuple[str, int]:
        done = subprocess.run([sys.executable, "-c", FAULTS_SCRIPT, mode], capture_output=True, text=True, env=env,
                              check=True, timeout=120)
        took, count = done.stdout.split()[-2:]
        return took, int(count)

    took, kept = faults("keep")
    if took != "True":
        pytest.skip("this C library has no mallopt (not glibc)")
    _, mapped = faults("plain")
    # each 64 MiB block is 16,384 pages: mapped afresh every time it is faulted in 20 times, kept once
    assert mapped > 10 * 16_384
    assert kept < mapped / 4
