"""FinMCP conformance: the cases of ``finmcp/cases.py`` played through ``FinMCPEnv`` must give
the numbers DianJin-TIR's ``eval/evaluation.py`` gave on the same answers (``expected_metrics.json``,
made by ``finmcp/regenerate_expected.py`` at the upstream commit recorded in it): per-sample
TP/FP/FN/consist, and the macro/micro tables overall and by scenario, difficulty and task type."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentgym_suite.envs.finmcp import FinMCPEnv
from tests.conformance.finmcp.cases import MALFORMED, cases, env_samples

EXPECTED = json.loads((Path(__file__).parent / "finmcp" / "expected_metrics.json").read_text(encoding="utf-8"))


def _action(step: list[tuple[str, dict[str, Any]]] | str) -> str:
    if step == MALFORMED:
        return "<tool_call>{not json</tool_call>"
    if isinstance(step, str):
        return step
    return "\n".join("<tool_call>" + json.dumps({"name": n, "arguments": a}) + "</tool_call>" for n, a in step)


@pytest.fixture(scope="module")
def final_infos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    path = tmp_path_factory.mktemp("finmcp-conformance") / "cases.json"
    path.write_text(json.dumps(env_samples(), ensure_ascii=False), encoding="utf-8")
    env = FinMCPEnv(data_path=path)
    finals: dict[str, dict[str, Any]] = {}
    for number, case in enumerate(cases()):
        env.reset(options={"task_id": str(1000 + number)})
        terminated, info = False, {}
        for turn_number, turn in enumerate(case.turns):
            for step in turn:
                if terminated or env._turn_index != turn_number:  # the env cut the turn (call limit)
                    break
                _, _, terminated, _, info = env.step(_action(step))
        assert terminated, case.case_id
        finals[case.case_id] = info
    return finals


def test_expected_file_names_its_upstream() -> None:
    assert EXPECTED["upstream"]["repo"] == "aliyun/qwen-dianjin" and len(EXPECTED["upstream"]["commit"]) == 40
    assert EXPECTED["samples_scored"] == len(cases()) - 1  # the inference error is dropped


@pytest.mark.parametrize("case_id", [c.case_id for c in cases()])
def test_per_sample_counts_match_upstream(final_infos: dict[str, dict[str, Any]], case_id: str) -> None:
    info = final_infos[case_id]
    upstream = EXPECTED["per_sample"].get(case_id)
    if upstream is None:  # upstream's inference raised on this answer and its evaluation dropped it
        assert info.get("scorable") is False
        return
    assert info.get("scorable", True) is True
    assert {k: info[f"finmcp_{k}"] for k in ("TP", "FP", "FN", "consist")} == {
        k: upstream[k] for k in ("TP", "FP", "FN", "consist")}
    assert (info["finmcp_scenario"], info["finmcp_difficulty"], info["finmcp_task"]) == (
        upstream["class_Level1"], upstream["class_difficulty"], upstream["task"])


def test_tables_match_upstream(final_infos: dict[str, dict[str, Any]]) -> None:
    report = FinMCPEnv.benchmark_metrics(list(final_infos.values()))
    assert report["overall"] == EXPECTED["overall"]
    assert report["by_scenario"] == EXPECTED["by_scenario"]
    assert report["by_difficulty"] == EXPECTED["by_difficulty"]
    assert report["by_task"] == EXPECTED["by_task"]
