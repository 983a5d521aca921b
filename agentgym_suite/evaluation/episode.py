"""Run one episode with one agent and turn it into an :class:`EpisodeRecord`.

A crash of the env or the agent never escapes: the episode is returned with ``error`` set
to ``"<stage> failed: ExceptionType: message"`` (stage ``reset``, ``agent`` or ``step``, as in
the rollout engine's records) and the turns played so far, so an evaluation goes on.

Agents may report more about each action through an optional ``last_turn`` attribute, read
right after ``act``: a dict (or object) with any of ``prompt`` (what the model saw),
``thinking`` (its reasoning) and ``completion_tokens`` (tokens generated). Without it the
thinking is taken from the action's ``<think>…</think>`` block.
"""

from __future__ import annotations

import time
import traceback
from typing import Any

import gymnasium as gym

from agentgym_suite.agents.base import Agent
from agentgym_suite.evaluation.records import EpisodeRecord, TurnRecord, extract_thinking, info_subset
from agentgym_suite.evaluation.tasks import EpisodePlan
from agentgym_suite.rollout.policies import turn_report

MAX_ERROR_CHARS = 4_000


def describe_error(exc: BaseException) -> str:
    """``"ExceptionType: message"`` followed by the innermost traceback frames, cut to a readable size."""
    frames = traceback.format_exception(type(exc), exc, exc.__traceback__)
    text = f"{type(exc).__name__}: {exc}\n" + "".join(frames[-3:])
    return text[:MAX_ERROR_CHARS]


def agent_turn_report(agent: Agent) -> dict[str, Any]:
    """What the agent says about its last action (``prompt``, ``thinking``, ``completion_tokens``)."""
    return turn_report(getattr(agent, "last_turn", None))


def env_may_be_broken(record: EpisodeRecord) -> bool:
    """True when the episode's error came from the env (its state can no longer be trusted)."""
    return record.error is not None and not record.error.startswith("agent failed:")


def run_episode(env: gym.Env, agent: Agent, plan: EpisodePlan, *, max_turns: int) -> EpisodeRecord:
    """Play ``plan`` in ``env`` with ``agent`` for at most ``max_turns`` actions."""
    env_id = env.spec.id if env.spec is not None else type(env.unwrapped).__name__
    record = EpisodeRecord(task_id=plan.task_id, attempt=plan.attempt, seed=plan.seed, env_id=env_id)
    started = time.perf_counter()
    tokens: int | None = None
    stage = "reset"
    try:
        observation, info = env.reset(seed=plan.seed, options={"task_id": plan.task_id})
        record.task = str(info.get("task", ""))
        task_type = info.get("task_type")
        record.task_type = str(task_type) if task_type is not None else None
        record.initial_observation = str(observation)
        agent.reset(env, seed=plan.seed)
        while len(record.turns) < max_turns:
            stage = "agent"
            before = time.perf_counter()
            try:
                action = agent.act(observation, info)
            finally:
                record.agent_s += time.perf_counter() - before
            report = agent_turn_report(agent)
            stage = "step"
            observation, reward, terminated, truncated, info = env.step(action)
            tokens = _add_turn(record, action, report, observation, reward, info, tokens)
            if terminated or truncated:
                record.terminated, record.truncated = bool(terminated), bool(truncated)
                break
        else:
            record.truncated = True
        if info.get("error"):
            record.error = f"env reported: {str(info['error'])[:MAX_ERROR_CHARS]}"
    except Exception as exc:  # a bad episode is data, not a crash of the run
        record.error = f"{stage} failed: {describe_error(exc)}"
        record.won = False
    record.completion_tokens = tokens
    record.wall_s = time.perf_counter() - started
    return record


def _add_turn(record: EpisodeRecord, action: Any, report: dict[str, Any], observation: Any, reward: float,
              info: dict[str, Any], tokens: int | None) -> int | None:
    """Append one played turn to ``record``; returns the running completion-token count."""
    if "completion_tokens" in report:
        tokens = (tokens or 0) + report["completion_tokens"]
    record.turns.append(
        TurnRecord(
            turn=len(record.turns) + 1,
            action=action if isinstance(action, str) else repr(action),
            observation=str(observation),
            reward=float(reward),
            action_valid=bool(info.get("action_valid", True)),
            thinking=report.get("thinking") or extract_thinking(action),
            prompt=report.get("prompt"),
            info=info_subset(info),
            completion_tokens=report.get("completion_tokens"),
        )
    )
    record.total_reward += float(reward)
    record.won = bool(info.get("won", False))
    record.score = float(info.get("score", 0.0) or 0.0)
    return tokens


def supports_batches(agent: Agent) -> bool:
    """True for agents that serve several envs with one call (``reset_batch`` + ``act_batch``)."""
    return callable(getattr(agent, "reset_batch", None)) and callable(getattr(agent, "act_batch", None))


def run_episode_batch(envs: list[gym.Env], agent: Agent, plans: list[EpisodePlan], *, max_turns: int) -> list[EpisodeRecord]:
    """Play ``plans[i]`` in ``envs[i]`` in lockstep: each turn, one batched ``act_batch`` call.

    Episodes that end drop out of later calls. A failing env step fails only its own episode;
    a failing batched call fails the episodes it served (the agent cannot say which sample broke).
    The agent's sampler is seeded with the first plan's seed, so a batch replays exactly when
    it is run again with the same plans.
    """
    records = [EpisodeRecord(task_id=p.task_id, attempt=p.attempt, seed=p.seed,
                             env_id=e.spec.id if e.spec is not None else type(e.unwrapped).__name__)
               for e, p in zip(envs, plans)]
    started = time.perf_counter()
    tokens: list[int | None] = [None] * len(envs)
    state: dict[int, tuple[Any, dict[str, Any]]] = {}
    for i, (env, plan) in enumerate(zip(envs, plans)):
        try:
            observation, info = env.reset(seed=plan.seed, options={"task_id": plan.task_id})
            records[i].task = str(info.get("task", ""))
            records[i].task_type = str(info["task_type"]) if info.get("task_type") is not None else None
            records[i].initial_observation = str(observation)
            state[i] = (observation, info)
        except Exception as exc:
            records[i].error = f"reset failed: {describe_error(exc)}"
    if state:
        try:
            agent.reset_batch([envs[i] for i in sorted(state)], seed=plans[min(state)].seed)
        except Exception as exc:
            for i in list(state):
                records[i].error = f"agent failed: {describe_error(exc)}"
            state.clear()
    while state:
        active = sorted(state)
        before = time.perf_counter()
        try:
            actions = agent.act_batch([state[i][0] for i in active], [state[i][1] for i in active])
            reports = list(getattr(agent, "last_turns", None) or [{}] * len(active))
        except Exception as exc:
            for i in active:
                records[i].error = f"agent failed: {describe_error(exc)}"
            break
        finally:
            for i in active:
                records[i].agent_s += (time.perf_counter() - before) / len(active)
        for slot, (i, action) in enumerate(zip(active, actions)):
            report = turn_report(reports[slot] if slot < len(reports) else None)
            try:
                observation, reward, terminated, truncated, info = envs[i].step(action)
            except Exception as exc:
                records[i].error = f"step failed: {describe_error(exc)}"
                del state[i]
                continue
            tokens[i] = _add_turn(records[i], action, report, observation, reward, info, tokens[i])
            done = terminated or truncated or len(records[i].turns) >= max_turns
            if done:
                records[i].terminated, records[i].truncated = bool(terminated), bool(truncated) or not terminated
                if info.get("error"):
                    records[i].error = f"env reported: {str(info['error'])[:MAX_ERROR_CHARS]}"
                del state[i]
            else:
                state[i] = (observation, info)
        if state and len(state) != len(active):
            _narrow(agent, envs, active, sorted(state))
    share = (time.perf_counter() - started) / len(records)
    for record, count in zip(records, tokens):
        record.completion_tokens = count
        record.wall_s = share  # each episode's share of the batch, so summed wall times stay true
        if record.error is not None:
            record.won = False
    return records


def _narrow(agent: Agent, envs: list[gym.Env], before: list[int], after: list[int]) -> None:
    """Drop finished envs from a batched agent while keeping the others' histories."""
    keep = [before.index(i) for i in after]
    narrow = getattr(agent, "keep_slots", None)
    if not callable(narrow):
        raise RuntimeError(f"{type(agent).__name__} cannot drop finished envs from a batch (no keep_slots()).")
    narrow(keep)
