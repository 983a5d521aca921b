"""Regenerate ``expected.json`` by running EnvACE's released code on the inputs of :mod:`.cases`.

Not run by pytest. Needs the git mirror of Within-yao/EnvACE and a scratch virtualenv outside
the project with ``httpx``, ``numpy`` and ``torch`` (the released modules import them)::

    ~/.pyenv/versions/3.11.7/bin/python -m venv /work/scratch/envace/venv
    /work/scratch/envace/venv/bin/pip install httpx numpy torch
    /work/scratch/envace/venv/bin/python tests/conformance/envace/regenerate_expected.py \\
        --mirror /work/.mirror/Within-yao+EnvACE/repo

It extracts the upstream commit, loads the released modules by file (the packages' own
``__init__`` files pull in Ray and verl's workers, which these functions do not need) and runs:

* advantages: ``ChecklistEpisodeRewardManager`` (reward_manager/checklist.py), then
  ``apply_invalid_action_penalty`` (verl/trainer/ppo/ray_trainer.py) and
  ``compute_grpo_outcome_advantage`` (verl/trainer/ppo/core_algos.py) with the launcher's
  ``group_by_agent_id=True`` and ``norm_adv_by_std_in_grpo=False``; rows marked invalid as the
  Caller and Simulator agents mark them (empty text);
* the Caller parser: ``tool_parser.parse_tool_calls`` and the assistant content ``ChecklistEnv``
  keeps;
* judge replies: ``checklist_reward.eval_one_check`` against a stand-in HTTP client that answers
  each request with the reply (``JUDGE_RETRY`` = 5 attempts, backoff sleeps skipped);
* episodes: ``envs.ChecklistEnv`` with the real ``ChecklistInteraction`` (its per-standard call
  ``eval_one_check`` replaced by :func:`.cases.snippet_verdict`), every call routed to the
  Simulator as ``MCPChecklistTool`` does in agent mode, and the Simulator's texts read by
  ``tool_simulator_agent._parse_sim_response``.

Functions that sit in modules with heavy imports are taken from the source with ``ast`` and run
as they are. Only their outputs are committed.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import importlib.util
import json
import subprocess
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import cases  # noqa: E402

UPSTREAM_REPO = "Within-yao/EnvACE"
UPSTREAM_COMMIT = "173e9416750670abb58f6aaed8310c82c20a3754"
OUT = HERE / "expected.json"
CHECKLIST = "agent_system/environments/env_package/checklist"


def extract(src: Path, rel: str, names: list[str], namespace: dict[str, Any]) -> dict[str, Any]:
    """Execute the top-level definitions ``names`` of ``src/rel`` in ``namespace``."""
    tree = ast.parse((src / rel).read_text(encoding="utf-8"))
    wanted = [node for node in tree.body if getattr(node, "name", None) in names
              or (isinstance(node, ast.Assign) and any(getattr(t, "id", None) in names for t in node.targets))]
    found = {getattr(n, "name", None) or n.targets[0].id for n in wanted}  # type: ignore[attr-defined]
    missing = set(names) - found
    if missing:
        raise SystemExit(f"{rel}: no top-level {sorted(missing)} at this commit")
    exec(compile(ast.Module(body=wanted, type_ignores=[]), str(src / rel), "exec"), namespace)
    return namespace


def checklist_package(src: Path) -> types.ModuleType:
    """The released checklist env package, loaded without its ``__init__`` (which imports verl)."""
    sys.path.insert(0, str(src))  # simulate_core
    package = types.ModuleType("checklist_pkg")
    package.__path__ = [str(src / CHECKLIST)]
    sys.modules["checklist_pkg"] = package
    for name in ("checklist_reward", "mcp_tool", "tool_parser", "interaction", "envs"):
        spec = importlib.util.spec_from_file_location(f"checklist_pkg.{name}", src / CHECKLIST / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        setattr(package, name, module)
    return package


# ---------------------------------------------------------------------- advantages
class Item:
    def __init__(self, batch: dict[str, Any], non_tensor: dict[str, Any]) -> None:
        self.batch, self.non_tensor_batch = batch, non_tensor


class Batch:
    """The parts of verl's DataProto these functions read."""

    def __init__(self, batch: dict[str, Any], non_tensor: dict[str, Any]) -> None:
        self.batch, self.non_tensor_batch = batch, non_tensor

    def __len__(self) -> int:
        return len(next(iter(self.batch.values())))

    def __getitem__(self, i: int) -> Item:
        return Item({k: v[i] for k, v in self.batch.items()}, {k: v[i] for k, v in self.non_tensor_batch.items()})


def advantages(src: Path) -> list[float]:
    import numpy as np
    import torch
    from collections import defaultdict

    space: dict[str, Any] = {"torch": torch, "np": np, "defaultdict": defaultdict, "DataProto": Batch}
    extract(src, "agent_system/reward_manager/checklist.py", ["ChecklistEpisodeRewardManager"], space)
    extract(src, "verl/trainer/ppo/ray_trainer.py", ["apply_invalid_action_penalty"], space)
    extract(src, "verl/trainer/ppo/core_algos.py", ["compute_grpo_outcome_advantage"], space)
    rows = cases.ADVANTAGE_ROWS
    prompt, response = 4, 6
    lengths = [3 if r["text"].strip() else 1 for r in rows]  # an empty text is a lone end-of-turn token
    attention = torch.zeros(len(rows), prompt + response, dtype=torch.long)
    attention[:, :prompt] = 1
    for i, n in enumerate(lengths):
        attention[i, prompt:prompt + n] = 1
    data = Batch(
        {"prompts": torch.ones(len(rows), prompt, dtype=torch.long), "responses": torch.ones(len(rows), response, dtype=torch.long),
         "attention_mask": attention},
        {"agent_id": np.array([r["role"] for r in rows], dtype=object), "wg_id": np.array(["wg"] * len(rows), dtype=object),
         "data_source": np.array(["checklist"] * len(rows), dtype=object),
         "episode_rewards": np.array([r["episode_reward"] for r in rows], dtype=object),
         "num_checklists": np.array([r.get("num_checklists", 1) for r in rows], dtype=object),
         "max_num_turns": np.array([r.get("max_num_turns", 2) for r in rows], dtype=object),
         # ToolCallerAgent.call and ToolSimulatorAgent.call: valid iff the text is not blank
         "is_action_valid": np.array([1 if r["text"].strip() else 0 for r in rows], dtype=np.int32)})
    data.batch["token_level_scores"] = space["ChecklistEpisodeRewardManager"]({"wg": None}, num_examine=0)(data)
    data, _ = space["apply_invalid_action_penalty"](data, invalid_action_penalty_coef=0.1)
    mask = attention[:, prompt:]
    uid = data.non_tensor_batch["agent_id"]
    index = np.array([f"{r['uid']}_{r['role']}" for r in rows], dtype=object)  # ray_trainer.compute_advantage
    del uid
    adv, _ = space["compute_grpo_outcome_advantage"](
        token_level_rewards=data.batch["token_level_scores"], response_mask=mask, index=index,
        traj_index=np.array([r["traj"] for r in rows], dtype=object), norm_adv_by_std_in_grpo=False, group_by_agent_id=True)
    return [float(adv[i, 0]) for i in range(len(rows))]


# ---------------------------------------------------------------------- updates per iteration
class Config(dict):
    """An omegaconf-like mapping: keys read as attributes, ``get`` as a dict."""

    def __getattr__(self, key: str) -> Any:
        value = self[key]
        return Config(value) if isinstance(value, dict) else value


def updates_per_iteration(src: Path) -> list[dict[str, int]]:
    """Optimizer steps per training step: ``adjust_batch`` (multi_turn_rollout/utils.py) sizes the
    mini-batch from the rows with the launcher's ``ppo_mini_update_num=1``; ``DataParallelPPOActor.
    update_policy`` (verl/workers/actor/dp_actor.py) takes one step per mini-batch of its rows."""
    import math

    import numpy as np

    space: dict[str, Any] = {"np": np, "torch": __import__("torch")}
    extract(src, "agent_system/multi_turn_rollout/utils.py", ["adjust_batch"], space)
    out = []
    for rows, nodes in ((128, 2), (256, 2), (384, 1), (1024, 2)):
        config = Config({
            "actor_rollout_ref": {"actor": {"use_adaptive_ppo_mini_batch_size": True, "ppo_mini_update_num": 1,
                                            "ppo_micro_batch_size_per_gpu": 1, "use_kl_loss": False},
                                  "rollout": {"log_prob_micro_batch_size_per_gpu": 8},
                                  "ref": {"log_prob_micro_batch_size_per_gpu": 8}},
            "trainer": {"n_gpus_per_node": 8, "nnodes": nodes}, "algorithm": {"use_kl_in_reward": False},
            "critic": {}})
        data = Batch({"input_ids": list(range(rows))}, {})
        data.meta_info = {}
        adjusted = space["adjust_batch"](config, data, "wg")
        world = 8 * nodes
        mini = adjusted.meta_info["wg/ppo_mini_batch_size"]
        out.append({"rows": rows, "gpus": world, "updates": math.ceil(len(adjusted) // world / mini)})
    return out


# ---------------------------------------------------------------------- the Caller parser
def caller_readings(package: types.ModuleType) -> dict[str, Any]:
    out = {}
    for name, text in cases.CALLER_MESSAGES.items():
        content, calls, error = package.tool_parser.parse_tool_calls(text)
        if calls:  # ChecklistEnv.async_step keeps the text before the first block
            idx = text.find("\n<tool_call>\n")
            content = text[:idx] if idx != -1 else text
        out[name] = {"error": error["code"] if error else None, "content": content,
                     "calls": [[c.name, json.loads(c.arguments)] for c in calls]}
    return out


# ---------------------------------------------------------------------- judge replies
class Reply:
    def __init__(self, text: str) -> None:
        self.text = text

    def raise_for_status(self) -> None:
        return None

    def json(self) -> dict[str, Any]:
        return {"choices": [{"message": {"content": self.text}}]}


class Client:
    """Answers every POST with the same reply and records the payloads."""

    def __init__(self, text: str) -> None:
        self.text, self.payloads = text, []

    async def post(self, url: str, json: dict[str, Any]) -> Reply:  # noqa: A002 - httpx's keyword
        self.payloads.append(json)
        return Reply(self.text)


async def _no_sleep(*_: Any, **__: Any) -> None:
    return None


def judge_verdicts(package: types.ModuleType) -> tuple[dict[str, Any], dict[str, Any]]:
    reward = package.checklist_reward
    reward.asyncio = types.SimpleNamespace(sleep=_no_sleep)  # skip the backoff, keep the attempts
    args = {"sglang_model": "judge", "sglang_url": "http://judge/v1/chat/completions", "temperature": 0.6,
            "top_p": 0.8, "max_new_tokens": 6000, "max_tokens": 6000, "retry_times": cases.JUDGE_RETRY}
    out, request = {}, {}
    for name, text in cases.JUDGE_REPLIES.items():
        client = Client(text)
        answer, call_success, api_failed = asyncio.run(reward.eval_one_check(client, "prompt", args))
        out[name] = {"answer": answer, "call_success": call_success, "api_failed": api_failed,
                     "attempts": len(client.payloads)}
        request = {k: v for k, v in client.payloads[0].items() if k not in ("model", "messages")}
    return out, request


# ---------------------------------------------------------------------- episodes
def episodes(src: Path, package: types.ModuleType) -> dict[str, Any]:
    from simulate_core import format_tool_error

    space: dict[str, Any] = {"re": __import__("re"), "json": json, "format_tool_error": format_tool_error}
    extract(src, "agent_system/agent/agents/checklist/tool_simulator_agent.py",
            ["EXECUTION_RESULT_START", "EXECUTION_RESULT_BOT", "EXECUTION_RESULT_EOT", "_EXECUTION_RESULT_RE",
             "_THINK_BLOCK_RE", "_parse_sim_response"], space)
    parse_sim = space["_parse_sim_response"]

    async def verdict(client: Any, prompt: str, args: dict[str, Any]) -> tuple[bool, bool, bool]:
        return cases.snippet_verdict(prompt), True, False

    package.checklist_reward.eval_one_check = verdict
    mcp = package.mcp_tool

    class Executor:
        """MCPChecklistTool in agent mode with the launcher's defaults: every call goes to the Simulator."""

        _id_by_candidate_tools: dict[str, Any] = {}
        _id_by_tool_call_response: dict[str, Any] = {}
        _sanitize_text_for_tokenizer = staticmethod(mcp.MCPChecklistTool._sanitize_text_for_tokenizer)

        async def execute(self, **kwargs: Any) -> Any:
            return mcp.NEED_SIMULATOR, 0.0, {"success": True, "source": "need_simulator"}

    cfg = types.SimpleNamespace(tool_return_mode="agent", max_assistant_turns=30, max_user_turns=30,
                                max_parallel_calls=20, use_caller_incremental=False)
    interaction_cfg = {"sglang_url": ["http://judge"], "sglang_model": "judge", "retry_times": 5, "semaphore_size": 8,
                       "temperature": 0.6, "top_p": 0.8, "max_new_tokens": 6000, "max_tokens": 6000, "timeout": 5}
    item = cases.TASK_ITEM
    out = {}
    for name, script in cases.EPISODES.items():
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        env = package.envs.ChecklistEnv(cfg, Executor(), package.interaction.ChecklistInteraction(interaction_cfg))
        kwargs = {"messages": list(item["messages"]), "all_messages": item["extra_info"]["messages"],
                  "tools": json.loads(item["extra_info"]["tools"]),
                  "checklist_list": item["extra_info"]["interaction_kwargs"]["checklist_list"], "uuid": cases.TASK_ID}
        _, info = env.reset(kwargs)
        callers, sims = list(script["caller"]), list(script["simulator"])
        total, caller_steps, sim_steps, done = 0.0, 0, 0, False
        while not done:
            need = info["need_agent"]
            if need == "caller" and callers:
                action, caller_steps = callers.pop(0), caller_steps + 1
            elif need == "simulator" and sims:
                action, sim_steps = parse_sim(sims.pop(0)), sim_steps + 1
            else:
                break
            _, reward, done, info = env.step(action)
            total += float(reward)
        shape = len(kwargs["checklist_list"]) * len(kwargs["checklist_list"][0])
        out[name] = {"turn_rewards": list(env.per_step_turn_rewards), "score": total / shape, "done": bool(done),
                     "caller_steps": caller_steps, "simulator_calls": sim_steps}
        loop.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", required=True, help="bare git dir of Within-yao/EnvACE")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp)
        archive = subprocess.run(["git", "--git-dir", args.mirror, "archive", UPSTREAM_COMMIT], check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "x", "-C", str(src)], input=archive, check=True)
        package = checklist_package(src)
        verdicts, request = judge_verdicts(package)
        expected = {
            "upstream": {"repo": UPSTREAM_REPO, "commit": UPSTREAM_COMMIT,
                         "script": "tests/conformance/envace/regenerate_expected.py"},
            "advantages": advantages(src),
            "updates_per_iteration": updates_per_iteration(src),
            "caller_readings": caller_readings(package),
            "judge_verdicts": verdicts,
            "judge_request": request,
            "episodes": episodes(src, package),
        }
    OUT.write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
