"""The record of one world-model generation: a tool call answered by a model playing the environment.

The rehearsal env makes one :class:`SimulatorGeneration` per simulated call and reports a step's
generations in ``info["simulator_generations"]`` (its own key, for EnvACE's own readers: the
rehearsing agent, the fidelity report, the benchmarks) and, as the generic records of the role
``simulator``, in ``info[ROLE_GENERATIONS]`` (:meth:`SimulatorGeneration.as_role_generation`): the
rollout engine keeps those on the turn (``Turn.role_generations``) and a trainer whose credit plug-in
trains the ``simulator`` role (EnvACE) turns the trainable ones into ``simulator`` rows.

In JSON (trajectory files) a generation is the dict of :meth:`SimulatorGeneration.to_dict`;
:meth:`SimulatorGeneration.from_dict` reads it back, and also the plain dicts that older
trajectory files hold (same keys).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from agentgym_suite.core.role_generation import RoleGeneration

SIMULATOR_ROLE = "simulator"
"""The role of a world-model generation (and of the training rows made from it)."""


@dataclass
class SimulatorGeneration:
    """One simulated tool call and the generation that answered it.

    Attributes:
        tool_name: the simulated tool.
        arguments: the call's parsed arguments.
        call_id: the call's id in the caller's message ("" when it had none).
        turn: the caller turn (1-based) whose message held the call.
        index: the call's position among that turn's calls.
        prompt_messages: the simulator's chat messages (system + user).
        prompt_text: the prompt as the backend rendered it (chat template applied).
        prompt_ids: the exact token ids the world model was conditioned on.
        completion_ids: the generated token ids.
        logprobs: one log-prob per completion id.
        completion_text: the generated text.
        finish_reason: ``stop``, ``length`` or ``error`` (as in :class:`~agentgym_suite.llm.base.Sample`).
        has_token_ids: False when the backend returned no token ids (remote APIs, a failed call).
        contract_valid: the text met the ``<execution_result>`` output contract.
        result: the JSON result given to the caller (an error payload when the contract was broken).
        expected_error: the code the real env's validation gives the call (unknown tool, bad
            arguments), "" for a valid call.
        validation_reward: the simulator's reward for validating the call (1 rejecting an
            invalid call with its code, 0.5 with another error, 0 accepting it or rejecting a
            valid call); None for a valid call it answered (the row carries the episode return).
        role: always ``"simulator"``.
    """

    tool_name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    call_id: str = ""
    turn: int = 0
    index: int = 0
    prompt_messages: list[dict[str, Any]] = field(default_factory=list)
    prompt_text: str = ""
    prompt_ids: list[int] = field(default_factory=list)
    completion_ids: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    completion_text: str = ""
    finish_reason: str = "stop"
    has_token_ids: bool = False
    contract_valid: bool = False
    result: Any = None
    expected_error: str = ""
    validation_reward: float | None = None
    role: str = SIMULATOR_ROLE

    @property
    def trainable(self) -> bool:
        """True when the generation has the prompt and completion token ids a trainer needs."""
        return self.has_token_ids and bool(self.completion_ids) and bool(self.prompt_ids)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (inverse of :meth:`from_dict`)."""
        return asdict(self)

    def as_role_generation(self) -> RoleGeneration:
        """The generic record of this generation: ``label`` is the tool's name, ``valid`` the output
        contract, ``reward`` the validation reward; the call itself goes to ``details``."""
        return RoleGeneration(
            role=self.role, turn=self.turn, label=self.tool_name, prompt_text=self.prompt_text,
            prompt_ids=self.prompt_ids, completion_ids=self.completion_ids, logprobs=self.logprobs,
            completion_text=self.completion_text, finish_reason=self.finish_reason, has_token_ids=self.has_token_ids,
            valid=self.contract_valid, reward=self.validation_reward,
            details={"arguments": self.arguments, "call_id": self.call_id, "index": self.index,
                     "prompt_messages": self.prompt_messages, "result": self.result,
                     "expected_error": self.expected_error},
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SimulatorGeneration:
        """Rebuild a generation from :meth:`to_dict` output; unknown keys are ignored.

        Raises:
            ValueError: when ``data`` is not a dict.
        """
        if isinstance(data, cls):
            return data
        if not isinstance(data, dict):
            raise ValueError(f"a simulator generation must be a dict, got {type(data).__name__}.")
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        values["tool_name"] = str(values.get("tool_name", ""))
        return cls(**values)
