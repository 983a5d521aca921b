"""BFCL-v0 agentic categories (web search on the local corpus, memory on bfcl-eval's backends) and
bfcl-eval's prompts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("bfcl_eval")

import bfcl_eval.constants.default_prompts as upstream_prompts  # noqa: E402

from agentgym_suite.envs.bfcl import BFCLEnv, data  # noqa: E402
from agentgym_suite.envs.bfcl.agentic import check_answer, final_answer_text  # noqa: E402
from agentgym_suite.core.tool_calls import ToolCall, ToolCallError  # noqa: E402
from agentgym_suite.envs.bfcl.memory import memory_available  # noqa: E402
from agentgym_suite.envs.bfcl.prompting_decoder import decode_call_list  # noqa: E402
from agentgym_suite.envs.bfcl.prompts import PYTHON_HINT  # noqa: E402
from agentgym_suite.envs.bfcl.web_search import LocalWebSearchAPI, canonical_url, load_corpus  # noqa: E402

needs_kv = pytest.mark.skipif(not memory_available("memory_kv"), reason="rank_bm25/overrides not installed")


def call(name: str, **arguments: object) -> str:
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": arguments}) + "\n</tool_call>"


def play(env: BFCLEnv, actions: list[str]) -> dict:
    info: dict = {}
    for action in actions:
        _, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    return info


# ---------------------------------------------------------------------------- web search
@pytest.mark.parametrize("category", ["web_search_base", "web_search_no_snippet"])
def test_web_search_oracle_searches_and_wins(category: str) -> None:
    env = BFCLEnv(category=category)
    assert env.task_ids()[0] == f"{category}_0"  # bfcl-eval's ids for the two categories
    for task_id in env.task_ids()[:6]:
        _, info = env.reset(options={"task_id": task_id})
        info = play(env, env.oracle())
        assert info["won"] and info["bfcl_check"]["passed"], (task_id, info["bfcl_check"])
        assert any(m.get("role") == "tool" for m in info["messages"])  # it searched before answering


def test_snippets_only_in_the_base_category() -> None:
    corpus = load_corpus()
    base, bare = LocalWebSearchAPI(corpus), LocalWebSearchAPI(corpus)
    base._load_scenario({"show_snippet": True})
    bare._load_scenario({"show_snippet": False})
    with_body = base.search_engine_query("Most expensive tea in the world", max_results=3)
    without = bare.search_engine_query("Most expensive tea in the world", max_results=3)
    assert len(with_body) == 3 and set(with_body[0]) == {"title", "href", "body"}
    assert "DaHong Pao" in with_body[0]["body"]
    assert set(without[0]) == {"title", "href"} and without[0]["href"] == with_body[0]["href"]


def test_every_cited_hop_is_found_by_its_own_question() -> None:
    corpus = load_corpus()
    records = data.load_answer_records("web_search_base")
    hops = [hop for record in records.values() for hop in record["source"]]
    found = sum(any(canonical_url(p.href) == canonical_url(hop["source"]) for p in corpus.search(hop["subquestion"], 10))
                for hop in hops)
    assert len(hops) > 250 and found == len(hops)


def test_fetch_url_content_modes_and_errors() -> None:
    api = LocalWebSearchAPI(load_corpus())
    url = "https://en.wikipedia.org/wiki/Da_Hong_Pao#:~:text=Da%20Hong%20Pao%20(Big%20Red"
    assert "China" in api.fetch_url_content(url, mode="truncate")["content"]
    assert api.fetch_url_content(url)["content"].startswith("<html>")
    assert api.fetch_url_content(url, mode="markdown")["content"].startswith("# ")
    assert "404" in api.fetch_url_content("https://example.org/nowhere")["error"]
    assert "Unsupported mode" in api.fetch_url_content(url, mode="pdf")["error"]
    with pytest.raises(ValueError, match="Invalid URL"):
        api.fetch_url_content("file:///etc/passwd")


def test_web_search_prompt_is_bfcl_evals_answer_format() -> None:
    env = BFCLEnv(category="web_search_base")
    _, info = env.reset(options={"task_id": "web_search_base_1"})
    system, user = info["messages"][0], info["messages"][1]
    assert system == {"role": "system", "content": upstream_prompts.ADDITIONAL_SYSTEM_PROMPT_FOR_AGENTIC_RESPONSE_FORMAT}
    assert user["role"] == "user" and "Super Bowl" in user["content"]
    assert {t["function"]["name"] for t in info["tools"]} == {"search_engine_query", "fetch_url_content"}


@pytest.mark.parametrize("reply, won", [
    ("{'answer': '7', 'context': 'seven wins'}", True),
    ("<think>maybe 9</think>The Cowboys won seven games.", True),
    ("{'answer': 'I do not know', 'context': 'I do not know'}", False),
    ("They won 17 games.", False),  # bfcl-eval matches whole words only
])
def test_final_reply_is_checked_with_bfcl_evals_agentic_checker(reply: str, won: bool) -> None:
    env = BFCLEnv(category="web_search_base")
    env.reset(options={"task_id": "web_search_base_1"})  # expected: "7" or "seven"
    _, reward, terminated, _, info = env.step(reply)
    assert terminated and info["won"] is won and reward == float(won)
    assert check_answer(reply, ["7", "seven"])[0] is won
    assert final_answer_text("<think>x</think> y") == "y"


def test_step_limit_of_a_turn_fails_the_question() -> None:
    env = BFCLEnv(category="web_search_base")
    env.reset(options={"task_id": "web_search_base_0"})
    limit = upstream_prompts.MAXIMUM_STEP_LIMIT
    info = play(env, [call("search_engine_query", keywords="tea")] * (limit + 5))
    assert info["turn"] == limit + 1 and not info["won"]
    assert "stopped after" in info["bfcl_check"]["reason"]


# ---------------------------------------------------------------------------- memory
@needs_kv
def test_memory_prereqs_write_memory_and_the_question_reads_it(tmp_path: Path) -> None:
    env = BFCLEnv(category="memory_kv", memory_dir=tmp_path)
    task_id = "memory_kv_0-customer-0"  # "What is my first name?" -> Michael
    _, info = env.reset(options={"task_id": task_id})
    prereqs = data.load_memory_prereqs("memory_kv", "customer")
    assert info["bfcl_memory_phase"] == "prereq" and info["bfcl_memory_prereqs_left"] == len(prereqs)
    first_prompt = info["prompt_messages"]
    assert first_prompt[0]["content"].startswith(upstream_prompts.MEMORY_AGENT_SETTINGS["customer"])
    assert "There is no content in the core memory" in first_prompt[0]["content"]
    assert first_prompt[1] == {"role": "user", "content": prereqs[0]["question"][0][0]["content"]}
    obs, _, _, _, info = env.step(call("core_memory_add", key="user_first_name", value="Michael"))
    assert "Key-value pair added" in obs
    assert info["prompt_messages"][2]["content"].startswith("<tool_call>")  # the model's raw text is its turn
    while info["bfcl_memory_phase"] == "prereq":
        _, _, _, _, info = env.step("Thanks, noted.")
    # the question starts a fresh context: the memory prompt (core memory shown) and the question only
    prompt = info["prompt_messages"]
    assert [m["role"] for m in prompt] == ["system", "user"] and prompt[1]["content"] == "What is my first name?"
    assert '"user_first_name": "Michael"' in prompt[0]["content"]
    assert prompt[0]["content"].endswith(upstream_prompts.ADDITIONAL_SYSTEM_PROMPT_FOR_AGENTIC_RESPONSE_FORMAT)
    snapshots = list(tmp_path.rglob("customer_final.json"))
    assert len(snapshots) == 1 and "Michael" in snapshots[0].read_text()
    assert len(list(tmp_path.rglob("prereq_checkpoints/*.json"))) == len(prereqs)
    obs, _, _, _, info = env.step(call("core_memory_retrieve", key="user_first_name"))
    assert "Michael" in obs
    _, reward, terminated, _, info = env.step("{'answer': 'Michael', 'context': 'from memory'}")
    assert terminated and reward == 1.0 and info["won"]
    # another env on the same memory folder goes straight to the question, with the same memory
    other = BFCLEnv(category="memory_kv", memory_dir=tmp_path)
    _, info = other.reset(options={"task_id": "memory_kv_1-customer-1"})
    assert info["bfcl_memory_phase"] == "question" and info["bfcl_memory_prereqs_left"] == 0
    assert "Michael" in info["prompt_messages"][0]["content"]
    other.close()
    assert tmp_path.exists()  # a given folder is kept


@needs_kv
def test_memory_without_writing_forgets_and_the_own_folder_is_removed() -> None:
    env = BFCLEnv(category="memory_kv")
    _, info = env.reset(options={"task_id": "memory_kv_0-customer-0"})
    folder = env.memory_dir
    info = play(env, ["Okay."] * (info["bfcl_memory_prereqs_left"] * 20))
    assert info["bfcl_memory_phase"] == "question" and not info.get("won")
    assert "There is no content in the core memory" in info["prompt_messages"][0]["content"]
    env.close()
    assert not folder.exists()


@pytest.mark.skipif(not memory_available("memory_rec_sum"), reason="overrides not installed")
def test_rec_sum_memory_uses_the_unified_prompt(tmp_path: Path) -> None:
    env = BFCLEnv(category="memory_rec_sum", memory_dir=tmp_path)
    _, info = env.reset(options={"task_id": "memory_rec_sum_0-customer-0"})
    assert "consisting of two memory types" not in info["prompt_messages"][0]["content"]
    env.step(call("memory_append", text="The user's first name is Michael."))
    while info.get("bfcl_memory_phase") == "prereq" or "bfcl_memory_phase" not in info:
        _, _, _, _, info = env.step("Noted.")
    assert "first name is Michael" in info["prompt_messages"][0]["content"]


def test_memory_categories_are_named_as_upstream() -> None:
    for category in data.MEMORY:
        ids = list(data.load_questions(category))
        assert len(ids) == 155 and ids[0] == f"{category}_0-customer-0"
        assert data.load_memory_prereqs(category, "student")[0]["id"] == f"{category}_prereq_22-student-0"
    with pytest.raises(ValueError, match="memory_kv"):
        BFCLEnv(category="memory")


@pytest.mark.slow
@pytest.mark.skipif(not memory_available("memory_vector"), reason="faiss-cpu / packaged MiniLM weights not installed")
def test_vector_memory_runs_offline_with_the_packaged_encoder(tmp_path: Path) -> None:
    env = BFCLEnv(category="memory_vector", memory_dir=tmp_path)
    env.reset(options={"task_id": "memory_vector_0-customer-0"})
    env.step(call("archival_memory_add", text="The user's first name is Michael."))
    obs, _, _, _, _ = env.step(call("archival_memory_retrieve", query="What is the user's name?"))
    assert "Michael" in obs


# ---------------------------------------------------------------------------- prompts
def test_fc_style_adds_no_system_text_of_its_own() -> None:
    env = BFCLEnv(category="simple")
    _, info = env.reset(options={"task_id": "simple_python_0"})
    assert [m["role"] for m in info["messages"]] == ["user"]
    env = BFCLEnv(category="base")
    _, info = env.reset(options={"task_id": "multi_turn_base_0"})
    assert [m["role"] for m in info["messages"]] == ["user"]
    assert all(t["function"]["description"].endswith(PYTHON_HINT) for t in info["tools"])


def test_prompting_style_uses_bfcl_evals_default_system_prompt_and_call_lists() -> None:
    env = BFCLEnv(category="base", system_prompt="prompting")
    _, info = env.reset(options={"task_id": "multi_turn_base_0"})
    system = info["messages"][0]["content"]
    template = upstream_prompts.PROMPT_STYLE_TEMPLATES["classic"]
    assert system.startswith(template["persona"] + template["task"])
    assert upstream_prompts.OUTPUT_FORMAT_MAPPING["python"] in system and '"name": "cd"' in system
    obs, _, _, _, info = env.step("[cd(folder='document')]")
    assert info["action_valid"] and "document" in obs and info["messages"][-2]["tool_calls"][0]["function"]["name"] == "cd"
    assert decode_call_list("[a.b(x=1), c(y=[1, 2])]") == [ToolCall("a.b", {"x": 1}, id="call_0"),
                                                          ToolCall("c", {"y": [1, 2]}, id="call_1")]
    assert decode_call_list("I moved it.") is None
    # bfcl-eval reads a call without keywords as its source text: nothing is run
    assert decode_call_list("[f(x=open('a'))]") == [ToolCall("f", {"x": "open('a')"}, id="call_0")]
    for text in ["[f(1)]", "[__import__('os').system('ls')]", "[f(**{'a': 1})]"]:
        [refused] = decode_call_list(text)
        assert isinstance(refused, ToolCallError) and refused.message, text
    with pytest.raises(ValueError, match="prompting"):
        BFCLEnv(category="base", system_prompt="chatty")


def test_held_out_functions_are_announced_with_bfcl_evals_message() -> None:
    env = BFCLEnv(category="miss_func")
    env.reset(options={"task_id": "multi_turn_miss_func_0"})
    info = play(env, env.oracle()[:5])
    assert info["messages"][-1] == {"role": "user", "content": upstream_prompts.DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC}


class PinnedAnswerSearch:
    """A user-supplied web-search backend: bfcl-eval's two functions, one fixed page."""

    def __init__(self) -> None:
        self.show_snippet = True

    def _load_scenario(self, initial_config: dict, long_context: bool = False) -> None:
        self.show_snippet = bool(initial_config.get("show_snippet", True))

    def search_engine_query(self, keywords: str, max_results: int = 10, region: str = "wt-wt") -> list[dict]:
        return [{"title": "Pinned", "href": "https://pinned.example/", "body": f"pinned result for {keywords}"}]

    def fetch_url_content(self, url: str, mode: str = "raw") -> dict:
        return {"content": "pinned page"}


def test_web_search_backend_is_pluggable_and_labelled(monkeypatch: pytest.MonkeyPatch) -> None:
    local = BFCLEnv(category="web_search_base")
    assert local.web_search_backend == "local"
    assert len(local.leaderboard_departures()) == 1 and "local corpus" in local.leaderboard_departures()[0]
    assert BFCLEnv(category="simple").leaderboard_departures() == []

    custom = BFCLEnv(category="web_search_base", web_search_backend=f"{__name__}:PinnedAnswerSearch")
    assert "PinnedAnswerSearch" in custom.leaderboard_departures()[0]
    custom.reset(options={"task_id": custom.task_ids()[0]})
    obs, *_ = custom.step(call("search_engine_query", keywords="tallest tower"))
    assert "pinned result for tallest tower" in obs

    monkeypatch.setenv("AGENTGYM_BFCL_WEB_SEARCH", "serpapi")
    monkeypatch.delenv("SERPAPI_API_KEY", raising=False)
    live = BFCLEnv(category="web_search_no_snippet")
    assert live.web_search_backend == "serpapi" and live.leaderboard_departures() == []
    with pytest.raises(ValueError, match="SERPAPI_API_KEY"):
        live.reset(options={"task_id": live.task_ids()[0]})
    with pytest.raises(ValueError, match="choose local or serpapi"):
        BFCLEnv(category="web_search_base", web_search_backend="bing")
