"""Pieces that several benchmark packages use: the one module benchmark packages share.

A benchmark package (``envs/<benchmark>/``) imports from ``core``, ``llm``, ``registration`` and
this package, never from another benchmark package (``tests/test_layers.py`` checks it):

* :mod:`.textworld_engine` — the base of envs played on the TextWorld engine (TextWorld, ALFWorld);
* :mod:`.checklists` — EnvACE's per-turn checklists and their judge (rehearsal, checklist tools);
* :mod:`.canonical_json` — canonical JSON text for comparing tool arguments and results;
* :mod:`.bm25_index` — the BM25 index behind passage and document search;
* :mod:`.lucene_bm25`, :mod:`.porter_stemmer` — BM25 scored and tokenised as Lucene (Pyserini) does, for WebShop's search;
* :mod:`.chat_models` — language models that play users and judges (τ², VitaBench);
* :mod:`.text_overlap` — content words, for scripted users.
"""
