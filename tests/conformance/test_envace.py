"""EnvACE conformance: the released code's outputs on the fixed inputs of ``envace/cases.py``
(``envace/expected.json``, made by ``envace/regenerate_expected.py`` at the upstream commit recorded
in it) must equal ours: the role-wise advantages with the empty-row penalty, the Caller parser's
verdicts, the judge's reading of its replies and its request, and whole rehearsed episodes
(rewards per closed turn, where a tool error or a malformed message ends them, and how many
Simulator calls they make). Departures are the ones ``cases`` declares, each with its reason."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch

from agentgym_suite.methods.envace import RehearsalEnv
from agentgym_suite.methods.envace.released_calls import read_released
from agentgym_suite.methods.envace.scripted import ScriptedBackend
from agentgym_suite.envs.shared.checklists import VERDICT_SCHEMA, ChecklistJudge, read_verdict
from agentgym_suite.trainers.credit import get_credit_assigner
from agentgym_suite.trainers.credit.base import CreditBatch
from tests.conformance.envace import cases

EXPECTED = json.loads((Path(__file__).parent / "envace" / "expected.json").read_text(encoding="utf-8"))


def test_expected_file_names_its_upstream() -> None:
    assert EXPECTED["upstream"]["repo"] == "Within-yao/EnvACE" and len(EXPECTED["upstream"]["commit"]) == 40


# ---------------------------------------------------------------------- advantages
def test_role_wise_advantages_with_the_empty_row_penalty_match_upstream() -> None:
    rows = cases.ADVANTAGE_ROWS
    returns = [r["episode_reward"] / r.get("num_checklists", 1) / r.get("max_num_turns", 2) for r in rows]
    batch = CreditBatch(
        group_ids=[r["uid"] for r in rows], traj_ids=[r["traj"] for r in rows], turn_idx=list(range(len(rows))),
        roles=[r["role"] for r in rows], returns=torch.tensor(returns),
        invalid=torch.tensor([not r["text"].strip() for r in rows]), completion_mask=torch.ones(len(rows), 3),
        extras={"task_ids": [r["uid"] for r in rows]})  # upstream groups by the task's uid (and the role)
    got = get_credit_assigner("envace").advantages(batch).advantages[:, 0].tolist()
    assert got == pytest.approx(EXPECTED["advantages"], abs=1e-6)


# ---------------------------------------------------------------------- the Caller parser
@pytest.mark.parametrize("name", sorted(cases.CALLER_MESSAGES))
def test_the_released_caller_parser_reading_matches_upstream(name: str) -> None:
    upstream = EXPECTED["caller_readings"][name]
    ours = read_released(cases.CALLER_MESSAGES[name])
    got = {"error": ours.error, "calls": [[n, a] for n, a in ours.calls],
           "content": ours.content if ours.error is None else cases.CALLER_MESSAGES[name]}
    if name in cases.PARSER_DEPARTURES:
        assert upstream["error"] is not None and got["error"] is None and got["calls"], cases.PARSER_DEPARTURES[name]
        return
    assert got == upstream


# ---------------------------------------------------------------------- the judge
@pytest.mark.parametrize("name", sorted(cases.JUDGE_REPLIES))
def test_the_judge_reply_is_read_as_upstream_reads_it(name: str) -> None:
    upstream = EXPECTED["judge_verdicts"][name]
    reply = cases.JUDGE_REPLIES[name]
    judge = ChecklistJudge(lambda prompt: reply)
    verdict = judge.assess("prompt")
    assert judge.calls == upstream["attempts"]  # a reply that is not JSON is asked again, 5 times in all
    assert verdict.retry == upstream["api_failed"]
    if name in cases.JUDGE_DEPARTURES:  # upstream trusts the server's schema; ours checks it
        assert upstream["call_success"] and verdict.problem and not verdict.answer, cases.JUDGE_DEPARTURES[name]
        return
    assert verdict.answer == bool(upstream["answer"]) and (not verdict.problem) == upstream["call_success"]
    assert read_verdict(reply).answer == verdict.answer


def test_the_judge_request_samples_as_released_and_asks_for_the_schema() -> None:
    from agentgym_suite.llm.openai_backend import OpenAIBackend

    upstream = EXPECTED["judge_request"]
    params = ChecklistJudge("openai:judge@http://127.0.0.1:9/v1").sampling(seed=3)
    assert (params.temperature, params.top_p, params.max_new_tokens) == (
        upstream["temperature"], upstream["top_p"], upstream["max_tokens"])
    body = OpenAIBackend("judge", "http://127.0.0.1:9/v1")._body([{"role": "user", "content": "p"}], None, params, None)
    ours, theirs = body["response_format"], upstream["response_format"]
    assert ours["type"] == theirs["type"] == "json_schema"
    assert ours["json_schema"]["name"] == theirs["json_schema"]["name"] and ours["json_schema"]["strict"] is True
    annotations = ("title", "description")  # documentation-only schema keywords
    assert ours["json_schema"]["schema"] == {k: v for k, v in theirs["json_schema"]["schema"].items() if k not in annotations}
    assert ours["json_schema"]["schema"] == VERDICT_SCHEMA


# ---------------------------------------------------------------------- episodes
@pytest.fixture(scope="module")
def task_data(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("envace-conformance") / "train.json"
    path.write_text(json.dumps([cases.TASK_ITEM]), encoding="utf-8")
    return str(path)


def _play(task_data: str, script: dict[str, list[str]], **env_kwargs: Any) -> dict[str, Any]:
    simulator = list(script["simulator"])
    backend = ScriptedBackend(lambda name, arguments: simulator.pop(0) if simulator else "nothing left")
    env = RehearsalEnv(base_env="ChecklistTools-v0", base_env_kwargs={"data_path": task_data}, world_model=backend,
                       judge=lambda prompt: cases.verdict_text(cases.snippet_verdict(prompt)), grounding="task",
                       **env_kwargs)
    env.reset(options={"task_id": cases.TASK_ID})
    total, steps, terminated, info = 0.0, 0, False, {}
    for action in script["caller"]:
        _, reward, terminated, _, info = env.step(action)
        total, steps = total + reward, steps + 1
        if terminated:
            break
    return {"turn_rewards": info["checklist_turn_scores"], "score": total, "done": terminated, "caller_steps": steps,
            "simulator_calls": len(backend.calls),
            "validation_rewards": [g.validation_reward for g in env.episode_generations]}


@pytest.mark.parametrize("name", sorted(cases.EPISODES))
def test_rehearsed_episode_matches_the_released_env(task_data: str, name: str) -> None:
    got = _play(task_data, cases.EPISODES[name])
    upstream = EXPECTED["episodes"][name]
    assert got["turn_rewards"] == pytest.approx(upstream["turn_rewards"])
    assert got["score"] == pytest.approx(upstream["score"])
    assert (got["done"], got["caller_steps"], got["simulator_calls"]) == (
        upstream["done"], upstream["caller_steps"], upstream["simulator_calls"])
    # every simulator row then carries the trajectory's score, as the released rollout gives it
    assert got["validation_rewards"] == [None] * got["simulator_calls"]


def test_the_validation_variant_departs_where_it_says(task_data: str) -> None:
    """Ours, opt-in: a block that does not parse is answered by the simulator (one more call)."""
    script = cases.EPISODES["malformed_json_in_turn_2"]
    got = _play(task_data, script, variant="validation")
    upstream = EXPECTED["episodes"]["malformed_json_in_turn_2"]
    assert got["simulator_calls"] == upstream["simulator_calls"] + 1 and got["score"] == pytest.approx(upstream["score"])


# ---------------------------------------------------------------------- updates per iteration
@pytest.mark.parametrize("config", ["configs/envace_checklist_qwen3_8b.yaml", "configs/envace_synthetic_qwen3_8b.yaml"])
def test_one_optimizer_update_per_iteration_as_upstream(config: str) -> None:
    from agentgym_suite.commands.train import parse_config

    upstream = {u["updates"] for u in EXPECTED["updates_per_iteration"]}
    args = parse_config(str(Path(__file__).resolve().parents[2] / config), ["--bf16", "false"])
    # however many rows a generation batch has: rows_per_update unset, the micro-batches all accumulate into one step
    assert args.rows_per_update is None and args.optimizer_steps_per_generation == 1
    assert {args.steps_per_generation // args.gradient_accumulation_steps} == upstream == {1}
