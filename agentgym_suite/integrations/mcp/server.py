"""``agentgym serve --mcp ENV_ID``: a suite tool env served as an MCP server (the ``mcp`` SDK's server).

Each MCP session plays its own env, made as ``gymnasium.make(ENV_ID, **env_kwargs)`` would make
it. Before the first reset a session lists three control tools; after it, the current task's
tools too (the server sends ``notifications/tools/list_changed`` at every reset):

* ``reset(task_id, seed)``: starts an episode; answers with the system prompt and the user's
  first message (structured: ``observation``, ``system_prompt``, ``task_id``, ``tools``);
* ``send_message(text)``: the agent's text turn to the simulated user; answers with the user's
  reply (structured: ``observation``, ``reward``, ``terminated``, ``truncated``);
* ``score()``: the episode so far: ``reward`` (the sum ``gym.make`` paid), ``score``, ``won``,
  ``terminated``, ``truncated``, ``turn`` and the env's last ``info`` (without the conversation);
* each task tool: the call is made as the env's ``<tool_call>`` message; the answer is the
  env's tool result, with ``isError`` when the env refused the call or the tool failed.

What is not carried over: the env's observation format for tool results (an MCP result holds
one call's result, not a ``<tool_response>`` block), several calls in one message (each MCP call
is one step) and the env's prompt formatting; the reward is the env's own, step for step.
"""

from __future__ import annotations

import contextlib
import json
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any

import anyio
import gymnasium as gym

from agentgym_suite.core.tool_calls import tool_name
from agentgym_suite.integrations.mcp.env import tool_call_text

CONTROL_TOOLS = ("reset", "send_message", "score")
NOT_CARRIED_OVER = ("tool results come one call per MCP result (not the env's <tool_response> blocks); several calls "
                    "in one message are one step each; the env's prompt formatting is the client's to do")
"""What ``agentgym serve --mcp`` does not carry over (also in every ``reset`` answer)."""


def _control_tools() -> list[Any]:
    from mcp import types

    return [
        types.Tool(name="reset", description="Start an episode of the served env. Optional task_id (see the env's "
                                            "task ids) and seed. Answers with the system prompt and the user's first message.",
                   inputSchema={"type": "object", "properties": {"task_id": {"type": "string"}, "seed": {"type": "integer"}}}),
        types.Tool(name="send_message", description="Send a text message to the user (the agent's turn without a "
                                                   "tool call). Answers with the user's reply.",
                   inputSchema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
        types.Tool(name="score", description="The episode's reward, score and outcome so far, as the env reports them.",
                   inputSchema={"type": "object", "properties": {}}),
    ]


@dataclass
class Episode:
    """One session's env and what its episode has paid so far."""

    env: gym.Env
    reward: float = 0.0
    terminated: bool = False
    truncated: bool = False
    info: dict[str, Any] = field(default_factory=dict)
    tools: list[dict[str, Any]] = field(default_factory=list)
    started: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.env.close()


class McpEnvServer:
    """The MCP server behind ``agentgym serve --mcp`` (see the module docstring).

    Args:
        env_id: a registered env id whose action is an assistant message (a tool env).
        env_kwargs: keyword arguments for ``gymnasium.make``.
        show_errors: send an env exception's text to the client (off: its type only).
    """

    def __init__(self, env_id: str, env_kwargs: dict[str, Any] | None = None, *, show_errors: bool = False) -> None:
        from mcp.server.lowlevel import Server

        import agentgym_suite  # noqa: F401  (registers the suite's ids)

        self.env_id = env_id
        self.env_kwargs = dict(env_kwargs or {})
        self.show_errors = show_errors
        probe = gym.make(env_id, **self.env_kwargs)  # a bad id or kwarg fails now, not in the first session
        try:
            self.task_ids = [str(t) for t in probe.unwrapped.task_ids()]
        finally:
            probe.close()
        self._episodes: dict[int, Episode] = {}
        self.server: Any = Server(f"agentgym-{env_id}", instructions=f"{env_id} served by agentgym-suite: call reset "
                                  "first, then the task's tools and send_message; score() reads the reward.")
        self.server.list_tools()(self._list_tools)
        self.server.call_tool(validate_input=False)(self._call_tool)

    # ------------------------------------------------------------------ sessions
    def _episode(self) -> Episode:
        session = self.server.request_context.session
        key = id(session)
        if key not in self._episodes:
            episode = Episode(gym.make(self.env_id, **self.env_kwargs))
            self._episodes[key] = episode
            weakref.finalize(session, self._forget, key)
        return self._episodes[key]

    def _forget(self, key: int) -> None:
        episode = self._episodes.pop(key, None)
        if episode is not None:
            episode.close()

    def close(self) -> None:
        """Close every session's env."""
        for key in list(self._episodes):
            self._forget(key)

    # ------------------------------------------------------------------ handlers
    async def _list_tools(self) -> list[Any]:
        from mcp import types

        tools = _control_tools()
        episode = self._episodes.get(id(self.server.request_context.session))
        for tool in episode.tools if episode is not None else []:
            function = tool.get("function") or tool
            if function.get("name") in CONTROL_TOOLS:
                continue  # the control tool of that name wins; said in reset's answer
            tools.append(types.Tool(name=function["name"], description=function.get("description") or "",
                                    inputSchema=function.get("parameters") or {"type": "object", "properties": {}}))
        return tools

    async def _call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        episode = self._episode()
        try:
            if name == "reset":
                result = await anyio.to_thread.run_sync(self._reset, episode, arguments)
                with contextlib.suppress(Exception):
                    await self.server.request_context.session.send_tool_list_changed()
                return result
            if name == "score":
                return self._score(episode)
            if name == "send_message":
                return await anyio.to_thread.run_sync(self._send, episode, arguments)
            return await anyio.to_thread.run_sync(self._tool, episode, name, arguments)
        except _Refused as exc:
            return _error(str(exc))
        except Exception as exc:  # the env failed: the session stays, the client reads why
            detail = f"{type(exc).__name__}: {exc}" if self.show_errors else type(exc).__name__
            return _error(f"the env raised {detail}; call reset to start again.")

    # ------------------------------------------------------------------ env calls (worker threads)
    def _reset(self, episode: Episode, arguments: dict[str, Any]) -> Any:
        task_id, seed = arguments.get("task_id"), arguments.get("seed")
        if task_id is not None and str(task_id) not in self.task_ids:
            shown = ", ".join(self.task_ids[:20]) + (" ..." if len(self.task_ids) > 20 else "")
            raise _Refused(f"unknown task_id {str(task_id)[:200]!r}; task ids: {shown}")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise _Refused("seed must be a non-negative integer.")
        options = {"task_id": str(task_id)} if task_id is not None else None
        with episode.lock:
            observation, info = episode.env.reset(seed=seed, options=options)
            episode.reward, episode.terminated, episode.truncated, episode.info = 0.0, False, False, dict(info)
            episode.tools, episode.started = list(info.get("tools") or []), True
        system = next((m["content"] for m in info.get("messages") or [] if m.get("role") == "system"), "")
        names = [tool_name(t) for t in episode.tools]
        shadowed = [n for n in names if n in CONTROL_TOOLS]
        structured = {"observation": observation, "system_prompt": system, "task_id": info.get("task_id"),
                      "tools": names, "not_carried_over": NOT_CARRIED_OVER}
        if shadowed:
            structured["shadowed_tools"] = shadowed
        text = (f"System prompt:\n{system}\n\nUser:\n{observation}" if system else observation)
        return _result(text, structured)

    def _send(self, episode: Episode, arguments: dict[str, Any]) -> Any:
        text = arguments.get("text")
        if not isinstance(text, str):
            raise _Refused("send_message takes {\"text\": <string>}.")
        if "<tool_call>" in text:
            raise _Refused("send_message is for text to the user; call the task's tools as MCP tools.")
        observation, info = self._step(episode, text)
        return _result(observation, {"observation": observation, "reward": episode.reward,
                                     "terminated": episode.terminated, "truncated": episode.truncated},
                       error=not info.get("action_valid", True))

    def _tool(self, episode: Episode, name: str, arguments: dict[str, Any]) -> Any:
        if name not in {tool_name(t) for t in episode.tools}:
            known = ", ".join([*CONTROL_TOOLS, *(tool_name(t) for t in episode.tools)])
            raise _Refused(f"no tool named {name[:200]!r} in this episode; tools: {known}")
        observation, info = self._step(episode, tool_call_text(name, arguments))
        messages = info.get("messages") or []
        content = messages[-1]["content"] if messages and messages[-1].get("role") == "tool" else observation
        unwrapped = episode.env.unwrapped
        log = getattr(unwrapped, "tool_log", None)
        failed = not info.get("action_valid", True) or bool(log and not log[-1].ok)
        if episode.terminated or episode.truncated:
            content += "\n[the episode has ended; call score()]"
        return _result(content if isinstance(content, str) else json.dumps(content), None, error=failed)

    def _step(self, episode: Episode, action: str) -> tuple[str, dict[str, Any]]:
        if not episode.started:
            raise _Refused("call reset first: no episode is running in this session.")
        if episode.terminated or episode.truncated:
            raise _Refused("the episode has ended; call score() to read it, or reset to start another.")
        with episode.lock:
            observation, reward, terminated, truncated, info = episode.env.step(action)
            episode.reward += float(reward)
            episode.terminated, episode.truncated, episode.info = bool(terminated), bool(truncated), dict(info)
            episode.tools = list(info.get("tools") or episode.tools)
        return observation, info

    def _score(self, episode: Episode) -> Any:
        info = {k: v for k, v in episode.info.items() if k not in ("messages", "tools")}
        structured = {"reward": episode.reward, "score": info.get("score", 0.0), "won": bool(info.get("won", False)),
                      "terminated": episode.terminated, "truncated": episode.truncated, "turn": info.get("turn", 0),
                      "info": json.loads(json.dumps(info, default=str))}
        return _result(json.dumps(structured), structured)

    # ------------------------------------------------------------------ transports
    async def run_stdio(self) -> None:
        """Serve one session on this process's stdin/stdout."""
        from mcp.server.stdio import stdio_server

        async with stdio_server() as (read, write):
            await self.server.run(read, write, self.server.create_initialization_options(
                notification_options=_notifications()))

    def http_app(self, *, max_sessions: int = 64, idle_timeout: float | None = 600.0) -> Any:
        """A Starlette app serving streamable HTTP on ``/mcp``, one env per MCP session."""
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
        from starlette.applications import Starlette
        from starlette.routing import Route

        manager = StreamableHTTPSessionManager(app=self.server, session_idle_timeout=idle_timeout,
                                               max_sessions=max_sessions)

        @contextlib.asynccontextmanager
        async def lifespan(app: Any) -> Any:
            async with manager.run():
                try:
                    yield
                finally:
                    self.close()

        return Starlette(routes=[Route("/mcp", endpoint=_AsgiEndpoint(manager))], lifespan=lifespan)


class _AsgiEndpoint:
    """The session manager as an ASGI endpoint on exactly ``/mcp`` (a mount would redirect it to ``/mcp/``)."""

    def __init__(self, manager: Any) -> None:
        self.manager = manager

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.manager.handle_request(scope, receive, send)


class _Refused(Exception):
    """A call the server answers with an error result (the session goes on)."""


def _notifications() -> Any:
    from mcp.server.lowlevel import NotificationOptions

    return NotificationOptions(tools_changed=True)


def _result(text: str, structured: dict[str, Any] | None, *, error: bool = False) -> Any:
    from mcp import types

    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structuredContent=structured,
                                isError=error)


def _error(text: str) -> Any:
    return _result(text, None, error=True)
