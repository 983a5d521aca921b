"""Our trainer step against plain TRL GRPO on one GPU, with a randomly initialised model of
Qwen2.5-1.5B's architecture in bf16 (no weights are downloaded): tokens per second and the ratio.

Both trainers train the same rows: one-turn episodes whose prompts are the first-turn prompts
our env gives (1600-character observations by default), the same batch (``--batch`` rollouts,
``--G`` per task), the same completion budget, and the same generation settings. Tokens per
second counts the prompt and completion tokens of every row trained in a step (the attention
masks TRL and our trainer hand to the loss), over the median step time after one warm-up step.

The tokenizer is the suite's locally trained one (a few hundred tokens): the model keeps
Qwen2.5-1.5B's 151,936-row embedding and LM head, and ids the tokenizer does not have are
suppressed during generation in both trainers.

    bash benchmarks/gpu_step.sh              # on the GPU machine (see gpu_step.sh for the wheels)
    python benchmarks/gpu_step.py --tiny     # the same code path on the CPU with the tiny model

With ``--recipe configs/X.yaml`` it runs one training step of that recipe at its sizes instead
(:mod:`recipe_step`; ``--dry-run`` prints the plan, ``--tiny`` checks the path on the CPU,
``--random-weights`` builds the config's architecture without a download, and ``-- --field
value`` pairs override the config).

Prints a table and a ``RATIO`` line; not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

QWEN25_1_5B = dict(vocab_size=151936, hidden_size=1536, intermediate_size=8960, num_hidden_layers=28,
                   num_attention_heads=12, num_key_value_heads=2, max_position_embeddings=32768, rope_theta=1_000_000.0,
                   rms_norm_eps=1e-6, tie_word_embeddings=True, hidden_act="silu")
"""Qwen2.5-1.5B's architecture (its published config.json)."""


def build_model(tokenizer, tiny: bool, dtype: torch.dtype, seed: int = 0):
    """A randomly initialised Qwen2 model: Qwen2.5-1.5B's shape, or a tiny one."""
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM

    shape = dict(vocab_size=len(tokenizer), hidden_size=96, intermediate_size=192, num_hidden_layers=2,
                 num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=True) if tiny else QWEN25_1_5B
    config = Qwen2Config(**shape, eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
                         bos_token_id=None)
    torch.manual_seed(seed)
    model = Qwen2ForCausalLM(config).to(dtype)
    model.generation_config = GenerationConfig(eos_token_id=tokenizer.eos_token_id,
                                               pad_token_id=tokenizer.pad_token_id)
    return model


class TokenCounter:
    """Tokens (prompt + completion, attended) of every row a trainer scores."""

    def __init__(self, trainer) -> None:
        self.tokens: list[int] = []
        score = trainer._generate_and_score_completions

        def counted(inputs):
            out = score(inputs)
            self.tokens.append(int(out["prompt_mask"].sum() + out["completion_mask"].sum()))
            return out

        trainer._generate_and_score_completions = counted


def run(kind: str, cli: argparse.Namespace, tokenizer, out: str) -> dict:
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    from agentgym_suite.trainers import AgentGRPOConfig, AgentGRPOTrainer
    from trainer_speed import PaddedLetterEnv, StepTimer, first_prompts, median_step

    dtype = torch.float32 if cli.tiny else torch.bfloat16
    model = build_model(tokenizer, cli.tiny, dtype)
    vocab = model.config.vocab_size
    suppress = list(range(len(tokenizer), vocab))
    common = dict(output_dir=out, max_steps=cli.steps + 1, per_device_train_batch_size=cli.batch,
                  num_generations=cli.G, max_completion_length=cli.tokens, bf16=not cli.tiny,
                  gradient_checkpointing=False, report_to="none", logging_steps=1, save_strategy="no",
                  use_cpu=cli.tiny, seed=0, disable_tqdm=True, learning_rate=1e-6, beta=0.0,
                  generation_kwargs={"suppress_tokens": suppress} if suppress else None)
    timer = StepTimer()
    if kind == "trl":
        dataset = Dataset.from_dict({"prompt": first_prompts(cli.observation_chars)})
        trainer = GRPOTrainer(model=model, reward_funcs=lambda completions, **_: [float(len(c) % 3) for c in completions],
                              args=GRPOConfig(**common), train_dataset=dataset, processing_class=tokenizer,
                              callbacks=[timer])
    else:
        args = AgentGRPOConfig(**common, credit="grpo", max_turns=1, action_format=None,
                               save_trajectories=False)
        trainer = AgentGRPOTrainer(model=model, args=args, processing_class=tokenizer, callbacks=[timer],
                                   env_factory=lambda: PaddedLetterEnv(cli.observation_chars, horizon=1))
    counter = TokenCounter(trainer)
    if torch.cuda.is_available():
        torch.cuda.reset_peak_memory_stats()
    trainer.train()
    step = median_step(timer)
    tokens = statistics.median(counter.tokens[1:] or counter.tokens)
    peak = torch.cuda.max_memory_allocated() / 2**30 if torch.cuda.is_available() else float("nan")
    del trainer, model
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
    return {"step_s": step, "tokens": tokens, "tokens_per_s": tokens / step, "peak_gib": peak}


def main(argv: list[str] | None = None) -> None:
    """Parse the command line; ``--recipe CONFIG [-- --field value ...]`` times one step of a recipe instead."""
    from recipe_step import add_arguments, run_recipe

    argv = list(sys.argv[1:] if argv is None else argv)
    overrides = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    parser = argparse.ArgumentParser(description="AgentGRPOTrainer vs TRL GRPOTrainer on one GPU (Qwen2.5-1.5B shape), "
                                                 "or one training step of a recipe config (--recipe)")
    parser.add_argument("--tiny", action="store_true", help="CPU, tiny model: check the script end to end")
    parser.add_argument("--steps", type=int, default=3, help="timed steps per trainer (after one warm-up step)")
    parser.add_argument("--batch", type=int, default=16, help="rollouts per step")
    parser.add_argument("--G", type=int, default=4)
    parser.add_argument("--tokens", type=int, default=128, help="max completion tokens")
    parser.add_argument("--observation-chars", type=int, default=1600)
    parser.add_argument("--json", help="also write the results here")
    add_arguments(parser)
    cli = parser.parse_args(argv)
    if cli.recipe:
        result = run_recipe(cli, overrides)
        if cli.json:
            Path(cli.json).write_text(json.dumps(result, indent=1, default=str))
        return
    if cli.dry_run or cli.random_weights or overrides:
        parser.error("--dry-run, --random-weights and '-- --field value' overrides go with --recipe CONFIG")
    if cli.tiny:
        cli.steps, cli.batch, cli.tokens = min(cli.steps, 2), min(cli.batch, 4), min(cli.tokens, 8)
    elif not torch.cuda.is_available():
        raise SystemExit("no GPU visible; run with --tiny to check the script on the CPU")
    from agentgym_suite.llm.tiny import build_tokenizer
    from ratios import report_ratio

    tokenizer = build_tokenizer()
    results = {}
    started = time.perf_counter()
    for kind in ("trl", "ours"):
        with tempfile.TemporaryDirectory() as out:
            results[kind] = run(kind, cli, tokenizer, out)
    device = "CPU (tiny model)" if cli.tiny else torch.cuda.get_device_name(0)
    shape = "tiny Qwen2" if cli.tiny else "Qwen2.5-1.5B architecture, random weights, bf16"
    print(f"\n{device}; {shape}; {cli.batch} rollouts x {cli.tokens} tokens, G={cli.G}, "
          f"{cli.observation_chars}-char observations; median of {cli.steps} steps; {time.perf_counter() - started:.0f} s")
    print(f"{'trainer':<20}{'s/step':>10}{'tokens/step':>13}{'tokens/s':>11}{'peak GiB':>10}")
    for kind, name in (("trl", "TRL GRPOTrainer"), ("ours", "AgentGRPOTrainer")):
        r = results[kind]
        print(f"{name:<20}{r['step_s']:>10.3f}{r['tokens']:>13.0f}{r['tokens_per_s']:>11.0f}{r['peak_gib']:>10.1f}")
    ratio = results["ours"]["tokens_per_s"] / results["trl"]["tokens_per_s"]
    print(f"ours / TRL tokens/s: {ratio:.2f}")
    report_ratio(f"AgentGRPO / TRL GRPO tokens/s ({'tiny, CPU' if cli.tiny else device})", ratio, ">= 0.83x",
                 f"{cli.batch} rollouts x {cli.tokens} tokens, G {cli.G}")
    if cli.json:
        Path(cli.json).write_text(json.dumps({"device": device, "ratio": ratio, **results}, indent=1))


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    main()
