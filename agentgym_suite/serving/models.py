"""The wire models of a served suite env: OpenEnv ``Action``/``Observation``/``State`` subclasses.

A suite action is text (the model's output, as ``env.step`` takes it), so :class:`SuiteAction`
has one field, ``message`` (the name OpenEnv's own text envs use). :class:`SuiteObservation`
carries the observation text, the step's reward, ``done`` (= terminated or truncated) and the
suite's ``info`` contract as structured fields (``won``, ``score``, ``action_valid``, ``tools``,
``admissible_actions``…); info keys beyond the required ones travel in ``info``.
"""

from __future__ import annotations

from typing import Any

from openenv.core.env_server.types import Action, Observation, State
from pydantic import Field

from agentgym_suite.serving.fields import STRUCTURED_KEYS, to_jsonable

MAX_ACTION_CHARS = 200_000
"""Longest action text a session accepts (a frame is bounded by the server's size limit too)."""


class SuiteAction(Action):
    """One action of a suite env: the text ``env.step`` receives (a command, or an assistant
    message with ``<tool_call>`` blocks for tool envs)."""

    message: str = Field(..., max_length=MAX_ACTION_CHARS,
                         description="The action text, exactly as gymnasium's env.step(action) takes it.")


class SuiteObservation(Observation):
    """What a suite env's ``reset``/``step`` returns, with its ``info`` as structured fields.

    ``reward`` (per step, never cumulative) and ``done`` are OpenEnv's own fields.
    """

    text: str = Field(default="", description="The observation text.")
    terminated: bool = Field(default=False, description="The task was solved or failed for good.")
    truncated: bool = Field(default=False, description="The episode's budget (max turns, a step timeout) ran out.")
    task_id: str = Field(default="", description="Id of the current task.")
    task: str = Field(default="", description="The instruction the agent is asked to accomplish.")
    won: bool = Field(default=False, description="The task is solved.")
    score: float = Field(default=0.0, description="Normalised task score so far, in [0, 1].")
    action_valid: bool = Field(default=True, description="The last action was well-formed and accepted.")
    turn: int = Field(default=0, description="Agent actions taken in this episode.")
    admissible_actions: list[str] | None = Field(default=None, description="Commands the env accepts now.")
    tools: list[dict[str, Any]] | None = Field(default=None, description="OpenAI-format tool schemas (tool envs).")
    info: dict[str, Any] = Field(default_factory=dict,
                                 description="The other info keys of the step (see agentgym_suite.core.info).")


class SuiteState(State):
    """A session's state: OpenEnv's ``episode_id``/``step_count`` plus the served id and task."""

    env_id: str = ""
    task_id: str = ""


def observation_from_step(text: Any, reward: Any, terminated: bool, truncated: bool,
                          info: dict[str, Any]) -> SuiteObservation:
    """The wire observation of one ``reset`` (reward 0, not done) or ``step`` result."""
    data = to_jsonable(info)
    fields = {key: data.pop(key) for key in STRUCTURED_KEYS if data.get(key) is not None}
    return SuiteObservation(text=str(text), reward=float(reward), done=bool(terminated or truncated),
                            terminated=bool(terminated), truncated=bool(truncated), info=data, **fields)
