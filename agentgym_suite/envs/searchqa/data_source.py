"""SearchQA's data: HippoRAG's HotpotQA and MuSiQue question files and passage corpora."""

from __future__ import annotations

from agentgym_suite.core.data_sources import DataSource, RemoteFile

_HIPPORAG = "https://raw.githubusercontent.com/OSU-NLP-Group/HippoRAG/b144c46df14cabe5f5822d8caded4bec5f709461/data"

SOURCE = DataSource(
    "searchqa",
    files=(
        RemoteFile(f"{_HIPPORAG}/hotpotqa_train.json", "hipporag_hotpotqa/hotpotqa_train.json", "7dbdf068a437"),
        RemoteFile(f"{_HIPPORAG}/hotpotqa_train_corpus.json", "hipporag_hotpotqa/hotpotqa_train_corpus.json", "30c554d79d6a"),
        RemoteFile(f"{_HIPPORAG}/musique_train.json", "hipporag_musique/musique_train.json", "9e22c28d3d77"),
        RemoteFile(f"{_HIPPORAG}/musique_train_corpus.json", "hipporag_musique/musique_train_corpus.json", "d9019eedea1a"),
    ),
    known_blobs={
        "hipporag_hotpotqa/hotpotqa_train.json": "7dbdf068a437",
        "hipporag_hotpotqa/hotpotqa_train_corpus.json": "30c554d79d6a",
        "hipporag_musique/musique_train.json": "9e22c28d3d77",
        "hipporag_musique/musique_train_corpus.json": "d9019eedea1a",
    },
    required=("hipporag_hotpotqa/hotpotqa_train.json", "hipporag_hotpotqa/hotpotqa_train_corpus.json"),
)
"""Where SearchQA's files come from; the default dataset (HotpotQA) is what the env needs."""
