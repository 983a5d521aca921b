"""MCP bridges: any MCP server as a suite env (``MCP-v0``), and a suite env served as an MCP server.

Built on the official ``mcp`` SDK (the ``mcp`` extra). See docs/integrations.md.
"""

from agentgym_suite.integrations.mcp.env import McpEnv
from agentgym_suite.integrations.mcp.session import McpConnection, McpServerError, ServerAddress

__all__ = ["McpConnection", "McpEnv", "McpServerError", "ServerAddress"]
