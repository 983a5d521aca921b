"""The Porter stemmer as Lucene's ``PorterStemmer`` (and Martin Porter's own C/Java code) applies it.

Porter (1980), "An algorithm for suffix stripping", with the three points where Porter's reference
implementations depart from the paper, which Lucene keeps: ``bli`` -> ``ble`` (instead of ``abli`` ->
``able``) and ``logi`` -> ``log`` in step 2, and words of one or two characters left alone.
NLTK's ``PorterStemmer(mode=MARTIN_EXTENSIONS)`` implements the same variant; it is not used
because importing NLTK takes seconds (it loads SciPy), paid by every process that builds a
WebShop index. ``tests/conformance/test_webshop.py`` checks the result against Lucene's analyzer.
"""

from __future__ import annotations

from functools import lru_cache

_VOWELS = frozenset("aeiou")

# Step 2 and step 3 rules, grouped the way the reference code dispatches on one letter: only the
# first suffix of a group that the word ends with is tried, even when its measure condition fails.
_STEP2 = {
    "a": (("ational", "ate"), ("tional", "tion")),
    "c": (("enci", "ence"), ("anci", "ance")),
    "e": (("izer", "ize"),),
    "l": (("bli", "ble"), ("alli", "al"), ("entli", "ent"), ("eli", "e"), ("ousli", "ous")),
    "o": (("ization", "ize"), ("ation", "ate"), ("ator", "ate")),
    "s": (("alism", "al"), ("iveness", "ive"), ("fulness", "ful"), ("ousness", "ous")),
    "t": (("aliti", "al"), ("iviti", "ive"), ("biliti", "ble")),
    "g": (("logi", "log"),),
}
_STEP3 = {
    "e": (("icate", "ic"), ("ative", ""), ("alize", "al")),
    "i": (("iciti", "ic"),),
    "l": (("ical", "ic"), ("ful", "")),
    "s": (("ness", ""),),
}
_STEP4 = {
    "a": ("al",), "c": ("ance", "ence"), "e": ("er",), "i": ("ic",), "l": ("able", "ible"),
    "n": ("ant", "ement", "ment", "ent"), "o": ("ion", "ou"), "s": ("ism",), "t": ("ate", "iti"),
    "u": ("ous",), "v": ("ive",), "z": ("ize",),
}


class _Word:
    """A word being stemmed: ``b[:k + 1]`` is the current word, ``j`` marks where a suffix starts."""

    def __init__(self, word: str) -> None:
        self.b = list(word)
        self.k = len(word) - 1
        self.j = 0

    def cons(self, i: int) -> bool:
        char = self.b[i]
        if char in _VOWELS:
            return False
        if char == "y":
            return True if i == 0 else not self.cons(i - 1)
        return True

    def measure(self) -> int:
        """Porter's m: the number of vowel-consonant sequences in ``b[:j + 1]``."""
        n, i, j = 0, 0, self.j
        while True:
            if i > j:
                return n
            if not self.cons(i):
                break
            i += 1
        i += 1
        while True:
            while True:
                if i > j:
                    return n
                if self.cons(i):
                    break
                i += 1
            i += 1
            n += 1
            while True:
                if i > j:
                    return n
                if not self.cons(i):
                    break
                i += 1
            i += 1

    def vowel_in_stem(self) -> bool:
        return any(not self.cons(i) for i in range(self.j + 1))

    def double_consonant(self, i: int) -> bool:
        return i >= 1 and self.b[i] == self.b[i - 1] and self.cons(i)

    def cvc(self, i: int) -> bool:
        if i < 2 or not self.cons(i) or self.cons(i - 1) or not self.cons(i - 2):
            return False
        return self.b[i] not in "wxy"

    def ends(self, suffix: str) -> bool:
        length = len(suffix)
        if length > self.k + 1 or "".join(self.b[self.k - length + 1:self.k + 1]) != suffix:
            return False
        self.j = self.k - length
        return True

    def set_to(self, suffix: str) -> None:
        start = self.j + 1
        self.b[start:self.k + 1] = list(suffix)
        self.k = self.j + len(suffix)

    def replace_if_measured(self, suffix: str) -> None:
        if self.measure() > 0:
            self.set_to(suffix)

    def step1ab(self) -> None:
        b = self.b
        if b[self.k] == "s":
            if self.ends("sses"):
                self.k -= 2
            elif self.ends("ies"):
                self.set_to("i")
            elif b[self.k - 1] != "s":
                self.k -= 1
        if self.ends("eed"):
            if self.measure() > 0:
                self.k -= 1
        elif (self.ends("ed") or self.ends("ing")) and self.vowel_in_stem():
            self.k = self.j
            if self.ends("at"):
                self.set_to("ate")
            elif self.ends("bl"):
                self.set_to("ble")
            elif self.ends("iz"):
                self.set_to("ize")
            elif self.double_consonant(self.k):
                if b[self.k] not in "lsz":
                    self.k -= 1
            elif self.measure() == 1 and self.cvc(self.k):
                self.set_to("e")

    def step1c(self) -> None:
        if self.ends("y") and self.vowel_in_stem():
            self.b[self.k] = "i"

    def step_rules(self, rules: dict[str, tuple[tuple[str, str], ...]], offset: int) -> None:
        if self.k - offset < 0:
            return
        for suffix, replacement in rules.get(self.b[self.k - offset], ()):
            if self.ends(suffix):
                self.replace_if_measured(replacement)
                return

    def step4(self) -> None:
        if self.k < 1:
            return
        for suffix in _STEP4.get(self.b[self.k - 1], ()):
            if self.ends(suffix):
                if suffix == "ion" and not (self.j >= 0 and self.b[self.j] in "st"):
                    continue
                if self.measure() > 1:
                    self.k = self.j
                return

    def step5(self) -> None:
        self.j = self.k
        if self.b[self.k] == "e":
            measure = self.measure()
            if measure > 1 or (measure == 1 and not self.cvc(self.k - 1)):
                self.k -= 1
        if self.b[self.k] == "l" and self.double_consonant(self.k) and self.measure() > 1:
            self.k -= 1

    def result(self) -> str:
        return "".join(self.b[:self.k + 1])


@lru_cache(maxsize=200_000)
def porter_stem(word: str) -> str:
    """The Porter stem of a lower-cased ``word``, as Lucene's ``PorterStemFilter`` gives it."""
    if len(word) <= 2:
        return word
    state = _Word(word)
    state.step1ab()
    if state.k > 0:
        state.step1c()
        state.step_rules(_STEP2, 1)
        state.step_rules(_STEP3, 0)
        state.step4()
        state.step5()
    return state.result()
