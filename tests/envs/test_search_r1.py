"""SearchR1-v0: Search-R1's task sets, prompt, turn budget, per-dataset exact match, retrievers (BM25, e5)."""

from __future__ import annotations

import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import agentgym_suite  # noqa: F401  (registers the ids)
from agentgym_suite.core.errors import DataNotFoundError
from agentgym_suite.envs.searchqa import SearchR1Env
from agentgym_suite.envs.searchqa.corpus import JsonlCorpus
from agentgym_suite.envs.searchqa.data_source import SEARCH_R1_TEST
from agentgym_suite.envs.searchqa.search_r1 import INVALID_ACTION, prompt
from agentgym_suite.evaluation.references import reference_rows
from agentgym_suite.evaluation.runner import evaluate


@pytest.fixture()
def kwargs(tmp_path: Path) -> dict:
    return SearchR1Env.fixture_kwargs(tmp_path)


def test_check_env_and_the_prompt(kwargs: dict) -> None:
    env = SearchR1Env(**kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env, skip_render_check=True)
    observation, info = env.reset(options={"task_id": "nq/nq_0"})
    assert observation == prompt("what is the capital of france")
    assert observation.endswith("Question: what is the capital of france?\n")
    assert info["task_type"] == "nq" and info["prompt_messages"] == [{"role": "user", "content": observation}]
    assert len(env.task_ids()) == 2 * len(SEARCH_R1_TEST)


def test_four_searches_then_an_answer_turn(kwargs: dict) -> None:
    env = SearchR1Env(**kwargs)
    env.reset(options={"task_id": "popqa/popqa_1"})
    observation, reward, terminated, truncated, info = env.step("<think>hm</think><search> Python creator </search>")
    assert observation.startswith("\n\n<information>Doc 1(Title: \"Python\") Python was created by Guido van Rossum.")
    assert observation.endswith("</information>\n\n") and not (terminated or truncated)
    assert info["retriever"] == "bm25" and info["corpus"].endswith("corpus.jsonl")
    observation, *_ = env.step("I am not sure")
    assert observation == INVALID_ACTION
    for _ in range(2):
        env.step("<search>Guido</search> <answer>ignored after the cut</answer>")
    assert env.turn == env.max_turns == 4
    observation, reward, terminated, truncated, info = env.step("<think>so</think><answer> Van Rossum! </answer>")
    assert terminated and reward == 1.0 and info["won"] and info["answer"] == "Van Rossum!"
    assert [m["role"] for m in info["prompt_messages"]] == ["user"] + ["assistant", "user"] * 4 + ["assistant"]
    assert info["prompt_messages"][5]["content"] == "<search>Guido</search>"


def test_a_search_in_the_last_turn_ends_without_an_answer(kwargs: dict) -> None:
    env = gym.make("SearchR1-v0", **kwargs)
    env.reset(options={"task_id": "nq/nq_0"})
    for _ in range(4):
        env.step("<search>paris</search>")
    observation, reward, terminated, truncated, info = env.step("<search>paris again</search>")
    assert truncated and reward == 0.0 and not info["won"] and info["no_answer"]


def test_departures_name_the_retriever_and_corpus(kwargs: dict) -> None:
    env = SearchR1Env(**kwargs)
    reasons = " | ".join(env.leaderboard_departures())
    assert "local BM25" in reasons and "not Search-R1's Wikipedia-2018" in reasons
    assert "top-" not in reasons
    assert "top-5" in " ".join(SearchR1Env(**kwargs, topk=5).leaderboard_departures())


def test_eval_reports_exact_match_per_dataset(kwargs: dict, tmp_path: Path) -> None:
    result = evaluate("SearchR1-v0", "oracle", out_dir=tmp_path / "run", env_kwargs=kwargs, progress=False)
    summary = result.summary
    assert summary["split"] == "search_r1_test" and summary["success_rate"] == 1.0
    assert set(summary["by_task_type"]) == set(SEARCH_R1_TEST)
    assert all(row["mean_score"] == 1.0 and row["episodes"] == 2 for row in summary["by_task_type"].values())
    assert summary["labels"]["retriever"] == ["bm25"] and summary["comparable_to_leaderboard"] is False
    assert summary["task_type_macro_success_rate"] == 1.0
    rows = reference_rows({**summary, "agent": "vllm:/ckpt/Qwen2.5-7B-Instruct"})
    assert sorted(r.reference.split for r in rows) == sorted([*SEARCH_R1_TEST, "search_r1_test"])
    assert all(r.measured == 1.0 for r in rows)


def test_subsets_and_missing_files(kwargs: dict, tmp_path: Path) -> None:
    env = SearchR1Env(**{**kwargs, "dataset": "search_r1_test:bamboogle,nq"})
    assert sorted({env.questions[t].kind for t in env.task_ids()}) == ["bamboogle", "nq"]
    with pytest.raises(ValueError, match="no dataset"):
        SearchR1Env(**{**kwargs, "dataset": "search_r1_test:squad"})
    with pytest.raises(DataNotFoundError, match="agentgym data fetch searchqa"):
        SearchR1Env(data_dir=tmp_path / "empty", corpus=kwargs["corpus"])


def _tiny_e5(folder: Path) -> Path:
    """A randomly initialised two-layer BERT with a word-level vocabulary, saved as a model folder."""
    torch = pytest.importorskip("torch")
    from transformers import BertConfig, BertModel, BertTokenizerFast

    words = sorted({w for w in "query passage : paris is the capital of france mount everest 8 849 m high python was "
                    "created by guido van rossum nile flows into mediterranean who what , .".split()})
    vocab = folder / "vocab.txt"
    folder.mkdir(parents=True, exist_ok=True)
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]) + "\n")
    BertTokenizerFast(vocab_file=str(vocab)).save_pretrained(folder)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(words) + 5, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=512)
    BertModel(config).save_pretrained(folder)
    return folder


def test_e5_retrieval_ranks_as_a_flat_inner_product_over_mean_pooled_embeddings(kwargs: dict, tmp_path: Path) -> None:
    pytest.importorskip("faiss")
    import torch
    from transformers import AutoModel, AutoTokenizer

    from agentgym_suite.envs.searchqa.e5 import build_e5_index

    model = _tiny_e5(tmp_path / "e5")
    corpus = JsonlCorpus(kwargs["corpus"])
    index = build_e5_index(model, corpus, tmp_path / "e5.index", batch_size=3)
    env = SearchR1Env(**kwargs, retriever="e5", e5_model=model, e5_index=index)
    found = env.retriever.search("who created python", 4)

    tokenizer, encoder = AutoTokenizer.from_pretrained(str(model)), AutoModel.from_pretrained(str(model)).eval()

    def embed(text: str) -> np.ndarray:
        batch = tokenizer([text], return_tensors="pt")
        with torch.no_grad():
            hidden = encoder(**batch).last_hidden_state[0]
        vector = hidden.mean(dim=0).numpy()
        return vector / np.linalg.norm(vector)

    query = embed("query: who created python")
    expected = {corpus.passage(i).title: float(embed(f"passage: {corpus.contents(i)}") @ query) for i in range(len(corpus))}
    assert sorted(p.title for p in found) == sorted(expected)
    assert [p.score for p in found] == sorted((p.score for p in found), reverse=True)
    for passage in found:  # each score is the inner product of the two mean-pooled, normalised embeddings
        assert passage.score == pytest.approx(expected[passage.title], abs=1e-5)
    assert "local BM25" not in " ".join(env.leaderboard_departures())


def test_a_large_corpus_keeps_its_offsets_and_bm25_index_on_disk(kwargs: dict, tmp_path: Path) -> None:
    from agentgym_suite.envs.searchqa.corpus import CorpusBM25Retriever

    cache = tmp_path / "cache"
    built = CorpusBM25Retriever(JsonlCorpus(kwargs["corpus"], cache=cache))
    assert (cache / "offsets.npy").exists() and (cache / "bm25" / "params.index.json").exists()
    loaded = CorpusBM25Retriever(JsonlCorpus(kwargs["corpus"], cache=cache))
    for query in ("who created python", "capital of france", "nile"):
        assert loaded.search(query, 3) == built.search(query, 3) != []
    assert built.search("who created python", 1)[0].contents == '"Python"\nPython was created by Guido van Rossum.'


def test_eval_names_the_agents_tokenizer_for_the_observation_cut(kwargs: dict) -> None:
    from agentgym_suite.evaluation.policy_tokenizer import with_policy_tokenizer

    assert with_policy_tokenizer("SearchR1-v0", {}, "hf:Qwen/Qwen2.5-3B-Instruct") == {
        "obs_tokenizer": "Qwen/Qwen2.5-3B-Instruct"}
    assert with_policy_tokenizer("SearchR1-v0", {"obs_tokenizer": "mine"}, "vllm:/models/q") == {"obs_tokenizer": "mine"}
    for agent in ("openai:qwen@http://127.0.0.1:8000/v1", "oracle", object()):
        assert with_policy_tokenizer("SearchR1-v0", {}, agent) == {}
    assert with_policy_tokenizer("SearchQA-v0", {}, "hf:Qwen/Qwen2.5-3B-Instruct") == {}
    reasons = " | ".join(SearchR1Env(**kwargs).leaderboard_departures())
    assert "max_obs_length" in reasons


def test_training_gives_the_env_the_policys_tokenizer(kwargs: dict) -> None:
    """The trainer's env factory fills the declared ``policy_tokenizer_setting`` with the model being trained, as eval
    does with the agent's: the env then cuts observations in the policy's tokens and names no departure for it."""
    from agentgym_suite.llm.tiny import tiny_model_dir
    from agentgym_suite.trainers import AgentGRPOConfig
    from agentgym_suite.trainers.training_tasks import default_env_factory

    def config(env_id: str, env_kwargs: dict) -> AgentGRPOConfig:
        return AgentGRPOConfig(output_dir="/tmp/agentgym-search-r1-tokenizer", bf16=False, use_cpu=True, report_to="none",
                               model_name_or_path="tiny", env_id=env_id, env_kwargs=env_kwargs, per_device_train_batch_size=8)

    factory = default_env_factory(config("SearchR1-v0", dict(kwargs)))
    assert factory.keywords["obs_tokenizer"] == str(tiny_model_dir())
    held_out = default_env_factory(config("SearchR1-v0", dict(kwargs)), held_out=True, policy_tokenizer="/models/mine")
    assert held_out.keywords["obs_tokenizer"] == "/models/mine"
    kept = default_env_factory(config("SearchR1-v0", {**kwargs, "obs_tokenizer": "chosen"}))
    assert kept.keywords["obs_tokenizer"] == "chosen"  # the config's own choice wins
    assert "obs_tokenizer" not in default_env_factory(config("SearchQA-v0", {})).keywords  # no setting declared
    env = factory()
    try:
        assert env.unwrapped.obs_tokenizer == str(tiny_model_dir())
        assert not any("max_obs_length" in reason for reason in env.unwrapped.leaderboard_departures())
    finally:
        env.close()
