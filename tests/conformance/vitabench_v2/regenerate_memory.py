"""Regenerate ``memory.json``: upstream VitaBench 2.0's rewrite and full-context memories on the fixture's interactions.

Not run by pytest. Run it with the upstream source on ``PYTHONPATH`` (see ``regenerate_metrics.py``)::

    cd /work/scratch/vita2 && VITA_MODEL_CONFIG_PATH=/tmp/models.yaml PYTHONPATH=src \\
        /work/scratch/vita/venv/bin/python /work/wt/vita2/tests/conformance/vitabench_v2/regenerate_memory.py

For each user of ``tests/envs/vitabench_v2_fixture.py`` the subtasks' interactions are fed in
order to upstream's memories built by its factory (``create_memory``, so ``memory.yaml``'s
settings apply) and the memory text is stored after each update:

- ``formatted``: upstream's rendering of each subtask's interactions (what a rewrite is sent);
- ``full_context``: the full-context memory's ``read()``;
- ``rewrite_no_model``: the rewrite memory with no model (it appends);
- ``rewrite_model``: the rewrite memory with a model whose reply is ``summary <n>`` (``generate``
  replaced by a recorder); ``rewrite_calls`` holds what each call got: the message roles, whether
  the current memory and the new interactions are in the request, and ``max_tokens``;
- ``rewrite_failing``: the rewrite memory with a model that raises (upstream's append fallback).
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
from pathlib import Path

import vita.memory.rewrite_memory as rewrite_module
from vita.memory import create_memory

HERE = Path(__file__).resolve().parent
FIXTURE = HERE.parents[1] / "envs" / "vitabench_v2_fixture.py"
OUT = HERE / "memory.json"
MIRROR = Path("/work/.mirror/meituan-longcat+VitaBench-2.0/repo")


class Reply:
    def __init__(self, content: str) -> None:
        self.content = content


def fixture_users() -> list[dict]:
    spec = importlib.util.spec_from_file_location("vitabench_v2_fixture", FIXTURE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.tasks()


def run_user(user: dict) -> dict:
    calls: list[dict] = []
    memories = {name: create_memory(memory_type=kind, language="english") for name, kind in
                (("full_context", "full_context"), ("rewrite_no_model", "rewrite"), ("rewrite_model", "rewrite"),
                 ("rewrite_failing", "rewrite"))}
    out: dict[str, list] = {"formatted": [], **{name: [] for name in memories}}
    for subtask in user["subtasks"]:
        interactions = subtask.get("interactions") or []
        new_text = rewrite_module.RewriteMemory._format_interactions(interactions)
        out["formatted"].append(new_text)
        for name, memory in memories.items():
            if name == "rewrite_model":
                current = memory._memory_text

                def fake(model, messages, max_tokens=None, current=current, new_text=new_text, **kwargs):
                    calls.append({"roles": [m.role for m in messages], "model": model, "max_tokens": max_tokens,
                                  "has_current": bool(current) and current in messages[1].content,
                                  "has_new": new_text in messages[1].content})
                    return Reply(f"  summary {len(calls)}  ")

                rewrite_module.generate = fake
                memory.update(interactions, llm="agent-model", llm_args={"temperature": 0.0, "max_tokens": 99})
            elif name == "rewrite_failing":
                def boom(**kwargs):
                    raise RuntimeError("model down")

                rewrite_module.generate = boom
                memory.update(interactions, llm="agent-model")
            else:
                memory.update(interactions)
            out[name].append(memory.read())
    out["rewrite_calls"] = calls
    return out


def main() -> None:
    commit = subprocess.run(["git", f"--git-dir={MIRROR}", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    users = {user["id"]: run_user(user) for user in fixture_users()}
    OUT.write_text(json.dumps({"upstream": "meituan-longcat/VitaBench-2.0", "commit": commit, "users": users},
                              indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
