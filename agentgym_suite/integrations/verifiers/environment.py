"""Any suite env as a verifiers environment: :func:`load_environment` (``vf.MultiTurnEnv``, classic API).

``load_environment("TextWorld-v0", num_tasks=8, seed=0, **env_kwargs)`` returns a
:class:`SuiteEnvironment` whose dataset has one row per task (its prompt: the env's opening
messages after ``reset(seed, task_id)``, the system prompt included where the env has one; its
``info``: the task id and seed, and a tool env's tools as ``tool_defs``). Each rollout makes its
own env with ``gymnasium.make(env_id, **env_kwargs)`` and resets it with the row's seed and task;
every model turn is one ``env.step`` (native tool calls of the model become the suite's
``<tool_call>`` blocks); the env's observation comes back as the user's next message, and the
rubric's reward is the sum of the rewards ``env.step`` paid (``won`` and the final ``score`` are
metrics). So verifiers' own evaluation (``vf-eval``, ``Environment.evaluate``) and trainers that
load verifiers environments (prime-rl) play any suite env.

What is not carried over: the suite's prompt formatting (the agent's system prompt and action
format instructions are the client's to add), the env's privileged info, and ``info`` beyond
reward, ``won`` and ``score`` (kept on the state as ``suite_info``).
"""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym
import verifiers as vf
from datasets import Dataset

from agentgym_suite.rollout.seeding import episode_seed

NOT_CARRIED_OVER = ("the suite's prompt formatting and action-format instructions; privileged info; info beyond "
                    "reward, won and score (on the state as suite_info)")
"""What :func:`load_environment` does not carry over."""


def action_text(message: Any) -> str:
    """An assistant message as the suite action: its text, then its native tool calls as ``<tool_call>`` blocks."""
    content = getattr(message, "content", None) if not isinstance(message, dict) else message.get("content")
    calls = getattr(message, "tool_calls", None) if not isinstance(message, dict) else message.get("tool_calls")
    text = content if isinstance(content, str) else "".join(
        getattr(p, "text", None) or (p.get("text", "") if isinstance(p, dict) else "") for p in content or [])
    blocks = []
    for call in calls or []:
        name = getattr(call, "name", None) or (call.get("name") if isinstance(call, dict) else "")
        raw = getattr(call, "arguments", None) if not isinstance(call, dict) else call.get("arguments")
        try:
            arguments = json.loads(raw) if isinstance(raw, str) else (raw or {})
        except ValueError:
            arguments = raw  # left as text: the env answers a malformed call as it answers any
        blocks.append("<tool_call>\n" + json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)
                      + "\n</tool_call>")
    return "\n".join(part for part in [text, *blocks] if part)


def _tool_defs(tools: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    out = []
    for tool in tools or []:
        function = tool.get("function") or tool
        out.append({"name": function["name"], "description": function.get("description") or "",
                    "parameters": function.get("parameters") or {"type": "object", "properties": {}}})
    return out


def suite_rows(env_id: str, env_kwargs: dict[str, Any], task_ids: list[str] | None, num_tasks: int | None,
               seed: int, seeds: list[int] | None = None) -> list[dict[str, Any]]:
    """One dataset row per task: the opening messages after ``reset(seed=..., task_id)``, the seed
    ``seeds[i]`` or else the suite's ``episode_seed(seed, task_id)`` (what ``agentgym eval --seed`` uses)."""
    env = gym.make(env_id, **env_kwargs)
    try:
        ids = list(task_ids) if task_ids is not None else [str(t) for t in env.unwrapped.task_ids()]
        ids = ids[:num_tasks] if num_tasks is not None else ids
        if seeds is not None and len(seeds) != len(ids):
            raise ValueError(f"seeds has {len(seeds)} entries for {len(ids)} tasks; give one seed per task.")
        rows = []
        for index, task_id in enumerate(ids):
            row_seed = int(seeds[index]) if seeds is not None else episode_seed(seed, task_id)
            observation, info = env.reset(seed=row_seed, options={"task_id": task_id})
            messages = [{"role": m["role"], "content": m.get("content") or ""} for m in info.get("messages") or []
                        if m.get("role") in ("system", "user")]
            if not any(m["role"] == "user" for m in messages):
                messages.append({"role": "user", "content": observation})
            row_info: dict[str, Any] = {"task_id": task_id, "seed": row_seed}
            if info.get("tools"):
                row_info["tool_defs"] = _tool_defs(info["tools"])
            rows.append({"prompt": messages, "answer": "", "info": json.dumps(row_info), "example_id": index})
        return rows
    finally:
        env.close()


class SuiteEnvironment(vf.MultiTurnEnv):
    """A suite env id as a verifiers multi-turn environment (see the module docstring).

    Args:
        env_id: a registered suite env id.
        env_kwargs: keyword arguments for ``gymnasium.make``.
        task_ids: the tasks to play (default: the env's, in order).
        num_tasks: use only the first ``num_tasks`` of them.
        seed: the run seed: each task resets with ``episode_seed(seed, task_id)``, as in ``agentgym eval``.
        seeds: one reset seed per task instead (e.g. the seeds ``agentgym eval`` used).
        max_turns: the rollout's turn limit (default: the id's registered ``max_episode_steps``).
        **kwargs: for ``vf.MultiTurnEnv``.
    """

    def __init__(self, env_id: str, env_kwargs: dict[str, Any] | None = None, *, task_ids: list[str] | None = None,
                 num_tasks: int | None = None, seed: int = 0, seeds: list[int] | None = None,
                 max_turns: int | None = None, **kwargs: Any) -> None:
        import agentgym_suite  # noqa: F401  (registers the suite's ids)

        self.suite_env_id = env_id
        self.suite_env_kwargs = dict(env_kwargs or {})
        rows = suite_rows(env_id, self.suite_env_kwargs, task_ids, num_tasks, seed, seeds)
        dataset = Dataset.from_list(rows)
        limit = max_turns if max_turns is not None else (gym.spec(env_id).max_episode_steps or -1)
        rubric = vf.Rubric(funcs=[self.suite_reward], weights=[1.0])
        rubric.add_metric(self.suite_won)
        rubric.add_metric(self.suite_score)
        super().__init__(dataset=dataset, eval_dataset=dataset, rubric=rubric, max_turns=limit, **kwargs)

    async def setup_state(self, state: Any) -> Any:
        """Make and reset this rollout's own env with the row's seed and task."""
        info = state["info"] if isinstance(state["info"], dict) else json.loads(state["info"])
        env = gym.make(self.suite_env_id, **self.suite_env_kwargs)
        env.reset(seed=int(info["seed"]), options={"task_id": info["task_id"]})
        state["suite_env"] = env
        state["suite_return"] = 0.0
        state["suite_info"] = {}
        return state

    async def env_response(self, messages: Any, state: Any, **kwargs: Any) -> Any:
        """Play the model's last message as one ``env.step``; the observation is the user's reply."""
        env = state["suite_env"]
        observation, reward, terminated, truncated, info = env.step(action_text(messages[-1]))
        state["suite_return"] += float(reward)
        state["suite_info"] = {k: v for k, v in info.items() if k not in ("messages", "tools")}
        reply = [vf.UserMessage(content=observation or "(no observation)")]
        if terminated or truncated:
            state["final_env_response"] = reply
        return reply

    @vf.cleanup
    async def close_suite_env(self, state: Any) -> None:
        """Close the rollout's env (the state keeps its return and last info)."""
        env = state.pop("suite_env", None)
        if env is not None:
            env.close()

    async def suite_reward(self, state: Any, **kwargs: Any) -> float:
        """The sum of the rewards ``env.step`` paid in this rollout."""
        return float(state.get("suite_return") or 0.0)

    async def suite_won(self, state: Any, **kwargs: Any) -> float:
        """1.0 when the env reported the episode won."""
        return float(bool((state.get("suite_info") or {}).get("won")))

    async def suite_score(self, state: Any, **kwargs: Any) -> float:
        """The env's normalised score at the end, in [0, 1]."""
        return float((state.get("suite_info") or {}).get("score") or 0.0)


def load_environment(env_id: str | None = None, /, **kwargs: Any) -> SuiteEnvironment:
    """A verifiers environment over suite env ``env_id``: ``task_ids``, ``num_tasks``, ``seed``,
    ``seeds`` and ``max_turns`` shape the dataset and rollouts (see :class:`SuiteEnvironment`); every
    other keyword argument goes to ``gymnasium.make``.

    verifiers' own loader (``vf.load_environment``, ``vf-eval``) calls this module's function with
    keyword arguments only, and keeps ``env_id`` for itself: there, name the suite env ``suite_env``
    (``vf-eval agentgym_suite.integrations.verifiers.environment -a '{"suite_env": "TextWorld-v0"}'``).
    """
    if env_id is None:
        if "suite_env" not in kwargs:
            raise TypeError("name the suite env: load_environment('TextWorld-v0', ...), or suite_env='TextWorld-v0' "
                            "through verifiers' loader.")
        env_id = str(kwargs.pop("suite_env"))
    shaping = {k: kwargs.pop(k) for k in ("task_ids", "num_tasks", "seed", "seeds", "max_turns") if k in kwargs}
    return SuiteEnvironment(env_id, kwargs, **shaping)
