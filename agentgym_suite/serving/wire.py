"""One OpenEnv WebSocket session from the client side, synchronous and bounded in time.

OpenEnv's protocol: a client opens ``ws://host:port/ws`` (one session, one env on the server),
sends ``{"type": "reset", "data": {...}}`` / ``{"type": "step", "data": action}`` /
``{"type": "state"}`` / ``{"type": "close"}`` and gets ``{"type": "observation", "data":
{"observation": {...}, "reward": r, "done": d}}`` or ``{"type": "error", "data": {"message",
"code"}}`` back. :class:`WireSession` speaks it with the ``websockets`` library's sync client
(no event loop thread per session), and the plain HTTP routes (``/schema``, ``/metadata``, the
task routes) with ``urllib``.

Failures are typed: a server that refuses or drops the connection, or does not answer in time,
raises :class:`ServerGone` (an :class:`~agentgym_suite.core.process_groups.EnvWorkerDied`, so
the rollout engine and eval treat it as a dead worker: the episode is lost, the run goes on);
an error frame raises :class:`RemoteSessionError` (:class:`ServerBusy` when at capacity), and a
server that wants a token it did not get (or not that one) :class:`TokenRefused`.

Every request carries ``Authorization: Bearer <token>`` when a token is given, or else when
``AGENTGYM_SERVE_TOKEN`` is set (see :mod:`agentgym_suite.serving.auth`); no message repeats it.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from agentgym_suite.core.errors import AgentGymError
from agentgym_suite.core.process_groups import EnvWorkerDied

DEFAULT_MESSAGE_TIMEOUT_S = 300.0
"""Seconds a client waits for one answer before it counts the server as gone."""
CONNECT_TIMEOUT_S = 10.0
"""Seconds to open a connection (and for each plain HTTP request)."""
MAX_MESSAGE_BYTES = 64 * 1024 * 1024
"""Largest frame a client accepts from a server."""


class ServerGone(EnvWorkerDied):
    """The env server closed the connection, cannot be reached, or did not answer in time."""


class RemoteSessionError(AgentGymError, RuntimeError):
    """The server answered a message with an error frame (``code`` is OpenEnv's error code)."""

    def __init__(self, message: str, code: str = "") -> None:
        super().__init__(message)
        self.code = code


class ServerBusy(RemoteSessionError):
    """The server is at its session limit (``CAPACITY_REACHED``); try later or another server."""


class TokenRefused(RemoteSessionError):
    """The server needs a bearer token and the one sent (if any) is not it (HTTP 401/403)."""


def _refused_message(where: str, sent: bool) -> str:
    from agentgym_suite.serving.auth import TOKEN_ENV

    if sent:
        return (f"the env server at {where} refused the token sent (HTTP 401): give the client the server's value of "
                f"{TOKEN_ENV} (or token=...).")
    return (f"the env server at {where} needs a bearer token (HTTP 401): set {TOKEN_ENV} to the server's token, or "
            "pass token=... .")


def endpoints(url: str) -> tuple[str, str]:
    """``(ws_url, http_base)`` of a server address: ``ws://h:p``, ``http://h:p``, ``h:p`` or
    ``openenv://h:p``, with or without the ``/ws`` path."""
    text = url.strip()
    if "://" not in text:
        text = "ws://" + text
    parts = urlsplit(text)
    if not parts.hostname:
        raise ValueError(f"{url!r} is not a server address; write it as ws://HOST:PORT.")
    secure = parts.scheme in ("wss", "https")
    if parts.scheme not in ("ws", "wss", "http", "https", "openenv"):
        raise ValueError(f"{url!r}: the scheme must be ws, wss, http, https or openenv.")
    path = parts.path.rstrip("/")
    base_path = path[: -len("/ws")] if path.endswith("/ws") else path
    ws = urlunsplit(("wss" if secure else "ws", parts.netloc, base_path + "/ws", parts.query, ""))
    http = urlunsplit(("https" if secure else "http", parts.netloc, base_path, "", ""))
    return ws, http


def http_json(http_base: str, path: str, body: dict[str, Any] | None = None, timeout: float = CONNECT_TIMEOUT_S,
              token: str | None = None) -> Any:
    """GET (or POST ``body`` to) ``http_base + path`` and decode its JSON answer; ``token`` (or
    ``$AGENTGYM_SERVE_TOKEN``) goes as a bearer token.

    Raises:
        ServerGone: the server cannot be reached.
        TokenRefused: it wants a token it did not get.
        RemoteSessionError: it answered with another HTTP error (``code`` is the status).
    """
    from agentgym_suite.serving.auth import auth_headers, token_from_env

    token = token_from_env(token)
    data = None if body is None else json.dumps(body).encode()
    headers = auth_headers(token)
    if body is not None:
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(http_base + path, data=data, method="GET" if body is None else "POST",
                                     headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 (http(s) only, see endpoints)
            return json.loads(response.read().decode() or "null")
    except urllib.error.HTTPError as exc:
        if exc.code == 401:
            raise TokenRefused(_refused_message(http_base, bool(token)), code="401") from None
        raise RemoteSessionError(f"{http_base}{path} answered HTTP {exc.code}", code=str(exc.code)) from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ServerGone(f"the env server at {http_base} cannot be reached ({reason}).", reason=str(reason)) from None


class WireSession:
    """One session on an OpenEnv server (see the module docstring); connects on first use.

    Args:
        url: the server's address (see :func:`endpoints`).
        message_timeout: seconds to wait for each answer (None: forever).
        token: the server's bearer token (None: ``$AGENTGYM_SERVE_TOKEN``, if set).
    """

    def __init__(self, url: str, message_timeout: float | None = DEFAULT_MESSAGE_TIMEOUT_S,
                 token: str | None = None) -> None:
        from agentgym_suite.serving.auth import token_from_env

        self.ws_url, self.http_base = endpoints(url)
        self.message_timeout = message_timeout
        self._token = token_from_env(token)
        self._ws: Any = None

    def http_json(self, path: str, body: dict[str, Any] | None = None) -> Any:
        """:func:`http_json` on this session's server, with its token."""
        return http_json(self.http_base, path, body, token=self._token or "")

    @property
    def connected(self) -> bool:
        """Whether a connection is open now."""
        return self._ws is not None

    def connect(self) -> None:
        """Open the session (a no-op when open)."""
        if self._ws is not None:
            return
        import inspect

        from websockets.exceptions import InvalidStatus
        from websockets.sync.client import connect

        from agentgym_suite.serving.auth import auth_headers, redacting_logger

        options: dict[str, Any] = {"open_timeout": CONNECT_TIMEOUT_S, "close_timeout": 1.0,
                                   "max_size": MAX_MESSAGE_BYTES, "compression": None,
                                   "logger": redacting_logger("websockets.client")}
        if self._token:
            options["additional_headers"] = auth_headers(self._token)
        if "legacy" in inspect.signature(connect).parameters:  # websockets >= 17: a plain connection, not a context
            options["legacy"] = True
        try:
            self._ws = connect(self.ws_url, **options)
        except InvalidStatus as exc:
            status = exc.response.status_code
            if status in (401, 403):
                raise TokenRefused(_refused_message(self.ws_url, bool(self._token)), code=str(status)) from None
            raise ServerGone(f"cannot open a session on the env server at {self.ws_url} (it answered HTTP {status}).",
                             reason=f"HTTP {status}") from None
        except Exception as exc:  # refused, unreachable, handshake failed
            raise ServerGone(f"cannot open a session on the env server at {self.ws_url} ({exc}).",
                             reason=str(exc)) from None

    def request(self, message_type: str, data: dict[str, Any] | None = None, *, during: str = "") -> dict[str, Any]:
        """Send one message and return the ``data`` of its answer.

        Raises:
            ServerGone: the connection broke or the answer did not come in time (the session is
                then closed: its env on the server is lost).
            RemoteSessionError: the server answered with an error frame.
        """
        from websockets.exceptions import ConnectionClosed

        self.connect()
        message: dict[str, Any] = {"type": message_type}
        if data is not None:
            message["data"] = data
        when = during or message_type
        try:
            try:
                self._ws.send(json.dumps(message))
            except ConnectionClosed:  # a refused session sends an error frame, then closes: read it
                pass
            raw = self._ws.recv(timeout=self.message_timeout)
        except TimeoutError:
            self.close()
            raise ServerGone(f"the env server at {self.ws_url} did not answer the {when} within "
                             f"{self.message_timeout:g} s; the session was dropped.", reason="timed out") from None
        except (ConnectionClosed, OSError) as exc:
            self._ws = None
            raise ServerGone(f"the env server at {self.ws_url} closed the connection during {when} (it stopped, was "
                             f"killed, or dropped the session: {_close_reason(exc)}); this episode is lost.",
                             reason=_close_reason(exc)) from None
        try:
            answer = json.loads(raw)
        except ValueError:
            self.close()
            raise RemoteSessionError(f"the env server at {self.ws_url} sent a frame that is not JSON.") from None
        if not isinstance(answer, dict):
            raise RemoteSessionError(f"the env server at {self.ws_url} sent {type(answer).__name__}, not an object.")
        if answer.get("type") == "error":
            error = answer.get("data") or {}
            code = str(error.get("code", ""))
            text = str(error.get("message", "unknown error"))
            if code == "VALIDATION_ERROR" and error.get("errors"):
                text += ": " + "; ".join(f"{'.'.join(map(str, e.get('loc', ())))}: {e.get('msg', '')}"
                                         for e in error["errors"][:5] if isinstance(e, dict))
            cls = ServerBusy if code == "CAPACITY_REACHED" else RemoteSessionError
            if cls is ServerBusy:
                self.close()
            raise cls(f"the env server at {self.ws_url} refused the {when}: {text} ({code or 'no code'})", code=code)
        return answer.get("data") or {}

    def close(self) -> None:
        """Say goodbye and close the connection (best effort, bounded by a second)."""
        ws, self._ws = self._ws, None
        if ws is None:
            return
        try:
            ws.send(json.dumps({"type": "close"}))
        except Exception:  # the server may be gone already
            pass
        try:
            ws.close()
        except Exception:  # nothing left to save
            pass


def _close_reason(exc: BaseException) -> str:
    rcvd = getattr(exc, "rcvd", None)
    if rcvd is not None:
        meaning = {1009: "message too big for the server's frame limit", 1011: "server error"}.get(rcvd.code)
        return f"close code {rcvd.code}" + (f", {meaning}" if meaning else "") + (f", {rcvd.reason}" if rcvd.reason else "")
    return str(exc) or type(exc).__name__
