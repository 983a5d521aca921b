"""SearchR1-v0 against Search-R1's own code: exact match, response cut and parsing, observations, passage
block and whole-episode scores equal what ``regenerate_searchqa.py`` recorded from upstream.

The episodes include the cases where Search-R1's reward reads the solution string rather than the
answer action: several answers in one response, an answer inside a search query, answer tags
inside retrieved passages (with no answer, a wrong one and the right one), an unclosed tag before
an invalid-action turn (whose text holds a tag pair), an empty answer, and no answer at all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentgym_suite.envs.searchqa import Passage, SearchR1Env
from agentgym_suite.envs.searchqa.normalize import exact_match, normalize_answer
from agentgym_suite.envs.searchqa.search_r1 import cut_response, format_passages, parse_response

HERE = Path(__file__).parent / "searchqa"
INPUTS = json.loads((HERE / "inputs.json").read_text(encoding="utf-8"))
UPSTREAM = json.loads((HERE / "search_r1_outputs.json").read_text(encoding="utf-8"))


class FixedDocuments:
    """The retrieval server of the recorded run: every query gets the same documents (per episode)."""

    documents: list[str] = INPUTS["documents"]

    def search(self, query: str, topk: int) -> list[Passage]:
        return [Passage.from_contents(d) for d in self.documents][:topk]


@pytest.fixture()
def env(tmp_path: Path) -> SearchR1Env:
    kwargs = SearchR1Env.fixture_kwargs(tmp_path)
    questions = tmp_path / "flashrag" / "nq" / "test.jsonl"
    with questions.open("w", encoding="utf-8") as out:
        for number, episode in enumerate(INPUTS["episodes"]):
            question = episode["prompt"].rsplit("Question: ", 1)[1].rstrip("\n")
            out.write(json.dumps({"id": str(number), "question": question, "golden_answers": episode["golds"]}) + "\n")
    return SearchR1Env(**kwargs, dataset="search_r1_test:nq", retriever=FixedDocuments())


def _served(env: SearchR1Env) -> FixedDocuments:
    assert isinstance(env.retriever, FixedDocuments)
    return env.retriever


def test_exact_match_and_normalisation_equal_qa_em() -> None:
    ours = [int(exact_match(c["prediction"], [c["golds"]] if isinstance(c["golds"], str) else c["golds"]))
            for c in INPUTS["em"]]
    assert ours == UPSTREAM["em_check"]
    assert [normalize_answer(t) for t in INPUTS["normalize"]] == UPSTREAM["normalize_answer"]


def test_response_cut_and_action_parsing_equal_generation_py() -> None:
    assert [cut_response(r) for r in INPUTS["responses"]] == UPSTREAM["cut_responses"]
    parsed = [parse_response(r) for r in INPUTS["responses"]]
    assert [kind for kind, _ in parsed] == UPSTREAM["actions"]
    assert [content for _, content in parsed] == UPSTREAM["contents"]


def test_passage_block_equals_passages2string() -> None:
    assert format_passages([Passage.from_contents(d) for d in INPUTS["documents"]]) == UPSTREAM["passages2string"]


def test_each_responses_observation_and_validity_equal_execute_predictions(env: SearchR1Env) -> None:
    for number, response in enumerate(INPUTS["responses"]):
        env.reset(options={"task_id": "nq/0"})
        observation, _, terminated, _, info = env.step(response)
        assert observation == UPSTREAM["observations"][number], response
        assert int(terminated) == UPSTREAM["dones"][number], response
        assert int(info["action_valid"]) == UPSTREAM["valid_action"][number], response
        assert int("search_query" in info) == UPSTREAM["is_search"][number], response


def test_whole_episodes_score_as_compute_score_em(env: SearchR1Env) -> None:
    scores = []
    for number, episode in enumerate(INPUTS["episodes"]):
        _served(env).documents = episode.get("documents", INPUTS["documents"])
        observation, _ = env.reset(options={"task_id": f"nq/{number}"})
        assert observation == episode["prompt"]
        reward, done = 0.0, False
        for response in episode["responses"]:
            assert not done, "the recorded episode goes on after ours ended"
            _, reward, terminated, truncated, _ = env.step(response)
            done = terminated or truncated
        assert done
        scores.append(reward)
    assert scores == UPSTREAM["episode_scores"]
