"""Every env id of the suite, registered with Gymnasium in one flat list.

Ids follow Gymnasium's ``Name-vN`` rule: bump ``N`` when an env's reward or dynamics change.
Each entry also says which optional packages it needs and points to its benchmark's
:class:`~agentgym_suite.core.data_sources.DataSource` (declared in the benchmark's own package),
so ``agentgym list`` can tell what is usable on this machine without importing heavy backends.
"""

from __future__ import annotations

import difflib
import functools
import importlib
import importlib.util
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import gymnasium

from agentgym_suite.core import plugins
from agentgym_suite.core.data_sources import DataSource
from agentgym_suite.core.env_card import EnvCard
from agentgym_suite.core.info import declared_label_keys

_T = TypeVar("_T")


@dataclass(frozen=True)
class EnvEntry:
    """One registered env id and what it needs to run."""

    id: str
    entry_point: str
    max_episode_steps: int
    summary: str
    requires: tuple[str, ...] = ()
    """Importable modules the backend needs (checked with ``importlib.util.find_spec``)."""
    data_source: str = ""
    """``module:attribute`` of the benchmark's :class:`DataSource`; empty when the env uses no data."""
    kwargs: dict = field(default_factory=dict)
    card: str = ""
    """``module:attribute`` of the benchmark's :class:`~agentgym_suite.core.env_card.EnvCard`
    (declared in the benchmark's own package); empty when none is declared."""
    env_workers: str = "inline"
    """Where rollouts play this env when ``env_workers`` is unset: ``inline`` (in the rolling-out
    process), or ``processes`` (one worker process per CPU core, at most one per env, whenever
    more than one env is live): for backends whose steps cost real time (a planner, a JVM)."""
    env_mode: str = ""
    """The trainer's ``env_mode`` that trains on this env instead of ``env_id`` (e.g. ``synthetic``);
    empty for none. An env that plays over another (its class's ``wraps_setting``) gets ``env_id``."""
    eval_extension: str = ""
    """``module:attribute`` of the evaluation extension the method of this env brings
    (:class:`~agentgym_suite.core.eval_extensions.EvalExtension`: flags of ``agentgym eval``, an agent
    wrapper, a summary part), declared in the method's own package; empty for none."""


REMOTE_ENV_ID = "Remote-v0"
"""The id of the env that plays episodes on an OpenEnv server (what ``env_workers: openenv://...`` makes)."""

ENV_ENTRIES: tuple[EnvEntry, ...] = (
    EnvEntry("TextWorld-v0", "agentgym_suite.envs.textworld.env:TextWorldEnv", 50,
             "TextWorld games generated offline (custom, cooking, coin collector, treasure hunter)",
             requires=("textworld",), data_source="agentgym_suite.envs.textworld.data_source:SOURCE",
             card="agentgym_suite.envs.textworld.card:CARD"),
    EnvEntry("ALFWorld-v0", "agentgym_suite.envs.alfworld.env:ALFWorldEnv", 50,
             "ALFWorld household tasks on the real PDDL text engine",
             requires=("alfworld", "textworld"), data_source="agentgym_suite.envs.alfworld.data_source:SOURCE",
             env_workers="processes", card="agentgym_suite.envs.alfworld.card:CARD"),
    EnvEntry("ScienceWorld-v0", "agentgym_suite.envs.scienceworld.env:ScienceWorldEnv", 100,
             "ScienceWorld's 30 elementary-science tasks (Java simulator)",
             requires=("scienceworld",), data_source="agentgym_suite.envs.scienceworld.data_source:SOURCE",
             env_workers="processes", card="agentgym_suite.envs.scienceworld.card:CARD"),
    EnvEntry("WebShop-v0", "agentgym_suite.envs.webshop:WebShopEnv", 15,
             "WebShop online shopping with BM25 product search",
             data_source="agentgym_suite.envs.webshop.data_source:SOURCE",
             card="agentgym_suite.envs.webshop.card:CARD"),
    EnvEntry("SearchQA-v0", "agentgym_suite.envs.searchqa:SearchQAEnv", 4,
             "multi-hop QA with a search tool (HotpotQA, MuSiQue samples from HippoRAG)",
             data_source="agentgym_suite.envs.searchqa.data_source:SOURCE",
             card="agentgym_suite.envs.searchqa.card:SEARCHQA_CARD"),
    EnvEntry("SearchR1-v0", "agentgym_suite.envs.searchqa:SearchR1Env", 5,
             "Search-R1's evaluation: NQ, TriviaQA, PopQA, HotpotQA, 2Wiki, MuSiQue, Bamboogle with its prompt, top-3, "
             "4 searches + answer turn, exact match",
             data_source="agentgym_suite.envs.searchqa.data_source:SEARCH_R1_SOURCE",
             card="agentgym_suite.envs.searchqa.card:SEARCH_R1_CARD"),
    EnvEntry("BFCL-v0", "agentgym_suite.envs.bfcl:BFCLEnv", 30,
             "Berkeley Function Calling Leaderboard v4 (single-turn, multi-turn, web search, memory)",
             requires=("bfcl_eval",), data_source="agentgym_suite.envs.bfcl.data_source:SOURCE",
             card="agentgym_suite.envs.bfcl.card:CARD"),
    EnvEntry("Tau2-v0", "agentgym_suite.envs.tau2:Tau2Env", 200,
             "tau2-bench customer service (retail, airline, telecom, banking_knowledge, mock) with a simulated user",
             data_source="agentgym_suite.envs.tau2.data_source:SOURCE", card="agentgym_suite.envs.tau2.card:CARD"),
    EnvEntry("VitaBench-v0", "agentgym_suite.envs.vitabench:VitaBenchEnv", 150,  # upstream: 300 orchestrator steps, about 150 agent messages
             "VitaBench life-service tasks (delivery, instore) with a simulated user",
             data_source="agentgym_suite.envs.vitabench.data_source:SOURCE",
             card="agentgym_suite.envs.vitabench.card:CARD"),
    EnvEntry("FinMCP-v0", "agentgym_suite.envs.finmcp:FinMCPEnv", 20,
             "FinMCP-Bench financial tool calls replayed from recordings",
             data_source="agentgym_suite.envs.finmcp.data_source:SOURCE", card="agentgym_suite.envs.finmcp.card:CARD"),
    EnvEntry("SyntheticTools-v0", "agentgym_suite.envs.synthetic_tools:SyntheticToolsEnv", 20,
             "procedurally generated stateful tool worlds", card="agentgym_suite.envs.synthetic_tools.card:CARD",
             env_mode="synthetic"),
    EnvEntry("ChecklistTools-v0", "agentgym_suite.envs.checklist_tools:ChecklistToolsEnv", 30,
             "tool-use training tasks in EnvACE's published per-turn checklist format",
             data_source="agentgym_suite.envs.checklist_tools.data_source:SOURCE",
             card="agentgym_suite.envs.checklist_tools.card:CARD"),
    EnvEntry(REMOTE_ENV_ID, "agentgym_suite.serving.remote_env:RemoteTextEnv", 1000,
             "any OpenEnv server's env as a suite env (gym.make('Remote-v0', url='ws://host:port'))",
             requires=("websockets", "pydantic"), card="agentgym_suite.serving.card:CARD"),
    EnvEntry("MCP-v0", "agentgym_suite.integrations.mcp.env:McpEnv", 50,
             "any MCP server's tools as a tool env, on a tasks file (gym.make('MCP-v0', server='stdio:...' or URL, "
             "tasks='tasks.jsonl'))", requires=("mcp",)),
    EnvEntry("Verifiers-v0", "agentgym_suite.integrations.verifiers.env:VerifiersEnv", 50,
             "any verifiers environment as a suite env, one model turn a step (gym.make('Verifiers-v0', env=...))",
             requires=("verifiers",)),
    EnvEntry("SkillRise-v0", "agentgym_suite.envs.skillrise.trial_env:SkillRiseEnv", 32,
             "SkillRise trials over any env: k tasks (or k attempts) with a curated skill document in between",
             card="agentgym_suite.envs.skillrise.card:CARD"),
)


def plugin_entries() -> tuple[EnvEntry, ...]:
    """The entries the suite's own method packages (their ``ENTRY_POINTS``) and other installed
    distributions declare in the ``agentgym_suite.envs`` entry-point group, read alike
    (:func:`agentgym_suite.core.plugins.declared`): each entry point loads an :class:`EnvEntry`, a list
    of them, or a function returning either. An id the suite already registers, or a value of
    another kind, is warned about and skipped."""
    return _declared_entries(plugins.declared(plugins.ENVS_GROUP))


def suite_entries() -> tuple[EnvEntry, ...]:
    """What the suite itself ships: :data:`ENV_ENTRIES`, then the envs its method packages declare
    (:func:`agentgym_suite.core.plugins.suite_methods`), without other distributions' (the catalogue,
    ``agentgym conformance``)."""
    return ENV_ENTRIES + _declared_entries(plugins.suite_methods(plugins.ENVS_GROUP))


def _declared_entries(found_plugins: tuple[plugins.Plugin, ...]) -> tuple[EnvEntry, ...]:
    """The :class:`EnvEntry` values ``found_plugins`` load, checked (see :func:`plugin_entries`)."""
    own = {item.id for item in ENV_ENTRIES}
    found: list[EnvEntry] = []
    for plugin in found_plugins:
        value = plugin.obj() if callable(plugin.obj) and not isinstance(plugin.obj, EnvEntry) else plugin.obj
        items = [value] if isinstance(value, EnvEntry) else list(value) if isinstance(value, (list, tuple)) else None
        if items is None or not all(isinstance(item, EnvEntry) for item in items):
            plugins.warn_skipped(plugin, plugins.ENVS_GROUP, f"it gives {type(value).__name__}, not an EnvEntry "
                                 "(or a list of them); point it at agentgym_suite.registration.EnvEntry values.")
            continue
        for item in items:
            if item.id in own:
                plugins.warn_skipped(plugin, plugins.ENVS_GROUP, f"{item.id} is already an id of "
                                     f"{'the suite' if item.id in {e.id for e in ENV_ENTRIES} else 'another plug-in'}; "
                                     "pick another id or bump its version (Name-vN).")
                continue
            own.add(item.id)
            found.append(item)
    return tuple(found)


def all_entries() -> tuple[EnvEntry, ...]:
    """The suite's own entries (:data:`ENV_ENTRIES`), then those its method packages and installed plug-in
    distributions declare (:func:`plugin_entries`): what ``agentgym list``, :func:`entry` and :func:`register_all` go through."""
    return ENV_ENTRIES + plugin_entries()


DEFAULT_ENV_ID = "TextWorld-v0"
"""The env a training config plays unless it names one (generated games: offline and quick)."""


def entry(env_id: str) -> EnvEntry:
    """Return the entry of ``env_id``; unknown ids list the known ones."""
    entries = all_entries()
    for item in entries:
        if item.id == env_id:
            return item
    ids = [e.id for e in entries]
    raise KeyError(f"Unknown env id {env_id!r}.{did_you_mean(env_id, ids)} Known ids: {', '.join(ids)}.")


def training_env_modes() -> dict[str, str]:
    """``env_mode`` -> the env id a trainer plays in that mode (besides ``real``: ``env_id`` itself)."""
    return {item.env_mode: item.id for item in all_entries() if item.env_mode}


def did_you_mean(name: str, known: list[str]) -> str:
    """`` Did you mean 'X'?`` for the known names closest to ``name`` (case ignored); empty when none is close."""
    by_lower = {k.lower(): k for k in known}
    close = difflib.get_close_matches(str(name).lower(), list(by_lower), n=3, cutoff=0.6)
    return f" Did you mean {', '.join(repr(by_lower[c]) for c in close)}?" if close else ""


def implemented(item: EnvEntry) -> bool:
    """True when the module behind ``item.entry_point`` exists in this install."""
    module = item.entry_point.split(":")[0]
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def data_source(item: EnvEntry) -> DataSource | None:
    """The :class:`DataSource` ``item`` points to (``None`` when it uses no data)."""
    return _declared(item, item.data_source, "SOURCE", DataSource)


def env_card(item: EnvEntry) -> EnvCard | None:
    """The :class:`EnvCard` ``item`` points to (``None`` when it declares none)."""
    return _declared(item, item.card, "CARD", EnvCard)


def _declared(item: EnvEntry, path: str, default_name: str, kind: type[_T]) -> _T | None:
    """The ``module:attribute`` object an entry points to, checked to be a ``kind``; None for no path."""
    if not path:
        return None
    module, _, name = path.partition(":")
    found = getattr(importlib.import_module(module), name or default_name)
    if not isinstance(found, kind):
        article = "an" if kind.__name__[0] in "AEIOU" else "a"
        raise TypeError(f"{item.id}: {path} is a {type(found).__name__}, not {article} {kind.__name__}.")
    return found


SHARED_DATA_SOURCES: tuple[str, ...] = ("agentgym_suite.envs.shared.skills_data:SOURCE",)
"""``module:attribute`` of data that no single env owns (the released skill texts of several envs)."""


def data_sources() -> dict[str, DataSource]:
    """Every registered benchmark's data source, by benchmark name (the names ``agentgym data`` takes),
    and the shared ones (:data:`SHARED_DATA_SOURCES`, e.g. ``skills``)."""
    sources = [data_source(item) for item in all_entries() if implemented(item)]
    for path in SHARED_DATA_SOURCES:
        module, _, name = path.partition(":")
        found = getattr(importlib.import_module(module), name)
        if not isinstance(found, DataSource):
            raise TypeError(f"{path} is a {type(found).__name__}, not a DataSource.")
        sources.append(found)
    return {s.benchmark: s for s in sources if s is not None}


def missing_requirements(item: EnvEntry) -> list[str]:
    """What keeps ``item`` from running here: missing modules and data paths (empty when usable)."""
    from agentgym_suite.core.data import data_dir

    if not implemented(item):
        return [f"module {item.entry_point.split(':')[0]}"]
    missing = [f"package {m}" for m in item.requires if importlib.util.find_spec(m) is None]
    source = data_source(item)
    if source is not None and source.required:
        root = data_dir() / source.benchmark
        missing += [f"data {root / p}" for p in source.required if not _present(root, p)]
    return missing


def _present(root: Path, relative: str) -> bool:
    """Whether ``root/relative`` exists; a pattern such as ``*.json`` needs one match."""
    if any(ch in relative for ch in "*?["):
        return any(root.glob(relative))
    return (root / relative).exists()


def register_entry(item: EnvEntry) -> None:
    """Register one entry with Gymnasium (idempotent): how :func:`register_all` adds each entry,
    and how a package outside the suite adds an env of its own."""
    if item.id in gymnasium.registry:
        _warn_if_different(gymnasium.registry[item.id], item)
        return
    gymnasium.register(
        id=item.id,
        entry_point=item.entry_point,
        max_episode_steps=item.max_episode_steps,
        kwargs=dict(item.kwargs),
    )


def _warn_if_different(spec: gymnasium.envs.registration.EnvSpec, item: EnvEntry) -> None:
    """Warn that ``item`` is not registered because ``item.id`` already names other settings."""
    ours = (item.entry_point, item.max_episode_steps, dict(item.kwargs))
    theirs = (spec.entry_point, spec.max_episode_steps, dict(spec.kwargs))
    if ours != theirs:
        warnings.warn(
            f"{item.id} is already registered with other settings (entry point, max_episode_steps, kwargs: "
            f"{theirs!r}); the new registration {ours!r} is ignored. Pick another id, or bump its version "
            f"(Name-vN), to register both.",
            stacklevel=3,
        )


def env_class(env_id: str) -> Any:
    """The class (or factory) registered for ``env_id``, the suite's ids registered first; None when
    it cannot be loaded (an unknown id is reported where the env is made, with the known ones)."""
    register_all()
    try:
        entry_point = gymnasium.spec(env_id).entry_point
        return entry_point if callable(entry_point) else gymnasium.envs.registration.load_env_creator(str(entry_point))
    except Exception:
        return None


@functools.cache
def label_keys() -> tuple[str, ...]:
    """The label keys every implemented env declares (``label_keys``), unioned by
    :func:`~agentgym_suite.core.info.declared_label_keys`: what evaluation summaries list under ``labels``."""
    classes = [env_class(item.id) for item in all_entries() if implemented(item)]
    return declared_label_keys(*(cls for cls in classes if isinstance(cls, type)))


def register_all() -> None:
    """Register every implemented entry, the suite's and installed plug-ins' (:func:`all_entries`),
    with Gymnasium (idempotent)."""
    for item in all_entries():
        if item.id not in gymnasium.registry and implemented(item):
            register_entry(item)
