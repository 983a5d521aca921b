"""One ScienceWorld JVM per env, every call under a timeout, and a clean kill when it fails.

The simulator runs in a Java process reached through py4j. A py4j call can hang (a stuck JVM)
or fail (a dead one); :class:`SimulatorProcess` runs each call on a worker thread and waits at
most ``timeout`` seconds. A call that times out or finds the JVM gone kills the process and
raises :class:`SimulatorCrashed`; the owner starts a fresh process on its next ``start()``.
"""

from __future__ import annotations

import os
import queue
import shutil
import subprocess
import threading
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Callable

from agentgym_suite.core.errors import AgentGymError, missing_backend

JAVA_INSTALL_HINT = "apt-get install -y default-jre-headless"

DETERMINISTIC_JVM_OPTIONS = ("-XX:+UnlockExperimentalVMOptions", "-XX:hashCode=2")
"""JVM options that make a task load give the same world every time.

The simulator seeds its random generator from the variation index on every load
(``PythonInterface.doLoad`` calls ``Random.setSeed(variationIdx)``), so the seeded choice of
task and variation already fixes everything random. What still varied between two loads of
one variation was the order of objects in a room: containers keep their contents in hash
sets of objects without their own ``hashCode``, so the order follows the JVM's identity
hashes, which differ from load to load (e.g. the three wood cups of ``find-plant/1`` listed
in a different order; 10 of 80 reloads differed). ``hashCode=2`` gives every object the same
identity hash, so those sets keep insertion order and a load is reproducible. Step speed
is unchanged within noise (``benchmarks/scienceworld_speed.py``)."""


class JavaNotFoundError(AgentGymError, FileNotFoundError):
    """No ``java`` executable: ScienceWorld's simulator cannot start."""


class SimulatorCrashed(AgentGymError, RuntimeError):
    """The JVM died, hung past its timeout, or could not be reached; it has been killed."""


class SimulatorRejected(AgentGymError, RuntimeError):
    """The simulator raised a Java exception for one call; the JVM itself is still healthy."""


def find_java() -> str:
    """Path of the ``java`` executable (``$JAVA_HOME/bin/java`` first, then ``PATH``)."""
    home = os.environ.get("JAVA_HOME")
    if home:
        candidate = os.path.join(home, "bin", "java")
        if os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("java")
    if found is None:
        raise JavaNotFoundError(
            "ScienceWorld needs a Java runtime (Java 8 or newer) and no `java` executable was found "
            f"on PATH or in $JAVA_HOME. Install one, e.g. on Debian/Ubuntu:  {JAVA_INSTALL_HINT}"
        )
    return found


class _Worker(threading.Thread):
    """A daemon thread that runs submitted calls one at a time."""

    def __init__(self) -> None:
        super().__init__(name="scienceworld-py4j", daemon=True)
        self.jobs: queue.Queue[tuple[Callable[..., Any], tuple[Any, ...], Future] | None] = queue.Queue()

    def run(self) -> None:
        while True:
            job = self.jobs.get()
            if job is None:
                return
            fn, args, future = job
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(fn(*args))
            except BaseException as exc:  # handed to the caller through the future
                future.set_exception(exc)


class SimulatorProcess:
    """The ScienceWorld JVM of one env: started on demand, killed on failure.

    Args:
        start_timeout: seconds allowed for the JVM to come up.
    """

    def __init__(self, start_timeout: float = 120.0) -> None:
        self.start_timeout = start_timeout
        self._gateway: Any = None
        self._proc: subprocess.Popen | None = None
        self._server: Any = None
        self._worker: _Worker | None = None

    # ------------------------------------------------------------------ lifecycle
    @property
    def pid(self) -> int | None:
        """Process id of the running JVM, or ``None`` when none runs."""
        return self._proc.pid if self._proc is not None else None

    @property
    def alive(self) -> bool:
        """True while a started JVM process is still running."""
        return self._proc is not None and self._proc.poll() is None

    def start(self) -> None:
        """Start the JVM unless one is already running (a dead one is cleaned up first)."""
        if self.alive and self._server is not None:
            return
        self.kill()
        try:
            import scienceworld.constants as sw_constants
        except ImportError:
            raise missing_backend("scienceworld", "scienceworld") from None
        java = find_java()
        self._worker = _Worker()
        self._worker.start()
        try:
            self._run_raw(self._launch, (java, sw_constants.JAR_PATH, sw_constants.BASEPATH), self.start_timeout)
        except SimulatorCrashed as exc:
            raise SimulatorCrashed(f"the ScienceWorld JVM did not start: {exc}") from exc

    def _launch(self, java: str, jar: str, cwd: str) -> None:
        from py4j.java_gateway import GatewayParameters, JavaGateway, launch_gateway

        port, proc = launch_gateway(classpath=jar, die_on_exit=True, cwd=cwd, return_proc=True, java_path=java,
                                    javaopts=list(DETERMINISTIC_JVM_OPTIONS))
        self._proc = proc
        self._gateway = JavaGateway(gateway_parameters=GatewayParameters(auto_field=True, port=port), java_process=proc)
        self._server = self._gateway.jvm.scienceworld.runtime.pythonapi.PythonInterface()

    def kill(self) -> None:
        """Kill the JVM at once (SIGKILL) and drop the connection; safe to call at any time."""
        proc, gateway, worker = self._proc, self._gateway, self._worker
        self._proc = self._gateway = self._server = self._worker = None
        if gateway is not None:
            # Proxies collected later must not try to reach the dead JVM: their finalizers
            # would log a network error (with a formatted traceback) from inside a GC pass.
            gateway._gateway_client.is_connected = False
        if proc is not None and proc.poll() is None:
            proc.kill()
        if proc is not None:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
            for stream in (proc.stdin, proc.stdout, proc.stderr):
                if stream is not None:
                    try:
                        stream.close()
                    except OSError:
                        pass
        if gateway is not None:
            try:
                gateway.close(keep_callback_server=False, close_callback_server_connections=True)
            except Exception:  # the connection is already broken; nothing left to close
                pass
        if worker is not None:
            worker.jobs.put(None)

    def close(self) -> None:
        """Ask the JVM to shut down, then make sure it is gone."""
        if self.alive and self._gateway is not None and self._worker is not None:
            try:
                self._run_raw(self._gateway.shutdown, (), 10.0)
            except (SimulatorCrashed, SimulatorRejected):
                pass
        self.kill()

    # ------------------------------------------------------------------ calls
    def call(self, fn: Callable[..., Any], *args: Any, timeout: float) -> Any:
        """Run ``fn(server, *args)`` on the worker thread; ``server`` is the py4j ``PythonInterface``.

        Raises:
            SimulatorCrashed: the call timed out or the JVM is dead (the JVM has been killed).
            SimulatorRejected: the simulator raised a Java exception (the JVM is fine).
        """
        if self._server is None or not self.alive:
            self.kill()
            raise SimulatorCrashed("the ScienceWorld JVM is not running")
        return self._run_raw(fn, (self._server, *args), timeout)

    def _run_raw(self, fn: Callable[..., Any], args: tuple[Any, ...], timeout: float) -> Any:
        from py4j.protocol import Py4JJavaError

        worker = self._worker
        if worker is None:
            raise SimulatorCrashed("the ScienceWorld JVM is not running")
        future: Future = Future()
        worker.jobs.put((fn, args, future))
        try:
            return future.result(timeout=timeout)
        except FutureTimeout:
            pid = self.pid
            self.kill()
            raise SimulatorCrashed(f"no answer from the ScienceWorld JVM (pid {pid}) within {timeout:g} s; it was killed") from None
        except Py4JJavaError as exc:
            if self.alive:
                message = str(exc.java_exception) if exc.java_exception is not None else str(exc)
                raise SimulatorRejected(message.splitlines()[0][:300]) from None
            self.kill()
            raise SimulatorCrashed("the ScienceWorld JVM died during the call") from None
        except Exception as exc:
            code = self._proc.poll() if self._proc is not None else None
            self.kill()
            state = f"exited with code {code}" if code is not None else "stopped answering"
            raise SimulatorCrashed(f"the ScienceWorld JVM {state} ({type(exc).__name__}: {str(exc)[:200]})") from None
