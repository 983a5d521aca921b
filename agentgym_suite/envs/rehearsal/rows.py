"""Turn an episode's simulator generations into Simulator-role training rows (EnvACE).

The rehearsal env puts each step's generations in ``info["simulator_generations"]``; a
trainer collects them over the episode (in step order) and calls
:func:`simulator_row_records` once the episode's return is known. Each record carries the
field names of the trainer's per-turn ``Row`` (``prompt_ids``, ``completion_ids``,
``env_mask``, ``logprobs``, ``group``, ``traj``, ``turn_idx``, ``role``, ``ret``,
``invalid``, ``step_reward``, ``anchor``, ``position``), with ``role="simulator"`` and the
episode's return: EnvACE gives the same score to every row of both roles.
"""

from __future__ import annotations

from typing import Any, Iterable


def simulator_row_records(
    generations: Iterable[dict[str, Any]],
    *,
    episode_return: float,
    group: Any,
    traj: Any,
) -> list[dict[str, Any]]:
    """One row record per trainable simulator generation.

    Generations without token ids (remote APIs, a failed backend call) cannot be trained on
    and are skipped. ``invalid`` marks generations that broke the output contract.
    """
    rows: list[dict[str, Any]] = []
    for index, gen in enumerate(generations):
        completion = list(gen.get("completion_ids") or [])
        if not gen.get("has_token_ids", False) or not completion or not gen.get("prompt_ids"):
            continue
        rows.append({
            "prompt_ids": list(gen["prompt_ids"]),
            "completion_ids": completion,
            "env_mask": [1] * len(completion),
            "logprobs": [float(x) for x in gen.get("logprobs") or [0.0] * len(completion)],
            "group": group,
            "traj": traj,
            "turn_idx": index,
            "role": "simulator",
            "ret": float(episode_return),
            "invalid": not gen.get("contract_valid", False),
            "step_reward": float(episode_return),
            "anchor": str(gen.get("tool_name", "")),
            "position": int(gen.get("turn", 0)),
        })
    return rows
