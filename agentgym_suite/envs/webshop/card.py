"""What WebShop-v0 is measured against: upstream commit, licence, conformance and published scores."""

from __future__ import annotations

from agentgym_suite.core.env_card import EnvCard, EpisodeCost, ReferenceScore

_GIGPO = "GiGPO paper (Feng et al., arXiv:2505.10978), Table 1, WebShop, verl-agent"
_GIGPO_7B = _GIGPO + " (7B rows as reprinted elsewhere, not read from the paper here)"

CARD = EnvCard(
    benchmark="WebShop",
    version="princeton-nlp/WebShop 64fa2a5",
    upstream="github.com/princeton-nlp/WebShop",
    data_licence="MIT (WebShop; product texts scraped from Amazon by its authors)",
    conformance=(
        "purchase reward and its parts (type, title, query, category, attribute, option) equal to upstream's "
        "get_reward on fixed product/goal pairs: gold, wrong option, price, attribute or category, option probes",
        "product-name nouns equal to upstream's spaCy en_core_web_sm tags",
        "gold and wrong-option purchases played through WebShop-v0 (synthetic catalogue, human and synthetic goals) "
        "score as upstream",
        "search documents, Lucene English analysis (Porter stems) and BM25 rankings equal to Pyserini's on the "
        "catalogue and on 3,000 human goals",
    ),
    conformance_tests=("tests/conformance/test_webshop.py",),
    references=(
        ReferenceScore(0.758, "score (mean reward; published x100)", "Qwen2.5-1.5B-Instruct", "test", _GIGPO,
                       method="GRPO", summary_key="mean_score"),
        ReferenceScore(0.568, "success rate", "Qwen2.5-1.5B-Instruct", "test", _GIGPO, method="GRPO"),
        ReferenceScore(0.835, "score (mean reward; published x100)", "Qwen2.5-1.5B-Instruct", "test", _GIGPO,
                       method="GiGPO", summary_key="mean_score"),
        ReferenceScore(0.674, "success rate", "Qwen2.5-1.5B-Instruct", "test", _GIGPO, method="GiGPO"),
        ReferenceScore(0.793, "score (mean reward; published x100)", "Qwen2.5-7B-Instruct", "test", _GIGPO_7B,
                       method="GRPO", summary_key="mean_score"),
        ReferenceScore(0.661, "success rate", "Qwen2.5-7B-Instruct", "test", _GIGPO_7B, method="GRPO"),
        ReferenceScore(0.862, "score (mean reward; published x100)", "Qwen2.5-7B-Instruct", "test", _GIGPO_7B,
                       method="GiGPO", summary_key="mean_score"),
        ReferenceScore(0.752, "success rate", "Qwen2.5-7B-Instruct", "test", _GIGPO_7B, method="GiGPO"),
    ),
    cost=EpisodeCost(5278.0, "benchmarks/env_step_cost.py WebShop-v0, oracle on the fixture's synthetic catalogue "
                             "(2026-12-02, load 10.1)"),
    notes="verl-agent evaluates on the first 500 goals (split 'test') with success_reward=10 and 15 steps "
          "(VERL_AGENT_SETTINGS). The 1k-product catalogue is not in the shared data: `agentgym data fetch webshop` "
          "gets it; without spaCy the type reward uses a declared heuristic.",
)
"""WebShop-v0's card (see :class:`~agentgym_suite.core.env_card.EnvCard`)."""
