"""Rank fixed queries with Pyserini as WebShop does and write ``expected_search.json``.

Not run by pytest. WebShop (``UPSTREAM_COMMIT``) indexes its products with
``python -m pyserini.index.lucene --collection JsonCollection --generator
DefaultLuceneDocumentGenerator --threads 1 --storePositions --storeDocvectors --storeRaw``
(``search_engine/run_indexing.sh``) and searches with ``LuceneSearcher(index).search(query, k=50)``
(``web_agent_site/engine/engine.py``). This script does the same, in a scratch virtualenv with
``pyserini==0.17.0`` (WebShop's pin; Anserini 0.14.3 / Lucene 8.11 inside) and a Java runtime::

    /work/scratch/webshop/bin/pip install --no-deps pyserini==0.17.0
    /work/scratch/webshop/bin/pip install pyjnius numpy pandas tqdm requests
    JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64 PYTHONPATH=tests/conformance/webshop/pyserini_stubs \\
        /work/scratch/webshop/bin/python tests/conformance/webshop/regenerate_webshop_search.py \\
        $AGENTGYM_DATA/webshop

``pyserini_stubs/`` holds a ``sitecustomize.py`` that stubs the dense-retrieval imports (torch, faiss,
transformers, sklearn, ...) which ``pyserini.search`` imports but BM25 search never uses.

Two corpora:

* ``catalogue``: every distinct product of ``cases.json`` (the synthetic catalogue plus the
  hand-written products), each document built as WebShop's ``convert_product_file_format.py``
  builds it: title, description, first feature and the ``name: v1, v2, and name: ...`` option
  text, lower-cased; queries: the products' search queries, the goals' instructions and the
  first 300 human search queries of ``goal_query_map.json``; top 50 kept, as WebShop's results.
* ``human_goals``: the first 3,000 instructions of ``human_goals.json`` as documents (ids
  ``g00000``...), queried with the first 1,000 distinct human search queries; top 10 kept.

It also records the analyzer itself: Lucene's terms for ``ANALYZER_PROBES`` and the first 300
human goals, and the Porter stem Lucene gives every word of all 12,087 human goals.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

UPSTREAM_REPO = "princeton-nlp/WebShop"
UPSTREAM_COMMIT = "64fa2a5c15c7daa698b9ac93f5bb5437b634c9bd"
HERE = Path(__file__).resolve().parent
GOAL_DOCS = 3000
HUMAN_QUERIES = 1000
ANALYZER_PROBES = [
    "Women's U.S.A. Shoes, size 7.5 and 16oz (Pack of 2)", "don't e-mail color:black 1,000 _black_white",
    "2.4GHz Wi-Fi router; 3'' x 5'' cards", "Café crème brûlée — naïve façade", "1.8米 财48 ® ™ 😀 ½ use.⁵",
    "the quick brown foxes are jumping over lazy dogs' kennels", "iPhone 13 Pro Max case - MagSafe compatible",
    "USB-C to HDMI 4K@60Hz adapter", "kids' (ages 3-5) T-shirt XL/XXL", "Men’s running shoes",
]


def webshop_document(product: dict) -> str:
    """A product's indexed text, built the way WebShop's conversion script builds it."""
    option_text = ", and ".join(f"{name}: {', '.join(values)}" for name, values in product.get("options", {}).items())
    return " ".join([product["Title"], product["Description"], product["BulletPoints"][0], option_text]).lower()


def _human_queries(data_dir: Path, limit: int) -> list[str]:
    query_map = json.loads((data_dir / "baseline_models/data/goal_query_map.json").read_text(encoding="utf-8"))
    queries: list[str] = []
    for instruction in query_map:
        for query in query_map[instruction]:
            if query not in queries:
                queries.append(query)
    return queries[:limit]


def _rank(docs: list[dict], queries: list[str], k: int) -> dict[str, list[list]]:
    from pyserini.search.lucene import LuceneSearcher

    with tempfile.TemporaryDirectory() as scratch:
        source = Path(scratch) / "docs"
        source.mkdir()
        with (source / "documents.jsonl").open("w", encoding="utf-8") as handle:
            for doc in docs:
                handle.write(json.dumps(doc) + "\n")
        index = Path(scratch) / "index"
        subprocess.run([sys.executable, "-m", "pyserini.index.lucene", "--collection", "JsonCollection",
                        "--input", str(source), "--index", str(index), "--generator",
                        "DefaultLuceneDocumentGenerator", "--threads", "1", "--storePositions",
                        "--storeDocvectors", "--storeRaw"], check=True, capture_output=True)
        searcher = LuceneSearcher(str(index))
        return {query: [[hit.docid, round(float(hit.score), 4)] for hit in searcher.search(query, k=k)]
                for query in queries}


def _analysis(goals: list[str]) -> dict:
    from pyserini.analysis import Analyzer, get_lucene_analyzer

    analyzer = Analyzer(get_lucene_analyzer())
    unstemmed = Analyzer(get_lucene_analyzer(stemming=False, stopwords=False))
    vocabulary = sorted({term for text in goals for term in unstemmed.analyze(text)})
    stems = {}
    for start in range(0, len(vocabulary), 500):
        words = vocabulary[start:start + 500]
        stemmed = Analyzer(get_lucene_analyzer(stopwords=False)).analyze(" ".join(words))
        words_again = unstemmed.analyze(" ".join(words))
        assert len(stemmed) == len(words_again)
        stems.update(zip(words_again, stemmed))
    texts = ANALYZER_PROBES + goals[:300]
    return {"texts": {text: analyzer.analyze(text) for text in texts}, "porter_stems": stems}


def main(data_dir: str) -> None:
    data = Path(data_dir)
    cases = json.loads((HERE / "cases.json").read_text(encoding="utf-8"))
    products = {}
    for case in cases:
        if case["source"] != "unit_test":
            products.setdefault(case["product"]["asin"], case["product"])
    catalogue_docs = [{"id": asin, "contents": webshop_document(p)} for asin, p in sorted(products.items())]
    catalogue_queries = list(dict.fromkeys(
        [p["query"] for p in products.values()] + [c["goal"]["instruction_text"] for c in cases if c["kind"] == "gold"]
        + _human_queries(data, 300)))
    all_goals = json.loads((data / "baseline_models/data/human_goals.json").read_text(encoding="utf-8"))
    goals = all_goals[:GOAL_DOCS]
    goal_docs = [{"id": f"g{number:05d}", "contents": text} for number, text in enumerate(goals)]
    out = {
        "upstream": {"repo": UPSTREAM_REPO, "commit": UPSTREAM_COMMIT,
                     "code": ["search_engine/convert_product_file_format.py", "search_engine/run_indexing.sh",
                              "web_agent_site/engine/engine.py::get_top_n_product_from_keywords"]},
        "environment": {"pyserini": "0.17.0", "anserini": "0.14.3", "lucene": "8.11.0",
                        "searcher": "LuceneSearcher defaults (BM25 k1=0.9 b=0.4, default English analyzer)"},
        "generated_by": "tests/conformance/webshop/regenerate_webshop_search.py",
        "scores_note": "Pyserini's reported scores: rounded to 4 decimals, equal ones nudged apart by 1e-6 steps",
        "analyzer": _analysis(all_goals),
        "corpora": {
            "catalogue": {"documents": catalogue_docs, "k": 50,
                          "results": _rank(catalogue_docs, catalogue_queries, 50)},
            "human_goals": {"documents_from": f"baseline_models/data/human_goals.json[:{GOAL_DOCS}]",
                            "queries_from": f"baseline_models/data/goal_query_map.json (first {HUMAN_QUERIES} distinct)",
                            "k": 10, "results": _rank(goal_docs, _human_queries(data, HUMAN_QUERIES), 10)},
        },
    }
    (HERE / "expected_search.json").write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print({name: len(corpus["results"]) for name, corpus in out["corpora"].items()})


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/work/shared/data/webshop")
