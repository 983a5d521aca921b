"""A verifiers rollout played one model turn at a time, from synchronous code.

A verifiers environment (the classic API: ``vf.Environment`` and its ``rollout``) drives its
own loop and asks a :class:`verifiers.Client` for every model turn. :class:`SteppedRollout` runs
that loop in an anyio blocking portal (an event loop on a thread of its own) with a client,
:class:`SteppedClient`, that hands the prompt to the caller and waits for the caller's reply:
``start()`` returns the first prompt, ``answer(text)`` the next prompt or the finished state.
The environment's own rubric scores the rollout (``Environment._run_rollout_state``).
"""

from __future__ import annotations

import asyncio
import json
import queue
import time
import uuid
from dataclasses import dataclass
from typing import Any

from anyio.from_thread import start_blocking_portal

from agentgym_suite.core.errors import AgentGymError
from agentgym_suite.core.tool_calls import parse_tool_calls

DEFAULT_TURN_TIMEOUT_S = 300.0


class VerifiersEpisodeError(AgentGymError, RuntimeError):
    """The verifiers environment raised, or took longer than its deadline, during an episode."""


def client_class() -> type:
    """:class:`SteppedClient`, built on the installed ``verifiers`` (imported only when needed)."""
    global _CLIENT
    if _CLIENT is None:
        _CLIENT = _make_client_class()
    return _CLIENT


_CLIENT: type | None = None


def _make_client_class() -> type:
    import verifiers as vf
    from verifiers.types import Response, ResponseMessage, ToolCall

    class SteppedClient(vf.Client):  # type: ignore[misc]
        """A ``vf.Client`` whose every response is the text the synchronous caller sends."""

        def __init__(self, rollout: SteppedRollout) -> None:
            super().__init__(None)
            self.rollout = rollout

        def setup_client(self, config: Any) -> Any:
            return None

        async def to_native_tool(self, tool: Any) -> Any:
            return tool

        async def to_native_prompt(self, messages: Any) -> tuple[Any, dict]:
            return messages, {}

        async def get_native_response(self, prompt: Any, model: str, sampling_args: Any, tools: Any = None,
                                      **kwargs: Any) -> Any:
            return await self.rollout.ask(prompt, tools)

        async def raise_from_native_response(self, response: Any) -> None:
            return None

        async def from_native_response(self, response: Any) -> Any:
            text, with_tools = response
            calls = []
            content = text
            if with_tools:
                parsed = parse_tool_calls(text)
                calls = [ToolCall(id=c.id or f"call_{uuid.uuid4().hex[:8]}", name=c.name,
                                  arguments=json.dumps(c.arguments, ensure_ascii=False)) for c in parsed.calls]
                content = parsed.content if calls else text
            message = ResponseMessage(content=content, tool_calls=calls or None,
                                      finish_reason="tool_calls" if calls else "stop", is_truncated=False)
            return Response(id=f"agentgym-{uuid.uuid4().hex[:12]}", created=int(time.time()), model="agentgym",
                            message=message)

        async def close(self) -> None:
            return None

    return SteppedClient


@dataclass
class Turn:
    """What the caller sees after ``start`` or ``answer``: the next prompt, or the finished state."""

    prompt: list[Any] | None = None
    tools: list[Any] | None = None
    state: Any = None

    @property
    def done(self) -> bool:
        return self.prompt is None


class SteppedRollout:
    """One verifiers rollout of ``environment`` on dataset row ``row``, a turn per :meth:`answer`.

    Args:
        environment: a ``vf.Environment``.
        row: the dataset row (a rollout input: ``prompt``, ``answer``, ``info``, ...).
        turn_timeout: seconds the environment may take between two model turns.
    """

    def __init__(self, environment: Any, row: dict[str, Any], *, turn_timeout: float = DEFAULT_TURN_TIMEOUT_S) -> None:
        self.environment = environment
        self.row = row
        self.turn_timeout = float(turn_timeout)
        self._events: queue.Queue[tuple[str, Any]] = queue.Queue()
        self._answers: asyncio.Queue[Any] | None = None
        self._portal_cm: Any = None
        self._portal: Any = None
        self._future: Any = None

    async def ask(self, prompt: Any, tools: Any) -> Any:
        """Called by the client inside the rollout: hand the prompt out, wait for the reply."""
        assert self._answers is not None
        self._events.put(("ask", (prompt, tools)))
        return await self._answers.get()

    def start(self) -> Turn:
        """Start the rollout; the first prompt (or the state, when it ends before any model turn)."""
        self._portal_cm = start_blocking_portal()
        self._portal = self._portal_cm.__enter__()
        self._answers = self._portal.call(_new_queue)
        client = client_class()(self)
        self._future = self._portal.start_task_soon(self._run, client)
        self._future.add_done_callback(lambda future: self._events.put(("done", future)))
        return self._next()

    async def _run(self, client: Any) -> Any:
        return await self.environment._run_rollout_state(self.row, client, "agentgym", {})

    def answer(self, text: str, with_tools: bool) -> Turn:
        """Send the model's reply; the next prompt, or the finished (scored) state."""
        self._portal.call(self._answers.put, (text, with_tools))  # type: ignore[union-attr]
        return self._next()

    def _next(self) -> Turn:
        try:
            kind, value = self._events.get(timeout=self.turn_timeout)
        except queue.Empty:
            self.close()
            raise VerifiersEpisodeError(f"the verifiers environment gave no next turn within {self.turn_timeout:g} s; "
                                        "the episode is lost (raise turn_timeout for slow environments).") from None
        if kind == "ask":
            prompt, tools = value
            return Turn(prompt=list(prompt), tools=tools)
        try:
            state = value.result()
        except BaseException as exc:
            self.close()
            raise VerifiersEpisodeError(f"the verifiers environment raised {type(exc).__name__}: {exc}; "
                                        "the episode is lost.") from exc
        self.close()
        return Turn(state=state)

    def close(self) -> None:
        """Cancel a rollout still running and stop the portal; safe to call twice."""
        future, self._future = self._future, None
        if future is not None and not future.done():
            future.cancel()
        portal_cm, self._portal_cm = self._portal_cm, None
        if portal_cm is not None:
            try:
                portal_cm.__exit__(_Closing, _Closing("closing"), None)
            except BaseException:  # noqa: BLE001  (a cancelled rollout's own error is of no use here)
                pass


class _Closing(Exception):
    """Passed to the portal's exit so that it cancels what is still running."""


async def _new_queue() -> asyncio.Queue[Any]:
    return asyncio.Queue()
