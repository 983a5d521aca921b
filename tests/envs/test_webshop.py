"""WebShop-v0 on a synthetic catalogue in WebShop's file format."""

from __future__ import annotations

import warnings
from pathlib import Path

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import agentgym_suite  # noqa: F401  (registers the ids)
from agentgym_suite.core.errors import DataNotFoundError, UnknownTaskError
from agentgym_suite.envs.webshop import WebShopEnv
from agentgym_suite.envs.webshop.catalogue import load_catalogue
from agentgym_suite.envs.webshop.synthetic import write_synthetic_catalogue


@pytest.fixture(scope="module")
def catalogue_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("webshop")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AGENTGYM_CACHE", str(root / "cache"))
        path = write_synthetic_catalogue(root / "data")
        WebShopEnv(data_dir=path)  # prepares the noun sets into the temporary cache
    return path


@pytest.fixture
def env(catalogue_dir: Path) -> WebShopEnv:
    return WebShopEnv(data_dir=catalogue_dir)


def play(env: WebShopEnv, actions: list[str]) -> tuple[str, float, bool, dict]:
    observation, reward, terminated, info = "", 0.0, False, {}
    for action in actions:
        observation, reward, terminated, _, info = env.step(action)
    return observation, reward, terminated, info


def test_check_env_passes_with_warnings_as_errors(env: WebShopEnv) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env, skip_render_check=True)


def test_gym_make_uses_registration_and_step_limit(catalogue_dir: Path) -> None:
    made = gym.make("WebShop-v0", data_dir=catalogue_dir)
    assert made.spec is not None and made.spec.max_episode_steps == 15
    observation, info = made.reset(seed=3)
    assert observation.startswith("WebShop [SEP] Instruction:")
    assert info["admissible_actions"] == ["search[<your query>]"]


def test_oracle_replay_wins_every_fixture_task(env: WebShopEnv) -> None:
    assert len(env.task_ids()) >= 20
    for task_id in env.task_ids():
        env.reset(options={"task_id": task_id})
        plan = env.oracle()
        assert plan[0].startswith("search[") and plan[-1] == "click[buy now]"
        observation, reward, terminated, info = play(env, plan)
        assert terminated and info["won"] and info["score"] == 1.0 and reward == 1.0, (task_id, observation)
        assert info["purchased"]["asin"] == env.goal["asin"]
        assert "Thank you for shopping with us!" in observation


def test_success_reward_and_reward_scale(catalogue_dir: Path) -> None:
    seeded = WebShopEnv(data_dir=catalogue_dir, success_reward=10.0)
    seeded.reset(options={"task_id": "0"})
    _, reward, _, info = play(seeded, seeded.oracle())
    assert reward == 10.0 and info["score"] == 1.0
    scaled = WebShopEnv(data_dir=catalogue_dir, reward_scale=2.0)
    scaled.reset(options={"task_id": "0"})
    plan = [a for a in scaled.oracle() if a != "click[buy now]"][:-1] + ["click[buy now]"]  # skip the last option
    _, reward, _, info = play(scaled, plan)
    assert 0.0 < info["score"] < 1.0 and not info["won"]
    assert reward == pytest.approx(2.0 * info["score"])


def test_oracle_recovers_from_a_wrong_product(env: WebShopEnv) -> None:
    env.reset(options={"task_id": "1"})
    _, _, _, info = play(env, [env.oracle()[0]])
    wrong = next(a for a in info["admissible_actions"] if a.startswith("click[b0") and env.goal["asin"].lower() not in a)
    _, _, _, info = play(env, [wrong, "click[features]"])
    assert info["action_valid"]
    plan = env.oracle()
    assert plan[:2] == ["click[< prev]", "click[< prev]"]
    _, reward, terminated, info = play(env, plan)
    assert terminated and info["won"] and reward == 1.0


def test_wrong_product_scores_below_one(env: WebShopEnv) -> None:
    env.reset(options={"task_id": "2"})
    _, _, _, info = play(env, ["search[usb cable]"])
    gold = env.goal["asin"].lower()
    choice = next(a for a in info["admissible_actions"] if a.startswith("click[b0") and gold not in a)
    _, reward, terminated, info = play(env, [choice, "click[buy now]"])
    assert terminated and not info["won"] and info["score"] < 1.0 and reward == info["score"]


def test_pages_paging_and_navigation(env: WebShopEnv) -> None:
    env.reset(options={"task_id": "0"})
    observation, _, _, info = play(env, ["search[quality you can trust]"])
    assert "Page 1 (Total results: " in observation and "Next >" in observation
    assert "click[next >]" in info["admissible_actions"] and "click[< prev]" not in info["admissible_actions"]
    first_page = [a for a in info["admissible_actions"] if a.startswith("click[b0")]
    assert len(first_page) == 10
    observation, _, _, info = play(env, ["click[next >]"])
    assert "Page 2 (" in observation and "click[< prev]" in info["admissible_actions"]
    second_page = [a for a in info["admissible_actions"] if a.startswith("click[b0")]
    assert not set(first_page) & set(second_page)
    observation, _, _, info = play(env, [second_page[0]])
    assert "Buy Now" in observation and "click[description]" in info["admissible_actions"]
    option = next(a for a in info["admissible_actions"]
                  if a not in {"click[back to search]", "click[< prev]", "click[description]", "click[features]",
                               "click[reviews]", "click[buy now]"})
    observation, _, _, info = play(env, [option])
    assert "Selected options:" not in observation  # upstream's text mode does not show the choice
    for sub_page, marker in (("description", "made with care"), ("features", "quality you can trust"),
                             ("reviews", "would buy again")):
        observation, _, _, info = play(env, [f"click[{sub_page}]"])
        assert marker in observation and info["admissible_actions"] == ["click[back to search]", "click[< prev]"]
        observation, _, _, info = play(env, ["click[< prev]"])
        assert "Buy Now" in observation
    observation, _, _, info = play(env, ["click[< prev]"])
    assert "Page 2 (" in observation
    observation, _, _, info = play(env, ["click[back to search]"])
    assert observation.startswith("WebShop [SEP]") and info["admissible_actions"] == ["search[<your query>]"]


def test_search_only_on_the_search_page(env: WebShopEnv) -> None:
    env.reset(options={"task_id": "0"})
    before, _, _, _ = play(env, ["search[shampoo]"])
    observation, reward, terminated, info = play(env, ["search[desk lamp]"])
    assert not info["action_valid"] and not terminated and reward == 0.0
    assert "only search on the search page" in observation and before in observation


@pytest.mark.parametrize(
    ("action", "reason"),
    [
        ("click[", "search[your query]"),
        ("click[buy now]", "not clickable"),
        ("search[]", "empty"),
        ("search[" + "shoe " * 20_000 + "]", "characters long"),
        ("search[" + "shoe " * 150 + "]", "characters long"),
        ("buy it please", "search[your query]"),
        ("", "empty"),
    ],
)
def test_bad_actions_explain_and_keep_state(env: WebShopEnv, action: str, reason: str) -> None:
    first, _ = env.reset(options={"task_id": "0"})
    observation, reward, terminated, truncated, info = env.step(action)
    assert info["action_valid"] is False and reward == 0.0 and not terminated and not truncated
    assert reason in observation
    assert env.oracle()[0].startswith("search[")  # still on the search page


def test_unknown_element_on_results_page(env: WebShopEnv) -> None:
    env.reset(options={"task_id": "0"})
    play(env, ["search[shampoo]"])
    observation, _, _, info = play(env, ["click[B000NOSUCH]"])
    assert not info["action_valid"] and "not clickable" in observation and "back to search" in observation


def test_unknown_task_id_raises(env: WebShopEnv) -> None:
    with pytest.raises(UnknownTaskError, match="task_ids"):
        env.reset(options={"task_id": "99999"})


def test_same_seed_same_task(env: WebShopEnv) -> None:
    first, _ = env.reset(seed=11)
    second, _ = env.reset(seed=11)
    assert first == second


def test_missing_catalogue_names_variable_and_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(DataNotFoundError, match="items_shuffle_1000.json") as caught:
        WebShopEnv(data_dir=tmp_path)
    assert "AGENTGYM_DATA" in str(caught.value) and "agentgym data fetch webshop" in str(caught.value)
    monkeypatch.setenv("AGENTGYM_DATA", str(tmp_path))
    with pytest.raises(DataNotFoundError, match="agentgym data fetch webshop"):
        WebShopEnv()


def test_goals_are_deterministic_and_split(catalogue_dir: Path) -> None:
    first = load_catalogue(catalogue_dir)
    second = load_catalogue(catalogue_dir)
    assert [g["instruction_text"] for g in first.goals] == [g["instruction_text"] for g in second.goals]
    assert all("price lower than" in g["instruction_text"] for g in first.goals)
    assert all(first.prices[g["asin"]] <= g["price_upper"] for g in first.goals)
    test_env = WebShopEnv(data_dir=catalogue_dir, split="test")
    assert test_env.task_ids() == [str(i) for i in range(len(first.goals))]  # fewer than 500 goals
    assert WebShopEnv(data_dir=catalogue_dir, split="train").task_ids() == []
    with pytest.raises(ValueError, match="split"):
        WebShopEnv(data_dir=catalogue_dir, split="dev")


def test_synthetic_goals_oracle_wins(catalogue_dir: Path) -> None:
    env = WebShopEnv(data_dir=catalogue_dir, goals="synthetic")
    assert len(env.task_ids()) > 30
    for task_id in env.task_ids()[:8]:
        env.reset(options={"task_id": task_id})
        assert " with " in env.goal["instruction_text"]
        _, reward, terminated, info = play(env, env.oracle())
        assert terminated and info["won"] and reward == 1.0


def test_privileged_info_holds_gold_product(catalogue_dir: Path) -> None:
    env = WebShopEnv(data_dir=catalogue_dir, privileged=True)
    _, info = env.reset(options={"task_id": "3"})
    assert info["privileged"]["asin"] == env.goal["asin"]
    assert info["privileged"]["oracle"] == env.oracle()


def test_think_action_format_wraps_oracle(catalogue_dir: Path) -> None:
    env = WebShopEnv(data_dir=catalogue_dir, action_format="think_action")
    env.reset(options={"task_id": "4"})
    plan = env.oracle()
    assert all(a.startswith("<think>") and a.endswith("</action>") for a in plan)
    _, reward, terminated, info = play(env, plan)
    assert terminated and info["won"] and info["action_valid"]


def test_oracle_pages_to_a_gold_product_beyond_the_first_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    from agentgym_suite.envs.webshop.synthetic import build_synthetic_catalogue

    monkeypatch.setenv("AGENTGYM_CACHE", str(tmp_path / "cache"))
    products, attributes, human = [], {}, {}
    for seed in range(6):  # six copies of each product type: many hits per query
        part = build_synthetic_catalogue(seed)
        products += part["products"]
        attributes.update(part["attributes"])
        human.update(part["human"])
    for name, content in (("items_shuffle_1000.json", products), ("items_ins_v2_1000.json", attributes),
                          ("items_human_ins.json", human)):
        (tmp_path / name).write_text(json.dumps(content), encoding="utf-8")
    env = WebShopEnv(data_dir=tmp_path, split="all")
    paged = 0
    for task_id in env.task_ids()[:60]:
        env.reset(options={"task_id": task_id})
        plan = env.oracle()
        paged += "click[next >]" in plan
        _, reward, terminated, info = play(env, plan)
        assert terminated and info["won"] and reward == 1.0, task_id
    assert paged > 0


def test_selected_options_element_is_opt_in_and_declared(catalogue_dir: Path) -> None:
    shown = WebShopEnv(data_dir=catalogue_dir, show_selected_options=True)
    shown.reset(options={"task_id": "0"})
    plan = shown.oracle()
    option_clicks = [a for a in plan if a.startswith("click[") and a not in ("click[buy now]",)
                     and not a.startswith("click[b0")]
    observation, _, _, _ = play(shown, plan[:plan.index(option_clicks[-1]) + 1])
    assert "Selected options:" in observation
    assert any("Selected options" in reason for reason in shown.leaderboard_departures())
    assert WebShopEnv(data_dir=catalogue_dir).leaderboard_departures() == []


def test_heuristic_noun_tagger_is_a_declared_departure(catalogue_dir: Path) -> None:
    heuristic = WebShopEnv(data_dir=catalogue_dir, noun_tagger="heuristic")
    assert heuristic.catalogue.noun_tagger == "heuristic"
    assert any("spaCy" in reason for reason in heuristic.leaderboard_departures())
    with pytest.raises(ValueError, match="noun_tagger"):
        WebShopEnv(data_dir=catalogue_dir, noun_tagger="nltk")


def test_verl_agent_settings_pay_ten_for_a_win(catalogue_dir: Path) -> None:
    from agentgym_suite.envs.webshop.env import VERL_AGENT_SETTINGS

    made = gym.make("WebShop-v0", data_dir=catalogue_dir, **VERL_AGENT_SETTINGS)
    assert made.spec is not None and made.spec.max_episode_steps == 15
    made.reset(options={"task_id": "0"})
    observation, reward, terminated, info = play(made, made.unwrapped.oracle())
    assert terminated and info["won"] and reward == 10.0
