"""Vectorised envs: ``make_vec(env_id, n)``, a Gymnasium vector env of ``n`` copies.

The synchronous kind is Gymnasium's ``SyncVectorEnv``. The asynchronous kind,
:class:`WorkerAsyncVectorEnv`, is Gymnasium's vector-env protocol (batched observations,
``reset_mask``, the three autoreset modes, ``step_async``/``step_wait``, ``call``/``get_attr``)
played on the suite's one pool of env worker processes,
:class:`~agentgym_suite.rollout.workers.processes.ProcessWorkers` — the pool the rollout engine,
evaluation and training use — with one worker per sub-env.

Why one pool: the suite had two, this module's subclass of Gymnasium's ``AsyncVectorEnv`` and the
engine's worker processes, each with its own pipes, dead-worker detection, exit reasons and
shutdown. The engine cannot use ``AsyncVectorEnv`` (it gives each env its own task options, steps
only the episodes still running and never auto-resets; see
:mod:`~agentgym_suite.rollout.workers.processes`), while the vector protocol is a thin layer over
batched resets and steps. So the worker pool is the engine's, and this module only adds the
protocol; a fix to how workers start, die or close reaches both. Hence this module sits above
the rollout floor.

Workers that die (killed by the OOM killer, a crashing native library, a user):

* a call that finds a worker dead raises :class:`~agentgym_suite.core.process_groups.EnvWorkerDied`
  naming the sub-env, its worker and process, mid-step as well as between steps, and leaves the
  vector env usable (no ``AlreadyPendingCallError`` afterwards);
* :meth:`WorkerAsyncVectorEnv.restart_worker` starts a fresh worker for a sub-env, and a full
  ``reset()`` restarts every dead one first;
* ``close()`` returns within seconds and kills each worker's whole process group (a simulator's
  JVM included).
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from copy import deepcopy
from typing import Any, Callable, Sequence

import gymnasium as gym
import numpy as np
from gymnasium.error import AlreadyPendingCallError, NoAsyncCallError
from gymnasium.vector import AutoresetMode, SyncVectorEnv, VectorEnv
from gymnasium.vector.utils import batch_space, concatenate, create_empty_array, iterate

from agentgym_suite.core.process_groups import CLOSE_WAIT_S, EnvWorkerDied, exit_reason, kill_group


def make_vec(
    env_id: str,
    n: int,
    *,
    asynchronous: bool = False,
    autoreset_mode: AutoresetMode = AutoresetMode.NEXT_STEP,
    context: str | None = None,
    **kwargs: Any,
) -> SyncVectorEnv | WorkerAsyncVectorEnv:
    """Build ``n`` copies of ``env_id`` as a Gymnasium vector env.

    Args:
        env_id: a registered id such as ``"ALFWorld-v0"``.
        n: number of sub-envs (>= 1).
        asynchronous: one worker process per sub-env (worth it for slow backends such as
            ScienceWorld's JVM or ALFWorld's planner), as a :class:`WorkerAsyncVectorEnv`;
            otherwise all step in this process.
        autoreset_mode: Gymnasium's autoreset mode (``NEXT_STEP`` by default).
        context: multiprocessing start method for async workers (default: Python's).
        **kwargs: passed to ``gymnasium.make`` for every sub-env.

    Text observations are returned as a tuple of strings, one per sub-env.
    """
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}.")
    import agentgym_suite  # noqa: F401  (registers the ids)

    if asynchronous:
        from agentgym_suite.rollout.env_pool import MakeEnv

        make = MakeEnv(env_id, kwargs)  # carries the spec, so ids registered only here work in the workers
        return WorkerAsyncVectorEnv([make] * n, context=context, autoreset_mode=autoreset_mode)

    def factory() -> gym.Env:
        return gym.make(env_id, **kwargs)

    return SyncVectorEnv([factory for _ in range(n)], copy=False, autoreset_mode=autoreset_mode)


class WorkerAsyncVectorEnv(VectorEnv):
    """A Gymnasium vector env whose sub-envs live in the suite's env worker processes, one per
    sub-env (see the module docstring). After :class:`EnvWorkerDied`, replace the worker with
    :meth:`restart_worker` and reset its sub-env (``reset(options={"reset_mask": mask})``), or
    ``reset()`` every sub-env, which restarts every dead worker first.

    Args:
        env_fns: one zero-argument factory per sub-env (picklable, or a closure cloudpickle ships).
        context: multiprocessing start method of the workers (default: Python's).
        autoreset_mode: Gymnasium's autoreset mode.
        copy: return copies of the batched observations.
    """

    def __init__(self, env_fns: Sequence[Callable[[], gym.Env]], *, context: str | None = None,
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP, copy: bool = True) -> None:
        from agentgym_suite.rollout.workers.processes import ProcessWorkers

        self.closed = True  # until the workers run
        self.env_fns = list(env_fns)
        if not self.env_fns:
            raise ValueError("WorkerAsyncVectorEnv needs at least one env factory.")
        self.num_envs = len(self.env_fns)
        self.copy = copy
        self.autoreset_mode = autoreset_mode if isinstance(autoreset_mode, AutoresetMode) else \
            AutoresetMode(autoreset_mode)
        dummy = self.env_fns[0]()  # the spaces and metadata, as Gymnasium's AsyncVectorEnv reads them
        self.metadata = dict(dummy.metadata)
        self.metadata["autoreset_mode"] = self.autoreset_mode
        self.render_mode = dummy.render_mode
        self.spec = dummy.spec
        self.single_observation_space = dummy.observation_space
        self.single_action_space = dummy.action_space
        dummy.close()
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.workers = ProcessWorkers(self.num_envs, context=context)  # type: ignore[arg-type]
        self.closed = False
        self._runner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="vector-env")
        self._pending: tuple[str, Future] | None = None
        self._env_obs: list[Any] = [None] * self.num_envs
        self._observations = create_empty_array(self.single_observation_space, n=self.num_envs, fn=np.zeros)
        self._rewards = np.zeros((self.num_envs,), dtype=np.float64)
        self._terminations = np.zeros((self.num_envs,), dtype=np.bool_)
        self._truncations = np.zeros((self.num_envs,), dtype=np.bool_)
        self._autoreset_envs = np.zeros((self.num_envs,), dtype=np.bool_)
        if all(fn is self.env_fns[0] for fn in self.env_fns):  # one batch: the workers start together
            self.envs = self.workers.make(self.env_fns[0], self.num_envs)
        else:
            self.envs = [self.workers.make(fn, 1)[0] for fn in self.env_fns]

    # ------------------------------------------------------------------ dead workers
    @property
    def processes(self) -> list[Any]:
        """The worker process of each sub-env (``multiprocessing.Process``), by sub-env index."""
        return [self.workers.workers[env.worker].handle[0] for env in self.envs]

    def dead_workers(self) -> list[int]:
        """Indices of the sub-envs whose worker is no longer running."""
        return [i for i, env in enumerate(self.envs) if not self.workers.usable(env)]

    def worker_died(self, index: int) -> EnvWorkerDied:
        """The error for sub-env ``index``, whose worker is dead."""
        worker = self.workers.workers[self.envs[index].worker]
        process = worker.handle[0]
        reason = worker.dead if worker.dead not in (None, "was restarted") else exit_reason(process.exitcode)
        return EnvWorkerDied(
            f"the worker process of sub-env {index} (worker {worker.index}, pid {process.pid}) {reason}; sub-env "
            f"{index} is lost. Replace it with restart_worker({index}) and reset that sub-env (reset_mask), or "
            "reset() all sub-envs, which restarts every dead worker.",
            worker=worker.index, env_indices=(index,), pid=process.pid, reason=reason,
        )

    def restart_worker(self, index: int) -> None:
        """Start a fresh worker process for sub-env ``index`` (ending what is left of the old one).

        The new sub-env has not been reset: reset it with ``options={"reset_mask": mask}`` (or
        ``reset()`` all sub-envs) before the next step.
        """
        if not 0 <= index < self.num_envs:
            raise IndexError(f"sub-env index {index} is out of range for {self.num_envs} sub-envs.")
        self._require_open()
        self._require_idle("restart_worker")
        self.workers.end_worker(self.envs[index].worker)
        self.envs[index] = self.workers.make(self.env_fns[index], 1)[0]

    def _died(self, dead: list[int]) -> EnvWorkerDied:
        first = self.worker_died(dead[0])
        if len(dead) == 1:
            return first
        reasons = "; ".join(f"sub-env {i} (pid {self.processes[i].pid}) {self.worker_died(i).reason}" for i in dead)
        return EnvWorkerDied(f"{len(dead)} worker processes are dead: {reasons}. Replace them with restart_worker(i), "
                             "or reset() all sub-envs.", worker=first.worker, env_indices=tuple(dead), pid=first.pid,
                             reason=first.reason)

    def _require_workers(self) -> None:
        dead = self.dead_workers()
        if dead:
            raise self._died(dead)

    def _require_open(self) -> None:
        if self.closed:
            raise gym.error.ClosedEnvironmentError("this vector env was closed; make a new one.")

    def _require_idle(self, call: str) -> None:
        if self._pending is not None and not self._pending[1].done():
            raise AlreadyPendingCallError(
                f"calling `{call}` while waiting for a pending call to `{self._pending[0]}` to complete",
                self._pending[0])

    def _checked(self, results: list[Any], indices: Sequence[int]) -> list[Any]:
        """``results`` (one per sub-env of ``indices``), raising for a dead worker or a failed call."""
        dead = [i for i, result in zip(indices, results) if isinstance(result, EnvWorkerDied)]
        if dead:
            raise self._died(sorted(dead))
        for result in results:
            if isinstance(result, BaseException):
                raise result
        return results

    # ------------------------------------------------------------------ async plumbing
    def _start(self, name: str, fn: Callable[[], Any]) -> None:
        self._require_open()
        self._require_idle(f"{name}_async")
        self._require_workers()
        self._pending = (name, self._runner.submit(fn))

    def _wait(self, name: str, timeout: float | None) -> Any:
        self._require_open()
        if self._pending is None or self._pending[0] != name:
            raise NoAsyncCallError(f"calling `{name}_wait` without any prior call to `{name}_async`.", name)
        future = self._pending[1]
        try:
            result = future.result(timeout)
        except FutureTimeout:
            raise multiprocessing.TimeoutError(f"the call to `{name}_wait` has timed out after {timeout} second(s).") \
                from None
        finally:
            if future.done():
                self._pending = None
        return result

    # ------------------------------------------------------------------ Gymnasium's calls
    def reset_async(self, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None) -> None:
        """Start resetting the sub-envs (all, or those of ``options["reset_mask"]``)."""
        self._require_open()
        if not (options and "reset_mask" in options):
            self._require_idle("reset_async")
            for index in self.dead_workers():  # a full reset starts every sub-env anew
                self.restart_worker(index)
        seeds = [None] * self.num_envs if seed is None else \
            [seed + i for i in range(self.num_envs)] if isinstance(seed, int) else list(seed)
        if len(seeds) != self.num_envs:
            raise ValueError(f"If seeds are passed as a list the length must match num_envs={self.num_envs} but got "
                             f"length={len(seeds)}.")
        options = dict(options) if options is not None else None
        mask = None if options is None else options.pop("reset_mask", None)
        if mask is not None:
            if not isinstance(mask, np.ndarray) or mask.shape != (self.num_envs,) or mask.dtype != np.bool_ \
                    or not mask.any():
                raise ValueError(f"`options['reset_mask']` must be a numpy bool array of shape ({self.num_envs},) with "
                                 f"at least one True value, got {mask!r}.")
        self._start("reset", lambda: self._reset_now(seeds, options, mask))

    def reset_wait(self, timeout: float | None = None) -> tuple[Any, dict[str, Any]]:
        """The batched observations and infos of the reset started by :meth:`reset_async`."""
        return self._wait("reset", timeout)

    def reset(self, *, seed: int | list[int | None] | None = None,
              options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Reset the sub-envs (Gymnasium's semantics, ``reset_mask`` included)."""
        self.reset_async(seed=seed, options=options)
        return self.reset_wait()

    def step_async(self, actions: Any) -> None:
        """Start stepping every sub-env (auto-resetting those that ended, per ``autoreset_mode``)."""
        chosen = list(iterate(self.action_space, actions))
        self._start("step", lambda: self._step_now(chosen))

    def step_wait(self, timeout: float | None = None) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        """The batched results of the step started by :meth:`step_async`."""
        return self._wait("step", timeout)

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        """Step every sub-env (Gymnasium's semantics for the three autoreset modes)."""
        self.step_async(actions)
        return self.step_wait()

    def call_async(self, name: str, *args: Any, **kwargs: Any) -> None:
        """Start calling ``name`` (or reading it, when it is not callable) on every sub-env."""
        self._start("call", lambda: tuple(self._call_one(i, name, args, kwargs) for i in range(self.num_envs)))

    def call_wait(self, timeout: float | None = None) -> tuple[Any, ...]:
        """The results of :meth:`call_async`, one per sub-env."""
        return self._wait("call", timeout)

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """``name``'s value on every sub-env's env, called with the arguments when it is a method."""
        self.call_async(name, *args, **kwargs)
        return self.call_wait()

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """The attribute ``name`` of every sub-env's env."""
        return self.call(name)

    def set_attr(self, name: str, values: Any) -> None:
        """Set the attribute ``name`` on every sub-env's env (one value each, or one for all)."""
        self._require_open()
        self._require_idle("set_attr")
        self._require_workers()
        if not isinstance(values, (list, tuple)):
            values = [values] * self.num_envs
        if len(values) != self.num_envs:
            raise ValueError(f"values has {len(values)} items for {self.num_envs} sub-envs.")
        for index, value in enumerate(values):
            self._request(index, "call", ("__setattr__", (name, value), {}))

    def render(self) -> tuple[Any, ...] | None:
        """Every sub-env's ``render()``."""
        return self.call("render")

    def close_extras(self, timeout: float | None = None, terminate: bool = False) -> None:
        """Close within :data:`~agentgym_suite.core.process_groups.CLOSE_WAIT_S` seconds: a pending
        call's workers are killed at once, idle ones asked to close their envs; whatever is still
        running then is killed, with its process group."""
        if self._pending is not None and not self._pending[1].done() or terminate:
            for process in self.processes:
                kill_group(process.pid)
        if self._pending is not None:
            try:
                self._pending[1].result(CLOSE_WAIT_S)
            except Exception:  # the call's error does not matter any more
                pass
            self._pending = None
        self.workers.close()
        self._runner.shutdown(wait=False)

    # ------------------------------------------------------------------ the work, on the runner thread
    def _request(self, index: int, op: str, payload: tuple) -> Any:
        env = self.envs[index]
        try:
            return self.workers.request(env, op, (env.key, *payload))
        except EnvWorkerDied:
            raise self.worker_died(index) from None

    def _call_one(self, index: int, name: str, args: tuple, kwargs: dict[str, Any]) -> Any:
        kind, value = self._request(index, "attr", (name,))
        return self._request(index, "call", (name, args, kwargs)) if kind == "call" else value

    def _reset(self, indices: list[int], seeds: Sequence[int | None], options: dict[str, Any] | None) -> list[Any]:
        calls = [(self.envs[i], seeds[k], options, False) for k, i in enumerate(indices)]
        return self._checked(self.workers.reset(calls), indices)

    def _step(self, indices: list[int], actions: Sequence[Any]) -> list[Any]:
        calls = [(self.envs[i], actions[i], False) for i in indices]
        return self._checked(self.workers.step(calls), indices)

    def _reset_now(self, seeds: list[int | None], options: dict[str, Any] | None,
                   mask: np.ndarray | None) -> tuple[Any, dict[str, Any]]:
        indices = list(range(self.num_envs)) if mask is None else [int(i) for i in np.flatnonzero(mask)]
        results = self._reset(indices, [seeds[i] for i in indices], options)
        if mask is None:
            self._terminations[:] = False
            self._truncations[:] = False
            self._autoreset_envs[:] = False
        else:
            self._terminations[mask] = False
            self._truncations[mask] = False
            self._autoreset_envs[mask] = False
        infos: dict[str, Any] = {}
        for index, (observation, info, _) in zip(indices, results):
            self._env_obs[index] = observation
            infos = self._add_info(infos, info, index)
        return self._batched_observations(), infos

    def _step_now(self, actions: list[Any]) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        mode = self.autoreset_mode
        ended = [i for i in range(self.num_envs) if self._autoreset_envs[i]]
        if mode == AutoresetMode.DISABLED and ended:
            raise RuntimeError(f"sub-envs {ended} ended and autoreset_mode is DISABLED: reset them (reset_mask) first.")
        resets = ended if mode == AutoresetMode.NEXT_STEP else []
        steps = [i for i in range(self.num_envs) if i not in resets]
        infos: dict[str, Any] = {}
        env_infos: dict[int, dict[str, Any]] = {}
        for index, (observation, info, _) in zip(resets, self._reset(resets, [None] * len(resets), None)
                                                 if resets else []):
            self._env_obs[index], env_infos[index] = observation, info
            self._rewards[index], self._terminations[index], self._truncations[index] = 0.0, False, False
        for index, result in zip(steps, self._step(steps, actions) if steps else []):
            observation, reward, terminated, truncated, info, _ = result
            self._env_obs[index], env_infos[index] = observation, info
            self._rewards[index], self._terminations[index], self._truncations[index] = reward, terminated, truncated
        if mode == AutoresetMode.SAME_STEP:
            done = [i for i in steps if self._terminations[i] or self._truncations[i]]
            for index in done:
                infos = self._add_info(infos, {"final_obs": self._env_obs[index], "final_info": env_infos[index]},
                                       index)
            for index, (observation, info, _) in zip(done, self._reset(done, [None] * len(done), None)
                                                     if done else []):
                self._env_obs[index], env_infos[index] = observation, info
        for index in range(self.num_envs):
            infos = self._add_info(infos, env_infos[index], index)
        observations = self._batched_observations()
        self._autoreset_envs = np.logical_or(self._terminations, self._truncations)
        return (observations, np.copy(self._rewards), np.copy(self._terminations), np.copy(self._truncations), infos)

    def _batched_observations(self) -> Any:
        self._observations = concatenate(self.single_observation_space, self._env_obs, self._observations)
        return deepcopy(self._observations) if self.copy else self._observations
