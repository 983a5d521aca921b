"""Envs that live in workers (processes or Ray actors): the handle the engine holds, and the
executor logic both kinds of worker share.

Each worker holds a share of the envs (placed on the least loaded worker, so a group's envs
spread out). A batch of resets or steps is sent to every worker involved at once, then gathered;
each worker plays its share one env after another. A worker that dies, or does not answer within
its deadline (``step_timeout`` per step it was sent plus :data:`ANSWER_GRACE_S`; it is then
killed), fails the calls it was sent with :class:`~agentgym_suite.core.process_groups.EnvWorkerDied`
and loses every env it held: those envs are no longer :meth:`~RemoteWorkers.usable`, and the
worker is started afresh the next time envs are made (:class:`~agentgym_suite.rollout.EnvPool`
does that before every run). Calls on envs of other workers are untouched.
"""

from __future__ import annotations

import time
from abc import abstractmethod
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import cloudpickle
import gymnasium as gym

from agentgym_suite.core.process_groups import CLOSE_WAIT_S, EnvWorkerDied
from agentgym_suite.rollout.workers.base import EnvExecutor, ExecutorHandle, ResetCall, StepCall

ANSWER_GRACE_S = 10.0
"""Seconds a worker may take beyond ``step_timeout`` per step before it counts as hung."""
RESET_TIMEOUT_MIN_S = 120.0
"""Seconds one reset may take in a worker when a step timeout is set (the longer of this and
``step_timeout``): a reset loads a game, a PDDL problem or a JVM task and may take far longer than
a step, yet a worker that hangs in one must still be noticed, killed and replaced."""


class WorkerGone(Exception):
    """Raised or returned by a transport: the worker died or stopped answering (``reason`` says how)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class Worker:
    """One worker of a pool, across restarts."""

    index: int
    generation: int = 0
    """Bumped at every (re)start; envs made by an earlier generation are lost."""
    handle: Any = None
    """The transport's own object (a process and its pipe, a Ray actor); None before the first start."""
    pid: int | None = None
    dead: str | None = None
    """Why it can no longer be used (None while it runs, or before it was started)."""
    keys: set[int] = field(default_factory=set)
    """Keys of the envs it holds."""

    @property
    def running(self) -> bool:
        return self.handle is not None and self.dead is None

    def label(self) -> str:
        return f"env worker {self.index}" + (f" (pid {self.pid})" if self.pid else "")


class RemoteUnwrapped:
    """``env.unwrapped`` of a remote env: reading an attribute fetches it from the worker, and a
    method becomes a remote call (``env.unwrapped.oracle()``, ``task_ids()``). Names starting with
    ``_`` are not forwarded. Subclasses made by :func:`_unwrapped_class` carry the env class's name."""

    def __init__(self, env: RemoteEnv) -> None:
        self._env = env

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        env = self._env
        kind, value = env.executor.request(env, "attr", (env.key, name))
        if kind == "value":
            return value

        def remote_method(*args: Any, **kwargs: Any) -> Any:
            return env.executor.request(env, "call", (env.key, name, args, kwargs))

        remote_method.__name__ = name
        return remote_method

    def __repr__(self) -> str:
        return f"<remote {type(self).__name__} on {self._env.executor.workers[self._env.worker].label()}>"


_UNWRAPPED_CLASSES: dict[str, type[RemoteUnwrapped]] = {}


def _unwrapped_class(name: str) -> type[RemoteUnwrapped]:
    """A :class:`RemoteUnwrapped` subclass named like the env class (prompts name the env by its class)."""
    if name not in _UNWRAPPED_CLASSES:
        _UNWRAPPED_CLASSES[name] = type(name, (RemoteUnwrapped,), {"__doc__": RemoteUnwrapped.__doc__})
    return _UNWRAPPED_CLASSES[name]


class RemoteEnv(ExecutorHandle):
    """The engine's handle of an env that lives in a worker.

    It has the env's ``spec``, an ``unwrapped`` proxy (:class:`RemoteUnwrapped`), and
    ``reset``/``step``/``close`` for single calls; the rollout engine batches its calls through
    :attr:`executor` instead.
    """

    def __init__(self, executor: RemoteWorkers, worker: int, generation: int, key: int, spec: Any, class_name: str) -> None:
        self.executor = executor
        self.worker = worker
        self.generation = generation
        self.key = key
        self.spec = spec
        self.class_name = class_name
        self.unwrapped = _unwrapped_class(class_name)(self)

    def __repr__(self) -> str:
        env_id = getattr(self.spec, "id", self.class_name)
        return f"<RemoteEnv {env_id} #{self.key} on {self.executor.workers[self.worker].label()}>"


class RemoteWorkers(EnvExecutor):
    """Shared logic of the executors whose envs live in workers (see the module docstring).

    A subclass supplies the transport: :meth:`_start`, :meth:`_send`, :meth:`_gather`,
    :meth:`_kill` and :meth:`_shutdown`.

    Args:
        count: number of workers (None: :meth:`_default_count` when envs are first made).
        step_timeout: seconds one ``env.step`` may take (enforced inside the worker, as inline).
    """

    def __init__(self, count: int | None, step_timeout: float | None = None) -> None:
        if count is not None and count < 1:
            raise ValueError(f"the number of env workers must be >= 1, got {count}.")
        self.count = count
        self.step_timeout = step_timeout
        self.workers: list[Worker] = []
        self._next_key = 0
        self._closed = False

    # ------------------------------------------------------------------ transport (subclasses)
    @abstractmethod
    def _start(self, worker: Worker) -> None:
        """Start ``worker`` (set its ``handle`` and ``pid``)."""

    @abstractmethod
    def _send(self, worker: Worker, message: bytes) -> Any:
        """Send one request; return a ticket for :meth:`_gather`, or raise :class:`WorkerGone`."""

    @abstractmethod
    def _gather(self, tickets: dict[int, Any], timeouts: dict[int, float | None]) -> dict[int, bytes | WorkerGone]:
        """The answer of every ticket by worker index, or :class:`WorkerGone` for a worker that
        died, or did not answer within its timeout (that worker is killed)."""

    @abstractmethod
    def _kill(self, worker: Worker) -> None:
        """End ``worker`` at once, with everything it started."""

    @abstractmethod
    def _shutdown(self, workers: list[Worker], wait: float) -> None:
        """Ask ``workers`` to close their envs, wait up to ``wait`` seconds, then kill what is left."""

    def _exit_reason(self, worker: Worker) -> str | None:
        """How ``worker`` ended, when the transport can tell without asking it (None: running, or unknown)."""
        return None

    def _default_count(self, n: int) -> int:
        """How many workers to use when none was given and ``n`` envs are made first."""
        return max(1, n)

    # ------------------------------------------------------------------ EnvExecutor
    def make(self, factory: Callable[[], gym.Env], n: int) -> list[Any]:
        """``n`` envs on the least loaded workers; a worker that dies while making them is started
        afresh and asked once more (a second death, or an env whose factory raises, raises)."""
        if self._closed:
            raise RuntimeError(f"this {self.kind} executor was closed; make a new one.")
        if not self.workers:
            self.workers = [Worker(i) for i in range(self.count or self._default_count(n))]
        try:
            return self._make(factory, n)
        except EnvWorkerDied:
            return self._make(factory, n)

    def _make(self, factory: Callable[[], gym.Env], n: int) -> list[Any]:
        self._restart_dead()
        payload = cloudpickle.dumps(factory)
        placed: dict[int, list[int]] = {}
        order: list[int] = []
        for _ in range(n):  # least loaded first, so consecutive envs (a group) spread over the workers
            worker = min(self.workers, key=lambda w: (len(w.keys) + len(placed.get(w.index, [])), w.index))
            order.append(self._new_key())
            placed.setdefault(worker.index, []).append(order[-1])
        for index in placed:
            if not self.workers[index].running:
                self._start_worker(self.workers[index])
        answers = self._exchange({w: ("make", [(key, payload) for key in keys]) for w, keys in placed.items()},
                                 dict.fromkeys(placed))
        made: dict[int, RemoteEnv] = {}
        failure: BaseException | None = None
        for index, keys in placed.items():
            worker, answer = self.workers[index], answers[index]
            if isinstance(answer, BaseException):
                failure = failure or answer
                continue
            for key, (ok, value) in zip(keys, answer):
                if not ok:
                    failure = failure or value
                    continue
                worker.keys.add(key)
                spec, class_name = value
                made[key] = RemoteEnv(self, index, worker.generation, key, spec, class_name)
        if failure is not None:
            self.discard(list(made.values()))
            raise failure
        return [made[key] for key in order]

    def usable(self, env: Any) -> bool:
        if self._closed or not isinstance(env, RemoteEnv) or env.executor is not self:
            return False
        worker = self.workers[env.worker]
        if worker.running and (ended := self._exit_reason(worker)) is not None:
            self._died(worker, ended, None)  # died between calls: its envs are replaced before they are used
        return worker.running and worker.generation == env.generation and env.key in worker.keys

    def discard(self, envs: Sequence[Any]) -> None:
        drops: dict[int, list[int]] = {}
        for env in envs:
            if self.usable(env):
                drops.setdefault(env.worker, []).append(env.key)
                self.workers[env.worker].keys.discard(env.key)
        if drops:
            self._exchange({w: ("drop", keys) for w, keys in drops.items()}, dict.fromkeys(drops))

    def reset(self, calls: Sequence[ResetCall]) -> list[Any]:
        per_reset = None if self.step_timeout is None else max(self.step_timeout, RESET_TIMEOUT_MIN_S)
        return self._batch("reset", [(env, (seed, options, oracle)) for env, seed, options, oracle in calls], per_reset)

    def step(self, calls: Sequence[StepCall]) -> list[Any]:
        return self._batch("step", [(env, (action, oracle)) for env, action, oracle in calls], self.step_timeout)

    def request(self, env: RemoteEnv, op: str, payload: Any) -> Any:
        """One ``attr``/``call`` request for ``env`` (see :mod:`~agentgym_suite.rollout.workers.host`);
        returns its value or raises its error."""
        if not self.usable(env):
            raise self._lost(env)
        timeout = None if self.step_timeout is None else self.step_timeout + ANSWER_GRACE_S
        answer = self._exchange({env.worker: (op, payload)}, {env.worker: timeout})[env.worker]
        if isinstance(answer, BaseException):
            raise answer
        ok, value = answer
        if not ok:
            raise value
        return value

    def close(self) -> None:
        """Ask every worker to close its envs, then end it; returns within a few seconds."""
        if self._closed:
            return
        self._closed = True
        started = [w for w in self.workers if w.handle is not None]
        self._shutdown(started, CLOSE_WAIT_S)
        for worker in self.workers:
            worker.keys.clear()
            worker.dead = worker.dead or "was closed"

    def end_worker(self, index: int, reason: str = "was restarted") -> None:
        """End worker ``index`` at once, its envs with it; the next :meth:`make` starts it afresh."""
        worker = self.workers[index]
        if worker.handle is not None and worker.dead is None:
            worker.dead = reason
            worker.keys.clear()
            self._kill(worker)

    noun = "workers"
    """What :meth:`describe` calls the workers."""

    def describe(self) -> str:
        return f"{self.count or len(self.workers) or 'auto'} {self.noun}"

    # ------------------------------------------------------------------ internals
    def _new_key(self) -> int:
        self._next_key += 1
        return self._next_key

    def _start_worker(self, worker: Worker) -> None:
        worker.generation += 1
        worker.keys.clear()
        worker.dead = None
        worker.pid = None
        self._start(worker)

    def _restart_dead(self) -> None:
        for worker in self.workers:
            if worker.handle is not None and worker.dead is not None:
                self._kill(worker)
                self._start_worker(worker)

    def _batch(self, op: str, calls: Sequence[tuple[Any, tuple]], per_item: float | None) -> list[Any]:
        results: list[Any] = [None] * len(calls)
        by_worker: dict[int, list[tuple[int, tuple]]] = {}
        for position, (env, rest) in enumerate(calls):
            if not self.usable(env):
                results[position] = self._lost(env)
                continue
            by_worker.setdefault(env.worker, []).append((position, (env.key, *rest)))
        timeouts = {w: None if per_item is None else per_item * len(items) + ANSWER_GRACE_S
                    for w, items in by_worker.items()}
        answers = self._exchange({w: (op, [item for _, item in items]) for w, items in by_worker.items()}, timeouts)
        for index, items in by_worker.items():
            answer = answers[index]
            for item_index, (position, _) in enumerate(items):
                if isinstance(answer, BaseException):
                    results[position] = answer
                else:
                    ok, value = answer[item_index]
                    results[position] = value
        return results

    def _exchange(self, requests: dict[int, tuple[str, Any]], timeouts: dict[int, float | None]) -> dict[int, Any]:
        """Send every request at once, then gather: the decoded answer by worker index, or the
        :class:`EnvWorkerDied` of a worker that died or hung."""
        answers: dict[int, Any] = {}
        tickets: dict[int, Any] = {}
        for index, request in requests.items():
            worker = self.workers[index]
            try:
                tickets[index] = self._send(worker, cloudpickle.dumps(request))
            except WorkerGone as gone:
                answers[index] = self._died(worker, gone.reason, request[0])
        for index, reply in self._gather(tickets, {i: timeouts.get(i) for i in tickets}).items():
            if isinstance(reply, WorkerGone):
                answers[index] = self._died(self.workers[index], reply.reason, requests[index][0])
            else:
                answers[index] = cloudpickle.loads(reply)
        return answers

    def _died(self, worker: Worker, reason: str, op: str | None) -> EnvWorkerDied:
        lost = len(worker.keys)
        worker.dead = reason
        worker.keys.clear()
        self._kill(worker)  # whatever it started goes with it
        when = f" during {op}" if op else ""
        return EnvWorkerDied(
            f"{worker.label()} {reason}{when}; the {lost} env(s) it held are lost and are made again in a "
            "fresh worker before the next rollout.",
            worker=worker.index, pid=worker.pid, reason=reason,
        )

    def _lost(self, env: Any) -> EnvWorkerDied:
        if not isinstance(env, RemoteEnv) or env.executor is not self:
            return EnvWorkerDied(f"{env!r} does not belong to this {self.kind} executor.")
        worker = self.workers[env.worker]
        why = worker.dead or "was restarted"
        return EnvWorkerDied(f"{worker.label()} {why}; this env was lost with it and is made again before the next "
                             "rollout.", worker=worker.index, pid=worker.pid, reason=why)


def seconds_left(deadline: float | None) -> float | None:
    """Seconds left until ``deadline`` (``time.monotonic()`` based, never negative); None for no deadline."""
    return None if deadline is None else max(0.0, deadline - time.monotonic())
