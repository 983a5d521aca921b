"""Per-turn checklists and their reward (EnvACE's training signal).

A task's checklists are ``checklist_list[c][t][s]``: checklist ``c`` (the data may carry
several annotations of the same task), user turn ``t``, standard ``s``. A standard is the
published EnvACE format (``agent_system/environments/env_package/checklist``)::

    {"question": ..., "focus_on": "assistant.tool_calls" | "tool.content" | "assistant.content" | ...,
     "pass_condition": ..., "failure_examples": [...], "evidence": [{"snippet": ...}],
     "weight": 0.5, "required_for_next_turn": true}

plus, in this suite, an optional machine check ``"check"`` that makes the standard
decidable from the trajectory without a judge:

* ``{"call": {"name": N, "arguments": {...}}}`` - at this step the assistant made that call
  (arguments equal as canonical JSON) and its result was not an error;
* ``{"reply": true}`` - at this step the assistant answered in text, with no tool call.

Scoring follows the released code: every assistant step of a turn is checked against every
standard of the turn (``ChecklistInteraction.generate_response_for_single_checklist``); a
standard counts once, at the first step that meets it; a standard on tool calls or tool
content is not met at a step whose tool results hold an ``error_tool_call`` (the same
function). The turn score is the met standards' weights summed over checklists
(``envs._aggregate_turn_score``), and the episode reward is the sum of turn scores divided by
``num_checklists * num_turns`` (``reward_manager/checklist.py``). A turn that leaves a
``required_for_next_turn`` standard unmet ends the episode.

Standards without a ``check`` are graded by a judge with the released judge prompt
(``checklist_reward.get_input_prompt_v2`` over ``get_messages_str_v2`` transcripts), which
answers a JSON verdict (:data:`VERDICT_SCHEMA`), sampled as the released judge is
(:class:`ChecklistJudge`). An unusable verdict counts as not met, is reported on the turn
(``TurnScore.judge_problems``) and, as in the released reward, ends the episode after that turn.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import jsonschema

from agentgym_suite.core.tool_calls import parse_tool_calls
from agentgym_suite.envs.shared.canonical_json import canonical

Standard = dict[str, Any]
ChecklistList = list[list[list[Standard]]]
JudgeVerdictFn = Callable[[str], Any]
"""A callable judge: the judge prompt in, the verdict text (or a bool) out."""

_TOOL_FOCUS = ("assistant.tool_calls", "tool.content")
_THINK = re.compile(r"<think>(.*?)</think>", re.DOTALL)


def validate_checklists(checklists: Any) -> ChecklistList:
    """Check the ``checklist_list`` shape (checklists x turns x standards); return it or raise ValueError."""
    if not isinstance(checklists, list) or not checklists:
        raise ValueError("checklist_list must be a non-empty list of checklists (each a list of turns of standards).")
    turns = None
    for c, checklist in enumerate(checklists):
        if not isinstance(checklist, list) or not checklist:
            raise ValueError(f"checklist {c} must be a non-empty list of turns, each a list of standards.")
        if turns is None:
            turns = len(checklist)
        for t, standards in enumerate(checklist):
            if not isinstance(standards, list):
                raise ValueError(f"checklist {c}, turn {t}: expected a list of standards, got {type(standards).__name__}.")
            for s, standard in enumerate(standards):
                if not isinstance(standard, dict) or "weight" not in standard:
                    raise ValueError(f"checklist {c}, turn {t}, standard {s}: a standard is an object with at least 'weight'.")
    return checklists


# ---------------------------------------------------------------------- transcript segmentation
@dataclass
class Step:
    """One assistant message of a turn and the tool messages that answer it."""

    index: int
    """Position of the assistant message in the conversation."""
    assistant: dict[str, Any]
    tools: list[dict[str, Any]]

    @property
    def tool_failed(self) -> bool:
        """True when a tool result of this step is an ``error_tool_call`` payload."""
        for message in self.tools:
            try:
                value = json.loads(str(message.get("content") or ""))
            except (ValueError, RecursionError):  # not JSON, a number over the digit limit, absurd nesting
                continue
            if isinstance(value, dict) and "error_tool_call" in value:
                return True
        return False


def split_turns(messages: Sequence[dict[str, Any]]) -> list[tuple[int, list[Step]]]:
    """(index of the user message, its assistant steps) per user turn, in order."""
    turns: list[tuple[int, list[Step]]] = []
    for i, message in enumerate(messages):
        role = message.get("role")
        if role == "user":
            turns.append((i, []))
        elif role == "assistant" and turns:
            turns[-1][1].append(Step(i, message, []))
        elif role in ("tool", "observation") and turns and turns[-1][1]:
            turns[-1][1][-1].tools.append(message)
    return turns


def _calls(message: dict[str, Any]) -> list[tuple[str, Any]]:
    calls = []
    for call in message.get("tool_calls") or []:
        fn = call.get("function", call) if isinstance(call, dict) else {}
        arguments = fn.get("arguments")
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except (ValueError, RecursionError):  # not JSON, a number over the digit limit, absurd nesting
                pass
        calls.append((str(fn.get("name")), arguments))
    if not calls and "<tool_call>" in str(message.get("content") or ""):
        calls = [(c.name, c.arguments) for c in parse_tool_calls(str(message.get("content"))).calls]
    return calls


def _result_is_error(content: Any) -> bool:
    try:
        value = json.loads(str(content or ""))
    except (ValueError, RecursionError):  # not JSON, a number over the digit limit, absurd nesting
        return False
    return isinstance(value, dict) and ("error_tool_call" in value or (len(value) == 1 and "error" in value))


def check_step(check: dict[str, Any], step: Step) -> bool:
    """Whether ``step`` meets a machine ``check`` (see the module docstring)."""
    if "reply" in check:
        return not _calls(step.assistant) and bool(str(step.assistant.get("content") or "").strip())
    want = check.get("call")
    if not isinstance(want, dict):
        raise ValueError(f"unknown checklist check {check!r}; use {{'call': {{'name', 'arguments'}}}} or {{'reply': true}}.")
    key = (str(want.get("name")), canonical(want.get("arguments") or {}))
    results = [m.get("content") for m in step.tools]
    for position, (name, arguments) in enumerate(_calls(step.assistant)):
        if (name, canonical(arguments)) == key:
            result = results[position] if position < len(results) else None
            return result is not None and not _result_is_error(result)
    return False


# ---------------------------------------------------------------------- judge (released prompt)
def messages_str(messages: Sequence[dict[str, Any]], step_num: int | None = None) -> str:
    """A transcript in the released judge's layout (``checklist_reward.get_messages_str_v2``)."""
    turn, step, out = -1, 0, []
    for message in messages:
        role, content = message.get("role"), str(message.get("content") or "")
        if role == "system":
            out.append(f"Role: system\ncontent: {content}\n")
            step = 0
        elif role == "user":
            turn += 1
            step = 0
            out.append(f"# Turn: {turn}\nRole: user\ncontent: {content}\n")
        elif role == "assistant":
            found = _THINK.search(content)
            if found:
                thinking = found.group(1)
                visible = content.split(thinking + "</think>", 1)[1].strip() or "None"
            else:
                thinking, visible = content, "None"
            calls = message.get("tool_calls")
            if calls is not None:
                tool_calls = json.dumps(calls)
            elif "<tool_call>" in visible or "</tool_call>" in visible:
                tool_calls = visible.replace("<tool_call>", "<|tool_call_start|>").replace("</tool_call>", "<|tool_call_end|>")
                visible = "None"
            else:
                tool_calls = "None"
            number = step if step_num is None else step_num
            out.append(f"## Step: {number}\nRole: assistant\ncontent.thinking: {thinking}\n"
                       f"content.user_visible_reply: {visible}\ntool_call: {tool_calls}\n")
            step += 1
        elif role in ("tool", "observation"):
            out.append(f"Role: tool\ncontent: {content}\n")
    return "".join(out)


def judge_prompt(before_turn: str, this_turn: str, standard: Standard) -> str:
    """The released checklist judge prompt (``checklist_reward.get_input_prompt_v2``), for one standard."""
    snippets = [e.get("snippet") for e in standard.get("evidence") or [] if isinstance(e, dict)]
    return (
        "# Role\n"
        "You are a precise checklist evaluator. Your sole task is to judge whether the messages between user, assistant and tool satisfie the provided criteria.\n"
        "\n# Objective\nProduce a strict JSON verdict (no extra text) based on the instructions below.\n"
        "\n# Criteria\n"
        f"**Question:** {standard.get('question', '')}\n"
        f"**Focus on:** {standard.get('focus_on', '')}\n"
        f"**Pass condition:** {standard.get('pass_condition', '')}\n"
        f"**Failure examples:** {json.dumps(standard.get('failure_examples') or [], ensure_ascii=True, indent=2)}\n"
        f"**Reference snippet:** {json.dumps(snippets, ensure_ascii=True, indent=2)}\n"
        "\n# Previous Messages\n" + before_turn + "# Current Messages to Evaluate\n" + this_turn + "\n"
        "# Special rule of tool call\n"
        "If there is no tool call in tool_call part but there are some tool calls in content.thinking part, it means these tools' format are not correct and all tool calls are not valid."
        "If there is error in tool response. The previous tool calls in latest assistant (only the latest one) are not valid."
        "# Evaluation Process (Align each step to a JSON output field)\n"
        "1. high_level_understanding_of_the_question:\n"
        "   - Briefly restate what is being evaluated (the intent of the question + what compliance means here).\n"
        "2. analysis_of_if_focus_on:\n   - Check whether Focus on part presents in the Current Messages.\n"
        "3. analysis_of_pass_condition:\n   - Determine if the 'Pass condition' is fully satisfied.\n"
        "4. analysis_of_failure_examples:\n"
        "   - For EACH failure example pattern: state clearly 'triggered' or 'not triggered' with a brief justification.\n"
        "5. answer:\n   - Return true ONLY IF:\n     * Focus on part is present.\n     * The 'Pass condition' is fully met.\n"
        "     * No failure example pattern is triggered.\n   - Otherwise return false.\n"
        "\n# Output Format\nReturn ONLY a single JSON object with exactly these keys:\n"
        "{\n  \"high_level_understanding_of_the_question\": str,\n  \"analysis_of_if_focus_on\": str,\n"
        "  \"analysis_of_pass_condition\": str,\n  \"analysis_of_failure_examples\": str,\n  \"answer\": bool\n}"
    )


VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "high_level_understanding_of_the_question": {"type": "string"},
        "analysis_of_if_focus_on": {"type": "string"},
        "analysis_of_pass_condition": {"type": "string"},
        "analysis_of_failure_examples": {"type": "string"},
        "answer": {"type": "boolean"},
    },
    "required": ["high_level_understanding_of_the_question", "analysis_of_if_focus_on", "analysis_of_pass_condition",
                 "analysis_of_failure_examples", "answer"],
    "additionalProperties": False,
}
"""The verdict's JSON schema, as the released judge requests it (``checklist_reward.eval_one_check``)."""
VERDICT_SCHEMA_NAME = "evaluation_verdict"
JUDGE_TEMPERATURE, JUDGE_TOP_P, JUDGE_MAX_NEW_TOKENS, JUDGE_ATTEMPTS = 0.6, 0.8, 6000, 5
"""The released judge's sampling and retries (``run_checklist_share.sh`` lines 191-196, ``JUDGE_RETRY``)."""


@dataclass(frozen=True)
class Verdict:
    """One reading of a judge reply."""

    answer: bool
    """The standard is met (False whenever the reply is unusable)."""
    problem: str = ""
    """Why the reply is unusable ("" when it is a valid verdict)."""
    retry: bool = False
    """The reply was not JSON at all (or the judge failed): the released judge asks again."""


def read_verdict(text: Any) -> Verdict:
    """Read one judge reply: the whole text must be JSON that satisfies :data:`VERDICT_SCHEMA`.

    Text that is not JSON (fenced JSON and trailing words included) is asked again, as the
    released judge's request loop does; JSON that breaks the schema is not. Either way the
    standard is then not met and the problem is reported (upstream requests the schema from the
    server, so such replies reach it only from a backend without guided decoding).
    """
    if isinstance(text, bool):
        return Verdict(text)
    raw = str(text or "")
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError) as exc:  # not JSON, a number over the digit limit, absurd nesting
        return Verdict(False, f"the judge's reply is not a JSON verdict ({exc}): {raw[:120]!r}", retry=True)
    try:
        jsonschema.validate(value, VERDICT_SCHEMA)
    except jsonschema.ValidationError as exc:
        return Verdict(False, f"the judge's verdict breaks its schema: {exc.message}")
    return Verdict(bool(value["answer"]))


def parse_verdict(text: Any) -> bool:
    """The judge's boolean ``answer``; anything that is not a valid verdict is False (:func:`read_verdict`)."""
    return read_verdict(text).answer


class ChecklistJudge:
    """A fixed judge model for standards without a machine check, sampled as the released judge.

    A backend is asked with temperature 0.6, top-p 0.8 and up to 6000 new tokens, and with the
    verdict's JSON schema (``SamplingParams.json_schema``: OpenAI-compatible servers receive it as
    ``response_format``; backends without guided decoding sample freely and the reply is checked
    against the schema). A reply that is not JSON is asked again, up to ``attempts`` times in all.

    Args:
        judge: a backend spec (loaded on first use), a backend object, or a callable
            ``(prompt) -> verdict text | bool``. It must not be the policy being trained:
            ``"policy"`` is refused.
        temperature, top_p, max_new_tokens: the judge's sampling (the released values by default).
        attempts: requests per standard while the reply is not JSON (the released ``JUDGE_RETRY``).
    """

    def __init__(self, judge: Any, *, temperature: float = JUDGE_TEMPERATURE, top_p: float = JUDGE_TOP_P,
                 max_new_tokens: int = JUDGE_MAX_NEW_TOKENS, attempts: int = JUDGE_ATTEMPTS) -> None:
        if judge is None or (isinstance(judge, str) and judge in ("policy", "real")):
            raise ValueError(
                "the checklist judge must be a fixed model: a backend spec such as 'hf:Qwen/Qwen3-8B' or "
                "'openai:MODEL@URL', a backend object or a callable; never the policy being trained."
            )
        if attempts < 1:
            raise ValueError(f"attempts must be >= 1 (got {attempts}); the released judge tries 5 times.")
        self.spec = judge if isinstance(judge, str) else None
        self._judge: Any = None if isinstance(judge, str) else judge
        self.temperature, self.top_p = float(temperature), float(top_p)
        self.max_new_tokens = int(max_new_tokens)
        self.attempts = int(attempts)
        self.calls = 0
        self.problems: list[str] = []
        """Every unusable verdict so far (the last ``attempts``' problem of each standard)."""

    @property
    def backend(self) -> Any:
        """The judge backend or callable (a spec loads on first access; a backend answers through the
        role client, :func:`~agentgym_suite.llm.role_client.role_backend`, as the ``judge`` role)."""
        if self._judge is None or (getattr(self._judge, "role", None) != "judge" and not callable(self._judge)):
            from agentgym_suite.llm.role_client import role_backend

            self._judge = role_backend("judge", self.spec if self._judge is None else self._judge, shared=False)
        return self._judge

    def sampling(self, seed: int | None = None) -> Any:
        """The judge's ``SamplingParams`` (the verdict schema attached)."""
        from agentgym_suite.llm.base import SamplingParams

        return SamplingParams(temperature=self.temperature, top_p=self.top_p, max_new_tokens=self.max_new_tokens,
                              seed=seed, json_schema=json.dumps(VERDICT_SCHEMA), json_schema_name=VERDICT_SCHEMA_NAME)

    def assess(self, prompt: str, *, seed: int | None = None) -> Verdict:
        """Ask the judge about one standard (asking again while the reply is not JSON); never raises."""
        verdict = Verdict(False, "the judge was not asked", retry=True)
        for attempt in range(self.attempts):
            self.calls += 1
            verdict = self._ask(prompt, None if seed is None else seed + attempt)
            if not verdict.retry:
                break
        if verdict.problem:
            self.problems.append(verdict.problem)
        return verdict

    def verdict(self, prompt: str, *, seed: int | None = None) -> bool:
        """The judge's answer about one standard; an unusable reply is a standard not met."""
        return self.assess(prompt, seed=seed).answer

    def _ask(self, prompt: str, seed: int | None) -> Verdict:
        judge = self.backend
        try:
            if callable(getattr(judge, "generate", None)):
                sample = judge.generate([[{"role": "user", "content": prompt}]], self.sampling(seed))[0][0]
                if getattr(sample, "error", None):
                    return Verdict(False, f"the judge could not generate: {sample.error}", retry=True)
                return read_verdict(sample.text)
            return read_verdict(judge(prompt))
        except Exception as exc:  # a failing judge leaves the standard unmet, as the released reward does
            return Verdict(False, f"the judge failed: {type(exc).__name__}: {exc}", retry=True)


# ---------------------------------------------------------------------- scoring
@dataclass
class TurnScore:
    """The verdicts of one user turn."""

    turn: int
    score: float
    """Sum over checklists of the met standards' weights."""
    met: list[list[bool]]
    """``met[c][s]``: standard ``s`` of checklist ``c`` was met in this turn."""
    required_unmet: bool
    """A ``required_for_next_turn`` standard was left unmet: the episode stops here."""
    judge_problems: list[str] = field(default_factory=list)
    """Unusable judge replies of this turn (not JSON, or outside the verdict schema): the released
    reward ends the episode after such a turn."""


def score_turn(messages: Sequence[dict[str, Any]], checklists: ChecklistList, turn: int,
               judge: ChecklistJudge | None = None, *, seed: int | None = None) -> TurnScore:
    """Score user turn ``turn`` of ``messages`` against every checklist (see the module docstring).

    Standards without a ``check`` need ``judge``; without one they count as not met.
    """
    segments = split_turns(messages)
    if turn >= len(segments):
        return TurnScore(turn, 0.0, [[False] * len(c[turn]) if turn < len(c) else [] for c in checklists], True)
    user_index, steps = segments[turn]
    before_turn = messages_str(list(messages[:user_index])) if judge is not None else ""
    total, met_all, required_unmet = 0.0, [], False
    problems: list[str] = []
    for checklist in checklists:
        standards = checklist[turn] if turn < len(checklist) else []
        met = [False] * len(standards)
        for step in steps:
            for s, standard in enumerate(standards):
                if met[s]:
                    continue
                if standard.get("focus_on") in _TOOL_FOCUS and step.tool_failed:
                    continue
                check = standard.get("check")
                if isinstance(check, dict):
                    met[s] = check_step(check, step)
                elif judge is not None:
                    end = step.index + 1 + len(step.tools)
                    this_turn = messages_str(list(messages[user_index:end]))
                    verdict = judge.assess(judge_prompt(before_turn, this_turn, standard), seed=seed)
                    met[s] = verdict.answer
                    if verdict.problem:
                        problems.append(verdict.problem)
        total += sum(float(st.get("weight", 0.0)) for st, ok in zip(standards, met) if ok)
        required_unmet = required_unmet or any(st.get("required_for_next_turn") and not ok for st, ok in zip(standards, met))
        met_all.append(met)
    return TurnScore(turn, round(total, 8), met_all, required_unmet, problems)


def episode_score(turn_scores: Sequence[TurnScore], checklists: ChecklistList) -> float:
    """Sum of turn scores over ``num_checklists * num_turns`` (the released reward manager's scale)."""
    turns = max(len(c) for c in checklists) or 1
    return sum(t.score for t in turn_scores) / (len(checklists) * turns)


def max_episode_score(checklists: ChecklistList) -> float:
    """The episode score when every standard is met (1.0 when each turn's weights sum to 1)."""
    turns = max(len(c) for c in checklists) or 1
    return sum(float(s.get("weight", 0.0)) for c in checklists for t in c for s in t) / (len(checklists) * turns)
