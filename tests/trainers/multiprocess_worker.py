"""One process of a 2-process CPU run (``torchrun --nproc_per_node 2``, gloo), driven by
``test_multiprocess.py``. Writes ``<out>/rank<r>.json`` with what the test checks.

Parts (``--parts``, comma-separated):

* ``credit`` — every registered credit plug-in on a fixed multi-turn batch whose groups straddle
  the two processes (rank 1's rows are one token narrower): the advantages each process gets
  from ``credit_over_processes``;
* ``train`` — ``AgentGRPOTrainer`` for two steps, one rollout per process per group of 2, with
  episodes of different lengths on each process (horizon 1 on rank 0, 4 on rank 1) and
  ``max_rows_per_pass``: the credit batch and advantages of the last generation batch, the
  largest number of rows any forward pass saw, and the count of every collective call;
* ``vllm_server``, ``vllm_colocate`` — the same with ``use_vllm`` on the vLLM stand-in, in server
  mode and in colocate mode with sleep mode;
* ``skip`` — rows that teach nothing left out: rank 0's rows all have advantage 0 (rank 1's do
  not), then a run with dynamic sampling where every group is dropped and replaced until the bound:
  steps, collective calls and the rows each forward pass with gradient trained.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import torch  # noqa: E402

torch.set_num_threads(1)

COLLECTIVES = ("all_reduce", "all_gather", "all_gather_object", "all_gather_into_tensor", "broadcast",
               "broadcast_object_list", "gather", "gather_object", "reduce", "reduce_scatter", "reduce_scatter_tensor",
               "barrier", "scatter", "scatter_object_list", "all_to_all")
CALLS: Counter = Counter()


def count_collectives() -> None:
    """Wrap torch.distributed's collectives so each process counts its calls (and their order)."""
    import torch.distributed as dist

    for name in COLLECTIVES:
        fn = getattr(dist, name, None)
        if fn is None:
            continue

        def counted(*args, __fn=fn, __name=name, **kwargs):
            CALLS[__name] += 1
            return __fn(*args, **kwargs)

        setattr(dist, name, counted)


def credit_part(rank: int, world: int) -> dict:
    from agentgym_suite.trainers.credit import available_credit_assigners, get_credit_assigner
    from agentgym_suite.trainers.distributed import ProcessSync, credit_over_processes
    from trainers.credit.conftest import build_batch
    from trainers.credit.test_credit_contract import multi_turn_rows

    class _Acc:  # what ProcessSync reads of an accelerator
        num_processes, process_index, device = world, rank, "cpu"

    sync = ProcessSync(_Acc())
    out = {}
    for name in available_credit_assigners():
        plugin = get_credit_assigner(name)
        full = build_batch(multi_turn_rows(plugin), seed=3)
        # rank 0: group g0 and the first trajectory of g1; rank 1: the rest of g1 (whole trajectories each)
        first = full.traj_ids[full.group_ids.index("g1")]
        split = max(i for i, t in enumerate(full.traj_ids) if t == first) + 1
        rows = list(range(split)) if rank == 0 else list(range(split, full.num_rows))
        mine = full.select(rows)
        if rank == 1:  # a narrower share: its last token column is masked anyway
            narrow = {k: getattr(mine, k)[:, :-1] for k in ("completion_mask", "old_logprobs", "teacher_logprobs")}
            narrow["aux_extras"] = {k: v[:, :-1] for k, v in mine.aux_extras.items()}
            from dataclasses import replace

            mine = replace(mine, **narrow)
        result = credit_over_processes(plugin, mine, sync)
        out[name] = {"rows": rows, "advantages": result.advantages.tolist(), "metrics": result.metrics,
                     "total_rows": result.total_rows}
    return out


def trainer_part(rank: int, out_dir: Path, vllm: str | None) -> dict:
    from agentgym_suite.trainers import AgentGRPOTrainer
    from agentgym_suite.trainers.distributed import portable_batch
    from trainers.conftest import tiny_config
    from trainers.fake_env import LetterEnv

    extra = {}
    if vllm:
        from trainers import vllm_standin

        vllm_standin.install(_Setter())
        extra = dict(use_vllm=True, vllm_mode=vllm, vllm_enable_sleep_mode=vllm == "colocate")
    args = tiny_config(str(out_dir / f"run-{vllm or 'hf'}"), per_device_train_batch_size=1, num_generations=2,
                       max_steps=2, max_turns=4, credit="gigpo", max_rows_per_pass=2, save_trajectories=False,
                       **extra)
    horizon = 1 if rank == 0 else 4
    trainer = AgentGRPOTrainer(args=args, env_factory=lambda: LetterEnv(horizon=horizon))
    seen: dict = {"max_rows": 0, "passes": 0}
    model = trainer.model
    forward = model.forward

    def recorded_forward(*a, **kw):
        ids = kw.get("input_ids", a[0] if a else None)
        if ids is not None and "fused_lm_head" in kw:  # TRL's log-prob passes (with and without gradient)
            seen["max_rows"] = max(seen["max_rows"], int(ids.shape[0]))
            seen["passes"] += 1
        return forward(*a, **kw)

    model.forward = recorded_forward
    last: dict = {}
    score = trainer._generate_and_score_completions

    def kept(inputs):
        output = score(inputs)
        real = int((output["row_index"] >= 0).sum())
        last["batch"] = {k: (v.tolist() if isinstance(v, torch.Tensor) else v)
                         for k, v in portable_batch(trainer._credit_batch).items()}
        last["batch"]["extras"] = {k: (v.tolist() if isinstance(v, torch.Tensor) else v)
                                   for k, v in last["batch"]["extras"].items()}
        last["advantages"] = output["advantages"][:real].tolist()
        last["rows_padded"] = int(output["advantages"].shape[0])
        return output

    trainer._generate_and_score_completions = kept
    before = Counter(CALLS)
    trainer.train()
    calls = {k: v - before.get(k, 0) for k, v in CALLS.items() if v - before.get(k, 0)}
    history = trainer.state.log_history
    return {"calls": calls, "max_rows": seen["max_rows"], "forward_passes": seen["passes"], **last,
            "steps": trainer.state.global_step,
            "turns_mean": [h["episodes/turns_mean"] for h in history if "episodes/turns_mean" in h],
            "error_rate": [h["episodes/error_rate"] for h in history if "episodes/error_rate" in h],
            "logged": sorted(set().union(*(h.keys() for h in history)))}


def updates_part(rank: int, out_dir: Path) -> dict:
    """``rows_per_update`` on two DDP processes with uneven episodes (rank 0 one turn, rank 1 four):
    more updates than micro-batches, so updates end inside micro-batches and between passes."""
    from agentgym_suite.trainers import AgentGRPOTrainer, verl_updates
    from trainers.conftest import tiny_config
    from trainers.fake_env import LetterEnv

    args = tiny_config(str(out_dir / "run-updates"), per_device_train_batch_size=2, num_generations=2,
                       steps_per_generation=2, max_steps=2, max_turns=4, rows_per_update=2, max_rows_per_pass=2,
                       save_trajectories=False)
    horizon = 1 if rank == 0 else 4
    trainer = AgentGRPOTrainer(args=args, env_factory=lambda: LetterEnv(horizon=horizon))
    rows: list[int] = []
    plan = verl_updates.plan_updates
    verl_updates.plan_updates = lambda chunks, r, *a, **kw: rows.append(r) or plan(chunks, r, *a, **kw)
    steps = [0]
    create = trainer.create_optimizer

    def counted():
        optimizer = create()
        optimizer.register_step_post_hook(lambda *_: steps.__setitem__(0, steps[0] + 1))
        return optimizer

    trainer.create_optimizer = counted
    try:
        trainer.train()
    finally:
        verl_updates.plan_updates = plan
    model = trainer.accelerator.unwrap_model(trainer.model)
    return {"steps": trainer.state.global_step, "optimizer_steps": steps[0], "rows": rows,
            "weights_sum": float(sum(p.detach().double().sum() for p in model.parameters())),
            "planned": [h["updates_per_generation"] for h in trainer.state.log_history
                        if "updates_per_generation" in h]}


def skip_part(rank: int, out_dir: Path) -> dict:
    from agentgym_suite.trainers import AgentGRPOTrainer
    from trainers.conftest import tiny_config
    from trainers.fake_env import LetterEnv
    from trainers.fixed_credit import OddTrajectoriesCredit

    class SilentLetterEnv(LetterEnv):
        def _execute(self, command, parsed):
            outcome = super()._execute(command, parsed)
            outcome.reward, outcome.score, outcome.won = 0.0, 0.0, False
            return outcome

    out = {}
    runs = {
        # rollout 0 of each group is on rank 0, rollout 1 on rank 1: rank 0 has nothing to train
        "rank0_idle": (dict(), OddTrajectoriesCredit(), lambda: LetterEnv(horizon=1 if rank == 0 else 3)),
        "all_dropped": (dict(dynamic_sampling=True, dynamic_sampling_max_rollouts=4), None, SilentLetterEnv),
    }
    for name, (extra, credit, env) in runs.items():
        args = tiny_config(str(out_dir / f"run-{name}"), per_device_train_batch_size=1, num_generations=2,
                           max_steps=2, max_turns=3, save_trajectories=False, **extra)
        trainer = AgentGRPOTrainer(args=args, env_factory=env, credit=credit)
        trained = []
        logps = trainer._get_per_token_logps_and_entropies

        def recorded(model, input_ids, attention_mask, *a, __trained=trained, __logps=logps, **kw):
            __trained.append(int((attention_mask.sum(1) > 1).sum()))
            return __logps(model, input_ids, attention_mask, *a, **kw)

        trainer._get_per_token_logps_and_entropies = recorded
        before = Counter(CALLS)
        trainer.train()
        history = trainer.state.log_history
        out[name] = {"steps": trainer.state.global_step, "trained_rows": trained,
                     "calls": {k: v - before.get(k, 0) for k, v in CALLS.items() if v - before.get(k, 0)},
                     "skipped": [h["rows/skipped_zero_advantage"] for h in history
                                 if "rows/skipped_zero_advantage" in h],
                     "dropped": [h["dynamic_sampling/groups_dropped"] for h in history
                                 if "dynamic_sampling/groups_dropped" in h]}
    return out


class _Setter:
    def setattr(self, target, name, value, raising=True):
        setattr(target, name, value)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--parts", default="credit,train,vllm_server,vllm_colocate")
    cli = parser.parse_args()
    out_dir = Path(cli.out)
    count_collectives()
    import torch.distributed as dist

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    result: dict = {"rank": rank}
    for part in cli.parts.split(","):
        if part == "credit":
            result["credit"] = credit_part(rank, world)
        elif part == "train":
            result["train"] = trainer_part(rank, out_dir, None)
        elif part == "skip":
            result["skip"] = skip_part(rank, out_dir)
        elif part == "updates":
            result["updates"] = updates_part(rank, out_dir)
        elif part in ("vllm_server", "vllm_colocate"):
            result[part] = trainer_part(rank, out_dir, part.split("_")[1])
    (out_dir / f"rank{rank}.json").write_text(json.dumps(result, default=str))
    os._exit(0)  # skip the slow interpreter teardown of a training process


if __name__ == "__main__":
    main()
