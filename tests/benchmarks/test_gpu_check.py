"""``benchmarks/gpu_check.sh --dry-run``: every part of the GPU check runs, with tiny shapes on the CPU."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # ~80 s; the engines it drives are in the default suite (tests/trainers/test_engine_trainer.py)
@pytest.mark.timeout(900)
def test_the_dry_run_writes_every_part(tmp_path: Path) -> None:
    pytest.importorskip("deepspeed", reason="the deepspeed extra (make install) runs ZeRO-3 on CPU")
    target = tmp_path / "gpu_check.json"
    env = {**os.environ, "PYTHON": sys.executable}
    proc = subprocess.run(["bash", str(ROOT / "benchmarks" / "gpu_check.sh"), "--dry-run", "--json", str(target)],
                          env=env, capture_output=True, text=True, timeout=880, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    result = json.loads(target.read_text())
    assert result["device"].startswith("CPU")
    for engine in ("engine_zero3", "engine_fsdp2"):
        part = result[engine]
        # the verl schedule ran: six updates over four micro-batches (updates end inside micro-batches)
        assert part["optimizer_steps_per_batch"] == part["updates"] == 6, engine
        assert result["settings"]["micro_batches"] == 4, engine
        assert part["tokens_per_s"] > 0 and part["peak_gib"] > 0 and part["parameters"] > 0, engine
    assert result["generation"]["new_tokens"] > 0 and result["generation"]["tokens_per_s"] > 0
    trl = result["trainer_vs_trl"]
    assert trl["trl"]["tokens_per_s"] > 0 and trl["ours"]["tokens_per_s"] > 0 and math.isfinite(trl["ratio"])
