"""BFCL prompting style: a ``<tool_call>`` reply is no call, as bfcl-eval's prompting decoder reads it.

``bfcl_prompting/tool_call_cases.json`` holds bfcl-eval's own verdicts (``regenerate_tool_call_cases.py``:
its prompting decode, format check and ``ast_checker`` under a prompting model config) on
``<tool_call>`` replies and on the same calls written as call lists: a single-turn entry fails with
``ast_decoder:decoder_failed`` (an irrelevance entry passes, a relevance entry fails), and in
multi-turn the decode fails, so its inference takes the reply as the model's words. The env in
``prompting`` style must reach the same verdicts and, in multi-turn, run nothing and end the turn.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("bfcl_eval")

from agentgym_suite.envs.bfcl import BFCLEnv, data  # noqa: E402
from tests.conformance.bfcl_prompting.backend_state import state_digest  # noqa: E402

RECORD = json.loads((Path(__file__).parent / "bfcl_prompting" / "tool_call_cases.json").read_text(encoding="utf-8"))
OURS = {upstream: ours for ours, upstream in data.UPSTREAM_NAMES.items()}
"""bfcl-eval's category name -> the env's."""


def test_the_record_names_its_upstream_code_and_holds_both_verdicts() -> None:
    assert RECORD["upstream"]["package"] == "bfcl-eval" and "default_decode_ast_prompting" in str(RECORD["upstream"])
    verdicts = {(c["reply"].startswith("<tool_call>"), c["valid"]) for c in RECORD["single_turn"]}
    assert {(True, False), (True, True), (False, True)} <= verdicts  # irrelevance passes on a failed decode
    assert all("decode_error" in c for c in RECORD["multi_turn"])


@pytest.mark.parametrize("case", RECORD["single_turn"], ids=lambda c: f"{c['entry']}:{c['reply'][:12]}")
def test_single_turn_verdicts_are_bfcl_evals(case: dict[str, Any]) -> None:
    env = BFCLEnv(category=OURS[case["category"]], system_prompt="prompting")
    env.reset(options={"task_id": case["entry"]})
    _, reward, terminated, _, info = env.step(case["reply"])
    assert terminated and info["won"] is case["valid"] and reward == float(case["valid"]), info.get("bfcl_check")
    if case["reply"].startswith("<tool_call>"):  # the model's words: no call reached the transcript
        assert not any(m.get("tool_calls") for m in info["messages"])


@pytest.mark.parametrize("case", [c for c in RECORD["single_turn"] if c["reply"].startswith("<tool_call>")
                                  and "relevance" not in c["category"]], ids=lambda c: c["entry"])
def test_the_same_blocks_are_calls_in_the_fc_style(case: dict[str, Any]) -> None:
    """The text ``<tool_call>`` style still reads them (as ``Qwen/Qwen3-8B-FC``, names as they are)."""
    env = BFCLEnv(category=OURS[case["category"]], system_prompt="fc", underscore_to_dot=False)
    env.reset(options={"task_id": case["entry"]})
    _, _, _, _, info = env.step(case["reply"])
    assert info["won"] is ("[" not in case["reply"]), info.get("bfcl_check")


@pytest.mark.parametrize("case", RECORD["multi_turn"], ids=lambda c: c["reply"][:40])
def test_multi_turn_tool_call_replies_are_words(case: dict[str, Any]) -> None:
    env = BFCLEnv(category="base", system_prompt="prompting")
    env.reset(options={"task_id": case["entry"]})
    before = state_digest(env._model.instances)
    _, _, _, _, info = env.step(case["reply"])
    assert env._all_results == [] and state_digest(env._model.instances) == before
    assert info["action_valid"] and env._turn_index == 1  # the turn ended on the model's words
    assert not any(m.get("role") == "tool" for m in info["messages"])
