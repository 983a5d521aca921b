"""VitaBench 2.0: the official sequence format, the memory interface and backends, per-user reset, proactive users.

Checked against upstream (meituan-longcat/VitaBench-2.0): ``vita.data_model.personalization_task``
(record fields), ``vita.orchestrator.personalization_orchestrator.PersonalizationOrchestrator.run``
(memory updated with each subtask's interactions before it runs, read with its instruction),
``vita.run._run_personalization_task`` (one memory per user), ``vita.memory.*`` (backends and
the read/query tools), ``vita.user.personalization_user.PersonalizationUser`` (opens with the
instruction; the proactive intention is disclosed only when asked about).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from gymnasium.utils.env_checker import check_env

from agentgym_suite.core.data import has_benchmark_data
from agentgym_suite.core.errors import DataNotFoundError
from agentgym_suite.envs.vitabench import VitaBenchEnv
from agentgym_suite.envs.vitabench.memory import (NO_MEMORY, FullContextMemory, Memory, RewriteMemory, interaction_lines,
                                                  make_memory, model_summariser)
from agentgym_suite.envs.vitabench.retrieval_memory import BM25Memory, EmbeddingMemory, HashingEncoder
from agentgym_suite.envs.vitabench.rubric_judge import sliding_windows
from agentgym_suite.envs.vitabench.sequences import SequenceFormatError, load_sequences
from agentgym_suite.envs.vitabench.user import ACCEPT_REPLY, VAGUE_REPLY

from .vitabench_v2_fixture import PROACTIVE_INTENTION, criteria, delivery_environment, tasks, write

pytestmark = pytest.mark.skipif(not has_benchmark_data("vitabench", "prompts"), reason="needs the VitaBench prompt YAMLs")


@pytest.fixture()
def path(tmp_path: Path) -> Path:
    return write(tmp_path / "tasks.json")


def call(name: str, **arguments: object) -> str:
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"


def run_oracle(env: VitaBenchEnv) -> dict:
    info: dict = {}
    for action in env.oracle() + ["Done."] * 3:
        *_, terminated, _, info = env.step(action)
        if terminated:
            break
    return info


def test_official_records_load_as_ordered_subtasks(path: Path) -> None:
    env = VitaBenchEnv(version=2, sequences_path=path)
    assert env.task_ids() == ["U1001/0", "U1001/1", "U1001/2", "U1001/3", "U2002/0", "U2002/1"]
    assert env.unplayable == {}
    obs, info = env.reset(options={"task_id": "U1001/0"})
    assert obs == "Order me lunch, the usual." and info["task"] == obs  # the official instruction, not an empty task
    assert info["sequence_id"] == "U1001" and info["subtask_index"] == 0 and info["skill_tested"] == ""
    assert env.tasks["U1001/1"]["skill_tested"] == ["update"] and env.tasks["U1001/3"]["user_intention"] == PROACTIVE_INTENTION
    assert "U1001" in info["messages"][0]["content"] and "nurse" in info["messages"][0]["content"]  # the account details


def test_invented_or_broken_files_are_clear_errors(tmp_path: Path) -> None:
    old = tmp_path / "old.json"
    old.write_text(json.dumps([{"user_id": "U1", "subtasks": [{"id": "a", "timestamp": "2025", "instructions": "x", "environment": {}}]}]))
    with pytest.raises(SequenceFormatError, match="no 'instruction'.*older, unofficial layout"):
        load_sequences(old)
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(SequenceFormatError, match="not valid JSON"):
        load_sequences(tmp_path / "bad.json")
    with pytest.raises(DataNotFoundError, match="personalization"):
        VitaBenchEnv(version=2, sequences_path=tmp_path / "nope.json")
    with pytest.raises(ValueError):
        VitaBenchEnv(version=3)


def test_default_location_is_the_personalization_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shared = Path(has_benchmark_data.__globals__["data_dir"]()) / "vitabench" / "prompts"
    (tmp_path / "vitabench").mkdir()
    (tmp_path / "vitabench" / "prompts").symlink_to(shared)
    write(tmp_path / "vitabench" / "domains" / "personalization" / "tasks.json")
    monkeypatch.setenv("AGENTGYM_DATA", str(tmp_path))
    assert len(VitaBenchEnv(version=2).task_ids()) == 6


def test_check_env(path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(VitaBenchEnv(version=2, sequences_path=path, memory="full"), skip_render_check=True)


def test_memory_ingests_each_subtasks_interactions_before_it_runs(path: Path) -> None:
    env = VitaBenchEnv(version=2, sequences_path=path, memory="full")
    _, info = env.reset(options={"task_id": "U1001/0"})
    assert "quinoa bowl" in info["vitabench_memory"] and "allergic to peanuts" in info["vitabench_memory"]
    assert info["vitabench_memory"] in info["messages"][0]["content"] and info["memory"] == "full"
    _, info = env.reset(options={"task_id": "U1001/3"})
    assert "Caesar salad is my new favourite" in info["vitabench_memory"] and "Harbour Hotel" in info["vitabench_memory"]


def test_memory_is_reset_per_user(path: Path) -> None:
    env = VitaBenchEnv(version=2, sequences_path=path, memory="full")
    for task_id in ("U1001/0", "U1001/1"):
        env.reset(options={"task_id": task_id})
        run_oracle(env)
    _, info = env.reset(options={"task_id": "U2002/0"})
    assert "Sushi Place" in info["vitabench_memory"]
    assert "Green Bowl" not in info["vitabench_memory"] and "peanuts" not in info["vitabench_memory"]
    _, info = env.reset(options={"task_id": "U1001/1"})  # back to the first user: their memory alone, rebuilt
    assert "Green Bowl" in info["vitabench_memory"] and "Sushi Place" not in info["vitabench_memory"]
    assert "Harbour Hotel" not in info["vitabench_memory"]  # a later subtask's interactions are not known yet


@pytest.mark.parametrize("memory,present,absent,tools", [
    ("none", [], ["Green Bowl"], []),
    ("full", ["quinoa bowl", "Caesar salad"], [], []),
    ("rewrite", ["User preference observations", "Caesar salad"], [], ["read_preference_memory", "query_preference_memory"]),
    ("bm25", ["User preference memory"], [], ["read_preference_memory", "query_preference_memory"]),
    ("embedding:hashing", ["User preference memory"], [], ["read_preference_memory", "query_preference_memory"]),
    ("groundtruth", ["Caesar salad from Green Bowl", "peanuts"], ["new favourite"], []),
])
def test_memory_backends_in_the_env(path: Path, memory: str, present: list[str], absent: list[str], tools: list[str]) -> None:
    env = VitaBenchEnv(version=2, sequences_path=path, memory=memory)
    _, info = env.reset(options={"task_id": "U1001/1"})
    text = info["vitabench_memory"]
    assert all(p in text for p in present) and not any(a in text for a in absent), text
    names = [t["function"]["name"] for t in info["tools"]]
    assert [t for t in names if "preference_memory" in t] == tools
    if tools:
        obs, _, _, _, step_info = env.step(call("query_preference_memory", query="which salad does the user like"))
        assert step_info["action_valid"] and "Caesar salad" in obs
    assert run_oracle(env)["won"]


def test_retrieval_picks_the_relevant_chunks() -> None:
    interactions = [{"type": "search", "timestamp": "t1", "content": {"keyword": "spicy ramen"}},
                    {"type": "review", "timestamp": "t2", "content": {"text": "The vegan bowl was great"}},
                    {"type": "order", "timestamp": "t3", "content": {"merchant_name": "Harbour Hotel"}}]
    for memory in (BM25Memory(top_k=1), EmbeddingMemory(encoder="hashing", top_k=1)):
        assert memory.read("x") == NO_MEMORY
        memory.update(interactions)
        assert memory.read("I want vegan food") == "User preference memory (retrieved for current task):\n- [t2] [review] {\"text\": \"The vegan bowl was great\"}"
        assert len(memory.read(None).splitlines()) == 4  # no query: everything
        memory.reset()
        assert memory.read("vegan") == NO_MEMORY
    vectors = HashingEncoder().encode(["same text", "same text", "other words"])
    assert vectors[0] @ vectors[1] == pytest.approx(1.0) and vectors[0] @ vectors[2] < 0.5


@pytest.mark.slow
def test_minilm_embeddings_retrieve_by_meaning() -> None:
    memory = EmbeddingMemory(encoder="minilm", top_k=1)
    memory.update([{"type": "review", "timestamp": "t1", "content": {"text": "I adore fiery Sichuan dishes"}},
                   {"type": "review", "timestamp": "t2", "content": {"text": "The hotel room was quiet"}}])
    assert memory.name == "embedding:minilm" and "Sichuan" in memory.read("order me something hot and spicy")


def test_rewrite_memory_with_a_writer_and_the_model_prompt() -> None:
    seen: list[tuple[str, str]] = []
    memory = RewriteMemory(lambda old, new: (seen.append((old, new)) or "likes Caesar salad"))
    memory.update([{"type": "review", "timestamp": "t", "content": {"text": "Caesar salad!"}}])
    assert memory.read("q") == "likes Caesar salad" and seen[0] == ("", '- [t] [评价] {\n  "text": "Caesar salad!"\n}')
    memory.update([{"type": "search", "timestamp": "t2", "content": "soup"}])
    assert memory.read() == "likes Caesar salad" and seen[1] == ("likes Caesar salad", "- [t2] [搜索] soup")  # replaced, not appended
    assert memory.rewrites == 2 and memory.departures() == []
    prompts: list[list[dict]] = []
    writer = model_summariser(lambda messages: (prompts.append(messages) or "summary v2"))
    assert writer("summary v1", "- [t] [order] x") == "summary v2"
    assert "summary v1" in prompts[0][1]["content"] and "- [t] [order] x" in prompts[0][1]["content"]
    assert [m["role"] for m in prompts[0]] == ["system", "user"] and "4096 tokens" in prompts[0][1]["content"]
    assert "without a model" not in RewriteMemory().departures()[0] and "appends" in RewriteMemory().departures()[0]
    failing = RewriteMemory(lambda old, new: 1 / 0)
    failing.update([{"type": "search", "timestamp": "t", "content": "tuna"}])
    assert "tuna" in failing.read() and "ZeroDivisionError" in (failing.last_error or "")
    assert make_memory("rewrite:tiny").name == "rewrite:llm:tiny"
    with pytest.raises(ValueError, match="Unknown memory"):
        make_memory("vector")


def test_memory_interface_is_pluggable(path: Path) -> None:
    class Counting(Memory):
        name = "counting"

        def __init__(self) -> None:
            self.seen: list[int] = []

        def read(self, query: str | None = None) -> str:
            return f"{len(self.seen)} updates; asked: {query}"

        def update(self, interactions: list) -> None:
            self.seen.append(len(interactions))

        def reset(self) -> None:
            self.seen = []

    memory = Counting()
    env = VitaBenchEnv(version=2, sequences_path=path, memory=memory)
    _, info = env.reset(options={"task_id": "U1001/3"})
    assert memory.seen == [1, 1, 1, 0] and info["vitabench_memory"] == "4 updates; asked: I need dinner delivered."
    assert info["memory"] == "counting"
    assert interaction_lines(tasks()[0]["subtasks"][0]["interactions"])[0] == '- [2025-02-20] [搜索] {"keyword": "quinoa bowl"}'
    assert len(FullContextMemory(max_tokens=20, chars_per_token=2).read()) == 0


def test_proactive_user_reveals_the_intention_only_when_asked(path: Path) -> None:
    env = VitaBenchEnv(version=2, sequences_path=path)
    obs, info = env.reset(options={"task_id": "U1001/3"})
    assert obs == "I need dinner delivered." and PROACTIVE_INTENTION not in obs and info["skill_tested"] == "proactive"
    assert "do not push services" in info["messages"][0]["content"]  # the proactive agent prompt
    obs, *_ = env.step("Would you prefer a salad or a bowl?")
    assert obs == VAGUE_REPLY
    obs, *_ = env.step("Shall I go ahead with the Caesar salad?")
    assert obs == ACCEPT_REPLY
    obs, *_ = env.step("Where should I deliver it, home or somewhere else?")
    assert obs == PROACTIVE_INTENTION
    env.reset(options={"task_id": "U1001/0"})  # not proactive: the same question gets no hidden intention
    obs, *_ = env.step("Where should I deliver it, home or somewhere else?")
    assert obs == VAGUE_REPLY


def test_llm_user_prompt_holds_the_intention_for_proactive_subtasks(path: Path) -> None:
    prompts: list[list[dict]] = []

    def chat(messages: list[dict]) -> str:
        prompts.append(messages)
        return "whatever"

    env = VitaBenchEnv(version=2, sequences_path=path, user=chat)
    obs, info = env.reset(options={"task_id": "U1001/3"})
    assert obs == "I need dinner delivered." and not prompts  # upstream's user opens with the instruction itself
    env.step("Anything special?")
    assert PROACTIVE_INTENTION in prompts[0][0]["content"] and "U1001" in prompts[0][0]["content"]
    env.reset(options={"task_id": "U1001/0"})
    env.step("Anything special?")
    assert PROACTIVE_INTENTION not in prompts[1][0]["content"]
    assert info["user_simulator"] == "llm:chat"


def test_scoring_is_labelled_and_rubric_only_subtasks_need_a_judge(path: Path) -> None:
    env = VitaBenchEnv(version=2, sequences_path=path)
    env.reset(options={"task_id": "U2002/1"})  # overall rubrics only: nothing for the state check
    info = run_oracle(env)
    assert info["scoring"] == "state_check" and info["scorable"] is False and not info["won"]

    def judge(messages: list[dict]) -> str:
        current = json.loads(messages[1]["content"].split("<current_rubrics>")[1].split("</current_rubrics>")[0])
        return json.dumps([{**r, "meetExpectation": True} for r in current])

    env = VitaBenchEnv(version=2, sequences_path=path, judge=judge)
    env.reset(options={"task_id": "U2002/1"})
    info = run_oracle(env)
    assert info["scoring"] == "rubric_judge" and info["scorable"] and info["won"] and info["judge"] == "judge"


def test_sliding_windows_follow_upstream() -> None:
    windows = sliding_windows(list(range(25)))
    assert [w[0] for w in windows] == [0, 8, 16] and [len(w) for w in windows] == [10, 10, 9]
    assert sliding_windows(list(range(10))) == [list(range(10))]


def test_benchmark_metrics_count_a_missing_trial_as_zero(path: Path) -> None:
    """The run's final infos give upstream's subtask metrics; a subtask with a trial short scores 0 there."""
    env = VitaBenchEnv(version=2, sequences_path=path)
    env.reset(options={"task_id": "U1001/0"})
    info = run_oracle(env)
    assert info["vitabench_reward"] in (0.0, 1.0) and info["sequence_id"] == "U1001"
    solved = {**info, "vitabench_reward": 1.0}
    other = {**solved, "subtask_index": 1, "skill_tested": "proactive"}
    metrics = VitaBenchEnv.benchmark_metrics([solved, solved, other])["personalization"]
    assert metrics["num_trials"] == 2 and metrics["subtask_num_units"] == 2
    assert metrics["subtask_average_at_n"]["1"] == pytest.approx(0.75)  # (1 + 1) / 2 and (1 + 0) / 2
    assert metrics["subtask_pass_hat_ks"]["2"] == pytest.approx(0.5)
    assert metrics["skill_split_metrics"]["proactive"] == {"avg_reward": 1.0, "count": 1}


def test_benchmark_metrics_take_the_runs_k(path: Path) -> None:
    """With k=3 and a trial that crashed for every subtask, the third trial counts 0 everywhere (upstream's
    num_trials); read off the episodes alone the run would look like a 2-trial run."""
    env = VitaBenchEnv(version=2, sequences_path=path)
    env.reset(options={"task_id": "U1001/0"})
    solved = {**run_oracle(env), "vitabench_reward": 1.0}
    other = {**solved, "subtask_index": 1}
    finals = [solved, other, solved, other]  # trials 0 and 1 of both subtasks; trial 2 crashed everywhere
    guessed = VitaBenchEnv.benchmark_metrics(finals)["personalization"]
    assert guessed["num_trials"] == 2 and guessed["subtask_average_at_n"]["1"] == pytest.approx(1.0)
    metrics = VitaBenchEnv.benchmark_metrics(finals, k=3)["personalization"]
    assert metrics["num_trials"] == 3 and metrics["subtask_num_units"] == 2
    assert metrics["subtask_average_at_n"]["1"] == pytest.approx(2 / 3)
    assert metrics["subtask_pass_hat_ks"]["3"] == 0.0 and metrics["subtask_pass_at_n"]["3"] == 1.0
    assert set(metrics["subtask_pass_hat_ks"]) == {"1", "2", "3"}


def test_rewrite_memory_rewrites_with_the_agent_model_by_default(path: Path) -> None:
    """``agentgym eval`` gives a bare rewrite memory the agent's model; a tiny model rewrites, the memory is replaced."""
    from agentgym_suite.commands.eval import apply_user_and_judge

    kwargs = apply_user_and_judge("VitaBench-v0", {"version": 2, "memory": "rewrite"}, "tiny", None, None)
    assert kwargs["memory"] == "rewrite:tiny"
    assert apply_user_and_judge("VitaBench-v0", {"version": 2, "memory": "rewrite"}, "oracle", None, None)["memory"] == "rewrite"
    assert make_memory(kwargs["memory"]).name == "rewrite:llm:tiny"  # the agent's backend spec, not a generation here
    requests: list[str] = []

    def scripted_model(messages: list[dict]) -> str:  # a scripted stand-in for the agent's model
        requests.append(messages[1]["content"])
        return f"preferences after {len(requests)} rewrite(s)"

    memory = RewriteMemory(model_summariser(scripted_model))
    env = VitaBenchEnv(version=2, sequences_path=path, memory=memory, user="scripted")
    _, info = env.reset(options={"task_id": "U1001/1"})
    assert memory.rewrites == 2 and info["vitabench_memory"] == "preferences after 2 rewrite(s)"
    assert "preferences after 1 rewrite(s)" in requests[1] and "Caesar salad" in requests[1]  # the old memory goes in
    assert not any("rewrite memory" in r for r in env.leaderboard_departures())
    appending = VitaBenchEnv(version=2, sequences_path=path, memory="rewrite", user="scripted")
    assert any("appends" in r for r in appending.leaderboard_departures())
    assert not any("not played" in r for r in appending.leaderboard_departures())  # every subtask of the fixture is played


def test_rag_settings_reach_info_and_departures(path: Path) -> None:
    env = VitaBenchEnv(version=2, sequences_path=path, memory="embedding:hashing", user="scripted")
    _, info = env.reset(options={"task_id": "U1001/1"})
    settings = info["memory_settings"]
    assert settings["chunk_size"] == 512 and settings["chunk_overlap"] == 0 and settings["top_k"] == 8
    assert settings["embedding_model"].startswith("hashed words") and "chunk_unit" in settings
    assert any("text-embedding-3-large" in r and "512" in r for r in env.leaderboard_departures())


def test_ota_subtask_is_played_and_counted(path: Path) -> None:
    """The travel subtask runs on 2.0's OTA toolkit (taxi tools included, no user-history tool); the oracle books
    and pays the hotel, the state check passes, and the subtask counts in the run's metrics."""
    env = VitaBenchEnv(version=2, sequences_path=path)
    _, info = env.reset(options={"task_id": "U1001/2"})
    names = {t["function"]["name"] for t in info["tools"]} if "tools" in info else set(env._vt.handlers)
    assert {"create_hotel_order", "taxi_search", "create_taxi_order"} <= names and "get_user_historical_behaviors" not in names
    assert "create_delivery_order" not in names and info["vitabench_domain"] == "ota"
    finished = run_oracle(env)
    assert finished["vitabench_state"]["passed"] and finished["won"] and finished["vitabench_reward"] == 1.0
    order = next(iter(env._vt.db["orders"].values()))
    assert order["order_type"] == "hotel" and order["status"] == "paid" and env._vt.db["hotels"]["H1"]["products"][0]["quantity"] == 2
    metrics = VitaBenchEnv.benchmark_metrics([finished, {**finished, "vitabench_reward": 0.0}], k=2)["personalization"]
    assert metrics["subtask_num_units"] == 3 and metrics["subtask_average_at_n"]["1"] == pytest.approx(0.5 / 3)  # positions 0..2
    assert not any("not played" in reason for reason in env.leaderboard_departures())


def test_ota_subtask_fails_when_the_booking_is_wrong(path: Path) -> None:
    env = VitaBenchEnv(version=2, sequences_path=path)
    env.reset(options={"task_id": "U1001/2"})
    env.step(call("create_hotel_order", hotel_id="H2", room_id="R7", user_id="U1001"))
    info = run_oracle(env)  # the oracle books H1 as well, but the extra active order at H2 remains
    assert not info["vitabench_state"]["passed"] and info["vitabench_reward"] == 0.0
    assert any("unexpected new order" in p for p in info["vitabench_state"]["problems"])


def test_cross_domain_subtask_is_played_over_one_database(tmp_path: Path) -> None:
    """A ``delivery,ota`` subtask gets both domains' tools over one database; the oracle places the delivery
    order and the hotel booking, and both land in the one order table the state check reads."""
    records = tasks()
    subtask = records[0]["subtasks"][2]
    subtask["domain"] = "delivery,ota"
    subtask["environment"] = {**subtask["environment"], **delivery_environment("2025-03-10 09:00:00", "U1001", ["S1"])}
    lunch = criteria("S1", "P2", "")["expected_states"][0]["required_orders"][0]
    subtask["evaluation_criteria"]["expected_states"][0]["required_orders"].append(lunch)
    records[1]["subtasks"][0]["domain"] = "flights"  # no tools for that: not played, named as a departure
    target = tmp_path / "tasks.json"
    target.write_text(json.dumps(records), encoding="utf-8")
    env = VitaBenchEnv(version=2, sequences_path=target)
    assert "U1001/2" in env.task_ids() and env.unplayable == {"U2002/0": "no tools for the 'flights' domain"}
    assert any("1 subtask(s) are not played (no tools for their domain: flights)" in r for r in env.leaderboard_departures())
    env.reset(options={"task_id": "U1001/2"})
    assert {"create_delivery_order", "create_hotel_order", "weather"} <= set(env._vt.handlers)
    info = run_oracle(env)
    assert info["vitabench_state"]["passed"] and info["vitabench_reward"] == 1.0
    assert sorted(o["order_type"] for o in env._vt.db["orders"].values()) == ["delivery", "hotel"]
