"""Regenerate ``obs_cut_outputs.json``: Search-R1's ``_process_next_obs`` on fixed observations.

Not run by pytest. Upstream: github.com/PeterGriffinJin/Search-R1 at commit
a14dc3a4ffc6fe88c1e95038d9738e21ba3f7a06, ``search_r1/llm_agent/generation.py``: the observations of a
batch are tokenized together (``padding='longest'``, no special tokens) and every row is cut to
``max_obs_length`` (500) tokens. It runs here unchanged on real torch with the suite's tiny test
tokenizer (right padding, as the paper's Qwen2.5 and Llama 3.2 tokenizers); verl, requests and the
tensor helper, which the method does not touch, are stubbed. Each row, its padding removed, is
recorded decoded, with the tokenizer's SHA-256 so the test knows it reads the same tokenizer.
``left_padding_cases`` run the same batches with the tokenizer set to pad on the left, each batch as a
whole and each observation alone (a batch of one).

    mkdir -p /work/scratch/searchr1 && cd /work/scratch/searchr1
    git --git-dir=<Search-R1 git dir> archive a14dc3a search_r1/__init__.py search_r1/llm_agent/__init__.py \\
        search_r1/llm_agent/generation.py | tar x
    python <repo>/tests/conformance/searchqa/regenerate_obs_cut.py /work/scratch/searchr1
"""

from __future__ import annotations

import hashlib
import json
import sys
import types
from pathlib import Path

COMMIT = "a14dc3a4ffc6fe88c1e95038d9738e21ba3f7a06"
MAX_OBS_LENGTH = 500
HERE = Path(__file__).parent

_LONG = " ".join(f"Passage {n}: the river flows into the sea near the old harbour, café über naïve façade."
                 for n in range(60))
BATCHES = [
    ["\n\n<information>Doc 1(Title: \"Paris\") Paris is the capital of France.</information>\n\n",
     f"\n\n<information>Doc 1(Title: \"River\") {_LONG}</information>\n\n",
     "\nMy previous action is invalid. If I want to search, I should put the query between <search> and </search>."
     " If I want to give the final answer, I should put the answer between <answer> and </answer>. "
     "Let me try again.\n"],
    [f"\n\n<information>{_LONG[:1500]}</information>\n\n", f"\n\n<information>{_LONG}</information>\n\n"],
    ["\n\n<information>short</information>\n\n", "\n\n<information>also short</information>\n\n"],
]


def _stub(name: str, **attrs: object) -> None:
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    sys.modules[name] = module


def main(src: Path) -> None:
    """Run upstream's method on every batch and write the decoded rows."""
    _stub("requests")
    _stub("verl", DataProto=object)
    _stub("verl.utils")
    _stub("verl.utils.tracking", Tracking=object)
    _stub("search_r1.llm_agent.tensor_helper", TensorHelper=lambda config: None, TensorConfig=lambda **kw: None)
    sys.path.insert(0, str(src))
    from search_r1.llm_agent.generation import LLMGenerationManager
    from transformers import AutoTokenizer

    from agentgym_suite.llm.tiny import tiny_model_dir

    folder = tiny_model_dir()
    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    manager = object.__new__(LLMGenerationManager)
    manager.tokenizer = tokenizer
    manager.config = types.SimpleNamespace(max_obs_length=MAX_OBS_LENGTH)
    cases = []
    for batch in BATCHES:
        ids = manager._process_next_obs(batch)
        rows = [[t for t in row.tolist() if t != tokenizer.pad_token_id] for row in ids]
        cases.append({"observations": batch, "kept_tokens": [len(r) for r in rows],
                      "decoded": [tokenizer.decode(r) for r in rows]})
    # A tokenizer that pads on the left: the batch is padded to its longest row before the cut, so how much of an
    # over-long observation survives depends on the other rows. Recorded per batch and per observation alone.
    tokenizer.padding_side = "left"
    left = []
    for batch in BATCHES:
        together = [[t for t in row.tolist() if t != tokenizer.pad_token_id] for row in manager._process_next_obs(batch)]
        alone = [[t for t in manager._process_next_obs([o])[0].tolist() if t != tokenizer.pad_token_id] for o in batch]
        left.append({"observations": batch, "kept_in_batch": [len(r) for r in together],
                     "decoded_in_batch": [tokenizer.decode(r) for r in together],
                     "kept_alone": [len(r) for r in alone], "decoded_alone": [tokenizer.decode(r) for r in alone]})
    tokenizer.padding_side = "right"
    outputs = {"upstream": "github.com/PeterGriffinJin/Search-R1", "commit": COMMIT,
               "code": "search_r1/llm_agent/generation.py:LLMGenerationManager._process_next_obs",
               "max_obs_length": MAX_OBS_LENGTH, "padding_side": tokenizer.padding_side,
               "tokenizer_sha256": hashlib.sha256((folder / "tokenizer.json").read_bytes()).hexdigest(),
               "cases": cases, "left_padding_cases": left}
    (HERE / "obs_cut_outputs.json").write_text(json.dumps(outputs, indent=1, ensure_ascii=False) + "\n",
                                               encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
