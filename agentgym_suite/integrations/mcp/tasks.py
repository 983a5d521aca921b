"""Tasks of ``MCP-v0``: one JSON object a line, each an instruction and how success is checked.

A line holds ``id`` and ``instruction``, optionally ``system_prompt``, and one or more checks
(all must pass for ``won``; the score is the fraction that pass):

* ``expected_calls``: ``[{"name": ..., "arguments": {...}}, ...]``; each must be matched, in
  order, by a call the server answered without ``isError`` whose arguments contain the expected
  ones (extra arguments are allowed);
* ``answer``: a check of the agent's final text reply: ``{"equals": s}``, ``{"contains": s}`` or
  ``{"regex": pattern}`` (``re.search``; ``"ignore_case": true`` for any of them);
* ``verifier``: ``"package.module:function"``, imported (never evaluated from text) and called
  as ``function(task=..., calls=..., answer=...)``; it returns a bool, a score in [0, 1] or
  ``(score, won)``.

``oracle_answer`` (optional) is the final reply the oracle gives after the expected calls;
without it the oracle answers with ``answer.equals`` or ``answer.contains``.
"""

from __future__ import annotations

import importlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

_CHECKS = ("expected_calls", "answer", "verifier")


@dataclass(frozen=True)
class McpTask:
    """One task of a tasks file (see the module docstring)."""

    id: str
    instruction: str
    system_prompt: str = ""
    expected_calls: tuple[dict[str, Any], ...] = ()
    answer: dict[str, Any] = field(default_factory=dict)
    verifier: str = ""
    oracle_answer: str = ""

    @classmethod
    def from_dict(cls, raw: Any, where: str) -> McpTask:
        """Read and check one task object; ``where`` names it in errors."""
        if not isinstance(raw, dict):
            raise ValueError(f"{where}: a task is a JSON object, not {type(raw).__name__}.")
        unknown = set(raw) - {"id", "instruction", "system_prompt", "oracle_answer", *_CHECKS}
        if unknown:
            raise ValueError(f"{where}: unknown keys {sorted(unknown)}; a task has id, instruction, system_prompt, "
                             f"oracle_answer and the checks {', '.join(_CHECKS)}.")
        if not isinstance(raw.get("instruction"), str) or not raw["instruction"].strip():
            raise ValueError(f"{where}: 'instruction' must be a non-empty string.")
        if not any(raw.get(k) for k in _CHECKS):
            raise ValueError(f"{where}: give at least one check: {', '.join(_CHECKS)}.")
        calls = raw.get("expected_calls") or []
        if not isinstance(calls, list) or not all(isinstance(c, dict) and isinstance(c.get("name"), str)
                                                  and isinstance(c.get("arguments", {}), dict) for c in calls):
            raise ValueError(f"{where}: 'expected_calls' is a list of {{\"name\": str, \"arguments\": {{...}}}}.")
        answer = raw.get("answer") or {}
        kinds = set(answer) - {"ignore_case"}
        if answer and (len(kinds) != 1 or not kinds <= {"equals", "contains", "regex"}
                       or not isinstance(answer[next(iter(kinds))], str)):
            raise ValueError(f"{where}: 'answer' is one of {{\"equals\"|\"contains\"|\"regex\": str}}.")
        if "regex" in answer:
            re.compile(answer["regex"])
        verifier = raw.get("verifier") or ""
        if verifier and not re.fullmatch(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*", str(verifier)):
            raise ValueError(f"{where}: 'verifier' is 'package.module:function', not {verifier!r}.")
        return cls(str(raw.get("id") or where), raw["instruction"], str(raw.get("system_prompt") or ""),
                   tuple({"name": c["name"], "arguments": dict(c.get("arguments") or {})} for c in calls),
                   dict(answer), str(verifier), str(raw.get("oracle_answer") or ""))

    def final_reply(self) -> str:
        """What the oracle says at the end."""
        return self.oracle_answer or self.answer.get("equals") or self.answer.get("contains") or "Done."

    def check(self, calls: list[dict[str, Any]], answer: str) -> tuple[float, bool, dict[str, bool]]:
        """(score, won, per-check verdicts) for the successful ``calls`` made and the final ``answer``."""
        verdicts: dict[str, bool] = {}
        scores: list[float] = []
        if self.expected_calls:
            verdicts["expected_calls"] = calls_match(self.expected_calls, calls)
            scores.append(float(verdicts["expected_calls"]))
        if self.answer:
            verdicts["answer"] = answer_matches(self.answer, answer)
            scores.append(float(verdicts["answer"]))
        if self.verifier:
            score, won = run_verifier(self.verifier, self, calls, answer)
            verdicts["verifier"] = won
            scores.append(score)
        return sum(scores) / len(scores), all(verdicts.values()), verdicts


def calls_match(expected: tuple[dict[str, Any], ...], made: list[dict[str, Any]]) -> bool:
    """Whether ``expected`` is matched in order by ``made`` (a made call matches when its name is the
    same and its arguments contain the expected ones)."""
    position = 0
    for call in made:
        if position < len(expected) and _contains(call, expected[position]):
            position += 1
    return position == len(expected)


def _contains(call: dict[str, Any], want: dict[str, Any]) -> bool:
    arguments = call.get("arguments") or {}
    return call.get("name") == want["name"] and all(k in arguments and arguments[k] == v for k, v in want["arguments"].items())


def answer_matches(check: dict[str, Any], answer: str) -> bool:
    """Whether the final reply passes an ``answer`` check."""
    flags = re.IGNORECASE if check.get("ignore_case") else 0
    if "regex" in check:
        return re.search(check["regex"], answer, flags) is not None
    want, got = (check.get("equals") or check.get("contains") or ""), answer.strip()
    if flags:
        want, got = want.lower(), got.lower()
    return got == want.strip() if "equals" in check else want in got


def load_verifier(path: str) -> Callable[..., Any]:
    """Import the function named ``package.module:function``."""
    module, _, name = path.partition(":")
    try:
        function = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"verifier {path!r} cannot be imported ({exc}); name an importable 'module:function'.") from exc
    if not callable(function):
        raise ValueError(f"verifier {path!r} is not callable.")
    return function


def run_verifier(path: str, task: McpTask, calls: list[dict[str, Any]], answer: str) -> tuple[float, bool]:
    """(score, won) from a task's verifier; a verifier that raises or returns nonsense scores 0 with a
    clear error, since its verdict is the reward."""
    verdict = load_verifier(path)(task=task, calls=calls, answer=answer)
    if isinstance(verdict, tuple) and len(verdict) == 2:
        score, won = float(verdict[0]), bool(verdict[1])
    elif isinstance(verdict, bool):
        score, won = float(verdict), verdict
    elif isinstance(verdict, (int, float)):
        score = float(verdict)
        won = score >= 1.0
    else:
        raise TypeError(f"verifier {path!r} returned {type(verdict).__name__}; return a bool, a score or (score, won).")
    if not 0.0 <= score <= 1.0:
        raise ValueError(f"verifier {path!r} returned score {score}; scores lie in [0, 1].")
    return score, won


def load_tasks(source: str | Path | list[dict[str, Any]]) -> list[McpTask]:
    """Tasks from a ``.jsonl`` file or a list of task dicts; ids must be unique."""
    if isinstance(source, (list, tuple)):
        tasks = [McpTask.from_dict(raw, f"task {i}") for i, raw in enumerate(source)]
    else:
        path = Path(source)
        if not path.is_file():
            raise FileNotFoundError(f"tasks file {path} does not exist; give a .jsonl file with one task a line.")
        tasks = []
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
            except ValueError as exc:
                raise ValueError(f"{path}:{number}: not JSON ({exc}).") from exc
            tasks.append(McpTask.from_dict(raw, f"{path.name}:{number}"))
    if not tasks:
        raise ValueError(f"no tasks in {source!r}.")
    ids = [t.id for t in tasks]
    duplicated = sorted({i for i in ids if ids.count(i) > 1})
    if duplicated:
        raise ValueError(f"task ids must be unique; repeated: {duplicated}.")
    return tasks
