"""The env contract in layers (``core/capabilities.py``): every member of ``TextEnv`` and ``ToolEnv``
sits in one layer, each layer's protocol matches the bases, every registered env implements its
core, an env opts into exactly the capabilities whose members it overrides, and
``docs/extending.md`` lists the core first and then each capability with all its members."""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from typing import Any, ClassVar

import pytest

from agentgym_suite.core import capabilities
from agentgym_suite.core.capabilities import CAPABILITIES, CORE, PROVIDED, capabilities_of, missing_core
from agentgym_suite.core.fixture_profile import FixtureProfile
from agentgym_suite.core.text_env import TextEnv
from agentgym_suite.core.tool_env import Conversation, ToolEnv
from agentgym_suite.registration import env_class, implemented, suite_entries

DOCS = Path(__file__).resolve().parents[2] / "docs" / "extending.md"
BASES = {"TextEnv": TextEnv, "ToolEnv": ToolEnv}


def own_members(cls: type) -> list[str]:
    """What a base class defines itself (no dunders but the constructor and the copy hook)."""
    return [n for n in vars(cls) if not (n.startswith("__") and n.endswith("__")) or n in ("__init__", "__deepcopy__")]


@pytest.mark.parametrize("base", [TextEnv, ToolEnv], ids=lambda c: c.__name__)
def test_every_member_of_the_bases_sits_in_one_layer(base: type) -> None:
    provided = PROVIDED[base.__name__]
    core = {m for layer in CORE if BASES[layer.base] in base.__mro__ for m in layer.members} - provided
    by_capability = [set(layer.members) for layer in CAPABILITIES]
    for name in own_members(base):
        placed = sum(name in members for members in by_capability) + (name in core) + (name in provided)
        assert placed == 1, (f"{base.__name__}.{name} is in {placed} layers: put it in exactly one protocol of "
                             "core/capabilities.py (or PROVIDED when every env inherits it as is)")


def test_each_protocol_matches_its_base() -> None:
    for layer in CORE + CAPABILITIES:
        base = BASES[layer.base]
        assert layer.members and layer.when, layer.name
        for name in layer.members:
            assert hasattr(base, name), f"{layer.name}: {layer.base} has no {name}"
            declared = inspect.getattr_static(layer.protocol, name, None)
            actual = inspect.getattr_static(base, name)
            if declared is None:  # an annotation: a class attribute with a value, not a method
                assert not callable(actual), f"{layer.name}: {name} is a method on {layer.base}"
            else:
                assert type(declared) is type(actual), f"{layer.name}: {name} is a {type(actual).__name__} on the base"


def registered_classes() -> list[tuple[str, type]]:
    found = [(item.id, env_class(item.id)) for item in suite_entries() if implemented(item)]
    return [(env_id, cls) for env_id, cls in found if isinstance(cls, type)]


def test_every_registered_env_implements_its_core_and_its_capabilities_are_known() -> None:
    names = {layer.name for layer in CAPABILITIES}
    classes = registered_classes()
    assert len(classes) >= 10
    for env_id, cls in classes:
        assert missing_core(cls) == [], env_id
        assert set(capabilities_of(cls)) <= names, env_id
    opted = {env_id: capabilities_of(cls) for env_id, cls in classes}
    assert "simulated roles" in opted["Tau2-v0"] and "rehearsal" in opted["Tau2-v0"]
    assert "skills and privileged text" in opted["ALFWorld-v0"] and "rehearsal" not in opted["ALFWorld-v0"]
    assert "plays over another env" in opted["EnvACE-Rehearsal-v0"]


class Minimal(ToolEnv):
    """The tool core and nothing else."""

    def task_ids(self) -> list[str]:
        return ["t"]

    def oracle(self) -> list[str]:
        return ["done"]

    def _start_conversation(self, task_id: str) -> Conversation:
        return Conversation(task="say done", tools=[], handlers={}, first_user_message="say done")

    def _user_reply(self, assistant_text: str) -> str | None:
        return None

    def _evaluate(self) -> tuple[float, bool]:
        return 1.0, True


class WithRehearsalAndFixtures(Minimal):
    """Opts into two capabilities, one by a method and one by a class attribute."""

    fixture_profile: ClassVar[FixtureProfile] = FixtureProfile(fuzz_examples=3)

    def success_criteria(self) -> list[str]:
        return ["The assistant says done."]


class HalfDone(ToolEnv):
    def task_ids(self) -> list[str]:
        return ["t"]


def test_an_env_opts_into_exactly_the_capabilities_it_overrides() -> None:
    assert missing_core(Minimal) == [] and capabilities_of(Minimal) == []
    assert capabilities_of(WithRehearsalAndFixtures) == ["rehearsal", "fixtures and test profile"]
    assert missing_core(HalfDone) == ["oracle", "_start_conversation", "_user_reply", "_evaluate"]
    env: Any = WithRehearsalAndFixtures()
    _, info = env.reset(options={"task_id": "t"})
    assert info["task_id"] == "t"  # the defaults of every other layer still work


def test_the_docs_list_the_core_first_then_each_capability_with_its_members() -> None:
    section = DOCS.read_text(encoding="utf-8").split("## The env contract", 1)[1].split("\n## ", 1)[0]
    headings = re.findall(r"^### (.+)$", section, flags=re.MULTILINE)
    assert headings == [layer.name for layer in CORE + CAPABILITIES], "one ### heading per layer, core first"
    parts = re.split(r"^### .+$", section, flags=re.MULTILINE)[1:]
    for layer, text in zip(CORE + CAPABILITIES, parts):
        missing = [m for m in layer.members if f"`{m}" not in text]
        assert not missing, f"docs/extending.md's '{layer.name}' does not name {missing}"
        if layer in CAPABILITIES:
            assert re.search(r"[Aa]dd (it|these) when", text), f"say when to add '{layer.name}'"
    assert capabilities.__doc__ and "docs/extending.md" in capabilities.__doc__
