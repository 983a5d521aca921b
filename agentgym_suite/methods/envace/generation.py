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

from dataclasses import asdict, fields, replace
from typing import Any, Mapping

from agentgym_suite.core.role_generation import ROLE_GENERATIONS, RoleGeneration

SIMULATOR_ROLE = "simulator"
"""The role of a world-model generation (and of the training rows made from it)."""

_CALL_DEFAULTS: dict[str, Any] = {"arguments": {}, "call_id": "", "index": 0, "prompt_messages": [], "result": None,
                                  "expected_error": ""}
"""What only rehearsal knows of a generation, kept in the generic record's ``details``, with its defaults."""

_RENAMED: dict[str, str] = {"tool_name": "label", "contract_valid": "valid", "validation_reward": "reward"}
"""Rehearsal's name of a generic field -> the field of :class:`RoleGeneration` that holds it."""

_GENERIC: frozenset[str] = frozenset({f.name for f in fields(RoleGeneration)} - {"details", *_RENAMED.values()}
                                     | {"trainable"})
"""The fields (and ``trainable``) read straight from the generic record under their own names."""


class SimulatorGeneration:
    """One simulated tool call and the generation that answered it: a typed view of one
    :class:`~agentgym_suite.core.role_generation.RoleGeneration` of role ``simulator`` (:attr:`generation`),
    the only thing it stores.

    The generation's own fields (``turn``, ``prompt_text``, ``prompt_ids``, ``completion_ids``,
    ``logprobs``, ``completion_text``, ``finish_reason``, ``has_token_ids``, ``role``, ``trainable``) are
    the generic record's, read under the same names. Rehearsal's names of generic fields:

    * ``tool_name`` - the simulated tool (the record's ``label``).
    * ``contract_valid`` - the text met the ``<execution_result>`` output contract (``valid``).
    * ``validation_reward`` - the simulator's reward for validating the call (1 rejecting an invalid
      call with its code, 0.5 with another error, 0 accepting it or rejecting a valid call); None for
      a valid call it answered, whose row carries the episode return (``reward``).

    And what only rehearsal reads, kept in the record's ``details``: ``arguments`` (the call's parsed
    arguments), ``call_id`` (its id in the caller's message, "" when it had none), ``index`` (its
    position among the turn's calls), ``prompt_messages`` (the simulator's chat messages), ``result``
    (the JSON result given to the caller; an error payload when the contract was broken) and
    ``expected_error`` (the code the real env's validation gives the call, "" for a valid call).
    """

    def __init__(self, tool_name: str = "", arguments: dict[str, Any] | None = None, *, contract_valid: bool = False,
                 validation_reward: float | None = None, call_id: str = "", index: int = 0,
                 prompt_messages: list[dict[str, Any]] | None = None, result: Any = None, expected_error: str = "",
                 **generation: Any) -> None:
        """Make the record; ``generation`` takes the generic fields of :class:`RoleGeneration` by name
        (``turn``, ``prompt_ids``, ``completion_ids``, ...; ``role`` defaults to ``simulator``)."""
        generation.setdefault("role", SIMULATOR_ROLE)
        details = {"arguments": dict(arguments or {}), "call_id": call_id, "index": index,
                   "prompt_messages": list(prompt_messages or []), "result": result, "expected_error": expected_error}
        self.generation = RoleGeneration(label=str(tool_name), valid=contract_valid, reward=validation_reward,
                                         details=details, **generation)

    # ------------------------------------------------------------------ fields
    def __getattr__(self, name: str) -> Any:
        generation = self.__dict__.get("generation")
        if generation is None or name not in _GENERIC:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return getattr(generation, name)

    def _detail(self, name: str) -> Any:
        return (self.generation.details or {}).get(name, _CALL_DEFAULTS[name])

    @property
    def tool_name(self) -> str:
        """The simulated tool."""
        return self.generation.label

    @property
    def contract_valid(self) -> bool:
        """The text met the ``<execution_result>`` output contract."""
        return self.generation.valid

    @property
    def validation_reward(self) -> float | None:
        """The simulator's reward for validating the call; None for a valid call it answered."""
        return self.generation.reward

    @validation_reward.setter
    def validation_reward(self, value: float | None) -> None:
        self.generation.reward = value

    @property
    def arguments(self) -> dict[str, Any]:
        """The call's parsed arguments."""
        return dict(self._detail("arguments") or {})

    @property
    def call_id(self) -> str:
        """The call's id in the caller's message ("" when it had none)."""
        return str(self._detail("call_id") or "")

    @property
    def index(self) -> int:
        """The call's position among its turn's calls."""
        return int(self._detail("index") or 0)

    @property
    def prompt_messages(self) -> list[dict[str, Any]]:
        """The simulator's chat messages (system + user)."""
        return list(self._detail("prompt_messages") or [])

    @property
    def result(self) -> Any:
        """The JSON result given to the caller (an error payload when the contract was broken)."""
        return self._detail("result")

    @property
    def expected_error(self) -> str:
        """The code the real env's validation gives the call (unknown tool, bad arguments); "" for a valid call."""
        return str(self._detail("expected_error") or "")

    @expected_error.setter
    def expected_error(self, value: str) -> None:
        self.generation.details["expected_error"] = value

    # ------------------------------------------------------------------ records
    def to_dict(self) -> dict[str, Any]:
        """The flat JSON-ready dict of the earlier trajectory layout (inverse of :meth:`from_dict`):
        rehearsal's names and the generic fields side by side, no ``details``."""
        flat = {name: value for name, value in asdict(self.generation).items() if name in _GENERIC}
        flat.update({name: getattr(self, name) for name in (*_RENAMED, *_CALL_DEFAULTS)})
        return flat

    def __eq__(self, other: object) -> bool:
        return self.to_dict() == other.to_dict() if isinstance(other, SimulatorGeneration) else NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclass records are

    def __repr__(self) -> str:
        return f"{type(self).__name__}(**{self.to_dict()!r})"

    def as_role_generation(self) -> RoleGeneration:
        """The generic record of this generation (a copy): ``label`` is the tool's name, ``valid`` the
        output contract, ``reward`` the validation reward; the call itself is in ``details``."""
        return replace(self.generation, details=dict(self.generation.details))

    @classmethod
    def from_role_generation(cls, generation: RoleGeneration | dict[str, Any]) -> SimulatorGeneration:
        """The view of ``generation`` (a copy; the inverse of :meth:`as_role_generation`); a dict of
        :meth:`RoleGeneration.to_dict` (what a served env sends) is read too.

        Raises:
            ValueError: when ``generation`` is not a role generation, or is one of another role.
        """
        record = RoleGeneration.from_dict(generation)
        if record.role != SIMULATOR_ROLE:
            raise ValueError(f"a role generation of role {record.role!r} is not a simulator generation; "
                             f"select the records of role {SIMULATOR_ROLE!r} first (simulator_generations(info)).")
        view = cls.__new__(cls)
        view.generation = replace(record, details=dict(record.details or {}))
        return view

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SimulatorGeneration:
        """Rebuild a generation from :meth:`to_dict` output (the flat layout); unknown keys are ignored.

        Raises:
            ValueError: when ``data`` is not a dict.
        """
        if isinstance(data, cls):
            return data
        if not isinstance(data, dict):
            raise ValueError(f"a simulator generation must be a dict, got {type(data).__name__}.")
        known = _GENERIC - {"trainable"} | set(_RENAMED) | set(_CALL_DEFAULTS)
        return cls(**{k: v for k, v in data.items() if k in known})


def simulator_generations(info: Mapping[str, Any]) -> list[SimulatorGeneration]:
    """The world model's generations a rehearsal env reported in a step's ``info`` (its records of
    role ``simulator`` in ``info[ROLE_GENERATIONS]``, in call order), as typed records; ``[]`` when
    the step made none. Records of other roles are skipped."""
    records = [RoleGeneration.from_dict(g) for g in info.get(ROLE_GENERATIONS) or []]
    return [SimulatorGeneration.from_role_generation(g) for g in records if g.role == SIMULATOR_ROLE]
