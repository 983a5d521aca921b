"""Search-R1's retrieval corpus format (JSONL ``{"id", "contents": "\\"Title\\"\\ntext"}``) read from
disk, and a BM25 index over it that is built once and kept in the cache directory.

Wikipedia-2018 has 21 million passages, so neither the passages nor the index are held as Python
objects: :class:`JsonlCorpus` keeps only each line's byte offset (a NumPy array, cached beside the
index) and reads a passage when it is retrieved; the BM25 index is saved with ``bm25s`` and memory-
mapped on later loads.
"""

from __future__ import annotations

import hashlib
import json
from array import array
from pathlib import Path
from typing import Iterable, Iterator

import bm25s
import numpy as np
from bm25s.tokenization import Tokenized

from agentgym_suite.core.data import cache_dir
from agentgym_suite.envs.shared.bm25_index import tokenize
from agentgym_suite.envs.searchqa.retrievers import Passage, RetrievalError


PERSIST_ABOVE_BYTES = 64 << 20
"""Corpora larger than this keep their line offsets and BM25 index in the cache directory; smaller
ones (test fixtures, samples) are indexed in memory each time."""


class JsonlCorpus:
    """Random access to the passages of a Search-R1 corpus file (one JSON object per line)."""

    def __init__(self, path: str | Path, *, cache: Path | None = None) -> None:
        self.path = Path(path)
        if not self.path.exists():
            raise FileNotFoundError(f"corpus file {self.path} not found; `agentgym data fetch searchqa` says where to get it.")
        self.persistent = cache is not None or self.path.stat().st_size > PERSIST_ABOVE_BYTES
        self.cache = cache or corpus_cache(self.path)
        offsets_file = self.cache / "offsets.npy"
        if self.persistent and offsets_file.exists():
            self.offsets = np.load(offsets_file)
        else:
            self.offsets = _line_offsets(self.path)
            if self.persistent:
                self.cache.mkdir(parents=True, exist_ok=True)
                np.save(offsets_file, self.offsets)

    def __len__(self) -> int:
        return len(self.offsets)

    def contents(self, index: int) -> str:
        """The ``contents`` field of passage ``index`` (Search-R1's ``"Title"\\ntext``)."""
        with self.path.open("rb") as handle:
            handle.seek(int(self.offsets[index]))
            return str(json.loads(handle.readline())["contents"])

    def passage(self, index: int, score: float | None = None) -> Passage:
        """Passage ``index`` with its title split off."""
        return Passage.from_contents(self.contents(index), score)

    def iter_contents(self) -> Iterator[str]:
        """Every passage's ``contents``, in file order."""
        with self.path.open(encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    yield str(json.loads(line)["contents"])


def _line_offsets(path: Path) -> np.ndarray:
    offsets = []
    position = 0
    with path.open("rb") as handle:
        for line in handle:
            if line.strip():
                offsets.append(position)
            position += len(line)
    return np.asarray(offsets, dtype=np.int64)


def corpus_cache(path: Path) -> Path:
    """The cache folder of a corpus file, keyed by its absolute path, size and modification time."""
    stat = path.stat()
    key = hashlib.sha1(f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}".encode()).hexdigest()[:16]
    return cache_dir() / "searchqa_corpus" / f"{path.stem}-{key}"


def _token_ids(texts: Iterable[str]) -> Tokenized:
    """The texts as token ids (4 bytes a token) with their vocabulary: Wikipedia-2018's two billion
    tokens as Python strings would not fit in memory."""
    vocab: dict[str, int] = {}
    ids = [array("I", [vocab.setdefault(t, len(vocab)) for t in (tokenize(text) or ["_empty_"])]) for text in texts]
    return Tokenized(ids=ids, vocab=vocab)


class CorpusBM25Retriever:
    """BM25 (the suite's tokenizer, ``bm25s`` scoring) over a :class:`JsonlCorpus`; the index is built
    on first use and memory-mapped afterwards. For Wikipedia-2018 the first build reads 21 million
    passages in one process (hours, and about 10-20 GB of memory for the token ids); later loads take
    seconds."""

    def __init__(self, corpus: JsonlCorpus) -> None:
        self.corpus = corpus
        folder = corpus.cache / "bm25"
        if corpus.persistent and (folder / "params.index.json").exists():
            self._bm25 = bm25s.BM25.load(str(folder), mmap=True, show_progress=False)
        else:
            self._bm25 = bm25s.BM25()
            self._bm25.index(_token_ids(corpus.iter_contents()), show_progress=False)
            if corpus.persistent:
                self._bm25.save(str(folder), show_progress=False)

    def search(self, query: str, topk: int) -> list[Passage]:
        tokens = tokenize(query)
        if not tokens or topk <= 0:
            return []
        try:
            docs, scores = self._bm25.retrieve([tokens], k=min(topk, len(self.corpus)), show_progress=False, n_threads=1)
        except Exception as err:  # bm25s raises plain errors on a corrupt index
            raise RetrievalError(f"the BM25 index in {self.corpus.cache} failed ({err}); delete that folder to rebuild it") from err
        return [self.corpus.passage(int(d), float(s)) for d, s in zip(docs[0], scores[0]) if s > 0]
