"""BFCL web search and memory, prompting style: decoded calls run as bfcl-eval's executor runs them.

bfcl-eval plays its agentic categories with its multi-turn inference, so a prompting reply there is
decoded by ``default_decode_execute_prompting`` into execution strings and ``eval``ed by
``execute_multi_turn_func_call`` on the conversation's backend. ``bfcl_prompting/agentic_cases.json``
holds what that gave on fixed replies (``regenerate_agentic_cases.py``): the result strings and the
backend's public state afterwards, or the decode error that makes upstream take the reply as the
model's words. The env must give the same without ``eval``: every call straight to the backend
method whatever its arguments (no schema check), tuples kept, positional arguments dropped as the
decoder drops them, nested calls with keyword arguments run first, dicts of dicts read as calls,
method names inside strings rewritten with the instance name of the conversation, and bfcl-eval's
result texts. A few function-calling replies (``style: fc``, ``<tool_call>`` blocks) are recorded the way
bfcl-eval's FC handlers hand them to the same executor (``convert_to_function_call``): there too the
method names inside strings are rewritten.

Memory runs on bfcl-eval's own backends in both runs. Web search cannot run upstream offline (SerpAPI,
live pages): both runs use ``web_search_stand_in.py`` in place of its backend, so only the decoding and
execution-string part is compared there; with its default local corpus the env labels web search as
a departure. A name that is no backend method gets upstream's NameError text; the cases marked
DEPARTURE (a Python builtin, which upstream's eval calls) must leave the same state and the same
number of results, each an execution error.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("bfcl_eval")

from agentgym_suite.envs.bfcl import BFCLEnv  # noqa: E402
from agentgym_suite.envs.bfcl.env import SUITE_REFUSAL_DEPARTURE  # noqa: E402
from agentgym_suite.envs.bfcl.memory import memory_available  # noqa: E402
from tests.conformance.bfcl_prompting.backend_state import agentic_state  # noqa: E402

RECORD = json.loads((Path(__file__).parent / "bfcl_prompting" / "agentic_cases.json").read_text(encoding="utf-8"))
CASES: list[dict[str, Any]] = RECORD["cases"]
STAND_IN = "tests.conformance.bfcl_prompting.web_search_stand_in:WebSearchAPI"


def _param(case: dict[str, Any]) -> Any:
    marks = []
    if case["category"].startswith("memory_"):
        marks.append(pytest.mark.skipif(not memory_available(case["category"]),
                                        reason=f"{case['category']}'s backend dependencies are not installed"))
    if case["category"] == "memory_vector":
        marks.append(pytest.mark.slow)  # loads the sentence encoder
    return pytest.param(case, id=f"{case['category']} {case.get('style', 'prompting')}: {case['what'][:60]}", marks=marks)


def _env(case: dict[str, Any], tmp_path: Path) -> BFCLEnv:
    style = case.get("style", "prompting")
    if case["category"].startswith("web_search"):
        return BFCLEnv(category=case["category"], system_prompt=style, web_search_backend=STAND_IN)
    return BFCLEnv(category=case["category"], system_prompt=style, memory_dir=tmp_path)


def test_the_record_names_its_upstream_code_and_stand_in() -> None:
    upstream = RECORD["upstream"]
    assert upstream["package"] == "bfcl-eval" and upstream["model_name"] == "agentgym"
    assert "web_search_stand_in.py" in upstream["web_search_backend"]
    assert {c["category"] for c in CASES} == {"web_search_base", "web_search_no_snippet", "memory_kv",
                                              "memory_rec_sum", "memory_vector"}
    assert any("decode_error" in c for c in CASES) and any(c["what"].startswith("DEPARTURE") for c in CASES)


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_replies_run_as_bfcl_eval_runs_them(case: dict[str, Any], tmp_path: Path) -> None:
    env = _env(case, tmp_path)
    env.reset(options={"task_id": case["entry"]})
    task = env._agentic
    assert task is not None and task.current is not None and task.current.test_id == case["conversation"]
    backend = task.backend
    before = agentic_state(backend)
    _, _, terminated, _, info = env.step(case["reply"])
    results, state = list(env._all_results), agentic_state(backend)
    if "decode_error" in case or "empty" in case:  # upstream takes the reply as the model's words
        assert results == [] and state == before and info["action_valid"]
        assert not any(m.get("role") == "tool" for m in info["messages"])
        assert terminated == (case["entry"] == case["conversation"])  # a question's words are its answer
    elif case["what"].startswith("DEPARTURE"):
        assert state == case["state"] and len(results) == len(case["results"])
        assert all(r.startswith("Error during execution: ") for r in results + case["results"])
        assert SUITE_REFUSAL_DEPARTURE in info["departure_in_play"]
    else:
        assert results == case["results"] and state == case["state"]
        assert [m["content"] for m in info["messages"] if m.get("role") == "tool"] == case["results"]
        assert SUITE_REFUSAL_DEPARTURE not in info.get("departure_in_play", "")
    env.close()


def test_agentic_departures_are_labelled() -> None:
    local = BFCLEnv(category="web_search_base", system_prompt="prompting")
    reasons = local.leaderboard_departures()
    assert any("local corpus" in r for r in reasons) and SUITE_REFUSAL_DEPARTURE not in reasons  # in play only
    stand_in = BFCLEnv(category="web_search_base", system_prompt="prompting", web_search_backend=STAND_IN)
    assert any("web_search_stand_in" in r for r in stand_in.leaderboard_departures())
    assert SUITE_REFUSAL_DEPARTURE not in BFCLEnv(category="memory_rec_sum", system_prompt="prompting").leaderboard_departures()


def _argument_errors() -> list[dict[str, Any]]:
    """Web cases whose every result is an error raised on the arguments before any page is read (not
    naming the backend class, whose name differs): these hold for the offline backend too."""
    return [c for c in CASES if c["category"].startswith("web_search") and c.get("results") and "style" not in c
            and not c["what"].startswith("DEPARTURE") and "WebSearchAPI." not in "".join(c["results"])
            and all(r.startswith("Error during execution: ") for r in c["results"])]


@pytest.mark.parametrize("case", _argument_errors(), ids=lambda c: c["what"][:60])
def test_the_offline_web_search_handles_arguments_as_upstream(case: dict[str, Any]) -> None:
    """The default local corpus answers other pages than the live web (a labelled departure), but it
    reads its arguments as bfcl-eval's backend does: results cut with ``[:max_results]``, the URL
    checked with ``str.startswith``."""
    env = BFCLEnv(category=case["category"], system_prompt="prompting")
    env.reset(options={"task_id": case["entry"]})
    env.step(case["reply"])
    assert env._all_results == case["results"]


def test_some_argument_errors_are_checked_offline() -> None:
    texts = " ".join(r for c in _argument_errors() for r in c["results"])
    assert "slice indices" in texts and "has no attribute 'startswith'" in texts and "Invalid URL" in texts
