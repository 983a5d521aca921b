"""BFCL prompting style: a reply the env reads is decoded by bfcl-eval whatever its length.

bfcl-eval hands a prompting model's whole reply to ``default_decode_ast_prompting``; the env reads
replies up to its token budget's worth of characters (``BFCLEnv.max_reply_chars``). A call list the
decoder reads must therefore count here too when it is longer than the suite's own decoder's bound
(a gold call followed by 25,000 spaces was failed as "no function call" before).
"""

from __future__ import annotations

import pytest

pytest.importorskip("bfcl_eval")

from bfcl_eval.constants.enums import ReturnFormat  # noqa: E402
from bfcl_eval.model_handler.utils import default_decode_ast_prompting  # noqa: E402

from agentgym_suite.envs.bfcl import BFCLEnv  # noqa: E402
from agentgym_suite.envs.bfcl.prompting_decoder import MAX_CALL_LIST_CHARS  # noqa: E402
from agentgym_suite.envs.bfcl.upstream_decode import MAX_DECODED_REPLY_CHARS, decode_prompting_reply  # noqa: E402

_FORMATS = {"simple": ReturnFormat.PYTHON, "simple_java": ReturnFormat.JAVA, "simple_javascript": ReturnFormat.JAVASCRIPT}


def _env(category: str) -> BFCLEnv:
    try:
        return BFCLEnv(category=category, system_prompt="prompting")
    except Exception as exc:  # noqa: BLE001 - the benchmark's data is not on this machine
        pytest.skip(f"BFCL {category} data not available: {exc}")


def test_the_decoder_bound_never_bites_before_the_reply_limit() -> None:
    env = _env("simple")
    assert MAX_DECODED_REPLY_CHARS >= env.max_reply_chars > MAX_CALL_LIST_CHARS


@pytest.mark.parametrize("category", list(_FORMATS))
def test_a_long_call_list_counts_as_bfcl_eval_decodes_it(category: str) -> None:
    env = _env(category)
    task_id = env.task_ids()[0]
    env.reset(options={"task_id": task_id})
    gold = env.oracle()[0]
    reply = gold + " " * (MAX_CALL_LIST_CHARS + 5_000)
    assert len(reply) < env.max_reply_chars
    # the premise: bfcl-eval's decoder reads the padded reply as it reads the gold one
    assert default_decode_ast_prompting(reply, _FORMATS[category]) == default_decode_ast_prompting(gold, _FORMATS[category])
    _, reward, terminated, _, info = env.step(reply)
    assert terminated and info["action_valid"] and reward == 1.0, info.get("bfcl_check")


def test_a_long_reply_that_is_no_call_list_stays_words() -> None:
    """The other direction: length alone does not make a reply decode (bfcl-eval fails this one too)."""
    reply = "[f(a=1)]\n" + "I hope this helps. " * 1_500
    with pytest.raises(Exception):  # noqa: B017, PT011 - any decoder failure is bfcl-eval's decoder_failed
        default_decode_ast_prompting(reply, ReturnFormat.PYTHON)
    assert decode_prompting_reply(reply, "python") is None
