"""One client for every model-played role of a benchmark: simulated users, judges, world models.

Envs that let a model play a part of the benchmark (the customer of τ², VitaBench's user and
rubric judge, EnvACE's world model and checklist judge) get that model through
:func:`role_backend`: a :class:`RoleBackend` with the ordinary ``generate`` of a
:class:`~agentgym_suite.llm.base.Backend`, which

* answers from a deterministic cache when one is configured: the key is the role, the model
  (backend spec without client options), the exact prompt (messages or text) and tools, and
  every sampling setting including the prompt's seed. A call sampled at temperature > 0 without
  a seed is keyed by its attempt too (the n-th identical call of a process is attempt n), so a
  replay of the same run replays the same answers;
* writes each paid answer to the cache as soon as it arrives, so a stopped run keeps it and
  its resumption asks for nothing twice;
* records every call (cache hit or paid: tokens, seconds) in the run's ledger, which
  ``agentgym eval`` sums per role into ``summary.json``
  (:mod:`agentgym_suite.evaluation.model_accounting`).

What is configured (the cache folder, the ledger, roles that may only replay) is read from
environment variables, so env worker processes started by the run see it too; use
:func:`model_calls` to set them for a block of code. The policy a trainer lends an env is never
routed here (its weights change; caching it would be wrong): only models loaded from a spec.
"""

from __future__ import annotations

import dataclasses
import json
import os
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Sequence

from agentgym_suite.llm.base import Prompt, Sample, SamplingParams, Tools, normalise_tools
from agentgym_suite.llm.call_cache import CacheError, CallCache, CallLedger

CACHE_ENV = "AGENTGYM_MODEL_CACHE"
"""Folder of the model cache (unset or empty: no cache)."""
LEDGER_ENV = "AGENTGYM_MODEL_LEDGER"
"""File of the run's call ledger (unset: calls are not recorded)."""
INVOCATION_ENV = "AGENTGYM_MODEL_INVOCATION"
"""Id of the current ``agentgym eval`` invocation, written beside each ledger row."""
REPLAY_ONLY_ENV = "AGENTGYM_MODEL_REPLAY_ONLY"
"""Comma-separated roles that may only be answered from the cache (``--rescore`` replays the user)."""

ROLES = ("user", "judge", "world_model", "memory")
"""The roles the suite's envs give models (an env may name others)."""

_LOCK = threading.Lock()
_BACKENDS: dict[str, Any] = {}
_CACHES: dict[str, CallCache] = {}
_LEDGERS: dict[str, CallLedger] = {}
_ATTEMPTS: dict[str, int] = {}


class ReplayMiss(CacheError):
    """A role that may only replay (``--rescore``) asked for an answer the cache does not hold."""


def model_id(spec: str) -> str:
    """The model a spec names, for cache keys and accounting: the spec without an ``llm:`` prefix
    and without client options (``openai:m@URL?timeout=9`` -> ``openai:m@URL``)."""
    spec = spec.strip()
    if spec.startswith("llm:"):
        spec = spec[4:].strip()
    return spec.split("?", 1)[0]


def shared_backend(spec: str) -> Any:
    """The generation backend for ``spec`` (``llm:`` prefix allowed), loaded once per process."""
    spec = spec.strip()
    if spec.startswith("llm:"):
        spec = spec[4:].strip()
    if not spec:
        raise ValueError("empty backend spec; use e.g. 'tiny', 'hf:PATH', 'openai:MODEL@URL'.")
    with _LOCK:
        if spec not in _BACKENDS:
            _BACKENDS[spec] = _load(spec)
        return _BACKENDS[spec]


def _load(spec: str) -> Any:
    from agentgym_suite import llm  # looked up at call time, so tests can stand in a fake loader

    return llm.load_backend(spec)


def call_key(role: str, model: str, prompt: Prompt, tools: Tools | None, params: SamplingParams,
             seed: int | None) -> str:
    """The cache key of one prompt's call: role, model, exact prompt and tools, every sampling setting.

    ``params.seeds`` is replaced by the prompt's own ``seed``; everything else of ``params``
    (``n``, temperature, top-p, stop strings, token budget, structure, schema…) is in the key.
    """
    sampling = {f.name: getattr(params, f.name) for f in dataclasses.fields(params) if f.name not in ("seed", "seeds")}
    sampling["seed"] = seed
    return json.dumps({"role": role, "model": model, "prompt": prompt, "tools": tools, "sampling": sampling},
                      sort_keys=True, ensure_ascii=False, default=str)


def _sample_record(sample: Sample) -> dict[str, Any]:
    record = dataclasses.asdict(sample)
    record.pop("request", None)  # the request repeats the prompt; the key has it
    return record


def _sample(record: dict[str, Any]) -> Sample:
    names = {f.name for f in dataclasses.fields(Sample)}
    return Sample(**{k: v for k, v in record.items() if k in names})


def _tokens(samples: Sequence[Sample]) -> tuple[int, int]:
    """Prompt and completion tokens of one request's samples (the server's usage when reported)."""
    usage = next((s.usage for s in samples if s.usage), None)
    if usage:
        return int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
    prompt = len(samples[0].prompt_ids) if samples else 0
    return prompt, sum(len(s.completion_ids) for s in samples)


def _cache() -> CallCache | None:
    folder = os.environ.get(CACHE_ENV, "").strip()
    if not folder:
        return None
    with _LOCK:
        if folder not in _CACHES:
            _CACHES[folder] = CallCache(folder)
        return _CACHES[folder]


def _ledger() -> CallLedger | None:
    path = os.environ.get(LEDGER_ENV, "").strip()
    if not path:
        return None
    with _LOCK:
        if path not in _LEDGERS:
            _LEDGERS[path] = CallLedger(path)
        return _LEDGERS[path]


def _replay_only(role: str) -> bool:
    return role in {r.strip() for r in os.environ.get(REPLAY_ONLY_ENV, "").split(",") if r.strip()}


def _attempt(key: str) -> int:
    with _LOCK:
        attempt = _ATTEMPTS.get(key, 0)
        _ATTEMPTS[key] = attempt + 1
        return attempt


class RoleBackend:
    """A backend playing one ``role``, whose ``generate`` calls go through the cache and the ledger.

    Other attributes are the wrapped backend's (token-level calls such as ``generate_from_ids``
    are not cached).

    Args:
        role: the part the model plays (``user``, ``judge``, ``world_model``, ...).
        backend: the generation backend.
        model: the model's id for keys and accounting (default: the backend's ``name``).
    """

    def __init__(self, role: str, backend: Any, model: str = "") -> None:
        if not role:
            raise ValueError("a RoleBackend needs a role, e.g. 'user' or 'judge'.")
        self.role = role
        self.backend = backend
        self.model = model or str(getattr(backend, "name", "") or type(backend).__name__)
        self.name = str(getattr(backend, "name", self.model))

    def __getattr__(self, name: str) -> Any:
        if name == "backend":  # not set yet (unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.backend, name)

    def __deepcopy__(self, memo: dict[int, Any]) -> RoleBackend:
        return self  # one model per process: copies of an env share it

    def generate(self, prompts: Sequence[Prompt], params: SamplingParams,
                 tools: Sequence[Tools | None] | None = None) -> list[list[Sample]]:
        """``params.n`` samples per prompt: from the cache when it holds them, else from the model (and then
        stored at once). Raises :class:`ReplayMiss` when this role may only replay and an answer is missing."""
        prompts = list(prompts)
        tool_lists = normalise_tools(prompts, tools)
        params.check_seeds(len(prompts))
        cache, ledger = _cache(), _ledger()
        invocation = os.environ.get(INVOCATION_ENV, "")
        keys = []
        for i, prompt in enumerate(prompts):
            seed = params.seed_for(i)
            key = call_key(self.role, self.model, prompt, tool_lists[i], params, seed)
            if seed is None and params.temperature > 0:
                key = f"{key}#attempt={_attempt(key)}"
            keys.append(key)
        rows: list[list[Sample] | None] = [None] * len(prompts)
        if cache is not None:
            for i, key in enumerate(keys):
                started = time.perf_counter()
                stored = cache.get(key)
                if stored is not None:
                    rows[i] = [_sample(record) for record in stored]
                    if ledger is not None:
                        ledger.record(invocation, self.role, self.model, cached=True, prompt_tokens=0,
                                      completion_tokens=0, wall_s=time.perf_counter() - started)
        missing = [i for i, row in enumerate(rows) if row is None]
        if missing and _replay_only(self.role):
            raise ReplayMiss(f"the {self.role} role may only replay answers from the model cache here (--rescore), and "
                             f"{len(missing)} of its answers are not in {getattr(cache, 'path', 'the cache (none set)')}. "
                             "Rescore with the --model-cache of the run that played the episodes.")
        if missing:
            subset = params if params.seeds is None else dataclasses.replace(
                params, seeds=tuple(params.seeds[i] for i in missing))
            started = time.perf_counter()
            fresh = self.backend.generate([prompts[i] for i in missing], subset, tools=[tool_lists[i] for i in missing])
            share = (time.perf_counter() - started) / len(missing)
            for i, samples in zip(missing, fresh):
                samples = list(samples)
                if cache is not None and samples and all(s.ok for s in samples):
                    samples = [_sample(r) for r in cache.put(keys[i], self.role, self.model,
                                                             [_sample_record(s) for s in samples])]
                rows[i] = samples
                if ledger is not None:
                    prompt_tokens, completion_tokens = _tokens(samples)
                    ledger.record(invocation, self.role, self.model, cached=False, prompt_tokens=prompt_tokens,
                                  completion_tokens=completion_tokens, wall_s=share)
        return [row or [] for row in rows]


def role_backend(role: str, setting: Any, *, shared: bool = True) -> Any:
    """The model playing ``role`` for a setting: a backend spec (loaded once per process, or for this
    caller alone when not ``shared``) or a backend object, routed through the cache and ledger; anything
    else (a callable, None) is returned as is."""
    if isinstance(setting, RoleBackend):
        return setting if setting.role == role else RoleBackend(role, setting.backend, setting.model)
    if isinstance(setting, str):
        backend = shared_backend(setting) if shared else _load(setting.strip().removeprefix("llm:").strip())
        return RoleBackend(role, backend, model_id(setting))
    if callable(getattr(setting, "generate", None)):
        return RoleBackend(role, setting)
    return setting


def declared_roles(env_cls: Any) -> dict[str, str]:
    """The model-played roles an env class declares, as ``{constructor setting: role}``: its
    ``user_setting`` plays ``user``, its ``judge_setting`` ``judge``, and its ``policy_setting`` the
    part a borrowed policy plays, named as the setting (EnvACE's ``world_model``)."""
    roles: dict[str, str] = {}
    for hook, role in (("user_setting", "user"), ("judge_setting", "judge"), ("policy_setting", "")):
        setting = str(getattr(env_cls, hook, "") or "")
        if setting:
            roles[setting] = role or setting
    return roles


def call_environment() -> dict[str, str]:
    """The role client's settings of this process (cache, ledger, invocation, replay-only roles) as
    environment variables, for a worker process that does not inherit this process's environment (a
    Ray actor started by a raylet that was started earlier, or on another node); see :func:`adopt_call_environment`."""
    return {name: os.environ.get(name, "") for name in (CACHE_ENV, LEDGER_ENV, INVOCATION_ENV, REPLAY_ONLY_ENV)}


def adopt_call_environment(values: dict[str, str]) -> None:
    """Make ``values`` (from :func:`call_environment` in the process that runs the evaluation) this
    worker process's role-client settings."""
    os.environ.update({name: str(value) for name, value in values.items()
                       if name in (CACHE_ENV, LEDGER_ENV, INVOCATION_ENV, REPLAY_ONLY_ENV)})
    with _LOCK:
        _CACHES.clear()
        _LEDGERS.clear()
        _ATTEMPTS.clear()


@dataclasses.dataclass(frozen=True)
class ModelCallSettings:
    """Where a run's model-played roles keep their answers and their accounting.

    Attributes:
        cache_dir: the cache folder (None: no cache).
        ledger: the run's ledger file (None: calls are not recorded).
        replay_only: roles that may only be answered from the cache.
    """

    cache_dir: Path | None = None
    ledger: Path | None = None
    replay_only: tuple[str, ...] = ()


@contextmanager
def model_calls(settings: ModelCallSettings) -> Iterator[str]:
    """Route the roles' calls of the block (and of env workers it starts) through ``settings``; yields the
    invocation id written beside each ledger row. Cache and ledger files that exist are checked on entry (a
    damaged or foreign file raises :class:`~agentgym_suite.llm.call_cache.CacheError`); new ones are made on
    the first call."""
    if settings.cache_dir is not None:
        cache = CallCache(settings.cache_dir)
        if cache.path.exists():
            cache.connection()
            cache.close()
    if settings.ledger is not None and settings.ledger.exists():
        ledger = CallLedger(settings.ledger)
        ledger.connection()
        ledger.close()
    invocation = uuid.uuid4().hex[:12]
    values = {CACHE_ENV: str(settings.cache_dir or ""), LEDGER_ENV: str(settings.ledger or ""),
              INVOCATION_ENV: invocation, REPLAY_ONLY_ENV: ",".join(settings.replay_only)}
    before = {name: os.environ.get(name) for name in values}
    with _LOCK:
        _ATTEMPTS.clear()  # attempts count from 0 in each run, so a replay of the run replays its answers
    os.environ.update(values)
    try:
        yield invocation
    finally:
        with _LOCK:
            _CACHES.clear()
            _LEDGERS.clear()
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


__all__ = ["ModelCallSettings", "ROLES", "ReplayMiss", "RoleBackend", "adopt_call_environment", "call_environment", "call_key", "declared_roles", "model_calls", "model_id",
           "role_backend", "shared_backend"]
