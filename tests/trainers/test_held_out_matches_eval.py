"""The trainer's held-out ``eval_success_rate`` and ``agentgym eval``'s ``success_rate`` are one
statistic: on the same tasks, run seed and model they play the same episodes (same reset seeds,
same actions, same verdicts) and summarise them with the same function."""

from __future__ import annotations

import gymnasium as gym

from agentgym_suite.agents.model_agent import ModelAgent
from agentgym_suite.core.actions import ParsedAction
from agentgym_suite.core.text_env import StepOutcome
from agentgym_suite.evaluation.runner import evaluate
from agentgym_suite.evaluation.task_selection import select_tasks
from agentgym_suite.llm.transformers_backend import TransformersBackend
from agentgym_suite.trainers import AgentGRPOTrainer
from agentgym_suite.trainers.trajectory_log import read_step
from trainers.conftest import tiny_config
from trainers.fake_env import LetterEnv

ENV_ID = "SeededVerdicts-v0"
SEED = 7
CRASHING_TASK = "t3"


class SeededVerdictEnv(LetterEnv):
    """The letter game whose verdict is a coin flip of the episode's reset seed, so a set of episodes
    has wins and losses whatever the (tiny, random) model writes; one task's env crashes."""

    def step(self, action: str):
        return super().step(f"say {len(action)} characters")  # whatever the model wrote is a valid command

    def _execute(self, command: str, parsed: ParsedAction) -> StepOutcome:
        if self.task_id == CRASHING_TASK:
            raise RuntimeError("this task's simulator is broken")
        end = self.turn >= self.horizon
        won = end and bool(self.np_random.random() < 0.5)
        return StepOutcome(observation=f"Step {self.turn}.", reward=float(won), score=float(won), won=won,
                           terminated=end)


def make_env(**kwargs) -> SeededVerdictEnv:
    return SeededVerdictEnv(**kwargs)


def test_held_out_success_in_training_is_agentgym_evals_success_rate(tmp_path):
    if ENV_ID not in gym.registry:
        gym.register(ENV_ID, entry_point=make_env)
    tasks = select_tasks(SeededVerdictEnv().task_ids(), 7, SEED)  # what `agentgym eval --seed 7` plays
    args = tiny_config(str(tmp_path / "run"), seed=SEED, eval_strategy="steps", eval_steps=1, eval_task_ids=tasks,
                       eval_temperature=0.0, num_generations_eval=2, per_device_eval_batch_size=14,
                       save_trajectories=True)
    trainer = AgentGRPOTrainer(args=args, env_factory=make_env)
    held_out = trainer.evaluate()

    agent = ModelAgent(TransformersBackend(trainer.model, trainer.processing_class), prompt_format=args.prompt_format,
                       temperature=0.0, max_new_tokens=args.max_completion_length, history_length=args.history_length)
    result = evaluate(ENV_ID, agent, out_dir=tmp_path / "eval", episodes=7, k=2, seed=SEED,
                      max_turns=args.max_turns, progress=False)

    played = read_step(tmp_path / "run" / "eval_trajectories" / "step_000000.jsonl")
    in_training = sorted((e["task_id"], e["seed"], tuple(t["action"] for t in e["turns"]), e["won"], bool(e["error"]))
                         for e in played)
    in_eval = sorted((r.task_id, r.seed, tuple(t.completion_text for t in r.turns), r.won, r.broken)
                     for r in result.records)
    assert in_training == in_eval, "held-out evaluation and agentgym eval played different episodes"
    summary = result.summary
    assert 0 < summary["won"] < summary["completed"] and summary["crashed"] == 2  # wins, losses and crashes
    assert held_out["eval_episodes"] == summary["episodes"] == 14 and held_out["eval_crashed"] == 2
    assert held_out["eval_success_rate"] == summary["success_rate"]
    assert held_out["eval_score_mean"] == summary["mean_score"]
    assert held_out["eval_turns_mean"] == summary["mean_turns"]
    assert held_out["eval_return_mean"] == summary["mean_reward"]
    assert held_out["eval_error_rate"] == summary["error_rate"]
