"""The trainer reads top to bottom: one generation batch runs through the phases rollout -> score ->
loss -> log, in that order in ``agent_grpo.py`` (which stays under 700 lines: the phases' helpers and
TRL's per-micro-batch step are mixins of the trainer in files of their own) and as
``docs/training.md`` tells it; other helper modules take typed inputs, never the trainer; the plug-in is looked up by name once (by its registry, when
the config is built) and built by the registry; ``env_workers`` is parsed once and the trainer's
pool is the one its rollout engines use."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from agentgym_suite.trainers import agent_grpo
from agentgym_suite.trainers.agent_grpo import AgentGRPOTrainer
from agentgym_suite.trainers.credit import registry
from agentgym_suite.trainers.run_context import run_context
from trainers.fake_env import make_letter_env

ROOT = Path(__file__).resolve().parents[2]
TRAINERS = ROOT / "agentgym_suite" / "trainers"
SOURCE = TRAINERS / "agent_grpo.py"
PHASES = ("_rollout_phase", "_score_phase", "_loss_phase", "_log_phase")
"""The phase methods, in the order a generation batch runs through them."""
AFTER_PHASES = "log"
"""The first method after the phases (TRL's logging; the per-micro-batch step is a mixin's)."""
MAX_LINES = 700
"""The trainer file's length limit: past it, move a cohesive group of methods into a mixin module."""


def _methods() -> dict[str, int]:
    """Line of each method of ``AgentGRPOTrainer``."""
    tree = ast.parse(SOURCE.read_text(encoding="utf-8"))
    [cls] = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "AgentGRPOTrainer"]
    return {n.name: n.lineno for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _mixin_methods() -> dict[str, str]:
    """Methods of the trainer's mixins (its own bases defined in other ``trainers/`` modules), by the
    file that defines each."""
    found: dict[str, str] = {}
    for base in AgentGRPOTrainer.__mro__[1:]:
        module = base.__module__
        if module.startswith("agentgym_suite.trainers.") and module != agent_grpo.__name__:
            for name, value in vars(base).items():
                if callable(value) or isinstance(value, property):
                    found.setdefault(name, module.rsplit(".", 1)[1] + ".py")
    return found


def test_the_trainer_file_stays_short_and_its_mixins_are_parts_of_it() -> None:
    length = len(SOURCE.read_text(encoding="utf-8").splitlines())
    assert length < MAX_LINES, f"agent_grpo.py has {length} lines; move a cohesive group of methods into a mixin"
    mixins = [b for b in AgentGRPOTrainer.__mro__[1:] if b.__module__.startswith("agentgym_suite.trainers.")
              and b.__module__ != agent_grpo.__name__]
    assert len(mixins) >= 4
    for mixin in mixins:  # a mixin is a part of the trainer: no constructor, a docstring, not used elsewhere
        assert "__init__" not in vars(mixin) and mixin.__doc__, mixin
    overlap = set(_methods()) & {n for n, f in _mixin_methods().items() if f != "step_profile.py"}
    assert not overlap, f"defined both in agent_grpo.py and in a mixin: {sorted(overlap)}"


def test_one_generation_batch_calls_the_phases_in_order() -> None:
    tree = ast.parse(SOURCE.read_text(encoding="utf-8"))
    [fn] = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "_generate_and_score_completions"]
    called = [n.func.attr for n in ast.walk(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
              and n.func.attr in PHASES]
    assert sorted(called, key=lambda name: min(c.lineno for c in ast.walk(fn) if isinstance(c, ast.Call)
                                               and isinstance(c.func, ast.Attribute) and c.func.attr == name)) \
        == list(PHASES)


def test_the_phases_are_in_order_in_the_file_and_the_docs_name_each_phases_methods() -> None:
    lines = _methods()
    mixins = _mixin_methods()
    starts = [lines[name] for name in PHASES] + [lines[AFTER_PHASES]]
    assert starts == sorted(starts), "the phase methods must follow each other: rollout, score, loss, log"
    doc = (ROOT / "docs" / "training.md").read_text(encoding="utf-8")
    section = doc.split("## One generation batch, step by step", 1)[1].split("\n## ", 1)[0]
    items = re.split(r"\n\d+\. ", section)
    seen: set[str] = set()
    for k, phase in enumerate(PHASES):
        [item] = [i.split("\n\n")[0] for i in items if f"`{phase}`" in i]
        named = [n for n in re.findall(r"`(_?[a-z_]+)`", item) if (n in lines or n in mixins) and n not in seen]
        assert named, f"docs/training.md names no method for {phase}"
        for name in named:  # each method a phase's paragraph names first is inside that phase, or a mixin's
            if name in lines:
                assert starts[k] <= lines[name] < starts[k + 1], f"{name} is named under {phase} but defined elsewhere"
            else:
                assert f"trainers/{mixins[name]}" in item, f"docs name {name} under {phase} but not its file"
        seen.update(named)
    mentioned = set(re.findall(r"`(_?[a-z_]+)`", section))
    assert mentioned & (set(lines) | set(mixins)) >= set(PHASES) | {"_generate_and_score_completions", "_compute_loss",
                                                                     "evaluate"}
    missing = sorted(n for n in mentioned if n.startswith("_") and n not in lines and n not in mixins
                     and not n.startswith("__"))
    assert not missing, f"docs/training.md names methods the trainer does not have: {missing}"


def test_helper_modules_take_typed_inputs_not_the_trainer() -> None:
    offenders = []
    for path in sorted(TRAINERS.rglob("*.py")):
        if path == SOURCE:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.arg) and node.arg == "trainer":
                offenders.append(f"{path.name}:{node.lineno} takes a trainer")
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "trainer" \
                    and node.attr.startswith("_"):
                offenders.append(f"{path.name}:{node.lineno} reads trainer.{node.attr}")
    assert not offenders, offenders


def test_only_the_registry_completes_a_plug_in_from_a_config() -> None:
    readers = []
    for path in sorted((ROOT / "agentgym_suite").rglob("*.py")):
        if path.parent.name == "credit":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in ("trainer_defaults", "own_invalid_penalty"):
                readers.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not readers, readers


def test_settings_are_resolved_once_and_the_engine_gets_the_trainers_pool(make_config, monkeypatch) -> None:
    args = make_config(env_workers="1", max_steps=1, max_turns=1, credit="gigpo")
    assert args.env_workers == "1" and args.parsed_env_workers is not None
    assert args.credit_class.name == "gigpo"

    def second_lookup(name):
        raise AssertionError(f"the plug-in {name!r} was looked up again after the config resolved it")

    monkeypatch.setattr(registry, "credit_assigner_class", second_lookup)
    trainer = AgentGRPOTrainer(args=args, env_factory=make_letter_env)
    assert trainer.credit.name == "gigpo"
    assert trainer._env_pool.workers is args.parsed_env_workers  # the value resolved with the config, not parsed again
    assert trainer.run_context is run_context(args) and not {"_credit_plugin", "_parsed_env_workers"} & set(vars(args))
    pools = []
    engine_class = agent_grpo.RolloutEngine

    def recording_engine(*a, **kw):
        pools.append(kw.get("env_pool"))
        return engine_class(*a, **kw)

    monkeypatch.setattr(agent_grpo, "RolloutEngine", recording_engine)
    trainer.train()
    assert pools and all(pool is trainer._env_pool for pool in pools)
