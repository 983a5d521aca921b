"""Conversion of the embedded SmolLM2 GGUF to a plain checkpoint (slow: ~30 s)."""

from __future__ import annotations

import pytest

from agentgym_suite.llm import SamplingParams


@pytest.mark.slow
def test_gguf_converts_once_and_loads_offline(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from agentgym_suite.llm.smollm2 import default_model_dir
    from agentgym_suite.llm.transformers_backend import TransformersBackend

    directory = default_model_dir(tmp_path)
    assert (directory / "config.json").exists()
    assert "quantization_config" not in (directory / "config.json").read_text()
    assert default_model_dir(tmp_path) == directory  # second call reuses the checkpoint
    backend = TransformersBackend.from_pretrained(directory, device="cpu")
    assert 130e6 < sum(p.numel() for p in backend.model.parameters()) < 140e6
    out = backend.generate([[{"role": "user", "content": "What is the capital of France?"}]],
                           SamplingParams(temperature=0, max_new_tokens=12))[0][0]
    assert "Paris" in out.text
    assert out.text == backend.decode(out.completion_ids)
