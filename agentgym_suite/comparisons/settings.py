"""What ``agentgym compare`` runs: the methods, the seeds, the shared budget, and the trainer
config every method/seed trains with.

Every method of a comparison trains with one trainer config (:func:`unit_fields`) in which only
``credit``, ``seed`` and ``output_dir`` differ: the same starting weights, training tasks, group
size, steps, tokens per turn, learning rate and held-out tasks. The base config is a recipe YAML
(``--config``, any of ``configs/``) or, without one, the CPU recipe of ``agentgym demo``
(:data:`CPU_RECIPE`); the budget flags override it.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from agentgym_suite.trainers.cpu_speed import EVAL_BATCH

CPU_RECIPE: dict[str, Any] = {
    "model_name_or_path": "default",
    "env_id": "TextWorld-v0",
    "env_kwargs": {"challenge": "tw-treasure_hunter", "settings": {"level": 3}, "n_games": 48, "split": "train",
                   "action_format": "plain"},
    "eval_env_kwargs": {"split": "test", "n_games": 48},
    "action_format": "plain", "prompt_format": "chat", "row_layout": "trajectory", "lora_r": 16,
    "group_size": 4, "per_device_train_batch_size": 16, "max_steps": 4, "max_turns": 3,
    "max_completion_length": 8, "learning_rate": 2.0e-4, "lr_scheduler_type": "constant", "warmup_steps": 0,
    "beta": 0.0, "temperature": 1.0, "eval_strategy": "steps", "eval_steps": 2, "eval_temperature": 0.0,
    "per_device_eval_batch_size": 16, "use_cpu": True, "logging_steps": 1, "save_strategy": "no",
    "report_to": "none", "seed": 0, "disable_tqdm": True, "max_rows_per_pass": 4,
}
"""The base trainer config without ``--config``: the GRPO stage of ``agentgym demo --recipe full-cloning``
with the CPU speed defaults (trainers/cpu_speed.py): ``bf16`` unset so a CPU with native bf16 autocasts
(``cpu_bf16``), passes of 4 length-sorted rows, held-out episodes 16 at a time."""

PRESETS: dict[str, dict[str, Any]] = {
    "rl-gain": {
        # the CPU setting prepared to measure GRPO's own gain from a partial warm start (benchmarks/RESULTS.md
        # says what was tried and what was measured); every value can be overridden by its flag
        "methods": ["grpo", "gigpo"],
        "seeds": [0, 1, 2],
        "env_kwargs": {"challenge": "tw-treasure_hunter", "settings": {"level": 3}, "n_games": 64, "split": "train",
                       "action_format": "plain"},
        "eval_env_kwargs": {"split": "test", "n_games": 96},
        # 3 SFT steps of 8 oracle episodes, the demo's measured half-epoch warm start (50 % held-out on 48
        # games); 2 steps (sft:0.25) left the model chatting: 3 % held-out, no training rollout won
        "warm_start": "sft:0.375",
        # at 1.0 the demo's half-cloned policy won none of its training rollouts: every group all-lost
        # 6 steps: a 12-step run of this setting had already reached 84.4 % of 96 held-out games at step 6
        # (from 42.7 %), see benchmarks/rl_gain.md; the second six steps did not fit the 30-minute budget
        "steps": 6, "group_size": 8, "tasks_per_step": 2, "max_turns": 3, "max_new_tokens": 8,
        "learning_rate": 5e-4, "lora_r": 16, "temperature": 0.7, "eval_every": 3, "eval_episodes": 96,
        "dynamic_sampling": True,
    },
}
"""Named settings (``--preset``): the values of :class:`CompareSettings` fields they set."""


@dataclass
class CompareSettings:
    """One comparison. ``None`` budget fields keep the base config's value."""

    methods: list[str] = field(default_factory=lambda: ["grpo", "gigpo"])
    env_id: str | None = None
    out: str = "compare"
    config: str | None = None
    preset: str | None = None
    warm_start: str | None = None
    model: str | None = None
    seeds: list[int] = field(default_factory=lambda: [0])
    env_kwargs: dict[str, Any] | None = None
    eval_env_kwargs: dict[str, Any] | None = None
    steps: int | None = None
    group_size: int | None = None
    tasks_per_step: int | None = None
    max_turns: int | None = None
    max_new_tokens: int | None = None
    learning_rate: float | None = None
    lora_r: int | None = None
    temperature: float | None = None
    eval_every: int | None = None
    eval_episodes: int | None = None
    eval_temperature: float | None = None
    train_tasks: int | None = None
    teacher_context: str | None = None
    dynamic_sampling: bool | None = None
    async_rollouts: bool | None = None
    sft_learning_rate: float = 1e-3

    def with_preset(self, explicit: set[str]) -> CompareSettings:
        """These settings under ``preset``: the preset's values for every field not in ``explicit``
        (the flags the user gave)."""
        if self.preset is None:
            return self
        if self.preset not in PRESETS:
            raise ValueError(f"unknown preset {self.preset!r}; choose one of {sorted(PRESETS)}.")
        values = asdict(self)
        values.update({k: v for k, v in PRESETS[self.preset].items() if k not in explicit})
        return CompareSettings(**values)


def check_methods(settings: CompareSettings) -> None:
    """Raise for an empty or repeated method list, or an unknown plug-in."""
    from agentgym_suite.trainers.credit import credit_assigner_class

    if not settings.methods:
        raise ValueError("--credit needs at least one method, e.g. --credit grpo,gigpo.")
    if len(set(settings.methods)) != len(settings.methods):
        raise ValueError(f"--credit lists a method twice: {settings.methods}.")
    if not settings.seeds:
        raise ValueError("--seeds needs at least one seed, e.g. --seeds 0,1,2.")
    for name in settings.methods:
        credit_assigner_class(name)


def base_config(settings: CompareSettings) -> dict[str, Any]:
    """The recipe every unit starts from: ``--config``'s YAML, or :data:`CPU_RECIPE`."""
    if settings.config is None:
        return json.loads(json.dumps(CPU_RECIPE))
    import yaml

    path = Path(settings.config)
    if not path.is_file():
        raise FileNotFoundError(f"--config {settings.config!r} not found; pass a recipe YAML such as configs/demo_cpu.yaml.")
    loaded = yaml.safe_load(path.read_text()) or {}
    if not isinstance(loaded, dict):
        raise ValueError(f"--config {settings.config}: a recipe is a mapping of AgentGRPOConfig fields.")
    loaded.pop("env", None)  # TRL's environment-variable section is not a config field
    return loaded


def shared_fields(settings: CompareSettings, model_path: str) -> dict[str, Any]:
    """The trainer config of every unit, before ``credit``, ``seed`` and ``output_dir``."""
    values = base_config(settings)
    values["model_name_or_path"] = model_path
    if settings.env_id is not None:
        values["env_id"] = settings.env_id
    for name in ("env_kwargs", "eval_env_kwargs"):
        extra = getattr(settings, name)
        if extra is not None:
            values[name] = {**(values.get(name) or {}), **extra}
    plain = {"steps": "max_steps", "group_size": "group_size", "max_turns": "max_turns",
             "max_new_tokens": "max_completion_length", "learning_rate": "learning_rate", "lora_r": "lora_r",
             "temperature": "temperature", "eval_temperature": "eval_temperature", "train_tasks": "num_tasks",
             "teacher_context": "teacher_context", "dynamic_sampling": "dynamic_sampling",
             "async_rollouts": "async_rollouts"}
    for ours, theirs in plain.items():
        if getattr(settings, ours) is not None:
            values[theirs] = getattr(settings, ours)
    group = int(values.get("group_size") or values.get("num_generations") or 8)
    if settings.tasks_per_step is not None:
        values["per_device_train_batch_size"] = group * settings.tasks_per_step
    if settings.eval_every is not None:
        values["eval_strategy"], values["eval_steps"] = "steps", settings.eval_every
    if settings.eval_episodes is not None:
        values["eval_num_tasks"] = settings.eval_episodes
        values["per_device_eval_batch_size"] = min(settings.eval_episodes, EVAL_BATCH)  # bounded memory
    if not values.get("eval_env_kwargs") and not values.get("eval_task_ids"):
        raise ValueError("a comparison evaluates every method on held-out tasks: give --eval-env-kwargs (e.g. "
                         "'{\"split\": \"test\"}') or a --config with eval_env_kwargs / eval_task_ids.")
    values["eval_strategy"] = values.get("eval_strategy") or "steps"
    values["save_strategy"], values["save_trajectories"] = "no", True
    return values


def unit_fields(shared: dict[str, Any], method: str, seed: int, output_dir: Path) -> dict[str, Any]:
    """The trainer config of one method and seed."""
    return {**shared, "credit": method, "seed": seed, "output_dir": str(output_dir)}


def compare_command(settings: CompareSettings, *, methods: list[str] | None = None,
                    seeds: list[int] | None = None) -> str:
    """The ``agentgym compare`` command of ``settings`` (restricted to ``methods``/``seeds``: the
    command that reruns those units into the same folder)."""
    parts: list[Any] = ["agentgym", "compare", "--credit", ",".join(methods or settings.methods)]
    defaults = CompareSettings()
    for item in fields(CompareSettings):
        if item.name in ("methods", "preset"):
            continue
        value = getattr(settings, item.name)
        if item.name == "seeds":
            value = seeds if seeds is not None else value
            parts += ["--seeds", ",".join(str(s) for s in value)]
        elif value != getattr(defaults, item.name) or item.name == "out":
            flag = "--" + ("env" if item.name == "env_id" else item.name.replace("_", "-"))
            if isinstance(value, bool):
                parts += [flag if value else "--no-" + flag[2:]]
            else:
                parts += [flag, json.dumps(value) if isinstance(value, dict) else value]
    return " ".join(shlex.quote(str(p)) for p in parts)
