"""Run every benchmark script and write ``benchmarks/RESULTS.md``: one table of ratios side by
side (env overhead, vector scaling, batched rollout, trainer vs plain TRL, teacher cost,
rehearsal vs real, env worker processes vs inline), the machine it ran on, and each script's full output.

    python benchmarks/run_all.py [--only NAME ...] [--out benchmarks/RESULTS.md]

Numbers come from one run on whatever machine runs this; nothing is copied from elsewhere.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from ratios import meets, parse_ratios  # noqa: E402

SCRIPTS: dict[str, list[str]] = {
    "env_overhead": ["env_overhead.py", "--steps", "150"],
    "scienceworld_speed": ["scienceworld_speed.py", "--repeats", "2"],
    "webshop_searchqa_speed": ["webshop_searchqa_speed.py", "--episodes", "20"],
    "search_r1_speed": ["search_r1_speed.py", "--episodes", "30"],
    "tool_env_speed": ["tool_env_speed.py", "--episodes", "10"],
    "remote_step_cost": ["env_step_cost.py", "Remote-v0", "--steps", "200"],
    "rollout_speed": ["rollout_speed.py"],
    "trainer_speed": ["trainer_speed.py", "--steps", "2"],
    "rehearsal_speed": ["rehearsal_speed.py", "--episodes", "2"],
    "env_workers": ["env_workers.py", "--rounds", "3", "--train"],
    "eval_workers": ["eval_workers.py", "--rounds", "2"],
    "serve_latency": ["serve_latency.py", "--steps", "300"],
    "async_speed": ["async_speed.py", "--quick"],
}
"""Benchmark name -> script and arguments (sized to finish in minutes on 2 cores)."""


def machine() -> str:
    """A one-line description of this machine."""
    mem = ""
    try:
        kb = int(next(line for line in open("/proc/meminfo") if line.startswith("MemTotal")).split()[1])
        mem = f", {kb / 2**20:.0f} GiB RAM"
    except (OSError, StopIteration, ValueError):
        pass
    return f"{platform.machine()} {platform.processor() or ''}, {os.cpu_count()} cores{mem}, Python {platform.python_version()}, {platform.system()} {platform.release()}"


def run(name: str, timeout: float) -> tuple[str, float, int]:
    """Run one benchmark; returns (output, seconds, exit code)."""
    args = SCRIPTS[name]
    start = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, str(HERE / args[0]), *args[1:]], capture_output=True, text=True,
                              timeout=timeout, cwd=HERE.parent)
        output, code = proc.stdout + ("\n" + proc.stderr[-3000:] if proc.returncode else ""), proc.returncode
    except subprocess.TimeoutExpired as exc:
        output, code = (exc.stdout or b"").decode() if isinstance(exc.stdout, bytes) else (exc.stdout or ""), 124
    return output, time.perf_counter() - start, code


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="*", choices=sorted(SCRIPTS), help="run only these benchmarks")
    parser.add_argument("--out", default=str(HERE / "RESULTS.md"))
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per benchmark")
    args = parser.parse_args()
    names = args.only or list(SCRIPTS)
    rows, sections = [], []
    for name in names:
        print(f"== {name} ...", flush=True)
        output, seconds, code = run(name, args.timeout)
        status = "ok" if code == 0 else ("timed out" if code == 124 else f"failed (exit {code})")
        for ratio in parse_ratios(output):
            ok = meets(ratio["value"], ratio["target"])
            rows.append((name, ratio, "yes" if ok else ("no" if ok is False else "-")))
        shown = "\n".join(line for line in output.splitlines() if not line.startswith("RATIO\t"))
        sections.append(f"### {name} ({status}, {seconds:.0f} s)\n\n```\n{shown.strip()}\n```\n")
        print(shown, flush=True)
    lines = [
        "# Performance results",
        "",
        f"Run by `python benchmarks/run_all.py` on {dt.date.today().isoformat()}, on: {machine()}.",
        "Each ratio compares two measurements taken side by side in the same run; the machine is shared and noisy,",
        "so read ratios, not absolute speeds.",
        "",
        "| benchmark | ratio | value | target | met | what |",
        "|---|---|---:|---|---|---|",
    ]
    lines += [f"| {n} | {r['name']} | {r['value']:g} | {r['target']} | {m} | {r['detail']} |" for n, r, m in rows]
    lines += ["", "## Full output", ""] + sections
    Path(args.out).write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
