"""``FinMCPEnv``: FinMCP-Bench financial tool use, replayed from recorded tool outputs.

Reward = TF1, the F1 of the tool names called against the recorded ones (multisets, all
turns), given at the end; ``info["finmcp_metrics"]`` also holds TP (precision), TR (recall)
and ``exact_sequence`` (1.0 when the called names equal the recorded sequence).

The check reads only the names of the calls made, so it is execution-free: a rehearsed
episode is scored from its calls (:meth:`FinMCPEnv.rehearsed_score`), and the recordings are
the world model's examples (:meth:`FinMCPEnv.recorded_examples`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar, Sequence

from agentgym_suite.core.tool_env import Conversation, ToolEnv
from agentgym_suite.envs.finmcp.dataset import Sample, infer_tools, load_samples
from agentgym_suite.envs.finmcp.metrics import tool_metrics
from agentgym_suite.envs.finmcp.replay import Replayer, UnmatchedCallHandler, decode_output

SYSTEM_PROMPT = (
    "You are a financial assistant with access to financial data tools (funds, news, user assets, "
    "strategies). Call the tools you need to answer the user's question, then answer in plain text."
)


class FinMCPEnv(ToolEnv):
    """FinMCP-Bench samples with recorded tool outputs.

    Args:
        data_path: a sample file or folder; default ``$AGENTGYM_DATA/finmcp/``.
        task: keep one sample kind: ``single step``, ``multi step`` or ``multi turn``.
        unmatched_call_handler: ``(name, arguments, sample) -> result`` for calls that have no
            recording (e.g. a rehearsal world model); default: an error result.
        **kwargs: see :class:`~agentgym_suite.core.tool_env.ToolEnv`.
    """

    benchmark: ClassVar[str] = "finmcp"

    def __init__(
        self,
        *,
        data_path: str | Path | None = None,
        task: str | None = None,
        unmatched_call_handler: UnmatchedCallHandler | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.samples = load_samples(data_path, task)
        self.tools = infer_tools(list(self.samples.values()))
        self.unmatched_call_handler = unmatched_call_handler
        self._sample: Sample | None = None
        self._replayer: Replayer | None = None
        self._turn_index = 0
        self._steps_in_turn = 0
        self._handled_on_turn = -1
        """Env turn of the last call a handler answered (calls refused before that take no step)."""
        self._called: list[str] = []
        self._metrics: dict[str, float] | None = None

    fixture_replaces_data = True

    @classmethod
    def fixture_kwargs(cls, scratch: Path) -> dict[str, Any]:
        """Generated samples in the published format (the official data carries no redistribution license)."""
        from agentgym_suite.envs.finmcp.fixtures import write_fixtures

        return {"data_path": str(write_fixtures(scratch / "finmcp"))}

    def task_ids(self) -> list[str]:
        """Sample ids, in file order."""
        return list(self.samples)

    def _start_conversation(self, task_id: str) -> Conversation:
        self._sample = self.samples[task_id]
        self._replayer = Replayer(self._sample, self.unmatched_call_handler)
        self._turn_index, self._steps_in_turn, self._called, self._metrics = 0, 0, [], None
        self._handled_on_turn = -1
        handlers = {t["function"]["name"]: self._handler(t["function"]["name"]) for t in self.tools}
        first = self._sample.turns[0].user
        return Conversation(task=first, tools=self.tools, handlers=handlers, system_prompt=SYSTEM_PROMPT, first_user_message=first)

    def _handler(self, name: str) -> Any:
        def handler(**arguments: Any) -> Any:
            assert self._replayer is not None
            self._called.append(name)
            self._handled_on_turn = self.turn
            return self._replayer.answer(name, arguments)
        handler.__name__ = name
        return handler

    def _after_calls(self, calls: list[Any]) -> bool:
        # a step is taken when a call reached a recorded tool; a message whose calls were all
        # refused (unknown tool, arguments against the schema) leaves the recorded sequence alone
        if self._handled_on_turn == self.turn:
            self._steps_in_turn += 1
        return False

    def _user_reply(self, assistant_text: str) -> str | None:
        assert self._sample is not None
        self._turn_index += 1
        self._steps_in_turn = 0
        if self._turn_index >= len(self._sample.turns):
            return None
        return self._sample.turns[self._turn_index].user

    def _evaluate(self) -> tuple[float, bool]:
        assert self._sample is not None
        self._metrics = tool_metrics(self._called, self._sample.gold_names)
        return self._metrics["TF1"], self._metrics["exact_sequence"] == 1.0

    def _extra_info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"finmcp_called": list(self._called)}
        if self._replayer is not None:
            info["finmcp_replay"] = {"matched": self._replayer.matched, "unmatched": self._replayer.unmatched}
        if self._metrics is not None:
            info["finmcp_metrics"] = dict(self._metrics)
        return info

    # ------------------------------------------------------------------ hooks for wrapping envs
    def recorded_examples(self) -> list[dict[str, Any]]:
        """The current sample's recorded calls with their recorded outputs."""
        if self._sample is None:
            return []
        return [{"name": c.name, "arguments": c.arguments, "result": decode_output(c.output)}
                for c in self._sample.recorded_calls]

    @property
    def execution_free(self) -> bool:
        """True: TF1 compares tool names only."""
        return True

    def rehearsed_score(self, calls: Sequence[tuple[str, dict[str, Any]]]) -> tuple[float, bool] | None:
        """TF1 (and exact sequence for ``won``) of the names in ``calls``: the handlers that count them never ran."""
        if self._sample is None:
            return None
        metrics = tool_metrics([name for name, _ in calls], self._sample.gold_names)
        return float(metrics["TF1"]), metrics["exact_sequence"] == 1.0

    def oracle(self) -> list[str]:
        """The recorded calls of the remaining turns, step by step, each turn closed by its answer.

        Steps of the current turn that the episode already took (messages with tool calls since
        the turn's user message) are skipped, so the plan continues from the current state.
        """
        if self._sample is None:
            return []
        actions: list[str] = []
        for index, turn in enumerate(self._sample.turns[self._turn_index:]):
            done = self._steps_in_turn if index == 0 else 0
            for step in turn.steps[done:]:
                actions.append("\n".join(
                    "<tool_call>\n" + json.dumps({"name": c.name, "arguments": c.arguments}, ensure_ascii=False) + "\n</tool_call>"
                    for c in step
                ))
            actions.append(turn.final_answer or "Here is the answer based on the tool results.")
        return actions
