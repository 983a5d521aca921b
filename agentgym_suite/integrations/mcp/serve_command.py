"""``agentgym serve --mcp``: run :class:`~agentgym_suite.integrations.mcp.server.McpEnvServer` on
stdio or streamable HTTP (called by :mod:`agentgym_suite.commands.serve`)."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def add_arguments(parser: Any) -> None:
    """The ``serve`` options that only ``--mcp`` reads."""
    parser.add_argument("--mcp", action="store_true",
                        help="serve ENV_ID as an MCP server (its task's tools plus reset, send_message, score) instead "
                             "of OpenEnv's protocol; streamable HTTP on http://HOST:PORT/mcp, or --transport stdio")
    parser.add_argument("--transport", default="streamable-http", choices=("streamable-http", "stdio"),
                        help="with --mcp: streamable-http (default) or stdio (one session on stdin/stdout)")


def run_mcp(args: argparse.Namespace, env_kwargs: dict[str, Any]) -> int:
    """Serve until interrupted (stdio: until the client closes stdin)."""
    try:
        import anyio

        from agentgym_suite.integrations.mcp.server import McpEnvServer
    except ImportError as exc:
        print(f"agentgym serve --mcp needs the mcp package ({exc.name} is missing): pip install 'agentgym-suite[mcp]'",
              file=sys.stderr)
        return 2
    try:
        server = McpEnvServer(args.env_id, env_kwargs, show_errors=args.show_errors)
    except (ValueError, KeyError, TypeError) as exc:
        print(f"agentgym serve --mcp: {exc}", file=sys.stderr)
        return 2
    print(f"agentgym serve --mcp {args.env_id}: not carried over: {_not_carried_over()}", file=sys.stderr)
    if args.transport == "stdio":
        try:
            anyio.run(server.run_stdio)
        finally:
            server.close()
        return 0
    import uvicorn

    from agentgym_suite.serving.auth import BearerTokenMiddleware, check_bind, token_from_env

    token = token_from_env(args.token)
    try:
        check_bind(args.host, token, args.insecure)
    except ValueError as exc:
        server.close()
        print(f"agentgym serve --mcp: {exc}", file=sys.stderr)
        return 2
    app = server.http_app(max_sessions=args.max_sessions, idle_timeout=args.idle_timeout or None)
    if token:
        app = BearerTokenMiddleware(app, token)  # every request but /health carries the token
    print(f"MCP endpoint: http://{args.host}:{args.port}/mcp", file=sys.stderr)
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
    return 0


def _not_carried_over() -> str:
    from agentgym_suite.integrations.mcp.server import NOT_CARRIED_OVER

    return NOT_CARRIED_OVER
