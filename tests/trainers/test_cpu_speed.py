"""The CPU speed defaults (trainers/cpu_speed.py): bf16 detection and its override, gradient
checkpointing per pass, and cutting a pass's trailing completion padding without changing its
log-probs."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from agentgym_suite.trainers import cpu_speed
from agentgym_suite.trainers.config import AgentGRPOConfig
from agentgym_suite.trainers.rows import pad_left, pad_right

BASE = dict(output_dir="/tmp/agentgym-cpu-speed-test", use_cpu=True, report_to="none")


def test_cpuinfo_flags_are_parsed_and_native_bf16_is_named(tmp_path) -> None:
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nmodel name\t: Some EPYC\nflags\t\t: fpu sse avx512f avx512_bf16 vaes\n")
    flags = cpu_speed.cpu_flags(str(info))
    assert {"avx512f", "avx512_bf16"} <= flags
    assert cpu_speed.native_bf16(flags) == "avx512_bf16"
    assert cpu_speed.native_bf16({"amx_bf16"}) == "amx_bf16"
    assert cpu_speed.native_bf16({"avx512f", "avx2"}) is None
    assert cpu_speed.cpu_flags(str(tmp_path / "missing")) == frozenset()


def test_bf16_decision_follows_the_flags_unless_overridden() -> None:
    assert cpu_speed.decide_bf16("auto", {"avx512_bf16"})[0] is True
    assert cpu_speed.decide_bf16("auto", {"avx2"})[0] is False
    assert cpu_speed.decide_bf16("off", {"amx_bf16"})[0] is False
    assert cpu_speed.decide_bf16("on", set())[0] is True
    with pytest.raises(ValueError, match="cpu_bf16 must be one of"):
        cpu_speed.decide_bf16("yes", set())


@pytest.mark.parametrize("flags, expected", [({"avx512_bf16"}, True), (set(), False)])
def test_config_autocasts_only_on_native_bf16_and_logs_it(monkeypatch, caplog, flags, expected) -> None:
    monkeypatch.setattr(cpu_speed, "cpu_flags", lambda path="": frozenset(flags))
    with caplog.at_level("WARNING", logger=cpu_speed.__name__):
        args = AgentGRPOConfig(**BASE)
    assert args.bf16 is expected
    assert f"bf16 autocast {'on' if expected else 'off'}" in caplog.text


def test_explicit_bf16_is_kept_by_auto_and_overridden_by_on_off(monkeypatch) -> None:
    monkeypatch.setattr(cpu_speed, "cpu_flags", lambda path="": frozenset({"avx512_bf16"}))
    assert AgentGRPOConfig(**BASE, bf16=False).bf16 is False
    assert AgentGRPOConfig(**BASE, bf16=False, cpu_bf16="on").bf16 is True
    assert AgentGRPOConfig(**BASE, cpu_bf16="off").bf16 is False
    with pytest.raises(ValueError, match="cpu_gradient_checkpointing must be one of"):
        AgentGRPOConfig(**BASE, bf16=False, cpu_gradient_checkpointing="sometimes")


SMALL = SimpleNamespace(hidden_size=64, num_hidden_layers=2, intermediate_size=128, vocab_size=1000)


def test_activations_fit_compares_the_estimate_with_the_available_memory() -> None:
    needed = cpu_speed.activation_bytes(SMALL, rows=4, tokens=300)
    assert needed == 4 * (2 * (16 * 64 + 4 * 128) + 3 * 1000) * 4 * 300
    assert cpu_speed.activations_fit(SMALL, 4, 300, available=4 * needed)
    assert not cpu_speed.activations_fit(SMALL, 4, 300, available=2 * needed)
    assert not cpu_speed.activations_fit(SMALL, 4, 300, available=None)


def _pass(rows: int, prompt: int, completion: int) -> dict[str, torch.Tensor]:
    return {"prompt_mask": torch.ones(rows, prompt, dtype=torch.long),
            "completion_mask": torch.ones(rows, completion, dtype=torch.long)}


def test_pass_checkpointing_turns_off_only_where_the_pass_fits(monkeypatch) -> None:
    monkeypatch.setattr(cpu_speed, "available_memory", lambda path="": 4 * cpu_speed.activation_bytes(SMALL, 4, 300))
    args = SimpleNamespace(use_cpu=True, gradient_checkpointing=True, gradient_checkpointing_kwargs=None,
                           cpu_gradient_checkpointing="auto")
    policy = cpu_speed.PassCheckpointing(args, SMALL)
    assert policy.without(_pass(4, 250, 50)) is True
    assert policy.without(_pass(16, 250, 50)) is False  # four times the activations: checkpointing stays on
    forced = cpu_speed.PassCheckpointing(SimpleNamespace(**{**vars(args), "cpu_gradient_checkpointing": "off"}), SMALL)
    assert forced.without(_pass(16, 250, 50)) is True
    kept = cpu_speed.PassCheckpointing(SimpleNamespace(**{**vars(args), "cpu_gradient_checkpointing": "on"}), SMALL)
    assert kept.without(_pass(1, 10, 5)) is False


def test_trimming_trailing_completion_padding_keeps_the_log_probs() -> None:
    from transformers import AutoModelForCausalLM

    from agentgym_suite.llm.tiny import tiny_model_dir

    model = AutoModelForCausalLM.from_pretrained(str(tiny_model_dir())).eval()
    prompts, completions = [[10, 11, 12], [13, 14]], [[40, 41], [42]]
    width = 6  # the pass was cut from a micro-batch whose longest completion had 6 tokens
    prompt_ids, prompt_mask = pad_left(prompts, 0, 3)
    inputs = {"prompt_ids": prompt_ids, "prompt_mask": prompt_mask,
              "completion_ids": pad_right(completions, 0, width, torch.long),
              "completion_mask": pad_right([[1] * len(c) for c in completions], 0, width, torch.long),
              "advantages": torch.ones(2, width), "row_index": torch.tensor([0, 1])}
    trimmed = cpu_speed.trim_completion_padding(inputs)
    assert trimmed["completion_ids"].shape == (2, 2) and trimmed["advantages"].shape == (2, 2)
    assert trimmed["prompt_ids"] is inputs["prompt_ids"] and trimmed["row_index"] is inputs["row_index"]

    def logps(batch: dict[str, torch.Tensor]) -> torch.Tensor:
        keep = batch["completion_ids"].shape[1]
        ids = torch.cat([batch["prompt_ids"], batch["completion_ids"]], 1)
        mask = torch.cat([batch["prompt_mask"], batch["completion_mask"]], 1)
        with torch.no_grad():
            logits = model(input_ids=ids, attention_mask=mask).logits[:, -keep - 1 : -1]
        return torch.log_softmax(logits.float(), -1).gather(-1, ids[:, -keep:, None]).squeeze(-1)

    real = trimmed["completion_mask"].bool()
    assert torch.allclose(logps(trimmed)[real], logps(inputs)[:, :2][real], atol=1e-5)
    assert cpu_speed.trim_completion_padding(trimmed) is trimmed  # nothing left to cut
