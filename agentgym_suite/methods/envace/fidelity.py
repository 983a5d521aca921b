"""World-model fidelity: replay the same caller actions through the real env and the world model.

For each task and each caller (``oracle`` and optionally a model), the caller plays the task in
the real tool env (the rehearsal env with ``world_model="real"``, so both sides follow the same
ending rule); its action sequence is then replayed, unchanged, in the rehearsal env with the
world model under test. The i-th tool call of both runs is compared:

* ``format_valid`` - the world model answered within the output contract (no
  ``INVALID_SIMULATOR_OUTPUT``/``SIMULATOR_FAILED``; a call the replay never reached counts as invalid);
* ``key_agreement`` - Jaccard overlap of the JSON key paths of both results (``a.b``, ``a[].c``);
* ``exact_agreement`` - the results are equal as canonical JSON.

In the replay the simulator sees its own earlier answers. The teacher-forced one-step
comparison removes that drift: for every real call, the simulator is asked once, on the
*real* history (the real conversation up to that call, real tool results included), and its
answer is compared with the real one: ``tf_format_valid``, ``tf_key_agreement``,
``tf_exact_agreement``.

* ``success_check_agreement`` - the real env's own success check, on both sides: on the real
  run, and on the actions the rehearsed episode actually took (it can end early, when the
  simulator answers with an error), executed in the real env. Per episode; per tool over
  the episodes that call it.

Both runs are played by the rollout engine: the caller as its policy in the real env, then a
replay of the caller's actions in the rehearsal env. A real run that failed (the caller or the
env raised) is still compared over the calls it made, with the reason in ``real_error``.

:func:`run_fidelity` returns a :class:`FidelityReport`; :func:`write_report` writes
``fidelity.json`` and ``fidelity.png``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from agentgym_suite.methods.envace.contract import INVALID_SIMULATOR_OUTPUT, SIMULATOR_FAILED
from agentgym_suite.methods.envace.grounding import DONE_REPLY
from agentgym_suite.envs.shared.canonical_json import canonical
from agentgym_suite.rollout import EpisodeSpec, RolloutEngine, Trajectory
from agentgym_suite.rollout.oracle_agent import OracleAgent
from agentgym_suite.rollout.seeding import episode_seed, select_tasks

CALL_METRICS = ("format_valid", "key_agreement", "exact_agreement", "tf_format_valid", "tf_key_agreement", "tf_exact_agreement")
"""Per-call metrics: the replay's, then the teacher-forced one-step comparison's."""
METRICS = (*CALL_METRICS, "success_check_agreement")
ALL = "ALL"


def _as_json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except (json.JSONDecodeError, ValueError):
            return value
    return value


def key_paths(value: Any, prefix: str = "") -> set[str]:
    """The key paths of a JSON value (scalars: the path itself; list items share ``[]``)."""
    value = _as_json(value)
    if isinstance(value, dict):
        paths: set[str] = set()
        for key, child in value.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            paths |= {path} | key_paths(child, path)
        return paths or {prefix + "{}"}
    if isinstance(value, list):
        return set().union(*(key_paths(v, prefix + "[]") for v in value)) if value else {prefix + "[]"}
    return {prefix or "$"}


def key_agreement(real: Any, simulated: Any) -> float:
    """Jaccard overlap of the key paths of two results."""
    a, b = key_paths(real), key_paths(simulated)
    return len(a & b) / len(a | b) if a | b else 1.0


def format_valid(result: Any) -> bool:
    """False when a simulated result is a contract violation or a failed generation."""
    result = _as_json(result)
    if isinstance(result, dict) and isinstance(result.get("error_tool_call"), dict):
        return result["error_tool_call"].get("code") not in (INVALID_SIMULATOR_OUTPUT, SIMULATOR_FAILED)
    return True


@dataclass
class EpisodeComparison:
    """One task replayed with one caller."""

    task_id: str
    caller: str
    real_won: bool
    rehearsed_won: bool
    """The rehearsal env's own verdict (its reward mode)."""
    calls: list[dict[str, Any]] = field(default_factory=list)
    rehearsed_check_won: bool = False
    """The real env's success check on the actions the rehearsed episode took."""
    rehearsed_steps: int = 0
    real_error: str | None = None
    """Why the real run failed (the caller or the env raised), when it did."""


@dataclass
class FidelityReport:
    """Per-tool and overall fidelity metrics, plus every compared episode."""

    base_env: str
    world_model: str
    per_tool: dict[str, dict[str, float]]
    episodes: list[EpisodeComparison]

    def to_json(self) -> dict[str, Any]:
        """The report as a JSON-serialisable dict (the content of ``fidelity.json``)."""
        return {
            "base_env": self.base_env,
            "world_model": self.world_model,
            "metrics": list(METRICS),
            "per_tool": self.per_tool,
            "episodes": [e.__dict__ for e in self.episodes],
        }


class _Replay:
    """Plays a fixed list of actions, in order."""

    name = "replay"

    def __init__(self, actions: Sequence[str]) -> None:
        self._actions = list(actions)

    def reset(self, env: Any, *, seed: int | None = None) -> None:
        self._next = iter(self._actions)

    def act(self, observation: str, info: dict[str, Any]) -> str:
        return next(self._next)


def _play(env: Any, agent: Any, task_id: str, seed: int, max_turns: int) -> Trajectory:
    [trajectory] = RolloutEngine(agent, max_turns=max_turns).run([env], [EpisodeSpec(task_id, seed, task_id)])
    return trajectory


def _play_real(env: Any, caller: Any, task_id: str, seed: int, max_turns: int) -> Trajectory:
    """Play the task in the real env with the caller (when None, the oracle: the plan it gives at
    reset, then its next step once that runs out)."""
    oracle = OracleAgent(plan_at_reset=True, when_done=DONE_REPLY)
    return _play(env, oracle if caller is None else caller, task_id, seed, max_turns)


def _replay(env: Any, actions: Sequence[str], task_id: str, seed: int) -> tuple[bool, int]:
    """Replay ``actions`` in ``env``; (won, actions it took before the episode ended)."""
    if not actions:
        return False, 0
    played = _play(env, _Replay(actions), task_id, seed, len(actions))
    return played.won, len(played.turns)


def _real_check(env: Any, actions: Sequence[str], task_id: str, seed: int) -> bool:
    """The real env's success check after ``actions`` (the check as it stands after the last one)."""
    if not actions:
        return False
    env.reset(seed=seed, options={"task_id": task_id})
    info: dict[str, Any] = {}
    for action in actions:
        *_, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    return bool(info.get("won"))


def _caller_text(message: dict[str, Any]) -> str:
    blocks = []
    for call in message.get("tool_calls") or []:
        fn = call.get("function", {})
        arguments = fn.get("arguments")
        try:
            arguments = json.loads(arguments) if isinstance(arguments, str) else arguments
        except (json.JSONDecodeError, ValueError):
            pass
        blocks.append("<tool_call>\n" + json.dumps({"name": fn.get("name"), "arguments": arguments}, ensure_ascii=False) + "\n</tool_call>")
    return "\n".join(part for part in (str(message.get("content") or "").strip(), *blocks) if part)


def teacher_forced(rehearsed: Any, messages: Sequence[dict[str, Any]], records: Sequence[Any], seed: int) -> list[Any]:
    """The simulator's one-step answer to each real call, given the real history before it.

    ``records`` are the real run's tool-log records, one per call of the assistant messages,
    in order. Returns one simulated result per record (``None`` where a record has no call).
    """
    from agentgym_suite.methods.envace.prompts import SimulatorRequest

    requests, positions = [], []
    tools = list(rehearsed.env.tool_index.values())
    k = 0
    for j, message in enumerate(messages):
        if message.get("role") != "assistant":
            continue
        caller = _caller_text(message)
        for call in message.get("tool_calls") or []:
            if k >= len(records):
                break
            fn = call.get("function", {})
            arguments = records[k].arguments if isinstance(records[k].arguments, dict) else {}
            requests.append(SimulatorRequest(tools, rehearsed.examples, list(messages[:j]), caller, str(fn.get("name")), dict(arguments)))
            positions.append(k)
            k += 1
    out: list[Any] = [None] * len(records)
    if rehearsed.real:
        return [r.result for r in records]
    for position, simulation in zip(positions, rehearsed.world_model.simulate(requests, seed=seed)):
        out[position] = simulation.result
    return out


def _summarise(episodes: list[EpisodeComparison]) -> dict[str, dict[str, float]]:
    sums: dict[str, dict[str, float]] = {}
    for ep in episodes:
        agree = float(ep.real_won == ep.rehearsed_check_won)
        tools = {c["tool"] for c in ep.calls} | {ALL}
        for tool in tools:
            row = sums.setdefault(tool, {"calls": 0.0, "episodes": 0.0, **{m: 0.0 for m in METRICS}})
            row["episodes"] += 1
            row["success_check_agreement"] += agree
        for call in ep.calls:
            for tool in (call["tool"], ALL):
                row = sums[tool]
                row["calls"] += 1
                for metric in CALL_METRICS:
                    row[metric] += float(call[metric])
    out: dict[str, dict[str, float]] = {}
    for tool, row in sorted(sums.items(), key=lambda kv: (kv[0] == ALL, kv[0])):
        calls, eps = row["calls"], row["episodes"]
        out[tool] = {
            "calls": int(calls),
            "episodes": int(eps),
            **{m: (row[m] / calls if calls else float("nan")) for m in CALL_METRICS},
            "success_check_agreement": row["success_check_agreement"] / eps if eps else float("nan"),
        }
    return out


def run_fidelity(
    base_env: str,
    world_model: Any,
    *,
    episodes: int = 5,
    base_env_kwargs: dict[str, Any] | None = None,
    callers: Sequence[Any] = ("oracle",),
    seed: int = 0,
    max_turns: int = 30,
    sampling: Any = None,
    max_prompt_chars: int = 24_000,
    make_caller: Callable[..., Any] | None = None,
) -> FidelityReport:
    """Compare ``world_model`` with the real ``base_env`` on ``episodes`` tasks.

    Args:
        callers: ``"oracle"`` and/or agent objects or model specs (``tiny``, ``hf:...``) whose
            actions in the real env are replayed in the rehearsal env.
        world_model: a backend spec, a backend object, or ``"real"`` (the reference: 1.0 everywhere).
        make_caller: turns a caller spec into an agent, called as ``make_caller(spec, seed=seed)``
            (``agentgym fidelity`` passes :func:`~agentgym_suite.evaluation.agent_specs.make_agent`;
            this module sits below the agents' floor). Needed only for callers given as specs.

    Raises:
        ValueError: a caller given as a spec without ``make_caller``.
    """
    from agentgym_suite.methods.envace import RehearsalEnv

    specs = [c for c in callers if isinstance(c, str) and c != "oracle"]
    if specs and make_caller is None:
        raise ValueError(f"callers {specs} are specs; pass make_caller (e.g. agentgym_suite.evaluation.agent_specs."
                         "make_agent) or agent objects.")

    if isinstance(world_model, str) and world_model != "real":
        from agentgym_suite.llm.role_client import role_backend

        world_model = role_backend("world_model", world_model, shared=False)  # cached and accounted as the world_model role
    label = world_model if isinstance(world_model, str) else str(getattr(world_model, "name", type(world_model).__name__))
    real = RehearsalEnv(base_env=base_env, base_env_kwargs=base_env_kwargs, world_model="real")
    rehearsed = RehearsalEnv(base_env=base_env, base_env_kwargs=base_env_kwargs, world_model=world_model,
                             sampling=sampling, max_prompt_chars=max_prompt_chars, reward_mode="none")
    checker = RehearsalEnv(base_env=base_env, base_env_kwargs=base_env_kwargs, world_model="real")
    tasks = select_tasks(real.task_ids(), episodes, seed)
    compared: list[EpisodeComparison] = []
    for caller_spec in callers:
        caller = None if caller_spec == "oracle" else \
            make_caller(caller_spec, seed=seed) if isinstance(caller_spec, str) and make_caller is not None else caller_spec
        name = "oracle" if caller is None else str(getattr(caller, "name", caller_spec))
        for task_id in tasks:
            reset_seed = episode_seed(seed, task_id)  # attempt 0: the episode `agentgym eval --seed` plays first
            played = _play_real(real, caller, task_id, reset_seed, max_turns)
            actions = [turn.completion_text for turn in played.turns]
            real_log = list(real.tool_log)
            real_messages = list(real.messages)
            rehearsed_won, steps = _replay(rehearsed, actions, task_id, reset_seed)
            sim_log = list(rehearsed.tool_log)
            forced = teacher_forced(rehearsed, real_messages, real_log, reset_seed)
            check_won = _real_check(checker, actions[:steps], task_id, reset_seed)
            calls = []
            for i, record in enumerate(real_log):
                sim = sim_log[i] if i < len(sim_log) and sim_log[i].name == record.name else None
                one = forced[i]
                calls.append({
                    "tool": record.name,
                    "format_valid": sim is not None and format_valid(sim.result),
                    "key_agreement": key_agreement(record.result, sim.result) if sim is not None else 0.0,
                    "exact_agreement": sim is not None and canonical(_as_json(record.result)) == canonical(_as_json(sim.result)),
                    "tf_format_valid": one is not None and format_valid(one),
                    "tf_key_agreement": key_agreement(record.result, one) if one is not None else 0.0,
                    "tf_exact_agreement": one is not None and canonical(_as_json(record.result)) == canonical(_as_json(one)),
                })
            compared.append(EpisodeComparison(task_id, name, played.won, rehearsed_won, calls, real_error=played.error,
                                              rehearsed_check_won=check_won, rehearsed_steps=steps))
    real.close()
    rehearsed.close()
    checker.close()
    return FidelityReport(rehearsed.base_env_id, label, _summarise(compared), compared)


def write_report(report: FidelityReport, out_dir: str | Path) -> tuple[Path, Path]:
    """Write ``fidelity.json`` and ``fidelity.png`` (grouped bars per tool) into ``out_dir``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    json_path = out / "fidelity.json"
    json_path.write_text(json.dumps(report.to_json(), indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    tools = list(report.per_tool)
    fig, ax = plt.subplots(figsize=(max(6.0, 0.9 * len(tools) + 2), 4))
    width = 0.8 / len(METRICS)
    for j, metric in enumerate(METRICS):
        values = [report.per_tool[t][metric] for t in tools]
        ax.bar([i + j * width for i in range(len(tools))], [0.0 if v != v else v for v in values], width, label=metric)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(tools))])
    ax.set_xticklabels(tools, rotation=30, ha="right", fontsize=8)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("rate")
    ax.set_title(f"World-model fidelity: {report.world_model} vs {report.base_env}")
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    png_path = out / "fidelity.png"
    fig.savefig(png_path, dpi=120)
    plt.close(fig)
    return json_path, png_path
