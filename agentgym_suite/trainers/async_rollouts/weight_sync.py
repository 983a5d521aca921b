"""How the rollout threads get the learner's weights, by generation backend.

Both kinds answer the same four calls of
:class:`~agentgym_suite.trainers.async_rollouts.hooks.AsyncTrainerHooks`:

* ``start(policy, version, threads)``: one per-thread handle (``version``, ``published``,
  ``offer``, ``apply_pending``) at the first version;
* ``publish(policy, version, handles)``: after an optimizer step;
* ``backend(handle, tokenizer, args, params, generation_kwargs)``: the generation backend a thread
  samples with;
* ``close()``: at the end of training.

:class:`InProcessWeights` (the default): each thread generates with the transformers backend on its
own copy of the policy (:class:`~agentgym_suite.trainers.async_rollouts.policy_snapshot.PolicySnapshot`),
loaded with the published weights at the thread's boundary.
:class:`~agentgym_suite.trainers.async_rollouts.lora_server.LoRAServerWeights`
(``async_lora_server: URL``): the threads generate on a vLLM server that holds each version as a
LoRA adapter loaded by name.
"""

from __future__ import annotations

from typing import Any

import torch

from agentgym_suite.trainers.async_rollouts.policy_snapshot import PolicySnapshot, copy_weights


class InProcessWeights:
    """Per-thread copies of the policy, swapped at the threads' boundaries; generation with transformers."""

    def start(self, policy: torch.nn.Module, version: int, threads: int) -> list[PolicySnapshot]:
        """One copy of ``policy`` per thread (each swaps alone)."""
        return [PolicySnapshot(policy, version) for _ in range(int(threads))]

    def publish(self, policy: torch.nn.Module, version: int, snapshots: list[PolicySnapshot]) -> None:
        """One copy of the weights, loaded by every thread at its own boundary."""
        weights = copy_weights(policy)
        for snapshot in snapshots:
            snapshot.offer(weights, version)

    def backend(self, snapshot: PolicySnapshot, tokenizer: Any, args: Any, generation_kwargs: dict[str, Any]) -> Any:
        """The transformers backend over the thread's copy, sampling as the trainer's transformers path does.

        Its log-probs are those of ``logits / temperature``: the correction compares them with the
        learner's, which TRL computes at the sampling temperature (raw log-probs would put every
        ratio off 1 at any temperature but 1, even for a group of the current version)."""
        from agentgym_suite.llm.transformers_backend import TransformersBackend
        from agentgym_suite.trainers.generation import template_kwargs

        return TransformersBackend(snapshot.model, tokenizer, max_batch_size=1 << 20, name="policy-async",
                                   generation_kwargs=generation_kwargs, chat_template_kwargs=template_kwargs(args),
                                   logprobs_at_temperature=True)

    def close(self) -> None:
        """Nothing to release."""

    def metrics(self) -> dict[str, float]:
        """No weight-sync metrics in process."""
        return {}


def weight_sync_for(args: Any) -> Any:
    """The weight sync of ``args``: :class:`~agentgym_suite.trainers.async_rollouts.lora_server.LoRAServerWeights`
    when ``async_lora_server`` is set, else :class:`InProcessWeights`."""
    if getattr(args, "async_lora_server", None):
        from agentgym_suite.trainers.async_rollouts.lora_server import LoRAServerWeights

        return LoRAServerWeights(args)
    return InProcessWeights()
