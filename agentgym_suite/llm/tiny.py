"""A tiny random Qwen2-style model and a locally trained tokenizer, for fast tests.

:func:`tiny_model_dir` builds (once) and caches under ``cache_dir()/models`` a model of a
few hundred thousand parameters plus a byte-level BPE tokenizer trained with ``tokenizers``
on a small built-in corpus, with ChatML special tokens, tool-call tags and a ChatML chat
template that supports tools. Building takes a few seconds, is seeded, and needs no network.
The model's weights are random: its output is gibberish, but its token bookkeeping is real.
"""

from __future__ import annotations

from pathlib import Path

from agentgym_suite.llm.chat_templates import CHATML_TOOLS_TEMPLATE
from agentgym_suite.llm.model_cache import cached_model_dir

TINY_VERSION = "tiny-qwen2-v1"
TINY_SEED = 1234
VOCAB_SIZE = 1024
SPECIAL_TOKENS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
TAG_TOKENS = ("<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>", "</think>",
              "<action>", "</action>")

_CORPUS = """\
You are in the middle of a room. Looking quickly around you, you see a cabinet 1, a countertop 1,
a drawer 2, a fridge 1, a sinkbasin 1, a stoveburner 3 and a toaster 1.
Your task is to: put a clean apple in the fridge. Your task is: find the golden key.
go to countertop 1. take apple 1 from countertop 1. open fridge 1. close drawer 2. look. inventory.
examine the table. go north. go south. go east. go west. take the key. unlock the chest with the key.
You pick up the apple. Nothing happens. You arrive at the kitchen. The door is locked.
<think>I should look around before acting.</think><action>look</action>
<search>capital of France</search> <answer>Paris</answer> <information>Paris is the capital.</information>
<tool_call>
{"name": "get_weather", "arguments": {"city": "Berlin", "unit": "celsius"}}
</tool_call>
<tool_response>
{"temperature": 21, "condition": "sunny"}
</tool_response>
The user asks for an order status. Order #12345 was shipped on 2024-05-01. Thank you for waiting!
Admissible actions: look, inventory, go to cabinet 1, open drawer 2, heat egg with microwave.
Score: 0.5 of 1.0. Reward 10. Won: true. False. None. [1, 2, 3] {"a": "b"} (x) = y + z * 2 / 3 - 4 % 5
The quick brown fox jumps over the lazy dog. 0123456789 ABCDEFGHIJKLMNOPQRSTUVWXYZ
"""


def tiny_model_dir(root: Path | None = None) -> Path:
    """Return the directory of the tiny model, building it on first use."""
    return cached_model_dir(TINY_VERSION, ("config.json", "tokenizer.json"), build_tiny_model, root)


def build_tokenizer():
    """Train the tiny byte-level BPE tokenizer and wrap it as a ``PreTrainedTokenizerFast``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE - len(TAG_TOKENS),
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_CORPUS.splitlines() * 4, trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=[],
    )
    fast.add_tokens(list(TAG_TOKENS))
    fast.chat_template = CHATML_TOOLS_TEMPLATE
    fast.padding_side = "left"
    return fast


def build_tiny_model(directory: Path) -> None:
    """Write the tiny model and tokenizer into ``directory`` (deterministic)."""
    import torch
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM

    tokenizer = build_tokenizer()
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=96,
        intermediate_size=192,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        tie_word_embeddings=True,
        bos_token_id=None,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(TINY_SEED)
        model = Qwen2ForCausalLM(config)
    model.generation_config = GenerationConfig(eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    directory.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
