"""Multi-turn rollouts through TRL's own vLLM generator (``VLLMGeneration``, run unchanged over
the stand-in engine of ``vllm_standin``): colocate with sleep mode and server mode train, the
sampling log-probs are kept per token, TRL's importance-sampling correction is applied, and the
engine wakes once per rollout."""

from __future__ import annotations

import math

import pytest
import torch

from agentgym_suite.trainers import AgentGRPOTrainer
from agentgym_suite.trainers.vllm_rollout import IS_MODES, combine_sampling_stats, importance_sampling
from trainers import vllm_standin
from trainers.fake_env import make_letter_env


@pytest.fixture
def standin(monkeypatch):
    vllm_standin.install(monkeypatch)
    return vllm_standin


def _train_capturing(args, horizon: int = 3):
    trainer = AgentGRPOTrainer(args=args, env_factory=lambda: make_letter_env(horizon=horizon))
    outputs: list[dict] = []
    score = trainer._generate_and_score_completions
    trainer._generate_and_score_completions = lambda inputs: outputs.append(score(inputs)) or outputs[-1]
    trainer.train()
    return trainer, outputs


def test_colocate_sleep_mode_pushes_weights_and_wakes_once_per_rollout(make_config, standin, monkeypatch):
    syncs: list[int] = []
    sync = standin.StandInVLLMGeneration.sync_weights
    monkeypatch.setattr(standin.StandInVLLMGeneration, "sync_weights", lambda self: (syncs.append(1), sync(self))[1])
    args = make_config(use_vllm=True, vllm_mode="colocate", vllm_enable_sleep_mode=True, max_turns=3, credit="sdar")
    trainer, outputs = _train_capturing(args)
    assert trainer.state.global_step == 2 and len(outputs) == 2
    events = standin.EVENTS
    # two rollouts of several turns: one weight push, one wake-up of the cache and one sleep per rollout (TRL's
    # generate() alone would push the weights before every turn), several generate calls in between
    assert len(syncs) == 2
    assert events.count("wake_up:kv_cache") == 2 and events.count("wake_up:weights") == 2
    assert events.count("sleep") == 1 + 2  # asleep after start-up, and after each rollout
    assert events.count("generate") > 2
    for rollout in "".join("g" if e == "generate" else "." if e == "sleep" else "w" if e.startswith("wake") else "l"
                           for e in events).split("."):
        assert "gl" not in rollout and "gw" not in rollout, "weights pushed or engine woken between turns"
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    assert losses and all(math.isfinite(x) for x in losses)


def test_sampling_logprobs_are_kept_per_token_and_correct_the_loss(make_config, standin):
    args = make_config(use_vllm=True, vllm_mode="colocate", max_turns=3, vllm_importance_sampling_mode="token_truncate")
    trainer, outputs = _train_capturing(args)
    for out in outputs:
        mask = (out["completion_mask"] * out.get("tool_mask", 1)).bool()
        sampling, old = out["sampling_per_token_logps"], out["old_per_token_logps"]
        assert mask.any()
        # the stand-in samples with the weights TRL pushed: per token, its log-probs are the trainer's own
        torch.testing.assert_close(sampling[mask], old[mask], atol=1e-4, rtol=0)
        assert (sampling[mask] < 0).all()
        assert out["importance_sampling_ratio"].shape == mask.shape
    logged = set().union(*(h.keys() for h in trainer.state.log_history))
    assert {"sampling/importance_sampling_ratio/mean", "sampling/sampling_logp_difference/max"} <= logged


def test_server_mode_trains(make_config, standin):
    args = make_config(use_vllm=True, vllm_mode="server", max_turns=2, credit="gigpo")
    trainer, outputs = _train_capturing(args, horizon=2)
    assert trainer.state.global_step == 2
    assert all("importance_sampling_ratio" in out for out in outputs)
    errors = [h["episodes/error_rate"] for h in trainer.state.log_history if "episodes/error_rate" in h]
    assert errors and set(errors) == {0.0}


def test_server_mode_without_cuda_is_refused_before_any_server_is_reached(make_config, monkeypatch):
    # TRL 1.16 pushes weights to the server only over NCCL; on CPU it would fail after waiting for the server
    # (or the server would sample from stale weights), so the trainer refuses first and says what to use instead
    from agentgym_suite.trainers import vllm_rollout

    contacted: list[str] = []
    monkeypatch.setattr("trl.generation.vllm_client.VLLMClient.__init__",
                        lambda self, *a, **k: contacted.append("client"), raising=False)
    with pytest.raises(ValueError, match="NCCL") as refused:
        AgentGRPOTrainer(args=make_config(use_vllm=True, vllm_mode="server"),
                         env_factory=lambda: make_letter_env(horizon=2))
    assert "vllm_mode: colocate" in str(refused.value) and not contacted
    # colocate mode and the transformers path pass; server mode passes where a CUDA device is used
    vllm_rollout.check_server_mode_device(make_config(use_vllm=True, vllm_mode="colocate"))
    vllm_rollout.check_server_mode_device(make_config(vllm_mode="server"))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    server = make_config(use_vllm=True, vllm_mode="server")
    with pytest.raises(ValueError, match="CUDA"):
        vllm_rollout.check_server_mode_device(server)  # use_cpu: true keeps the trainer off the GPU
    server.use_cpu = False
    vllm_rollout.check_server_mode_device(server)


def _trl_ratio(old, sampling, mask, mode, lo, hi):
    """TRL 1.16's formula, written out (GRPOTrainer._generate_and_score_completions)."""
    diff = torch.nan_to_num((old - sampling) * mask, nan=0.0)
    diff = diff.sum(-1, keepdim=True) if mode.startswith("sequence") else diff
    ratio = torch.exp(diff)
    if mode.endswith("truncate"):
        return torch.clamp(ratio, min=lo, max=hi)
    lo = -math.inf if lo is None else lo
    hi = math.inf if hi is None else hi
    return ratio.masked_fill((ratio < lo) | (ratio > hi), 0.0)


@pytest.mark.parametrize("mode", IS_MODES)
@pytest.mark.parametrize("clip", [(None, 3.0), (0.5, 1.5)])
def test_importance_sampling_ratio_is_trls(mode, clip):
    gen = torch.Generator().manual_seed(0)
    old = -torch.rand(5, 7, generator=gen) * 2
    sampling = old + torch.randn(5, 7, generator=gen) * 0.4
    sampling[1, 2] = float("nan")  # a token vLLM could not score: ratio 1 there
    mask = (torch.rand(5, 7, generator=gen) > 0.3).float()
    ratio, stats = importance_sampling(old, sampling, mask, mode=mode, clip_min=clip[0], clip_max=clip[1])
    torch.testing.assert_close(ratio, _trl_ratio(old, sampling, mask, mode, *clip))
    assert ratio.shape == ((5, 1) if mode.startswith("sequence") else (5, 7))
    assert all(torch.isfinite(v) for v in stats.values())
    if mode == "token_truncate":
        assert ratio[1, 2] == pytest.approx(1.0) or not mask[1, 2]


def test_importance_sampling_rejects_unknown_mode():
    with pytest.raises(ValueError, match="token_truncate"):
        importance_sampling(torch.zeros(1, 1), torch.zeros(1, 1), torch.ones(1, 1), mode="tokens", clip_min=None,
                            clip_max=None)


def test_sampling_stats_reduce_as_trl():
    parts = [{"a/min": 0.5, "a/max": 2.0, "a/mean": 1.0}, {"a/min": 0.2, "a/max": 1.5, "a/mean": 3.0}]
    assert combine_sampling_stats(parts) == {"a/min": 0.2, "a/max": 2.0, "a/mean": 2.0}


def test_held_out_evaluation_samples_at_the_eval_temperature(make_config, standin):
    args = make_config(use_vllm=True, vllm_mode="colocate", max_turns=2, max_steps=1, eval_strategy="steps",
                       eval_steps=1, eval_task_ids=["t5", "t6"], eval_temperature=0.4)
    trainer, _ = _train_capturing(args, horizon=2)
    assert any("eval_success_rate" in h for h in trainer.state.log_history)
    assert set(standin.TEMPERATURES) == {1.0, 0.4}  # training at TRL's temperature, held-out tasks at 0.4
    assert trainer.vllm_generation.temperature == 1.0
