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

from agentgym_suite.registration import suite_entries
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
    for item in suite_entries():
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


# ---------------------------------------------------------------------------------------------
# Method concepts, not only names
#
# A method can hide in the generic layers under other names than its registry name (EnvACE's
# rehearsal as ``rehearsal=``, ``--rehearsal-*`` flags, ``simulator`` fields; a teacher's
# ``evidence``; SDAR-style ``skill`` texts). So the layers below are also read for the concepts.
#
# The rule, exactly:
#
# * Scanned: ``agentgym_suite/core``, ``rollout``, ``evaluation``, ``commands`` and the generic
#   trainer modules: ``trainers`` but its method homes (:data:`METHOD_HOMES`, the credit plug-ins,
#   each method's own package or module, where its concepts belong).
# * Read: every identifier the code defines or uses (modules imported, classes, functions,
#   parameters, keywords, attributes, variables) and every non-docstring string constant.
# * Concepts: any token holding ``rehears``, ``simulator``, ``evidence`` or ``skill``
#   (case-insensitive; a token is a run of letters, digits, ``_ . - /``).
# * Free: docstrings and comments (prose that may name a method as an example).
# * Allowed: only the names of extension points a method plugs into, each with the reason
#   (:data:`CONCEPT_EXTENSION_POINTS`, anywhere in these layers), a module that *is* one
#   extension point (:data:`CONCEPT_MODULES`), and the few tokens of one module that belong to
#   such a point (:data:`CONCEPT_ALLOWED_IN`). Everything else lives in the method's home and
#   reaches these layers through a declared extension point.
# ---------------------------------------------------------------------------------------------

CONCEPT_LAYERS = ("core", "rollout", "evaluation", "commands", "trainers")
METHOD_HOMES: dict[str, str] = {
    "trainers/credit/": "the credit plug-ins: each method's home (a module, or a package such as trainers/credit/vad/) "
                        "with its inputs, prompts and losses; the protocol they share (base.py, inputs.py) is read "
                        "for names above",
}
"""Folders under the scanned layers that are method homes, not generic layers -> why."""
CONCEPT = re.compile(r"[\w.\-/]*(?:rehears|simulator|evidence|skill)[\w.\-/]*", re.IGNORECASE)

_SKILLS_CAPABILITY = ("the skills capability of the env contract (core/capabilities.py SkillsAndPrivilegedText): "
                      "an env declares its skill texts and how a task picks one; teachers ask it")
_REHEARSAL_CAPABILITY = ("the rehearsal capability of the tool-env contract (core/capabilities.py RehearsalSupport): "
                         "hooks a tool env overrides so a world model can stand in for its tools")

CONCEPT_EXTENSION_POINTS: dict[str, str] = {
    "agentgym_suite.core.skills": _SKILLS_CAPABILITY,
    "SkillBook": _SKILLS_CAPABILITY,
    "load_skills": _SKILLS_CAPABILITY,
    "skill_texts": _SKILLS_CAPABILITY + " (TextEnv.skill_texts)",
    "skill_for_task": _SKILLS_CAPABILITY + " (TextEnv.skill_for_task)",
    "skills_dir": _SKILLS_CAPABILITY + " (the user's own folder of texts)",
    "skills_released": _SKILLS_CAPABILITY + " (TextEnv.skills_released)",
    "skills_fallback": _SKILLS_CAPABILITY + " (TextEnv.skills_fallback)",
    "SkillsAndPrivilegedText": _SKILLS_CAPABILITY + " (the protocol itself)",
    "skills_origin": _SKILLS_CAPABILITY + " (the logged config names where the teacher's texts come from)",
    "RehearsalSupport": _REHEARSAL_CAPABILITY + " (the protocol itself)",
    "rehearsed_score": _REHEARSAL_CAPABILITY + " (ToolEnv.rehearsed_score)",
}
"""Names of extension points that a method concept's word is part of -> why they are generic."""

CONCEPT_MODULES: dict[str, str] = {
    "core/skills.py": _SKILLS_CAPABILITY + "; this module reads the texts (released layout or the env's own)",
    "trainers/teacher.py": "the former home of the self-distillation teacher context, now only re-exporting "
                           "trainers/credit/self_distillation/ so old imports work (OLD_IMPORT_PATHS)",
}
"""Modules that are one extension point as a whole -> why."""

CONCEPT_ALLOWED_IN: dict[tuple[str, str], str] = {
    ("core/capabilities.py", "rehearsal"): "the label of the rehearsal capability (capabilities_of names it)",
    ("core/capabilities.py", "skills"): "the label of the skills capability ('skills and privileged text')",
    ("core/info.py", "user_simulator"): "a shared info key of every env with a simulated user (τ², VitaBench...): "
                                        "evaluation summaries list who played the user under labels",
    ("commands/compare.py", "skills"): "a value of --teacher-context: the teacher reads the env's declared skill texts "
                                       "(TextEnv.skill_texts, the skills capability)",
    ("trainers/config.py", "skills"): "a value of teacher_context (TEACHER_SOURCES): the skills capability's texts",
    ("trainers/config.py", "skill"): "the help texts of teacher_context and skills_dir name the capability's texts",
    ("trainers/config.py", "skill_mapping.json"): "the help of skills_dir names the released layout the capability reads",
    ("trainers/config.py", "TextEnv.skill_texts"): "the help of skills_dir names the capability's hook",
}
"""(module under the package, token) -> why that module may hold it."""


def _identifiers(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Name):
            found.append((line, node.id))
        elif isinstance(node, ast.Attribute):
            found.append((line, node.attr))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.append((line, node.name))
        elif isinstance(node, ast.arg):
            found.append((line, node.arg))
        elif isinstance(node, ast.keyword) and node.arg:
            found.append((line, node.arg))
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.append((line, node.module))
            found.extend((line, alias.asname or alias.name) for alias in node.names)
        elif isinstance(node, ast.Import):
            found.extend((line, name) for alias in node.names for name in (alias.name, alias.asname) if name)
    return found


def code_texts(source: str) -> list[tuple[int, str]]:
    """``(line, text)`` for each identifier and non-docstring string of ``source`` (what code names, not prose)."""
    tree = ast.parse(source)
    docs = _docstring_nodes(tree)
    return _identifiers(tree) + [(node.lineno, node.value) for node in ast.walk(tree)
                                 if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs]


def concept_tokens(source: str) -> list[tuple[int, str]]:
    """``(line, token)`` for each method-concept token in the identifiers and non-docstring strings of ``source``."""
    return [(line, token) for line, text in code_texts(source) for token in CONCEPT.findall(text)]


def _concept_modules() -> list[tuple[str, Path]]:
    found = [(path.relative_to(PACKAGE).as_posix(), path) for layer in CONCEPT_LAYERS
             for path in sorted((PACKAGE / layer).rglob("*.py"))]
    return [(relative, path) for relative, path in found if not relative.startswith(tuple(METHOD_HOMES))]


def _allowed(relative: str, token: str) -> bool:
    return relative in CONCEPT_MODULES or token in CONCEPT_EXTENSION_POINTS or (relative, token) in CONCEPT_ALLOWED_IN


def test_the_concept_rule_reads_identifiers_and_strings_and_lets_prose_be() -> None:
    source = '''
"""Prose may say rehearsal, simulator, evidence and skill."""
from agentgym_suite.envs.rehearsal.agent import RehearsingAgent
from agentgym_suite.core.skills import SkillBook
def evaluate(env_id, rehearsal=None, *, judge_evidence=0):
    """A docstring may too: the skill texts."""
    # and a comment: simulator
    book: SkillBook = load(skills_dir="x")
    return RehearsingAgent(evaluate(env_id, max_simulator_calls=3), "see the skill document")
'''
    found = sorted({token for _, token in concept_tokens(source)})
    assert found == ["RehearsingAgent", "SkillBook", "agentgym_suite.core.skills", "agentgym_suite.envs.rehearsal.agent",
                     "judge_evidence", "max_simulator_calls", "rehearsal", "skill", "skills_dir"]
    left = sorted({token for _, token in concept_tokens(source) if not _allowed("evaluation/x.py", token)})
    assert left == ["RehearsingAgent", "agentgym_suite.envs.rehearsal.agent", "judge_evidence", "max_simulator_calls",
                    "rehearsal", "skill"]


def test_concept_allowlists_are_still_needed() -> None:
    present: set[tuple[str, str]] = set()
    for relative, path in _concept_modules():
        present |= {(relative, token) for _, token in concept_tokens(path.read_text(encoding="utf-8"))}
    tokens = {token for relative, token in present if relative not in CONCEPT_MODULES}  # used outside whole-module exemptions
    assert set(CONCEPT_EXTENSION_POINTS) <= tokens, f"stale: {sorted(set(CONCEPT_EXTENSION_POINTS) - tokens)}"
    assert set(CONCEPT_ALLOWED_IN) <= present, f"stale: {sorted(set(CONCEPT_ALLOWED_IN) - present)}"
    assert set(CONCEPT_MODULES) <= {relative for relative, _ in present}, "a module in CONCEPT_MODULES holds no concept"
    for home in METHOD_HOMES:  # each home exists and holds method concepts (else it needs no exemption)
        assert any(concept_tokens(path.read_text(encoding="utf-8")) for path in (PACKAGE / home).rglob("*.py")), home


def test_generic_layers_hold_no_method_concept() -> None:
    offences = []
    for relative, path in _concept_modules():
        for line, token in concept_tokens(path.read_text(encoding="utf-8")):
            if not _allowed(relative, token):
                offences.append(f"agentgym_suite/{relative}:{line}: {token!r}")
    assert not offences, (
        "a method concept sits in a generic layer; move it into the method's home (its env package, its credit "
        "plug-in) and let it plug into a declared extension point (an EvalExtension of core/eval_extensions.py, a "
        "capability of core/capabilities.py, an info_keys declaration), or, if the name is such an extension point, "
        "add it to CONCEPT_EXTENSION_POINTS with the reason:\n" + "\n".join(sorted(set(offences)))
    )


# ---------------------------------------------------------------------------------------------
# No generic module imports a method package
#
# A generic module (the layers above, outside METHOD_HOMES) reaches the credit plug-ins through their
# protocol and registry only (PLUGIN_PROTOCOL): never a method's own package or module, which register
# into the declared hooks instead (e.g. a plug-in's teacher_context, the trainer builds and asks it).
# ---------------------------------------------------------------------------------------------

CREDIT_PACKAGE = "agentgym_suite.trainers.credit"
PLUGIN_PROTOCOL: dict[str, str] = {
    CREDIT_PACKAGE: "the plug-ins' public protocol (re-exports base, inputs and registry)",
    f"{CREDIT_PACKAGE}.base": "CreditAssigner, CreditBatch and the declared hooks' types",
    f"{CREDIT_PACKAGE}.inputs": "the declared input providers' protocol",
    f"{CREDIT_PACKAGE}.registry": "plug-ins by name",
}
"""Modules under ``trainers/credit`` a generic module may import -> what they are."""
OLD_IMPORT_PATHS: dict[str, str] = {
    "trainers/teacher.py": "re-exports trainers/credit/self_distillation/ under the path it had before it moved",
}
"""Generic modules that only re-export a method package under its former import path -> why."""


def _credit_imports(source: str) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return {name for name in found if name == CREDIT_PACKAGE or name.startswith(CREDIT_PACKAGE + ".")}


def test_generic_modules_import_no_method_package() -> None:
    offences, reexports = [], set()
    for relative, path in _concept_modules():
        methods = _credit_imports(path.read_text(encoding="utf-8")) - set(PLUGIN_PROTOCOL)
        if methods and relative in OLD_IMPORT_PATHS:
            reexports.add(relative)
        elif methods:
            offences.append(f"agentgym_suite/{relative}: {sorted(methods)}")
    assert not offences, ("a generic module imports a method's package; declare a hook on CreditAssigner the method "
                          "fills and ask the plug-in for it instead:\n" + "\n".join(offences))
    assert reexports == set(OLD_IMPORT_PATHS), f"stale OLD_IMPORT_PATHS: {sorted(set(OLD_IMPORT_PATHS) - reexports)}"


def test_the_import_rule_catches_a_method_package() -> None:
    source = "from agentgym_suite.trainers.credit import CreditBatch\nfrom agentgym_suite.trainers.credit.sdar import sdar_loss\n"
    assert _credit_imports(source) - set(PLUGIN_PROTOCOL) == {f"{CREDIT_PACKAGE}.sdar"}
