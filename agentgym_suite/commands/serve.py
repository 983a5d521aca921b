"""``agentgym serve ENV_ID``: serve a registered env over OpenEnv's protocol (see
:mod:`agentgym_suite.serving`)."""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

from agentgym_suite.llm.call_cache import CacheError


def register(subparsers: Any) -> None:
    """Add the ``serve`` subcommand."""
    parser = subparsers.add_parser(
        "serve",
        help="serve an env over OpenEnv's WebSocket protocol (one env per session)",
        description="Serve ENV_ID with OpenEnv's server: sessions on ws://HOST:PORT/ws, plus /health, /schema "
                    "and /metadata. Each session plays its own env, exactly as gymnasium.make(ENV_ID) would. "
                    "Needs the extra: pip install 'agentgym-suite[serve]'.",
    )
    parser.add_argument("env_id", metavar="ENV_ID", help="a registered env id (see `agentgym list`)")
    parser.add_argument("--env-kwargs", default="{}", help="JSON object of keyword arguments for gymnasium.make")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to bind (default: loopback only); any other needs a token or --insecure")
    parser.add_argument("--token", default=None, metavar="TOKEN",
                        help="bearer token every route but /health requires (default: $AGENTGYM_SERVE_TOKEN; the "
                             "variable keeps it out of the process list). Clients send 'Authorization: Bearer TOKEN'")
    parser.add_argument("--insecure", action="store_true",
                        help="serve a non-loopback --host without a token (only on a network you trust)")
    parser.add_argument("--port", type=int, default=8000, help="TCP port (default 8000)")
    parser.add_argument("--max-sessions", type=int, default=64,
                        help="concurrent sessions (one env each); more are refused as busy (default 64)")
    parser.add_argument("--idle-timeout", type=float, default=600.0,
                        help="seconds without a message after which a session's env is closed (default 600; 0: never)")
    parser.add_argument("--step-timeout", type=float, default=None,
                        help="seconds one env.step may take; a slower step ends the episode truncated (default: none)")
    parser.add_argument("--max-message-bytes", type=int, default=4 * 1024 * 1024,
                        help="largest WebSocket frame accepted (default 4 MiB)")
    parser.add_argument("--ping-interval", type=float, default=10.0,
                        help="seconds between keep-alive pings; a client that answers none within as long again is "
                             "dropped and its env closed (default 10)")
    parser.add_argument("--show-errors", action="store_true",
                        help="send the env's own exception text to clients (paths masked); off: its type only")
    parser.add_argument("--log-level", default="warning", choices=("debug", "info", "warning", "error"))
    parser.add_argument("--model-cache", default=None, metavar="DIR",
                        help="cache the served env's model-played roles (simulated user, judge, world model) in DIR, "
                             "as `agentgym eval --model-cache` does; default: none, every call is asked. A client's "
                             "--model-cache never reaches a server: its envs make their calls here")
    parser.add_argument("--model-ledger", default=None, metavar="FILE",
                        help="record each of those calls (role, model, tokens, seconds, cache hit) in FILE (SQLite); "
                             "a client's summary cannot count them")
    from agentgym_suite.integrations.mcp.serve_command import add_arguments

    add_arguments(parser)  # --mcp, --transport
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted."""
    try:
        import agentgym_suite.serving.app  # noqa: F401  (the extra is installed)
    except ImportError as exc:
        print(f"agentgym serve needs OpenEnv's server package ({exc.name} is missing): "
              "pip install 'agentgym-suite[serve]'", file=sys.stderr)
        return 2
    try:
        env_kwargs = json.loads(args.env_kwargs)
        if not isinstance(env_kwargs, dict):
            raise ValueError("not an object")
    except ValueError as exc:
        print(f"--env-kwargs must be a JSON object such as '{{\"split\": \"test\"}}' ({exc}).", file=sys.stderr)
        return 2
    try:
        with _model_calls(args):
            return _serve(args, env_kwargs)
    except CacheError as exc:
        print(f"agentgym serve: {exc}", file=sys.stderr)
        return 2


def _model_calls(args: argparse.Namespace) -> AbstractContextManager[Any]:
    """The served envs' role calls routed through ``--model-cache``/``--model-ledger`` (nothing set
    when neither is given: the process's own ``AGENTGYM_MODEL_*`` variables, if any, apply)."""
    from agentgym_suite.llm.role_client import ModelCallSettings, model_calls

    cache, ledger = getattr(args, "model_cache", None), getattr(args, "model_ledger", None)
    if cache is None and ledger is None:
        return nullcontext()
    return model_calls(ModelCallSettings(cache_dir=Path(cache).resolve() if cache else None,
                                         ledger=Path(ledger).resolve() if ledger else None))


def _serve(args: argparse.Namespace, env_kwargs: dict[str, Any]) -> int:
    if getattr(args, "mcp", False):
        from agentgym_suite.integrations.mcp.serve_command import run_mcp

        return int(run_mcp(args, env_kwargs))
    from agentgym_suite.serving.app import ServerLimits, serve
    from agentgym_suite.serving.environment import ServeSpec

    try:
        from agentgym_suite.core.guards import check_timeout
        from agentgym_suite.serving.auth import token_from_env

        limits = ServerLimits(max_sessions=args.max_sessions, idle_timeout=args.idle_timeout or None,
                              max_message_bytes=args.max_message_bytes, ping_interval=args.ping_interval)
        spec = ServeSpec(args.env_id, env_kwargs, step_timeout=check_timeout(args.step_timeout),
                         show_errors=args.show_errors)
        serve(spec, host=args.host, port=args.port, limits=limits, log_level=args.log_level,
              token=token_from_env(args.token), insecure=args.insecure)
    except (ValueError, KeyError, TypeError) as exc:
        print(f"agentgym serve: {exc}", file=sys.stderr)
        return 2
    return 0
