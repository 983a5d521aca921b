"""``ChecklistToolsEnv``: EnvACE's published tool-use training format as a tool env.

Each task is one item of a checklist training set (see :mod:`.dataset`): its tools, its
system prompt and user turns, and its per-turn checklists. The real world of such a set is
its recording: a call whose (name, arguments) were recorded gets the recorded result (the
released tool's cache, ``MCPChecklistTool.execute``); any other call gets an error result.
Training rehearses it (``EnvACE-Rehearsal-v0`` with ``base_env="ChecklistTools-v0"``): the
simulator answers every call, grounded on the task's recorded calls
(:meth:`ChecklistToolsEnv.recorded_examples`), and the ``checklist`` reward scores each user
turn with a fixed judge model (the published standards carry no machine check).

Alone, the env scores an episode with the same checklist reward when it is given a ``judge``
(a backend spec or callable); without one the score is 0.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, ClassVar

from agentgym_suite.core.tool_env import Conversation, ToolEnv
from agentgym_suite.envs.checklist_tools.dataset import ChecklistSample, load_checklist_samples
from agentgym_suite.envs.shared.checklists import ChecklistJudge, episode_score, score_turn
from agentgym_suite.envs.shared.canonical_json import canonical


class ChecklistToolsEnv(ToolEnv):
    """Tool-use training tasks with per-turn checklists.

    Args:
        data_path: a file or folder in the published format; default ``$AGENTGYM_DATA/envace_checklist/``.
        judge: a fixed judge model for the env's own score (a backend spec, object or callable
            ``(prompt) -> verdict``); never the policy being trained.
        **kwargs: see :class:`~agentgym_suite.core.tool_env.ToolEnv`.
    """

    benchmark: ClassVar[str] = "envace_checklist"
    examples_are_training_data: ClassVar[bool] = True
    """A training world: its tasks' recorded examples are training data."""
    fixture_replaces_data = True
    judge_setting: ClassVar[str] = "judge"
    """``agentgym eval --judge`` sets the fixed judge of the standards without a machine check."""

    def __init__(self, *, data_path: str | Path | None = None, judge: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.samples = load_checklist_samples(data_path)
        self.judge = ChecklistJudge(judge) if judge is not None else None
        self._sample: ChecklistSample | None = None
        self._turn_index = 0
        self._turn_log_start = 0

    @classmethod
    def fixture_kwargs(cls, scratch: Path) -> dict[str, Any]:
        """The generated fixture set (two tasks in the published format) and its deterministic stand-in judge."""
        from agentgym_suite.envs.checklist_tools.fixtures import snippet_judge, write_fixtures

        return {"data_path": str(write_fixtures(scratch / "envace_checklist")), "judge": snippet_judge}

    def task_ids(self) -> list[str]:
        """Sample ids (``original_index``), in file order."""
        return list(self.samples)

    def _start_conversation(self, task_id: str) -> Conversation:
        self._sample = self.samples[task_id]
        self._turn_index = 0
        self._turn_log_start = 0
        names = [str(t["function"].get("name")) for t in self._sample.tools]
        return Conversation(
            task=self._sample.user_turns[0],
            tools=list(self._sample.tools),
            handlers={name: self._replay(name) for name in names},
            system_prompt=self._sample.system_prompt,
            first_user_message=self._sample.user_turns[0],
        )

    def _replay(self, name: str) -> Callable[..., Any]:
        def answer(**arguments: Any) -> Any:
            assert self._sample is not None
            key = canonical(arguments)
            for example in self._sample.recorded:
                if example["name"] == name and canonical(example["arguments"]) == key:
                    return example["result"]
            return {"error": f"no recorded result for {name} with these arguments; this world only replays its recording"}
        return answer

    def _user_reply(self, assistant_text: str) -> str | None:
        assert self._sample is not None
        self._turn_index += 1
        self._turn_log_start = len(self.tool_log)
        turns = self._sample.user_turns
        return turns[self._turn_index] if self._turn_index < len(turns) else None

    def _evaluate(self) -> tuple[float, bool]:
        if self._sample is None or self.judge is None:
            return 0.0, False
        checklists = self._sample.checklists
        reached = len([m for m in self.messages if m.get("role") == "user"])
        scores = [score_turn(self.messages, checklists, t, self.judge) for t in range(reached)]
        turns = max(len(c) for c in checklists)
        won = reached >= turns and all(all(all(m) for m in s.met) for s in scores)
        return episode_score(scores, checklists), won

    def checklists(self) -> list[list[list[dict[str, Any]]]]:
        """The task's ``checklist_list``."""
        return [] if self._sample is None else json.loads(json.dumps(self._sample.checklists))

    def recorded_examples(self) -> list[dict[str, Any]]:
        """The recorded calls of this training task (the released simulator's few-shot block)."""
        return [] if self._sample is None else json.loads(json.dumps(self._sample.recorded, default=str))

    def oracle(self) -> list[str]:
        """The recorded conversation's remaining assistant messages (calls as ``<tool_call>`` blocks), from here on.

        In the current user turn, recorded steps whose calls all succeeded since the turn began
        are skipped; later turns follow in full.
        """
        if self._sample is None:
            return []
        turns = self._recorded_turns()
        made = {(r.name, canonical(r.arguments)) for r in self.tool_log[self._turn_log_start:] if r.ok}
        actions: list[str] = []
        for k, turn in enumerate(turns[self._turn_index:]):
            for action, calls in turn:
                if k == 0 and calls and all(c in made for c in calls):
                    continue
                actions.append(action)
        return actions

    def _recorded_turns(self) -> list[list[tuple[str, list[tuple[str, str]]]]]:
        """Per user turn of the recording: (action text, its (name, canonical arguments) calls)."""
        assert self._sample is not None
        turns: list[list[tuple[str, list[tuple[str, str]]]]] = []
        actions = iter(self._recorded_actions())
        for message in self._sample.conversation:
            if message.get("role") == "user":
                turns.append([])
            elif message.get("role") == "assistant" and turns:
                calls = []
                for call in message.get("tool_calls") or []:
                    fn = call.get("function", {})
                    arguments = fn.get("arguments")
                    arguments = json.loads(arguments) if isinstance(arguments, str) else arguments
                    calls.append((str(fn.get("name")), canonical(arguments)))
                turns[-1].append((next(actions), calls))
        return turns

    def _recorded_actions(self) -> list[str]:
        assert self._sample is not None
        actions = []
        for message in self._sample.conversation:
            if message.get("role") != "assistant":
                continue
            calls = message.get("tool_calls") or []
            if calls:
                blocks = []
                for call in calls:
                    fn = call.get("function", {})
                    arguments = fn.get("arguments")
                    arguments = json.loads(arguments) if isinstance(arguments, str) else arguments
                    blocks.append("<tool_call>\n" + json.dumps({"name": fn.get("name"), "arguments": arguments}, ensure_ascii=False) + "\n</tool_call>")
                actions.append("\n".join(blocks))
            else:
                actions.append(str(message.get("content") or "Done."))
        return actions
