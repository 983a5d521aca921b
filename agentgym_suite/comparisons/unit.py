"""One unit of a comparison, in a process of its own: ``python -m agentgym_suite.comparisons.unit DIR``.

``DIR/config.yaml`` is the unit's trainer config (``agentgym train DIR/config.yaml`` trains the
same run) and ``DIR/request.json`` says what to do:

* ``{"kind": "start"}`` — evaluate the starting weights on the held-out tasks (the step-0 point of
  every method's learning curve: every method starts from these weights and plays the held-out
  tasks with the same seeds), nothing trained;
* ``{"kind": "train"}`` — train, with held-out evaluations at the config's ``eval_steps`` and
  after the last step.

Held-out episodes land in ``DIR/eval_trajectories/step_XXXXXX.jsonl``, training episodes in
``DIR/trajectories/``, step times in ``DIR/step_times.jsonl``. ``DIR/unit.json`` is written last
(through a rename), so its presence means the unit finished; its process's peak memory is
measured here, which is why a unit has a process of its own.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any

UNIT_FILE = "unit.json"
"""Written last: the unit finished."""


def peak_memory_mb() -> dict[str, float]:
    """This process's peak resident memory and, on a GPU, the peak memory torch allocated (MiB)."""
    import torch

    out = {"peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0}  # Linux: KiB
    if torch.cuda.is_available():
        out["peak_gpu_mb"] = torch.cuda.max_memory_allocated() / 2**20
    return out


def run_unit(unit_dir: Path) -> dict[str, Any]:
    """Run the unit described in ``unit_dir`` and write its ``unit.json``; returns its content."""
    from trl import TrlParser

    from agentgym_suite.trainers.agent_grpo import AgentGRPOTrainer
    from agentgym_suite.trainers.config import AgentGRPOConfig

    request = json.loads((unit_dir / "request.json").read_text())
    # parsed as `agentgym train DIR/config.yaml` parses it
    (config,) = TrlParser((AgentGRPOConfig,)).parse_args_and_config(args=["--config", str(unit_dir / "config.yaml")])
    started = time.perf_counter()
    trainer = AgentGRPOTrainer(args=config)
    if request["kind"] == "start":
        trainer.evaluate()
    else:
        trainer.train()
        evaluated = {int(h["step"]) for h in trainer.state.log_history if "eval_success_rate" in h}
        if trainer.state.global_step not in evaluated:
            trainer.evaluate()
    result = {**request, "credit": config.credit, "seed": config.seed, "steps": trainer.state.global_step,
              "wall_s": time.perf_counter() - started, **peak_memory_mb(),
              "torch_threads": __import__("torch").get_num_threads(), "load": list(os.getloadavg())}
    partial = unit_dir / (UNIT_FILE + ".partial")
    partial.write_text(json.dumps(result, indent=2))
    partial.replace(unit_dir / UNIT_FILE)
    return result


def main(argv: list[str] | None = None) -> int:
    """Command-line entry: ``python -m agentgym_suite.comparisons.unit DIR``."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m agentgym_suite.comparisons.unit UNIT_DIR", file=sys.stderr)
        return 2
    import warnings

    warnings.filterwarnings("ignore", category=FutureWarning, module=r"transformers\..*")
    run_unit(Path(args[0]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
