"""The env and the tasks a training run plays: the model path, the env factory, the task datasets,
and the check that one generation batch can be filled with whole groups."""

from __future__ import annotations

import functools
import inspect
import logging
from collections import Counter
from typing import Any, Callable

import gymnasium as gym
from datasets import Dataset

from agentgym_suite.core.policy_loan import POLICY
from agentgym_suite.registration import env_class
from agentgym_suite.rollout.seeding import episode_seed
from agentgym_suite.trainers.config import AgentGRPOConfig
from agentgym_suite.trainers.credit import CreditAssigner

logger = logging.getLogger(__name__)


def resolve_model_path(name: str) -> str:
    """``tiny`` -> the suite's tiny test model directory; anything else unchanged."""
    if name == "tiny":
        from agentgym_suite.llm.tiny import tiny_model_dir

        return str(tiny_model_dir())
    return name


def default_env_factory(args: AgentGRPOConfig, credit: CreditAssigner | None = None, *,
                        held_out: bool = False, policy_tokenizer: str | None = None) -> Callable[[], gym.Env]:
    """A factory for the env ``args`` trains on (after ``env_mode``), failing early and clearly;
    ``held_out`` makes the evaluation env (``eval_env_kwargs`` merged over ``env_kwargs``).

    ``credit``'s ``env_defaults`` for that env fill in what the kwargs leave unset. An env that counts the
    policy's tokens (its ``policy_tokenizer_setting``) gets the policy's tokenizer there unless the kwargs set
    it: ``policy_tokenizer`` (a model id or folder), else the model being trained (``model_name_or_path``),
    as ``agentgym eval`` gives it the agent's."""
    import agentgym_suite  # noqa: F401  (registers every implemented env id)

    env_id = args.train_env_id
    if env_id not in gym.registry:
        why = f"env_id={env_id}" if env_id == args.env_id else f"env_mode={args.env_mode} trains on {env_id}"
        raise ValueError(
            f"{why}, but {env_id!r} is not registered in this install (its module is missing). "
            "Run `agentgym list` to see which env ids are ready, or choose env_mode=real with a ready env_id."
        )
    kwargs = {**(args.env_kwargs or {}), **((args.eval_env_kwargs or {}) if held_out else {})}
    for key, value in (credit.env_defaults(env_id) if credit is not None else {}).items():
        kwargs.setdefault(key, value)
    cls = env_class(env_id)
    wraps, borrows = getattr(cls, "wraps_setting", ""), getattr(cls, "policy_setting", "")
    if wraps and env_id != args.env_id:  # an env_mode that trains over env_id
        kwargs.setdefault(wraps, args.env_id)
    if borrows:  # the env asks for the policy being trained unless the config gives it a model
        kwargs.setdefault(borrows, POLICY)
    tokenizer_setting = getattr(cls, "policy_tokenizer_setting", None)
    if tokenizer_setting:  # the env measures text in the policy's tokens: the tokenizer of the model being trained
        kwargs.setdefault(tokenizer_setting, policy_tokenizer or resolve_model_path(args.model_name_or_path))
    if args.action_format and "action_format" not in kwargs and _accepts(env_id, "action_format"):
        kwargs["action_format"] = args.action_format
    user_is_set = getattr(cls, "user_is_set", None)
    if callable(user_is_set) and not user_is_set(kwargs):
        # an env with a simulated user plays the scripted test double when none is set (see its docs)
        logger.warning("%s plays its simulated user with the scripted test double (env_kwargs sets no user), so its "
                       "%s are not the benchmark's; set env_kwargs.user: llm:<backend spec> for the benchmark's LLM "
                       "user, or user: scripted to say that the double is meant.", env_id,
                       "held-out numbers" if held_out else "rewards")

    # a partial, not a closure over args: env worker processes and Ray actors receive it pickled
    return functools.partial(gym.make, env_id, max_episode_steps=args.max_turns, **kwargs)


def _parameters(env_id: str) -> dict[str, inspect.Parameter] | None:
    cls = env_class(env_id)
    try:
        return dict(inspect.signature(cls).parameters)
    except (TypeError, ValueError):
        return None


def _accepts(env_id: str, name: str) -> bool:
    params = _parameters(env_id)
    if params is None:
        return False
    return name in params or any(p.kind == p.VAR_KEYWORD for p in params.values())


def build_task_dataset(args: AgentGRPOConfig, env: gym.Env) -> Dataset:
    """One dataset row per task: ``task_id`` and the env seed its group shares
    (:func:`~agentgym_suite.rollout.seeding.episode_seed` of the run seed and the task; a task listed
    twice gets attempt 1 the second time, so its two rows play different episodes)."""
    ids = list(args.task_ids) if args.task_ids else list(env.unwrapped.task_ids())
    if args.num_tasks is not None:
        ids = ids[: args.num_tasks]
    if not ids:
        raise ValueError(f"{args.train_env_id} has no tasks to train on; check env_kwargs (split) and task_ids.")
    seen: Counter[str] = Counter()
    seeds = []
    for task_id in ids:
        seeds.append(episode_seed(int(args.seed), task_id, seen[task_id]))
        seen[task_id] += 1
    return Dataset.from_dict({"prompt": [f"task {t}" for t in ids], "task_id": ids, "env_seed": seeds})


def check_whole_groups(args: AgentGRPOConfig, dataset: Any, processes: int) -> None:
    """Raise unless one generation batch can be filled with whole groups of distinct tasks.

    TRL's sampler fills a generation batch of ``generation_batch_size`` rollouts with
    ``generation_batch_size / G`` distinct tasks, G rollouts each, and drops a batch it cannot
    fill, so a train set with fewer tasks than that would train on nothing. (A streamed dataset
    has no length and is not checked.)
    """
    try:
        tasks = len(dataset)
    except TypeError:
        return
    group = int(args.num_generations)
    per_batch = int(args.generation_batch_size) // group
    if tasks >= per_batch:
        return
    raise ValueError(
        f"one generation batch plays {per_batch} distinct tasks x G={group} rollouts (generation_batch_size "
        f"{args.generation_batch_size} = per_device_train_batch_size {args.per_device_train_batch_size} x {processes} "
        f"processes x steps_per_generation {args.steps_per_generation}), but the train set has {tasks} tasks. Lower "
        "per_device_train_batch_size, steps_per_generation (gradient_accumulation_steps) or generation_batch_size, "
        "raise group_size, or train on more tasks (num_tasks, task_ids, env_kwargs split)."
    )


def check_group_layout(inputs: list[dict[str, Any]], group: int, offset: int) -> None:
    """Raise when rollouts of one group (consecutive positions ``offset + i``, G at a time) were
    given different tasks or seeds: the generation batch is not laid out in whole groups."""
    for i in range(1, len(inputs)):
        same_group = (offset + i) // group == (offset + i - 1) // group
        if same_group and (inputs[i]["task_id"], inputs[i]["env_seed"]) != (inputs[i - 1]["task_id"],
                                                                            inputs[i - 1]["env_seed"]):
            raise ValueError(
                f"rollouts {offset + i - 1} and {offset + i} belong to one group of G={group} but play different tasks "
                f"({inputs[i - 1]['task_id']!r}, {inputs[i]['task_id']!r}); keep TRL's RepeatSampler and accelerate's "
                "default batch dispatch (no split_batches/dispatch_batches in accelerator_config)."
            )
