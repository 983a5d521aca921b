"""The method-level conformance declarations: credit plug-ins' and the trainer parts'.

Found by walking what is registered, never by a list of names: every credit plug-in of the registry
(installed ones included) whose class declares ``conformance``, and every base of
:class:`~agentgym_suite.trainers.agent_grpo.AgentGRPOTrainer` (its mixins) and every teacher context a
registered plug-in declares, that declares one (:class:`~agentgym_suite.core.conformance.MethodConformance`). ``agentgym conformance`` runs and
reports them next to the env cards' checks.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentgym_suite.core.conformance import MethodConformance

CREDIT_KIND = "credit"
"""Kind of a declaration made by a credit plug-in; its id is ``credit:<registry name>``."""
TRAINER_KIND = "trainer"
"""Kind of a declaration made by a part of the trainer; its id is ``trainer:<declared name>``."""


@dataclass(frozen=True)
class DeclaredConformance:
    """One method's declaration with who declared it."""

    kind: str
    """:data:`CREDIT_KIND` or :data:`TRAINER_KIND`."""
    key: str
    """The plug-in's registry name, or the declaration's own name for a trainer part."""
    declared_by: str
    """The declaring class, as ``module:Class``."""
    conformance: MethodConformance

    @property
    def id(self) -> str:
        """``kind:key``, the id ``agentgym conformance`` takes."""
        return f"{self.kind}:{self.key}"


def _where(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def credit_conformance() -> list[DeclaredConformance]:
    """The declarations of the registered credit plug-ins, in registry order."""
    from agentgym_suite.trainers.credit.registry import credit_assigners

    return [DeclaredConformance(CREDIT_KIND, name, _where(cls), cls.conformance)
            for name, cls in credit_assigners().items() if cls.conformance is not None]


def trainer_conformance() -> list[DeclaredConformance]:
    """The declarations of the trainer's parts: each class of ``AgentGRPOTrainer``'s MRO that declares
    ``conformance`` itself (an inherited one is counted once, on the class that declares it), then each
    teacher context the registered plug-ins declare (``CreditAssigner.teacher_context``, a part the
    trainer runs for them), once however many plug-ins share it."""
    from agentgym_suite.trainers.agent_grpo import AgentGRPOTrainer
    from agentgym_suite.trainers.credit.registry import credit_assigners

    parts: list[type] = list(AgentGRPOTrainer.__mro__)
    for plugin in credit_assigners().values():
        context = plugin.teacher_context
        if isinstance(context, type) and context not in parts:
            parts.append(context)
    found = []
    for cls in parts:
        declared = vars(cls).get("conformance")
        if isinstance(declared, MethodConformance):
            found.append(DeclaredConformance(TRAINER_KIND, declared.name, _where(cls), declared))
    return found


KINDS = {CREDIT_KIND: credit_conformance, TRAINER_KIND: trainer_conformance}
"""Each kind of declaration and the walk that finds them."""


def method_conformance(kinds: tuple[str, ...] = tuple(KINDS)) -> list[DeclaredConformance]:
    """Every method-level declaration of ``kinds`` (default: all): the credit plug-ins', then the trainer
    parts'. Only the walks of ``kinds`` run (the trainer's imports TRL).

    Raises ``ValueError`` when two declarations share an id."""
    found = [declared for kind in KINDS if kind in kinds for declared in KINDS[kind]()]
    ids = [d.id for d in found]
    if len(set(ids)) != len(ids):
        raise ValueError(f"method conformance ids must be unique; got {sorted(ids)}: rename one declaration's name.")
    return found
