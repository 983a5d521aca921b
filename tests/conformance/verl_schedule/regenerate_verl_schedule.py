"""Regenerate ``expected.json``: verl-agent's own batch split on fixed row counts and world sizes.

Run OUTSIDE the project, in a scratch virtualenv that has torch, numpy, pandas, ray, pyyaml,
omegaconf and ``tensordict==0.6.2`` (verl-agent's pin), with a checkout of ZJU-REAL/SDAR (its
verl-agent copy) at ``--upstream``::

    git --git-dir=/work/.mirror/ZJU-REAL+SDAR/repo archive HEAD verl agent_system/multi_turn_rollout \
        | tar x -C /tmp/verl-src
    /tmp/scratch-34/bin/python tests/conformance/verl_schedule/regenerate_verl_schedule.py \
        --upstream /tmp/verl-src --commit $(git --git-dir=/work/.mirror/ZJU-REAL+SDAR/repo rev-parse HEAD)

What runs is upstream's code: ``adjust_batch`` (agent_system/multi_turn_rollout/utils.py, loaded
from its file alone: the package's ``__init__`` imports the env managers), ``DataProto.chunk``
(the data-parallel dispatch's split), and ``DataParallelPPOActor.update_policy`` (the mini-batch
split and the epoch loop; without its GPU-memory logging decorator) on a one-layer model of our
own (the policy is the only stand-in). Two
lines are re-stated, not run: the worker's normalisation of ``ppo_mini_batch_size``
(verl/workers/fsdp_workers.py:150-151: ``*= rollout.n; //= GPUs``), because the worker needs a
live process group of that many GPUs. Every "GPU" runs ``update_policy`` on its own chunk in
turn. Recorded per case: rows after ``adjust_batch``, rows it duplicated, and for every optimizer
step its rows (over all GPUs) and its loss weight (micro-batches / ``gradient_accumulation``); or
``upstream_error`` where ``adjust_batch`` itself fails (it draws the duplicates without
replacement, so a step with fewer rows than it must add stops the run).

The parameter sets are those of the released scripts, read from the recipe cards (their
``upstream`` values carry file and line).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import torch
import yaml

HERE = Path(__file__).resolve().parent
CARDS = HERE.parents[2] / "configs" / "recipes"
ROWS = (1, 100, 999, 1000, 2500, 2600, 4097, 6400)
WORLD_SIZES = (1, 2, 8)
EPOCHS = (1, 2)
A, R, REF = "actor_rollout_ref.actor.", "actor_rollout_ref.rollout.", "actor_rollout_ref.ref."


def script_settings() -> list[dict]:
    """Distinct batch settings of the released scripts (from the cards' upstream values)."""
    seen: dict[tuple, dict] = {}
    for card_path in sorted(CARDS.glob("*.yaml")):
        card = yaml.safe_load(card_path.read_text(encoding="utf-8"))
        for entry in (card.get("envs") or {}).values():
            up = entry["upstream"]
            if A + "ppo_micro_batch_size_per_gpu" not in up or R + "n" not in up:
                continue
            value = lambda key, up=up: up[key]["value"] if key in up else None  # noqa: E731
            setting = {"ppo_mini_batch_size": value(A + "ppo_mini_batch_size"), "rollout_n": value(R + "n"),
                       "ppo_micro_batch_size_per_gpu": value(A + "ppo_micro_batch_size_per_gpu"),
                       "log_prob_micro_batch_size_per_gpu": value(R + "log_prob_micro_batch_size_per_gpu"),
                       "ref_log_prob_micro_batch_size_per_gpu": value(REF + "log_prob_micro_batch_size_per_gpu"),
                       "use_kl_loss": bool(value(A + "use_kl_loss")),
                       "use_kl_in_reward": bool(value("algorithm.use_kl_in_reward"))}
            seen.setdefault(tuple(sorted(setting.items())), setting)
    return list(seen.values())


class TinyPolicy(torch.nn.Module):
    """The stand-in policy: token embedding to logits (what ``_forward_micro_batch`` calls)."""

    def __init__(self, vocab: int = 8):
        super().__init__()
        self.table = torch.nn.Embedding(vocab, vocab)

    def forward(self, input_ids, attention_mask=None, position_ids=None, use_cache=False, **_):
        return type("Output", (), {"logits": self.table(input_ids)})()


def run_case(verl, setting: dict, rows: int, world: int, epochs: int) -> dict | None:
    from omegaconf import OmegaConf

    DataProto, adjust_batch, DataParallelPPOActor, defaults = verl
    cfg = OmegaConf.create(OmegaConf.to_container(defaults, resolve=False))
    cfg.trainer.n_gpus_per_node, cfg.trainer.nnodes = world, 1
    actor = cfg.actor_rollout_ref.actor
    actor.ppo_mini_batch_size = setting["ppo_mini_batch_size"]
    actor.ppo_micro_batch_size_per_gpu = setting["ppo_micro_batch_size_per_gpu"]
    actor.use_kl_loss, actor.ppo_epochs = setting["use_kl_loss"], epochs
    actor.entropy_coeff, actor.use_torch_compile = 0.0, False
    cfg.actor_rollout_ref.rollout.n = setting["rollout_n"]
    cfg.actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu = setting["log_prob_micro_batch_size_per_gpu"]
    cfg.actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu = setting["ref_log_prob_micro_batch_size_per_gpu"]
    cfg.algorithm.use_kl_in_reward = setting["use_kl_in_reward"]
    generator = torch.Generator().manual_seed(rows)
    ids = torch.randint(0, 8, (rows, 4), generator=generator)
    tensors = {"input_ids": ids, "responses": ids[:, 2:], "attention_mask": torch.ones_like(ids),
               "position_ids": torch.arange(4).expand(rows, 4).clone(), "old_log_probs": torch.full((rows, 2), -2.0),
               "advantages": torch.randn(rows, 2, generator=generator), "ref_log_prob": torch.full((rows, 2), -2.0),
               "row": torch.arange(rows)}
    data = DataProto.from_dict(tensors=tensors, meta_info={"temperature": 1.0})
    np.random.seed(0)
    try:
        padded = adjust_batch(cfg, data)  # mode="copy", as ray_trainer.py calls it
    except ValueError as error:  # it samples the duplicates without replacement: fewer rows than it must add
        return {"rows": rows, "world_size": world, "ppo_epochs": epochs, **setting, "upstream_error": str(error)}
    # fsdp_workers.py:150-151 (re-stated): the mini-batch of one GPU
    actor.ppo_mini_batch_size = actor.ppo_mini_batch_size * setting["rollout_n"] // world
    if actor.ppo_mini_batch_size <= 0 or actor.ppo_mini_batch_size % actor.ppo_micro_batch_size_per_gpu:
        return None  # verl's worker asserts here: not a runnable layout
    steps: list[list[tuple[int, int]]] = []
    for chunk in padded.chunk(world):
        model = TinyPolicy()
        seen: list[int] = []
        log: list[tuple[int, int]] = []
        optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
        worker = DataParallelPPOActor(config=actor, actor_module=model, actor_optimizer=optimizer)
        real_forward = worker._forward_micro_batch

        def forward(micro_batch, *args, seen=seen, real_forward=real_forward, **kwargs):
            seen.append(int(micro_batch["input_ids"].shape[0]))
            return real_forward(micro_batch, *args, **kwargs)

        def step(*_args, seen=seen, log=log, worker=worker, **_kwargs):
            log.append((sum(seen), len(seen), worker.gradient_accumulation))
            seen.clear()

        worker._forward_micro_batch = forward
        optimizer.step = step
        undecorated_update_policy(DataParallelPPOActor)(worker, chunk)
        steps.append(log)
    assert all(len(s) == len(steps[0]) for s in steps), "every GPU takes the same optimizer steps"
    return {
        "rows": rows, "world_size": world, "ppo_epochs": epochs, **setting,
        "padded_rows": len(padded), "duplicated_rows": len(padded) - rows,
        "updates": len(steps[0]),
        "update_rows": [sum(s[k][0] for s in steps) for k in range(len(steps[0]))],
        "loss_weights": [steps[0][k][1] / steps[0][k][2] for k in range(len(steps[0]))],
    }


def undecorated_update_policy(actor_class):
    """``update_policy`` without its ``GPUMemoryLogger`` wrapper (which reads CUDA memory counters
    around the call and fails on CPU): the wrapped function, taken from the wrapper's closure."""
    wrapper = actor_class.update_policy
    for cell in wrapper.__closure__ or ():
        if callable(cell.cell_contents) and getattr(cell.cell_contents, "__name__", "") == "update_policy":
            return cell.cell_contents
    return wrapper


def load_upstream(root: Path):
    """DataProto, adjust_batch, DataParallelPPOActor and verl's defaults, from ``root``."""
    from omegaconf import OmegaConf

    sys.path.insert(0, str(root))
    from verl import DataProto
    from verl.workers.actor.dp_actor import DataParallelPPOActor

    spec = importlib.util.spec_from_file_location("verl_agent_batch_utils",
                                                  root / "agent_system" / "multi_turn_rollout" / "utils.py")
    utils = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(utils)
    defaults = OmegaConf.load(root / "verl" / "trainer" / "config" / "ppo_trainer.yaml")
    return DataProto, utils.adjust_batch, DataParallelPPOActor, defaults


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--upstream", type=Path, required=True, help="checkout of ZJU-REAL/SDAR (verl/, agent_system/)")
    parser.add_argument("--commit", required=True, help="the upstream commit the checkout is at")
    args = parser.parse_args()
    verl = load_upstream(args.upstream)
    cases = []
    for setting in script_settings():
        for world in WORLD_SIZES:
            for rows in ROWS:
                for epochs in EPOCHS:
                    case = run_case(verl, setting, rows, world, epochs)
                    if case is not None:
                        cases.append(case)
    out = {"upstream": {"repo": "ZJU-REAL/SDAR", "commit": args.commit,
                        "code": ["agent_system/multi_turn_rollout/utils.py:adjust_batch", "verl/protocol.py:DataProto.chunk",
                                 "verl/workers/actor/dp_actor.py:DataParallelPPOActor.update_policy"]},
           "cases": cases}
    lines = ",\n  ".join(json.dumps(case) for case in cases)  # one case a line
    text = f'{{"upstream": {json.dumps(out["upstream"])},\n "cases": [\n  {lines}\n ]}}\n'
    (HERE / "expected.json").write_text(text, encoding="utf-8")
    print(f"wrote {len(cases)} cases")


if __name__ == "__main__":
    main()
