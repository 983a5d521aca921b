"""Question sets and passage corpora for SearchQA-v0 (HotpotQA and MuSiQue, HippoRAG's files).

Each dataset yields :class:`Question` records (id, question, gold answers, supporting passage
titles, the dataset's question type) and the passages of its corpus. Files live under
``$AGENTGYM_DATA/searchqa/``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentgym_suite.core.data import benchmark_dir
from agentgym_suite.core.errors import DataNotFoundError
from agentgym_suite.envs.searchqa.retrievers import Passage

DATASET_FILES: dict[str, tuple[str, str]] = {
    "hotpotqa": ("hipporag_hotpotqa/hotpotqa_train.json", "hipporag_hotpotqa/hotpotqa_train_corpus.json"),
    "musique": ("hipporag_musique/musique_train.json", "hipporag_musique/musique_train_corpus.json"),
}


@dataclass(frozen=True)
class Question:
    """One question with its gold answers and the titles of its supporting passages."""

    id: str
    question: str
    answers: tuple[str, ...]
    supporting_titles: tuple[str, ...]
    kind: str = ""
    """The dataset's question type where it has one (HotpotQA: ``bridge`` or ``comparison``)."""


def _read(path: Path) -> Any:
    with path.open(encoding="utf-8") as handle:
        return json.load(handle)


def _unique(items: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def _hotpotqa(questions: list[dict[str, Any]], corpus: dict[str, list[str]]) -> tuple[list[Question], list[Passage]]:
    parsed = [
        Question(str(q["_id"]), q["question"], (str(q["answer"]),), _unique([title for title, _ in q["supporting_facts"]]),
                 str(q.get("type") or ""))
        for q in questions
    ]
    passages = [Passage(title, "".join(sentences).strip()) for title, sentences in corpus.items()]
    return parsed, passages


def _musique(questions: list[dict[str, Any]], corpus: list[dict[str, str]]) -> tuple[list[Question], list[Passage]]:
    parsed = []
    for q in questions:
        by_idx = {p["idx"]: p["title"] for p in q["paragraphs"]}
        order = [by_idx[step["paragraph_support_idx"]] for step in q.get("question_decomposition", [])
                 if step.get("paragraph_support_idx") in by_idx]
        order += [p["title"] for p in q["paragraphs"] if p.get("is_supporting")]
        answers = _unique([str(q["answer"]), *map(str, q.get("answer_aliases", []))])
        parsed.append(Question(str(q["id"]), q["question"], answers, _unique(order)))
    passages = [Passage(p["title"], p["text"]) for p in corpus]
    return parsed, passages


def question_family(question: Question, dataset: str) -> str:
    """The task family of a question, named after its skill text: comparison, multi-hop or single-hop.

    The question's type decides (HotpotQA's ``comparison`` / ``bridge``); without one, the
    dataset does (HotpotQA and MuSiQue are multi-hop by construction).
    """
    key = (question.kind or dataset).lower()
    if "comparison" in key:
        return "search_comparison"
    if any(word in key for word in ("bridge", "multi", "musique", "hotpot")):
        return "search_multi_hop"
    return "search_single_hop"


def load_dataset(name: str, root: Path | None = None) -> tuple[list[Question], list[Passage]]:
    """Questions and corpus passages of ``name`` (``hotpotqa`` or ``musique``).

    Raises:
        ValueError: for an unknown dataset name.
        DataNotFoundError: when the files are missing.
    """
    if name not in DATASET_FILES:
        raise ValueError(f"dataset={name!r}; choose one of {sorted(DATASET_FILES)}.")
    question_file, corpus_file = DATASET_FILES[name]
    base = Path(root) if root is not None else benchmark_dir("searchqa", question_file, corpus_file)
    missing = [str(base / f) for f in (question_file, corpus_file) if not (base / f).exists()]
    if missing:
        raise DataNotFoundError(
            f"searchqa data not found: missing {', '.join(missing)}. Set AGENTGYM_DATA to a directory that "
            "holds 'searchqa/', or run `agentgym data fetch searchqa` to download it."
        )
    questions, corpus = _read(base / question_file), _read(base / corpus_file)
    return _hotpotqa(questions, corpus) if name == "hotpotqa" else _musique(questions, corpus)


SEARCH_R1_SETS = ("search_r1_test", "search_r1_train")
"""Task-set names of Search-R1's data: ``search_r1_test`` (its seven evaluation sets; pick some with
``search_r1_test:nq,bamboogle``) and ``search_r1_train`` (NQ + HotpotQA train)."""


def parse_search_r1_set(spec: str) -> tuple[str, tuple[str, ...]]:
    """``(set, datasets)`` of a spec such as ``search_r1_test`` or ``search_r1_test:nq,popqa``.

    Raises:
        ValueError: for an unknown set or dataset name.
    """
    from agentgym_suite.envs.searchqa.data_source import SEARCH_R1_TEST, SEARCH_R1_TRAIN

    name, _, chosen = spec.partition(":")
    if name not in SEARCH_R1_SETS:
        raise ValueError(f"dataset={spec!r}; Search-R1's task sets are {SEARCH_R1_SETS} (optionally ':nq,popqa,...').")
    table = SEARCH_R1_TEST if name == "search_r1_test" else SEARCH_R1_TRAIN
    names = tuple(n.strip() for n in chosen.split(",") if n.strip()) or tuple(table)
    unknown = [n for n in names if n not in table]
    if unknown:
        raise ValueError(f"{name} has no dataset {unknown}; choose from {sorted(table)}.")
    return name, names


def load_search_r1(spec: str, root: Path) -> list[Question]:
    """The questions of a Search-R1 task set (FlashRAG JSONL files under ``root/flashrag/``), each with
    id ``<dataset>/<FlashRAG id>`` and its dataset as ``kind``.

    Raises:
        DataNotFoundError: naming each missing file and where it comes from.
    """
    from agentgym_suite.envs.searchqa.data_source import FLASHRAG_DIR, SEARCH_R1_TEST, SEARCH_R1_TRAIN

    name, names = parse_search_r1_set(spec)
    table = SEARCH_R1_TEST if name == "search_r1_test" else SEARCH_R1_TRAIN
    paths = {n: root / FLASHRAG_DIR / table[n][0] for n in names}
    missing = [str(p) for p in paths.values() if not p.exists()]
    if missing:
        raise DataNotFoundError(
            f"Search-R1 data not found: missing {', '.join(missing)}. They cannot be downloaded by this package; "
            "`agentgym data fetch searchqa` prints where each file comes from and where it goes."
        )
    questions = []
    for dataset, path in paths.items():
        with path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle):
                if not line.strip():
                    continue
                record = json.loads(line)
                answers = record.get("golden_answers") or []
                answers = [answers] if isinstance(answers, str) else answers
                qid = str(record.get("id", number))
                questions.append(Question(f"{dataset}/{qid}", str(record["question"]), tuple(map(str, answers)), (), dataset))
    return questions
