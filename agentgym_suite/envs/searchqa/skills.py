"""Which released skill text a Search teacher reads: the authors' rule by data source.

The released ``SkillProvider.get_privileged_info_from_data_source`` (ZJU-REAL/SDAR,
``verl/trainer/ppo/rlsd_utils.py``) picks one task type per question from its dataset (verl's
``data_source``): PopQA -> entity-attribute lookup; NQ, TriviaQA -> direct retrieval; HotpotQA
-> multi-hop reasoning; for the other sets, a prompt that passes the comparison test
(:func:`~agentgym_suite.core.skills.asks_to_compare`) -> compare, else 2WikiMultiHopQA,
MuSiQue, Bamboogle -> multi-hop reasoning; anything else gets the general text only.
"""

from __future__ import annotations

import re

from agentgym_suite.core.skills import asks_to_compare

BY_SOURCE = {"popqa": "entity_attribute_lookup", "nq": "direct_retrieval", "triviaqa": "direct_retrieval",
             "hotpotqa": "multi_hop_reasoning"}
"""Data sources whose task type the rule fixes before looking at the prompt."""
MULTI_HOP_SOURCES = ("2wikimultihopqa", "musique", "bamboogle")
"""Data sources that are multi-hop unless the prompt asks to compare."""
_MUSIQUE_ID = re.compile(r"\d+hop\d*__")


def data_source_of(task_id: str) -> str:
    """verl's ``data_source`` of a task: the ``<dataset>/`` prefix of SearchR1 ids, else (SearchQA-v0's
    HippoRAG samples) ``musique`` for MuSiQue's ``<n>hop…__`` ids and ``hotpotqa`` for the others."""
    if "/" in task_id:
        return task_id.split("/", 1)[0].lower()
    return "musique" if _MUSIQUE_ID.match(task_id) else "hotpotqa"


def search_task_type(data_source: str, prompt_text: str) -> str | None:
    """The released rule's task type for a question of ``data_source`` asked in ``prompt_text``."""
    if data_source in BY_SOURCE:
        return BY_SOURCE[data_source]
    if asks_to_compare(prompt_text):
        return "compare"
    return "multi_hop_reasoning" if data_source in MULTI_HOP_SOURCES else None
