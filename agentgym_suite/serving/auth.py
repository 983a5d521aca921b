"""Who may use a served env: a bearer token on every route but ``/health``.

``agentgym serve --token T`` (or ``AGENTGYM_SERVE_TOKEN=T``) wraps the app in
:class:`BearerTokenMiddleware`: an HTTP request or a WebSocket handshake must carry
``Authorization: Bearer T`` (compared in constant time), or it is refused before any route runs,
so no session and no env is made for it: HTTP gets ``401`` with ``WWW-Authenticate: Bearer``,
a WebSocket handshake ``401`` as well (``403`` on servers without the ASGI denial-response
extension). The token is read from the header only: one in the query string, a cookie or a
message body does not count (URLs end up in logs). Refusals never repeat what was sent.

:func:`check_bind` is the start-up rule: a server reachable from other machines needs a token
unless the operator says ``--insecure``.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import os
from typing import Any, Awaitable, Callable

TOKEN_ENV = "AGENTGYM_SERVE_TOKEN"
"""The environment variable that holds the token, for the server and for every client of ours."""
OPEN_PATHS = frozenset({"/health"})
"""Routes served without a token (liveness probes)."""

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


def token_from_env(token: str | None = None) -> str | None:
    """``token`` when given, else ``$AGENTGYM_SERVE_TOKEN``; an empty value means none."""
    value = token if token is not None else os.environ.get(TOKEN_ENV)
    return value or None


def auth_headers(token: str | None) -> dict[str, str]:
    """The HTTP headers that carry ``token`` (none for no token)."""
    return {"Authorization": f"Bearer {token}"} if token else {}


class RedactAuthorization(logging.Filter):
    """Masks the value of an ``Authorization`` header in the ``"%s: %s"`` lines that the
    ``websockets`` library logs at debug level for every handshake (client and server side)."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Rewrite the record's arguments when they are an authorization header; keep the record."""
        args = record.args
        if (isinstance(args, tuple) and len(args) == 2 and isinstance(args[0], str)
                and args[0].lower() in ("authorization", "proxy-authorization")):
            record.args = (args[0], "<redacted>")
        return True


def redacting_logger(name: str) -> logging.Logger:
    """The logger ``name`` with :class:`RedactAuthorization` attached (once)."""
    logger = logging.getLogger(name)
    if not any(isinstance(f, RedactAuthorization) for f in logger.filters):
        logger.addFilter(RedactAuthorization())
    return logger


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps the server on this machine (``127.0.0.0/8``, ``::1``,
    ``localhost``)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a host name: it may resolve to anything
        return False


def check_bind(host: str, token: str | None, insecure: bool) -> None:
    """Refuse to serve a non-loopback ``host`` without a token unless ``insecure``.

    Raises:
        ValueError: saying why and what to do.
    """
    if token or insecure or is_loopback(host):
        return
    raise ValueError(
        f"refusing to listen on {host}, which other machines can reach, without a token: anyone who reaches the port "
        f"would get sessions. Set {TOKEN_ENV} (or --token) and give clients the same value, or pass --insecure on a "
        "network you trust.")


class BearerTokenMiddleware:
    """ASGI middleware that lets through only requests with ``Authorization: Bearer <token>``
    (see the module docstring). ``/health`` stays open."""

    def __init__(self, app: Any, token: str) -> None:
        if not token:
            raise ValueError("BearerTokenMiddleware needs a non-empty token.")
        self.app = app
        self._expected = f"Bearer {token}".encode()

    def authorized(self, scope: Scope) -> bool:
        """Whether the request's ``Authorization`` header carries the token (constant time)."""
        given = b""
        for name, value in scope.get("headers") or ():
            if name.lower() == b"authorization":
                given = bytes(value)
                break
        return hmac.compare_digest(given, self._expected)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope.get("type")
        if kind not in ("http", "websocket") or scope.get("path") in OPEN_PATHS or self.authorized(scope):
            await self.app(scope, receive, send)
            return
        if kind == "http":
            await _refuse_http(send)
        else:
            await receive()  # the handshake's websocket.connect, before the refusal
            await _refuse_websocket(scope, send)


_REFUSAL = json.dumps({"detail": "this server needs a bearer token: send 'Authorization: Bearer <token>' (the "
                                 f"value of {TOKEN_ENV} on the server); the one sent was missing or wrong."}).encode()
_REFUSAL_HEADERS = [(b"content-type", b"application/json"), (b"www-authenticate", b'Bearer realm="agentgym"'),
                    (b"content-length", str(len(_REFUSAL)).encode())]


async def _refuse_http(send: Send) -> None:
    await send({"type": "http.response.start", "status": 401, "headers": _REFUSAL_HEADERS})
    await send({"type": "http.response.body", "body": _REFUSAL})


async def _refuse_websocket(scope: Scope, send: Send) -> None:
    if "websocket.http.response" in (scope.get("extensions") or {}):
        await send({"type": "websocket.http.response.start", "status": 401, "headers": _REFUSAL_HEADERS})
        await send({"type": "websocket.http.response.body", "body": _REFUSAL})
    else:
        await send({"type": "websocket.close", "code": 1008})
