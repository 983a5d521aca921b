"""``agentgym demo``: evaluate -> train -> evaluate on held-out tasks -> report.

Everything runs offline on the CPU. Each stage writes into its own folder under ``out``;
every number in the report is read back from those folders, and the report lists the exact
command that reproduces each one.
"""

from __future__ import annotations

import json
import shlex
import time
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from agentgym_suite.core.data import has_benchmark_data

console = Console()

DEFAULT_FAMILY: dict[str, Any] = {"challenge": "tw-treasure_hunter", "settings": {"level": 3}, "n_games": 12}
"""The generated TextWorld task family: short treasure hunts with a different object and map per
game (a random agent wins about 1 in 12 within the turn budget)."""


@dataclass
class DemoSettings:
    """What ``agentgym demo`` runs. Every field has a command-line flag of the same name."""

    out: str = "demo"
    env_id: str = "TextWorld-v0"
    env_kwargs: dict[str, Any] = field(default_factory=lambda: dict(DEFAULT_FAMILY))
    model: str = "default"
    credit: str = "sdar"
    teacher_context: str = "oracle"
    steps: int = 4
    group_size: int = 4
    tasks_per_step: int = 1
    max_turns: int = 3
    max_new_tokens: int = 16
    eval_episodes: int = 8
    eval_temperature: float = 0.4
    learning_rate: float = 2e-5
    alfworld_episodes: int = 2
    alfworld_turns: int = 5
    seed: int = 0

    def train_kwargs(self) -> dict[str, Any]:
        return {**self.env_kwargs, "split": "train"}

    def heldout_kwargs(self) -> dict[str, Any]:
        return {**self.env_kwargs, "split": "test"}


def _command(*parts: Any) -> str:
    return " ".join(shlex.quote(str(p)) for p in parts)


def _evaluate(settings: DemoSettings, name: str, agent: str, env_id: str, env_kwargs: dict[str, Any],
              episodes: int, max_turns: int) -> dict[str, Any]:
    from agentgym_suite.evaluation.runner import evaluate

    out_dir = Path(settings.out) / "eval" / name
    console.rule(f"[bold]evaluate {name}[/] ({agent} on {env_id}, {episodes} tasks)")
    options = {"temperature": settings.eval_temperature, "max_new_tokens": settings.max_new_tokens}
    model = ":" in agent or agent in ("default", "tiny")
    result = evaluate(env_id, agent, out_dir=out_dir, episodes=episodes, seed=settings.seed, env_kwargs=env_kwargs,
                      max_turns=max_turns, agent_options=options if model else None, batch_size=episodes)
    summary = dict(result.summary)
    summary["command"] = _command(
        "agentgym", "eval", env_id, "--env-kwargs", json.dumps(env_kwargs), "--agent", agent, "--episodes", episodes,
        "--seed", settings.seed, "--max-turns", max_turns, "--temperature", settings.eval_temperature,
        "--max-new-tokens", settings.max_new_tokens, "--batch-size", episodes, "--out", out_dir,
    )
    summary["out_dir"] = str(out_dir)
    return summary


def _train(settings: DemoSettings, model_path: str) -> tuple[str, list[dict[str, Any]], str]:
    from agentgym_suite.trainers.agent_grpo import AgentGRPOTrainer
    from agentgym_suite.trainers.config import AgentGRPOConfig

    out_dir = Path(settings.out) / "train"
    console.rule(f"[bold]train[/] GRPO + {settings.credit} for {settings.steps} steps")
    fields = dict(
        output_dir=str(out_dir), model_name_or_path=model_path, env_id=settings.env_id,
        env_kwargs=settings.train_kwargs(), credit=settings.credit, teacher_context=settings.teacher_context,
        group_size=settings.group_size, per_device_train_batch_size=settings.group_size * settings.tasks_per_step,
        max_steps=settings.steps, max_turns=settings.max_turns, max_completion_length=settings.max_new_tokens,
        action_format="plain", prompt_format="single", row_layout="turn", learning_rate=settings.learning_rate,
        beta=0.0, temperature=1.0, use_cpu=True, bf16=False, logging_steps=1, save_strategy="no",
        report_to="none", seed=settings.seed, disable_tqdm=False,
    )
    config = AgentGRPOConfig(**fields)
    trainer = AgentGRPOTrainer(args=config)
    trainer.train()
    final = out_dir / "final"
    trainer.save_model(str(final))
    if trainer.processing_class is not None:
        trainer.processing_class.save_pretrained(str(final))
    history = [dict(h) for h in trainer.state.log_history if "step" in h]
    (out_dir / "log_history.json").write_text(json.dumps(history, indent=2))
    flags = []
    for key in ("env_id", "credit", "teacher_context", "group_size", "per_device_train_batch_size", "max_steps",
                "max_turns", "max_completion_length", "learning_rate", "seed"):
        flags += [f"--{key}", fields[key]]
    command = _command("agentgym", "train", "configs/demo_cpu.yaml", "--model_name_or_path", model_path,
                       "--env_kwargs", json.dumps(settings.train_kwargs()), "--output_dir", out_dir, *flags)
    return str(final), history, command


def _model_path(spec: str) -> str:
    if spec == "default":
        from agentgym_suite.llm.smollm2 import default_model_dir

        return str(default_model_dir())
    if spec == "tiny":
        from agentgym_suite.llm.tiny import tiny_model_dir

        return str(tiny_model_dir())
    if spec.startswith("hf:"):
        return spec[3:]
    raise ValueError(f"--model {spec!r}: the demo trains a local model; use default, tiny or hf:PATH_OR_ID.")


def run_demo(settings: DemoSettings) -> Path:
    """Run the whole demo and return the path of ``report.md``."""
    from agentgym_suite.demo.report import write_report

    # transformers deprecations that TRL triggers every step say nothing to a demo user
    warnings.filterwarnings("ignore", category=FutureWarning, module=r"transformers\..*")
    started = time.perf_counter()
    out = Path(settings.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "settings.json").write_text(json.dumps(asdict(settings), indent=2))
    model_path = _model_path(settings.model)
    held = settings.heldout_kwargs()
    results: dict[str, Any] = {"settings": asdict(settings), "model_path": model_path}
    results["random"] = _evaluate(settings, "random", "random", settings.env_id, held, settings.eval_episodes, settings.max_turns)
    results["oracle"] = _evaluate(settings, "oracle", "oracle", settings.env_id, held, settings.eval_episodes, settings.max_turns)
    results["before"] = _evaluate(settings, "before", f"hf:{model_path}", settings.env_id, held,
                                  settings.eval_episodes, settings.max_turns)
    use_alfworld = settings.alfworld_episodes > 0 and has_benchmark_data("alfworld", "json_2.1.1/valid_unseen")
    if use_alfworld:
        results["alfworld_before"] = _evaluate(settings, "alfworld_before", f"hf:{model_path}", "ALFWorld-v0", {},
                                               settings.alfworld_episodes, settings.alfworld_turns)
    trained, history, train_command = _train(settings, model_path)
    results["train"] = {"history": history, "command": train_command, "model": trained}
    results["after"] = _evaluate(settings, "after", f"hf:{trained}", settings.env_id, held,
                                 settings.eval_episodes, settings.max_turns)
    if use_alfworld:
        results["alfworld_after"] = _evaluate(settings, "alfworld_after", f"hf:{trained}", "ALFWorld-v0", {},
                                              settings.alfworld_episodes, settings.alfworld_turns)
    results["wall_time_s"] = time.perf_counter() - started
    (out / "results.json").write_text(json.dumps(results, indent=2, default=str))
    report = write_report(out, results)
    console.print(f"[bold green]demo finished[/] in {results['wall_time_s'] / 60:.1f} min: {report}")
    return report
