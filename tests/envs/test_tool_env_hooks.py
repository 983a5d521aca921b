"""The public hooks of ``ToolEnv`` that wrapping envs use, and that the wrappers use nothing else.

The rehearsal env (and the fidelity check and rehearsing agent built on it) must work with any
tool env through ``recorded_examples``, ``execution_free``, ``rehearsed_score``,
``success_criteria``, ``tool_index`` and ``call_runner``; each benchmark overrides the hooks it
has data for.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import gymnasium
import pytest

import agentgym_suite
import agentgym_suite.registration as registration
from agentgym_suite.core.data import has_benchmark_data
from agentgym_suite.core.tool_calls import ToolCall
from agentgym_suite.methods.envace import RehearsalEnv, format_execution_result
from agentgym_suite.methods.envace.scripted import ScriptedBackend

from envs.echo_env import ECHO, EchoEnv

registration.register_all()
PACKAGE = Path(agentgym_suite.__file__).parent


def test_hook_defaults_describe_an_env_with_no_extra_data(tmp_path: Path) -> None:
    assert EchoEnv.fixture_kwargs(tmp_path) == {} and not EchoEnv.fixture_replaces_data
    assert list(tmp_path.iterdir()) == []
    env = EchoEnv()
    env.reset(seed=0)
    assert env.recorded_examples() == [] and env.success_criteria() == []
    assert env.execution_free is False and env.rehearsed_score([("echo", {"text": "hi"})]) is None
    index = env.tool_index
    assert list(index) == ["echo"] and index["echo"] == ECHO
    index.clear()  # a copy: the env's allow-list is untouched
    assert list(env.tool_index) == ["echo"]


def test_an_injected_call_runner_answers_instead_of_the_handlers() -> None:
    env = EchoEnv()
    seen: list[ToolCall] = []

    def runner(call: ToolCall) -> tuple[str, Any, str]:
        seen.append(call)
        return call.name, {"echo": "from the runner"}, "ok"

    env.call_runner = runner
    env.reset(seed=0)
    obs, *_ = env.step(env.oracle()[0])
    assert "from the runner" in obs and [c.arguments for c in seen] == [{"text": "hi"}] and env.handled == []
    env.call_runner = None
    env.reset(seed=0)
    obs, *_ = env.step(env.oracle()[0])
    assert "from the runner" not in obs and env.handled == ["hi"]


def test_rehearsal_wraps_a_tool_env_it_has_never_heard_of() -> None:
    """Passed as an instance: tasks, tools and oracle come from the hooks, results from the world model."""
    world = ScriptedBackend(lambda name, args: format_execution_result({"echo": "imagined " + args["text"]}))
    env = RehearsalEnv(base_env=EchoEnv(), world_model=world)
    assert env.reward_mode == "gold_calls"  # not execution-free: scored against the oracle's calls
    env.reset(seed=0)
    obs, *_ = env.step(env.oracle()[0])
    _, reward, terminated, _, info = env.step("Done.")
    assert "imagined hi" in obs and env.env.handled == [] and world.calls == [("echo", {"text": "hi"})]
    assert terminated and reward == 1.0 and info["won"]


def test_rehearsal_passes_the_base_privileged_info_on() -> None:
    env = RehearsalEnv(base_env=EchoEnv(), world_model="real", privileged=True)
    _, info = env.reset(seed=0)
    assert info["privileged"] == {"oracle": EchoEnv().oracle()}
    _, _, _, _, info = env.step(env.oracle()[0])
    assert info["privileged"]["oracle"] == ["Done."]  # the base's oracle from its state after the call


def _private_reach_ins(path: Path) -> list[str]:
    """``x._name`` uses (also through ``getattr``) where ``x`` is not ``self``/``cls``, and imports of benchmark packages
    (the rehearsal package itself and ``envs/shared``, the pieces every benchmark may use, are allowed)."""
    found = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            if not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                found.append(f"{path.name}:{node.lineno} {ast.unparse(node)}")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "setattr"):
            name = node.args[1] if len(node.args) > 1 else None
            if isinstance(name, ast.Constant) and str(name.value).startswith("_"):
                found.append(f"{path.name}:{node.lineno} {ast.unparse(node)}")
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("agentgym_suite.envs."):
            if not node.module.startswith(("agentgym_suite.methods.envace", "agentgym_suite.envs.shared")):  # type: ignore[union-attr]
                found.append(f"{path.name}:{node.lineno} imports {node.module}")
    return found


@pytest.mark.parametrize("path", sorted((PACKAGE / "envs" / "rehearsal").glob("*.py")),  # fidelity lives there too
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_rehearsal_code_uses_only_public_hooks(path: Path) -> None:
    assert _private_reach_ins(path) == []


def _judged_criteria(env_id: str, kwargs: dict[str, Any], task_id: str) -> list[str]:
    seen: dict[str, list[str]] = {}

    def judge(transcript: str, criteria: list[str]) -> list[bool]:
        seen["criteria"] = criteria
        return [True] * len(criteria)

    env = gymnasium.make("EnvACE-Rehearsal-v0", base_env=env_id, base_env_kwargs=kwargs,
                         world_model=ScriptedBackend(lambda n, a: format_execution_result({"ok": True})),
                         reward_mode="judge", judge=judge, end_on_tool_error=False)
    env.reset(options={"task_id": task_id})
    plan = env.unwrapped.oracle() + ["Thanks, that is all."] * 40  # planned at reset: no tool really runs
    for action in plan:
        *_, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            break
    env.close()
    return seen["criteria"]


@pytest.mark.skipif(not has_benchmark_data("tau2", "domains"), reason="tau2 data not found")
def test_tau2_success_criteria_reach_the_judge() -> None:
    base = gymnasium.make("Tau2-v0", domain="retail").unwrapped
    base.reset(options={"task_id": "2"})
    own = base.success_criteria()
    assert own and any(c.startswith("The assistant tells the user: ") for c in own)
    criteria = _judged_criteria("Tau2-v0", {"domain": "retail"}, "2")
    assert criteria[: len(own)] == own and any(c.startswith("The assistant calls ") for c in criteria[len(own):])


@pytest.mark.skipif(not has_benchmark_data("vitabench"), reason="vitabench data not found")
def test_vitabench_rubrics_are_its_success_criteria() -> None:
    base = gymnasium.make("VitaBench-v0", domain="delivery").unwrapped
    task_id = base.task_ids()[0]
    base.reset(options={"task_id": task_id})
    own = base.success_criteria()
    assert own and all(isinstance(c, str) and c for c in own)
    assert _judged_criteria("VitaBench-v0", {"domain": "delivery"}, task_id)[: len(own)] == own


@pytest.mark.skipif(bool(registration.missing_requirements(registration.entry("BFCL-v0"))), reason="bfcl-eval not installed")
def test_bfcl_is_execution_free_only_in_single_turn_categories() -> None:
    assert gymnasium.make("BFCL-v0", category="simple").unwrapped.execution_free
    assert not gymnasium.make("BFCL-v0", category="base").unwrapped.execution_free


def test_finmcp_hooks_come_from_its_recordings(tmp_path: Path) -> None:
    from agentgym_suite.envs.finmcp import FinMCPEnv

    env = gymnasium.make("FinMCP-v0", **FinMCPEnv.fixture_kwargs(tmp_path)).unwrapped
    assert env.recorded_examples() == [] and env.rehearsed_score([]) is None  # before reset
    env.reset(options={"task_id": "202"})
    examples = env.recorded_examples()
    assert env.execution_free and examples and all(set(e) == {"name", "arguments", "result"} for e in examples)
    gold = [(e["name"], e["arguments"]) for e in examples]
    assert env.rehearsed_score(gold)[0] == pytest.approx(1.0)
    assert env.rehearsed_score([]) == (0.0, False)
