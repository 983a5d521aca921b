"""``MCP-v0``: any MCP server as a suite tool env.

``gym.make("MCP-v0", server="stdio:python -m my_server", tasks="tasks.jsonl")`` (or
``server="http://host:port/mcp"`` for a streamable-HTTP server) plays the tasks of a tasks file
(:mod:`agentgym_suite.integrations.mcp.tasks`) with the tools the server lists, their input
schemas as the server states them. Calls are forwarded to the server through the ``mcp`` SDK's
client; its answers come back as tool messages: structured content as JSON when the result has
any, else its text content, an ``isError`` result as ``{"error": text}`` (an error result, the
action still valid). A stdio server is started at the first reset and stopped by ``close()``.

A call the server does not answer within ``call_timeout`` gets an error result and counts in
``info["mcp_timeouts"]``; ``max_timeouts`` such calls in a row, or a server that dies or breaks the connection raises
:class:`~agentgym_suite.integrations.mcp.session.McpServerError` from ``step`` (the episode is
lost, the rollout engine records the error) and the next ``reset`` starts it again.

What is not carried over: the server's prompts, resources, sampling and elicitation requests
(the env answers none of them), progress notifications and images (an image is shown as a
placeholder line).
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path
from typing import Any, ClassVar

from agentgym_suite.core.fixture_profile import FixtureProfile
from agentgym_suite.core.tool_calls import ToolCall
from agentgym_suite.core.tool_env import Conversation, ToolEnv
from agentgym_suite.integrations.mcp.session import (
    DEFAULT_CALL_TIMEOUT_S,
    DEFAULT_CONNECT_TIMEOUT_S,
    McpConnection,
    McpServerError,
    ServerAddress,
)
from agentgym_suite.integrations.mcp.tasks import McpTask, calls_match, load_tasks

NOT_CARRIED_OVER = ("the server's prompts, resources, sampling and elicitation requests, progress notifications; "
                    "images are shown as placeholders")
"""What ``MCP-v0`` does not carry over from an MCP server (also in ``info["mcp_not_carried_over"]`` at reset)."""


FIXTURE_TASKS = (
    {"id": "sum", "instruction": "What is 2.5 + 4? Use the add tool.",
     "expected_calls": [{"name": "add", "arguments": {"a": 2.5, "b": 4}}], "answer": {"contains": "6.5"}},
    {"id": "note", "instruction": "Note down 'buy milk', then tell me your notes.",
     "expected_calls": [{"name": "save_note", "arguments": {"text": "buy milk"}}, {"name": "list_notes", "arguments": {}}],
     "answer": {"contains": "buy milk", "ignore_case": True}, "oracle_answer": "Your notes: buy milk."},
)
"""The tasks :meth:`McpEnv.fixture_kwargs` plays on the demo server."""


def tool_call_text(name: str, arguments: dict[str, Any]) -> str:
    """An assistant message that makes one call (the suite's ``<tool_call>`` format)."""
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False) + "\n</tool_call>"


def openai_tool(tool: Any) -> dict[str, Any]:
    """An ``mcp.types.Tool`` as an OpenAI function schema (input schema as the server states it)."""
    schema = dict(tool.inputSchema or {}) or {"type": "object", "properties": {}}
    return {"type": "function", "function": {"name": tool.name, "description": tool.description or "",
                                             "parameters": schema}}


def result_content(result: Any) -> Any:
    """A ``CallToolResult`` as what the agent reads: its structured content when it has any (the typed
    output the tool declares), else its text, or ``{"error": text}`` for an ``isError`` result."""
    parts: list[str] = []
    for item in result.content or []:
        kind = getattr(item, "type", "")
        if kind == "text":
            parts.append(item.text)
        elif kind in ("image", "audio"):
            parts.append(f"[{kind} {item.mimeType}, {len(item.data)} base64 characters, not shown]")
        elif kind == "resource":
            resource = item.resource
            parts.append(getattr(resource, "text", None) or f"[resource {resource.uri}, not shown]")
        elif kind == "resource_link":
            parts.append(f"[resource link {item.uri}]")
        else:
            parts.append(f"[{kind or type(item).__name__} content, not shown]")
    text = "\n".join(parts)
    if result.isError:
        return {"error": text or "the tool reported an error"}
    structured = getattr(result, "structuredContent", None)
    if structured is not None:  # the typed output the tool declares; its text part only repeats it
        return structured
    return text


class McpEnv(ToolEnv):
    """An MCP server's tools played on a tasks file (see the module docstring).

    Info keys of its own:

    * ``mcp_server`` (str): the server the episode plays on (command or URL).
    * ``mcp_tool_errors`` (int): calls the server answered with ``isError`` this episode.
    * ``mcp_timeouts`` (int): calls the server did not answer within ``call_timeout`` this episode.
    * ``mcp_checks`` (dict): at the end, each check of the task (``expected_calls``, ``answer``,
      ``verifier``) and whether it passed.
    * ``mcp_not_carried_over`` (str): at reset, what of the server this env does not use.

    Args:
        server: ``"stdio:<command line>"`` or a streamable-HTTP URL.
        tasks: a ``.jsonl`` tasks file, or a list of task dicts.
        call_timeout: seconds one tool call may take.
        connect_timeout: seconds to start the server and finish the MCP handshake.
        max_timeouts: calls in a row left unanswered after which the server counts as hung (the
            episode ends with :class:`McpServerError`; the next reset starts it again).
        token: a bearer token for an HTTP server that needs one (``agentgym serve --mcp --token``);
            sent as ``Authorization: Bearer``, written as ``<secret>`` in a run's records.
        **kwargs: see :class:`~agentgym_suite.core.tool_env.ToolEnv`.
    """

    benchmark = "mcp"
    copyable: ClassVar[bool] = False
    info_keys: ClassVar[dict[str, str]] = {
        "mcp_server": "str: the MCP server the episode plays on (command or URL)",
        "mcp_tool_errors": "int: calls the server answered with isError this episode",
        "mcp_timeouts": "int: calls the server did not answer within call_timeout this episode",
        "mcp_checks": "dict: at the end, each check of the task and whether it passed",
        "mcp_not_carried_over": "str: at reset, what of the MCP server the env does not use",
    }
    fixture_profile: ClassVar[FixtureProfile] = FixtureProfile(fuzz_examples=15, oracle_examples=10)
    """Each step is a round trip to a server process: smaller fuzz budgets in the default run."""

    @classmethod
    def fixture_kwargs(cls, scratch: Path) -> dict[str, Any]:
        """The demo server (:mod:`agentgym_suite.integrations.mcp.demo_server`, over stdio) on two tasks."""
        scratch.mkdir(parents=True, exist_ok=True)
        tasks = scratch / "tasks.jsonl"
        tasks.write_text("\n".join(json.dumps(task) for task in FIXTURE_TASKS) + "\n", encoding="utf-8")
        return {"server": f"stdio:{sys.executable} -m agentgym_suite.integrations.mcp.demo_server", "tasks": str(tasks)}

    def __init__(self, server: str, tasks: str | Path | list[dict[str, Any]], *,
                 call_timeout: float = DEFAULT_CALL_TIMEOUT_S, connect_timeout: float = DEFAULT_CONNECT_TIMEOUT_S,
                 max_timeouts: int = 2, token: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._token = token or None
        self.address = ServerAddress.parse(server)
        self.tasks = {task.id: task for task in load_tasks(tasks)}
        self.call_timeout = float(call_timeout)
        self.connect_timeout = float(connect_timeout)
        self.prompt_description = f"the tools of the MCP server {self.address}"
        self._connection: McpConnection | None = None
        self._task: McpTask | None = None
        self._fatal: McpServerError | None = None
        self._answer = ""
        self._counts = {"mcp_tool_errors": 0, "mcp_timeouts": 0}
        self._checks: dict[str, bool] | None = None
        self.max_timeouts = int(max_timeouts)
        self._silent = 0

    # ------------------------------------------------------------------ suite API
    def task_ids(self) -> list[str]:
        return list(self.tasks)

    def oracle(self) -> list[str]:
        """The expected calls not matched yet, in order, then the task's final reply."""
        task = self._current()
        made = self._made_calls()
        done = next(n for n in range(len(task.expected_calls), -1, -1) if calls_match(task.expected_calls[:n], made))
        return [tool_call_text(c["name"], c["arguments"]) for c in task.expected_calls[done:]] + [task.final_reply()]

    # ------------------------------------------------------------------ ToolEnv hooks
    def _start_conversation(self, task_id: str) -> Conversation:
        self._task, self._answer, self._fatal, self._checks = self.tasks[task_id], "", None, None
        self._counts = {"mcp_tool_errors": 0, "mcp_timeouts": 0}
        self._silent = 0
        connection = self._connect()
        try:
            listed = connection.list_tools()
        except TimeoutError as exc:
            self._drop_connection()
            raise McpServerError(f"the MCP server {self.address} did not list its tools within {self.call_timeout:g} s.") from exc
        tools = [openai_tool(tool) for tool in listed]
        handlers = {tool.name: functools.partial(self._forward, tool.name) for tool in listed}
        extra = {"mcp_not_carried_over": NOT_CARRIED_OVER}
        return Conversation(task=self._task.instruction, tools=tools, handlers=handlers,
                            system_prompt=self._task.system_prompt, first_user_message=self._task.instruction,
                            extra=extra)

    def _user_reply(self, assistant_text: str) -> str | None:
        self._answer = assistant_text  # a text reply is the final answer: the episode ends
        return None

    def _evaluate(self) -> tuple[float, bool]:
        score, won, self._checks = self._current().check(self._made_calls(), self._answer)
        return score, won

    def _extra_info(self) -> dict[str, Any]:
        extra: dict[str, Any] = {"mcp_server": str(self.address), **self._counts}
        if self._checks is not None:
            extra["mcp_checks"] = dict(self._checks)
        return extra

    def execute_call(self, call: ToolCall) -> tuple[str, Any, str]:
        """Run the call on the server; a server that is gone ends the step with :class:`McpServerError`."""
        outcome = super().execute_call(call)
        if self._fatal is not None:
            raise self._fatal
        return outcome

    def close(self) -> None:
        self._drop_connection()
        super().close()

    # ------------------------------------------------------------------ internals
    def _forward(self, name: str, **arguments: Any) -> Any:
        assert self._connection is not None
        try:
            result = self._connection.call_tool(name, arguments)
        except TimeoutError:
            self._counts["mcp_timeouts"] += 1
            self._silent += 1
            if self._silent >= self.max_timeouts:
                self._fatal = McpServerError(f"the MCP server {self.address} answered none of the last {self._silent} "
                                             f"calls within {self.call_timeout:g} s; it counts as hung, this episode "
                                             "is lost, and the next reset starts or reaches it again.")
                self._drop_connection()
            return {"error": f"{name} did not answer within {self.call_timeout:g} s (timed out)"}
        except McpServerError as exc:
            self._fatal = exc
            self._connection = None
            return {"error": str(exc)}
        except Exception as exc:  # a protocol error the SDK raised for this request only
            self._counts["mcp_tool_errors"] += 1
            return {"error": f"{name}: the server's answer could not be read ({type(exc).__name__}: {exc})"}
        self._silent = 0
        content = result_content(result)
        if result.isError:
            self._counts["mcp_tool_errors"] += 1
        return content

    def _connect(self) -> McpConnection:
        if self._connection is None or not self._connection.alive:
            self._drop_connection()
            self._connection = McpConnection(self.address, call_timeout=self.call_timeout,
                                             connect_timeout=self.connect_timeout, token=self._token)
        return self._connection

    def _drop_connection(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()

    def _current(self) -> McpTask:
        if self._task is None:
            raise RuntimeError("call reset() first: no task is loaded.")
        return self._task

    def _made_calls(self) -> list[dict[str, Any]]:
        return [{"name": r.name, "arguments": r.arguments} for r in self.tool_log if r.ok]
