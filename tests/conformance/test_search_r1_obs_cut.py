"""Search-R1's observation cut: every observation keeps its first ``max_obs_length`` (500) tokens of the
policy's tokenizer, as Search-R1's ``_process_next_obs`` keeps them.

``searchqa/obs_cut_outputs.json`` holds upstream's rows (padding removed, decoded) for fixed batches of
observations, made by ``searchqa/regenerate_obs_cut.py`` with the suite's tiny test tokenizer, whose
SHA-256 it records; the test reads the same tokenizer (skipped when the local one differs).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from agentgym_suite.envs.searchqa.retrievers import Passage
from agentgym_suite.envs.searchqa.search_r1 import cut_observation, information
from agentgym_suite.envs.searchqa.search_r1_env import LEFT_PADDING_DEPARTURE, SearchR1Env
from agentgym_suite.llm.tiny import tiny_model_dir

OUTPUTS: dict[str, Any] = json.loads((Path(__file__).parent / "searchqa" / "obs_cut_outputs.json").read_text(
    encoding="utf-8"))


@pytest.fixture(scope="module")
def tokenizer_dir() -> Path:
    folder = tiny_model_dir()
    if hashlib.sha256((folder / "tokenizer.json").read_bytes()).hexdigest() != OUTPUTS["tokenizer_sha256"]:
        pytest.skip("the local tiny tokenizer is not the one the upstream rows were made with")
    return folder


def test_the_record_names_upstream_and_cuts_something() -> None:
    assert OUTPUTS["commit"].startswith("a14dc3a") and OUTPUTS["max_obs_length"] == 500
    assert OUTPUTS["padding_side"] == "right"
    kept = [n for case in OUTPUTS["cases"] for n in case["kept_tokens"]]
    assert 500 in kept and any(n < 500 for n in kept)


@pytest.mark.parametrize("case", OUTPUTS["cases"], ids=lambda c: str(c["kept_tokens"]))
def test_observations_are_cut_as_upstream_cuts_them(case: dict[str, Any], tokenizer_dir: Path) -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_dir))
    assert [cut_observation(o, tokenizer, 500) for o in case["observations"]] == case["decoded"]


class _LongPassages:
    def search(self, query: str, topk: int) -> list[Passage]:
        return [Passage(title=f"River {n}", text=OUTPUTS["cases"][1]["observations"][1][:2000]) for n in range(topk)]


def test_the_env_cuts_its_observations_with_the_named_tokenizer(tmp_path: Path, tokenizer_dir: Path) -> None:
    from transformers import AutoTokenizer

    kwargs = {**SearchR1Env.fixture_kwargs(tmp_path), "retriever": _LongPassages()}
    env = SearchR1Env(**kwargs, obs_tokenizer=str(tokenizer_dir))
    env.reset(seed=0)
    observation, _, _, _, info = env.step("<search>rivers</search>")
    tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_dir))
    full = information(_LongPassages().search("rivers", 3))
    assert observation == cut_observation(full, tokenizer, 500) != full
    assert len(tokenizer(observation, add_special_tokens=False)["input_ids"]) <= 501  # a cut character may re-split
    _, _, _, _, info = env.step("<answer>Paris</answer>")
    assert observation in info["solution"] and full not in info["solution"]
    assert not any("max_obs_length" in d for d in env.leaderboard_departures())
    assert any("max_obs_length" in d for d in SearchR1Env(**kwargs).leaderboard_departures())


@pytest.mark.parametrize("case", OUTPUTS["left_padding_cases"], ids=lambda c: str(c["kept_in_batch"]))
def test_with_left_padding_an_episode_is_cut_as_upstreams_batch_of_one(case: dict[str, Any], tokenizer_dir: Path) -> None:
    """With a tokenizer that pads on the left, upstream's cut of an observation alone (a batch of one) is ours."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_dir), padding_side="left")
    assert [cut_observation(o, tokenizer, 500) for o in case["observations"]] == case["decoded_alone"]


def test_left_padding_makes_upstreams_cut_depend_on_the_batch(tmp_path: Path, tokenizer_dir: Path) -> None:
    """Why it stays a labelled departure: in upstream's batches a short observation beside a long one loses
    tokens (here all of them) that it keeps alone, so no one-episode rule reproduces it; the env names it."""
    from transformers import AutoTokenizer

    cases = OUTPUTS["left_padding_cases"]
    assert any(c["kept_in_batch"] != c["kept_alone"] for c in cases)
    assert any(0 == kept < alone for c in cases for kept, alone in zip(c["kept_in_batch"], c["kept_alone"]))
    left = tmp_path / "left-padding-tokenizer"
    AutoTokenizer.from_pretrained(str(tokenizer_dir), padding_side="left").save_pretrained(left)
    kwargs = SearchR1Env.fixture_kwargs(tmp_path)
    assert LEFT_PADDING_DEPARTURE in SearchR1Env(**kwargs, obs_tokenizer=str(left)).leaderboard_departures()
    assert LEFT_PADDING_DEPARTURE not in SearchR1Env(**kwargs, obs_tokenizer=str(tokenizer_dir)).leaderboard_departures()


def test_the_run_summary_names_the_left_padding_departure(tmp_path: Path, tokenizer_dir: Path) -> None:
    from transformers import AutoTokenizer

    from agentgym_suite.evaluation.runner import evaluate

    left = tmp_path / "left-padding-tokenizer"
    AutoTokenizer.from_pretrained(str(tokenizer_dir), padding_side="left").save_pretrained(left)
    kwargs = {**SearchR1Env.fixture_kwargs(tmp_path), "obs_tokenizer": str(left)}
    summary = evaluate("SearchR1-v0", "oracle", out_dir=tmp_path / "run", env_kwargs=kwargs, progress=False,
                       episodes=2).summary
    assert summary["comparable_to_leaderboard"] is False and LEFT_PADDING_DEPARTURE in summary["leaderboard_departures"]
