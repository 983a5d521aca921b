"""Asynchronous rollouts for ``AgentGRPOTrainer`` (``async_rollouts: true``).

A rollout thread plays groups of episodes on its own envs with a copy of the policy (or a LoRA
adapter version on a vLLM server, ``async_lora_server``) while the
learner trains on finished groups from a bounded queue. Each turn records the policy version that
generated it; groups older than ``max_staleness`` versions are dropped (counted), the others are
corrected with a token-level truncated importance weight; a rollout thread starts no group that
would be older than that when the learner takes it. Modules, one job each:

* :mod:`.settings` — the config fields' checks;
* :mod:`.compat` — which plug-ins, envs and launches it serves, and why not the others;
* :mod:`.tasks` — the data cursor (dispatch index -> task);
* :mod:`.groups` — a finished group;
* :mod:`.policy_snapshot` — the generator's weights and the learner's published versions;
* :mod:`.weight_sync` — how the threads get the weights, by generation backend: in process, or
  :mod:`.lora_server` (LoRA adapter versions loaded by name into a vLLM server, sampled through
  :mod:`.server_backend`, its log-prob mode checked by :mod:`.logprobs_probe`);
* :mod:`.worker` — the rollout thread;
* :mod:`.controller` — the bounded queue, the staleness admission (no group is started that would
  be too old when trained) and their bookkeeping;
* :mod:`.staleness` — staleness, dropping and the truncated importance weight;
* :mod:`.hooks` — what the trainer calls, and the callback that runs the thread.
"""

from agentgym_suite.trainers.async_rollouts.compat import async_refusal, check_async_setup
from agentgym_suite.trainers.async_rollouts.hooks import STATE_FILE, AsyncTrainerHooks, LearnerSide, build_async_rollouts

__all__ = ["STATE_FILE", "AsyncTrainerHooks", "LearnerSide", "async_refusal", "build_async_rollouts",
           "check_async_setup"]
