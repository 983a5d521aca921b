"""The evaluation loop behind ``agentgym eval``: plan, skip finished episodes, run, summarise.

Episodes are played by the rollout engine with the agent as its policy, on envs from one
:class:`~agentgym_suite.rollout.EnvPool` that replaces an env after an env-side failure. They are
played :func:`parallel_width` at a time (``batch_size``, or the number of env workers when more):
a batched agent in lockstep, any other agent as that many copies of it, each playing one episode
with its own seed, so results do not depend on how many run at once.

Output directory layout:

* ``config.json`` — the run's settings; a re-run with the same directory must match them
  (env id, env kwargs, agent, seed, turn limit, prompt format), while ``episodes`` and ``k``
  may grow to extend the run.
* ``trajectories.jsonl`` — one :class:`~agentgym_suite.rollout.records.Trajectory` per line (keyed by
  task id and attempt, see :mod:`~agentgym_suite.evaluation.store`).
* ``summary.json`` — :func:`~agentgym_suite.evaluation.metrics.summarize` over every record
  in the file, plus the run's settings and timings.

Crashes are reported as they happen, through the ``agentgym_suite.evaluation.runner`` logger
(``agentgym eval`` prints it): the first crash of each kind (:func:`~agentgym_suite.evaluation.metrics.crash_kind`)
with its error, a count at the end, and, on a re-run, how many crashed episodes of the earlier
run are kept rather than played again (``retry_failed`` plays them again).
"""

from __future__ import annotations

import copy
import json
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any


from agentgym_suite.agents.base import Agent
from agentgym_suite.core.errors import AgentGymError
from agentgym_suite.core.guards import check_timeout
from agentgym_suite.core.interrupts import check as check_interrupt
from agentgym_suite.core.credentials import masked
from agentgym_suite.evaluation.agent_specs import agent_label, make_agent
from agentgym_suite.evaluation.policy_tokenizer import with_policy_tokenizer
from agentgym_suite.evaluation.extensions import active_extensions, extension_names
from agentgym_suite.evaluation.metrics import crash_kind, final_info, is_scorable, summarize
from agentgym_suite.evaluation.store import CONFIG_FILE, SUMMARY_FILE, TRAJECTORIES_FILE, LoadReport, TrajectoryStore
from agentgym_suite.evaluation.task_selection import EpisodePlan, plan_episodes, select_tasks
from agentgym_suite.rollout import EnvPool, EpisodeSpec, RolloutEngine, Trajectory
from agentgym_suite.rollout.policies import AgentPolicy, is_agent, supports_batches
from agentgym_suite.rollout.records import episode_key
from agentgym_suite.rollout.workers import parse_env_workers
from agentgym_suite.rollout.workers.settings import EnvWorkers
from agentgym_suite.registration import env_class

logger = logging.getLogger(__name__)

DEFAULT_MAX_TURNS = 50
"""Turn limit when neither ``max_turns`` nor the env's registration gives one."""

RESUME_KEYS = ("env_id", "env_kwargs", "agent", "seed", "max_turns", "prompt_format")
"""Settings a resumed run must share with the run that wrote the directory (and the options of every
declared evaluation extension, under its name: :func:`~agentgym_suite.evaluation.extensions.extension_names`)."""


class EvalConfigMismatch(AgentGymError, ValueError):
    """``--out`` holds a run made with different settings."""


@dataclass
class EvalResult:
    """What :func:`evaluate` returns."""

    summary: dict[str, Any]
    records: list[Trajectory]
    out_dir: Path
    ran: int = 0
    """Episodes run by this call (the rest were loaded from the directory)."""
    load_report: LoadReport = field(default_factory=LoadReport)
    skipped_crashed: int = 0
    """Crashed episodes of an earlier run that were kept, not played again (no ``retry_failed``)."""


def env_kwargs_for(env_kwargs: dict[str, Any] | None, max_turns: int | None) -> dict[str, Any]:
    """The ``gymnasium.make`` keyword arguments of an evaluation: ``env_kwargs`` plus the turn limit."""
    kwargs = dict(env_kwargs or {})
    if max_turns is not None:
        kwargs["max_episode_steps"] = max_turns
    return kwargs


def _check_config(out_dir: Path, config: dict[str, Any]) -> None:
    path = out_dir / CONFIG_FILE
    if not path.exists():
        return
    try:
        previous = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    diffs = [
        f"{key}: {previous.get(key)!r} there, {config.get(key)!r} now"
        for key in RESUME_KEYS + extension_names()
        if key in previous and previous.get(key) != config.get(key)
    ]
    if diffs:
        raise EvalConfigMismatch(
            f"{out_dir} holds a run with other settings ({'; '.join(diffs)}). "
            "Resume with the same settings, or choose a new --out directory."
        )


def _carried_over(out_dir: Path) -> dict[str, Any]:
    """What an earlier run in ``out_dir`` learned while playing and a resumed one keeps
    (``prompt_format_played``)."""
    try:
        previous = json.loads((out_dir / CONFIG_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {key: previous[key] for key in ("prompt_format_played",) if isinstance(previous, dict) and key in previous}


def _write_json(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)


def _progress(total: int, done: int, enabled: bool) -> tuple[Any, Callable[[Trajectory], None]]:
    """A rich progress bar (or a no-op) and the callback that advances it."""
    if not enabled:
        return None, lambda record: None
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    progress = Progress(
        TextColumn("[bold]eval"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[status]}"),
        TimeRemainingColumn(),
    )
    task = progress.add_task("eval", total=total, completed=done, status="")
    wins = {"won": 0, "n": 0}

    def advance(record: Trajectory) -> None:
        wins["n"] += 1
        wins["won"] += int(record.won)
        status = f"won {wins['won']}/{wins['n']}" + (" (error)" if record.failed else "")
        progress.update(task, advance=1, status=status)

    return progress, advance


class _CrashReports:
    """Logs the first crash of each kind as it happens, and a count of them at the end."""

    def __init__(self, out_dir: Path) -> None:
        self.out_dir = out_dir
        self.kinds: dict[str, int] = {}

    def __call__(self, record: Trajectory) -> None:
        if not record.broken:
            return
        kind = crash_kind(record)
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        if self.kinds[kind] == 1:
            lines = (record.error or "").strip().splitlines()
            logger.warning("episode %s crashed (%s): %s\n  (later crashes of this kind are counted, not shown)",
                           record.key, kind, lines[0][:500] if lines else "")

    def finish(self, ran: int) -> None:
        crashed = sum(self.kinds.values())
        if crashed:
            logger.warning("%d of the %d episodes run crashed (%s); their errors are in %s. They are left out of "
                           "the success rate. Fix the cause, then rerun with --retry-failed to play them again.",
                           crashed, ran, "; ".join(f"{n} × {kind}" for kind, n in self.kinds.items()),
                           self.out_dir / TRAJECTORIES_FILE)


def evaluate(
    env_id: str,
    agent: str | Agent,
    *,
    out_dir: str | Path,
    episodes: int | None = None,
    k: int = 1,
    seed: int = 0,
    env_kwargs: dict[str, Any] | None = None,
    max_turns: int | None = None,
    prompt_format: str = "single",
    retry_failed: bool = False,
    progress: bool = True,
    agent_options: dict[str, Any] | None = None,
    step_timeout: float | None = None,
    extensions: dict[str, dict[str, Any]] | None = None,
    batch_size: int = 1,
    backend_options: dict[str, Any] | None = None,
    env_workers: Any = None,
    settings_sources: dict[str, str] | None = None,
    model_cache: str | Path | None = "auto",
    prices: dict[str, dict[str, float]] | None = None,
    replay_roles: tuple[str, ...] = (),
) -> EvalResult:
    """Evaluate ``agent`` on ``env_id`` and write the results to ``out_dir``; resumable.

    Args:
        env_id: a registered env id.
        agent: an agent object, or a spec for :func:`~agentgym_suite.evaluation.agent_specs.make_agent`.
        out_dir: output directory; finished episodes already in it are skipped.
        episodes: number of tasks (None: every task of the split); each runs ``k`` times.
        k: attempts per task (pass@k and pass^k are computed for this k).
        seed: fixes the task selection and every episode's seed.
        env_kwargs: keyword arguments for ``gymnasium.make``.
        max_turns: most actions per episode (default: the env's registered limit).
        prompt_format: ``single`` or ``chat`` (for model agents).
        retry_failed: run crashed episodes of an earlier run again.
        progress: show a progress bar.
        agent_options: extra keyword arguments for a model agent (``temperature``…).
        extensions: options of declared evaluation extensions, ``{name: options}``
            (:mod:`~agentgym_suite.evaluation.extensions`; e.g. ``{NAME: {"budget": 2}}``
            for a method's agent wrapper): each wraps
            the agent, its options go into ``config.json`` under its name (a resumed run must share
            them) and its summary part into ``summary.json`` under its name.
        batch_size: episodes played at once: in lockstep with one batched generation call per
            turn for agents that support it (model agents: ``reset_batch``/``act_batch``/``keep_slots``),
            as copies of the agent for the others (random, oracle, wrapping and your own agents; see
            :func:`agent_copies`), their ``act`` calls of a turn in threads. Each episode samples from
            its own seed, so the results do not depend on the batch size (see
            :mod:`~agentgym_suite.rollout.policies`).
        backend_options: keyword arguments for a model agent's backend (``load_backend``), e.g.
            an OpenAI-compatible client's ``timeout``, ``max_retries``, ``max_concurrency``,
            ``send_seed``, ``send_logprobs``, ``api_key_env``, ``headers``, ``tools_in_prompt``.
        step_timeout: seconds one ``env.step`` may take; a slower step ends the episode
            truncated with the reason in ``error`` and the env is replaced (None: no limit).
        env_workers: where the envs run: ``1`` inline, ``N`` worker processes, ``ray`` (see
            :func:`~agentgym_suite.rollout.workers.parse_env_workers`); None: the env's default for
            ``batch_size`` live envs. N workers (or ``ray:N``) play at least N episodes at once. Results are the same whichever; an episode whose worker
            died is recorded with the reason (``--retry-failed`` runs it again).
        settings_sources: where ``k`` and the agent's sampling settings came from (a flag, the env's
            ``evaluation_defaults``, the suite's default); written into ``summary.json`` as
            ``agent_settings_sources`` next to ``agent_settings``.
        model_cache: the cache folder of the model-played roles (simulated users, judges, world models):
            ``"auto"`` (``model-cache/`` beside ``out_dir``), a folder, or None for none. Their calls
            are summed per role into the summary's ``model_calls``
            (:mod:`~agentgym_suite.evaluation.model_accounting`).
        prices: USD per million prompt/completion tokens per model, for ``model_calls``' cost
            (:func:`~agentgym_suite.evaluation.model_accounting.load_prices`).
        replay_roles: roles that may only answer from the cache (``--rescore`` replays the user).
    """
    from agentgym_suite.evaluation.model_accounting import account, call_settings, served_envs_note
    from agentgym_suite.llm.role_client import model_calls

    step_timeout = check_timeout(step_timeout)
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}.")
    out = Path(out_dir)
    make_kwargs = with_policy_tokenizer(env_id, with_evaluation_defaults(env_id, env_kwargs), agent)
    config = {
        "env_id": env_id,
        "env_kwargs": masked(make_kwargs),  # what config.json and summary.json say: no credentials
        "agent": agent_label(agent),
        "seed": int(seed),
        "max_turns": max_turns,
        "prompt_format": prompt_format,
        "k": int(k),
        "episodes": episodes,
    }
    chosen = active_extensions(extensions)
    for extension, options in chosen:
        config[extension.name] = options
    settings = _result_settings(agent_options, backend_options)
    if settings:
        config["agent_settings"] = settings
    if settings_sources:
        config["agent_settings_sources"] = dict(settings_sources)
    _check_config(out, config)
    config.update(_carried_over(out))
    calls = call_settings(out, model_cache, tuple(replay_roles))
    config["model_cache"] = str(calls.cache_dir) if calls.cache_dir is not None else None
    kwargs = env_kwargs_for(make_kwargs, max_turns)
    workers = parse_env_workers(env_workers)  # a command's parsed value passes through; raw API values parse here
    width = parallel_width(batch_size, workers)
    served = served_envs_note(workers)
    if served is not None:
        logger.warning("model-played roles: %s", served["note"])
    pool = EnvPool(step_timeout, workers=workers, live_envs=width)
    routed = ExitStack()
    try:
        invocation = routed.enter_context(model_calls(calls))  # envs (and the workers they start) see the settings
        env = pool.get(env_id, 1, kwargs)[0]
        tasks = select_tasks(list(env.unwrapped.task_ids()), episodes, seed)
        config["leaderboard_departures"] = leaderboard_departures(env)
        config["max_action_chars"] = max_action_chars(env)
        config["split"] = evaluation_split(env)
        config["score_scale"] = float(getattr(env.unwrapped, "score_scale", 1.0) or 1.0)
        plan = plan_episodes(tasks, k, seed)
        out.mkdir(parents=True, exist_ok=True)
        store = TrajectoryStore(out)
        finished, load_report = store.load(drop_failed=retry_failed)
        todo = [p for p in plan if episode_key(p.task_id, p.attempt) not in finished]
        planned = {episode_key(p.task_id, p.attempt) for p in plan}
        skipped_crashed = sum(1 for key, r in finished.items() if key in planned and r.broken)
        if skipped_crashed:
            logger.warning("%d episode(s) of the earlier run in %s crashed; they are kept as they are, not played "
                           "again. Rerun with --retry-failed to play them again.", skipped_crashed, out)
        if load_report.removed_failed:
            logger.warning("playing %d crashed episode(s) again (their records are kept in %s).",
                           load_report.removed_failed, out / "trajectories.retried.jsonl")
        crashes = _CrashReports(out)
        turn_limit = max_turns or getattr(env.spec, "max_episode_steps", None) or DEFAULT_MAX_TURNS
        _write_json(out / CONFIG_FILE, config)
        policy = make_agent(agent, seed=seed, prompt_format=prompt_format, backend_options=backend_options,
                            **(agent_options or {})) if todo else None
        for extension, options in chosen if policy is not None else ():
            policy = extension.wrap_agent(policy, options)
        agents = AgentPolicy(policy, copies=agent_copies(policy, width - 1)) if policy is not None and is_agent(policy) \
            and not supports_batches(policy) else policy
        bar, advance = _progress(len(plan), len(plan) - len(todo), progress and bool(todo))
        started = time.perf_counter()
        ran = 0
        try:
            if bar is not None:
                bar.start()

            def keep(record: Trajectory) -> None:
                nonlocal ran
                store.append(record)
                finished[record.key] = record
                ran += 1
                advance(record)
                crashes(record)

            lanes = lane_agents(agents, workers)
            if lanes:
                play_in_lanes(env_id, lanes, [_spec(p) for p in todo], max_turns=turn_limit, env_kwargs=kwargs,
                              step_timeout=step_timeout, on_record=keep)
            elif agents is not None:
                engine = RolloutEngine(agents, max_turns=turn_limit, info_keys=None, env_pool=pool)
                width = engine.policy.max_episodes or width
                for start in range(0, len(todo), width):
                    check_interrupt()  # a Ctrl-C swallowed during the last batch stops here
                    for record in engine.run_specs(env_id, [_spec(p) for p in todo[start:start + width]],
                                                   env_kwargs=kwargs):
                        keep(record)
        finally:
            if bar is not None:
                bar.stop()
            crashes.finish(ran)
            played = _played_formats(policy)
            if played and played != config.get("prompt_format_played"):
                config["prompt_format_played"] = played  # kept in config.json for resumed runs
                _write_json(out / CONFIG_FILE, config)
            records = list(finished.values())
            missing = sum(1 for p in plan if episode_key(p.task_id, p.attempt) not in finished)
            summary = _summary(records, config, time.perf_counter() - started, len(plan), missing, ran)
            extra_metrics = benchmark_metrics(env_id, records, k=int(config["k"]))
            if extra_metrics:
                summary["benchmark_metrics"] = extra_metrics
            players = agents.agents if isinstance(agents, AgentPolicy) else [policy]
            for extension, _ in chosen if policy is not None else ():
                part = extension.summary(players)
                if part:
                    summary[extension.name] = part
            accounting = account(out, invocation, prices)
            if accounting or served is not None:
                summary["model_calls"] = {**accounting, "cache": config["model_cache"]}
                if served is not None:
                    summary["model_calls"]["served_envs"] = served
            _write_json(out / SUMMARY_FILE, summary)
    finally:
        pool.close()
        routed.close()
    return EvalResult(summary=summary, records=records, out_dir=out, ran=ran, load_report=load_report,
                      skipped_crashed=skipped_crashed)


def parallel_width(batch_size: int, workers: EnvWorkers | None) -> int:
    """Episodes an evaluation plays at once: ``batch_size``, or the number of env workers when more.

    ``--env-workers N`` (N processes, or ``ray:N`` actors) plays N episodes at once whatever the
    agent: a batched agent in lockstep, a one-at-a-time agent as N copies (:func:`agent_copies`).
    ``workers`` is the parsed ``env_workers`` (None: the env's default).
    """
    count = workers.count if workers is not None and workers.kind != "inline" and workers.count else 1
    return max(int(batch_size), int(count))


def lane_agents(agents: Any, workers: EnvWorkers | None) -> list[Any]:
    """The agent copies that play free-running lanes (:func:`play_in_lanes`): those of a one-at-a-time
    agent when the envs live in worker processes (``workers``: the parsed ``env_workers``); empty
    otherwise (the lockstep engine plays)."""
    if not isinstance(agents, AgentPolicy) or workers is None or workers.kind != "processes":
        return []
    return list(agents.agents) if len(agents.agents) > 1 else []


def play_in_lanes(env_id: str, agents: list[Any], specs: list[EpisodeSpec], *, max_turns: int,
                  env_kwargs: dict[str, Any], step_timeout: float | None,
                  on_record: Callable[[Trajectory], None]) -> None:
    """Play ``specs`` with one lane per agent copy: each lane has its own env worker process and takes
    the next planned episode as soon as its last one ended, so no copy waits for another's steps.
    Every episode plays with its own seed, so the records are those of an inline run, in the order
    they finish; ``on_record`` is called for each, one at a time."""
    queue = list(reversed(specs))
    lock = threading.Lock()

    def lane(agent: Any) -> None:
        pool = EnvPool(step_timeout, workers=EnvWorkers("processes", 1), live_envs=1)
        try:
            engine = RolloutEngine(AgentPolicy(agent), max_turns=max_turns, info_keys=None, env_pool=pool)
            while True:
                with lock:
                    if not queue:
                        return
                    spec = queue.pop()
                for record in engine.run_specs(env_id, [spec], env_kwargs=env_kwargs):
                    with lock:
                        on_record(record)
        finally:
            pool.close()

    with ThreadPoolExecutor(max_workers=len(agents), thread_name_prefix="eval-lane") as lanes:
        for done in [lanes.submit(lane, agent) for agent in agents]:
            done.result()


def agent_copies(agent: Any, n: int) -> list[Any]:
    """``n`` independent copies of a one-at-a-time agent (``copy.deepcopy``; an agent can define
    ``__deepcopy__`` to share what must not be copied, such as a model or a client). An agent that
    cannot be copied gets none, with a warning: its episodes are then played one at a time."""
    if n < 1:
        return []
    try:
        return [copy.deepcopy(agent) for _ in range(n)]
    except Exception as exc:
        logger.warning("%s cannot be copied (%s: %s), so its episodes are played one at a time; define "
                       "__deepcopy__ on it (or reset_batch/act_batch/keep_slots) to play several at once.",
                       type(agent).__name__, type(exc).__name__, exc)
        return []


RESULT_SETTINGS = ("temperature", "max_new_tokens", "max_context_tokens", "tools_in_prompt", "send_seed", "autocast")
"""Agent and backend settings that change what a model does; ``config.json`` records those that were set."""


def _result_settings(agent_options: dict[str, Any] | None, backend_options: dict[str, Any] | None) -> dict[str, Any]:
    given = {**(agent_options or {}), **(backend_options or {})}
    return {key: given[key] for key in RESULT_SETTINGS if given.get(key) is not None}


def _spec(plan: EpisodePlan) -> EpisodeSpec:
    """The engine's spec of a planned episode: the task is its group, the resume key its id."""
    return EpisodeSpec(plan.task_id, plan.seed, group_id=plan.task_id, traj_id=episode_key(plan.task_id, plan.attempt),
                       attempt=plan.attempt)


def with_evaluation_defaults(env_id: str, env_kwargs: dict[str, Any] | None) -> dict[str, Any]:
    """``env_kwargs`` completed with the env class's ``evaluation_defaults`` (the split its papers
    evaluate on) for every key the caller did not set."""
    kwargs = dict(env_kwargs or {})
    defaults = getattr(env_class(env_id), "evaluation_defaults", None) or {}
    return {**defaults, **kwargs}


def evaluation_split(env: Any) -> str:
    """``env.unwrapped.evaluation_split()``; empty for envs without the hook."""
    method = getattr(env.unwrapped, "evaluation_split", None)
    return str(method()) if callable(method) else ""


def max_action_chars(env: Any) -> int | None:
    """The longest action the env reads: its ``Text`` action space's ``max_length`` (asked through
    ``env.unwrapped``, so an env in a worker answers too); None when the env does not say."""
    try:
        space = env.unwrapped.action_space
    except (AttributeError, AgentGymError):
        return None
    length = getattr(space, "max_length", None)
    return int(length) if isinstance(length, int) else None


def leaderboard_departures(env: Any) -> list[str]:
    """``env.unwrapped.leaderboard_departures()`` as strings; empty for envs without the hook."""
    method = getattr(env.unwrapped, "leaderboard_departures", None)
    return [str(reason) for reason in method()] if callable(method) else []


def run_departures(records: list[Trajectory], config: dict[str, Any]) -> list[str]:
    """The run's departures: the env's for its settings, then each an episode reported in play
    (its last ``info["departure_in_play"]``, e.g. a guard that refused a call)."""
    found = [str(d) for d in config.get("leaderboard_departures") or []]
    found += [str(final_info(r)["departure_in_play"]) for r in records if final_info(r).get("departure_in_play")]
    return list(dict.fromkeys(found))


def benchmark_metrics(env_id: str, records: list[Trajectory], k: int | None = None) -> dict[str, Any]:
    """The env class's ``benchmark_metrics`` over the final infos of the run's scorable episodes (read
    from the class, not a live env: the env that answered first may have died with its worker);
    ``k`` is the run's planned attempts per task, passed on to the hook."""
    method = getattr(env_class(env_id), "benchmark_metrics", None)
    if not callable(method):
        return {}
    return dict(method([final_info(r) for r in records if not r.broken and is_scorable(r)], k=k))


def prompt_format_played(config: dict[str, Any]) -> dict[str, str]:
    """``prompt_format`` as the model saw it: a model agent prompts a tool env with ``chat``
    messages whatever was asked (:func:`~agentgym_suite.rollout.model_turns.open_prompt`), so
    there ``single`` becomes ``chat``, and ``prompt_format_requested`` keeps what was asked."""
    asked = str(config["prompt_format"])
    played = config.get("prompt_format_played")
    if played and played != asked:
        return {"prompt_format": str(played), "prompt_format_requested": asked}
    return {"prompt_format": asked}


def _played_formats(policy: Any) -> str | None:
    """The prompt formats a model agent reported playing with (``chat``, ``single`` or both), or None."""
    formats = getattr(policy, "prompt_formats", None)
    return "+".join(sorted(formats)) if isinstance(formats, set) and formats else None


def _summary(
    records: list[Trajectory], config: dict[str, Any], run_wall: float, planned: int, missing: int, ran: int
) -> dict[str, Any]:
    summary = summarize(records, k=config["k"])
    scale = float(config.get("score_scale") or 1.0)
    if scale != 1.0:
        mean = summary.get("mean_score")
        summary["score_scale"] = scale
        summary["mean_score_scaled"] = None if mean is None else mean * scale
    summary.update(
        {
            "env_id": config["env_id"],
            "env_kwargs": config["env_kwargs"],
            "agent": config["agent"],
            "seed": config["seed"],
            "max_turns": config["max_turns"],
            **prompt_format_played(config),
            **({"agent_settings": config["agent_settings"]} if "agent_settings" in config else {}),
            "split": config.get("split", ""),
            **({"agent_settings_sources": config["agent_settings_sources"]} if "agent_settings_sources" in config else {}),
            "comparable_to_leaderboard": not run_departures(records, config),
            "leaderboard_departures": run_departures(records, config),
            "max_action_chars": config.get("max_action_chars"),
            "episodes_planned": planned,
            "episodes_missing": missing,
            "complete": missing == 0,
            "episodes_run_now": ran,
            "wall_time_s": sum(r.wall_s for r in records),
            "run_wall_time_s": run_wall,
            "finished_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        }
    )
    return summary
