"""Run a comparison: warm start, the starting point of each seed, every method and seed, the report.

Layout of ``OUT``::

    settings.json                 the settings, and the command that reproduces the whole comparison
    warm_start/model/             the behavioural-cloning warm start (``--warm-start sft:EPOCHS``)
    start/seed<S>/                the starting weights on the held-out tasks (step 0 of every curve)
    runs/<method>/seed<S>/        one training run: config.yaml, eval_trajectories/, trajectories/,
                                  step_times.jsonl, unit.json (written last: the unit finished)
    report.md, report.json, learning_curves.png

A unit whose ``unit.json`` exists is not run again, so the same command resumes a killed
comparison; an unfinished unit starts over (its folder is cleared). Each unit runs in a process of
its own (:mod:`~agentgym_suite.comparisons.unit`), which gives every method its own peak memory.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from rich.console import Console

from agentgym_suite.comparisons.settings import (
    CompareSettings,
    base_config,
    check_methods,
    compare_command,
    shared_fields,
    unit_fields,
)
from agentgym_suite.comparisons.unit import UNIT_FILE

console = Console()


def teacher_needs(methods: list[str], shared: dict[str, Any]) -> list[str]:
    """One line per method that needs more than rollouts (a teacher prompt with privileged text,
    skill texts, what its ``run_needs`` says), read from the plug-ins' declarations. Raises when what a method
    needs is missing, before anything is trained."""
    from agentgym_suite.trainers.credit import TeacherSettings, credit_assigner_class

    lines = []
    context = shared.get("teacher_context", "skills")
    for name in methods:
        cls = credit_assigner_class(name)
        if cls.needs_teacher_logprobs or cls.needs_full_logits:
            what = {"skills": "the env's skill texts (the released ones, else its own fallback), picked per task",
                    "oracle": "the env's oracle walkthrough of the task",
                    "env_response": "the real env's response to each action"}[context]
            fixed = " on fixed initial weights" if cls.needs_fixed_teacher else ""
            lines.append(f"{name}: a teacher pass{fixed} with privileged text: teacher_context={context} ({what}); "
                         "set --teacher-context skills|oracle|env_response to change it.")
            if context == "skills":
                try:
                    teacher = cls.make_teacher_context(TeacherSettings(context, shared.get("skills_dir"),
                                                                       str(shared.get("env_id") or "")))
                except (FileNotFoundError, ValueError) as exc:
                    raise FileNotFoundError(f"{name} needs skill texts: {exc} Set skills_dir in the --config or use "
                                            "--teacher-context oracle.") from exc
                lines.append(f"{name}: skill texts: {teacher.origin}")
        if cls.run_needs:
            lines.append(f"{name}: {cls.run_needs}")
    return lines


def model_path(settings: CompareSettings) -> str:
    """The local folder of the base model (``--model``, else the base config's ``model_name_or_path``)."""
    from agentgym_suite.demo.pipeline import demo_model_path

    spec = settings.model or str(base_config(settings).get("model_name_or_path") or "default")
    if spec in ("default", "tiny") or spec.startswith("hf:"):
        return demo_model_path(spec)
    return spec


def warm_start(settings: CompareSettings, shared: dict[str, Any], base: str) -> str:
    """The starting weights of every method: ``--warm-start DIR``, ``sft:EPOCHS`` (behavioural
    cloning of the oracle on the training tasks, trained once into ``OUT/warm_start``), or the base model."""
    spec = settings.warm_start
    if spec is None:
        return base
    if not spec.startswith("sft:"):
        if not (Path(spec) / "config.json").is_file():
            raise FileNotFoundError(f"--warm-start {spec!r} is not a model folder (no config.json); pass a saved model "
                                    "or sft:EPOCHS.")
        return spec
    try:
        epochs = float(spec[4:])
    except ValueError:
        raise ValueError(f"--warm-start {spec!r}: write sft:EPOCHS, e.g. sft:0.5.") from None
    out_dir = Path(settings.out) / "warm_start"
    model = out_dir / "model"
    if (model / "config.json").is_file():
        console.print(f"warm start: {model} (already trained)")
        return str(model)
    from transformers import AutoTokenizer

    from agentgym_suite.demo.oracle_sft import oracle_conversations, sft_dataset, train_sft, write_records

    console.rule(f"[bold]warm start[/] behavioural cloning, {epochs} epochs of oracle episodes")
    started = time.perf_counter()
    episodes = out_dir / "oracle_episodes.jsonl"
    if episodes.is_file():  # played before a kill: read back
        records = [json.loads(line) for line in episodes.read_text().splitlines() if line.strip()]
    else:
        records = oracle_conversations(shared["env_id"], dict(shared.get("env_kwargs") or {}), None,
                                       max_turns=int(shared["max_turns"]), seed=int(settings.seeds[0]))
        write_records(records, episodes)
    dataset = sft_dataset(AutoTokenizer.from_pretrained(base), records)
    path, history, _ = train_sft(base, dataset, out_dir, epochs=epochs, learning_rate=settings.sft_learning_rate,
                                 batch_size=8, lora_r=int(shared.get("lora_r") or 16), seed=int(settings.seeds[0]))
    (out_dir / "warm_start.json").write_text(json.dumps(
        {"epochs": epochs, "episodes": len(records), "won": sum(r["won"] for r in records),
         "wall_s": time.perf_counter() - started, "history": history}, indent=2))
    return path


def run_unit_process(unit_dir: Path, fields: dict[str, Any], kind: str) -> None:
    """Run one unit in a fresh process (its folder cleared first); raise when it fails."""
    import yaml

    if unit_dir.exists():
        shutil.rmtree(unit_dir)
    unit_dir.mkdir(parents=True)
    (unit_dir / "config.yaml").write_text(yaml.safe_dump(fields, sort_keys=False))
    (unit_dir / "request.json").write_text(json.dumps({"kind": kind}))
    proc = subprocess.run([sys.executable, "-m", "agentgym_suite.comparisons.unit", str(unit_dir)])
    if proc.returncode != 0 or not (unit_dir / UNIT_FILE).is_file():
        raise RuntimeError(f"the unit in {unit_dir} failed (exit {proc.returncode}); its output is above. Fix it and "
                           "run the same command again: finished units are kept.")


def run_compare(settings: CompareSettings) -> Path:
    """Run (or resume) the comparison and write its report; returns the path of ``report.md``."""
    from agentgym_suite.comparisons.report import write_report

    check_methods(settings)
    out = Path(settings.out)
    out.mkdir(parents=True, exist_ok=True)
    command = compare_command(settings)
    console.print(f"[bold]agentgym compare[/] {', '.join(settings.methods)} x seeds {settings.seeds}; reproduce with:\n"
                  f"  {command}")
    shared = shared_fields(settings, "pending")
    for line in teacher_needs(settings.methods, shared):
        console.print(f"[yellow]needs[/] {line}")
    base = model_path(settings)
    shared = shared_fields(settings, warm_start(settings, shared, base))
    (out / "settings.json").write_text(json.dumps({"settings": asdict(settings), "command": command,
                                                   "trainer_config": shared}, indent=2))
    for seed in settings.seeds:
        start_dir = out / "start" / f"seed{seed}"
        if not (start_dir / UNIT_FILE).is_file():
            console.rule(f"[bold]seed {seed}[/] starting weights on the held-out tasks")
            fields = unit_fields(shared, settings.methods[0], seed, start_dir)
            run_unit_process(start_dir, {**fields, "max_steps": 1}, "start")
        for method in settings.methods:
            unit_dir = out / "runs" / method / f"seed{seed}"
            if (unit_dir / UNIT_FILE).is_file():
                console.print(f"{method} seed {seed}: finished earlier, not run again ({unit_dir})")
                continue
            console.rule(f"[bold]{method}[/] seed {seed}")
            run_unit_process(unit_dir, unit_fields(shared, method, seed, unit_dir), "train")
    report = write_report(out, settings)
    console.print(f"[bold green]comparison written[/]: {report}")
    return report
