"""FinMCP-v0 on the committed fixtures: replay, metrics, oracle, bad actions, missing data."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env

import agentgym_suite.registration  # noqa: F401
from agentgym_suite.core.errors import DataNotFoundError, UnknownTaskError
from agentgym_suite.envs.finmcp import FinMCPEnv
from agentgym_suite.envs.finmcp.fixtures import write_fixtures
from agentgym_suite.envs.finmcp.metrics import tool_metrics

from .oracle import play_oracle


@pytest.fixture(scope="module")
def data_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_fixtures(tmp_path_factory.mktemp("finmcp"))


def call(name: str, **arguments: object) -> str:
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"


def test_check_env(data_file: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(FinMCPEnv(data_path=data_file), skip_render_check=True)


def test_make_and_task_filter(data_file: Path) -> None:
    env = gymnasium.make("FinMCP-v0", data_path=str(data_file.parent), task="multi turn")
    assert env.unwrapped.task_ids() == ["602"]
    obs, info = env.reset(seed=1)
    assert "purchase fees" in obs and info["tools"]


@pytest.mark.parametrize("task_id", ["1", "2", "201", "202", "602"])
def test_oracle_wins(data_file: Path, task_id: str) -> None:
    run = play_oracle(FinMCPEnv(data_path=data_file), task_id, plan_at_reset=True)  # valid actions, terminated
    info = run.info
    assert run.reward == 1.0 and info["won"]
    assert info["finmcp_metrics"]["f1"] == 1.0 and info["finmcp_metrics"]["consist"] == 1.0
    assert info["finmcp_FP"] == 0 and info["finmcp_FN"] == 0
    assert info["finmcp_replay"]["unmatched"] == 0


def test_replay_returns_recording_and_errors_on_unmatched(data_file: Path) -> None:
    env = FinMCPEnv(data_path=data_file)
    env.reset(options={"task_id": "2"})
    obs, *_ = env.step(call("SearchFunds", keyword="  Bond ", risk_level="LOW"))
    assert "Steady Bond A" in obs
    obs, _, _, _, info = env.step(call("SearchFunds", keyword="equity"))
    assert "no recorded output" in obs and info["finmcp_replay"]["unmatched"] == 1
    _, reward, terminated, _, info = env.step("Done.")
    assert terminated
    assert info["finmcp_metrics"]["precision"] == 0.5 and info["finmcp_metrics"]["recall"] == 1.0
    assert reward == pytest.approx(2 / 3) and not info["won"]


def test_unmatched_call_handler_hook(data_file: Path) -> None:
    seen = []

    def world_model(name: str, arguments: dict, sample: object) -> dict:
        seen.append((name, arguments))
        return {"imagined": True}

    env = FinMCPEnv(data_path=data_file, unmatched_call_handler=world_model)
    env.reset(options={"task_id": "1"})
    obs, *_ = env.step(call("SearchFinancialNews", keyword="banks"))
    assert seen == [("SearchFinancialNews", {"keyword": "banks"})] and "imagined" in obs


def test_metrics() -> None:
    assert tool_metrics(["A", "B"], ["B", "A"])["consist"] == 0.0
    assert tool_metrics(["A", "B"], ["B", "A"])["f1"] == 1.0
    assert tool_metrics([], ["A"])["f1"] == 0.0
    assert tool_metrics(["A", "A", "C"], ["A"]) == pytest.approx(
        {"TP": 1, "FP": 2, "FN": 0, "consist": 0, "precision": 1 / 3, "recall": 1.0, "f1": 0.5})
    # upstream's empty case: no tool on either side is consistent but scores 0
    assert tool_metrics([], []) == {"TP": 0, "FP": 0, "FN": 0, "consist": 1, "precision": 0.0, "recall": 0.0, "f1": 0.0}


@pytest.mark.parametrize(
    "action, fragment",
    [
        ("<tool_call>{oops</tool_call>", "not valid JSON"),
        (call("DeleteAccount"), "no tool named"),
        (call("SearchFunds", keyword=5), "is not of type"),
        (call("SearchFunds", keyword="__import__('os').system('ls')"), "no recorded output"),
    ],
)
def test_bad_actions(data_file: Path, action: str, fragment: str) -> None:
    env = FinMCPEnv(data_path=data_file)
    env.reset(options={"task_id": "2"})
    obs, _, terminated, _, info = env.step(action)
    assert fragment in obs and not terminated
    assert info["action_valid"] is (fragment == "no recorded output")


REFUSED_CALLS = {
    "unknown tool named with code": call("__import__('os').system('id')"),
    "arguments against the schema": call("SearchFunds", keyword=5),
    "refused next to a malformed block": call("DeleteAccount") + "<tool_call>{oops</tool_call>",
}


@pytest.mark.parametrize("after_steps", [0, 1])
@pytest.mark.parametrize("refused", list(REFUSED_CALLS))
@pytest.mark.parametrize("task_id", ["1", "2", "201", "202", "602"])
def test_refused_calls_take_no_recorded_step(data_file: Path, task_id: str, refused: str, after_steps: int) -> None:
    """A call the env refuses (unknown tool, schema violation) once advanced the recorded sequence,
    so the oracle skipped a step and a solvable task scored 0. The refused call still counts as a
    predicted name (upstream reads every call of the messages), so every recorded call is made
    but the sample is not consistent."""
    env = FinMCPEnv(data_path=data_file)
    env.reset(options={"task_id": task_id})
    for _ in range(after_steps):
        env.step(env.oracle()[0])
    plan = env.oracle()
    _, _, terminated, _, info = env.step(REFUSED_CALLS[refused])
    assert not info["action_valid"] and not terminated
    assert env.oracle() == plan, "a refused call must not change what is left to do"
    for _ in range(20):
        _, reward, terminated, _, info = env.step(env.oracle()[0])
        if terminated:
            break
    assert terminated and info["finmcp_FN"] == 0, info["finmcp_metrics"]
    assert info["finmcp_FP"] == 1 and not info["won"]
    assert ("scorable" in info) is (refused == "refused next to a malformed block")


@pytest.mark.parametrize("action", ["", "y" * 300_000])
def test_empty_and_huge(data_file: Path, action: str) -> None:
    env = FinMCPEnv(data_path=data_file)
    env.reset(options={"task_id": "1"})
    _, _, terminated, _, info = env.step(action)
    assert info["action_valid"] is False and not terminated


def test_unknown_task_and_missing_data(data_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(UnknownTaskError):
        FinMCPEnv(data_path=data_file).reset(options={"task_id": "999"})
    with pytest.raises(DataNotFoundError, match="fixtures"):
        FinMCPEnv(data_path=tmp_path)
    monkeypatch.setenv("AGENTGYM_DATA", str(tmp_path))
    with pytest.raises(DataNotFoundError):
        FinMCPEnv()


def test_later_turns_are_answered_from_the_recorded_history(data_file: Path) -> None:
    """As DianJin-TIR's inference: turn 2 sees the recorded turn 1 (calls, outputs, answer), not the model's."""
    env = FinMCPEnv(data_path=data_file)
    _, info = env.reset(options={"task_id": "602"})
    assert [m["role"] for m in info["messages"]] == ["user"], "no system prompt of our own"
    env.step(call("SearchFunds", keyword="anything"))
    _, _, _, _, info = env.step("My own, different answer.")
    prompt = info["prompt_messages"]
    recorded = json.loads((data_file).read_text())[-1]["messages"]
    assert [m["role"] for m in prompt] == [m["role"] for m in recorded[:5]]
    assert prompt[3]["content"] == recorded[3]["content"] and "different answer" not in json.dumps(prompt)
    _, _, _, _, info = env.step(call("GetFundAnnouncements", fund_code="F0001"))
    assert info["prompt_messages"][-2]["tool_calls"][0]["function"]["name"] == "GetFundAnnouncements"
    assert info["prompt_messages"][-1]["role"] == "tool"


def test_turn_stops_executing_past_twenty_calls(data_file: Path) -> None:
    """Upstream executes a message of calls while the turn's executed calls number at most 20;
    the next message of calls is counted, not executed, and the turn ends."""
    env = FinMCPEnv(data_path=data_file)
    env.reset(options={"task_id": "602"})
    many = call("BatchGetFundTradeRules", fund_codes=["F0001"]) * 7
    for _ in range(3):  # 21 calls executed
        obs, _, terminated, _, info = env.step(many)
        assert "not executed" not in obs and not terminated
    obs, _, terminated, _, info = env.step(call("SearchFunds", keyword="bond"))
    assert "not executed" in obs and not terminated
    assert info["prompt_messages"][-1]["content"] == "And what did it announce recently?"
    assert info["finmcp_called"][-1] == "SearchFunds" and len(info["finmcp_called"]) == 22


def test_benchmark_metrics_from_final_infos(data_file: Path) -> None:
    env = FinMCPEnv(data_path=data_file)
    finals = [play_oracle(env, task_id, plan_at_reset=True).info for task_id in env.task_ids()]
    report = FinMCPEnv.benchmark_metrics(finals)
    assert report["overall"]["N"] == 5 and report["overall"]["micro_F1"] == 1.0 and report["overall"]["consist_mean"] == 1.0
    assert set(report["by_task"]) == {"single_step", "multi_step", "multi_turn"}
    assert set(report["by_difficulty"]) == {"easy", "medium", "hard"}
    assert FinMCPEnv.benchmark_metrics([{"finmcp_TP": 1}]) == {}


def test_eval_writes_upstream_tables_into_the_summary(data_file: Path, tmp_path: Path) -> None:
    from agentgym_suite.evaluation.runner import evaluate

    result = evaluate("FinMCP-v0", "oracle", out_dir=tmp_path, env_kwargs={"data_path": str(data_file)}, progress=False)
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["benchmark_metrics"] == result.summary["benchmark_metrics"]
    assert summary["benchmark_metrics"]["overall"]["N"] == 5 and summary["benchmark_metrics"]["overall"]["macro_F1"] == 1.0
    assert summary["comparable_to_leaderboard"] is False and len(summary["leaderboard_departures"]) == 2
