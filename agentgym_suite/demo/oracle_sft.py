"""Behavioural cloning for the demo: oracle episodes of the training split, turned into an SFT
dataset and trained with TRL's ``SFTTrainer`` and a LoRA adapter.

This is the warm start of agent RL pipelines such as AgentGym's (behavioural cloning on expert
trajectories before AgentEvol): every env of the suite has an oracle (``env.unwrapped.oracle()``),
so expert episodes of the *training* split cost only env steps.

The prompts are exactly the model agent's ``chat`` prompts (:class:`~agentgym_suite.rollout.prompting.EpisodePrompt`,
the class the rollout engine and ``ModelAgent`` both use): system message, task and first
observation, then assistant actions and env replies. Each episode is one training row (the
``trajectory`` layout): the whole conversation rendered with the model's chat template, with the
loss on the assistant turns only (``assistant_masks``), so each prompt token is processed once.
A step's episodes are trained in passes of at most :data:`SFT_ROWS_PER_PASS` (gradient
accumulation), which bounds the step's memory without changing its gradient.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

import gymnasium as gym

from agentgym_suite.agents.base import OracleAgent
from agentgym_suite.rollout import EpisodeSpec, RolloutEngine
from agentgym_suite.rollout.prompting import EpisodePrompt
from agentgym_suite.rollout.seeding import episode_seed

SFT_ROWS_PER_PASS = 4
"""Episodes per forward/backward pass of an SFT step: a step of 8 episodes accumulates two passes
of 4, which gives the same gradient (the loss is normalised by the step's tokens) with half the
logits and activations held at once (the cloning stage held the demo's peak memory with one pass
of 8; ``benchmarks/demo_memory.py``)."""


class _Transcript:
    """The oracle, transcribing the chat conversation the model agent would see (one per episode)."""

    name = "oracle"

    def __init__(self) -> None:
        self.oracle = OracleAgent()
        self.prompt: EpisodePrompt | None = None
        self.last_action: str | None = None

    def reset(self, env: gym.Env, *, seed: int | None = None) -> None:
        self.oracle.reset(env, seed=seed)
        self.prompt = EpisodePrompt("chat", env=env)
        self.last_action = None

    def act(self, observation: str, info: dict[str, Any]) -> str:
        assert self.prompt is not None, "reset() first"
        if self.last_action is None:
            self.prompt.start(observation, info)
        else:
            self.prompt.record(self.last_action, observation, info)
        self.last_action = self.oracle.act(observation, info)
        return self.last_action

    def messages(self) -> list[dict[str, Any]]:
        """The conversation up to the last action (the env's reply to it is not trained on)."""
        if self.prompt is None or self.last_action is None:
            return []
        return [*self.prompt.prompt(), {"role": "assistant", "content": self.last_action}]


def oracle_conversations(env_id: str, env_kwargs: dict[str, Any], task_ids: Sequence[str] | None, *,
                         max_turns: int, seed: int = 0) -> list[dict[str, Any]]:
    """Play the oracle (:class:`~agentgym_suite.agents.base.OracleAgent`, through the rollout engine)
    on each task, attempt 0 of run seed ``seed``, and return one record per episode: ``task_id``,
    ``won``, ``turns`` and ``messages`` (the chat conversation the model agent would have seen, with
    the oracle's actions as the assistant turns). Only won episodes are worth imitating; the caller
    filters on ``won``."""
    env = gym.make(env_id, **env_kwargs)
    try:
        ids = list(task_ids) if task_ids is not None else list(env.unwrapped.task_ids())
        records = []
        for task_id in ids:
            transcript = _Transcript()
            engine = RolloutEngine(transcript, max_turns=max_turns, info_keys=None)
            [played] = engine.run([env], [EpisodeSpec(task_id, episode_seed(seed, task_id), task_id)])
            if played.error is not None:
                raise RuntimeError(f"the oracle episode of {task_id} failed ({played.error_stage}): {played.error}")
            records.append({"task_id": task_id, "won": bool(played.won), "turns": played.num_turns,
                            "messages": transcript.messages()})
        return records
    finally:
        env.close()


def tokenize_conversation(tokenizer: Any, messages: list[dict[str, Any]]) -> dict[str, list[int]]:
    """``input_ids`` of the conversation under the chat template and ``assistant_masks`` (1 on the
    tokens of each assistant turn, its end-of-turn marker included).

    Each assistant turn's span is found by rendering the conversation up to the turn with the
    generation prompt (where the model starts writing) and up to the end of the turn, so the
    tokens are the ones the model sees at generation time.
    """
    def ids(upto: int, generation_prompt: bool) -> list[int]:
        text = tokenizer.apply_chat_template(messages[:upto], tokenize=False, add_generation_prompt=generation_prompt)
        return list(tokenizer(text, add_special_tokens=False)["input_ids"])

    full = ids(len(messages), False)
    mask = [0] * len(full)
    for i, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        start, end = len(ids(i, True)), len(ids(i + 1, False))
        for position in range(start, min(end, len(full))):
            mask[position] = 1
    return {"input_ids": full, "assistant_masks": mask}


def sft_dataset(tokenizer: Any, records: Sequence[dict[str, Any]]) -> Any:
    """A pre-tokenised ``datasets.Dataset`` (``input_ids``, ``assistant_masks``) of the won episodes."""
    from datasets import Dataset

    rows = [tokenize_conversation(tokenizer, r["messages"]) for r in records if r["won"]]
    if not rows:
        raise ValueError("no oracle episode was won, so there is nothing to imitate; raise max_turns or check "
                         "the env's oracle.")
    return Dataset.from_list(rows)


def write_records(records: Sequence[dict[str, Any]], path: Path) -> None:
    """The oracle episodes as JSON lines (what the SFT stage trained on)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def train_sft(model_path: str, dataset: Any, out_dir: Path, *, epochs: float, learning_rate: float,
              batch_size: int, lora_r: int, seed: int, max_rows_per_pass: int = SFT_ROWS_PER_PASS,
              ) -> tuple[str, list[dict[str, Any]], list[dict[str, Any]]]:
    """SFT with a LoRA adapter (``peft``) on ``dataset``, ``batch_size`` episodes per step in
    passes of at most ``max_rows_per_pass`` (:func:`rows_per_pass`); the adapter is merged into the
    weights and the full model saved to ``out_dir/model``. Returns that path, the trainer's log
    history and its per-step time profile (:mod:`~agentgym_suite.trainers.step_profile`)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    from agentgym_suite.trainers.agent_grpo import lora_config
    from agentgym_suite.trainers.step_profile import StepTimer

    class ProfiledSFTTrainer(StepTimer, SFTTrainer):  # type: ignore[misc]
        """TRL's SFTTrainer with the per-step time profile."""

    tokenizer = AutoTokenizer.from_pretrained(model_path)
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(model_path)
    rows = rows_per_pass(batch_size, max_rows_per_pass)
    config = SFTConfig(
        output_dir=str(out_dir), num_train_epochs=epochs, per_device_train_batch_size=rows,
        gradient_accumulation_steps=batch_size // rows, learning_rate=learning_rate, lr_scheduler_type="constant", warmup_steps=0, logging_steps=1,
        save_strategy="no", report_to="none", use_cpu=True, bf16=False, seed=seed, data_seed=seed,
        max_length=None, disable_tqdm=True,
    )
    lora = lora_config(lora_r)
    trainer = ProfiledSFTTrainer(model=model, args=config, train_dataset=dataset, processing_class=tokenizer,
                                 peft_config=lora)
    trainer._init_step_timer()
    trainer.train()
    merged = trainer.model.merge_and_unload()
    final = out_dir / "model"
    merged.save_pretrained(str(final))
    tokenizer.save_pretrained(str(final))
    history = [dict(h) for h in trainer.state.log_history]
    step_times = list(trainer.step_times)
    del trainer, merged, model  # the trainer sits in reference cycles: the caller's release_memory frees it
    return str(final), history, step_times


def rows_per_pass(batch_size: int, most: int = SFT_ROWS_PER_PASS) -> int:
    """Episodes per forward/backward pass of an SFT step of ``batch_size`` episodes: the largest
    divisor of ``batch_size`` up to ``most`` (the step accumulates ``batch_size // rows`` passes)."""
    if batch_size < 1:
        raise ValueError(f"sft_batch_size must be at least 1 (got {batch_size}).")
    return max(d for d in range(1, min(batch_size, most) + 1) if batch_size % d == 0)
