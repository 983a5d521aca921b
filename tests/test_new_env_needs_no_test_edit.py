"""A tool env added at run time passes the generic suites with no test edit.

The env below is defined here, registered with ``register_entry`` as a package outside the suite
would register its own, and run through the same helpers the generic suites run on every
registered id: Gymnasium's ``check_env`` and the oracle with documented info keys
(``test_registration``), the generated-action fuzz and the oracle after hostile actions
(``reliability/test_fuzz_envs``), the hostile-input regressions (``reliability/test_hostile_actions``),
async vector workers (``test_vector``), and ``evaluate`` with the oracle agent, inline and in worker
processes. Everything those helpers need to know about the env comes from its own declarations
(``info_keys``, ``fixture_kwargs``, ``fixture_profile``). The id is unregistered afterwards.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym
import pytest

from agentgym_suite.core.fixture_profile import FixtureProfile
from agentgym_suite.core.tool_env import Conversation, ToolEnv
from agentgym_suite.evaluation import evaluate
from agentgym_suite.registration import EnvEntry, register_entry
from reliability.registered import cheap_kwargs, goes_on, is_tool_env, skip_unless_usable
from reliability.test_fuzz_envs import fuzz_registered, oracle_wins_after_hostile_actions
from reliability.test_hostile_actions import (
    STEP_LIMIT,
    numbers_over_the_conversion_limit_are_invalid,
    text_without_a_visible_character_is_refused,
)
from test_registration import check_contract, oracle_wins_with_documented_keys
from test_vector import plays_in_async_workers

PRICES = {"apple": 3, "pear": 5, "plum": 2}
TOOLS = [{"type": "function", "function": {
    "name": "get_price", "description": "The price of a fruit, in coins.",
    "parameters": {"type": "object", "properties": {"fruit": {"type": "string"}}, "required": ["fruit"]}}}]


class FruitPriceEnv(ToolEnv):
    """One task per fruit: look its price up with ``get_price``, then tell the user.

    Info keys (besides the shared ones of :mod:`agentgym_suite.core.info`):
        ``price_lookups``: int: calls to ``get_price`` so far.
        ``env_pid``: int: the process the env steps in (inline or a worker process).
    """

    benchmark = "fruit_prices"
    info_keys: ClassVar[dict[str, str]] = {
        "price_lookups": "int: calls to get_price so far.",
        "env_pid": "int: the process the env steps in (inline or a worker process).",
    }
    fixture_profile: ClassVar[FixtureProfile] = FixtureProfile(fuzz_examples=12, oracle_examples=10)

    def task_ids(self) -> list[str]:
        return sorted(PRICES)

    def _start_conversation(self, task_id: str) -> Conversation:
        self.fruit, self.reply = task_id, ""

        def get_price(fruit: str) -> dict[str, Any]:
            if fruit not in PRICES:
                return {"error": f"no fruit called {fruit!r}; try one of {sorted(PRICES)}"}
            return {"fruit": fruit, "price": PRICES[fruit]}

        question = f"How much does one {task_id} cost?"
        return Conversation(task=question, tools=TOOLS, handlers={"get_price": get_price}, first_user_message=question)

    def _user_reply(self, assistant_text: str) -> str | None:
        self.reply = assistant_text  # the answer ends the conversation
        return None

    def _evaluate(self) -> tuple[float, bool]:
        looked_up = any(r.ok and r.name == "get_price" for r in self.tool_log)
        won = looked_up and f"{PRICES[self.fruit]} coins" in self.reply
        return float(won), won

    def _extra_info(self) -> dict[str, Any]:
        return {"price_lookups": sum(r.name == "get_price" for r in self.tool_log), "env_pid": os.getpid()}

    def oracle(self) -> list[str]:
        """The lookup when no successful one was made yet, then the answer."""
        done = any(r.ok and r.name == "get_price" for r in self.tool_log)
        call = json.dumps({"name": "get_price", "arguments": {"fruit": self.fruit}})
        return ([] if done else [f"<tool_call>{call}</tool_call>"]) + [f"One {self.fruit} costs {PRICES[self.fruit]} coins."]


ENTRY = EnvEntry("ThrowawayFruitPrices-v0", f"{__name__}:FruitPriceEnv", 6, "a tool env registered by a test at run time")
ENV_ID = ENTRY.id


@pytest.fixture()
def registered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The env registered for one test (and unregistered after it), with a private cache and working directory."""
    assert ENV_ID not in gym.registry
    register_entry(ENTRY)
    monkeypatch.setenv("AGENTGYM_CACHE", str(tmp_path / "cache"))
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    try:
        yield ENV_ID
    finally:
        del gym.registry[ENV_ID]
    assert ENV_ID not in gym.registry


def test_a_tool_env_added_at_run_time_passes_the_generic_suites(registered: str, tmp_path: Path) -> None:
    skip_unless_usable(registered)  # usable: nothing missing, nothing skipped
    assert is_tool_env(registered)
    scratch = tmp_path / "fixtures"

    check_contract(registered, scratch)
    oracle_wins_with_documented_keys(registered, scratch, tasks=3)

    allowed = ((tmp_path / "cache").resolve(), scratch.resolve(), Path(tempfile.gettempdir()).resolve())
    env = gym.make(registered, **cheap_kwargs(registered, scratch))
    fuzz_registered(registered, env, allowed)
    env.close()
    env = gym.make(registered, **cheap_kwargs(registered, scratch), **goes_on(registered))
    oracle_wins_after_hostile_actions(registered, env, allowed)
    env.close()

    env = gym.make(registered, max_episode_steps=STEP_LIMIT, **cheap_kwargs(registered, scratch), **goes_on(registered))
    numbers_over_the_conversion_limit_are_invalid(env)
    text_without_a_visible_character_is_refused(env)
    env.close()

    plays_in_async_workers(registered, cheap_kwargs(registered, scratch))
    assert not list(Path.cwd().iterdir()), "the env wrote into the working directory"


def test_a_tool_env_added_at_run_time_is_evaluated_inline_and_in_worker_processes(registered: str, tmp_path: Path) -> None:
    runs = {}
    for workers in (1, 2):
        result = evaluate(registered, "oracle", out_dir=tmp_path / f"workers{workers}", episodes=3, seed=4,
                          env_workers=workers, batch_size=2, progress=False)
        assert result.summary["success_rate"] == 1.0 and result.ran == 3
        runs[workers] = result.records
    pids = {w: {turn.info["env_pid"] for t in records for turn in t.turns} for w, records in runs.items()}
    assert pids[1] == {os.getpid()} and os.getpid() not in pids[2]  # inline, then in worker processes

    def comparable(records: list) -> list[dict[str, Any]]:
        rows = [t.to_dict() for t in records]
        for row in rows:
            for key in ("wall_s", "policy_s"):
                row.pop(key, None)
            for info in [row.get("reset_info") or {}, *(turn.get("info") or {} for turn in row.get("turns", []))]:
                info.pop("env_pid", None)
        return sorted(rows, key=lambda row: json.dumps(row, sort_keys=True, default=str))

    assert comparable(runs[2]) == comparable(runs[1])
