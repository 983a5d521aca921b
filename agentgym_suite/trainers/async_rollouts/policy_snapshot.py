"""The generator's copy of the policy and the weights the learner publishes to it.

The rollout thread generates with its own copy of the policy (so the learner's forward and
backward passes never see weights change under them, and the generator never sees a half-done
optimizer step). After each optimizer step the learner publishes a copy of its weights with the
new version; the generator loads the newest published weights only at a boundary it chooses
(between rollouts, or at a turn boundary with ``async_episode_update: continue``).
"""

from __future__ import annotations

import copy
import threading
import torch


class PolicySnapshot:
    """The generator's weights and their version."""

    def __init__(self, policy: torch.nn.Module, version: int) -> None:
        self.model = copy.deepcopy(policy)
        self.model.eval()
        for parameter in self.model.parameters():
            parameter.requires_grad_(False)
        self.version = int(version)
        self._lock = threading.Lock()
        self._pending: tuple[int, dict[str, torch.Tensor]] | None = None
        self.published = int(version)
        """The newest version the learner published (loaded or not)."""

    def publish(self, policy: torch.nn.Module, version: int) -> None:
        """Called by the learner after an optimizer step: keep a copy of ``policy``'s weights as ``version``."""
        self.offer(copy_weights(policy), version)

    def offer(self, weights: dict[str, torch.Tensor], version: int) -> None:
        """Make ``weights`` (a copy no one changes, possibly shared with other snapshots) the pending ``version``."""
        with self._lock:
            self._pending = (int(version), weights)
            self.published = int(version)

    def apply_pending(self) -> bool:
        """Called by the generator at a boundary: load the newest published weights, if any; returns
        whether the version changed."""
        with self._lock:
            pending, self._pending = self._pending, None
        if pending is None:
            return False
        version, weights = pending
        with torch.no_grad():
            self.model.load_state_dict(weights)
        self.version = version
        return True

    def reset(self, policy: torch.nn.Module, version: int) -> None:
        """Start over from ``policy``'s weights (a resumed run's restored weights) at ``version``."""
        self.publish(policy, version)
        self.apply_pending()


def copy_weights(policy: torch.nn.Module) -> dict[str, torch.Tensor]:
    """A detached copy of ``policy``'s state dict (what the learner publishes once per optimizer step)."""
    return {name: value.detach().clone() for name, value in policy.state_dict().items()}
