"""``chat_template_kwargs`` (TRL's config field; Qwen3's ``enable_thinking``) reach the chat template of
every prompt the trainer renders, as verl's ``data.apply_chat_template_kwargs`` does."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from transformers import AutoModelForCausalLM

from agentgym_suite.llm.chat_templates import render_chat
from agentgym_suite.llm.tiny import build_tokenizer, tiny_model_dir
from agentgym_suite.llm.transformers_backend import TransformersBackend
from agentgym_suite.trainers.generation import TRLVLLMBackend, template_kwargs

TEMPLATE = ("{% for m in messages %}{{ m['content'] }}\n{% endfor %}"
            "{% if enable_thinking is defined and not enable_thinking %}<think>\n\n</think>\n\n{% endif %}")
MESSAGES = [{"role": "user", "content": "hello"}]


@pytest.fixture
def tokenizer():
    tok = build_tokenizer()
    tok.chat_template = TEMPLATE
    return tok


def test_render_chat_passes_the_template_variables(tokenizer) -> None:
    assert "<think>" not in render_chat(tokenizer, MESSAGES, None, add_generation_prompt=True)
    off = render_chat(tokenizer, MESSAGES, None, add_generation_prompt=True, template_kwargs={"enable_thinking": False})
    assert off.endswith("<think>\n\n</think>\n\n")


def test_the_trainers_backends_render_with_the_configs_kwargs(tokenizer) -> None:
    model = AutoModelForCausalLM.from_pretrained(str(tiny_model_dir()))
    kwargs = template_kwargs(SimpleNamespace(chat_template_kwargs={"enable_thinking": False}))
    hf = TransformersBackend(model, tokenizer, chat_template_kwargs=kwargs)
    assert hf.render_prompt(MESSAGES).endswith("</think>\n\n")
    assert "<think>" not in TransformersBackend(model, tokenizer).render_prompt(MESSAGES)
    vllm = TRLVLLMBackend(SimpleNamespace(mode="colocate"), tokenizer, [tokenizer.eos_token_id], chat_template_kwargs=kwargs)
    assert vllm.render_prompt(MESSAGES).endswith("</think>\n\n")


def test_template_kwargs_reads_json_text_and_refuses_other_values() -> None:
    assert template_kwargs(SimpleNamespace(chat_template_kwargs=None)) == {}
    assert template_kwargs(SimpleNamespace(chat_template_kwargs='{"enable_thinking": false}')) == {"enable_thinking": False}
    with pytest.raises(ValueError, match="mapping"):
        template_kwargs(SimpleNamespace(chat_template_kwargs="[1]"))
