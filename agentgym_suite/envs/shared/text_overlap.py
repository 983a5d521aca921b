"""Content words of a text: what the scripted users compare to tell which request a message is about."""

from __future__ import annotations

import re

_WORD = re.compile(r"[a-z0-9_#@.\-]+")
_STOPWORDS = frozenset(
    "the a an and or but to of in on at for with from by is are was were be been am do does did have has had you your "
    "yours i me my mine we our it its this that these those can could would should will shall may might please what "
    "which who whom whose when where why how there here any some all not no yes if then than so as about into also "
    "just let know tell give need want like get".split())


def content_words(text: str) -> set[str]:
    """Lower-case words of ``text`` without stop words, with a plural/tense ending trimmed."""
    words = set()
    for word in _WORD.findall(text.lower()):
        word = word.strip(".-")
        if len(word) < 3 or word in _STOPWORDS:
            continue
        for suffix in ("ing", "ed", "es", "s"):
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                word = word[: -len(suffix)]
                break
        words.add(word)
    return words
