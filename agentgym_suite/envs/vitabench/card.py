"""What VitaBench-v0 is measured against: VitaBench's own tools and orchestrator on the same calls."""

from __future__ import annotations

from agentgym_suite.core.env_card import EnvCard, EpisodeCost

CARD = EnvCard(
    benchmark="VitaBench",
    version="meituan-longcat/vitabench 96f3b85",
    upstream="github.com/meituan-longcat/vitabench",
    data_licence="MIT (VitaBench tasks, per-task databases and prompts)",
    conformance=(
        "3,099 English call sequences over the 200 delivery and in-store tasks (the oracle's gold calls, reads and "
        "perturbations: a step dropped, a wrong argument, id, store, user or type, a missing argument, an extra write, "
        "paying twice) and 538 on 30 Chinese delivery tasks: every result string and the hash of the final order, "
        "book and reservation tables equal to upstream's tools (the Chinese set runs only when upstream's "
        "tasks.json is in the data folder)",
        "tool parameters equal to upstream's schemas; the agent's system prompt equal to upstream's",
        "whole episodes (greeting, turn order, step count under several step limits) equal to upstream's "
        "orchestrator with a scripted agent and user",
        "OTA (travel) tools: 24 call sequences (bookings of every kind and perturbations: wrong ids, arguments, user, "
        "dates and order types, extra writes, calls after a failure, second payments and cancellations, "
        "modifications) on fixture OTA databases in upstream's format, and 3 cross-domain ones (delivery,ota; "
        "instore,ota; delivery,instore,ota) on one merged database: result strings, final orders, bookings and "
        "inventories and tool parameters equal to vitabench's 30 OTA tools and VitaBench-2.0's (plus its 7 taxi tools)",
        "VitaBench-2.0's delivery and in-store tools on the first 12 English tasks of each domain",
        "VitaBench-2.0's memories (full context, rewrite with and without a model, RAG chunks, top-k and threshold) "
        "after the same interactions, and its compute_metrics on the same result records",
    ),
    conformance_tests=("tests/conformance/test_vitabench.py", "tests/conformance/test_vitabench_ota.py",
                       "tests/conformance/test_vitabench_v2_memory.py", "tests/conformance/test_vitabench_v2_metrics.py",
                       "tests/conformance/test_vitabench_v2_rag.py"),
    cost=EpisodeCost(1477.0, "benchmarks/env_step_cost.py VitaBench-v0 --steps 2000, oracle on English delivery tasks "
                             "with the scripted user (2026-12-02, load 4.0; a rerun at load 5.3 gave 750.6)"),
    notes="Upstream scores with its LLM sliding-window rubric judge (--judge); without one this env scores by a state "
          "check against the tasks' expected states, which upstream does not have (no LLM-free check exists to "
          "compare it with), so it is reported as a departure. Version 1's OTA and cross-domain tasks (the paper's main "
          "results) are not in the data (their files are absent from upstream's snapshot); 2.0's OTA and cross-domain "
          "subtasks are played. No published scores are recorded here yet: the paper's tables "
          "(arXiv:2509.26490) could not be read here.",
)
"""VitaBench-v0's card (see :class:`~agentgym_suite.core.env_card.EnvCard`)."""
