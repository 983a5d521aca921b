"""A synchronous handle on one MCP client session, for code that steps an env from plain threads.

The ``mcp`` SDK is asynchronous, and its transports and :class:`mcp.ClientSession` are async context
managers that must be entered and left in one task. :class:`McpConnection` keeps them open inside
an anyio blocking portal (an event loop on a thread of its own, ``anyio.from_thread``): the
context is entered and left by the portal's own task, and every request is sent through the
portal with a deadline, so a server that dies or stops answering is an
:class:`McpServerError` raised to the caller, never a hung ``step``.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import sys
import threading
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, AsyncIterator

import anyio
from anyio.from_thread import start_blocking_portal

from agentgym_suite.core.errors import AgentGymError

DEFAULT_CALL_TIMEOUT_S = 30.0
DEFAULT_CONNECT_TIMEOUT_S = 30.0
CLOSE_TIMEOUT_S = 10.0


class McpServerError(AgentGymError, RuntimeError):
    """The MCP server died, hung past its deadline or broke the protocol: the episode cannot go on."""


@dataclass(frozen=True)
class ServerAddress:
    """Where an MCP server is: a command to start over stdio, or a streamable-HTTP URL."""

    command: tuple[str, ...] = ()
    url: str = ""

    @classmethod
    def parse(cls, server: str | ServerAddress) -> ServerAddress:
        """``"stdio:python -m my_server"`` (shell-style words) or ``"http(s)://host:port/mcp"``."""
        if isinstance(server, ServerAddress):
            return server
        text = str(server).strip()
        if text.startswith(("http://", "https://")):
            return cls(url=text)
        if text.startswith("stdio:"):
            words = tuple(shlex.split(text[len("stdio:"):]))
            if words:
                return cls(command=words)
        raise ValueError(f"server={server!r}: give 'stdio:<command line>' (e.g. 'stdio:python -m my_server') "
                         "or a streamable-HTTP URL ('http://host:port/mcp').")

    def __str__(self) -> str:
        return self.url or "stdio:" + shlex.join(self.command)


@contextlib.asynccontextmanager
async def _open_session(address: ServerAddress, timeout_s: float, errlog: Any,
                        token: str | None = None) -> AsyncIterator[Any]:
    """Connect, initialise and yield an :class:`mcp.ClientSession` (entered and left in one task);
    over HTTP, ``token`` goes in an ``Authorization: Bearer`` header."""
    from mcp import ClientSession, StdioServerParameters

    async with contextlib.AsyncExitStack() as stack:
        if address.url:
            read, write, *_ = await stack.enter_async_context(_http_streams(address.url, token))
        else:
            from mcp.client.stdio import stdio_client

            params = StdioServerParameters(command=address.command[0], args=list(address.command[1:]),
                                           env=dict(os.environ))
            read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
        session = await stack.enter_async_context(ClientSession(read, write, read_timeout_seconds=timedelta(seconds=timeout_s)))
        with anyio.fail_after(timeout_s):
            await session.initialize()
        yield session


def _http_streams(url: str, token: str | None) -> Any:
    """The SDK's streamable-HTTP transport for ``url``, with the bearer header when ``token`` is set."""
    from mcp.client import streamable_http

    from agentgym_suite.serving.auth import auth_headers

    headers = auth_headers(token) or None
    if not hasattr(streamable_http, "streamable_http_client"):  # an mcp 1.x older than the rename
        return streamable_http.streamablehttp_client(url, headers=headers)
    if headers is None:
        return streamable_http.streamable_http_client(url)
    return _with_http_client(url, headers)


@contextlib.asynccontextmanager
async def _with_http_client(url: str, headers: dict[str, str] | None) -> AsyncIterator[Any]:
    """The SDK's current transport over an httpx client of ours that carries ``headers``."""
    import httpx
    from mcp.client import streamable_http

    async with httpx.AsyncClient(headers=headers, follow_redirects=True,
                                 timeout=httpx.Timeout(30.0, read=300.0)) as client:
        async with streamable_http.streamable_http_client(url, http_client=client) as streams:
            yield streams


class McpConnection:
    """One open MCP client session, used synchronously (see the module docstring).

    Args:
        server: ``"stdio:<command>"`` or an ``http(s)://`` URL (see :meth:`ServerAddress.parse`).
        call_timeout: seconds one request may take before it counts as timed out.
        connect_timeout: seconds to start the server and finish the MCP handshake.
        errlog: where a stdio server's stderr goes (default: this process's stderr).
        token: a bearer token sent with every HTTP request (e.g. an ``agentgym serve --mcp --token``
            server's); never written anywhere.
    """

    def __init__(self, server: str | ServerAddress, *, call_timeout: float = DEFAULT_CALL_TIMEOUT_S,
                 connect_timeout: float = DEFAULT_CONNECT_TIMEOUT_S, errlog: Any = None,
                 token: str | None = None) -> None:
        self.address = ServerAddress.parse(server)
        self.call_timeout = float(call_timeout)
        self._portal_cm = start_blocking_portal()
        self._portal = self._portal_cm.__enter__()
        self._session_cm: Any = None
        try:
            self._session_cm = self._portal.wrap_async_context_manager(
                _open_session(self.address, float(connect_timeout), errlog if errlog is not None else sys.stderr, token))
            self.session = self._session_cm.__enter__()
        except BaseException as exc:
            self._session_cm = None
            self.close()
            raise McpServerError(f"could not start or reach the MCP server {self.address}: {_describe(exc)}. "
                                 "Check the command or URL, and that the server speaks MCP.") from exc
        self.alive = True

    def list_tools(self) -> list[Any]:
        """Every tool the server lists (all pages), as ``mcp.types.Tool`` objects."""
        tools: list[Any] = []
        cursor = None
        for _ in range(1000):
            page = self.request(self.session.list_tools, cursor) if cursor else self.request(self.session.list_tools)
            tools.extend(page.tools)
            cursor = getattr(page, "nextCursor", None)
            if not cursor:
                return tools
        raise McpServerError(f"{self.address} listed more than 1000 pages of tools; refusing to read on.")

    def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        """Call one tool; ``TimeoutError`` when it does not answer within ``call_timeout`` (the session
        stays usable), :class:`McpServerError` when the server is gone."""
        return self.request(self.session.call_tool, name, arguments, timedelta(seconds=self.call_timeout))

    def request(self, method: Any, *args: Any) -> Any:
        """Run one session request through the portal with the call deadline."""
        from mcp.shared.exceptions import McpError

        if not self.alive:
            raise McpServerError(f"the MCP server {self.address} is gone; make a new connection.")

        async def bounded() -> Any:
            with anyio.fail_after(self.call_timeout + 1.0):
                return await method(*args)

        try:
            return self._portal.call(bounded)
        except TimeoutError:
            raise
        except McpError as exc:
            if _is_timeout(exc):
                raise TimeoutError(str(exc)) from exc
            if _is_closed(exc):
                self._lost(exc)
            raise
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError) as exc:
            self._lost(exc)
            raise AssertionError("unreachable") from exc

    def _lost(self, exc: BaseException) -> None:
        self.alive = False
        self.close()
        raise McpServerError(f"the MCP server {self.address} stopped answering ({_describe(exc)}); "
                             "this episode is lost, and the next reset starts or reaches it again.") from exc

    def close(self) -> None:
        """Leave the session (stopping a stdio server) and the portal; safe to call twice. A session
        that does not close within ``CLOSE_TIMEOUT_S`` is cancelled with the portal's tasks."""
        self.alive = False
        session_cm, self._session_cm = self._session_cm, None
        if session_cm is not None:
            closer = threading.Thread(target=_quietly, args=(session_cm.__exit__, None, None, None), daemon=True)
            closer.start()
            closer.join(CLOSE_TIMEOUT_S)
        portal_cm, self._portal_cm = getattr(self, "_portal_cm", None), None
        if portal_cm is not None:
            stop = _Closing("the MCP connection is closing")
            _quietly(portal_cm.__exit__, _Closing, stop, None)  # an exception cancels the portal's remaining tasks


class _Closing(Exception):
    """Passed to the portal's exit so that it cancels what is still running."""


def _quietly(fn: Any, *args: Any) -> None:
    with contextlib.suppress(BaseException):
        fn(*args)


def _is_timeout(exc: Exception) -> bool:
    error = getattr(exc, "error", None)
    return getattr(error, "code", None) == 408 or "timed out" in str(exc).lower()


def _is_closed(exc: Exception) -> bool:
    return "connection closed" in str(exc).lower()


def _describe(exc: BaseException) -> str:
    """One line for an exception, looking inside exception groups."""
    while getattr(exc, "exceptions", None):  # an exception group (Python 3.11, or the exceptiongroup backport)
        exc = exc.exceptions[0]  # type: ignore[attr-defined]
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
