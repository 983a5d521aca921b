"""Regenerate ``search_r1_outputs.json``: Search-R1's own code run on fixed inputs.

Not run by pytest. Upstream: github.com/PeterGriffinJin/Search-R1 at commit
a14dc3a4ffc6fe88c1e95038d9738e21ba3f7a06. Its scoring (``verl/utils/reward_score/qa_em.py``) needs
only the standard library; its rollout code (``search_r1/llm_agent/generation.py``) imports torch,
verl and requests at the top but the methods used here (response cut, action parsing, observation
building, passage formatting) touch none of them, so those imports are stubbed and the methods run
unchanged. The retrieval server is replaced by the fixed documents below (the reply format of
``retrieval_server.py``), and the tokenizer by an identity on strings.

    mkdir -p /work/scratch/searchr1 && cd /work/scratch/searchr1
    git --git-dir=<Search-R1 git dir> archive a14dc3a verl/utils/reward_score/qa_em.py \\
        search_r1/__init__.py search_r1/llm_agent/__init__.py search_r1/llm_agent/generation.py | tar x
    ~/.pyenv/versions/3.11.7/bin/python -m venv venv
    venv/bin/python <repo>/tests/conformance/searchqa/regenerate_searchqa.py /work/scratch/searchr1
"""

from __future__ import annotations

import importlib.util
import json
import sys
import types
from pathlib import Path

COMMIT = "a14dc3a4ffc6fe88c1e95038d9738e21ba3f7a06"
MAX_TURNS = 4  # Search-R1's evaluation scripts: max_turns=4
HERE = Path(__file__).parent
INPUTS = json.loads((HERE / "inputs.json").read_text(encoding="utf-8"))


def _stub(name: str, **attrs: object) -> None:
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    sys.modules[name] = module


def load_upstream(src: Path) -> tuple[types.ModuleType, type]:
    spec = importlib.util.spec_from_file_location("qa_em", src / "verl/utils/reward_score/qa_em.py")
    assert spec and spec.loader
    qa_em = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(qa_em)
    _stub("torch", Tensor=object)
    _stub("requests")
    _stub("verl", DataProto=object)
    _stub("verl.utils")
    _stub("verl.utils.tracking", Tracking=object)
    _stub("search_r1.llm_agent.tensor_helper", TensorHelper=lambda config: None, TensorConfig=lambda **kw: None)
    sys.path.insert(0, str(src))
    from search_r1.llm_agent.generation import LLMGenerationManager

    return qa_em, LLMGenerationManager


class _Tokenizer:
    """Strings in, strings out: the response cut works on decoded text."""

    pad_token = "<pad>"

    def batch_decode(self, responses, skip_special_tokens=True):  # noqa: ANN001, ANN201
        return list(responses)

    def __call__(self, texts, **kwargs):  # noqa: ANN001, ANN003, ANN204
        return {"input_ids": list(texts)}


def main(src: Path) -> None:
    qa_em, manager_class = load_upstream(src)
    manager = object.__new__(manager_class)
    manager.tokenizer = _Tokenizer()
    manager.config = types.SimpleNamespace(no_think_rl=False, topk=3, search_url="stub")
    served = {"documents": INPUTS["documents"]}  # what the stub retrieval server returns for every query
    manager._batch_search = lambda queries: {"result": [[{"document": {"contents": d}, "score": 1.0}
                                                         for d in served["documents"]] for _ in queries]}
    documents = INPUTS["documents"]

    em = [qa_em.em_check(case["prediction"], case["golds"]) for case in INPUTS["em"]]
    normalized = [qa_em.normalize_answer(text) for text in INPUTS["normalize"]]
    _, cut = manager._postprocess_responses(INPUTS["responses"])
    actions, contents = manager.postprocess_predictions(cut)
    observations, dones, valid, is_search = manager.execute_predictions(cut, "<pad>", [True] * len(cut))
    passages = manager._passages2string([{"document": {"contents": d}} for d in documents])
    episodes = []
    for episode in INPUTS["episodes"]:
        # run_llm_loop for one sequence: max_turns (4) turns with search, then a last turn without,
        # the solution string being the prompt, each cut response and each observation.
        served["documents"] = episode.get("documents", INPUTS["documents"])
        text, responses, done = episode["prompt"], iter(episode["responses"]), False
        for _ in range(MAX_TURNS):
            response = next(responses, None)
            if response is None:
                break
            _, [kept] = manager._postprocess_responses([response])
            [observation], [done], _, _ = manager.execute_predictions([kept], "<pad>", [True])
            text += kept + observation
            if done:
                break
        if not done and (response := next(responses, None)) is not None:
            _, [kept] = manager._postprocess_responses([response])
            text += kept
        assert next(responses, None) is None, "an episode input holds responses past its end"
        episodes.append(qa_em.compute_score_em(text, {"target": episode["golds"]}))
    outputs = {
        "upstream": "github.com/PeterGriffinJin/Search-R1",
        "commit": COMMIT,
        "em_check": em,
        "normalize_answer": normalized,
        "cut_responses": cut,
        "actions": actions,
        "contents": contents,
        "observations": observations,
        "dones": dones,
        "valid_action": valid,
        "is_search": is_search,
        "passages2string": passages,
        "episode_scores": episodes,
    }
    (HERE / "search_r1_outputs.json").write_text(json.dumps(outputs, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
