"""Steps per second of SearchR1-v0 (Search-R1's protocol, BM25 over a Search-R1-format corpus file)
beside SearchQA-v0 (in-memory BM25) on the same 994 passages (HippoRAG's HotpotQA corpus).

Usage::

    AGENTGYM_DATA=../shared/data python benchmarks/search_r1_speed.py [--episodes 30]

Each episode searches four supporting titles or questions, then answers. SearchR1-v0 reads each
retrieved passage from the corpus file (as it must for Wikipedia-2018's 21 million passages), so the
ratio shows what that costs against passages held in memory.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from pathlib import Path

from agentgym_suite.core.text_env import TextEnv
from agentgym_suite.envs.searchqa import SearchQAEnv, SearchR1Env
from agentgym_suite.envs.searchqa.data_source import SEARCH_R1_TEST

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ratios import report_ratio  # noqa: E402


def play(env: TextEnv, questions: list[str], episodes: int) -> float:
    """Steps per second over ``episodes`` episodes of four searches and an answer."""
    steps, spent = 0, 0.0
    for number in range(episodes):
        env.reset(options={"task_id": env.task_ids()[number % len(env.task_ids())]})
        for action in [f"<search>{questions[(number + k) % len(questions)]}</search>" for k in range(4)] + ["<answer>x</answer>"]:
            start = time.perf_counter()
            _, _, terminated, truncated, _ = env.step(action)
            spent += time.perf_counter() - start
            steps += 1
            if terminated or truncated:
                break
    return steps / spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=30)
    args = parser.parse_args()
    v0 = SearchQAEnv(dataset="hotpotqa", max_turns=5)
    questions = [q.question for q in v0.questions.values()]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        with (root / "corpus.jsonl").open("w", encoding="utf-8") as out:
            for number, passage in enumerate(v0.retriever.passages):
                out.write(json.dumps({"id": str(number), "contents": f'"{passage.title}"\n{passage.text}'}) + "\n")
        for rel, _ in SEARCH_R1_TEST.values():
            path = root / "flashrag" / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(json.dumps({"id": str(i), "question": q, "golden_answers": ["x"]}) + "\n"
                                    for i, q in enumerate(questions[:10])))
        v1 = SearchR1Env(data_dir=root, corpus=root / "corpus.jsonl", dataset="search_r1_test:nq")
        ours = play(v1, questions, args.episodes)
        base = play(v0, questions, args.episodes)
    print(f"machine: {platform.machine()}, Python {platform.python_version()} (shared with other jobs: read the ratio)")
    print(f"SearchR1-v0, BM25 over a 994-passage corpus file   {ours:8.1f} steps/s")
    print(f"SearchQA-v0, BM25 over the same passages in memory {base:8.1f} steps/s")
    print(f"ratio SearchR1-v0 / SearchQA-v0                    {ours / base:8.2f}x")
    report_ratio("SearchR1-v0 (corpus on disk) / SearchQA-v0 (in memory) steps/s", ours / base, "-",
                 f"{ours:.0f} vs {base:.0f} steps/s, 994 passages, 4 searches + answer")


if __name__ == "__main__":
    main()
