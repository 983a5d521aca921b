"""Hostile input over the wire gets a clear error and leaves the other sessions (and the server)
untouched; abandoned sessions free their envs; a full server answers "busy"; idle sessions expire."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import pytest

import agentgym_suite  # noqa: F401
from agentgym_suite.serving.environment import public_message
from agentgym_suite.serving.wire import RemoteSessionError, ServerBusy, ServerGone, WireSession
from serving.conftest import ServerProcess, raw_handshake

MAX_BYTES = 65536
IDLE_S = 3


@pytest.fixture(scope="module")
def small_server(serve_cache: Path) -> Iterator[ServerProcess]:
    """Two sessions at most, 64 KiB frames, sessions expire after 3 s without a message."""
    server = ServerProcess("SyntheticTools-v0", {}, "--max-sessions", "2", "--max-message-bytes", str(MAX_BYTES),
                           "--idle-timeout", str(IDLE_S), cache=serve_cache)
    yield server
    server.stop()


def open_session(server: ServerProcess, attempts: int = 40) -> WireSession:
    """A session that answers a reset; retried for a few seconds while the server frees old ones."""
    for _ in range(attempts):
        session = WireSession(server.url, message_timeout=30)
        try:
            session.request("reset", {"seed": 1})
            return session
        except ServerBusy:
            time.sleep(0.25)
    raise AssertionError("the server stayed at capacity: abandoned sessions were not freed")


def test_invalid_json_and_wrong_action_types_get_clear_errors_and_the_session_goes_on(small_server: ServerProcess) -> None:
    session = open_session(small_server)
    try:
        session.connect()
        session._ws.send("{this is not json")
        answer = json.loads(session._ws.recv(timeout=10))
        assert answer["type"] == "error" and answer["data"]["code"] == "INVALID_JSON"
        for bad in ({"message": 5}, {"text": "hi"}, {}, {"message": "x", "extra": 1}):
            with pytest.raises(RemoteSessionError, match="VALIDATION_ERROR"):
                session.request("step", bad)
        with pytest.raises(RemoteSessionError, match="UNKNOWN_TYPE"):
            session.request("teleport", {})
        answer = session.request("step", {"message": "Done."})
        assert "text" in answer["observation"]
    finally:
        session.close()


def test_oversized_frame_closes_only_that_connection(small_server: ServerProcess) -> None:
    bystander = open_session(small_server)
    hostile = WireSession(small_server.url, message_timeout=30)
    try:
        hostile.request("reset", {"seed": 2})
        with pytest.raises(ServerGone, match="1009"):
            hostile.request("step", {"message": "x" * (2 * MAX_BYTES)})
        answer = bystander.request("step", {"message": "Done."})
        assert "text" in answer["observation"]
    finally:
        bystander.close()
        hostile.close()


def test_unknown_session_id_is_refused(small_server: ServerProcess) -> None:
    from websockets.sync.client import connect

    with connect(small_server.url + "/ws?session_id=no-such-session", open_timeout=10) as ws:
        answer = json.loads(ws.recv(timeout=10))
    assert answer["type"] == "error" and "Unknown session_id" in answer["data"]["message"]


def test_half_a_frame_then_gone_frees_the_session(small_server: ServerProcess) -> None:
    for _ in range(3):  # more than max_sessions: each must be freed for the next to fit
        sock = raw_handshake(small_server.port)
        # a masked text frame announcing 4096 bytes, of which 10 arrive
        sock.sendall(bytes([0x81, 0xFE, 0x10, 0x00]) + os.urandom(4) + b"0123456789")
        sock.close()
    first, second = open_session(small_server), open_session(small_server)
    try:
        with pytest.raises(ServerBusy, match="capacity"):
            WireSession(small_server.url, message_timeout=30).request("reset", {})
    finally:
        first.close()
        second.close()


def test_errors_carry_no_paths_or_tracebacks(small_server: ServerProcess) -> None:
    session = open_session(small_server)
    try:
        with pytest.raises(RemoteSessionError) as caught:
            session.request("reset", {"task_id": "no-such-task"})
        text = str(caught.value)
        assert "no-such-task" in text and "Traceback" not in text and os.getcwd() not in text
        fresh = WireSession(small_server.url, message_timeout=30)
        with pytest.raises(RemoteSessionError, match="send a reset first"):
            fresh.request("step", {"message": "look"})
        fresh.close()
    finally:
        session.close()
    secret = FileNotFoundError(2, "No such file", "/home/someone/secret/data/tasks.json")
    assert "/home" not in public_message(secret, "reset", show_errors=False)
    assert "FileNotFoundError" in public_message(secret, "reset", show_errors=False)
    shown = public_message(secret, "reset", show_errors=True)
    assert "No such file" in shown and "/home/someone" not in shown and "<path>" in shown


def test_idle_sessions_expire_and_free_their_env(small_server: ServerProcess) -> None:
    session = open_session(small_server)
    try:
        time.sleep(IDLE_S + 6)  # OpenEnv's reaper looks every 5 s at least
        with pytest.raises(RemoteSessionError, match="closed by the server"):
            session.request("step", {"message": "Done."})
    finally:
        session.close()
    open_session(small_server).close()


def test_busy_server_refuses_clearly_through_remote_env(small_server: ServerProcess) -> None:
    first, second = open_session(small_server), open_session(small_server)
    try:
        env = gym.make("Remote-v0", url=small_server.url)
        with pytest.raises(ServerBusy, match="Server at capacity"):
            env.reset(seed=0)
        env.close()
    finally:
        first.close()
        second.close()
