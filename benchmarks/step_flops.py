"""Achieved forward+backward FLOP/s of one ``agentgym demo`` GRPO step against a matrix-multiply
FLOP/s measured in the same process (the practical ceiling of this CPU): the ``flops`` part of
``trainer_speed.py``.

One GRPO step of the demo's settings (:func:`agentgym_suite.demo.pipeline._grpo_fields`: chat
prompts, trajectory rows, LoRA) is trained; the micro-batch it trained on is kept. Then, on that
micro-batch: its forward+backward FLOPs are counted once with ``torch.utils.flop_counter``
(every matmul and attention kernel, backward included), and its forward+backward is timed
``repeats`` times without the counter (median). The matmul ceiling is the median time of fp32
``[tokens x hidden] @ [hidden x 4*hidden]`` products at the model's hidden size (the shape of
its MLP projections), and of a 1024-square product; the larger FLOP/s of the two counts.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from typing import Any

import torch
from torch.utils.flop_counter import FlopCounterMode


def matmul_flops_per_s(hidden: int, tokens: int = 512, repeats: int = 10) -> float:
    """Best of two fp32 matmul shapes, each the median over ``repeats`` products, in FLOP/s."""
    best = 0.0
    for m, k, n in ((tokens, hidden, 4 * hidden), (1024, 1024, 1024)):
        a, b = torch.randn(m, k), torch.randn(k, n)
        for _ in range(3):
            a @ b
        times = []
        for _ in range(repeats):
            began = time.perf_counter()
            a @ b
            times.append(time.perf_counter() - began)
        best = max(best, 2.0 * m * k * n / statistics.median(times))
    return best


def _forward_backward(trainer: Any, inputs: dict[str, Any]) -> None:
    model = trainer.model
    model.zero_grad(set_to_none=True)
    loss = trainer.compute_loss(model, inputs)
    trainer.accelerator.backward(loss)
    model.zero_grad(set_to_none=True)


def demo_step_flops(model: str, repeats: int = 3) -> dict[str, float]:
    """Train one demo GRPO step of ``model`` and measure its micro-batch (module docstring)."""
    from agentgym_suite.demo.pipeline import DemoSettings, _grpo_fields
    from agentgym_suite.trainers.agent_grpo import AgentGRPOTrainer
    from agentgym_suite.trainers.config import AgentGRPOConfig

    settings = DemoSettings(steps=1, eval_every=0)
    with tempfile.TemporaryDirectory() as out:
        fields = _grpo_fields(settings, model)
        fields.update(output_dir=out, save_trajectories=False, print_step_times=False)
        trainer = AgentGRPOTrainer(args=AgentGRPOConfig(**fields))
        kept: dict[str, Any] = {}
        prepare = trainer._prepare_inputs

        def keep(batch: Any) -> Any:
            result = prepare(batch)
            kept.setdefault("inputs", result)
            return result

        trainer._prepare_inputs = keep  # type: ignore[method-assign]
        trainer.train()
        inputs = kept["inputs"]
        trainer.model.train()
        counter = FlopCounterMode(display=False)
        with counter:
            _forward_backward(trainer, inputs)
        flops = float(counter.get_total_flops())
        times = []
        for _ in range(repeats):
            began = time.perf_counter()
            _forward_backward(trainer, inputs)
            times.append(time.perf_counter() - began)
        hidden = int(trainer.accelerator.unwrap_model(trainer.model).config.hidden_size)
        tokens = int(inputs["prompt_mask"].sum() + inputs["completion_mask"].sum())
        step = trainer.step_times[0]
    seconds = statistics.median(times)
    ceiling = matmul_flops_per_s(hidden)
    return {"flops": flops, "seconds": seconds, "achieved": flops / seconds, "matmul": ceiling,
            "ratio": flops / seconds / ceiling, "tokens": float(tokens), "rows": float(inputs["prompt_ids"].size(0)),
            "step_wall_s": float(step["wall_s"]), "step_forward_backward_s": float(step["forward_backward"])}
