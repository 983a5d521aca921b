"""A served ScienceWorld session starts a JVM; a client that goes away frees it."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import psutil
import pytest

from agentgym_suite.registration import entry, missing_requirements
from agentgym_suite.serving.wire import WireSession
from serving.conftest import ServerProcess


def java_processes(server: ServerProcess) -> list[int]:
    found = []
    for child in psutil.Process(server.process.pid).children(recursive=True):
        try:
            if "java" in child.name().lower() and child.status() != psutil.STATUS_ZOMBIE:
                found.append(child.pid)
        except psutil.Error:
            continue
    return found


@pytest.mark.java
@pytest.mark.skipif(shutil.which("java") is None or bool(missing_requirements(entry("ScienceWorld-v0"))),
                    reason="needs a Java runtime and the scienceworld package")
def test_a_vanished_client_frees_its_jvm(serve_cache: Path) -> None:
    server = ServerProcess("ScienceWorld-v0", {"task": "find-living-thing"}, "--max-sessions", "2", cache=serve_cache)
    try:
        session = WireSession(server.url, message_timeout=180)
        answer = session.request("reset", {"seed": 0})
        assert answer["observation"]["task_id"]
        assert java_processes(server), "the session's env should have started a JVM"
        session._ws.socket.close()  # gone without a goodbye
        deadline = time.monotonic() + 30
        while java_processes(server) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert not java_processes(server), "the JVM outlived its session"
    finally:
        server.stop()
