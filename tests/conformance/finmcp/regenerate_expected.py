"""Regenerate ``expected_metrics.json`` by running DianJin-TIR's ``eval/evaluation.py`` on the cases.

Not run by pytest. Needs a git mirror of aliyun/qwen-dianjin and a scratch virtualenv outside
the project (evaluation.py needs only the standard library)::

    ~/.pyenv/versions/3.11.7/bin/python -m venv /work/scratch/finmcp/venv
    python tests/conformance/finmcp/regenerate_expected.py \\
        --mirror /work/.mirror/aliyun+qwen-dianjin/repo --python /work/scratch/finmcp/venv/bin/python

It writes the cases in upstream's prediction format (:mod:`.cases`) to a scratch folder, runs
upstream's per-sample and aggregate functions on them in the scratch interpreter exactly as its
``main()`` chains them (errors dropped, samples missing a key skipped), checks that ``main()``
prints the same overall line, and commits only the numbers.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from tests.conformance.finmcp.cases import cases, prediction_samples  # noqa: E402

UPSTREAM_REPO = "aliyun/qwen-dianjin"
UPSTREAM_COMMIT = "fd9b51167d6574470404b30e426bcb3357615f89"
UPSTREAM_FILE = "DianJin-TIR/eval/evaluation.py"
OUT = Path(__file__).with_name("expected_metrics.json")

DRIVER = r'''
import contextlib, importlib.util, io, json, sys
script, data_path = sys.argv[1], sys.argv[2]
sys.argv = ["evaluation.py", "--eval_data_path", data_path]
spec = importlib.util.spec_from_file_location("evaluation", script)
upstream = importlib.util.module_from_spec(spec)
spec.loader.exec_module(upstream)
data = json.load(open(data_path))
kept = [d for d in data if not d.get("error", False)] if upstream.args.drop_error_data else data
records, per_sample = [], {}
for item in kept:
    try:
        row = upstream.get_instance_result(item)
    except KeyError:
        continue
    records.append(row)
    per_sample[str(item["id"])] = row
overall, level1, difficulty, task = upstream.compute_metrics(records)
printed = io.StringIO()
with contextlib.redirect_stdout(printed):
    upstream.main()
json.dump({"per_sample": per_sample, "overall": overall, "by_scenario": level1, "by_difficulty": difficulty,
           "by_task": task, "samples_in": len(data), "samples_scored": len(records),
           "main_stdout": printed.getvalue()}, sys.stdout)
'''


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", required=True, help="bare git directory of aliyun/qwen-dianjin")
    parser.add_argument("--python", required=True, help="interpreter of the scratch virtualenv")
    options = parser.parse_args()
    source = subprocess.run(["git", f"--git-dir={options.mirror}", "show", f"{UPSTREAM_COMMIT}:{UPSTREAM_FILE}"],
                            check=True, capture_output=True, text=True).stdout
    with tempfile.TemporaryDirectory(prefix="finmcp-conformance-") as scratch:
        script = Path(scratch) / "evaluation.py"
        script.write_text(source, encoding="utf-8")
        predictions = Path(scratch) / "predictions.json"
        predictions.write_text(json.dumps(prediction_samples(), ensure_ascii=False, indent=1), encoding="utf-8")
        result = json.loads(subprocess.run([options.python, "-c", DRIVER, str(script), str(predictions)], check=True,
                                           capture_output=True, text=True, cwd=scratch).stdout)
    printed = result.pop("main_stdout")
    overall_line = "\n".join(f"{k} {v}" for k, v in result["overall"].items())
    if overall_line not in printed:
        raise SystemExit(f"upstream main() printed other overall numbers:\n{printed}")
    ids = {str(1000 + n): case.case_id for n, case in enumerate(cases())}
    result["per_sample"] = {ids[k]: v for k, v in result["per_sample"].items()}
    OUT.write_text(json.dumps({"upstream": {"repo": UPSTREAM_REPO, "commit": UPSTREAM_COMMIT, "file": UPSTREAM_FILE},
                               "interpreter": subprocess.run([options.python, "--version"], capture_output=True,
                                                             text=True).stdout.strip(),
                               **result}, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {OUT} ({result['samples_scored']} of {result['samples_in']} samples scored)")


if __name__ == "__main__":
    main()
