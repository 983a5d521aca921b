"""Search-R1's protocol, as its code runs it (``PeterGriffinJin/Search-R1``, ``search_r1/llm_agent/
generation.py``, ``scripts/data_process/qa_search_test_merge.py``, ``verl/utils/reward_score/qa_em.py``):

* the prompt: one user message with Search-R1's instruction and the question (stripped, ``?``
  appended when missing);
* each response is cut after its first ``</search>`` (else after its first ``</answer>``), and its
  first ``<search>…</search>`` or ``<answer>…</answer>`` (whichever comes first) is the action, its
  content stripped;
* a search returns ``\\n\\n<information>Doc 1(Title: <first line>) <rest>\\nDoc 2…</information>\\n\\n``
  (the block stripped inside the tags); anything else gets Search-R1's "My previous action is
  invalid" turn;
* ``max_turns`` (4 in Search-R1's evaluation) search turns, then one last turn in which only an
  answer counts;
* the score is Search-R1's reward (``compute_score_em``) over the solution string its rollout
  builds (the prompt, each cut response and each observation, retrieved passages included): the
  last ``<answer>…</answer>`` in that string, counted only when the string holds at least two
  (the prompt's own example ``<answer> Beijing </answer>`` is one), scored by exact match after
  SQuAD normalisation against any gold answer. So, as upstream, several answers in one response
  score the last, an answer tag inside a search query or a retrieved passage counts, and an
  episode that never answers can still score from one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

from agentgym_suite.core.actions import ParsedAction, unusable_action
from agentgym_suite.envs.searchqa.retrievers import Passage

PROMPT_TEMPLATE = (
    "Answer the given question. "
    "You must conduct reasoning inside <think> and </think> first every time you get new information. "
    "After reasoning, if you find you lack some knowledge, you can call a search engine by <search> query </search> "
    "and it will return the top searched results between <information> and </information>. "
    "You can search as many times as your want. "
    "If you find no further external knowledge needed, you can directly provide the answer inside <answer> and "
    "</answer>, without detailed illustrations. For example, <answer> Beijing </answer>. Question: {question}\n"
)
"""Search-R1's ``make_prefix`` (template ``base``); the typo "as your want" is upstream's."""

INVALID_ACTION = (
    "\nMy previous action is invalid. If I want to search, I should put the query between <search> and </search>. "
    "If I want to give the final answer, I should put the answer between <answer> and </answer>. Let me try again.\n"
)
"""The turn Search-R1 appends after a response with neither action."""

_ACTION = re.compile(r"<(search|answer)>(.*?)</\1>", re.DOTALL)
_ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)


def question_text(question: str) -> str:
    """The question as Search-R1's data scripts write it: stripped, ending with ``?``."""
    question = question.strip()
    return question if question.endswith("?") else question + "?"


def prompt(question: str) -> str:
    """Search-R1's prompt for ``question``."""
    return PROMPT_TEMPLATE.format(question=question_text(question))


def cut_response(response: str) -> str:
    """The part of a response Search-R1 keeps: up to its first ``</search>``, else its first ``</answer>``."""
    for closing in ("</search>", "</answer>"):
        if closing in response:
            return response.split(closing, 1)[0] + closing
    return response


def parse_response(response: str) -> tuple[str | None, str]:
    """``(kind, content)`` of a response's action: kind ``search``/``answer`` or None (invalid)."""
    match = _ACTION.search(cut_response(response))
    if match is None:
        return None, ""
    return match.group(1), match.group(2).strip()


def scored_answer(solution: str) -> str | None:
    """The answer Search-R1's reward reads from a solution string (``extract_solution``): the last
    ``<answer>…</answer>`` content, stripped, when the string holds two or more; else None."""
    matches = _ANSWER_TAG.findall(solution)
    return matches[-1].strip() if len(matches) >= 2 else None


def format_passages(passages: Sequence[Passage]) -> str:
    """Search-R1's ``_passages2string`` over passages in its corpus form (``"Title"\\ntext``)."""
    text = ""
    for number, passage in enumerate(passages, start=1):
        first, _, rest = passage.contents.partition("\n")
        text += f"Doc {number}(Title: {first}) {rest}\n"
    return text


def information(passages: Sequence[Passage]) -> str:
    """The observation of a search: the passages inside ``<information>`` tags, as Search-R1 appends it."""
    return f"\n\n<information>{format_passages(passages).strip()}</information>\n\n"


MAX_OBS_LENGTH = 500
"""Search-R1's ``max_obs_length``: tokens of the policy's tokenizer an observation keeps (its scripts: 500)."""


def cut_observation(observation: str, tokenizer: Any, max_tokens: int = MAX_OBS_LENGTH) -> str:
    """``observation`` as the policy reads it after Search-R1's ``_process_next_obs``: tokenized without
    special tokens and cut to its first ``max_tokens`` tokens, decoded back to text (unchanged when it
    fits). Upstream pads a batch of observations to the longest and cuts every row at ``max_tokens``;
    with the right padding of the paper's tokenizers (Qwen2.5, Llama 3.2) that keeps each
    observation's first ``max_tokens`` tokens, whatever else is in the batch."""
    ids = tokenizer(observation, add_special_tokens=False)["input_ids"]
    if len(ids) <= max_tokens:
        return observation
    return str(tokenizer.decode(ids[:max_tokens]))


@dataclass(frozen=True)
class SearchR1Format:
    """Search-R1's action parsing (see the module docstring). A response without an action is invalid
    but still reaches the env (command ``""``, kind ``invalid``): in Search-R1 it uses up a turn."""

    name: str = "search_r1"
    instructions: str = ("Reason inside <think> </think>; search with <search> query </search>; answer with "
                         "<answer> answer </answer>.")

    def parse(self, raw: str) -> ParsedAction:
        unusable = unusable_action(raw, "search")
        if unusable:
            return ParsedAction("", False, unusable.reason, kind="invalid", raw=unusable.raw)
        kind, content = parse_response(raw)
        if kind is None:
            return ParsedAction("", False, "no <search>…</search> or <answer>…</answer>", kind="invalid", raw=raw)
        return ParsedAction(content, True, kind=kind, raw=raw)
