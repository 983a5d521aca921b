"""SearchQA's data: Search-R1's question sets and retrieval corpus, and HippoRAG's small samples.

The HippoRAG samples (HotpotQA and MuSiQue training questions with their own passages) download
from GitHub. Search-R1's evaluation sets (FlashRAG's NQ, TriviaQA, PopQA, HotpotQA, 2WikiMultiHopQA,
MuSiQue and Bamboogle files), its training mix (NQ + HotpotQA train) and its Wikipedia-2018 corpus
and e5 index live on the Hugging Face hub, which this package never downloads from: ``agentgym data
fetch searchqa`` names each file, where it comes from and where it goes, and ``agentgym data verify
searchqa`` checks the placed files' record counts (the counts Search-R1's paper and FlashRAG
publish; no sha256 of the hub files was available offline).
"""

from __future__ import annotations

from dataclasses import replace

from agentgym_suite.core.data_sources import DataSource, ManualFile, RemoteFile

_HIPPORAG = "https://raw.githubusercontent.com/OSU-NLP-Group/HippoRAG/b144c46df14cabe5f5822d8caded4bec5f709461/data"
_FLASHRAG = "https://huggingface.co/datasets/RUC-NLPIR/FlashRAG_datasets/resolve/main"
_WIKI18 = "https://huggingface.co/datasets/PeterJinGo"

SEARCH_R1_TEST: dict[str, tuple[str, int]] = {
    "nq": ("nq/test.jsonl", 3610),
    "triviaqa": ("triviaqa/test.jsonl", 11313),
    "popqa": ("popqa/test.jsonl", 14267),
    "hotpotqa": ("hotpotqa/dev.jsonl", 7405),
    "2wikimultihopqa": ("2wikimultihopqa/dev.jsonl", 12576),
    "musique": ("musique/dev.jsonl", 2417),
    "bamboogle": ("bamboogle/test.jsonl", 125),
}
"""Search-R1's seven evaluation sets: FlashRAG file (test split where the dataset has one, else dev,
as Search-R1's ``qa_search_test_merge.py`` picks) and its number of questions."""

SEARCH_R1_TRAIN: dict[str, tuple[str, int]] = {
    "nq": ("nq/train.jsonl", 79168),
    "hotpotqa": ("hotpotqa/train.jsonl", 90447),
}
"""Search-R1's training mix (``qa_search_train_merge.py --data_sources nq,hotpotqa``)."""

FLASHRAG_DIR = "flashrag"
WIKI18_CORPUS = "wiki-18/wiki-18.jsonl"
WIKI18_PASSAGES = 21015324
E5_INDEX = "wiki-18/e5_Flat.index"
E5_MODEL_DIR = "e5-base-v2"

_QUESTION_FILES = tuple(
    ManualFile(f"{_FLASHRAG}/{rel}", f"{FLASHRAG_DIR}/{rel}", rows=rows, note=f"Search-R1 {kind} set {name}")
    for kind, table in (("evaluation", SEARCH_R1_TEST), ("training", SEARCH_R1_TRAIN))
    for name, (rel, rows) in table.items()
)

SOURCE = DataSource(
    "searchqa",
    files=(
        RemoteFile(f"{_HIPPORAG}/hotpotqa_train.json", "hipporag_hotpotqa/hotpotqa_train.json", "7dbdf068a437"),
        RemoteFile(f"{_HIPPORAG}/hotpotqa_train_corpus.json", "hipporag_hotpotqa/hotpotqa_train_corpus.json", "30c554d79d6a"),
        RemoteFile(f"{_HIPPORAG}/musique_train.json", "hipporag_musique/musique_train.json", "9e22c28d3d77"),
        RemoteFile(f"{_HIPPORAG}/musique_train_corpus.json", "hipporag_musique/musique_train_corpus.json", "d9019eedea1a"),
    ),
    manual_files=(
        *_QUESTION_FILES,
        ManualFile(f"{_WIKI18}/wiki-18-corpus/resolve/main/wiki-18.jsonl.gz", WIKI18_CORPUS, rows=WIKI18_PASSAGES,
                   note="Search-R1's Wikipedia-2018 corpus; gunzip it there"),
        ManualFile(f"{_WIKI18}/wiki-18-e5-index/resolve/main/part_aa (and part_ab)", E5_INDEX,
                   note="only for retriever='e5': cat part_aa part_ab > e5_Flat.index; also place "
                        f"https://huggingface.co/intfloat/e5-base-v2 in searchqa/{E5_MODEL_DIR}/"),
    ),
    known_blobs={
        "hipporag_hotpotqa/hotpotqa_train.json": "7dbdf068a437",
        "hipporag_hotpotqa/hotpotqa_train_corpus.json": "30c554d79d6a",
        "hipporag_musique/musique_train.json": "9e22c28d3d77",
        "hipporag_musique/musique_train_corpus.json": "d9019eedea1a",
    },
    required=("hipporag_hotpotqa/hotpotqa_train.json", "hipporag_hotpotqa/hotpotqa_train_corpus.json"),
)
"""Where SearchQA's files come from; the default dataset of SearchQA-v0 (HippoRAG's HotpotQA) is what
``agentgym list`` requires."""

SEARCH_R1_SOURCE = replace(
    SOURCE,
    required=(*(f"{FLASHRAG_DIR}/{rel}" for rel, _ in SEARCH_R1_TEST.values()), WIKI18_CORPUS),
)
"""The same files, with what SearchR1-v0's default (Search-R1's evaluation sets over Wikipedia-2018
with local BM25) needs."""
