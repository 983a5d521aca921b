"""Evaluation split defaults, the split shown by ``agentgym eval``, and published reference scores beside a run."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from agentgym_suite.core.env_card import EnvCard, ReferenceScore
from agentgym_suite.evaluation.references import reference_rows
from agentgym_suite.evaluation.report import print_summary
from agentgym_suite.evaluation.runner import evaluate, with_evaluation_defaults


def test_papers_splits_are_the_evaluation_defaults_and_the_user_wins() -> None:
    assert with_evaluation_defaults("ScienceWorld-v0", {}) == {"split": "test"}
    assert with_evaluation_defaults("ScienceWorld-v0", {"split": "dev", "task": "boil"}) == {"split": "dev", "task": "boil"}
    assert with_evaluation_defaults("ALFWorld-v0", {"reward_scale": 10}) == {"split": "valid_seen", "reward_scale": 10}
    assert with_evaluation_defaults("TextWorld-v0", {"n_games": 2}) == {"n_games": 2}


CARD = EnvCard(
    "Bench", "1.0", "github.com/x/y", "MIT",
    references=(
        ReferenceScore(0.9, "success rate", "Qwen2.5-7B-Instruct", "valid_seen", "Paper A, Table 1", method="GiGPO"),
        ReferenceScore(0.4, "exact match", "Qwen2.5-7B-Instruct", "nq", "Paper B, Table 2"),
        ReferenceScore(0.5, "success rate", "Qwen2.5-1.5B-Instruct", "valid_seen", "Paper A, Table 1"),
    ),
)


def test_only_the_same_model_and_split_are_compared() -> None:
    summary = {"agent": "hf:Qwen/Qwen2.5-7B-Instruct", "split": "valid_seen", "success_rate": 0.5, "episodes": 140,
               "by_task_type": {"nq": {"success_rate": 0.25, "episodes": 4}}}
    rows = reference_rows(summary, CARD)
    assert [(r.reference.source, r.measured, r.episodes) for r in rows] == [
        ("Paper A, Table 1", 0.5, 140), ("Paper B, Table 2", 0.25, 4)]
    assert reference_rows({**summary, "agent": "openai:qwen2.5-7b-instruct@http://h:8000/v1"}, CARD)
    assert reference_rows({**summary, "agent": "hf:Qwen/Qwen2.5-3B-Instruct"}, CARD) == []
    assert reference_rows({**summary, "split": "valid_unseen", "by_task_type": {}}, CARD) == []


def test_eval_prints_the_split_it_ran_and_references_of_the_card(tmp_path) -> None:
    pytest.importorskip("alfworld")
    result = evaluate("ALFWorld-v0", "oracle", out_dir=tmp_path, episodes=1, progress=False)
    assert result.summary["split"] == "valid_seen"
    assert result.summary["env_kwargs"] == {"split": "valid_seen"}
    out = io.StringIO()
    print_summary({**result.summary, "agent": "vllm:/ckpt/Qwen2.5-7B-Instruct"}, Console(file=out, width=200))
    text = out.getvalue()
    assert "split: valid_seen" in text
    assert "0.908" in text and "GiGPO" in text and "arXiv:2505.10978v3" in text


def test_scienceworld_eval_plays_test_variations_and_reports_the_0_100_score(tmp_path) -> None:
    pytest.importorskip("scienceworld")
    result = evaluate("ScienceWorld-v0", "oracle", out_dir=tmp_path, episodes=1, progress=False,
                      env_kwargs={"task": "find-living-thing", "max_admissible": None})
    summary = result.summary
    assert summary["split"] == "test" and summary["env_kwargs"]["split"] == "test"
    assert summary["score_scale"] == 100.0 and summary["mean_score_scaled"] == pytest.approx(100 * summary["mean_score"])
    out = io.StringIO()
    print_summary(summary, Console(file=out, width=200))
    assert "average score (0-100)" in out.getvalue() and "split: test" in out.getvalue()


def test_webshop_eval_names_verl_agents_split_and_compares_score_and_success(tmp_path) -> None:
    from agentgym_suite.envs.webshop.synthetic import write_synthetic_catalogue

    data = write_synthetic_catalogue(tmp_path / "webshop")
    result = evaluate("WebShop-v0", "oracle", out_dir=tmp_path / "run", episodes=1, progress=False,
                      env_kwargs={"data_dir": str(data), "noun_tagger": "heuristic"})
    summary = {**result.summary, "agent": "hf:Qwen/Qwen2.5-1.5B-Instruct"}
    assert summary["split"] == "test"
    rows = {(r.reference.method, r.reference.summary_key): r for r in reference_rows(summary)}
    assert set(rows) == {(m, k) for m in ("GRPO", "GiGPO") for k in ("mean_score", "success_rate")}
    assert rows[("GiGPO", "mean_score")].reference.value == 0.835
    assert rows[("GiGPO", "mean_score")].measured == summary["mean_score"]
    assert rows[("GRPO", "success_rate")].measured == summary["success_rate"]
