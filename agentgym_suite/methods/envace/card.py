"""What EnvACE-Rehearsal-v0 is: EnvACE's world rehearsal over any tool env; its cost is the world model's."""

from __future__ import annotations

from agentgym_suite.core.env_card import EnvCard, EpisodeCost

CARD = EnvCard(
    benchmark="EnvACE world rehearsal (a model answers every tool call of a base tool env)",
    version="Within-yao/EnvACE 173e941 (released code: simulator prompt, <execution_result> contract, ending rule)",
    upstream="github.com/Within-yao/EnvACE",
    data_licence="no data of its own: the base tool env's tasks (see its row)",
    conformance=(
        "whole rehearsed episodes on a checklist task (gold, a simulator error, a broken simulator contract, a "
        "malformed Caller message, an unmet required standard, parallel calls, an unknown tool) equal to the released "
        "ChecklistEnv with its ChecklistInteraction: reward per closed turn, where the episode ends, Simulator calls made",
        "the released Caller parser's verdicts (error code, calls, kept text) on fixed messages",
        "the judge's reading of its replies (verdict, usable, asked again, attempts) equal to eval_one_check, and its "
        "sampling and JSON schema equal to the released request",
    ),
    conformance_tests=("tests/conformance/test_envace.py",),
    cost=EpisodeCost(0.046, "benchmarks/rehearsal_speed.py --default: 21.8 s per simulated call (one call a step), "
                            "embedded SmolLM2-135M world model on CPU, SyntheticTools-v0 oracle, 5 calls "
                            "(2026-12-02, load 11.8); a GPU backend or the 'real' pass-through costs far less"),
    notes="Training env: the reward comes from the base env's check, gold calls, a judge or checklists, so scores "
          "have no published counterpart.",
)
"""EnvACE-Rehearsal-v0's card (see :class:`~agentgym_suite.core.env_card.EnvCard`)."""
