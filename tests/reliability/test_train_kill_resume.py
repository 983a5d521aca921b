"""``agentgym train`` killed with SIGKILL at random points and re-run with ``--resume``: no data lost.

A tiny-model run on ``ReliabilityHang-v0`` checkpoints every step and logs every step's
trajectories. It is killed several times — a few seconds after a step's trajectories were
written (mid-update, mid-save or in the next rollout) and the moment a checkpoint directory
appears (mid-save, leaving a partial checkpoint) — and re-run with ``--resume`` until it
finishes. Then the final step equals ``max_steps``; every step has exactly one complete
trajectory file of valid JSON lines, none duplicated or lost; and the tasks of every step
are those of an uninterrupted run with the same seed.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BATCH = 4
"""Episodes per step: 2 tasks x group of 2."""

CONFIG = """\
output_dir: {out}
model_name_or_path: tiny
env_id: ReliabilityHang-v0
env_kwargs: {{n_tasks: 8}}
credit: grpo
group_size: 2
per_device_train_batch_size: {batch}
max_steps: {max_steps}
max_turns: 2
max_completion_length: 4
prompt_format: single
row_layout: turn
learning_rate: 1.0e-3
beta: 0.0
bf16: false
use_cpu: true
gradient_checkpointing: false
logging_steps: 1
save_strategy: steps
save_steps: 1
save_trajectories: true
report_to: none
disable_tqdm: true
seed: 3
"""


def _config(tmp_path: Path, name: str, max_steps: int) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(CONFIG.format(out=tmp_path / name, batch=BATCH, max_steps=max_steps), encoding="utf-8")
    return path


def _command(config: Path, resume: bool) -> list[str]:
    return [sys.executable, "-m", "reliability.train_cli", "train", str(config), *(["--resume"] if resume else [])]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}


def _checkpoints(out: Path) -> list[int]:
    return sorted(int(p.name.split("-")[1]) for p in out.glob("checkpoint-*") if p.is_dir()) if out.is_dir() else []


def _kill_when(proc: subprocess.Popen, ready: callable[[], bool], delay: float) -> bool:
    """SIGKILL ``proc`` ``delay`` seconds after ``ready()``; False when it exited first."""
    while proc.poll() is None and not ready():
        time.sleep(0.002)
    time.sleep(delay)
    if proc.poll() is not None:
        return False
    proc.kill()
    proc.wait()
    return True


def _killed_then_resumed(config: Path, out: Path, kills: list[str], rng: random.Random) -> tuple[list[str], str]:
    """Kill the run once per entry of ``kills`` (``after_trajectories`` or ``mid_save``), re-running with
    ``--resume``; then run it to the end. Returns where each kill landed and the final stdout."""
    landed = []
    for how in kills:
        started = time.time()
        saved = _checkpoints(out)
        target = (saved[-1] if saved else 0) + 1
        step_file = out / "trajectories" / f"step_{target:06d}.jsonl"
        proc = subprocess.Popen(_command(config, resume=bool(landed)), stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, env=_env(), cwd=ROOT)
        if how == "mid_save":
            hit = _kill_when(proc, lambda target=target, saved=saved: (out / f"checkpoint-{target}").is_dir() and target not in saved, 0.0)
        else:
            def written(step_file: Path = step_file, started: float = started) -> bool:
                return step_file.is_file() and step_file.stat().st_mtime >= started
            hit = _kill_when(proc, written, rng.uniform(0.0, 4.0))
        stderr = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        proc.stderr and proc.stderr.close()
        assert hit, f"the run ended before the kill ({how}); stderr tail:\n{stderr[-3000:]}"
        landed.append(f"{how} at step {target}, checkpoints then {_checkpoints(out)}")
    final = subprocess.run(_command(config, resume=True), capture_output=True, env=_env(), cwd=ROOT, timeout=600)
    assert final.returncode == 0, f"resume failed after kills {landed}:\n{final.stderr.decode()[-4000:]}"
    return landed, final.stdout.decode()


def _steps(out: Path, max_steps: int) -> dict[int, list[dict]]:
    """Every step's trajectory lines, checked: one file per step, valid JSON, one copy of each episode."""
    files = sorted(p.name for p in (out / "trajectories").glob("step_*.jsonl"))
    assert files == [f"step_{s:06d}.jsonl" for s in range(1, max_steps + 1)], files
    steps = {}
    for step in range(1, max_steps + 1):
        lines = (out / "trajectories" / f"step_{step:06d}.jsonl").read_text(encoding="utf-8").splitlines()
        records = [json.loads(line) for line in lines]  # a torn or doubled line fails here
        assert len(records) == BATCH, f"step {step} holds {len(records)} episodes, expected {BATCH}"
        assert sorted(r["traj"] for r in records) == [f"{step - 1}:{i}" for i in range(BATCH)]  # step:position
        assert all(r["step"] == step and r["error"] is None and r["turns"] for r in records)
        steps[step] = records
    return steps


def _final_step(out: Path, max_steps: int) -> int:
    state = json.loads((out / f"checkpoint-{max_steps}" / "trainer_state.json").read_text(encoding="utf-8"))
    return int(state["global_step"])


def _task_order(steps: dict[int, list[dict]]) -> dict[int, list[str]]:
    return {s: [r["task_id"] for r in sorted(rs, key=lambda r: int(r["traj"].rsplit(":", 1)[1]))]
            for s, rs in steps.items()}


def _dataloader_order(config: Path, max_steps: int, tmp_path: Path) -> dict[int, list[str]]:
    """Tasks per step of an uninterrupted run, read from the trainer's own (seeded) dataloader."""
    from agentgym_suite.commands.train import parse_config
    from agentgym_suite.trainers import AgentGRPOTrainer

    args = parse_config(str(config), ["--output_dir", str(tmp_path / "order")])
    trainer = AgentGRPOTrainer(args=args)
    order = {}
    for step, batch in enumerate(trainer.get_train_dataloader(), start=1):
        order[step] = [str(x["task_id"]) for x in batch]
        if step == max_steps:
            break
    return order


def test_one_kill_mid_save_then_resume_loses_nothing(tmp_path: Path) -> None:
    max_steps = 2
    config = _config(tmp_path, "resumed", max_steps)
    out = tmp_path / "resumed"
    landed, stdout = _killed_then_resumed(config, out, ["mid_save"], random.Random(0))
    assert f"done after {max_steps} steps" in stdout
    assert _final_step(out, max_steps) == max_steps
    steps = _steps(out, max_steps)
    assert _task_order(steps) == _dataloader_order(config, max_steps, tmp_path), landed


@pytest.mark.slow
def test_three_random_kills_then_resume_match_an_uninterrupted_run(tmp_path: Path) -> None:
    max_steps = 4
    reference_config = _config(tmp_path, "reference", max_steps)
    done = subprocess.run(_command(reference_config, resume=False), capture_output=True, env=_env(), cwd=ROOT,
                          timeout=600)
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    expected = _task_order(_steps(tmp_path / "reference", max_steps))
    assert expected == _dataloader_order(reference_config, max_steps, tmp_path)

    config = _config(tmp_path, "resumed", max_steps)
    out = tmp_path / "resumed"
    rng = random.Random(11)
    landed, stdout = _killed_then_resumed(config, out, ["after_trajectories", "mid_save", "after_trajectories"], rng)
    assert f"done after {max_steps} steps" in stdout
    assert _final_step(out, max_steps) == max_steps
    assert _task_order(_steps(out, max_steps)) == expected, landed
