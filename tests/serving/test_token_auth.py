"""``agentgym serve --token``: every route but ``/health`` needs the bearer token; refusals make
no session and no env; our clients carry the token and never show it; a server other machines
can reach refuses to start without one."""

from __future__ import annotations

import json
import logging
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import gymnasium as gym
import pytest

import agentgym_suite  # noqa: F401
from agentgym_suite.serving import environment as served
from agentgym_suite.serving.app import ServerLimits, build_app, serve
from agentgym_suite.serving.auth import TOKEN_ENV, check_bind, is_loopback
from agentgym_suite.serving.environment import ServeSpec
from agentgym_suite.serving.fields import to_jsonable
from agentgym_suite.serving.wire import TokenRefused, WireSession
from serving.conftest import free_port

TOKEN = "s3cret-token-for-tests-41"
ENV_ID = "SyntheticTools-v0"


class CountingSpec(ServeSpec):
    """A spec that counts the gym envs it makes."""

    made = 0

    def make(self) -> gym.Env:
        type(self).made += 1
        return super().make()


class InProcessServer:
    """``build_app`` under uvicorn in a thread of this process, so the test sees what it makes."""

    def __init__(self, token: str | None) -> None:
        import uvicorn

        self.port = free_port()
        self.url = f"ws://127.0.0.1:{self.port}"
        self.http = f"http://127.0.0.1:{self.port}"
        app = build_app(CountingSpec(ENV_ID), ServerLimits(max_sessions=4), token=token)
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning",
                                                    access_log=False))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            assert time.monotonic() < deadline, "the in-process server did not start"
            time.sleep(0.05)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture(scope="module")
def guarded() -> Iterator[InProcessServer]:
    server = InProcessServer(TOKEN)
    yield server
    server.stop()


@pytest.fixture
def sessions_made(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many OpenEnv sessions (ServedEnv objects) and gym envs the server made during a test."""
    counts = {"sessions": 0}
    original = served.ServedEnv.__init__

    def counting_init(self: Any, spec: ServeSpec) -> None:
        counts["sessions"] += 1
        original(self, spec)

    monkeypatch.setattr(served.ServedEnv, "__init__", counting_init)
    CountingSpec.made = 0
    return counts


def _get(url: str, headers: dict[str, str] | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _refused_handshake(url: str, headers: dict[str, str] | None = None) -> int:
    """The HTTP status a WebSocket handshake on ``url`` gets (101 when it opens)."""
    from websockets.exceptions import InvalidStatus
    from websockets.sync.client import connect

    try:
        ws = connect(url, additional_headers=headers or {}, open_timeout=10)
    except InvalidStatus as exc:
        return int(exc.response.status_code)
    try:  # it opened: show that a reset would have made an env
        ws.send(json.dumps({"type": "reset", "data": {"seed": 0}}))
        ws.recv(timeout=30)
    finally:
        ws.close()
    return 101


@pytest.mark.parametrize("headers", [
    None,
    {"Authorization": "Bearer wrong-token"},
    {"Authorization": f"Bearer {TOKEN}x"},
    {"Authorization": f"Basic {TOKEN}"},
    {"Authorization": TOKEN},
    {"X-Token": TOKEN},
    {"Cookie": f"token={TOKEN}"},
], ids=["none", "wrong", "longer", "basic-scheme", "no-scheme", "other-header", "cookie"])
def test_missing_or_wrong_token_is_refused_without_a_session(guarded: InProcessServer, sessions_made: dict[str, int],
                                                             headers: dict[str, str] | None) -> None:
    assert _refused_handshake(guarded.url + "/ws", headers) == 401
    for path in ("/schema", "/metadata", f"/{ENV_ID}/splits", "/agentgym/describe", "/docs", "/openapi.json"):
        status, body = _get(guarded.http + path, headers)
        assert status == 401, path
        assert TOKEN not in body
    assert sessions_made["sessions"] == 0
    assert CountingSpec.made == 0


def test_token_in_the_url_or_on_the_open_route_lets_nothing_in(guarded: InProcessServer,
                                                               sessions_made: dict[str, int]) -> None:
    # the token in the query string (where logs would keep it) does not count
    assert _refused_handshake(f"{guarded.url}/ws?token={TOKEN}") == 401
    assert _get(f"{guarded.http}/schema?token={TOKEN}")[0] == 401
    # /health is open, and sending it the token opens nothing else
    assert _get(guarded.http + "/health") == (200, '{"status":"healthy"}')
    assert _get(guarded.http + "/health", {"Authorization": f"Bearer {TOKEN}"})[0] == 200
    assert _refused_handshake(guarded.url + "/ws") == 401
    assert sessions_made["sessions"] == 0
    assert CountingSpec.made == 0


def test_our_client_without_the_token_gets_an_error_that_says_what_to_do(guarded: InProcessServer,
                                                                          sessions_made: dict[str, int],
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    with pytest.raises(TokenRefused, match=TOKEN_ENV):
        gym.make("Remote-v0", url=guarded.url)
    with pytest.raises(TokenRefused, match="refused the token") as refused:
        gym.make("Remote-v0", url=guarded.url, token="not-it")
    assert "not-it" not in str(refused.value)
    with pytest.raises(TokenRefused) as refused:
        WireSession(guarded.url, message_timeout=10, token="not-it").request("reset", {"seed": 0})
    assert "not-it" not in str(refused.value)
    assert sessions_made["sessions"] == 0
    assert CountingSpec.made == 0


def _play_side_by_side(remote: gym.Env, seed: int) -> int:
    local = gym.make(ENV_ID)
    try:
        obs_l, info_l = local.reset(seed=seed)
        obs_r, info_r = remote.reset(seed=seed)
        assert obs_r == obs_l
        assert info_r == to_jsonable(info_l)
        steps, done = 0, False
        actions = ['<tool_call>{"name": "no_such_tool", "arguments": {}}</tool_call>']
        while not done and steps < 40:
            action = actions.pop(0) if actions else local.unwrapped.oracle()[0]
            step_l, step_r = local.step(action), remote.step(action)
            assert step_r[:4] == step_l[:4]
            assert step_r[4] == to_jsonable(step_l[4])
            done = step_l[2] or step_l[3]
            steps += 1
        assert done and step_l[4]["won"]
        return steps
    finally:
        local.close()


def test_right_token_from_the_variable_plays_the_same_seeded_episode(guarded: InProcessServer,
                                                                     sessions_made: dict[str, int],
                                                                     monkeypatch: pytest.MonkeyPatch,
                                                                     caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    caplog.set_level(logging.DEBUG)
    remote = gym.make("Remote-v0", url=guarded.url)
    try:
        assert _play_side_by_side(remote, seed=3) >= 2
        assert TOKEN not in repr(remote.unwrapped)
        assert TOKEN not in repr(remote.spec.kwargs)  # read from the variable, not kept as an argument
    finally:
        remote.close()
    assert CountingSpec.made == 1
    assert TOKEN not in caplog.text


def test_right_token_as_an_argument_and_through_openenvs_own_client(guarded: InProcessServer,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from openenv.core import GenericEnvClient

    from agentgym_suite.serving.client import SuiteEnvClient

    monkeypatch.delenv(TOKEN_ENV, raising=False)
    remote = gym.make("Remote-v0", url=guarded.url, token=TOKEN)
    try:
        assert _play_side_by_side(remote, seed=5) >= 2
    finally:
        remote.close()
    local = gym.make(ENV_ID)
    expected, _ = local.reset(seed=1)
    local.close()
    with GenericEnvClient(base_url=guarded.http, headers={"Authorization": f"Bearer {TOKEN}"}).sync() as client:
        assert client.reset(seed=1).observation["text"] == expected
    with SuiteEnvClient(base_url=guarded.http, token=TOKEN).sync() as client:
        assert client.reset(seed=1).observation.text == expected
    with pytest.raises(ConnectionError) as refused, GenericEnvClient(base_url=guarded.http).sync() as client:
        client.reset(seed=1)
    assert "401" in str(refused.value)


def test_env_workers_openenv_carries_the_token(guarded: InProcessServer, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentgym_suite.rollout.workers.openenv_servers import OpenEnvServers

    factory = gym.make  # only its absent .spec matters: Remote-v0 takes what the server serves
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    pool = OpenEnvServers([f"127.0.0.1:{guarded.port}"])
    try:
        (env,) = pool.make(factory, 1)
        assert env.env.reset(seed=0)[0]
    finally:
        pool.close()
    monkeypatch.delenv(TOKEN_ENV)
    with pytest.raises(TokenRefused):
        OpenEnvServers([f"127.0.0.1:{guarded.port}"]).make(factory, 1)
    pool = OpenEnvServers([f"127.0.0.1:{guarded.port}"], token=TOKEN)
    try:
        (env,) = pool.make(factory, 1)
        assert env.env.reset(seed=0)[0]
    finally:
        pool.close()


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "10.1.2.3", "example.org"])
def test_a_reachable_address_without_a_token_refuses_to_start(host: str, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    from agentgym_suite.cli import main

    def no_server(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("uvicorn must not start")

    monkeypatch.setattr("uvicorn.Server.run", no_server)
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    assert not is_loopback(host)
    with pytest.raises(ValueError, match="without a token"):
        serve(ServeSpec(ENV_ID), host=host, port=free_port())
    assert main(["serve", ENV_ID, "--host", host, "--port", str(free_port())]) == 2
    err = capsys.readouterr().err
    assert "refusing to listen" in err and TOKEN_ENV in err and "--insecure" in err
    check_bind(host, None, insecure=True)  # the operator's explicit choice
    check_bind(host, TOKEN, insecure=False)


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "localhost"])
def test_loopback_needs_no_token(host: str) -> None:
    assert is_loopback(host)
    check_bind(host, None, insecure=False)


def test_the_serve_banner_and_list_never_show_the_token(monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    from agentgym_suite.cli import main

    started: list[Any] = []
    monkeypatch.setattr("uvicorn.Server.run", lambda self: started.append(self.config.app))
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    assert main(["serve", ENV_ID, "--host", "0.0.0.0", "--port", str(free_port())]) == 0
    assert started, "with the token from the variable the server starts on a reachable address"
    assert main(["list", "--plain"]) == 0
    out = capsys.readouterr()
    assert "bearer token required" in out.out
    assert TOKEN not in out.out + out.err


def test_eval_against_a_guarded_server_writes_no_token(guarded: InProcessServer, tmp_path: Any,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from agentgym_suite.evaluation.runner import evaluate

    monkeypatch.delenv(TOKEN_ENV, raising=False)
    result = evaluate("Remote-v0", "random", out_dir=tmp_path, env_kwargs={"url": guarded.url, "token": TOKEN},
                      episodes=1, max_turns=2, progress=False)
    assert result.summary["episodes_planned"] == 1 and not result.summary.get("crashed")
    assert result.summary["env_kwargs"]["token"] == "<secret>"
    written = {path.name: path.read_text() for path in tmp_path.iterdir() if path.is_file()}
    assert {"summary.json", "config.json", "trajectories.jsonl"} <= set(written)
    assert all(TOKEN not in text for text in written.values())
    # resuming with the same token (masked on both sides) is the same run
    evaluate("Remote-v0", "random", out_dir=tmp_path, env_kwargs={"url": guarded.url, "token": TOKEN},
             episodes=1, max_turns=2, progress=False)


def test_handshake_headers_logged_at_debug_are_masked(caplog: pytest.LogCaptureFixture) -> None:
    build_app(ServeSpec(ENV_ID), token=TOKEN)  # attaches the mask to the logger uvicorn gives websockets
    caplog.set_level(logging.DEBUG, logger="uvicorn.error")
    logging.getLogger("uvicorn.error").debug("< %s: %s", "Authorization", f"Bearer {TOKEN}")
    logging.getLogger("uvicorn.error").debug("< %s: %s", "Host", "127.0.0.1")
    assert "Authorization: <redacted>" in caplog.text and "Host: 127.0.0.1" in caplog.text
    assert TOKEN not in caplog.text
