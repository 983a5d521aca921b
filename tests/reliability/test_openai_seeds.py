"""Each episode keeps its own seed in batched requests: results are the same for any batch size.

The stub picks its box-game action from the request's seed and prompt, as a sampling model
would; a batch whose requests shared one seed would play differently from one-by-one episodes.
"""

from __future__ import annotations

from pathlib import Path

from agentgym_suite.evaluation.runner import evaluate
from agentgym_suite.rollout.model_turns import turn_sampling_seed

from reliability.fakes import HANG_ID
from reliability.stub_openai import stub_server


def _play(url: str, out: Path, batch_size: int) -> dict[str, list[str]]:
    result = evaluate(HANG_ID, f"openai:stub@{url}", out_dir=out, episodes=4, k=2, seed=7, max_turns=6,
                      batch_size=batch_size, env_kwargs={"n_tasks": 4}, progress=False,
                      agent_options={"temperature": 1.0, "max_new_tokens": 8})
    for record in result.records:
        # every request carried its own episode's seed for that turn (rollout.model_turns.turn_sampling_seed;
        # the agent was given no sampling seed of its own: 0)
        assert [t.request["seed"] for t in record.turns] == [turn_sampling_seed(0, record.seed, i)
                                                              for i in range(record.num_turns)]
    return {r.key: [t.completion_text for t in r.turns] for r in result.records}


def test_batch_size_does_not_change_results(tmp_path: Path) -> None:
    with stub_server(faults={}, seeded=True) as (url, state):
        plays = {size: _play(url, tmp_path / str(size), size) for size in (1, 3, 8)}
    assert state.invalid == []
    assert plays[1] == plays[3] == plays[8]
    assert len({tuple(actions) for actions in plays[1].values()}) > 1  # the seeds do steer the plays
