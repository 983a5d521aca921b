"""Small fake envs and backends for rollout tests."""

from __future__ import annotations

from typing import Any, Sequence

from agentgym_suite.core.text_env import StepOutcome, TaskStart, TextEnv
from agentgym_suite.core.tool_env import Conversation, ToolEnv
from agentgym_suite.llm.base import BackendError, Sample, SamplingParams


class CounterEnv(TextEnv):
    """Task ``cN`` ends (won) after N steps; task ``boom`` raises inside step."""

    benchmark = "counter"

    def task_ids(self) -> list[str]:
        return ["c1", "c2", "c3", "boom"]

    def oracle(self) -> list[str]:
        return ["next"]

    def _load_task(self, task_id: str) -> TaskStart:
        self._left = 2 if task_id == "boom" else int(task_id[1:])
        return TaskStart(f"Counter {task_id} starts.", f"Take {self._left} steps.", ["next", "wait"])

    def _execute(self, command: str, parsed: Any) -> StepOutcome:
        if self.task_id == "boom":
            raise RuntimeError("the simulator crashed")
        self._left -= 1
        done = self._left <= 0
        return StepOutcome(f"{self._left} steps to go.", 1.0 if done else 0.0, 1.0 if done else 0.0, won=done,
                           terminated=done, admissible_actions=["next", "wait"])


ECHO_TOOL = {"type": "function", "function": {
    "name": "echo", "description": "Echo a text back.",
    "parameters": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}}


class EchoToolEnv(ToolEnv):
    """A tool env with one ``echo`` tool; the user asks again after a plain reply, twice at most."""

    benchmark = "echo"

    def task_ids(self) -> list[str]:
        return ["echo-1", "echo-2"]

    def oracle(self) -> list[str]:
        return ['<tool_call>\n{"name": "echo", "arguments": {"text": "hi"}}\n</tool_call>']

    def _start_conversation(self, task_id: str) -> Conversation:
        self._replies = 0
        return Conversation(task="Echo hi.", tools=[ECHO_TOOL], handlers={"echo": lambda text: {"echo": text}},
                            system_prompt="You test tools.", first_user_message="Please echo hi.")

    def _user_reply(self, assistant_text: str) -> str | None:
        self._replies += 1
        return None if self._replies >= 2 else "Try again, please."

    def _evaluate(self) -> tuple[float, bool]:
        won = any(r.name == "echo" and r.ok for r in self.tool_log)
        return float(won), won


class ScriptedBackend:
    """Answers turn k of every episode with ``script[k]`` (plus the end-of-turn token), tokenised
    with a real backend's tokenizer; records batch sizes."""

    supports_token_prompts = True
    name = "scripted"

    def __init__(self, inner: Any, script: Sequence[str], poison: str | None = None) -> None:
        self.inner = inner
        self.script = list(script)
        self.poison = poison
        self.batch_sizes: list[int] = []
        self._eos = inner.tokenizer.eos_token_id

    def render_prompt(self, prompt: Any, tools: Any = None, *, add_generation_prompt: bool = True) -> str:
        return self.inner.render_prompt(prompt, tools, add_generation_prompt=add_generation_prompt)

    def encode(self, text: str) -> list[int]:
        return self.inner.encode(text)

    def decode(self, ids: Sequence[int], *, skip_special_tokens: bool = True) -> str:
        return self.inner.decode(ids, skip_special_tokens=skip_special_tokens)

    def _answer(self, prompt_ids: list[int]) -> Sample:
        text = self.decode(prompt_ids, skip_special_tokens=False)
        if self.poison and self.poison in text:
            raise BackendError("poisoned prompt")
        turn = text.count("<|im_start|>assistant") - 1
        ids = self.encode(self.script[min(turn, len(self.script) - 1)]) + [self._eos]
        return Sample(text=self.decode(ids), prompt_ids=list(prompt_ids), completion_ids=ids,
                      logprobs=[-0.5] * len(ids), finish_reason="stop")

    def generate_from_ids(self, prompt_ids: Sequence[Sequence[int]], params: SamplingParams) -> list[list[Sample]]:
        self.batch_sizes.append(len(prompt_ids))
        return [[self._answer(list(p))] for p in prompt_ids]

    def generate(self, prompts: Sequence[Any], params: SamplingParams, tools: Any = None) -> list[list[Sample]]:
        tools = tools or [None] * len(prompts)
        return self.generate_from_ids([self.encode(self.render_prompt(p, t)) for p, t in zip(prompts, tools)], params)
