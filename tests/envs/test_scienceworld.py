"""ScienceWorld-v0: contract, oracle replay, bad actions, seeding and JVM fault tolerance."""

from __future__ import annotations

import os
import signal
import warnings

import gymnasium as gym
import pytest

pytest.importorskip("scienceworld")

import agentgym_suite  # noqa: E402,F401  (registers the ids)
from agentgym_suite.core.errors import UnknownTaskError  # noqa: E402
from agentgym_suite.envs.scienceworld.backend import JavaNotFoundError, find_java  # noqa: E402
from agentgym_suite.envs.scienceworld.env import ScienceWorldEnv  # noqa: E402
from agentgym_suite.envs.scienceworld.tasks import TASKS, find_task, select_tasks  # noqa: E402

from .oracle import play_oracle  # noqa: E402


def _has_java() -> bool:
    try:
        find_java()
    except JavaNotFoundError:
        return False
    return True


needs_java = pytest.mark.skipif(not _has_java(), reason="no Java runtime (apt-get install -y default-jre-headless)")

QUICK_TASKS = ("find-living-thing/0", "lifespan-longest-lived/0", "power-component/0")


def replay_oracle(env: ScienceWorldEnv, task_id: str) -> tuple[float, dict]:
    """Play ``task_id``'s gold plan (the oracle's plan at reset); (return, last info)."""
    played = play_oracle(env, task_id, 400, plan_at_reset=True, check=False)
    return played.total, played.info


@pytest.fixture(scope="module")
def env():
    """One env (one JVM) shared by the module's Java tests: all tasks, split=all, no admissible list."""
    instance = ScienceWorldEnv(task="all", split="all", max_admissible=None)
    yield instance
    instance.close()


# ---------------------------------------------------------------------------- no JVM needed
def test_task_ids_follow_the_simulator_splits() -> None:
    train = ScienceWorldEnv(task="boil", split="train").task_ids()
    dev = ScienceWorldEnv(task="boil", split="dev").task_ids()
    test = ScienceWorldEnv(task="boil", split="test").task_ids()
    assert train[:2] == ["boil/0", "boil/1"]
    assert (len(train), len(dev), len(test)) == (14, 7, 9)
    assert not set(train) & set(dev) and not set(dev) & set(test)
    assert len(ScienceWorldEnv(task="all", split="test").task_ids()) == sum(len(t.variations_of("test")) for t in TASKS)


def test_task_kwarg_accepts_names_numbers_indices_and_lists() -> None:
    assert find_task("boil") is find_task("1-1") is find_task(0) is TASKS[0]
    assert [t.name for t in select_tasks(["4-1", 24, "melt", "melt"])] == ["find-living-thing", "identify-life-stages-2", "melt"]
    assert len(select_tasks("all")) == 30


def test_unknown_task_and_bad_kwargs_raise_clear_errors() -> None:
    with pytest.raises(UnknownTaskError, match="find-plant"):
        ScienceWorldEnv(task="find-plants")
    with pytest.raises(UnknownTaskError, match="out of range"):
        ScienceWorldEnv(task=30)
    env = ScienceWorldEnv(task="boil", split="train")
    with pytest.raises(UnknownTaskError, match="boil/20"):  # dev variation, not in the train split
        env.reset(options={"task_id": "boil/20"})
    with pytest.raises(ValueError, match="split"):
        ScienceWorldEnv(split="validation")
    with pytest.raises(ValueError, match="simplification"):
        ScienceWorldEnv(simplification="easy,fast")
    with pytest.raises(ValueError, match="noElectricalAction"):
        ScienceWorldEnv(task="power-component", simplification="noElectricalAction")
    assert env.jvm_pid is None  # none of this started Java


def test_missing_java_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("JAVA_HOME", raising=False)
    env = ScienceWorldEnv(task="boil")
    with pytest.raises(JavaNotFoundError, match="apt-get install -y default-jre-headless"):
        env.reset(seed=0)


def test_gym_make_does_not_start_java() -> None:
    made = gym.make("ScienceWorld-v0", task="boil")
    assert made.unwrapped.jvm_pid is None
    made.close()


# ---------------------------------------------------------------------------- with a JVM
@pytest.mark.java
@needs_java
def test_check_env_passes_without_warnings() -> None:
    """check_env's seeding checks compare reloads of one task; before the JVM ran with
    deterministic identity hashes they failed in about 2 of 5 runs, so the check runs 3 times."""
    from gymnasium.utils.env_checker import check_env

    instance = ScienceWorldEnv(task="find-plant", max_admissible=None)
    try:
        for _ in range(3):
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                check_env(instance, skip_render_check=True)
    finally:
        instance.close()


@pytest.mark.java
@needs_java
def test_reloading_a_variation_gives_the_same_world() -> None:
    """Objects of one name (find-plant's three wood cups) used to be listed in the order of the
    JVM's identity hashes, which changed from load to load (5-6 of 7 reloads of these two
    variations differed); the simulator's own RNG is reseeded from the variation at every load
    (PythonInterface.doLoad: Random.setSeed(variationIdx))."""
    env = ScienceWorldEnv(task="find-plant", split="all", max_admissible=None)
    try:
        first: dict[str, str] = {}
        for _ in range(6):
            for task_id in ("find-plant/1", "find-plant/14"):
                observation, _ = env.reset(options={"task_id": task_id})
                assert observation == first.setdefault(task_id, observation), task_id
        assert first["find-plant/1"].count("a wood cup") == 3
    finally:
        env.close()


@pytest.mark.java
@needs_java
@pytest.mark.parametrize("task_id", QUICK_TASKS)
def test_oracle_replay_wins(env: ScienceWorldEnv, task_id: str) -> None:
    total, info = replay_oracle(env, task_id)
    assert info["won"] is True
    assert info["score"] == 1.0 and info["scienceworld_score"] == 100
    assert total == pytest.approx(1.0)


@pytest.mark.java
@needs_java
def test_oracle_continues_from_the_current_state(env: ScienceWorldEnv) -> None:
    env.reset(options={"task_id": "find-living-thing/3"})
    full = env.oracle()
    env.step("look around")  # a free action: still on the gold path
    env.step(full[0])
    rest = env.oracle()
    assert rest == full[1:]
    info: dict = {}
    for action in rest:
        _, _, terminated, _, info = env.step(action)
    assert terminated and info["won"] and info["off_gold_path"] is False


@pytest.mark.java
@needs_java
def test_reset_observation_and_admissible_actions(env: ScienceWorldEnv) -> None:
    env.max_admissible = 40
    try:
        observation, info = env.reset(options={"task_id": "find-plant/0"})
        _, _, _, _, step_info = env.step(info["admissible_actions"][0])
    finally:
        env.max_admissible = None
    assert observation.startswith(info["task"]) and "This room is called" in observation
    actions = info["admissible_actions"]
    assert 0 < len(actions) <= 40 and "look around" in actions
    assert len(set(actions)) == len(actions) and "reset task" not in actions
    assert step_info["action_valid"] is True and 0 < len(step_info["admissible_actions"]) <= 40


@pytest.mark.java
@needs_java
@pytest.mark.parametrize("action", ["", "x" * 100_000, "xyzzy plugh the frobnicator", "   ", "<action>"])
def test_bad_actions_explain_and_never_raise(env: ScienceWorldEnv, action: str) -> None:
    env.reset(options={"task_id": "find-animal/1"})
    observation, reward, terminated, truncated, info = env.step(action)
    assert info["action_valid"] is False
    assert observation.strip() and reward == 0.0 and not terminated and not truncated
    assert "Invalid action" in observation or "No known action matches" in observation
    _, _, _, _, after = env.step("look around")  # the episode goes on
    assert after["action_valid"] is True


@pytest.mark.java
@needs_java
@pytest.mark.parametrize("invalid_action", ["explain", "forward_tail"])
def test_unencodable_text_never_reaches_the_simulator(env: ScienceWorldEnv, invalid_action: str) -> None:
    """A lone surrogate ('go \\ud800 north') once killed the JVM: py4j could not encode it, the
    JVM was restarted (5 s) and the episode was lost. It is an invalid action, the same JVM
    answers the next step, and the oracle still wins."""
    env.invalid_action = invalid_action
    try:
        env.reset(options={"task_id": "find-living-thing/3"})
        jvm = env.jvm_pid
        env.step(env.oracle()[0])
        for action in ["go \ud800 north", "\udfff", "look around \udc80", "<action>focus on \ud83d</action>"]:
            observation, reward, terminated, truncated, info = env.step(action)
            assert info["action_valid"] is False and "surrogate" in observation
            assert (reward, terminated, truncated) == (0.0, False, False) and "error" not in info
        assert env.jvm_pid == jvm, "the simulator must not have been restarted"
        info = {}
        for action in env.oracle():
            _, _, terminated, _, info = env.step(action)
        assert terminated and info["won"]
    finally:
        env.invalid_action = "explain"


@pytest.mark.java
@needs_java
def test_reset_task_is_refused_and_the_oracle_still_wins(env: ScienceWorldEnv) -> None:
    """``reset task`` zeroed the simulator's score and focus while the world kept its changes, so
    the episode's score went back and the oracle could no longer win."""
    env.reset(options={"task_id": "find-living-thing/3"})
    plan = env.oracle()
    info: dict = {}
    for action in plan[:3]:
        _, _, _, _, info = env.step(action)
    score = info["score"]
    assert score > 0
    for command in ["reset task", "RESET TASK", "  reset   task "]:
        observation, reward, terminated, truncated, info = env.step(command)
        assert info["action_valid"] is False and "reset the task" in observation
        assert (reward, terminated, truncated, info["score"]) == (0.0, False, False, score)
    assert env.oracle() == plan[3:]
    for action in plan[3:]:
        _, _, terminated, _, info = env.step(action)
    assert terminated and info["won"]


@pytest.mark.java
@needs_java
def test_wrong_focus_fails_the_task(env: ScienceWorldEnv) -> None:
    env.reset(options={"task_id": "find-living-thing/0"})
    _, reward, terminated, truncated, info = env.step("focus on agent")
    assert terminated and not truncated
    assert info["won"] is False and info["scienceworld_score"] < 0 and info["score"] == 0.0 and reward == 0.0


@pytest.mark.java
@needs_java
def test_same_seed_same_episode() -> None:
    env = ScienceWorldEnv(task=["find-plant", "lifespan-longest-lived"], split="dev", max_admissible=None)

    def episode(seed: int) -> list:
        observation, info = env.reset(seed=seed)
        trace = [info["task_id"], observation]
        for action in ("open door to kitchen", "go to kitchen", "look around"):
            observation, reward, _, _, info = env.step(action)
            trace += [observation, reward]
        return trace

    try:
        first = episode(7)
        assert episode(7) == first
        assert episode(8)[0] != first[0]
    finally:
        env.close()


@pytest.mark.java
@needs_java
def test_killed_jvm_truncates_the_episode_and_reset_recovers() -> None:
    instance = ScienceWorldEnv(task="find-living-thing", max_admissible=None)
    try:
        instance.reset(options={"task_id": "find-living-thing/0"})
        instance.step("look around")
        pid = instance.jvm_pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        observation, reward, terminated, truncated, info = instance.step("open door to greenhouse")
        assert truncated and not terminated and reward == 0.0
        assert "error" in info and "JVM" in info["error"] and "reset()" in observation
        _, _, _, truncated_again, info_again = instance.step("look around")  # stays broken until reset
        assert truncated_again and "error" in info_again
        _, info = instance.reset(options={"task_id": "find-living-thing/0"})
        assert instance.jvm_pid not in (None, pid) and info["turn"] == 0
        _, _, _, truncated, info = instance.step("open door to greenhouse")
        assert not truncated and "error" not in info and info["action_valid"] is True
    finally:
        instance.close()
    assert instance.jvm_pid is None


@pytest.mark.java
@needs_java
def test_hung_jvm_times_out_and_is_replaced() -> None:
    instance = ScienceWorldEnv(task="find-plant", max_admissible=None, step_timeout=2.0)
    try:
        instance.reset(options={"task_id": "find-plant/0"})
        pid = instance.jvm_pid
        assert pid is not None
        os.kill(pid, signal.SIGSTOP)  # the JVM stops answering
        _, _, terminated, truncated, info = instance.step("look around")
        assert truncated and not terminated and "within 2 s" in info["error"]
        assert not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split()[2] == "Z"
        _, info = instance.reset(options={"task_id": "find-plant/0"})
        assert instance.jvm_pid not in (None, pid) and info["turn"] == 0
        _, _, _, truncated, info = instance.step("look around")
        assert not truncated and info["action_valid"] is True
    finally:
        instance.close()


@pytest.mark.java
@needs_java
def test_split_table_matches_the_simulator(env: ScienceWorldEnv) -> None:
    env.reset(options={"task_id": "boil/0"})
    for name in ("boil", "identify-life-stages-2", "inclined-plane-friction-unnamed-surfaces"):
        _assert_split_matches(env, name)


@pytest.mark.java
@needs_java
def test_easy_simplification_loads_an_electrical_task() -> None:
    instance = ScienceWorldEnv(task="power-component", simplification="easy", max_admissible=None)
    try:
        observation, _ = instance.reset(options={"task_id": "power-component/1"})
        assert "(that is open)" in observation and "(that is closed)" not in observation  # openDoors is on
        observation, _, _, _, info = instance.step("teleport to workshop")  # teleportAction is on
        assert info["action_valid"] is True and "workshop" in observation
    finally:
        instance.close()


def _assert_split_matches(env: ScienceWorldEnv, name: str) -> None:
    def splits(server, task):
        server.load(task, 0, "", False)
        return [list(server.getVariationsTrain()), list(server.getVariationsDev()), list(server.getVariationsTest())]

    live = env._process.call(splits, name, timeout=60)
    task = find_task(name)
    assert live == [list(task.variations_of(s)) for s in ("train", "dev", "test")], name


# ---------------------------------------------------------------------------- slow sweeps
@pytest.mark.slow
@pytest.mark.java
@needs_java
def test_every_task_variation_zero_oracle_wins() -> None:
    instance = ScienceWorldEnv(task="all", split="train", max_admissible=None, gold_path=True)
    failures = []
    try:
        for task in TASKS:
            total, info = replay_oracle(instance, f"{task.name}/0")
            if not info.get("won") or total != pytest.approx(1.0):
                failures.append((task.name, info.get("scienceworld_score")))
    finally:
        instance.close()
    assert failures == []


@pytest.mark.slow
@pytest.mark.java
@needs_java
def test_split_table_matches_the_simulator_for_every_task(env: ScienceWorldEnv) -> None:
    env.reset(options={"task_id": "boil/0"})
    for task in TASKS:
        _assert_split_matches(env, task.name)
