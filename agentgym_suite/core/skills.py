"""Privileged skill texts of self-distilling teachers (SDAR, OPSD, RLSD, Skill-SD, AgentOPSD, VAD).

A :class:`SkillBook` holds one benchmark's skill texts and picks the text of a teacher prompt.
Books come in two layouts:

* **mapped** — the layout the authors release (``skills/<env>/`` of ZJU-REAL/SDAR, the same files
  in ZethWang/AgentOPSD): ``skill_mapping.json`` names the files (``skill_files``), maps task
  types to skills (``task_to_skill``, in match order) and optionally lists keywords per task
  type (``task_keywords``). ``agentgym data fetch skills`` downloads them into
  ``$AGENTGYM_DATA/skills/<folder>/``.
* **family** — the suite's own fallback texts beside each env (``envs/<env>/skills/``):
  ``general.md`` plus one ``<family>.md`` per task family (``TextEnv.task_family``).

The selection rules mirror the released ``SkillProvider`` (``verl/trainer/ppo/rlsd_utils.py``):
every text starts with the general skills, then the texts of the matched task types joined by a
blank line (:meth:`SkillBook.compose`); a path matches the first task type it contains
(:meth:`SkillBook.for_path`); a prompt matches every task type one of whose keywords it contains
(:meth:`SkillBook.for_prompt`). Which rule a benchmark uses is its env's choice
(``TextEnv.skill_for_task``), as the authors choose it per benchmark.

:func:`load_skills` resolves which book a run reads and says so: the released texts when they
are present, else the env's fallback with a warning (the run records :attr:`SkillBook.origin`).
"""

from __future__ import annotations

import json
import logging
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

from agentgym_suite.core.data import data_dir

logger = logging.getLogger(__name__)

MAPPING_FILE = "skill_mapping.json"
"""The released layout's index file."""
RELEASED_ROOT = "skills"
"""Folder under ``$AGENTGYM_DATA`` that ``agentgym data fetch skills`` fills (one sub-folder per benchmark)."""
GENERAL_SKILL = "general_skills"
"""Name of the general skill text in the released layout (first in every composed text)."""
_FAMILY_NAME = re.compile(r"[A-Za-z0-9_\-]+")


@dataclass(frozen=True)
class SkillBook:
    """One benchmark's skill texts and the tables that pick among them."""

    texts: Mapping[str, str]
    """Skill name -> text (stripped), in file order; the general text under :data:`GENERAL_SKILL`."""
    task_to_skill: Mapping[str, str] = field(default_factory=dict)
    """Task type -> skill name, in match order (mapped layout); empty in the family layout."""
    task_keywords: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Task type -> keywords, in match order (mapped layout; may be empty)."""
    origin: str = ""
    """Where the texts come from, as a run records it (``released ...``, ``fallback ...``, ``custom ...``)."""

    @property
    def mapped(self) -> bool:
        """True for the released layout (selection by ``skill_mapping.json``), False for the family layout."""
        return bool(self.task_to_skill)

    @property
    def released(self) -> bool:
        """True when the texts are the authors' released ones (fetched, checksum-verified)."""
        return self.origin.startswith("released")

    def compose(self, task_types: Sequence[str]) -> str:
        """The general text, then the text of each task type's skill (unknown types add nothing).

        In the mapped layout a task type goes through ``task_to_skill``; in the family layout the
        type is the family itself. A skill matched twice is added twice, as upstream does.
        """
        parts = [self.texts.get(GENERAL_SKILL, "")]
        for task_type in task_types:
            name = self.task_to_skill.get(task_type) if self.mapped else task_type
            if name and name != GENERAL_SKILL and name in self.texts:
                parts.append(self.texts[name])
        return "\n\n".join(parts)

    def for_family(self, family: str) -> str:
        """General text plus the family's text (family layout: ``<family>.md``)."""
        return self.compose([family] if family else [])

    def for_path(self, path: str) -> str:
        """General text plus the skill of the first task type (in ``task_to_skill`` order) that
        ``path`` contains: upstream's selection from an ALFWorld game file path."""
        for task_type in self.task_to_skill:
            if task_type in path:
                return self.compose([task_type])
        return self.compose([])

    def for_prompt(self, prompt_text: str) -> str:
        """General text plus the skill of every task type one of whose keywords the lower-cased
        prompt contains (substring match, ``task_keywords`` order): upstream's selection from the
        prompt text."""
        text = prompt_text.lower()
        matched = [t for t, words in self.task_keywords.items() if words and any(w in text for w in words)]
        return self.compose(matched)

    def everything(self) -> str:
        """General text plus every other skill text (upstream's ``skill_all``)."""
        general = self.texts.get(GENERAL_SKILL, "")
        return "\n\n".join([general] + [t for name, t in self.texts.items() if name != GENERAL_SKILL])


def asks_to_compare(prompt_text: str) -> bool:
    """Upstream's comparison test on a prompt: it contains ``which`` and ``or`` but not ``for``
    (lower-cased substrings; a template containing ``for`` never passes it)."""
    text = prompt_text.lower()
    return "which" in text and "or" in text and "for" not in text


def read_mapped(folder: Path, origin: str) -> SkillBook:
    """A book in the released layout (``skill_mapping.json`` plus the files it names).

    Raises:
        FileNotFoundError: when the index or a file it names is missing (naming the fix).
        ValueError: when the index lacks ``skill_files`` or ``task_to_skill``.
    """
    index = folder / MAPPING_FILE
    try:
        mapping = json.loads(index.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise FileNotFoundError(f"no {MAPPING_FILE} in {folder}; run `agentgym data fetch skills`.") from exc
    if not isinstance(mapping, dict) or "skill_files" not in mapping or "task_to_skill" not in mapping:
        raise ValueError(f"{index} needs 'skill_files' and 'task_to_skill' tables (the layout of the released skills).")
    texts = {}
    for name, filename in mapping["skill_files"].items():
        path = folder / filename
        if not path.exists():
            raise FileNotFoundError(f"{index} names {filename}, which is missing; run `agentgym data fetch skills` again.")
        texts[str(name)] = path.read_text(encoding="utf-8").strip()
    keywords = {str(t): tuple(str(w) for w in words) for t, words in (mapping.get("task_keywords") or {}).items()}
    return SkillBook(texts, {str(k): str(v) for k, v in mapping["task_to_skill"].items()}, keywords, origin)


def read_families(folder: Path, origin: str) -> SkillBook:
    """A book in the family layout: ``general.md`` plus ``<family>.md`` files.

    Raises:
        FileNotFoundError: when ``general.md`` is missing.
    """
    general = folder / "general.md"
    if not general.exists():
        raise FileNotFoundError(f"no general.md in skills directory {folder}; write one (plus <family>.md files), "
                                f"or a {MAPPING_FILE} in the released layout.")
    texts = {GENERAL_SKILL: general.read_text(encoding="utf-8").strip()}
    for path in sorted(folder.glob("*.md")):
        if path.stem != "general" and _FAMILY_NAME.fullmatch(path.stem):
            texts[path.stem] = path.read_text(encoding="utf-8").strip()
    return SkillBook(texts, origin=origin)


def read_folder(folder: str | Path, origin: str) -> SkillBook:
    """The book in ``folder``: the released layout when it has ``skill_mapping.json``, else the family layout."""
    root = Path(folder)
    return read_mapped(root, origin) if (root / MAPPING_FILE).exists() else read_families(root, origin)


def released_folder(name: str, root: Path | None = None) -> Path:
    """Where ``agentgym data fetch skills`` puts the released texts of benchmark folder ``name``."""
    return (root or data_dir()) / RELEASED_ROOT / name


def load_skills(released: str, fallback: Path | None, *, skills_dir: str | Path | None = None,
                env_name: str = "this env") -> SkillBook | None:
    """The skill book a run reads for one env, and where it comes from (:attr:`SkillBook.origin`).

    ``skills_dir`` (the user's own folder) wins; then the released texts of folder ``released``
    under ``$AGENTGYM_DATA/skills/``; then the env's own ``fallback`` folder, with a warning that
    names the fallback and how to get the released texts. None when the env has neither.
    """
    if skills_dir:
        return read_folder(skills_dir, f"custom skills_dir {skills_dir}")
    if released:
        folder = released_folder(released)
        if (folder / MAPPING_FILE).exists():
            return read_mapped(folder, f"released skills/{released} (ZJU-REAL/SDAR) from {folder}")
    if fallback is None:
        return None
    why = (f"the released skill texts are not under {released_folder(released)}; run `agentgym data fetch skills`"
           if released else "the authors release no skill texts for it")
    message = (f"the teacher of {env_name} reads the suite's own fallback skill texts ({fallback}): {why}. "
               "Results are not comparable with the papers' teachers.")
    warnings.warn(message, stacklevel=2)
    logger.warning(message)
    return read_families(fallback, f"fallback: the suite's own texts in {fallback} ({why})")


__all__ = ["GENERAL_SKILL", "MAPPING_FILE", "SkillBook", "asks_to_compare", "load_skills", "read_families",
           "read_folder", "read_mapped", "released_folder"]
