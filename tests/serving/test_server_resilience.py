"""A served env under hostile clients: one that vanishes mid-step, a flood of connections past
capacity, and slow-loris clients that send a byte at a time. In each case the server keeps
serving its other sessions, frees what the bad clients held, and its memory stays bounded.

Each test has a time limit (``pytest.mark.timeout``); nothing asserts on a duration: waits are
bounded loops that fail with a message when the server never recovers.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from agentgym_suite.serving.wire import RemoteSessionError, ServerBusy, ServerGone, WireSession
from serving.conftest import ServerProcess, raw_handshake

CAPACITY = 4
WRONG_CALL = '<tool_call>{"name": "no_such_tool", "arguments": {}}</tool_call>'
MEMORY_BOUND_MB = 80.0
"""Most the server's resident memory may grow over one hostile episode (a session's env is a few MB)."""


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="utf-8") as handle:
        return next(int(line.split()[1]) for line in handle if line.startswith("VmRSS:")) / 1024


@pytest.fixture(scope="module")
def server(serve_cache: object) -> Iterator[ServerProcess]:
    """SyntheticTools-v0 with room for 4 sessions and a one-second keep-alive ping."""
    process = ServerProcess("SyntheticTools-v0", {}, "--max-sessions", str(CAPACITY), "--ping-interval", "1")
    yield process
    process.stop()


def wait_for(condition: Callable[[], bool], what: str, bound_s: float = 60.0) -> None:
    """Poll ``condition`` until it holds; fail saying ``what`` did not happen within ``bound_s``."""
    deadline = time.monotonic() + bound_s
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"{what} did not happen within {bound_s:g} s")
        time.sleep(0.2)


def all_slots_free(server: ServerProcess) -> bool:
    """Whether ``CAPACITY`` sessions can be opened at once (then closed again)."""
    sessions = [WireSession(server.url, message_timeout=30) for _ in range(CAPACITY)]
    try:
        for session in sessions:
            session.request("reset", {"seed": 0})
        return True
    except (ServerBusy, ServerGone):
        return False
    finally:
        for session in sessions:
            session.close()


def play(session: WireSession, steps: int) -> int:
    """Reset and step ``steps`` times; the number of answers that were observations."""
    answered = 0
    session.request("reset", {"seed": 1})
    for _ in range(steps):
        answer = session.request("step", {"message": WRONG_CALL})
        answered += "observation" in answer
        if answer.get("done"):
            session.request("reset", {"seed": 2})
    return answered


def masked_text_frame(text: str) -> bytes:
    payload = text.encode()
    mask = os.urandom(4)
    assert len(payload) < 126
    return bytes([0x81, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def closed_by_server(sock: socket.socket) -> bool:
    """Whether the server has closed ``sock`` (reads what it sent: pings, a close frame, EOF)."""
    sock.settimeout(0.05)
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                return True
    except (TimeoutError, BlockingIOError):
        return False
    except OSError:  # reset by the server
        return True


@pytest.mark.timeout(180)
def test_a_client_that_vanishes_mid_step_frees_its_session(server: ServerProcess) -> None:
    wait_for(lambda: all_slots_free(server), "the server to start with every slot free")
    others = [WireSession(server.url, message_timeout=60) for _ in range(CAPACITY - 1)]
    before = rss_mb(server.process.pid)
    try:
        for session in others:
            session.request("reset", {"seed": 0})
        for _ in range(4):  # vanish again and again: nothing may pile up
            vanishing = raw_handshake(server.port)
            vanishing.sendall(masked_text_frame(json.dumps({"type": "reset", "data": {"seed": 0}})))
            vanishing.recv(65536)  # its env exists now
            vanishing.sendall(masked_text_frame(json.dumps({"type": "step", "data": {"message": WRONG_CALL}})))
            vanishing.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            vanishing.close()  # a reset, mid-step, with no close frame
            for session in others:  # the others are served meanwhile
                assert "observation" in session.request("step", {"message": WRONG_CALL})
            probe = WireSession(server.url, message_timeout=30)  # the vanished client's slot comes back
            wait_for(lambda probe=probe: _opens(probe), "the vanished client's slot to be freed")
            probe.close()
    finally:
        for session in others:
            session.close()
    wait_for(lambda: all_slots_free(server), "every slot to be free again")
    assert rss_mb(server.process.pid) - before < MEMORY_BOUND_MB


def _opens(session: WireSession) -> bool:
    try:
        session.request("reset", {"seed": 0})
        return True
    except (ServerBusy, ServerGone):
        session.close()
        return False


@pytest.mark.timeout(240)
def test_a_flood_past_capacity_gets_clean_refusals_while_the_others_play(server: ServerProcess) -> None:
    wait_for(lambda: all_slots_free(server), "every slot to be free")
    players = [WireSession(server.url, message_timeout=60) for _ in range(2)]
    for session in players:
        session.request("reset", {"seed": 0})
    holders = [WireSession(server.url, message_timeout=60) for _ in range(CAPACITY - 2)]
    for session in holders:
        session.request("reset", {"seed": 0})  # the server is full from here on
    before = rss_mb(server.process.pid)
    outcomes: dict[str, int] = {}
    lock = threading.Lock()
    stop = threading.Event()

    def flood() -> None:
        for _ in range(12):
            session = WireSession(server.url, message_timeout=30)
            try:
                session.request("reset", {"seed": 0})
                kind = "accepted"
            except ServerBusy:
                kind = "busy"
            except (RemoteSessionError, ServerGone) as exc:
                kind = f"{type(exc).__name__}: {exc}"
            finally:
                session.close()
            with lock:
                outcomes[kind] = outcomes.get(kind, 0) + 1

    answered: list[int] = []

    def keep_playing(session: WireSession) -> None:
        count = 0
        while not stop.is_set():
            count += play(session, 5)
        answered.append(count)

    threads = [threading.Thread(target=flood) for _ in range(8)]
    playing = [threading.Thread(target=keep_playing, args=(s,)) for s in players]
    for thread in playing + threads:
        thread.start()
    for thread in threads:
        thread.join(200)
    stop.set()
    for thread in playing:
        thread.join(60)
    for session in players + holders:
        session.close()
    assert outcomes == {"busy": 96}, outcomes  # every attempt past capacity: the clean at-capacity error
    assert len(answered) == 2 and all(count >= 5 for count in answered)  # the sessions in capacity kept playing
    assert rss_mb(server.process.pid) - before < MEMORY_BOUND_MB
    wait_for(lambda: all_slots_free(server), "every slot to be free after the flood")


@pytest.mark.timeout(180)
def test_slow_loris_clients_are_dropped_or_bounded_and_others_are_served(server: ServerProcess) -> None:
    wait_for(lambda: all_slots_free(server), "every slot to be free")
    before = rss_mb(server.process.pid)
    # HTTP: requests whose headers arrive a byte at a time and never end
    request = f"GET /health HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nX-Slow: ".encode() + b"a" * 10_000
    slow_http = [socket.create_connection(("127.0.0.1", server.port), timeout=10) for _ in range(20)]
    # WebSocket: sessions whose first frame arrives a byte at a time, never answering the server's pings
    frame = masked_text_frame(json.dumps({"type": "reset", "data": {"seed": 0}}))
    slow_ws = [raw_handshake(server.port) for _ in range(2)]
    steady = WireSession(server.url, message_timeout=60)
    steady_answers = 0
    dropped: set[int] = set()
    try:
        for i in range(24):
            for sock in slow_http:
                try:
                    sock.send(request[i:i + 1])
                except OSError:
                    pass  # the server may cut a slow request; that is fine too
            for index, sock in enumerate(slow_ws):
                if index in dropped:
                    continue
                try:
                    sock.send(frame[i % len(frame):i % len(frame) + 1])
                except OSError:
                    dropped.add(index)
                if closed_by_server(sock):
                    dropped.add(index)
            steady_answers += play(steady, 1)  # another session is served between the bytes
            with socket.create_connection(("127.0.0.1", server.port), timeout=10) as probe:
                probe.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                assert probe.recv(4096).startswith(b"HTTP/1.1 200")
            time.sleep(0.1)
        wait_for(lambda: all(i in dropped or closed_by_server(s) for i, s in enumerate(slow_ws)),
                 "the server to drop the WebSocket clients that answer no ping", bound_s=30)
    finally:
        steady.close()
        for sock in slow_http + slow_ws:
            sock.close()
    assert steady_answers == 24
    # what a slow request may hold is bounded: headers past the limit are refused and the connection closed
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as greedy:
        greedy.sendall(request + b"a" * 100_000)
        answer = greedy.recv(4096)
        assert answer.startswith(b"HTTP/1.1 4"), answer[:60]
        wait_for(lambda: closed_by_server(greedy), "the server to close a connection with oversized headers", bound_s=30)
    assert rss_mb(server.process.pid) - before < MEMORY_BOUND_MB
    wait_for(lambda: all_slots_free(server), "the slow clients' slots to be freed")
