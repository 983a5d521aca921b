"""How a rehearsed episode is scored (``reward_mode`` of the rehearsal env).

* ``base`` - the base env's own check. With ``world_model="real"`` this is exactly the base
  env's reward. With a simulated world it is allowed only where the base env declares its
  check execution-free (``ToolEnv.execution_free``: it reads only the calls made, as BFCL's
  single-turn AST match and FinMCP's tool-name F1 do); elsewhere the constructor refuses it.
  A base env whose check counts what its handlers saw recomputes it from the calls made
  (``ToolEnv.rehearsed_score``), since no handler runs while rehearsing.
* ``checklist`` - EnvACE's training reward: the base env's per-turn checklists
  (``ToolEnv.checklists``) scored turn by turn from the trajectory; standards with a machine
  check are decided deterministically, the others by a fixed judge model. See
  :mod:`agentgym_suite.envs.shared.checklists`.
* ``gold_calls`` - imitation, not task success: the caller's calls against the gold calls of
  the base env's oracle, taken at reset; nothing is executed. Kept for diagnostics and
  ablations; no EnvACE config trains on it. ``score`` = share of gold calls made (multiset, arguments
  compared as canonical JSON); ``won`` = the gold calls appear in order among the calls made
  (other calls in between are allowed). A task whose oracle makes no call is won by making none.
* ``judge`` - a fixed judge (backend or callable; never the policy) marks each success criterion of the task (the
  base env's ``ToolEnv.success_criteria``, then the gold calls) as met or not from the
  transcript; ``score`` = share met, ``won`` = all met. The original method scores per-turn
  checklists; here the whole conversation is judged once, at the end.
* ``none`` - no score (0, not won): for test-time rehearsal, where gold data must not leak.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, Callable, Sequence

from agentgym_suite.core.tool_calls import parse_tool_calls
from agentgym_suite.envs.shared.canonical_json import canonical

REWARD_MODES = ("base", "checklist", "gold_calls", "judge", "none")
Call = tuple[str, dict[str, Any]]
JudgeFn = Callable[[str, list[str]], Any]
"""``(transcript, criteria) -> list[bool] | float``: a callable judge."""


def gold_calls_from_oracle(actions: Sequence[str]) -> list[Call]:
    """The tool calls of an oracle action list, in order."""
    calls: list[Call] = []
    for action in actions:
        calls.extend((c.name, dict(c.arguments)) for c in parse_tool_calls(action).calls)
    return calls


def gold_call_score(made: Sequence[Call], gold: Sequence[Call]) -> tuple[float, bool]:
    """(score, won) of the calls made against the gold calls (see the module docstring)."""
    made_keys = [(n, canonical(a)) for n, a in made]
    gold_keys = [(n, canonical(a)) for n, a in gold]
    if not gold_keys:
        return (1.0, True) if not made_keys else (0.0, False)
    hit = sum((Counter(made_keys) & Counter(gold_keys)).values())
    position = 0
    for key in made_keys:
        if position < len(gold_keys) and key == gold_keys[position]:
            position += 1
    won = position == len(gold_keys)
    return (1.0 if won else hit / len(gold_keys)), won


def task_criteria(data_criteria: Sequence[str], task: str, gold: Sequence[Call]) -> list[str]:
    """Success criteria for a judge: the data's own (``data_criteria``), then one per gold call.

    With neither, the one criterion is that the user's request (``task``) is fulfilled.
    """
    criteria = [str(c) for c in data_criteria]
    for name, arguments in gold:
        criteria.append(f"The assistant calls {name} with arguments {canonical(arguments)} (or equivalent ones).")
    if not criteria:
        criteria.append(f"The assistant fulfils the user's request: {task}")
    return criteria


JUDGE_SYSTEM = (
    "You grade a conversation between a user, an assistant and its tools. For each numbered criterion, "
    "decide whether the conversation meets it. Answer with one line per criterion, 'N: yes' or 'N: no', nothing else."
)


def judge_prompt(transcript: str, criteria: Sequence[str]) -> list[dict[str, str]]:
    """The chat messages sent to a backend judge."""
    listed = "\n".join(f"{i}. {c}" for i, c in enumerate(criteria, 1))
    return [{"role": "system", "content": JUDGE_SYSTEM},
            {"role": "user", "content": f"# Conversation\n{transcript}\n\n# Criteria\n{listed}"}]


def parse_judge_answer(text: str, n: int) -> list[bool]:
    """Per-criterion verdicts from ``N: yes/no`` lines; a criterion without a line counts as not met."""
    verdicts = [False] * n
    for number, answer in re.findall(r"^\s*(\d+)\s*[:.)-]\s*(yes|no)\b", text, flags=re.IGNORECASE | re.MULTILINE):
        index = int(number) - 1
        if 0 <= index < n:
            verdicts[index] = answer.lower() == "yes"
    return verdicts


def judge_score(judge: Any, transcript: str, criteria: list[str], *, seed: int | None = None) -> tuple[float, bool, list[bool]]:
    """Ask ``judge`` (a backend or a :data:`JudgeFn`) and return (score, won, verdicts)."""
    if callable(getattr(judge, "generate", None)):
        from agentgym_suite.llm.base import SamplingParams

        samples = judge.generate([judge_prompt(transcript, criteria)], SamplingParams(temperature=0.0, max_new_tokens=16 * len(criteria) + 32, seed=seed))
        verdicts = parse_judge_answer(samples[0][0].text, len(criteria))
    else:
        answer = judge(transcript, list(criteria))
        if isinstance(answer, (int, float)) and not isinstance(answer, bool):
            score = min(max(float(answer), 0.0), 1.0)
            return score, score == 1.0, []
        verdicts = [bool(v) for v in answer]
        if len(verdicts) != len(criteria):
            raise ValueError(f"the judge returned {len(verdicts)} verdicts for {len(criteria)} criteria; return one per criterion.")
    score = sum(verdicts) / len(verdicts) if verdicts else 0.0
    return score, bool(verdicts) and all(verdicts), verdicts
