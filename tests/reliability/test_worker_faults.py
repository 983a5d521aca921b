"""``agentgym eval`` with env workers: the same records inline and in processes, a worker SIGKILLed
mid-run, the ``--env-workers`` flag, and ScienceWorld's JVMs when their worker dies."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any, Sequence

import pytest

from agentgym_suite.cli import main
from agentgym_suite.evaluation import runner
from agentgym_suite.evaluation.runner import evaluate
from agentgym_suite.rollout import EnvPool
from rollout.worker_fakes import live_descendants, register_worker_fakes

FAULT_ID = register_worker_fakes()
TIMING = ("wall_s", "policy_s")


class GoAgent:
    """A batched agent that says ``go`` in every env."""

    name = "go"

    def reset(self, env: Any, *, seed: int | None = None) -> None:
        pass

    def act(self, observation: Any, info: dict) -> str:
        return "go"

    def reset_batch(self, envs: Sequence[Any], *, seed: int | None = None) -> None:
        pass

    def act_batch(self, observations: Sequence[Any], infos: Sequence[dict]) -> list[str]:
        return ["go"] * len(observations)

    def keep_slots(self, keep: Sequence[int]) -> None:
        pass


def _records(result: Any) -> list[dict]:
    return sorted(({k: v for k, v in r.to_dict().items() if k not in TIMING} for r in result.records),
                  key=lambda r: (r["task_id"], r["attempt"]))


def test_eval_records_are_the_same_inline_and_in_processes(tmp_path: Path) -> None:
    options = {"temperature": 1.0, "max_new_tokens": 4}
    runs = [evaluate(FAULT_ID, "tiny", out_dir=tmp_path / str(workers), seed=4, k=2, max_turns=3, progress=False,
                     agent_options=options, batch_size=4, env_workers=workers) for workers in (1, 2)]
    assert runs[0].summary["episodes"] == 12 and _records(runs[1]) == _records(runs[0])


def test_eval_goes_on_when_a_worker_is_killed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = live_descendants()
    closes: list[float] = []

    class TimedPool(EnvPool):
        def close(self) -> None:
            started = time.monotonic()
            super().close()
            closes.append(time.monotonic() - started)

    monkeypatch.setattr(runner, "EnvPool", TimedPool)
    kwargs = {"home_pid": os.getpid(), "kill_task": "t3", "once": str(tmp_path / "killed")}
    result = evaluate(FAULT_ID, GoAgent(), out_dir=tmp_path / "run", seed=1, progress=False, env_kwargs=kwargs,
                      batch_size=4, env_workers=2)
    assert result.summary["complete"] and result.summary["episodes"] == 6
    keys = [r.key for r in result.records]
    assert len(keys) == len(set(keys)) == 6  # nothing lost, nothing duplicated
    broken = [r for r in result.records if r.error]
    assert broken and any(r.task_id.startswith("t3") for r in broken)
    assert all(r.error_stage == "step" and "was killed by SIGKILL during step" in r.error for r in broken)
    assert all(r.won for r in result.records if not r.error)
    lines = (tmp_path / "run" / "trajectories.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 6
    assert closes and max(closes) < 10
    assert not (live_descendants() - before), "worker processes were left behind"

    again = evaluate(FAULT_ID, GoAgent(), out_dir=tmp_path / "run", seed=1, progress=False, env_kwargs=kwargs,
                     batch_size=4, env_workers=2, retry_failed=True)
    assert again.ran == len(broken) and all(r.won for r in again.records)


def test_cli_env_workers_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    code = main(["eval", FAULT_ID, "--agent", "oracle", "--out", str(out), "--no-progress", "--json",
                 "--env-workers", "2", "--episodes", "3"])
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["episodes"] == 3 and summary["success_rate"] == 1.0
    for bad in ("0", "lots"):
        assert main(["eval", FAULT_ID, "--out", str(tmp_path / "bad"), "--no-progress", "--env-workers", bad]) == 2
        assert "--env-workers" in capsys.readouterr().err


@pytest.mark.java
def test_no_jvm_outlives_a_killed_scienceworld_worker() -> None:
    from agentgym_suite.registration import entry, missing_requirements

    if missing_requirements(entry("ScienceWorld-v0")):
        pytest.skip("ScienceWorld cannot run here")
    import psutil

    before = live_descendants()
    pool = EnvPool(workers=2)
    try:
        envs = pool.get("ScienceWorld-v0", 2, {"task": 0})
        for env in envs:
            env.reset(seed=0)
        executor = pool.executor
        victim = psutil.Process(executor.workers[0].pid)
        jvms = [p for p in victim.children(recursive=True) if "java" in p.name()]
        assert jvms, "the worker started no JVM"
        os.kill(victim.pid, signal.SIGKILL)
        with pytest.raises(Exception, match="was killed by SIGKILL"):
            envs[0].step("look around")
        fresh = pool.get("ScienceWorld-v0", 2, {"task": 0})  # a fresh worker, and a fresh JVM
        assert fresh[0] is not envs[0] and fresh[0].reset(seed=0)[0]
        gone, alive = psutil.wait_procs(jvms, timeout=10)
        assert not alive, "the killed worker's JVM is still running"
    finally:
        started = time.monotonic()
        pool.close()
        assert time.monotonic() - started < 10
    assert not (live_descendants() - before), "worker processes or JVMs were left behind"
