"""A τ² retail evaluation whose customer and judge are models behind a local OpenAI-compatible stub:
the role client caches their answers, accounts for them, and lets a finished run be rescored."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from agentgym_suite.envs.tau2.env import Tau2Env
from agentgym_suite.evaluation.rescore import rescore
from agentgym_suite.evaluation.runner import evaluate
from agentgym_suite.evaluation.store import TrajectoryStore
from reliability.stub_openai import stub_server

SEED, EPISODES = 5, 3
"""Seed 5 picks retail tasks 62 and 45 (NL assertions: the judge is asked) and 5 (none)."""


def role_play(body: dict[str, Any]) -> str:
    """The stub's answers: a customer who asks twice then stops, and judges that grade every outcome
    met (``judge-a``) or not met (any other judge)."""
    messages = body.get("messages") or []
    system = str(messages[0].get("content") or "") if messages else ""
    if "Expected outcomes:" in str(messages[-1].get("content") or ""):
        outcomes = re.findall(r"^\d+\. ", str(messages[-1]["content"]).split("Expected outcomes:")[-1], re.MULTILINE)
        met = body.get("model") == "judge-a"
        results = [{"expectedOutcome": str(i), "reasoning": "stub", "metExpectation": met} for i in range(len(outcomes))]
        return json.dumps({"results": results})
    assert "<scenario>" in system, "only the customer and the judge talk to the stub"
    turns = sum(1 for m in messages if m.get("role") == "assistant")
    return "###STOP###" if turns >= 2 else f"Hello, I need help with my order (message {turns + 1})."


def _run(out: Path, url: str, judge: str = "judge-a", **options: Any) -> Any:
    kwargs = {"domain": "retail", "user": f"llm:openai:customer@{url}", "judge": f"openai:{judge}@{url}"}
    return evaluate("Tau2-v0", "oracle", out_dir=out, episodes=EPISODES, seed=SEED, env_kwargs=kwargs, progress=False,
                    **options)


def _replies(state: Any) -> list[dict[str, Any]]:
    return [e.body for e in state.answered()]


def _episodes(out: Path) -> dict[str, Any]:
    records = TrajectoryStore(out).load()[0]
    return {key: {"actions": [t.completion_text for t in r.turns], "observations": [t.observation for t in r.turns],
                  "score": r.score, "won": r.won, "final_info": r.turns[-1].info if r.turns else {}}
            for key, r in records.items()}


@pytest.fixture(scope="module")
def first_run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("roles")
    with stub_server(faults={}, reply=role_play) as (url, state):
        result = _run(root / "run1", url)
        yield root, url, state, result


def test_first_run_pays_and_accounts_per_role(first_run: Any) -> None:
    root, _, state, result = first_run
    calls = result.summary["model_calls"]
    requests = _replies(state)
    by_model = {m: sum(1 for b in requests if b["model"] == m) for m in ("customer", "judge-a")}
    assert by_model["customer"] > 0 and by_model["judge-a"] == 2  # two of the three tasks have NL assertions
    assert calls["roles"]["user"]["calls"] == by_model["customer"]
    assert calls["roles"]["judge"]["calls"] == 2
    assert calls["total"]["calls"] == len(requests) == calls["this_invocation"]["calls"]
    assert calls["total"]["cache_hits"] == 0
    assert calls["roles"]["judge"]["prompt_tokens"] > 0 and calls["roles"]["user"]["completion_tokens"] > 0
    assert calls["cache"] == str((root / "model-cache").resolve())
    episodes = _episodes(root / "run1")
    assert {key.split("#")[0] for key in episodes} == {"62", "45", "5"}
    assert all(e["score"] == 1.0 for e in episodes.values())  # the oracle's calls, and judge-a grants every outcome
    assert {e["final_info"]["nl_judge"] for e in episodes.values()} == {f"llm:openai:judge-a@{first_run[1]}"}


def test_second_run_makes_no_call_and_replays_everything(first_run: Any) -> None:
    root, url, state, _ = first_run
    before = len(_replies(state))
    second = _run(root / "run2", url)
    assert len(_replies(state)) == before  # the stub was not asked again
    calls = second.summary["model_calls"]
    assert calls["this_invocation"] == {"calls": 0, "cache_hits": calls["total"]["cache_hits"]}
    assert calls["total"]["cache_hits"] > 0
    assert _episodes(root / "run2") == _episodes(root / "run1")


@pytest.mark.slow  # starts two env worker processes (~10 s)
def test_env_worker_processes_read_and_account_through_the_same_cache(first_run: Any) -> None:
    root, url, state, first = first_run
    before = len(_replies(state))
    result = _run(root / "run-workers", url, env_workers=2)
    assert len(_replies(state)) == before
    calls = result.summary["model_calls"]
    assert calls["this_invocation"] == {"calls": 0, "cache_hits": first.summary["model_calls"]["total"]["calls"]}
    assert _episodes(root / "run-workers") == _episodes(root / "run1")


def test_no_model_cache_asks_again(first_run: Any) -> None:
    root, url, state, _ = first_run
    before = len(_replies(state))
    third = _run(root / "run-uncached", url, model_cache=None)
    assert len(_replies(state)) > before
    assert third.summary["model_calls"]["total"]["cache_hits"] == 0
    assert "model-cache" not in {p.name for p in (root / "run-uncached").iterdir()}
    assert _episodes(root / "run-uncached") == _episodes(root / "run1")


def test_rescore_with_the_same_judge_is_free_and_identical(first_run: Any) -> None:
    root, _, state, first = first_run
    before = len(_replies(state))
    result = rescore("Tau2-v0", root / "run1", root / "rescored-a")
    assert len(_replies(state)) == before
    assert result.summary["model_calls"]["this_invocation"]["calls"] == 0
    info = result.summary["rescore"]
    assert (info["changed_scores"], info["diverged"], info["missing"], info["episodes"]) == (0, 0, 0, EPISODES)
    assert info["judge"] == info["source_judge"]
    assert result.summary["mean_score"] == first.summary["mean_score"]
    assert _episodes(root / "rescored-a") == _episodes(root / "run1")


def test_rescore_with_another_judge_changes_only_its_verdicts(first_run: Any) -> None:
    root, url, state, _ = first_run
    before = len(_replies(state))
    result = rescore("Tau2-v0", root / "run1", root / "rescored-b", judge=f"openai:judge-b@{url}")
    new = _replies(state)[before:]
    assert [b["model"] for b in new] == ["judge-b", "judge-b"]  # only the new judge was asked
    calls = result.summary["model_calls"]
    assert calls["roles"]["user"]["calls"] == 0 and calls["roles"]["user"]["cache_hits"] > 0
    info = result.summary["rescore"]
    assert info["source_judge"].startswith("openai:judge-a") and info["judge"].startswith("openai:judge-b")
    assert info["diverged"] == 0
    old, rescored = _episodes(root / "run1"), _episodes(root / "rescored-b")
    assert old.keys() == rescored.keys()
    judged = set(Tau2Env(domain="retail").nl_tasks())
    changed = 0
    for key, episode in old.items():
        again = rescored[key]
        assert again["actions"] == episode["actions"] and again["observations"] == episode["observations"]
        unchanged = ("won", "score", "nl_judge")
        assert {k: v for k, v in again["final_info"].items() if k not in unchanged} == \
            {k: v for k, v in episode["final_info"].items() if k not in unchanged}
        assert again["final_info"]["nl_judge"] == f"llm:openai:judge-b@{url}"
        if key.split("#")[0] in judged:  # judge-b grants no outcome: the NL part fails
            assert (again["score"], again["won"]) == (0.0, False)
            changed += 1
        else:
            assert (again["score"], again["won"]) == (episode["score"], episode["won"])
    assert info["changed_scores"] == changed


def test_cli_reports_the_accounting_and_prices(first_run: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from agentgym_suite.cli import main

    root, url, _, _ = first_run
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"customer": {"prompt": 1.0, "completion": 2.0}, "judge-b": {"prompt": 3, "completion": 4}}))
    code = main(["eval", "Tau2-v0", "--rescore", str(root / "run1"), "--judge", f"openai:judge-b@{url}",
                 "--out", str(root / "rescored-cli"), "--prices", str(prices), "--no-progress"])
    assert code == 0
    printed = " ".join(capsys.readouterr().out.split())  # the table wraps at the terminal's width
    assert "model-played roles" in printed and "judged by openai:judge-b" in printed
    summary = json.loads((root / "rescored-cli" / "summary.json").read_text())
    judge = summary["model_calls"]["roles"]["judge"]
    # judge-b's verdicts are cached by the earlier rescore: nothing paid, nothing charged
    assert judge["calls"] == 0 and judge["cost"] == 0.0
    assert summary["model_calls"]["total"]["cost"] == 0.0
    assert main(["eval", "Tau2-v0", "--rescore", str(root / "run1"), "--out", str(tmp_path / "x"),
                 "--prices", str(tmp_path / "missing.json")]) == 2


def test_fidelity_world_model_calls_are_cached_and_accounted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from agentgym_suite.cli import main

    with stub_server(faults={}, reply=lambda body: '{"status": "success", "result": "ok"}') as (url, state):
        reports = []
        for out in ("a", "b"):
            assert main(["fidelity", "SyntheticTools-v0", "--world-model", f"openai:wm@{url}", "--episodes", "1",
                         "--out", str(tmp_path / out)]) == 0
            reports.append(json.loads((tmp_path / out / "fidelity.json").read_text()))
            printed = " ".join(capsys.readouterr().out.split())
            asked = len(state.answered())
            assert asked > 0 and ("0 cache hits" if out == "a" else f"0 calls, {asked} cache hits") in printed
    assert len(state.answered()) == asked  # the second run asked nothing
    assert reports[0]["per_tool"] == reports[1]["per_tool"]


def test_the_readme_shows_this_runs_accounting(first_run: Any) -> None:
    """The README's evaluation section shows the accounting table of this very run (its command: 3 retail
    episodes, k=1, seed 5, this stub's customer and judge-a); a change to the roles' calls must update it."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("## An evaluation", 1)[1].split("\n## ", 1)[0]
    assert "--episodes 3 --k 1 --seed 5" in section
    rows = {m[0]: [int(x) for x in m[1:]] for m in
            re.findall(r"^│ (\w+) +│ +(\d+) │ +(\d+) │ +(\d+) │ +(\d+) │", section.split("```text", 2)[1], re.MULTILINE)}
    calls = first_run[3].summary["model_calls"]
    shown = {"judge": calls["roles"]["judge"], "user": calls["roles"]["user"], "total": calls["total"]}
    assert rows == {role: [stats["calls"], stats["cache_hits"], stats["prompt_tokens"], stats["completion_tokens"]]
                    for role, stats in shown.items()}
