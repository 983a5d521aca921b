"""Small verifiers environments for the bridge tests (classic ``vf.Environment`` API), loadable by id:
``verifiers.load_environment("integrations.vf_toy_envs", kind=...)``.

* ``exact``: single-turn arithmetic questions, reward 1 for the exact answer;
* ``guess``: a multi-turn number guess: the environment answers "higher"/"lower" until the guess is
  right (reward 1) or four turns are spent;
* ``raises``: its env_response raises on the second turn;
* ``hangs``: its env_response never returns.
"""

from __future__ import annotations

import asyncio

import verifiers as vf
from datasets import Dataset

QUESTIONS = [{"question": f"What is {a} + {b}? Answer with the number only.", "answer": str(a + b)}
             for a, b in [(2, 2), (3, 4), (10, 5), (7, 8)]]
SECRETS = [{"question": "Guess my number between 1 and 9. Answer with a number.", "answer": str(n)} for n in (3, 8, 5)]


def exact_match(completion, answer, **kwargs) -> float:
    """1.0 when the last assistant message is the answer, exactly (spaces stripped)."""
    replies = [m for m in completion if m.get("role") == "assistant"] if isinstance(completion, list) else []
    text = (replies[-1].get("content") or "") if replies else ""
    return 1.0 if str(text).strip() == answer else 0.0


def brevity(completion, **kwargs) -> float:
    """1 / (1 + characters of the last reply): a shaping term, so a tiny random model's rewards differ."""
    replies = [m for m in completion if m.get("role") == "assistant"] if isinstance(completion, list) else []
    return 1.0 / (1.0 + len(str(replies[-1].get("content") or ""))) if replies else 0.0


class GuessEnv(vf.MultiTurnEnv):
    """Says higher or lower after each wrong guess; ends at the right one."""

    async def env_response(self, messages, state, **kwargs):
        guess = str(messages[-1].content or "").strip() if hasattr(messages[-1], "content") else ""
        secret = int(state["answer"])
        if guess == str(secret):
            state["final_env_response"] = [vf.UserMessage(content="Correct!")]
            return state["final_env_response"]
        try:
            hint = "higher" if int(guess) < secret else "lower"
        except ValueError:
            hint = "a number, please"
        return [vf.UserMessage(content=f"No: {hint}.")]


class RaisingEnv(GuessEnv):
    async def env_response(self, messages, state, **kwargs):
        raise RuntimeError("the environment broke on purpose")


class HangingEnv(GuessEnv):
    async def env_response(self, messages, state, **kwargs):
        await asyncio.sleep(3600)
        return []


def load_environment(kind: str = "exact", shaped: bool = False, **kwargs) -> vf.Environment:
    """One of the environments above (see the module docstring); ``shaped`` adds :func:`brevity` to the
    rubric with weight 0.1."""
    rubric = vf.Rubric(funcs=[exact_match, brevity], weights=[1.0, 0.1]) if shaped else vf.Rubric(funcs=[exact_match])
    if kind == "exact":
        data = Dataset.from_list(QUESTIONS)
        return vf.SingleTurnEnv(dataset=data, eval_dataset=data, system_prompt="Answer tersely.", rubric=rubric, **kwargs)
    classes = {"guess": GuessEnv, "raises": RaisingEnv, "hangs": HangingEnv}
    if kind not in classes:
        raise ValueError(f"kind={kind!r}; choose exact or one of {sorted(classes)}.")
    data = Dataset.from_list(SECRETS)
    return classes[kind](dataset=data, eval_dataset=data, max_turns=4, rubric=rubric, **kwargs)
