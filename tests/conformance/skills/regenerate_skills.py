"""Regenerate ``expected.json``: which released skill texts upstream's ``SkillProvider`` picks.

Runs the authors' provider (``verl/trainer/ppo/rlsd_utils.py`` of ZJU-REAL/SDAR at the commit
pinned in ``agentgym_suite/envs/shared/skills_data.py``) from a bare git mirror on fixed inputs:
ALFWorld game paths, Search (data source, prompt) pairs and WebShop prompts (data source
``text``), for every task type and every branch of its rules. Each skill text is replaced by its
name before the pick, so the file records names only (no upstream text). Not run by pytest:

    python tests/conformance/skills/regenerate_skills.py /work/.mirror/ZJU-REAL+SDAR/repo

(needs torch, which the provider imports; the suite's venv has it).
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parents[2]))
sys.path.insert(0, str(HERE))

from agentgym_suite.envs.shared.skills_data import PINNED, UPSTREAM_COMMIT, UPSTREAM_REPO  # noqa: E402
from cases import ALFWORLD_PATHS, SEARCH_CASES, WEBSHOP_PROMPTS  # noqa: E402


def _show(git_dir: str, path: str) -> bytes:
    return subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{UPSTREAM_COMMIT}:{path}"],
                          check=True, capture_output=True).stdout


def main(git_dir: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for rel, _, _ in PINNED:
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(_show(git_dir, f"skills/{rel}"))
        (root / "rlsd_utils.py").write_bytes(_show(git_dir, "verl/trainer/ppo/rlsd_utils.py"))
        spec = importlib.util.spec_from_file_location("upstream_rlsd_utils", root / "rlsd_utils.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)

        def provider(env: str):
            made = module.SkillProvider(str(root / env))
            made.skill_contents = {name: f"<{name}>" for name in made.skill_contents}
            return made

        alfworld, search, webshop = provider("alfworld"), provider("search"), provider("webshop")
        expected = {
            "upstream": {"repo": UPSTREAM_REPO, "commit": UPSTREAM_COMMIT, "file": "verl/trainer/ppo/rlsd_utils.py"},
            "alfworld": {path: alfworld.get_privileged_info(path) for path in ALFWORLD_PATHS},
            "search": [[source, prompt, search.get_privileged_info_from_data_source(source, prompt)]
                       for source, prompt in SEARCH_CASES],
            "webshop": [[prompt, webshop.get_privileged_info_from_data_source("text", prompt)]
                        for prompt in WEBSHOP_PROMPTS],
        }
    (HERE / "expected.json").write_text(json.dumps(expected, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/work/.mirror/ZJU-REAL+SDAR/repo")
