"""BFCL multi-turn, prompting style: decoded calls run as bfcl-eval's executor runs its execution strings.

``bfcl_prompting/multi_turn_cases.json`` holds what bfcl-eval's ``default_decode_execute_prompting``
and ``execute_multi_turn_func_call`` gave on fixed replies (``regenerate_multi_turn_cases.py``): the
result strings and a digest of the backends' state afterwards, or the decode error that makes
upstream take the reply as the model's words. The env must give the same results (the texts the model
reads) and the same state without ``eval``: tuples kept, nested calls with keyword arguments run first, a dict of dicts
read as a call, keys made strings, method names inside strings rewritten with the instance name,
and a reply upstream cannot convert played as words. A name that is no backend method gets
upstream's NameError text; the cases marked DEPARTURE (a Python builtin, which upstream's eval calls) must
leave the same state and the same number of results, each an execution error, and label their episode
(``info["departure_in_play"]``), as must an episode whose strings got an instance name.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("bfcl_eval")

from agentgym_suite.envs.bfcl import BFCLEnv  # noqa: E402
from agentgym_suite.envs.bfcl.env import INSTANCE_NAME_DEPARTURE, SUITE_REFUSAL_DEPARTURE  # noqa: E402
from tests.conformance.bfcl_prompting.backend_state import state_digest  # noqa: E402

RECORD = json.loads((Path(__file__).parent / "bfcl_prompting" / "multi_turn_cases.json").read_text(encoding="utf-8"))
CASES: list[dict[str, Any]] = RECORD["cases"]


def test_the_record_names_its_upstream_code() -> None:
    assert RECORD["upstream"]["package"] == "bfcl-eval" and RECORD["upstream"]["model_name"] == "agentgym"
    assert any("decode_error" in c for c in CASES) and any(c["what"].startswith("DEPARTURE") for c in CASES)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["what"][:60])
def test_replies_run_as_bfcl_eval_runs_them(case: dict[str, Any]) -> None:
    env = BFCLEnv(category="base", system_prompt="prompting")
    env.reset(options={"task_id": case["entry"]})
    before = state_digest(env._model.instances)
    _, _, _, _, info = env.step(case["reply"])
    results, state = list(env._all_results), state_digest(env._model.instances)
    if "decode_error" in case:  # upstream takes the reply as the model's words: nothing runs, the turn ends
        assert results == [] and state == before and info["action_valid"]
        assert env._turn_index == 1
    elif case["what"].startswith("DEPARTURE"):
        assert state == case["state"] and len(results) == len(case["results"])
        assert all(r.startswith("Error during execution: ") for r in results + case["results"])
        assert SUITE_REFUSAL_DEPARTURE in info["departure_in_play"]  # this episode is labelled, others are not
    else:
        assert results == case["results"] and state == case["state"]
        assert [m["content"] for m in info["messages"] if m.get("role") == "tool"] == case["results"]  # what the model reads
        assert SUITE_REFUSAL_DEPARTURE not in info.get("departure_in_play", "")
        # a method name followed by '(' inside a string gets the instance name, which holds 'agentgym' for the
        # model's name: the cases whose strings hold one (a call written without keywords stays such a string)
        names_in_strings = "rewrit" in case["what"] or "without keywords stays text" in case["what"]
        assert (INSTANCE_NAME_DEPARTURE in info.get("departure_in_play", "")) == names_in_strings, case["what"]


def test_the_refusal_is_labelled_only_in_the_episodes_it_happens() -> None:
    """Not among the settings' departures, in either style: only an episode that met it is labelled."""
    for style in ("fc", "prompting"):
        reasons = BFCLEnv(category="base", system_prompt=style).leaderboard_departures()
        assert SUITE_REFUSAL_DEPARTURE not in reasons and not any("no backend method" in r for r in reasons)
