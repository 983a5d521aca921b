"""BFCL-v0: Berkeley Function Calling Leaderboard v4 (data and backends from ``bfcl-eval``)."""

from agentgym_suite.envs.bfcl.env import BFCLEnv

__all__ = ["BFCLEnv"]
