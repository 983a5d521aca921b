"""Extra generations a model made inside an env while playing a role of it: the extension point of
methods that train more than the agent's own actions.

An env whose step makes model generations of its own (a world model answering the agent's tool
calls, run on the policy the trainer lent it: see :mod:`~agentgym_suite.core.policy_loan`) reports
them in ``info[ROLE_GENERATIONS]`` as :class:`RoleGeneration` records (or their dicts), each with
the role the env declares for it. The rollout engine keeps them on the turn
(``Turn.role_generations``), and a trainer turns the trainable ones whose role its credit plug-in
lists in ``CreditAssigner.roles`` into training rows of that role. What a generation means to its
env (the tool call it answered, its arguments...) travels in ``details``, which no generic layer
reads.

In JSON (trajectory files) a generation is the dict of :meth:`RoleGeneration.to_dict`;
:meth:`RoleGeneration.from_dict` reads it back.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

ROLE_GENERATIONS = "role_generations"
"""The info key of a step's extra generations (a list of :class:`RoleGeneration` or their dicts)."""


@dataclass
class RoleGeneration:
    """One generation a model made inside the env while playing ``role``.

    Attributes:
        role: the role the env declares for it; also the role of the training row made from it.
        turn: the agent turn (1-based) whose step made it.
        label: what it answered, in a word (e.g. the name of the tool whose call it answered): the
            state of the row made from it.
        prompt_text: the prompt as the backend rendered it (chat template applied).
        prompt_ids: the exact token ids the model was conditioned on.
        completion_ids: the generated token ids.
        logprobs: one log-prob per completion id.
        completion_text: the generated text (a row whose text is empty is marked invalid).
        finish_reason: ``stop``, ``length`` or ``error`` (as in :class:`~agentgym_suite.llm.base.Sample`).
        has_token_ids: False when the backend returned no token ids (remote APIs, a failed call).
        valid: the text met the role's output contract.
        reward: a score of its own for the row made from it; None: the episode's return.
        details: what the generation means to its env (not read by the generic layers).
    """

    role: str
    turn: int = 0
    label: str = ""
    prompt_text: str = ""
    prompt_ids: list[int] = field(default_factory=list)
    completion_ids: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    completion_text: str = ""
    finish_reason: str = "stop"
    has_token_ids: bool = False
    valid: bool = True
    reward: float | None = None
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def trainable(self) -> bool:
        """True when the generation has the prompt and completion token ids a trainer needs."""
        return self.has_token_ids and bool(self.completion_ids) and bool(self.prompt_ids)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (inverse of :meth:`from_dict`)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Any) -> RoleGeneration:
        """Rebuild a generation from :meth:`to_dict` output (a record passes as it is); unknown keys
        are ignored.

        Raises:
            ValueError: when ``data`` is neither a record nor a dict with a ``role``.
        """
        if isinstance(data, cls):
            return data
        if not isinstance(data, dict) or not str(data.get("role") or ""):
            raise ValueError(f"a role generation must be a dict with a 'role', got {type(data).__name__}: "
                             f"{str(data)[:200]}. Report RoleGeneration records (or their to_dict()) in "
                             f"info['{ROLE_GENERATIONS}'].")
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})
