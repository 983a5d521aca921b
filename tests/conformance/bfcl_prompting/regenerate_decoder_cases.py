"""Regenerate ``decoder_cases.json``: bfcl-eval's prompting decoder run on fixed and random call lists.

Not run by pytest. Run it with a Python that has the upstream package (bfcl-eval==2026.3.23 from
PyPI, with tenacity, tree_sitter==0.21.3, tree-sitter-java==0.21.0, tree-sitter-javascript==0.21.4,
filelock, python-dotenv; ``--no-deps`` is enough)::

    /work/scratch/bfclp/bin/python tests/conformance/bfcl_prompting/regenerate_decoder_cases.py

For every input it records what ``bfcl_eval.model_handler.utils.default_decode_ast_prompting``
returns (values tagged so that tuples, bytes, complex numbers and non-string dict keys survive
JSON) or that it raised. The random inputs are drawn from a small grammar with a fixed seed and
hold only literal arithmetic, so upstream's ``eval`` of arithmetic runs on nothing but numbers
this script wrote.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from bfcl_eval.model_handler.utils import default_decode_ast_prompting

UPSTREAM = {"package": "bfcl-eval", "version": "2026.3.23", "function": "model_handler.utils.default_decode_ast_prompting"}
OUT = Path(__file__).with_name("decoder_cases.json")

FIXED = [
    "[cd(folder='document')]",
    "[a.b(x=1), c(y=[1, 2])]",
    "cd(folder='document')",
    "```\n[f(a=1)]\n```",
    "[f(a={1, 2})]",
    "[f(a=b'x')]",
    "[f(a=1j)]",
    "[f(a={(1, 2): 3})]",
    "[f(a={1: 'x'})]",
    "[f(a=(1, 2), b=(), c=[(1,), {'k': (2, 3)}])]",
    "[f(unit=celsius)]",
    "[f(x=open('a'))]",
    "[f(x=g(h=1, i=[2]))]",
    "[f(x=a[0], y=d['k'])]",
    "[f(x=...)]",
    "[f(a=-1, b=-2.5, c=-0)]",
    "[f(a=True, b=None, c=False)]",
    "[f(a=2*3, b='a'+'b', c=[1]+[2], d=2**10, e=1+2j, f=10/4, g=7//2, h=7%3)]",
    "[f(a=x+1)]",
    "[f(a=f'{x}')]",
    "[f(a=[i for i in range(3)])]",
    "[f(a=lambda: 1)]",
    "[f(a=1 < 2)]",
    "[f(a=1 if x else 2)]",
    "[f(a=x and y)]",
    "[f(a={**d})]",
    "[f(a=[*xs])]",
    "[]",
    "I moved the file.",
    "Yes",
    "[1, 2]",
    "[f(a=1), 'text']",
    "[f(a=1)] and more",
    "[f(a=1, a=2)]",
    "[f(a='\\ud800')]",
    "[f(a=1e999)]",
    "[f(a=[[[[[[1]]]]]])]",
    "[f(a='x'), g(b={'n': [1, 2.5, 'z', None]})]",
]
"""Hand-picked inputs: the holes the reliability issue found, each kind of node upstream reads, and
each kind it refuses."""

DEPARTURES = {
    "[f(1)]": "positional arguments: upstream drops them without a word (the env now does too)",
    "[f(**{'a': 1})]": "** arguments: upstream keeps them under the key None (the env shows the call as an error)",
    "[__import__('os').system('ls')]": "a callee that is not a dotted name: upstream keeps its last attribute (so does the env)",
    "```python\n[f(a=1)]\n```": "a fenced block tagged python: upstream fails on the tag (so does the env)",
    "[f(a=len('ab') + 1)]": "arithmetic on a call: upstream runs it with eval; the env's guard refuses it (the one departure)",
    "[f(a=+5)]": "unary plus: upstream negates the number (so does the env)",
    "[f(a=not True)]": "'not': upstream reads it as a minus sign, -1 (so does the env)",
}
"""Inputs where the suite's own decoder used to depart from upstream; the env now decodes them with
upstream's decoder, except arithmetic on a call, which its guard keeps from ``eval``."""


# ---------------------------------------------------------------------------- random inputs
def _constant(rng: random.Random) -> str:
    return rng.choice(["0", "1", "-3", "2.5", "-0.5", "1e3", "'a'", '"b c"', "''", "True", "False", "None",
                       "b'x'", "1j", "...", "'\\n'", "'é'", "12345678901234567890"])


def _value(rng: random.Random, depth: int) -> str:
    if depth <= 0:
        return _constant(rng)
    kind = rng.choice(["constant"] * 4 + ["list", "tuple", "dict"] * 2 + ["name", "call", "kwcall", "subscript", "arith",
                                                                       "neg"] + (["set", "fstring", "comp", "compare"]
                                                                                 if rng.random() < 0.3 else []))
    inner = lambda: _value(rng, depth - 1)  # noqa: E731
    items = lambda: ", ".join(inner() for _ in range(rng.randint(0, 3)))  # noqa: E731
    if kind == "constant":
        return _constant(rng)
    if kind == "list":
        return f"[{items()}]"
    if kind == "tuple":
        body = items()
        return f"({body},)" if body else "()"
    if kind == "dict":
        key = rng.choice(["'k'", "'m'", "1", "(1, 2)", "None", "'x y'"])
        return "{" + ", ".join(f"{key[:-1]}{i}': {inner()}" if key.startswith("'") else f"{key}: {inner()}"
                               for i in range(rng.randint(0, 2))) + "}"
    if kind == "set":
        return "{" + _constant(rng) + "}"
    if kind == "name":
        return rng.choice(["celsius", "x", "sort_by_date"])
    if kind == "call":
        return f"g({_constant(rng)})"
    if kind == "kwcall":
        return f"g(h={inner()})"
    if kind == "subscript":
        return f"arr[{rng.randint(0, 3)}]"
    if kind == "arith":
        return rng.choice(["2*3", "1+2j", "'a'+'b'", "[1]+[2]", "7//2", "2**5", "1.5-0.5", "(1,)*2"])
    if kind == "neg":
        return "-" + rng.choice(["1", "2.5", "1j"])
    if kind == "fstring":
        return "f'{1}'"
    if kind == "comp":
        return "[i for i in (1, 2)]"
    return "1 < 2"


def random_inputs(n: int, seed: int = 29) -> list[str]:
    """``n`` call lists from the grammar above (fixed ``seed``), some with brackets or names left off."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        calls = []
        for _ in range(rng.randint(1, 3)):
            name = rng.choice(["f", "cd", "a.b", "math.sqrt"])
            args = ", ".join(f"{k}={_value(rng, rng.randint(0, 3))}" for k in rng.sample(["a", "b", "c", "d"], rng.randint(0, 3)))
            calls.append(f"{name}({args})")
        text = "[" + ", ".join(calls) + "]"
        if rng.random() < 0.1:
            text = text[1:-1]
        out.append(text)
    return out


# ---------------------------------------------------------------------------- tagged values
def tag(value: Any) -> Any:
    """``value`` as JSON with tags for what JSON cannot hold (Python's json keeps lone surrogates and
    infinities as they are)."""
    if isinstance(value, tuple):
        return {"__tuple__": [tag(v) for v in value]}
    if isinstance(value, list):
        return [tag(v) for v in value]
    if isinstance(value, bytes):
        return {"__bytes__": value.decode("latin-1")}
    if isinstance(value, complex):
        return {"__complex__": [value.real, value.imag]}
    if isinstance(value, dict):
        return {"__dict__": [[tag(k), tag(v)] for k, v in value.items()]}
    return value


def run(text: str) -> dict[str, Any]:
    try:
        decoded = default_decode_ast_prompting(text)
    except BaseException as exc:  # noqa: BLE001  (any failure is a decode failure upstream)
        return {"text": text, "decoded": False, "error": type(exc).__name__}
    return {"text": text, "decoded": True, "calls": [tag(call) for call in decoded]}


def main() -> None:
    cases = [run(t) for t in FIXED] + [run(t) for t in random_inputs(400)]
    departures = [{**run(t), "departure": why} for t, why in DEPARTURES.items()]
    rows = lambda items: ",\n".join(json.dumps(item, ensure_ascii=True) for item in items)  # noqa: E731
    OUT.write_text(f'{{"upstream": {json.dumps(UPSTREAM)},\n"cases": [\n{rows(cases)}\n],\n'
                   f'"departures": [\n{rows(departures)}\n]}}\n', encoding="utf-8")
    print(f"wrote {len(cases)} cases and {len(departures)} departures to {OUT}")


if __name__ == "__main__":
    main()
