"""The trainer with ``env_workers: openenv://…``: one training step whose envs are sessions on
``agentgym serve``, on the same trajectories as inline."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentgym_suite.trainers import AgentGRPOTrainer
from agentgym_suite.trainers.trajectory_log import read_step
from serving.conftest import ServerProcess
from trainers.conftest import tiny_config

TIMING = ("wall_s", "policy_s")


@pytest.mark.slow  # two tiny training steps; the engine-level pool tests cover openenv:// in the default run
def test_trainer_steps_on_served_envs_as_inline(tools_server: ServerProcess, tmp_path: Path) -> None:
    served = f"openenv://127.0.0.1:{tools_server.port}"
    assert tiny_config(str(tmp_path / "c"), env_workers=served).env_workers == served
    runs = {}
    for name, workers in (("inline", "1"), ("served", served)):
        out = tmp_path / name
        trainer = AgentGRPOTrainer(args=tiny_config(str(out), env_id="SyntheticTools-v0", env_workers=workers,
                                                    max_steps=1, max_turns=2))
        trainer.train()
        assert trainer.state.global_step == 1
        rows = read_step(out / "trajectories" / "step_000001.jsonl")
        runs[name] = [{k: v for k, v in row.items() if k not in TIMING} for row in rows]
    for a, b in zip(runs["inline"], runs["served"]):
        for ta, tb in zip(a["turns"], b["turns"]):
            assert {k: (v, tb.get(k)) for k, v in ta.items() if v != tb.get(k)} == {}
    assert runs["served"] and runs["served"] == runs["inline"]
    assert not any(row.get("error") for row in runs["served"])
