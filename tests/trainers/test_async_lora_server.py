"""Asynchronous rollouts on an OpenAI-compatible server through LoRA adapter versions loaded by name
(``async_lora_server``), against a stand-in for ``vllm serve --enable-lora`` (``lora_server_stub``):
every version is loaded before a request names it, the versions advance with the trainer's
steps, at most ``max_staleness + 1`` stay live and their folders go, every turn records the adapter
that produced it and a group plays under one version, stale groups are dropped, and servers or
policies that cannot do it are refused with what to change."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from agentgym_suite.trainers import AgentGRPOTrainer
from agentgym_suite.trainers.async_rollouts.controller import AsyncRollouts
from agentgym_suite.trainers.async_rollouts.lora_server import ADAPTER_DIR, LoRAServerWeights, adapter_name
from trainers.fake_env import make_letter_env
from trainers.lora_server_stub import lora_stub_server


@pytest.fixture(scope="module")
def tiny_tokenizer():
    from transformers import AutoTokenizer

    from agentgym_suite.llm.tiny import tiny_model_dir

    return AutoTokenizer.from_pretrained(tiny_model_dir())


def _stub(tokenizer, **settings):
    ids = sorted(set(tokenizer.encode("say a say e say i say o done look take the key", add_special_tokens=False)))
    return lora_stub_server(token_ids=ids, eos_id=tokenizer.eos_token_id, **settings)


def _config(make_config, url, **overrides):
    values = dict(async_rollouts=True, async_lora_server=url, lora_r=8, max_staleness=1, print_step_times=False,
                  vllm_server_timeout=10.0)
    values.update(overrides)
    return make_config(**values)


def _logged(trainer, key):
    return [h[key] for h in trainer.state.log_history if key in h]


def _record_trained(trainer):
    """The episodes each step trained on (what the trainer's rollout phase took from the queue)."""
    trained = []
    take = trainer._async.rollout_phase

    def recording(*args, **kwargs):
        episodes, taken = take(*args, **kwargs)
        trained.append(list(episodes))
        return episodes, taken

    trainer._async.rollout_phase = recording
    return trained


def test_versions_are_served_as_adapters_with_the_staleness_window_kept(make_config, tmp_path, tiny_tokenizer):
    with _stub(tiny_tokenizer) as (url, server):
        trainer = AgentGRPOTrainer(args=_config(make_config, url, max_steps=3), env_factory=make_letter_env)
        trained = _record_trained(trainer)
        trainer.train()
    window = 2  # max_staleness + 1
    assert server.loads() == [adapter_name(v) for v in range(4)]  # the start version, then one per trainer step
    assert server.unloads() == [adapter_name(v) for v in range(4)]  # v0, v1 as they leave the window; v2, v3 at the end
    for k, event in enumerate(server.events):
        if event.op == "load" and event.name in (adapter_name(2), adapter_name(3)):
            assert server.events[k + 1].op == "unload"  # the version that fell out goes right after the new one loads
            assert len(event.live) == window + 1 and len(server.events[k + 1].live) == window
            assert len(event.folders) <= window + 1  # a folder outlives its unload by one sync, no longer
        assert len(event.live) <= window + 1
    training_unloads = [e for e in server.events if e.op == "unload"][:2]
    assert all(len(e.live) == window for e in training_unloads)
    # every request named an adapter the server held: no request ever raced ahead of a load
    assert server.completions and all(c.status == 200 and c.model in c.live for c in server.completions)
    assert {c.model for c in server.completions} <= {adapter_name(v) for v in range(4)}
    assert _logged(trainer, "async/policy_version") == [0.0, 1.0, 2.0]
    assert max(_logged(trainer, "async/staleness_max")) <= 1
    assert max(_logged(trainer, "async/server_adapters_live")) == window
    assert not (tmp_path / "run" / ADAPTER_DIR).exists()  # unloaded and deleted at the end
    groups: dict[str, set[int]] = {}
    assert len(trained) == 3
    for step, episodes in enumerate(trained):
        for episode in episodes:
            for turn in episode.turns:
                assert turn.request["model"] == adapter_name(turn.policy_version)  # the version is the adapter used
                assert turn.request["logprobs"] == 0 and turn.request["return_token_ids"] is True
                assert turn.logprobs == [-1.5] * len(turn.completion_ids)  # the server's sampling log-probs
                assert 0 <= step - turn.policy_version <= 1
                groups.setdefault(episode.group_id, set()).add(turn.policy_version)
    assert groups and all(len(versions) == 1 for versions in groups.values())  # a group plays under one version


@pytest.mark.parametrize("admission", [True, False])
def test_groups_older_than_max_staleness_are_dropped(make_config, tmp_path, tiny_tokenizer, monkeypatch, admission):
    """Two rollout threads, max_staleness 0. With the staleness admission the second thread waits for
    version 1 and nothing is dropped. With the admission switched off (only the queue's room bounds
    the threads, as before it existed) both start under version 0, and the run the learner reaches
    after its first step is one version old: the safety net drops it, never trains it."""
    if not admission:
        monkeypatch.setattr(AsyncRollouts, "_admits",
                            lambda self: len(self.queue) + len(self.in_flight) + self.groups_per_run <= self.capacity)
    with _stub(tiny_tokenizer) as (url, server):
        trainer = AgentGRPOTrainer(args=_config(make_config, url, max_steps=2, max_staleness=0,
                                                async_rollout_threads=2), env_factory=make_letter_env)
        trainer.train()
    dropped = sum(_logged(trainer, "async/dropped_groups"))
    assert dropped == 0 if admission else dropped >= 2
    assert max(_logged(trainer, "async/staleness_max")) == 0
    assert all(len(e.live) <= 1 for e in server.events if e.op == "unload")  # a window of one version
    for step, path in enumerate(sorted((tmp_path / "run" / "trajectories").glob("step_*.jsonl"))):
        for line in map(json.loads, path.read_text().splitlines()):
            assert {t["policy_version"] for t in line["turns"]} == {step}  # only the learner's own version trained


# ------------------------------------------------------------------ refusals
def _peft_policy(lora: bool = True):
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    from agentgym_suite.llm.tiny import tiny_model_dir

    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir())
    if not lora:
        return model
    return get_peft_model(model, LoraConfig(r=8, lora_alpha=16, target_modules="all-linear", task_type="CAUSAL_LM"))


def _weights(url, tmp_path, max_staleness=1, temperature=1.0):
    from accelerate import PartialState

    PartialState()  # TRL's client logs through accelerate, set up by the trainer in a run; here run alone too
    args = SimpleNamespace(async_lora_server=url, max_staleness=max_staleness, output_dir=str(tmp_path),
                           vllm_server_timeout=5.0, lora_r=8, temperature=temperature)
    return LoRAServerWeights(args)


@pytest.mark.parametrize("mode, reported, temperature, decided", [
    ("processed_logprobs", True, 0.7, "reported"),
    ("processed_logprobs", False, 0.7, "probed"),
    ("raw_logprobs", True, 1.0, "not needed"),  # at temperature 1 raw log-probs are the sampled distribution's
])
def test_a_server_with_log_probs_at_the_sampling_temperature_is_accepted(tmp_path, tiny_tokenizer, mode, reported,
                                                                         temperature, decided):
    with _stub(tiny_tokenizer, logprobs_mode=mode, report_logprobs_mode=reported) as (url, server):
        weights = _weights(url, tmp_path, temperature=temperature)
        weights.start(_peft_policy(), 0, threads=1)
        assert weights.logprobs_check == decided
        probes = [c for c in server.completions]
        assert len(probes) == (2 if decided == "probed" else 0)  # two one-token completions, only when needed
        weights.close()


@pytest.mark.parametrize("mode, reported, message", [
    ("raw_logprobs", True, "reports --logprobs-mode raw_logprobs"),
    ("raw_logprobs", False, "same log-probs at temperature 0.7 as at 1"),
    ("processed_logits", True, "reports --logprobs-mode processed_logits"),
    ("processed_logits", False, "returns logits, not log-probs"),  # they change with temperature as log-probs do
    ("raw_logits", False, "returns logits, not log-probs"),
])
def test_a_server_with_raw_log_probs_is_refused_when_the_run_samples_at_another_temperature(
        tmp_path, tiny_tokenizer, mode, reported, message):
    """vLLM's default log-probs are the raw logits': at temperature 0.7 every importance ratio would be
    off 1 even for the current version; logits are no log-probs at all. Refused with how to restart
    the server, and nothing of the run is left loaded on it."""
    with _stub(tiny_tokenizer, logprobs_mode=mode, report_logprobs_mode=reported) as (url, server):
        weights = _weights(url, tmp_path, temperature=0.7)
        with pytest.raises(RuntimeError, match=message) as error:
            weights.start(_peft_policy(), 0, threads=1)
        assert "--logprobs-mode processed_logprobs" in str(error.value)
        assert server.loaded == {}


@pytest.mark.parametrize("settings, error, message", [
    ({"runtime_lora": False, "dev_mode": False}, RuntimeError, "VLLM_ALLOW_RUNTIME_LORA_UPDATING"),
    ({"enable_lora": False, "dev_mode": False}, RuntimeError, "--enable-lora"),
    ({"enable_lora": False}, RuntimeError, "--enable-lora"),
    ({"max_loras": 2}, ValueError, "--max-loras 3"),
    ({"max_lora_rank": 1}, ValueError, "--max-lora-rank 8"),
])
def test_a_server_that_cannot_load_adapters_is_refused_with_how_to_start_it(tmp_path, tiny_tokenizer, settings,
                                                                             error, message):
    with _stub(tiny_tokenizer, **settings) as (url, server):
        weights = _weights(url, tmp_path)
        with pytest.raises(error, match=message):
            weights.start(_peft_policy(), 0, threads=1)
    assert server.loads() == []


def test_a_policy_that_is_not_lora_is_refused(make_config, tmp_path, tiny_tokenizer):
    with pytest.raises(ValueError, match="lora_r"):
        _config(make_config, "http://127.0.0.1:1", lora_r=0)
    with pytest.raises(ValueError, match="async_rollouts: true"):
        make_config(async_lora_server="http://127.0.0.1:1", lora_r=8)
    with pytest.raises(ValueError, match="base URL"):
        _config(make_config, "127.0.0.1:8000")
    with _stub(tiny_tokenizer) as (url, _server):
        with pytest.raises(ValueError, match="not a PEFT LoRA model"):
            _weights(url, tmp_path).start(_peft_policy(lora=False), 0, threads=1)


def test_adapters_a_killed_run_left_on_the_server_are_unloaded_first(tmp_path, tiny_tokenizer):
    with _stub(tiny_tokenizer) as (url, server):
        first = _weights(url, tmp_path / "a")
        policy = _peft_policy()
        first.start(policy, 3, threads=1)  # then "killed": never closed
        second = _weights(url, tmp_path / "b")
        adapters = second.start(policy, 3, threads=1)  # a resumed run publishes the same version name again
        assert server.unloads() == [adapter_name(3)] and server.loads() == [adapter_name(3)] * 2
        assert adapters[0].name == adapter_name(3) and list(server.loaded) == [adapter_name(3)]
        second.close()
        assert server.loaded == {} and not (tmp_path / "b" / ADAPTER_DIR).exists()
