"""SearchQA-v0 on the HotpotQA and MuSiQue samples, with local BM25 and a stub HTTP retriever."""

from __future__ import annotations

import json
import threading
import time
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterator

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import agentgym_suite  # noqa: F401  (registers the ids)
from agentgym_suite.core.data import has_benchmark_data
from agentgym_suite.core.errors import DataNotFoundError, UnknownTaskError
from agentgym_suite.envs.searchqa import HTTPRetriever, Passage, RetrievalError, SearchQAEnv
from agentgym_suite.envs.searchqa.normalize import exact_match, f1_score, normalize_answer

pytestmark = pytest.mark.skipif(
    not has_benchmark_data("searchqa", "hipporag_hotpotqa", "hipporag_musique"),
    reason="needs AGENTGYM_DATA with searchqa/ (the tests run with AGENTGYM_DATA=../shared/data)",
)


def play(env: SearchQAEnv, actions: list[str]) -> tuple[str, float, bool, bool, dict]:
    result: tuple = ("", 0.0, False, False, {})
    for action in actions:
        result = env.step(action)
    return result  # type: ignore[return-value]


@pytest.mark.parametrize("dataset", ["hotpotqa", "musique"])
def test_check_env_passes_with_warnings_as_errors(dataset: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(SearchQAEnv(dataset=dataset), skip_render_check=True)


@pytest.mark.parametrize("dataset", ["hotpotqa", "musique"])
def test_oracle_replay_wins(dataset: str) -> None:
    env = SearchQAEnv(dataset=dataset)
    assert len(env.task_ids()) == 100
    for task_id in env.task_ids()[:8]:
        env.reset(options={"task_id": task_id})
        plan = env.oracle()
        assert plan[-1].startswith("<answer>") and len(plan) <= env.max_turns
        observation, reward, terminated, truncated, info = play(env, plan)
        assert terminated and not truncated and info["won"] and reward == 1.0 and info["f1"] == 1.0
        assert info["action_valid"]


def test_search_returns_topk_passages_in_information_tags() -> None:
    env = SearchQAEnv(dataset="hotpotqa", topk=2)
    env.reset(options={"task_id": env.task_ids()[0]})
    title = env.question.supporting_titles[0]
    observation, reward, terminated, truncated, info = env.step(f"<think>look it up</think><search>{title}</search>")
    assert observation.startswith("<information>Doc 1(Title: ") and observation.endswith("</information>")
    assert "Doc 2(Title: " in observation and "Doc 3(" not in observation
    assert f'"{title}"' in observation
    assert reward == 0.0 and not terminated and not truncated and info["search_query"] == title


def test_wrong_answer_gets_zero_and_partial_f1() -> None:
    env = SearchQAEnv(dataset="musique")
    env.reset(options={"task_id": env.task_ids()[0]})
    gold = env.question.answers[0]
    _, reward, terminated, _, info = env.step(f"<answer>{gold} and something else</answer>")
    assert terminated and reward == 0.0 and not info["won"] and info["score"] == 0.0
    assert 0.0 < info["f1"] < 1.0


def test_answer_aliases_count_as_exact_match() -> None:
    env = SearchQAEnv(dataset="musique")
    task = next(t for t in env.task_ids() if len(env.questions[t].answers) > 1)
    env.reset(options={"task_id": task})
    _, reward, _, _, info = env.step(f"<answer>{env.question.answers[-1]}</answer>")
    assert reward == 1.0 and info["won"]


@pytest.mark.parametrize(
    ("prediction", "golds", "em"),
    [
        ("The Beatles!", ["Beatles"], 1.0),
        ("  a   spirit. ", ["a spirit"], 1.0),
        ("An Apple", ["apple"], 1.0),
        ("G. Stanley Hall", ["Stanley Hall", "G. Stanley Hall"], 1.0),
        ("Stanley", ["G. Stanley Hall"], 0.0),
        ("theatre", ["the atre"], 0.0),
        ("1,000", ["1000"], 1.0),
    ],
)
def test_exact_match_normalisation(prediction: str, golds: list[str], em: float) -> None:
    assert exact_match(prediction, golds) == em


def test_normalisation_and_f1_values() -> None:
    assert normalize_answer("The  Quick, brown FOX.") == "quick brown fox"
    assert f1_score("quick brown", ["the quick brown fox"]) == pytest.approx(0.8)
    assert f1_score("slow", ["quick"]) == 0.0


@pytest.mark.parametrize(
    ("action", "reason"),
    [
        ("I think it is Paris", "missing <search>"),
        ("<search></search>", "empty"),
        ("<search>unclosed", "unbalanced"),
        ("<search>a</search><answer>b</answer>", "not both"),
        ("<search>" + "x" * 100_000 + "</search>", "characters long"),
        ("<answer>" + "y" * 2_000 + "</answer>", "characters long"),
    ],
)
def test_bad_actions_explain_without_ending_the_episode(action: str, reason: str) -> None:
    env = SearchQAEnv(dataset="hotpotqa")
    env.reset(options={"task_id": env.task_ids()[1]})
    observation, reward, terminated, truncated, info = env.step(action)
    assert info["action_valid"] is False and reward == 0.0 and not terminated and not truncated
    assert reason in observation and "<search>" in observation


def test_require_think_makes_think_mandatory() -> None:
    env = SearchQAEnv(dataset="hotpotqa", require_think=True)
    env.reset(options={"task_id": env.task_ids()[0]})
    _, _, _, _, info = env.step("<search>anything</search>")
    assert not info["action_valid"]
    _, _, _, _, info = env.step("<think>plan</think><search>anything</search>")
    assert info["action_valid"]


def test_turn_limit_truncates_after_four_actions() -> None:
    env = SearchQAEnv(dataset="hotpotqa")
    env.reset(options={"task_id": env.task_ids()[0]})
    results = [env.step("<search>film director</search>") for _ in range(4)]
    assert [r[3] for r in results] == [False, False, False, True]
    assert "No turns left" in results[-1][0] and not any(r[2] for r in results)
    made = gym.make("SearchQA-v0")
    assert made.spec is not None and made.spec.max_episode_steps == 4
    made.reset(seed=0)
    truncated = [made.step("<search>river</search>")[3] for _ in range(4)]
    assert truncated[-1] and not any(truncated[:-1])


def test_oracle_fits_the_turn_budget_mid_episode() -> None:
    env = SearchQAEnv(dataset="musique", max_turns=3)
    task = next(t for t in env.task_ids() if len(env.questions[t].supporting_titles) >= 3)
    env.reset(options={"task_id": task})
    env.step("<search>unrelated words</search>")
    plan = env.oracle()
    assert len(plan) == 2 and plan[-1].startswith("<answer>")
    *_, info = play(env, plan)
    assert info["won"]


def test_unknown_task_dataset_and_missing_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = SearchQAEnv(dataset="hotpotqa")
    with pytest.raises(UnknownTaskError):
        env.reset(options={"task_id": "not-a-question"})
    with pytest.raises(ValueError, match="dataset"):
        SearchQAEnv(dataset="triviaqa")
    with pytest.raises(DataNotFoundError, match="agentgym data fetch searchqa"):
        SearchQAEnv(dataset="musique", data_dir=tmp_path)
    monkeypatch.setenv("AGENTGYM_DATA", str(tmp_path))
    with pytest.raises(DataNotFoundError, match="AGENTGYM_DATA"):
        SearchQAEnv(dataset="hotpotqa")


# ---------------------------------------------------------------------- HTTP retriever
class _Handler(BaseHTTPRequestHandler):
    mode = "ok"
    requests: list[dict[str, Any]] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server naming
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(body)
        if self.mode == "error":
            self.send_response(500)
            self.end_headers()
            return
        if self.mode == "slow":
            time.sleep(1.0)
        if self.mode == "garbage":
            payload = b"not json"
        else:
            docs = [{"document": {"id": str(i), "contents": f'"Stub Title {i}"\nStub text {i} about {body["queries"][0]}'},
                     "score": 1.0 / (i + 1)} for i in range(body["topk"])]
            payload = json.dumps({"result": [docs]}).encode()
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (the timeout case)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def stub_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Handler.mode, _Handler.requests = "ok", []
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/retrieve"
    finally:
        server.shutdown()
        server.server_close()


def test_http_retriever_speaks_search_r1_api(stub_server: str) -> None:
    env = SearchQAEnv(dataset="hotpotqa", retriever_url=stub_server, topk=2)
    env.reset(options={"task_id": env.task_ids()[0]})
    observation, _, _, _, info = env.step("<search>capital of France</search>")
    assert _Handler.requests[-1] == {"queries": ["capital of France"], "topk": 2, "return_scores": True}
    assert 'Doc 1(Title: "Stub Title 0") Stub text 0 about capital of France' in observation
    assert "Doc 2(" in observation and info["action_valid"] and "retrieval_error" not in info
    passages = HTTPRetriever(stub_server).search("x", 3)
    assert passages[2] == Passage("Stub Title 2", "Stub text 2 about x", pytest.approx(1 / 3))


@pytest.mark.parametrize(("mode", "message"), [("error", "HTTP 500"), ("slow", "did not answer"), ("garbage", "not JSON")])
def test_http_failures_become_observations(stub_server: str, mode: str, message: str) -> None:
    _Handler.mode = mode
    env = SearchQAEnv(dataset="hotpotqa", retriever_url=stub_server, retriever_timeout=0.2)
    env.reset(options={"task_id": env.task_ids()[0]})
    observation, reward, terminated, truncated, info = env.step("<search>anything</search>")
    assert "Search failed" in observation and message in observation and message in info["retrieval_error"]
    assert reward == 0.0 and not terminated and not truncated
    _, reward, terminated, _, _ = env.step(f"<answer>{env.question.answers[0]}</answer>")
    assert terminated and reward == 1.0


def test_http_retriever_unreachable_and_bad_url() -> None:
    with pytest.raises(RetrievalError, match="did not answer"):
        HTTPRetriever("http://127.0.0.1:9/retrieve", timeout=0.5).search("q", 1)
    with pytest.raises(ValueError, match="http://"):
        HTTPRetriever("127.0.0.1:8000/retrieve")
    with pytest.raises(ValueError, match="retriever_url"):
        SearchQAEnv(dataset="hotpotqa", retriever="http")


def test_custom_retriever_object() -> None:
    class Fixed:
        def search(self, query: str, topk: int) -> list[Passage]:
            return [Passage("Fixed", f"echo {query}")][:topk]

    env = SearchQAEnv(dataset="hotpotqa", retriever=Fixed())
    env.reset(options={"task_id": env.task_ids()[0]})
    observation, *_ = env.step("<search>hello</search>")
    assert observation == '<information>Doc 1(Title: "Fixed") echo hello</information>'
