"""``agentgym demo``: evaluate -> behavioural cloning (SFT) -> evaluate -> GRPO -> evaluate -> report.

Everything runs offline on the CPU. Each stage writes into its own folder under ``out``; every
number in the report is read back from those folders, and the report lists the command behind
each one.

The default recipe (``--recipe rl-gain``, measured; see docs/demo.md) shows each stage's own
gain, the GRPO stage's above all:

1. **Held-out baseline.** The embedded model, the random agent and the oracle on
   ``eval_episodes`` held-out games (the family's ``test`` split: games generated from a seed
   range disjoint from the training games').
2. **A partial warm start by behavioural cloning.** The oracle plays the ``train_games`` games of
   the ``train`` split; its won episodes are an SFT dataset (one row per episode, loss on the
   actions only) trained with TRL's ``SFTTrainer`` and a LoRA adapter, merged afterwards
   (:mod:`~agentgym_suite.demo.oracle_sft`). ``sft_epochs`` is kept short (3 steps) so the cloned
   policy writes valid commands but does not already solve the held-out games.
3. **GRPO** from the SFT weights with a credit plug-in (``AgentGRPOTrainer``, LoRA again), on the
   same training games: the ``agentgym compare --preset rl-gain`` setting (groups of 8 at
   temperature 0.7, dynamic sampling), with held-out evaluation during training.
4. **Held-out evaluation** after each stage, on the same held-out games and episode seeds.

``--recipe full-cloning`` is the earlier route: two epochs of cloning, which already solve the
held-out games, then 4 GRPO steps that have nothing left to teach.

Nothing is tuned on the held-out games: they are only played by the evaluations.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

console = Console()

DEFAULT_FAMILY: dict[str, Any] = {"challenge": "tw-treasure_hunter", "settings": {"level": 3}}
"""The generated TextWorld task family: two-step treasure hunts (go to the next room, take the
named object), a different map, object and wording per game."""


@dataclass
class DemoSettings:
    """What ``agentgym demo`` runs. Every field has a command-line flag of the same name; the
    defaults are the ``rl-gain`` recipe (:data:`RECIPES`)."""

    out: str = "demo"
    recipe: str = "rl-gain"
    env_id: str = "TextWorld-v0"
    env_kwargs: dict[str, Any] = field(default_factory=lambda: dict(DEFAULT_FAMILY))
    model: str = "default"
    train_games: int = 64
    eval_episodes: int = 48
    eval_batch: int = 16
    max_turns: int = 3
    max_new_tokens: int = 8
    eval_temperature: float = 0.0
    eval_cpu_bf16: str = "auto"
    sft_epochs: float = 0.375
    sft_learning_rate: float = 1e-3
    sft_batch_size: int = 8
    lora_r: int = 16
    credit: str = "grpo"
    steps: int = 6
    group_size: int = 8
    tasks_per_step: int = 2
    learning_rate: float = 5e-4
    temperature: float = 0.7
    dynamic_sampling: bool = True
    eval_every: int = 3
    seed: int = 0

    def with_recipe(self, explicit: set[str]) -> DemoSettings:
        """These settings under ``recipe``: the recipe's values for every field not in ``explicit``
        (the flags the user gave)."""
        if self.recipe not in RECIPES:
            raise ValueError(f"unknown recipe {self.recipe!r}; choose one of {', '.join(RECIPES)}.")
        values = asdict(self)
        values.update({k: v for k, v in RECIPES[self.recipe].items() if k not in explicit})
        return DemoSettings(**values)

    def train_kwargs(self) -> dict[str, Any]:
        """Env kwargs of the training games."""
        return {**self.env_kwargs, "n_games": self.train_games, "split": "train", "action_format": "plain"}

    def heldout_kwargs(self) -> dict[str, Any]:
        """Env kwargs of the held-out games (one game per held-out episode)."""
        return {**self.env_kwargs, "n_games": self.eval_episodes, "split": "test", "action_format": "plain"}


RECIPES: dict[str, dict[str, Any]] = {
    # the default: a partial warm start, then the rl-gain preset's GRPO stage (benchmarks/rl_gain.md).
    # 3 SFT steps of 8 oracle episodes (0.375 epochs of 64 games) give valid commands and about half
    # the held-out games; 2 steps leave the model chatting (no rollout wins, no signal)
    "rl-gain": {},
    # the earlier default: 2 epochs of cloning already win every held-out game; GRPO then has
    # all-won groups, zero advantages and nothing to teach (docs/demo.md)
    "full-cloning": {"train_games": 48, "sft_epochs": 2.0, "steps": 4, "group_size": 4, "tasks_per_step": 4,
                     "learning_rate": 2e-4, "temperature": 1.0, "dynamic_sampling": False, "eval_every": 2},
}
"""Named recipes (``--recipe``): the fields they set; flags given explicitly override them."""


def demo_command(settings: DemoSettings) -> str:
    """The ``agentgym demo`` command that reproduces ``settings``."""
    defaults = DemoSettings(recipe=settings.recipe).with_recipe(set())
    parts: list[Any] = ["agentgym", "demo"]
    for name, value in asdict(settings).items():
        if value != getattr(defaults, name) or name in ("seed", "out", "recipe"):
            flag = "--" + name.replace("_", "-")
            if isinstance(value, bool):
                parts.append(flag if value else "--no-" + flag[2:])
            else:
                parts += [flag, json.dumps(value) if isinstance(value, dict) else value]
    return _command(*parts)


def _command(*parts: Any) -> str:
    return " ".join(shlex.quote(str(p)) for p in parts)


def _make_game(args: tuple[str, dict[str, Any], str]) -> str:
    import gymnasium as gym

    import agentgym_suite  # noqa: F401  (registers the envs in a worker process)

    env_id, kwargs, task_id = args
    env = gym.make(env_id, **kwargs)
    try:
        return str(env.unwrapped.game_file(task_id))
    finally:
        env.close()


def prepare_games(settings: DemoSettings, workers: int = 2) -> float:
    """Generate (or find cached) every game of both splits, ``workers`` at a time; returns seconds.

    Envs without generated game files (no ``game_file``) need nothing."""
    import gymnasium as gym

    started = time.perf_counter()
    jobs = []
    for kwargs in (settings.train_kwargs(), settings.heldout_kwargs()):
        env = gym.make(settings.env_id, **kwargs)
        try:
            if not callable(getattr(env.unwrapped, "game_file", None)):
                return 0.0
            jobs += [(settings.env_id, kwargs, t) for t in env.unwrapped.task_ids()]
        finally:
            env.close()
    console.rule(f"[bold]prepare[/] {len(jobs)} games")
    if workers > 1 and len(jobs) > 1:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            list(pool.map(_make_game, jobs))
    else:
        for job in jobs:
            _make_game(job)
    return time.perf_counter() - started


def eval_autocast(setting: str) -> str | None:
    """The dtype the demo's held-out evaluations of the model autocast to under ``eval_cpu_bf16``:
    ``bfloat16`` on a CPU with native bf16 (``auto``) or always (``on``), None for fp32 (``off``)."""
    from agentgym_suite.trainers.cpu_speed import cpu_flags, decide_bf16

    use, _ = decide_bf16(setting, cpu_flags())
    return "bfloat16" if use else None


def _evaluate(settings: DemoSettings, name: str, agent: str) -> dict[str, Any]:
    from agentgym_suite.evaluation.runner import evaluate

    out_dir = Path(settings.out) / "eval" / name
    env_kwargs = settings.heldout_kwargs()
    episodes = settings.eval_episodes
    console.rule(f"[bold]evaluate {name}[/] ({agent}, {episodes} held-out games)")
    options = {"temperature": settings.eval_temperature, "max_new_tokens": settings.max_new_tokens}
    model = ":" in agent or agent in ("default", "tiny")
    batch = min(episodes, settings.eval_batch)  # bounded: one batch of every episode holds every KV cache at once
    # bf16 prefill where the CPU has it natively: the model's evaluations are mostly prompt prefill (docs/demo.md)
    autocast = eval_autocast(settings.eval_cpu_bf16) if model else None
    started = time.perf_counter()
    result = evaluate(settings.env_id, agent, out_dir=out_dir, episodes=episodes, seed=settings.seed,
                      env_kwargs=env_kwargs, max_turns=settings.max_turns, prompt_format="chat",
                      agent_options=options if model else None, batch_size=batch, progress=False,
                      backend_options={"autocast": autocast} if autocast else None)
    summary = dict(result.summary)
    summary["stage_s"] = time.perf_counter() - started
    summary["command"] = _command(
        "agentgym", "eval", settings.env_id, "--env-kwargs", json.dumps(env_kwargs), "--agent", agent,
        "--episodes", episodes, "--seed", settings.seed, "--max-turns", settings.max_turns, "--prompt-format", "chat",
        "--temperature", settings.eval_temperature, "--max-new-tokens", settings.max_new_tokens,
        "--batch-size", batch, *(["--autocast", autocast] if autocast else []), "--out", out_dir,
    )
    summary["out_dir"] = str(out_dir)
    return summary


def _sft(settings: DemoSettings, model_path: str) -> dict[str, Any]:
    from transformers import AutoTokenizer

    from agentgym_suite.demo.oracle_sft import oracle_conversations, sft_dataset, train_sft, write_records

    out_dir = Path(settings.out) / "sft"
    console.rule(f"[bold]behavioural cloning[/] oracle episodes of {settings.train_games} training games")
    started = time.perf_counter()
    records = oracle_conversations(settings.env_id, settings.train_kwargs(), None, max_turns=settings.max_turns,
                                   seed=settings.seed)
    write_records(records, out_dir / "oracle_episodes.jsonl")
    dataset = sft_dataset(AutoTokenizer.from_pretrained(model_path), records)
    collected = time.perf_counter() - started
    model, history, step_times = train_sft(
        model_path, dataset, out_dir, epochs=settings.sft_epochs, learning_rate=settings.sft_learning_rate,
        batch_size=settings.sft_batch_size, lora_r=settings.lora_r, seed=settings.seed)
    (out_dir / "log_history.json").write_text(json.dumps(history, indent=2))
    return {"model": model, "history": history, "step_times": step_times, "episodes": len(records),
            "won": sum(r["won"] for r in records), "rows": len(dataset), "collect_s": collected,
            "stage_s": time.perf_counter() - started}


def _grpo_fields(settings: DemoSettings, model_path: str) -> dict[str, Any]:
    from agentgym_suite.trainers.cpu_speed import CPU_ROWS_PER_PASS

    out_dir = Path(settings.out) / "grpo"
    return dict(
        output_dir=str(out_dir), model_name_or_path=model_path, env_id=settings.env_id,
        env_kwargs=settings.train_kwargs(), credit=settings.credit, group_size=settings.group_size,
        per_device_train_batch_size=settings.group_size * settings.tasks_per_step, max_steps=settings.steps,
        max_turns=settings.max_turns, max_completion_length=settings.max_new_tokens, action_format="plain",
        prompt_format="chat", row_layout="trajectory", learning_rate=settings.learning_rate, lora_r=settings.lora_r,
        beta=0.0, temperature=settings.temperature, dynamic_sampling=settings.dynamic_sampling, use_cpu=True,
        max_rows_per_pass=CPU_ROWS_PER_PASS, logging_steps=1, save_strategy="no",
        # checkpointing kept on: it cost ~1.5 % of the passes' time and saved 1.4 GiB per pass
        # (docs/performance.md), and the GRPO passes hold the demo's peak once cloning is bounded
        cpu_gradient_checkpointing="on",
        report_to="none", seed=settings.seed, disable_tqdm=True, eval_strategy="steps" if settings.eval_every else "no",
        eval_steps=settings.eval_every or None, eval_env_kwargs={"split": "test", "n_games": settings.eval_episodes},
        eval_temperature=settings.eval_temperature,
        per_device_eval_batch_size=min(settings.eval_episodes, settings.eval_batch),
        lr_scheduler_type="constant", warmup_steps=0,
    )


def _no_evaluation_at_the_end() -> Any:
    """A callback that skips the held-out evaluation of the last GRPO step: the demo's ``after``
    evaluation plays the same games with the saved model right after."""
    from transformers import TrainerCallback

    class NoEvaluationAtTheEnd(TrainerCallback):
        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if state.global_step >= state.max_steps:
                control.should_evaluate = False

    return NoEvaluationAtTheEnd()


def _grpo(settings: DemoSettings, model_path: str) -> dict[str, Any]:
    from agentgym_suite.trainers.agent_grpo import AgentGRPOTrainer
    from agentgym_suite.trainers.config import AgentGRPOConfig

    fields = _grpo_fields(settings, model_path)
    out_dir = Path(fields["output_dir"])
    console.rule(f"[bold]GRPO[/] + {settings.credit} for {settings.steps} steps from the SFT weights "
                 f"({settings.tasks_per_step} tasks x {settings.group_size} rollouts, temperature {settings.temperature})")
    started = time.perf_counter()
    trainer = AgentGRPOTrainer(args=AgentGRPOConfig(**fields), callbacks=[_no_evaluation_at_the_end()])
    trainer.train()
    final = trainer.save_merged(str(out_dir / "model"))
    history = [dict(h) for h in trainer.state.log_history if "step" in h]
    (out_dir / "log_history.json").write_text(json.dumps(history, indent=2))
    flags: list[Any] = []
    for key in ("env_id", "credit", "group_size", "per_device_train_batch_size", "max_steps", "max_turns",
                "max_completion_length", "learning_rate", "lora_r", "temperature", "dynamic_sampling", "eval_steps",
                "eval_temperature", "per_device_eval_batch_size", "max_rows_per_pass", "cpu_gradient_checkpointing",
                "seed"):
        if fields[key] is not None:
            flags += [f"--{key}", fields[key]]
    command = _command("agentgym", "train", "configs/demo_cpu.yaml", "--model_name_or_path", model_path,
                       "--env_kwargs", json.dumps(fields["env_kwargs"]), "--eval_env_kwargs",
                       json.dumps(fields["eval_env_kwargs"]), "--output_dir", out_dir, *flags)
    return {"model": final, "history": history, "step_times": list(trainer.step_times), "command": command,
            "stage_s": time.perf_counter() - started}


def cpu_seconds() -> float:
    """User + system CPU time of this process and its finished children (the game generators)."""
    import resource

    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def demo_model_path(spec: str) -> str:
    """The local model folder of a ``--model`` spec (``default`` converts the embedded model once)."""
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
    from agentgym_suite.demo.memory import keep_freed_memory, release_memory
    from agentgym_suite.demo.report import write_report

    # large tensors reuse glibc's heap instead of fresh zeroed pages each time (13 % less CPU, docs/demo.md)
    kept = keep_freed_memory()

    # transformers deprecations that TRL triggers every step say nothing to a demo user
    warnings.filterwarnings("ignore", category=FutureWarning, module=r"transformers\..*")
    started = time.perf_counter()
    out = Path(settings.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "settings.json").write_text(json.dumps(asdict(settings), indent=2))
    command = demo_command(settings)
    console.print(f"[bold]agentgym demo[/], seed {settings.seed}; reproduce with:\n  {command}")
    import torch

    # a first run converts the model (one core busy) while the games are generated in worker processes
    with ThreadPoolExecutor(max_workers=1) as background:
        games = background.submit(prepare_games, settings)
        try:
            model_path = demo_model_path(settings.model)
        finally:
            prepare_s = games.result()
    results: dict[str, Any] = {"settings": asdict(settings), "model_path": model_path, "command": command,
                               "python": sys.version.split()[0], "torch_threads": torch.get_num_threads(),
                               "eval_autocast": eval_autocast(settings.eval_cpu_bf16), "keep_freed_memory": kept}
    results["prepare_s"] = prepare_s
    results["random"] = _evaluate(settings, "random", "random")
    results["oracle"] = _evaluate(settings, "oracle", "oracle")
    results["before"] = _evaluate(settings, "before", f"hf:{model_path}")
    release_memory()  # each stage starts without the last one's models and trainer (demo.memory)
    results["sft"] = _sft(settings, model_path)
    release_memory()
    results["after_sft"] = _evaluate(settings, "after_sft", f"hf:{results['sft']['model']}")
    release_memory()
    results["grpo"] = _grpo(settings, results["sft"]["model"])
    release_memory()
    results["after"] = _evaluate(settings, "after", f"hf:{results['grpo']['model']}")
    results["wall_time_s"] = time.perf_counter() - started
    results["load"] = ", ".join(f"{x:.2f}" for x in os.getloadavg())  # 1, 5 and 15 min: how busy the CPUs were
    results["cpu_s"] = cpu_seconds()  # on a shared machine, CPU time / cores is what the run would take alone
    (out / "results.json").write_text(json.dumps(results, indent=2, default=str))
    report = write_report(out, results)
    console.print(f"[bold green]demo finished[/] in {results['wall_time_s'] / 60:.1f} min: {report}")
    console.print(f"seed {settings.seed}; reproduce with:\n  {command}")
    return report
