"""Search-R1's dense retriever: e5-base-v2 embeddings searched in a flat inner-product FAISS index.

As Search-R1's ``retrieval_server.py`` and ``index_builder.py`` do it: queries are encoded as
``"query: <text>"`` and passages as ``"passage: <contents>"`` (at most 256 and 180 tokens), the
last hidden states are mean-pooled over the attention mask and L2-normalised, and the index
(``IndexFlatIP`` over the corpus in file order) returns the top-k inner products.

The published index over Wikipedia-2018 (``e5_Flat.index``, 61 GiB) and the model are placed by
hand (``agentgym data fetch searchqa`` says where); :func:`build_e5_index` builds an index for
any corpus in Search-R1's format with a local model folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from agentgym_suite.core.errors import missing_backend
from agentgym_suite.envs.searchqa.corpus import JsonlCorpus
from agentgym_suite.envs.searchqa.retrievers import Passage, RetrievalError

QUERY_MAX_TOKENS = 256
PASSAGE_MAX_TOKENS = 180


class E5Encoder:
    """Mean-pooled, normalised embeddings of an e5 model read from a local folder."""

    def __init__(self, model_path: str | Path, *, device: str = "cpu") -> None:
        try:
            import torch
            from transformers import AutoModel, AutoTokenizer
        except ImportError as exc:
            raise missing_backend("transformers", "transformers") from exc
        path = Path(model_path)
        if not path.is_dir():
            raise FileNotFoundError(f"e5 model folder {path} not found; place intfloat/e5-base-v2 there "
                                    "(`agentgym data fetch searchqa` says how).")
        self._torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(str(path))
        self.model = AutoModel.from_pretrained(str(path)).to(device)
        self.model.eval()
        self.device = device

    def encode(self, texts: Sequence[str], *, prefix: str, max_length: int) -> Any:
        """Float32 array (len(texts), hidden) of unit vectors for ``prefix + text``."""
        torch = self._torch
        batch = self.tokenizer([f"{prefix}{t}" for t in texts], max_length=max_length, padding=True,
                               truncation=True, return_tensors="pt").to(self.device)
        with torch.no_grad():
            hidden = self.model(**batch, return_dict=True).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1)
        return torch.nn.functional.normalize(pooled, dim=-1).float().cpu().numpy()

    def queries(self, texts: Sequence[str]) -> Any:
        return self.encode(texts, prefix="query: ", max_length=QUERY_MAX_TOKENS)

    def passages(self, texts: Sequence[str]) -> Any:
        return self.encode(texts, prefix="passage: ", max_length=PASSAGE_MAX_TOKENS)


def _faiss() -> Any:
    try:
        import faiss
    except ImportError as exc:
        raise missing_backend("faiss", "searchqa-dense") from exc
    return faiss


def build_e5_index(model_path: str | Path, corpus: JsonlCorpus, out: str | Path, *, batch_size: int = 64) -> Path:
    """Encode every passage of ``corpus`` and write a flat inner-product FAISS index to ``out``."""
    faiss = _faiss()
    encoder = E5Encoder(model_path)
    index = None
    batch: list[str] = []

    def flush() -> None:
        nonlocal index
        vectors = encoder.passages(batch)
        if index is None:
            index = faiss.IndexFlatIP(vectors.shape[1])
        index.add(vectors)
        batch.clear()

    for contents in corpus.iter_contents():
        batch.append(contents)
        if len(batch) == batch_size:
            flush()
    if batch:
        flush()
    if index is None:
        raise ValueError(f"corpus {corpus.path} holds no passages.")
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    faiss.write_index(index, str(out))
    return Path(out)


class E5Retriever:
    """Dense retrieval as Search-R1's retrieval server does it (see the module docstring).

    Args:
        model_path: local folder of ``intfloat/e5-base-v2`` (or any e5 model).
        index_path: FAISS index over ``corpus`` in file order.
        corpus: the passages the index's rows stand for.
        device: torch device of the encoder.
    """

    def __init__(self, model_path: str | Path, index_path: str | Path, corpus: JsonlCorpus, *, device: str = "cpu") -> None:
        faiss = _faiss()
        if not Path(index_path).exists():
            raise FileNotFoundError(f"FAISS index {index_path} not found; `agentgym data fetch searchqa` says where to get it.")
        self.index = faiss.read_index(str(index_path))
        if self.index.ntotal != len(corpus):
            raise ValueError(f"the index holds {self.index.ntotal} vectors but the corpus {corpus.path} has "
                             f"{len(corpus)} passages; they must be the same corpus in the same order.")
        self.corpus = corpus
        self.encoder = E5Encoder(model_path, device=device)

    def search(self, query: str, topk: int) -> list[Passage]:
        try:
            scores, rows = self.index.search(self.encoder.queries([query]), int(topk))
        except Exception as err:  # faiss and torch raise plain errors
            raise RetrievalError(f"dense retrieval failed ({err})") from err
        return [self.corpus.passage(int(r), float(s)) for r, s in zip(rows[0], scores[0]) if r >= 0]
