"""What EnvACE-Rehearsal-v0 is: EnvACE's world rehearsal over any tool env; its cost is the world model's."""

from __future__ import annotations

from agentgym_suite.core.env_card import EnvCard, EpisodeCost

CARD = EnvCard(
    benchmark="EnvACE world rehearsal (a model answers every tool call of a base tool env)",
    version="Within-yao/EnvACE 173e941 (released code: simulator prompt, <execution_result> contract, ending rule)",
    upstream="github.com/Within-yao/EnvACE",
    data_licence="no data of its own: the base tool env's tasks (see its row)",
    unchecked="not checked against EnvACE's outputs: its simulator prompt, output contract and ending rule are "
              "followed by reading the released code; tests/envs/test_rehearsal*.py test our reading",
    cost=EpisodeCost(0.046, "benchmarks/rehearsal_speed.py --default: 21.8 s per simulated call (one call a step), "
                            "embedded SmolLM2-135M world model on CPU, SyntheticTools-v0 oracle, 5 calls "
                            "(2026-12-02, load 11.8); a GPU backend or the 'real' pass-through costs far less"),
    notes="Training env: the reward comes from the base env's check, gold calls, a judge or checklists, so scores "
          "have no published counterpart.",
)
"""EnvACE-Rehearsal-v0's card (see :class:`~agentgym_suite.core.env_card.EnvCard`)."""
