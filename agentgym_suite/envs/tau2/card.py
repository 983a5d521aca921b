"""What Tau2-v0 is measured against: tau2-bench's own orchestrator and evaluator on the same conversations."""

from __future__ import annotations

from agentgym_suite.core.env_card import EnvCard, EpisodeCost

CARD = EnvCard(
    benchmark="τ²-bench (tau2-bench)",
    version="sierra-research/tau2-bench a2c0247 (telecom tasks.json from v0.2.0)",
    upstream="github.com/sierra-research/tau2-bench",
    data_licence="MIT (tau2-bench domain databases, policies and tasks)",
    conformance=(
        "466 scripted conversations over 88 tasks (mock, retail, airline, telecom: each task's gold actions and "
        "perturbations: a step dropped, a wrong argument or id, an extra write, a call after a failure, information "
        "left unsaid, the 200-step and 10-error limits) end as in upstream's orchestrator and score as upstream's "
        "evaluate_simulation: reward, reward components, DB-match, action, communicate, env-assertion and NL verdicts "
        "(NL judged by the same stub on both sides)",
        "every tool result string (long ones by SHA-256) and its error flag equal to upstream's",
        "direct tool calls (telecom records with datetimes, bills, devices, plans, refuels, roaming, line changes; "
        "calculate; unknown records and tools; missing and unexpected arguments; arguments of the wrong JSON type, "
        "passed to the tool unchecked as upstream passes them, in retail, airline, telecom and banking_knowledge, and the "
        "customer's own phone and notification tools called the same way) answer with upstream's "
        "get_response strings and error flags and change the database as upstream's do",
        "the LLM customer's model gets exactly the messages upstream's UserSimulator sends (roles flipped, the "
        "customer's own tool calls as tool_calls and their results as tool messages in upstream's text, kept for the "
        "episode; the tools guidelines whenever the customer has tools; a pre-filled history as upstream seeds it) on "
        "scripted telecom, airline and mock conversations, and the same tools by name and parameters (and exactly "
        "upstream's tool list when upstream's tool sources are in the data folder)",
        "every agent and customer tool schema (description, parameter descriptions, types, defaults, $defs layout) of "
        "airline, retail, telecom, mock and banking_knowledge (bm25_grep), built from upstream's tool sources kept as "
        "data, hashes equal to upstream's Tool.openai_schema (101 tools; skipped without the sources); the schema builder on tools sources written in "
        "the test gives upstream's layout of book_reservation and set_apn_settings",
        "per-domain average reward, Pass^1..Pass^k, DB-match and termination counts equal to upstream's "
        "compute_metrics on the same trial outcomes",
        "banking_knowledge (retrieval bm25_grep; tasks read from tasks/task_*.json as upstream's get_tasks): 427 "
        "scripted conversations over 51 of its 97 tasks (gold, the "
        "perturbations above, and inside the discoverable tools' JSON arguments a wrong argument or id, a call after "
        "such a failure, a call without unlocking) score and answer as upstream's; every banking tool called directly "
        "(valid and refused calls) answers as upstream's and changes the same tables to the same content; its BM25 and grep rankings on fixed "
        "queries and its policies per retrieval configuration equal upstream's, as does telecom-workflow's policy",
    ),
    conformance_tests=("tests/conformance/test_tau2.py", "tests/conformance/test_tau2_metrics.py",
                       "tests/conformance/test_tau2_banking_retrieval.py", "tests/conformance/test_tau2_tool_results.py",
                       "tests/conformance/test_tau2_user_view.py", "tests/conformance/test_tau2_tool_schemas.py"),
    cost=EpisodeCost(225.3, "benchmarks/env_step_cost.py Tau2-v0 --steps 2000, oracle on the retail domain with the "
                            "scripted user (2026-12-02, load 3.9; a rerun at load 5.3 gave 138.0)"),
    notes="Leaderboard numbers need an LLM user simulator (--user llm:...) and, for tasks with NL assertions, a judge "
          "(--judge); the scripted user and unjudged tasks are declared departures, as is banking_knowledge's retrieval "
          "(the leaderboard's alltools needs hosted embeddings and a shell; the default here is bm25_grep). No published scores are recorded here yet: per-domain Pass^k sits in "
          "upstream's leaderboard submissions (web/leaderboard/public/submissions), run on other task versions "
          "(airline/retail were fixed for v1.0.0) and mostly with closed models, and was not checked against this "
          "env's task set.",
)
"""Tau2-v0's card (see :class:`~agentgym_suite.core.env_card.EnvCard`)."""
