"""A small deterministic TextEnv for trainer tests: fast, seedable, with rewards that vary
with the (random) text a tiny model writes, so advantages are not all zero."""

from __future__ import annotations

from pathlib import Path

from agentgym_suite.core.actions import ParsedAction
from agentgym_suite.core.text_env import StepOutcome, TaskStart, TextEnv

TASKS = {f"t{i}": f"collect the letter {c}" for i, c in enumerate("aeioust")}


class LetterEnv(TextEnv):
    """Each step rewards 1 when the action contains the task's letter; the episode ends after
    ``horizon`` steps or when the action says 'done'."""

    benchmark = "letters"
    default_action_format = "plain"
    prompt_description = "a letter-collecting game"
    # the self-distilling plug-ins' teacher reads these (an env without skill texts is refused)
    skills_fallback = Path(__file__).with_name("letter_skills")

    def __init__(self, horizon: int = 2, **kwargs) -> None:
        super().__init__(**kwargs)
        self.horizon = horizon
        self._letter = "a"

    def task_ids(self) -> list[str]:
        return sorted(TASKS)

    def oracle(self) -> list[str]:
        return [f"say {self._letter}"]

    def _load_task(self, task_id: str) -> TaskStart:
        self._letter = TASKS[task_id][-1]
        return TaskStart(observation=f"You need the letter {self._letter}.", task=TASKS[task_id],
                         admissible_actions=[f"say {self._letter}", "done"])

    def _execute(self, command: str, parsed: ParsedAction) -> StepOutcome:
        hit = self._letter in command
        end = self.turn >= self.horizon or command.strip() == "done"
        return StepOutcome(observation=f"You said {command[:20]!r}. Step {self.turn}.", reward=1.0 if hit else 0.0,
                           score=1.0 if hit else 0.0, won=hit and end, terminated=end,
                           admissible_actions=[f"say {self._letter}", "done"])


def make_letter_env(**kwargs) -> LetterEnv:
    """Factory used by the trainer tests."""
    return LetterEnv(**kwargs)
