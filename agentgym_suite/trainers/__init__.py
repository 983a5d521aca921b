"""Training: the multi-turn GRPO trainer built on TRL and its credit-assignment plug-ins
(``agentgym_suite.trainers.credit``)."""
