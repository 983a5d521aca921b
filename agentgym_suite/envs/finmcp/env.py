"""``FinMCPEnv``: FinMCP-Bench financial tool use, replayed from recorded tool outputs.

The episode follows DianJin-TIR's ``infer/inference_api.py``: each user turn is answered from
the **recorded** history of the turns before it (the sample's own messages up to that user
message: earlier questions, the recorded tool calls and outputs, the recorded answers), never
from the model's earlier answers; the model gets no system prompt but the sample's own. In a
turn, a message of tool calls is executed while the calls executed so far in that turn number
at most 20 (upstream's ``max_tool_num``); the next message of calls is recorded but not
executed, and the turn ends there.

Scoring is upstream's ``eval/evaluation.py`` (see :mod:`.metrics`): the tool names of every
call the model made (all turns, in order, refused calls included) against the recorded ones.
The reward is the sample's F1 (0 when neither side calls a tool, upstream's rule);
``won`` is ``consist`` (the name sequences are equal). ``info["finmcp_metrics"]`` holds TP, FP,
FN, consist, precision, recall and f1; the scalars ``finmcp_TP``, ``finmcp_FP``, ``finmcp_FN``,
``finmcp_consist``, ``finmcp_scenario``, ``finmcp_difficulty`` and ``finmcp_task`` are what a
run's records keep, and ``agentgym eval`` turns them into upstream's macro/micro tables, overall
and per group, in ``summary.json`` (``benchmark_metrics``). A message whose tool call is not valid JSON makes
upstream's inference fail and the sample is dropped from its metrics; here the episode is
marked ``scorable: False`` the same way.

Departures (``leaderboard_departures``): the tool schemas are inferred from the recorded calls
(the Qieman MCP server's schemas are not published with the data) and calls are answered from
the recordings instead of the live server (a call with other arguments gets an error result).

The check reads only the names of the calls made, so it is execution-free: a rehearsed
episode is scored from its calls (:meth:`FinMCPEnv.rehearsed_score`), and the recordings are
the world model's examples (:meth:`FinMCPEnv.recorded_examples`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar, Sequence

from agentgym_suite.core.actions import ParsedAction
from agentgym_suite.core.fixture_profile import FixtureProfile
from agentgym_suite.core.text_env import StepOutcome
from agentgym_suite.core.tool_calls import ToolCall, parse_tool_calls
from agentgym_suite.core.tool_env import Conversation, ToolEnv
from agentgym_suite.envs.finmcp.dataset import Sample, infer_tools, load_samples
from agentgym_suite.envs.finmcp.metrics import COUNT_KEYS, GROUP_KEYS, benchmark_report, group_keys, tool_metrics
from agentgym_suite.envs.finmcp.replay import Replayer, UnmatchedCallHandler, decode_output

MAX_TOOL_CALLS_PER_TURN = 20
"""DianJin-TIR's ``max_tool_num``: calls executed in one user turn before the turn is cut."""
_HISTORY_KEYS = ("role", "content", "tool_calls", "tool_call_id", "name")


class FinMCPEnv(ToolEnv):
    """FinMCP-Bench samples with recorded tool outputs.

    Args:
        data_path: a sample file or folder; default ``$AGENTGYM_DATA/finmcp/``.
        task: keep one sample kind: ``single step``, ``multi step`` or ``multi turn``.
        unmatched_call_handler: ``(name, arguments, sample) -> result`` for calls that have no
            recording (e.g. a rehearsal world model); default: an error result.
        **kwargs: see :class:`~agentgym_suite.core.tool_env.ToolEnv`.

    Info keys (besides the shared ones of :mod:`agentgym_suite.core.info`):
        ``finmcp_called``: list[str]: names of the tools called so far.
        ``finmcp_replay``: dict: recorded calls matched and unmatched by the replay.
        ``finmcp_metrics``: dict, when the episode ended: TP, FP, FN, consist, precision, recall, f1 of the tool names.
        ``finmcp_TP``: int, when the episode ended: the sample's true positives (tool names called and in the gold).
        ``finmcp_FP``: int, when the episode ended: the sample's false positives.
        ``finmcp_FN``: int, when the episode ended: the sample's false negatives.
        ``finmcp_consist``: int, when the episode ended: 1 when the called names equal the gold sequence.
        ``finmcp_scenario``: str: upstream's scenario group of the sample.
        ``finmcp_difficulty``: str: upstream's difficulty group of the sample.
        ``finmcp_task``: str: upstream's task group of the sample.
    """

    benchmark: ClassVar[str] = "finmcp"
    info_keys: ClassVar[dict[str, str]] = {
        "finmcp_called": "list[str]: names of the tools called so far.",
        "finmcp_replay": "dict: recorded calls matched and unmatched by the replay.",
        "finmcp_metrics": "dict, when the episode ended: TP, FP, FN, consist, precision, recall, f1 of the tool names.",
        "finmcp_TP": "int, when the episode ended: the sample's true positives (tool names called and in the gold).",
        "finmcp_FP": "int, when the episode ended: the sample's false positives.",
        "finmcp_FN": "int, when the episode ended: the sample's false negatives.",
        "finmcp_consist": "int, when the episode ended: 1 when the called names equal the gold sequence.",
        "finmcp_scenario": "str: upstream's scenario group of the sample.",
        "finmcp_difficulty": "str: upstream's difficulty group of the sample.",
        "finmcp_task": "str: upstream's task group of the sample.",
    }
    """The info keys this env adds to the shared ones (:mod:`agentgym_suite.core.info`)."""
    fixture_profile: ClassVar[FixtureProfile] = FixtureProfile(refusals_scored=True)
    """FinMCP-Bench scores the name of every call the model wrote (upstream's F1 reads the names
    from the messages): a refused call, whether its name is a recorded tool or not, an unmatched
    argument set or a call past the turn's limit, counts as called, so it rightly costs the
    exact-sequence win."""
    eval_sampling_defaults: ClassVar[dict[str, Any]] = {"max_new_tokens": 4096, "temperature": None}
    """Sampling of DianJin-TIR's ``infer/infer_config.yaml``: ``max_new_tokens: 4096`` (sent as
    ``max_tokens``), no temperature (the server's default), ``enable_thinking: true``."""

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
        self._turn_start = 0
        """Index in ``messages`` of the current turn's first model message."""
        self._steps_in_turn = 0
        self._handled_on_turn = -1
        """Env turn of the last call a handler answered (calls refused before that take no step)."""
        self._calls_in_turn = 0
        self._over_limit = False
        self._malformed = False
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

    def leaderboard_departures(self) -> list[str]:
        """The two ways an offline replay differs from DianJin-TIR's live-server inference."""
        return [
            "FinMCP tool schemas are inferred from the recorded calls (the MCP server's schemas are not published)",
            "FinMCP tool calls are answered from the recordings, not the live MCP server (calls with other "
            "arguments get an error result)",
        ]

    @classmethod
    def benchmark_metrics(cls, final_infos: Sequence[dict[str, Any]], *, k: int | None = None) -> dict[str, Any]:
        """DianJin-TIR's macro/micro P/R/F1 and consistency, overall and by scenario, difficulty and task type."""
        keys = COUNT_KEYS + GROUP_KEYS
        rows = [{key: info[f"finmcp_{key}"] for key in keys} for info in final_infos
                if all(f"finmcp_{key}" in info for key in keys) and info.get("scorable", True) is not False]
        return benchmark_report(rows) if rows else {}

    # ------------------------------------------------------------------ conversation
    def _gold_history(self, turn: int) -> list[dict[str, Any]]:
        """The sample's messages up to and including its ``turn``-th user message."""
        assert self._sample is not None
        out: list[dict[str, Any]] = []
        users = 0
        for message in self._sample.raw.get("messages", []):
            out.append({k: message[k] for k in _HISTORY_KEYS if k in message})
            if message.get("role") == "user":
                if users == turn:
                    return out
                users += 1
        return out

    def _start_conversation(self, task_id: str) -> Conversation:
        self._sample = self.samples[task_id]
        self._replayer = Replayer(self._sample, self.unmatched_call_handler)
        self._turn_index, self._steps_in_turn, self._called, self._metrics = 0, 0, [], None
        self._calls_in_turn, self._over_limit, self._malformed = 0, False, False
        self._handled_on_turn = -1
        handlers = {t["function"]["name"]: self._handler(t["function"]["name"]) for t in self.tools}
        first = self._sample.turns[0].user
        history = self._gold_history(0)
        system = "\n\n".join(str(m.get("content", "")) for m in history if m.get("role") == "system")
        self._turn_start = 2 if system else 1
        return Conversation(task=first, tools=self.tools, handlers=handlers, system_prompt=system, first_user_message=first)

    def _handler(self, name: str) -> Any:
        def handler(**arguments: Any) -> Any:
            assert self._replayer is not None
            self._handled_on_turn = self.turn
            return self._replayer.answer(name, arguments)
        handler.__name__ = name
        return handler

    def _execute(self, command: str, parsed: ParsedAction) -> StepOutcome:
        message = parse_tool_calls(command)
        if message.errors:
            self._malformed = True
        self._over_limit = bool(message.calls) and self._calls_in_turn > MAX_TOOL_CALLS_PER_TURN
        return super()._execute(command, parsed)

    def execute_call(self, call: ToolCall) -> tuple[str, Any, str]:
        """As :class:`ToolEnv`, except past the turn's call limit: recorded, not executed."""
        if self._over_limit:
            note = {"error": f"not executed: more than {MAX_TOOL_CALLS_PER_TURN} tool calls in this turn"}
            return call.name, note, "error"
        return super().execute_call(call)

    def _after_calls(self, calls: list[ToolCall]) -> bool:
        # every call the model wrote counts in the metrics, as upstream reads the names from the
        # messages; only the recorded replay's step count waits for a call a handler answered
        self._called.extend(c.name for c in calls)
        if self._handled_on_turn == self.turn:
            self._steps_in_turn += 1
        if not self._over_limit:
            self._calls_in_turn += len(calls)
            return False
        reply = self._next_turn()
        if reply is None:
            return True
        self.messages.append({"role": "user", "content": reply})
        self._turn_start = len(self.messages)
        return False

    def _next_turn(self) -> str | None:
        assert self._sample is not None
        self._turn_index += 1
        self._steps_in_turn, self._calls_in_turn, self._over_limit = 0, 0, False
        if self._turn_index >= len(self._sample.turns):
            return None
        return self._sample.turns[self._turn_index].user

    def _user_reply(self, assistant_text: str) -> str | None:
        reply = self._next_turn()
        if reply is not None:
            self._turn_start = len(self.messages) + 1  # after the user message the caller appends
        return reply

    def _evaluate(self) -> tuple[float, bool]:
        assert self._sample is not None
        self._metrics = tool_metrics(self._called, self._sample.gold_names)
        return self._metrics["f1"], self._metrics["consist"] == 1.0

    def _extra_info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"finmcp_called": list(self._called)}
        if self._replayer is not None:
            info["finmcp_replay"] = {"matched": self._replayer.matched, "unmatched": self._replayer.unmatched}
        if self._sample is not None:
            for key, value in (group_keys(self._sample.raw) or {}).items():
                info[f"finmcp_{key}"] = value
            if 0 < self._turn_index < len(self._sample.turns):
                info["prompt_messages"] = self._gold_history(self._turn_index) + [
                    dict(m) for m in self.messages[self._turn_start:]]
        if self._metrics is not None:
            info["finmcp_metrics"] = dict(self._metrics)
            info.update({f"finmcp_{key}": int(self._metrics[key]) for key in COUNT_KEYS})
            if self._malformed:
                info["scorable"] = False  # upstream's inference fails on a non-JSON call; its evaluation drops the sample
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
        """True: the metrics compare tool names only."""
        return True

    def rehearsed_score(self, calls: Sequence[tuple[str, dict[str, Any]]]) -> tuple[float, bool] | None:
        """F1 (and consistency for ``won``) of the names in ``calls``: the handlers that count them never ran."""
        if self._sample is None:
            return None
        metrics = tool_metrics([name for name, _ in calls], self._sample.gold_names)
        return float(metrics["f1"]), metrics["consist"] == 1.0

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
