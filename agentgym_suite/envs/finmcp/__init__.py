"""FinMCP-v0: FinMCP-Bench (DianJin-TIR) financial tool calls replayed from recordings."""

from agentgym_suite.envs.finmcp.env import FinMCPEnv

__all__ = ["FinMCPEnv"]
