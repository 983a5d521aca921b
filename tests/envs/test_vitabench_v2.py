"""VitaBench 2.0 shape: sub-task sequences from a small fixture of our own, and the memory backends."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from gymnasium.utils.env_checker import check_env

from agentgym_suite.core.data import has_benchmark_data
from agentgym_suite.core.errors import DataNotFoundError
from agentgym_suite.envs.vitabench import VitaBenchEnv
from agentgym_suite.envs.vitabench.memory import BM25Memory, FullContextMemory, NoMemory, RewriteMemory, make_memory

pytestmark = pytest.mark.skipif(not has_benchmark_data("vitabench", "prompts"), reason="needs the VitaBench prompt YAMLs")

ADDRESS = "12 Maple Road, Springfield"


def subtask(task_id: str, timestamp: str, product: str, instructions: str) -> dict:
    store = {"name": "Green Bowl", "store_id": "S1", "score": 4.6, "tags": ["Salad"],
             "location": {"address": "1 Market St", "longitude": 10.0, "latitude": 50.0},
             "products": [{"product_id": "P1", "name": "Caesar salad", "price": 30, "tags": ["Light"], "store_id": "S1"},
                          {"product_id": "P2", "name": "Quinoa bowl", "price": 35, "tags": ["Vegan"], "store_id": "S1"}]}
    order = {"order_id": f"{task_id}T01", "order_type": "delivery", "user_id": "U1", "store_id": "S1", "note": "",
             "location": {"address": ADDRESS, "longitude": 10.01, "latitude": 50.01}, "status": "paid",
             "products": [{"product_id": product, "quantity": 1, "attributes": ""}]}
    return {
        "id": task_id, "timestamp": timestamp, "domain": "delivery", "message_history": [],
        "environment": {"time": timestamp, "user_id": "U1", "orders": {}, "weather": [], "user_historical_behaviors": {},
                        "location": [{"address": ADDRESS, "longitude": 10.01, "latitude": 50.01}], "stores": {"S1": store}},
        "user_scenario": {"user_profile": {"user id": "U1"}}, "instructions": instructions,
        "evaluation_criteria": {"expected_states": [{"required_orders": [order], "optional_orders": [], "state_rubrics": []}], "overall_rubrics": []},
    }


@pytest.fixture()
def sequences(tmp_path: Path) -> Path:
    data = [{"user_id": "U1", "subtasks": [
        # deliberately out of order: the loader sorts by timestamp
        subtask("b", "2025-03-02 12:00:00", "P1", "Order the same salad brand as last time, but the Caesar salad."),
        subtask("a", "2025-03-01 12:00:00", "P2", "Order a vegan quinoa bowl from Green Bowl to 12 Maple Road; I am allergic to peanuts."),
    ]}]
    path = tmp_path / "sequences.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def run_oracle(env: VitaBenchEnv) -> dict:
    info: dict = {}
    for action in env.oracle() + ["Done.", "Done."]:
        *_, terminated, _, info = env.step(action)
        if terminated:
            break
    return info


def test_v2_sequence_order_and_check_env(sequences: Path) -> None:
    env = VitaBenchEnv(version=2, sequences_path=sequences)
    assert env.task_ids() == ["U1/0", "U1/1"]
    assert env.tasks["U1/0"]["instructions"].startswith("Order a vegan")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(VitaBenchEnv(version=2, sequences_path=sequences), skip_render_check=True)


@pytest.mark.parametrize("memory", ["full", "bm25"])
def test_memory_carries_earlier_episode(sequences: Path, memory: str) -> None:
    env = VitaBenchEnv(version=2, sequences_path=sequences, memory=memory)
    _, info = env.reset(options={"task_id": "U1/0"})
    assert info["vitabench_memory"] == ""
    assert run_oracle(env)["won"]
    _, info = env.reset(options={"task_id": "U1/1"})
    assert "peanuts" in info["vitabench_memory"] or "Green Bowl" in info["vitabench_memory"]
    assert info["vitabench_memory"] in info["messages"][0]["content"]
    assert run_oracle(env)["won"]


def test_no_memory_and_rewrite(sequences: Path) -> None:
    env = VitaBenchEnv(version=2, sequences_path=sequences, memory="none")
    env.reset(options={"task_id": "U1/0"})
    run_oracle(env)
    _, info = env.reset(options={"task_id": "U1/1"})
    assert info["vitabench_memory"] == ""
    calls: list[tuple[str, str]] = []
    rewrite = RewriteMemory(lambda old, new: (calls.append((old, new)) or "likes Green Bowl"))
    rewrite.update([{"role": "user", "content": "I like Green Bowl"}])
    assert rewrite.read("anything") == "likes Green Bowl" and calls[0][1] == "user: I like Green Bowl"
    with pytest.raises(ValueError, match="summarise"):
        make_memory("rewrite")
    with pytest.raises(ValueError):
        make_memory("vector")


def test_memory_backends_directly() -> None:
    turns = [{"role": "user", "content": "My cat is called Miso"}, {"role": "assistant", "content": "Noted the delivery address"},
             {"role": "tool", "content": "order created at Sushi Place"}]
    bm25 = BM25Memory(top_k=1)
    bm25.update(turns)
    assert bm25.read("what is the cat called") == "user: My cat is called Miso"
    assert bm25.read("") == "" and BM25Memory().read("x") == ""
    full = FullContextMemory(max_chars=30)
    full.update(turns)
    assert len(full.read("q")) == 30 and full.read("q").endswith("Sushi Place")
    assert NoMemory().read("q") == ""


def test_v2_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DataNotFoundError, match="sequences"):
        VitaBenchEnv(version=2, sequences_path=tmp_path / "nope.json")
    with pytest.raises(ValueError):
        VitaBenchEnv(version=3)
