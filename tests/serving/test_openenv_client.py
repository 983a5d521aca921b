"""OpenEnv's own client (``GenericEnvClient``) plays a served suite env, and the server's plain
routes (``/health``, ``/schema``, ``/metadata``, task routes) answer as OpenEnv's do."""

from __future__ import annotations

import json
import urllib.request

import gymnasium as gym

import agentgym_suite  # noqa: F401
from serving.conftest import TEXTWORLD_KWARGS, ServerProcess


def get(server: ServerProcess, path: str) -> dict:
    with urllib.request.urlopen(server.http + path, timeout=10) as response:
        return json.loads(response.read())


def test_openenv_generic_client_plays_a_seeded_episode(textworld_server: ServerProcess) -> None:
    from openenv.core import GenericEnvClient

    local = gym.make("TextWorld-v0", **TEXTWORLD_KWARGS)
    try:
        obs, info = local.reset(seed=5)
        with GenericEnvClient(base_url=textworld_server.http).sync() as client:
            result = client.reset(seed=5)
            assert result.observation["text"] == obs
            assert result.observation["task_id"] == info["task_id"]
            assert result.observation["admissible_actions"] == info["admissible_actions"]
            assert result.done is False
            steps = 0
            while not result.done and steps < 40:
                action = local.unwrapped.oracle()[0]
                obs, reward, terminated, truncated, info = local.step(action)
                result = client.step({"message": action})
                assert result.observation["text"] == obs
                assert result.reward == reward
                assert result.done == (terminated or truncated)
                assert result.observation["won"] == info["won"]
                assert result.observation["score"] == info["score"]
                assert result.observation["action_valid"] == info["action_valid"]
                steps += 1
            assert result.done and result.observation["won"] and result.reward == reward
            state = client.state()
            assert state["env_id"] == "TextWorld-v0" and state["step_count"] == steps
    finally:
        local.close()


def test_health_schema_metadata_and_tasks(textworld_server: ServerProcess) -> None:
    assert get(textworld_server, "/health") == {"status": "healthy"}
    schema = get(textworld_server, "/schema")
    assert schema["action"]["required"] == ["message"]
    for field in ("text", "won", "score", "action_valid", "admissible_actions", "tools", "info", "reward", "done"):
        assert field in schema["observation"]["properties"], field
    metadata = get(textworld_server, "/metadata")
    assert metadata["name"] == "TextWorld-v0" and "TextWorld" in metadata["description"]
    splits = json.loads(urllib.request.urlopen(textworld_server.http + "/TextWorld-v0/splits", timeout=10).read())
    assert len(splits) == 1
    request = urllib.request.Request(textworld_server.http + "/TextWorld-v0/tasks", method="POST",
                                     data=json.dumps({"split": splits[0]["name"]}).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        tasks = json.loads(response.read())["tasks"]
    assert [t["id"] for t in tasks] == ["game-0", "game-1"]


def test_no_stateless_http_reset_or_step(textworld_server: ServerProcess) -> None:
    """Production mode: an env per HTTP request would escape the session limit, so there is none."""
    import urllib.error

    for path in ("/reset", "/step"):
        request = urllib.request.Request(textworld_server.http + path, data=b"{}", method="POST",
                                         headers={"Content-Type": "application/json"})
        try:
            urllib.request.urlopen(request, timeout=10)
        except urllib.error.HTTPError as exc:
            assert exc.code in (404, 405)
        else:
            raise AssertionError(f"{path} answered")
