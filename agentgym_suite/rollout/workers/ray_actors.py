"""``ray``: the envs as Ray actors, on whatever cluster ``ray.init`` reaches.

Each actor is an :class:`~agentgym_suite.rollout.workers.host.EnvHost` holding a share of the
envs, so env-heavy runs spread over a cluster's CPU nodes while the GPUs train. Ray places the
actors, ships the env factories (cloudpickle) and reports actors that die; this module only
maps the pool's requests onto actor calls. Needs the optional extra ``agentgym-suite[ray]``,
and ``agentgym_suite`` (with the envs' own packages and data) installed on every node.

When Ray is not initialised yet, the executor calls ``ray.init(address=...)`` with ``address``
(default: the ``RAY_ADDRESS`` environment variable, else a local Ray instance).
"""

from __future__ import annotations

import logging
import os
import socket
import time
from typing import Any

from agentgym_suite.core.errors import missing_backend
from agentgym_suite.rollout.workers.host import EnvHost
from agentgym_suite.rollout.workers.remote import RemoteWorkers, Worker, WorkerGone, seconds_left

logger = logging.getLogger(__name__)

ACTOR_START_TIMEOUT_S = 300.0
"""How long an env actor may wait for a place on the cluster before the pool gives up."""


class EnvHostActor(EnvHost):
    """The body of an env actor: an :class:`EnvHost` that also reports its process id.

    Args:
        step_timeout: see :class:`EnvHost`.
        call_environment: the model-played roles' cache and ledger settings of the process that made
            the pool (:func:`~agentgym_suite.llm.role_client.call_environment`): an actor's process
            is started by a raylet, whose environment may predate them.
        host: the machine of the process that made the pool. An actor on another machine cannot share
            its cache and ledger files (SQLite's locks do not hold across machines), so it plays its roles
            with neither; the pool says so (:meth:`RayWorkers._start`).
    """

    def __init__(self, step_timeout: float | None = None, call_environment: dict[str, str] | None = None,
                 host: str | None = None) -> None:
        if call_environment is not None:
            from agentgym_suite.llm.role_client import adopt_call_environment

            same_machine = host is None or host == socket.gethostname()
            adopt_call_environment(call_environment if same_machine else dict.fromkeys(call_environment, ""))
        super().__init__(step_timeout)

    def pid(self) -> int:
        """The actor's process id (for messages about it)."""
        return os.getpid()

    def host(self) -> str:
        """The actor's machine."""
        return socket.gethostname()


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise missing_backend("ray", "ray") from None
    return ray


class RayWorkers(RemoteWorkers):
    """Envs in Ray actors (see the module docstring and
    :class:`~agentgym_suite.rollout.workers.remote.RemoteWorkers`).

    Args:
        count: number of actors (None: one per CPU the cluster has, at most one per env).
        step_timeout: seconds one ``env.step`` may take.
        num_cpus: CPUs each actor reserves on the cluster.
        address: passed to ``ray.init`` when Ray is not initialised yet.
    """

    kind = "ray"
    noun = "Ray actors"

    def __init__(self, count: int | None = None, step_timeout: float | None = None, *, num_cpus: float = 1.0,
                 address: str | None = None) -> None:
        super().__init__(count, step_timeout)
        ray = _ray()
        if not ray.is_initialized():
            address = address or os.environ.get("RAY_ADDRESS") or None
            local = {} if address else {"include_dashboard": False}  # settings of a new local instance only
            ray.init(address=address, log_to_driver=False, **local)
        self.num_cpus = num_cpus
        self._actor_class = ray.remote(EnvHostActor)

    def _default_count(self, n: int) -> int:
        cpus = float(_ray().cluster_resources().get("CPU", 1.0))
        return max(1, min(n, int(cpus // self.num_cpus) or 1))

    def _start(self, worker: Worker) -> None:
        ray = _ray()
        from agentgym_suite.llm.role_client import CACHE_ENV, LEDGER_ENV, call_environment

        calls = call_environment()
        actor = self._actor_class.options(num_cpus=self.num_cpus, max_restarts=0).remote(
            self.step_timeout, calls, socket.gethostname())
        worker.handle = actor
        try:
            worker.pid = ray.get(actor.pid.remote(), timeout=ACTOR_START_TIMEOUT_S)
            host = ray.get(actor.host.remote(), timeout=ACTOR_START_TIMEOUT_S)
        except Exception as exc:
            ray.kill(actor, no_restart=True)
            worker.handle = None
            raise RuntimeError(
                f"env actor {worker.index} did not start within {ACTOR_START_TIMEOUT_S:g} s ({type(exc).__name__}): "
                f"the cluster may lack a free CPU for it (each env actor reserves num_cpus={self.num_cpus}); "
                "use fewer actors (env_workers 'ray:N') or add nodes."
            ) from exc
        if host != socket.gethostname() and (calls[CACHE_ENV] or calls[LEDGER_ENV]):
            logger.warning("env actor %d runs on %s, not on this machine (%s): the model-played roles of its envs "
                           "(simulated users, judges, world models) are neither cached nor counted in this run's "
                           "accounting there.", worker.index, host, socket.gethostname())

    def _send(self, worker: Worker, message: bytes) -> Any:
        return worker.handle.handle_bytes.remote(message)

    def _gather(self, tickets: dict[int, Any], timeouts: dict[int, float | None]) -> dict[int, bytes | WorkerGone]:
        ray = _ray()
        now = time.monotonic()
        deadlines = {i: None if timeouts.get(i) is None else now + float(timeouts[i]) for i in tickets}  # type: ignore[arg-type]
        by_ref = {ref: index for index, ref in tickets.items()}
        answers: dict[int, bytes | WorkerGone] = {}
        while by_ref:
            waits = [d for ref, i in by_ref.items() if (d := deadlines[i]) is not None]
            timeout = seconds_left(min(waits)) if waits else None
            ready, _ = ray.wait(list(by_ref), num_returns=1, timeout=timeout)
            for ref in ready:
                index = by_ref.pop(ref)
                try:
                    answers[index] = ray.get(ref)
                except Exception as exc:  # RayActorError and kin: the actor (or its node) died
                    answers[index] = WorkerGone(f"died ({type(exc).__name__}: {str(exc).splitlines()[0][:200]})")
            for ref, index in list(by_ref.items()):
                if deadlines[index] is not None and seconds_left(deadlines[index]) == 0:
                    del by_ref[ref]
                    answers[index] = WorkerGone(f"did not answer within {timeouts[index]:g} s and was killed")
        return answers

    def _kill(self, worker: Worker) -> None:
        if worker.handle is not None:
            try:
                _ray().kill(worker.handle, no_restart=True)
            except Exception:  # already gone
                pass

    def _shutdown(self, workers: list[Worker], wait_s: float) -> None:
        import cloudpickle

        ray = _ray()
        refs = [w.handle.handle_bytes.remote(cloudpickle.dumps(("close", None))) for w in workers if w.dead is None]
        if refs:
            try:
                ray.wait(refs, num_returns=len(refs), timeout=wait_s)
            except Exception:  # a dead actor: killed below anyway
                pass
        for worker in workers:
            self._kill(worker)
