"""The generic layers name no env and no credit plug-in: they ask through declared hooks.

A rule about one benchmark or one method lives in its own home (the env's package and its
registration entry, the plug-in's module under ``trainers/credit/``) and reaches the generic
layers through a declared hook (``TextEnv`` class attributes and classmethods, ``EnvEntry``
fields, ``CreditAssigner`` declarations, ``TextEnv.sweeps()``). This test parses every module of
the generic layers and fails on a string constant that names one.

The rule, exactly:

* Scanned: ``agentgym_suite/core``, ``rollout``, ``trainers`` (except ``trainers/credit``, the
  plug-ins' own home), ``evaluation`` and ``commands``. Registration code (``registration.py``,
  each env package's ``card.py`` and ``sweep.py``) is outside them.
* Names: every registered env id, also as its stem followed by a hyphen (``"SkillRise-"``
  names the env as surely as ``"SkillRise-v0"``), and every credit plug-in's registry name as a
  whole lower-case word (``"grpo"``, not ``"dr_grpo"`` nor the algorithm ``GRPO``).
* Checked: every string constant the code can act on or show, including dict keys, defaults,
  f-string parts, help texts and error messages.
* Free: docstrings (of modules, classes, functions and attributes) and comments, which may name
  envs and plug-ins as examples: prose a reader reads, never a value the code compares or prints.
* :data:`ALLOWED`: a string that is another library's vocabulary and happens to spell a
  plug-in's name, each with the reason.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from agentgym_suite.registration import ENV_ENTRIES
from agentgym_suite.trainers.credit import CREDIT_ASSIGNERS

PACKAGE = Path(__file__).resolve().parents[1] / "agentgym_suite"
GENERIC_LAYERS = ("core", "rollout", "trainers", "evaluation", "commands")
EXCLUDED = (PACKAGE / "trainers" / "credit",)

ALLOWED: dict[tuple[str, str], str] = {
    ("trainers/memory_bound.py", "grpo"): "TRL's loss_type value 'grpo' (GRPOConfig.loss_type), not the credit plug-in",
    ("trainers/memory_bound.py", "dr_grpo"): "TRL's loss_type value 'dr_grpo', not the credit plug-in",
}
"""(module path under the package, the string constant) -> why it may stay."""


def _names_pattern() -> re.Pattern[str]:
    env_names = set()
    for item in ENV_ENTRIES:
        env_names.add(re.escape(item.id))
        stem = re.sub(r"-v\d+$", "", item.id)
        env_names.add(re.escape(stem) + "-")
    plugins = [rf"(?<![\w-]){re.escape(name)}(?![\w])" for name in CREDIT_ASSIGNERS]
    return re.compile("|".join(sorted(env_names, key=len, reverse=True) + plugins))


def _docstring_nodes(tree: ast.AST) -> set[int]:
    """Ids of the string constants that are docstrings: first statements of modules, classes and
    functions, and bare string statements (attribute docstrings)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            found.add(id(node.value))
    return found


def _modules() -> list[Path]:
    files = []
    for layer in GENERIC_LAYERS:
        for path in sorted((PACKAGE / layer).rglob("*.py")):
            if not any(path.is_relative_to(excluded) for excluded in EXCLUDED):
                files.append(path)
    return files


def named_strings(source: str, pattern: re.Pattern[str]) -> list[tuple[int, str, str]]:
    """``(line, the string, the name it holds)`` for each non-docstring string constant of ``source`` naming one."""
    tree = ast.parse(source)
    docs = _docstring_nodes(tree)
    hits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            match = pattern.search(node.value)
            if match:
                hits.append((node.lineno, node.value, match.group(0)))
    return hits


def test_the_rule_catches_names_and_lets_prose_be() -> None:
    pattern = _names_pattern()
    source = '''
"""Module prose may say TextWorld-v0 and grpo."""
def f(env_id, credit):
    """So may a docstring: SkillRise-v0, envace."""
    # and a comment: VitaBench-v0
    if env_id.startswith("SkillRise-") or credit == "vad":
        raise ValueError(f"{env_id}: use credit: envace")
    return {"BFCL-v0": 1, "dr_grpo": 2, "GRPO steps": 3}
'''
    found = sorted(name for _, _, name in named_strings(source, pattern))
    assert found == ["BFCL-v0", "SkillRise-", "dr_grpo", "envace", "vad"]


def test_allowlist_entries_are_still_needed() -> None:
    pattern = _names_pattern()
    present = set()
    for path in _modules():
        relative = path.relative_to(PACKAGE).as_posix()
        present |= {(relative, text) for _, text, _ in named_strings(path.read_text(encoding="utf-8"), pattern)}
    assert set(ALLOWED) <= present, f"stale ALLOWED entries: {sorted(set(ALLOWED) - present)}"


def test_generic_layers_name_no_env_and_no_plugin() -> None:
    pattern = _names_pattern()
    offences = []
    for path in _modules():
        relative = path.relative_to(PACKAGE).as_posix()
        for line, text, name in named_strings(path.read_text(encoding="utf-8"), pattern):
            if (relative, text) not in ALLOWED:
                offences.append(f"agentgym_suite/{relative}:{line}: {name!r} in {text[:80]!r}")
    assert not offences, (
        "the generic layers name an env or a credit plug-in; move the rule into a declared hook (TextEnv class "
        "attributes or classmethods, the env's registration entry, the CreditAssigner's declarations, the env's "
        "sweeps) and ask it from here:\n" + "\n".join(offences)
    )
