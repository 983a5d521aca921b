"""TRL settings the trainer honours: sampling settings on the transformers path, the completions
table, whole groups per generation batch, and the settings refused with several processes."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from agentgym_suite.llm.sampling import RecordingProcessor
from agentgym_suite.trainers import AgentGRPOTrainer
from agentgym_suite.trainers.distributed import world_model_lockstep_check
from agentgym_suite.trainers.generation import rollout_sampling
from trainers.fake_env import make_letter_env


def test_generation_kwargs_win_and_the_rest_goes_to_generate():
    args = SimpleNamespace(generation_kwargs={"top_k": 5, "repetition_penalty": 1.3, "no_repeat_ngram_size": 2})
    params, extra = rollout_sampling(args, temperature=0.7, top_p=0.9, top_k=0, min_p=None, repetition_penalty=1.0,
                                     max_new_tokens=12, seed=3)
    assert (params.temperature, params.top_p, params.top_k, params.min_p) == (0.7, 0.9, 5, 0.0)
    assert params.repetition_penalty == 1.3 and params.max_new_tokens == 12 and params.seed == 3
    assert extra == {"no_repeat_ngram_size": 2}
    greedy, _ = rollout_sampling(SimpleNamespace(generation_kwargs={"do_sample": False}), temperature=1.0, top_p=1.0,
                                 top_k=0, min_p=0.0, repetition_penalty=1.0, max_new_tokens=4, seed=None)
    assert greedy.greedy


def test_recording_processor_applies_penalty_top_k_and_min_p_after_recording():
    scores = torch.tensor([[2.0, 1.0, 0.5, -1.0, 0.0]])
    seen = torch.tensor([[0, 3]])
    raw = torch.log_softmax(scores, -1)
    processor = RecordingProcessor(1.0, 1.0, False, top_k=2, repetition_penalty=2.0)
    warped = processor(seen, scores.clone())
    # Hugging Face's penalty: positive logits of seen tokens halved, negative ones doubled; then the top 2 kept
    assert torch.isfinite(warped).sum() == 2 and warped[0, 0] == 1.0 and warped[0, 1] == 1.0
    processor.collect(torch.tensor([0]))
    torch.testing.assert_close(processor.logprobs()[0, 0], raw[0, 0])  # the unwarped model's log-prob
    min_p = RecordingProcessor(1.0, 1.0, False, min_p=0.3)(seen, scores.clone())
    assert torch.isinf(min_p[0, 3]) and torch.isfinite(min_p[0, 0])


def test_transformers_path_samples_with_top_k_and_generation_kwargs(make_config):
    from agentgym_suite.llm.tiny import tiny_model_dir
    from transformers import AutoTokenizer

    banned = AutoTokenizer.from_pretrained(str(tiny_model_dir())).encode(" the", add_special_tokens=False)
    # every row is kept: identical rollouts have zero advantages, which skip_uninformative_rows would leave out
    args = make_config(max_steps=1, top_k=1, generation_kwargs={"suppress_tokens": banned}, max_turns=1,
                       skip_uninformative_rows=False)
    trainer = AgentGRPOTrainer(args=args, env_factory=make_letter_env)
    outputs = []
    score = trainer._generate_and_score_completions
    trainer._generate_and_score_completions = lambda inputs: outputs.append(score(inputs)) or outputs[-1]
    trainer.train()
    ids, mask = outputs[0]["completion_ids"], outputs[0]["completion_mask"]
    # top_k=1 samples the most likely token: the two rollouts of each group (same prompt) are the same
    assert torch.equal(ids[0][mask[0].bool()], ids[1][mask[1].bool()])
    assert not any(int(t) in banned for row, m in zip(ids, mask) for t in row[m.bool()])


def test_log_completions_writes_the_trained_rows(make_config, tmp_path):
    pandas = pytest.importorskip("pandas")
    trainer = AgentGRPOTrainer(args=make_config(max_steps=1, log_completions=True, max_turns=2),
                               env_factory=make_letter_env)
    trainer.train()
    table = pandas.read_parquet(next((tmp_path / "run" / "completions").glob("*.parquet")))
    rows = next(h["episodes/rows"] for h in trainer.state.log_history if "episodes/rows" in h)
    assert len(table) == rows > 0
    assert {"prompt", "completion", "advantage"} <= set(table.columns)
    assert table["prompt"].str.len().min() > 0 and table["advantage"].abs().sum() > 0


def test_a_generation_batch_needs_enough_tasks_for_whole_groups(make_config):
    with pytest.raises(ValueError, match="one generation batch plays 2 distinct tasks x G=2"):
        AgentGRPOTrainer(args=make_config(task_ids=["t0"]), env_factory=make_letter_env)


def test_policy_world_model_is_refused_where_generation_is_collective():
    sync = SimpleNamespace(distributed=True)
    plain = SimpleNamespace(is_zero3=False, is_fsdp=False)
    world_model_lockstep_check(sync, SimpleNamespace(), False, plain)  # DDP: fine
    with pytest.raises(RuntimeError, match="ZeRO-3 and FSDP"):
        world_model_lockstep_check(sync, SimpleNamespace(), False, SimpleNamespace(is_zero3=True, is_fsdp=False))
    with pytest.raises(RuntimeError, match="server mode"):
        world_model_lockstep_check(sync, SimpleNamespace(gathers_prompts=True), True, plain)
    world_model_lockstep_check(SimpleNamespace(distributed=False), SimpleNamespace(gathers_prompts=True), True, plain)


def test_generation_summons_full_fsdp1_parameters_as_trl_does(make_config):
    # under FSDP1 TRL generates inside summon_full_params(model_wrapped, recurse=False); so does the rollout
    # (accelerate's FSDP plugin needs a GPU, so the call is recorded here rather than run sharded)
    from contextlib import contextmanager

    trainer = AgentGRPOTrainer(args=make_config(max_steps=1, max_turns=1), env_factory=make_letter_env)
    entered: list[tuple] = []
    generating: list[bool] = []

    @contextmanager
    def summon(module, **kwargs):
        entered.append((module, kwargs))
        generating.append(True)
        yield
        generating.append(False)

    trainer._dist = SimpleNamespace(summon_full_params=summon, is_zero3=False, is_fsdp=True)
    generate = type(trainer.model).generate
    calls: list[bool] = []
    trainer.model.generate = lambda *a, **k: (calls.append(generating[-1]), generate(trainer.model, *a, **k))[1]
    trainer.train()
    assert entered and all(module is trainer.model_wrapped and kw == {"recurse": False} for module, kw in entered)
    assert calls and all(calls), "generation ran outside summon_full_params"
