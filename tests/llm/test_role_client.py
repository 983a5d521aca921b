"""The role client's cache: deterministic keys, per-attempt replay, answers kept across a crash, several
processes at once, and hostile cache files refused or ignored, never silently used."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Sequence

import pytest

from agentgym_suite.evaluation.model_accounting import account, load_prices
from agentgym_suite.llm.base import Sample, SamplingParams
from agentgym_suite.llm.call_cache import CACHE_FILE, LEDGER_FILE, CacheError, CallCache, CallLedger
from agentgym_suite.llm.role_client import ModelCallSettings, ReplayMiss, RoleBackend, model_calls, model_id


class CountingBackend:
    """A fake model whose every answer is new (``answer <n>``), with usage; fails on prompts containing 'boom'."""

    name = "fake:counting"

    def __init__(self) -> None:
        self.asked: list[Any] = []

    def generate(self, prompts: Sequence[Any], params: SamplingParams, tools: Any = None) -> list[list[Sample]]:
        rows = []
        for prompt in prompts:
            if "boom" in json.dumps(prompt):
                raise RuntimeError("the server went away")
            self.asked.append(prompt)
            rows.append([Sample(text=f"answer {len(self.asked)}", has_token_ids=False,
                                usage={"prompt_tokens": 10, "completion_tokens": 3}) for _ in range(params.n)])
        return rows


def _settings(tmp_path: Path, **kwargs: Any) -> ModelCallSettings:
    return ModelCallSettings(cache_dir=tmp_path / "cache", ledger=tmp_path / "run" / LEDGER_FILE, **kwargs)


def _ask(backend: RoleBackend, text: str, **sampling: Any) -> str:
    return backend.generate([[{"role": "user", "content": text}]], SamplingParams(**sampling))[0][0].text


def test_same_call_is_answered_once_and_other_settings_are_other_calls(tmp_path: Path) -> None:
    model = CountingBackend()
    judge = RoleBackend("judge", model)
    with model_calls(_settings(tmp_path)):
        first = _ask(judge, "grade this", temperature=0.0, seed=1)
        assert _ask(judge, "grade this", temperature=0.0, seed=1) == first
        assert _ask(judge, "grade this", temperature=0.0, seed=2) != first  # the seed is in the key
        assert _ask(judge, "grade this", temperature=0.0, seed=1, max_new_tokens=9) != first
        assert _ask(RoleBackend("user", model), "grade this", temperature=0.0, seed=1) != first  # so is the role
    assert len(model.asked) == 4


def test_unseeded_sampling_is_cached_per_attempt_and_a_replay_replays(tmp_path: Path) -> None:
    model = CountingBackend()
    user = RoleBackend("user", model)
    with model_calls(_settings(tmp_path)):
        played = [_ask(user, "hi", temperature=1.0, seed=None) for _ in range(3)]
    assert len(set(played)) == 3  # three samples, not one answer repeated
    with model_calls(_settings(tmp_path)):
        replayed = [_ask(user, "hi", temperature=1.0, seed=None) for _ in range(3)]
        extra = _ask(user, "hi", temperature=1.0, seed=None)
    assert replayed == played and extra not in played
    assert len(model.asked) == 4


def test_paid_answers_survive_a_crash_and_resuming_asks_only_the_rest(tmp_path: Path) -> None:
    model = CountingBackend()
    judge = RoleBackend("judge", model)
    with model_calls(_settings(tmp_path)):
        paid = [_ask(judge, f"episode {i}", temperature=0.0) for i in range(2)]
        with pytest.raises(RuntimeError, match="went away"):
            _ask(judge, "episode 2 boom", temperature=0.0)
    assert len(CallCache(tmp_path / "cache")) == 2
    with model_calls(_settings(tmp_path)) as invocation:
        again = [_ask(judge, f"episode {i}", temperature=0.0) for i in range(3)]
    assert again[:2] == paid and len(model.asked) == 3
    ledger = account(tmp_path / "run", invocation)
    assert ledger["this_invocation"] == {"calls": 1, "cache_hits": 2}
    assert ledger["roles"]["judge"]["prompt_tokens"] == 30 and ledger["roles"]["judge"]["completion_tokens"] == 9


def test_failed_answers_are_not_cached(tmp_path: Path) -> None:
    class Failing(CountingBackend):
        def generate(self, prompts: Sequence[Any], params: SamplingParams, tools: Any = None) -> list[list[Sample]]:
            self.asked.extend(prompts)
            return [[Sample(text="", finish_reason="error", error="HTTP 500")] for _ in prompts]

    model = Failing()
    with model_calls(_settings(tmp_path)):
        for _ in range(2):
            assert RoleBackend("judge", model).generate(["x"], SamplingParams(temperature=0))[0][0].error == "HTTP 500"
    assert len(model.asked) == 2 and len(CallCache(tmp_path / "cache")) == 0


def test_replay_only_role_never_calls_the_model(tmp_path: Path) -> None:
    model = CountingBackend()
    with model_calls(_settings(tmp_path, replay_only=("user",))):
        with pytest.raises(ReplayMiss, match="--model-cache"):
            _ask(RoleBackend("user", model), "hi", temperature=0.0)
        assert _ask(RoleBackend("judge", model), "hi", temperature=0.0) == "answer 1"
    assert len(model.asked) == 1


def test_prices_give_a_cost_per_role_for_paid_calls_only(tmp_path: Path) -> None:
    prices_file = tmp_path / "prices.json"
    prices_file.write_text(json.dumps({"counting": {"prompt": 2.0, "completion": 10.0}}))
    prices = load_prices(prices_file)
    model = CountingBackend()
    with model_calls(_settings(tmp_path)) as invocation:
        _ask(RoleBackend("judge", model), "a", temperature=0.0)
        _ask(RoleBackend("judge", model), "a", temperature=0.0)  # a hit costs nothing
        _ask(RoleBackend("user", CountingBackend()), "a", temperature=0.0)
    summary = account(tmp_path / "run", invocation, prices)
    assert summary["roles"]["judge"]["cost"] == pytest.approx((10 * 2.0 + 3 * 10.0) / 1e6)
    assert summary["total"]["cost"] == pytest.approx(2 * (10 * 2.0 + 3 * 10.0) / 1e6)
    assert summary["roles"]["judge"]["calls"] == 1 and summary["roles"]["judge"]["cache_hits"] == 1
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"m": {"prompt": 1}}))
    with pytest.raises(ValueError, match="'completion'"):
        load_prices(bad)


def test_model_id_drops_client_options_and_prefix() -> None:
    assert model_id("llm:openai:m@http://h:1/v1?timeout=5&concurrency=2") == "openai:m@http://h:1/v1"


WRITER = textwrap.dedent("""
    import json, sys
    from agentgym_suite.llm.call_cache import CallCache, CallLedger
    cache, ledger = CallCache(sys.argv[1]), CallLedger(sys.argv[2])
    name, got = sys.argv[3], {}
    for i in range(150):
        key = f"shared-{i}" if i % 2 else f"{name}-{i}"
        got[key] = cache.put(key, "judge", "m", [{"text": f"{name} {i}"}])[0]["text"]
        ledger.record("inv", "judge", "m", cached=False, prompt_tokens=1, completion_tokens=1, wall_s=0.0)
    print(json.dumps(got))
""")


def test_two_processes_writing_at_once_lose_and_corrupt_nothing(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2]), os.environ.get("PYTHONPATH", "")])}
    cache, ledger = tmp_path / "cache", tmp_path / LEDGER_FILE
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(cache), str(ledger), name], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for name in ("a", "b")]
    outputs = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        outputs.append(json.loads(out))
    store = CallCache(cache)
    assert len(store) == 75 + 75 + 75  # each process's own keys and the shared ones, once
    for key in set(outputs[0]) | set(outputs[1]):
        assert store.get(key) is not None
    for key in set(outputs[0]) & set(outputs[1]):  # a shared key: both processes got the first writer's answer
        assert outputs[0][key] == outputs[1][key] == store.get(key)[0]["text"]  # type: ignore[index]
    assert len(CallLedger(ledger).rows()) == 300
    with sqlite3.connect(cache / CACHE_FILE) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def _filled_cache(tmp_path: Path) -> Path:
    model = CountingBackend()
    with model_calls(_settings(tmp_path)):
        for i in range(50):
            _ask(RoleBackend("judge", model), f"transcript {i} " + "x" * 200, temperature=0.0)
    return tmp_path / "cache" / CACHE_FILE


def test_a_truncated_cache_file_is_refused_with_what_to_do(tmp_path: Path) -> None:
    path = _filled_cache(tmp_path)
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])
    with pytest.raises(CacheError, match="not a usable .*--model-cache"):
        with model_calls(_settings(tmp_path)):
            pass


def test_a_file_that_is_not_a_cache_is_refused(tmp_path: Path) -> None:
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / CACHE_FILE).write_text("these are my notes, not a database\n" * 100)
    with pytest.raises(CacheError, match="not a usable"):
        with model_calls(_settings(tmp_path)):
            pass
    other = tmp_path / "other"
    other.mkdir()
    with sqlite3.connect(other / CACHE_FILE) as conn:
        conn.execute("CREATE TABLE answers (key TEXT)")
    with pytest.raises(CacheError, match="no agentgym-suite model cache header"):
        CallCache(other).connection()


def test_a_cache_of_another_schema_version_is_refused(tmp_path: Path) -> None:
    path = _filled_cache(tmp_path)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = '999' WHERE name = 'schema_version'")
    with pytest.raises(CacheError, match="schema version '999'"):
        with model_calls(_settings(tmp_path)):
            pass


def test_a_row_from_another_version_or_tampered_is_never_used(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = _filled_cache(tmp_path)
    with sqlite3.connect(path) as conn:
        keys = [row[0] for row in conn.execute("SELECT key FROM answers ORDER BY key LIMIT 2")]
        conn.execute("UPDATE answers SET version = 0 WHERE key = ?", (keys[0],))
        conn.execute("UPDATE answers SET payload = '[{\"text\": \"forged\"}]' WHERE key = ?", (keys[1],))
    store = CallCache(tmp_path / "cache")
    assert store.get(keys[0]) is None and store.get(keys[1]) is None
    assert "another version or damaged" in caplog.text
    replaced = store.put(keys[1], "judge", "m", [{"text": "fresh"}])
    assert replaced == [{"text": "fresh"}] and store.get(keys[1]) == [{"text": "fresh"}]
