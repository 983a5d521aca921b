"""The record of one world-model generation: a tool call answered by a model playing the environment.

The rehearsal env makes one :class:`SimulatorGeneration` per simulated call and reports a step's
generations once, as the generic records of the role ``simulator`` in ``info[ROLE_GENERATIONS]``
(:meth:`SimulatorGeneration.as_role_generation`; what only EnvACE reads - the call, its
arguments, the simulator's messages, the result, the real validation's verdict - travels in the
record's ``details``). The rollout engine keeps those on the turn (``Turn.role_generations``) and
a trainer whose credit plug-in trains the ``simulator`` role (EnvACE) turns the trainable ones
into ``simulator`` rows. EnvACE's own readers (the benchmarks, tests, a caller of ``step``) get
the typed records back with :func:`simulator_generations`, which reads records and their JSON
dicts alike (an env served over the wire sends dicts).

In JSON a generation is the dict of :meth:`RoleGeneration.to_dict`;
:meth:`SimulatorGeneration.from_role_generation` reads it back. :meth:`SimulatorGeneration.to_dict`
and :meth:`SimulatorGeneration.from_dict` keep the flat layout of the record itself: trajectory
files written before the generic key existed held such dicts under a turn's
``simulator_generations``; the rollout records load those through this package's record upgrade
(:mod:`~agentgym_suite.methods.envace.record_upgrade`), as role generations like a new file's.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, Mapping

from agentgym_suite.core.role_generation import ROLE_GENERATIONS, RoleGeneration

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
    def from_role_generation(cls, generation: RoleGeneration | dict[str, Any]) -> SimulatorGeneration:
        """The record :meth:`as_role_generation` made ``generation`` from (its inverse); a dict of
        :meth:`RoleGeneration.to_dict` (what a served env sends) is read too.

        Raises:
            ValueError: when ``generation`` is not a role generation, or is one of another role.
        """
        record = RoleGeneration.from_dict(generation)
        if record.role != SIMULATOR_ROLE:
            raise ValueError(f"a role generation of role {record.role!r} is not a simulator generation; "
                             f"select the records of role {SIMULATOR_ROLE!r} first (simulator_generations(info)).")
        details = dict(record.details or {})
        return cls(
            tool_name=record.label, arguments=dict(details.get("arguments") or {}),
            call_id=str(details.get("call_id") or ""), turn=record.turn, index=int(details.get("index") or 0),
            prompt_messages=list(details.get("prompt_messages") or []), prompt_text=record.prompt_text,
            prompt_ids=list(record.prompt_ids), completion_ids=list(record.completion_ids),
            logprobs=list(record.logprobs), completion_text=record.completion_text,
            finish_reason=record.finish_reason, has_token_ids=record.has_token_ids, contract_valid=record.valid,
            result=details.get("result"), expected_error=str(details.get("expected_error") or ""),
            validation_reward=record.reward, role=record.role,
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


def simulator_generations(info: Mapping[str, Any]) -> list[SimulatorGeneration]:
    """The world model's generations a rehearsal env reported in a step's ``info`` (its records of
    role ``simulator`` in ``info[ROLE_GENERATIONS]``, in call order), as typed records; ``[]`` when
    the step made none. Records of other roles are skipped."""
    records = [RoleGeneration.from_dict(g) for g in info.get(ROLE_GENERATIONS) or []]
    return [SimulatorGeneration.from_role_generation(g) for g in records if g.role == SIMULATOR_ROLE]
