"""The engine's lockstep hook: while any process still plays, a process whose episodes ended keeps
taking turns and calls the policy with no episodes (an empty generation call)."""

from __future__ import annotations

from agentgym_suite.llm import SamplingParams, load_backend
from agentgym_suite.rollout import EpisodeSpec, RolloutEngine

from .fakes import CounterEnv, ScriptedBackend


def test_a_finished_process_keeps_calling_the_policy_while_others_play():
    backend = ScriptedBackend(load_backend("tiny", device="cpu"), ["next"])
    others_play = iter([True, True, True, False])  # another process plays 4 turns (0-3)
    asked: list[bool] = []

    def lockstep(active: bool) -> bool:
        asked.append(active)
        return active or next(others_play)

    engine = RolloutEngine(backend, sampling=SamplingParams(temperature=0, max_new_tokens=4), max_turns=10,
                           lockstep=lockstep)
    [trajectory] = engine.run([CounterEnv()], [EpisodeSpec("c1", 0, "g0", "0.0")])
    assert trajectory.num_turns == 1 and trajectory.won
    # turn 0 plays the episode; turns 1-3 are empty calls while the other process plays; turn 4 ends the run
    assert asked == [True, False, False, False, False]
    assert backend.batch_sizes == [1, 0, 0, 0]
    assert engine.stats.generate_calls == 4


def test_without_the_hook_a_run_ends_with_its_own_episodes():
    backend = ScriptedBackend(load_backend("tiny", device="cpu"), ["next"])
    engine = RolloutEngine(backend, sampling=SamplingParams(temperature=0, max_new_tokens=4), max_turns=10)
    engine.run([CounterEnv()], [EpisodeSpec("c1", 0, "g0", "0.0")])
    assert backend.batch_sizes == [1]
