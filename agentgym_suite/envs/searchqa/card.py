"""What SearchQA-v0 and SearchR1-v0 are measured against: Search-R1's code and data, and published exact-match scores."""

from __future__ import annotations

from agentgym_suite.core.env_card import EnvCard, EpisodeCost, ReferenceScore

_GIGPO = "GiGPO paper (Feng et al., arXiv:2505.10978v3), search-augmented QA table, e5 retriever, top-3"
_SEARCH_R1 = ("Search-R1 paper (Jin et al., arXiv:2503.09516), main results, Qwen2.5-3B-Instruct row "
              "(as reprinted in huggingface.co/blog/Seungyoun/reproduce-search-r1)")

_GIGPO_7B = {"nq": 0.464, "triviaqa": 0.647, "popqa": 0.461, "hotpotqa": 0.416, "2wikimultihopqa": 0.436,
             "musique": 0.189, "bamboogle": 0.689}
_SEARCH_R1_3B = {"nq": 0.397, "triviaqa": 0.565, "popqa": 0.391, "hotpotqa": 0.331, "2wikimultihopqa": 0.310,
                 "musique": 0.124, "bamboogle": 0.232}

SEARCH_R1_CARD = EnvCard(
    benchmark="Search-R1 QA (NQ, TriviaQA, PopQA, HotpotQA, 2WikiMultiHopQA, MuSiQue, Bamboogle)",
    version="Search-R1 a14dc3a; FlashRAG_datasets; wiki-18 corpus",
    upstream="github.com/PeterGriffinJin/Search-R1",
    data_licence=("per dataset release: NQ CC BY-SA 3.0, TriviaQA Apache-2.0, PopQA MIT, HotpotQA CC BY-SA 4.0, "
                  "2WikiMultiHopQA Apache-2.0, MuSiQue CC BY 4.0, Bamboogle MIT; wiki-18 passages CC BY-SA (Wikipedia)"),
    conformance=(
        "exact match equal to Search-R1's em_check / compute_score_em (verl/utils/reward_score/qa_em.py) on fixed answers",
        "passage block equal to Search-R1's _passages2string + <information> observation on fixed passages",
        "action parsing (cut at the first </search> or </answer>, first tag wins) and the invalid-action turn equal "
        "to Search-R1's generation.py",
        "whole-episode reward equal to compute_score_em over the solution string as Search-R1's rollout builds it "
        "(prompt, cut responses, observations; last of two or more answer tags) on fixed rollouts: several answers "
        "in a response, an answer inside a query, tags inside retrieved passages, no answer",
        "observations cut to their first max_obs_length (500) tokens of the named tokenizer (obs_tokenizer) equal to "
        "Search-R1's _process_next_obs on fixed batches of short and long observations; with a tokenizer that "
        "pads on the left, equal to its cut of each observation alone (in a batch its cut depends on the other rows: "
        "a named departure)",
    ),
    conformance_tests=("tests/conformance/test_searchqa.py", "tests/conformance/test_search_r1_obs_cut.py"),
    references=(
        *(ReferenceScore(v, "exact match", "Qwen2.5-7B-Instruct", name, _GIGPO, method="GiGPO")
          for name, v in _GIGPO_7B.items()),
        ReferenceScore(0.472, "exact match, mean over the seven datasets", "Qwen2.5-7B-Instruct", "search_r1_test",
                       _GIGPO, method="GiGPO", summary_key="task_type_macro_success_rate"),
        *(ReferenceScore(v, "exact match", "Qwen2.5-3B-Instruct", name, _SEARCH_R1, method="Search-R1")
          for name, v in _SEARCH_R1_3B.items()),
    ),
    cost=EpisodeCost(849.2, "benchmarks/search_r1_speed.py, BM25 over a 994-passage corpus file (2026-12-02, load 7.9)"),
    notes="The published numbers use e5 over Wikipedia-2018; the offline default retriever is BM25 (a departure "
          "that summary.json states). Search-R1 cuts each observation to 500 tokens of the policy's tokenizer: "
          "agentgym eval and the trainer name the agent's / trained model's, or set obs_tokenizer (a model id or "
          "folder); without one the cut is skipped and summary.json says so, as it does for a left-padding tokenizer.",
)
"""SearchR1-v0's card (see :class:`~agentgym_suite.core.env_card.EnvCard`)."""

SEARCHQA_CARD = EnvCard(
    benchmark="HotpotQA / MuSiQue training samples (HippoRAG's files)",
    version="HippoRAG b144c46 data files",
    upstream="github.com/OSU-NLP-Group/HippoRAG (data); Search-R1 (protocol)",
    data_licence="CC BY-SA 4.0 (HotpotQA), CC BY 4.0 (MuSiQue)",
    conformance=("answer normalisation equal to Search-R1's normalize_answer (shared with SearchR1-v0)",),
    conformance_tests=("tests/conformance/test_searchqa.py",),
    cost=EpisodeCost(3268.0, "benchmarks/webshop_searchqa_speed.py, 'SearchQA-v0 (hotpotqa, BM25)' (2026-11-30)"),
    notes="Training-split samples with their own passages: no published scores to compare with.",
)
"""SearchQA-v0's card."""
