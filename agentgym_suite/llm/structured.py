"""Structured decoding of the simulator's output contract, as a ``transformers`` logits processor.

:class:`ExecutionResultConstraint` makes every generation of a row read::

    <execution_result>
    {"a non-empty": "JSON object"}          (or a non-empty JSON array)
    </execution_result>

followed by the end-of-sequence token. The wrapper's two lines are forced token by token;
in between, each step keeps only tokens that extend a valid JSON prefix, as judged by a
character-level pushdown automaton (:class:`JsonPrefix`). The model still chooses: only the
``top_k`` most likely tokens are checked, best first, and the valid ones keep their scores.
When none of them is valid, or when the token budget is about to run out, the shortest
completion of the JSON (close the string, give a pending value ``0``, close the containers)
is forced instead, so a generation meets the contract within ``max_new_tokens`` whenever the
budget holds the shortest contract text (:func:`minimum_tokens`).

Kept compact for small models: strings are at most ``max_string`` characters, keys are not
empty, containers at most ``max_depth`` deep, whitespace is a single space, and ``<`` never occurs in a string (it
could start a tag). The optional ``<think>`` block of the contract is not generated.

A backend applies it when ``SamplingParams.structured == "execution_result"``. The mask
changes the sampling distribution, and the recorded log-probs are those of the masked
distribution; train on unconstrained generations (the simulator's training sampling leaves
it off).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import torch

EXECUTION_RESULT = "execution_result"
"""``SamplingParams.structured`` value selecting :class:`ExecutionResultConstraint`."""
PREFIX = "<execution_result>\n"
SUFFIX = "\n</execution_result>"

_DIGITS = "0123456789"
_ESCAPES = '"\\/bfnrtu'
_HEX = "0123456789abcdefABCDEF"


@dataclass
class JsonPrefix:
    """A character-level JSON recogniser for a non-empty top-level object or array.

    ``feed(ch)`` returns False (and leaves the state unusable) when ``ch`` cannot extend a
    valid prefix; :attr:`done` is True once the top-level value is complete.
    """

    max_depth: int = 4
    max_string: int = 48
    max_number: int = 10
    stack: list[str] = field(default_factory=list)
    mode: str = "top"
    key: bool = False
    """The open string is an object key."""
    length: int = 0
    """Characters in the open string or number."""
    pending: str = ""
    """Rest of an open literal (``true``, ``false``, ``null``), or hex digits left in ``\\u``."""
    space: bool = False
    """The last character was a space (no two in a row)."""

    def copy(self) -> JsonPrefix:
        """An independent copy."""
        return JsonPrefix(self.max_depth, self.max_string, self.max_number, list(self.stack), self.mode, self.key,
                          self.length, self.pending, self.space)

    @property
    def done(self) -> bool:
        """The top-level value is complete."""
        return self.mode == "done"

    def feed_text(self, text: str) -> bool:
        """Feed every character; False at the first that cannot extend a valid prefix."""
        return all(self.feed(ch) for ch in text)

    # ------------------------------------------------------------------ transitions
    def feed(self, ch: str) -> bool:
        """Consume one character."""
        mode = self.mode
        if mode == "string":
            return self._string(ch)
        if mode == "escape":
            if ch not in _ESCAPES:
                return False
            self.mode, self.pending = ("unicode", "xxxx") if ch == "u" else ("string", "")
            self.length += 1
            return True
        if mode == "unicode":
            if ch not in _HEX:
                return False
            self.pending = self.pending[1:]
            self.mode = "unicode" if self.pending else "string"
            return True
        if mode == "literal":
            if not self.pending or ch != self.pending[0]:
                return False
            self.pending = self.pending[1:]
            if not self.pending:
                self._value_done()
            return True
        if mode.startswith("number"):
            if self._number(ch):
                return True
            if mode not in ("number_zero", "number_int", "number_frac", "number_exp_digits"):
                return False
            self._value_done()
            return self.feed(ch)
        if ch == " ":
            if self.space or mode in ("top", "done"):
                return False
            self.space = True
            return True
        self.space = False
        if mode == "top":
            return self._open(ch)
        if mode == "done":
            return False
        if mode in ("value", "array_first"):
            if mode == "array_first" and ch == "]":
                if len(self.stack) == 1:
                    return False  # the top-level array must not be empty
                return self._close("a")
            return self._value(ch)
        if mode in ("key", "object_first"):
            if mode == "object_first" and ch == "}":
                if len(self.stack) == 1:
                    return False  # the top-level object must not be empty
                return self._close("o")
            if ch != '"':
                return False
            self.mode, self.key, self.length = "string", True, 0
            return True
        if mode == "colon":
            if ch != ":":
                return False
            self.mode = "value"
            return True
        if mode == "after":
            top = self.stack[-1]
            if ch == ",":
                self.mode = "key" if top == "o" else "value"
                return True
            return self._close(top) if ch == ("}" if top == "o" else "]") else False
        return False

    def _open(self, ch: str) -> bool:
        if ch not in "{[" or len(self.stack) >= self.max_depth:
            return False
        self.stack.append("o" if ch == "{" else "a")
        self.mode = "object_first" if ch == "{" else "array_first"
        return True

    def _close(self, kind: str) -> bool:
        if not self.stack or self.stack[-1] != kind:
            return False
        self.stack.pop()
        self._value_done()
        return True

    def _value(self, ch: str) -> bool:
        if ch in "{[":
            return self._open(ch)
        if ch == '"':
            self.mode, self.key, self.length = "string", False, 0
            return True
        if ch == "-" or ch in _DIGITS:
            self.mode, self.length = ("number_sign" if ch == "-" else "number_zero" if ch == "0" else "number_int"), 1
            return True
        for word in ("true", "false", "null"):
            if ch == word[0]:
                self.mode, self.pending = "literal", word[1:]
                return True
        return False

    def _value_done(self) -> None:
        self.mode = "after" if self.stack else "done"

    def _string(self, ch: str) -> bool:
        if ch == '"':
            if self.key and self.length == 0:
                return False  # no empty keys: a small model otherwise settles on {"": 0}
            if self.key:
                self.mode = "colon"
            else:
                self._value_done()
            return True
        if ch < " " or ch == "<" or self.length >= self.max_string:
            return False
        if ch == "\\":
            self.mode = "escape"
            return True
        self.length += 1
        return True

    def _number(self, ch: str) -> bool:
        mode, digit = self.mode, ch in _DIGITS
        if self.length >= self.max_number and (digit or ch in ".eE+-"):
            return False
        nxt = None
        if mode == "number_sign":
            nxt = "number_zero" if ch == "0" else "number_int" if digit else None
        elif mode == "number_zero":
            nxt = "number_dot" if ch == "." else "number_exp" if ch in "eE" else None
        elif mode == "number_int":
            nxt = "number_int" if digit else "number_dot" if ch == "." else "number_exp" if ch in "eE" else None
        elif mode == "number_dot":
            nxt = "number_frac" if digit else None
        elif mode == "number_frac":
            nxt = "number_frac" if digit else "number_exp" if ch in "eE" else None
        elif mode == "number_exp":
            nxt = "number_exp_sign" if ch in "+-" else "number_exp_digits" if digit else None
        elif mode in ("number_exp_sign", "number_exp_digits"):
            nxt = "number_exp_digits" if digit else None
        if nxt is None:
            return False
        self.mode = nxt
        self.length += 1
        return True

    # ------------------------------------------------------------------ shortest completion
    def completion(self) -> str:
        """The shortest text that completes the top-level value from this state."""
        mode, out = self.mode, ""
        if mode == "done":
            return ""
        if mode == "top":
            return '{"result":0}'
        if mode == "unicode":
            out += "0" * len(self.pending)
            mode = "string"
        if mode == "escape":
            out += "n"
            mode = "string"
        if mode == "string":
            out += ('k"' if self.key and self.length == 0 else '"')
            mode = "colon" if self.key else "after"
        if mode == "literal":
            out += self.pending
            mode = "after"
        if mode.startswith("number"):
            if mode in ("number_sign", "number_dot", "number_exp", "number_exp_sign"):
                out += "0"
            mode = "after"
        depth = len(self.stack)
        if mode == "object_first":
            out += '"result":0' if depth == 1 else ""
        elif mode == "array_first":
            out += "0" if depth == 1 else ""
        elif mode == "key":
            out += '"result":0'
        elif mode == "colon":
            out += ":0"
        elif mode == "value":
            out += "0"
        return out + "".join("}" if kind == "o" else "]" for kind in reversed(self.stack))


def minimum_tokens(tokenizer: Any) -> int:
    """Tokens of the shortest contract text (``{"result":0}`` wrapped) plus the end token."""
    return len(tokenizer.encode(PREFIX + '{"result":0}' + SUFFIX, add_special_tokens=False)) + 1


# ---------------------------------------------------------------------- logits processor
@dataclass
class _Row:
    text: str = ""
    json: JsonPrefix = field(default_factory=JsonPrefix)
    consumed: int = 0
    """Characters of the body fed to ``json``."""
    broken: bool = False


class ExecutionResultConstraint:
    """Mask the logits of each row so its generation meets the simulator's output contract.

    Args:
        tokenizer: the backend's tokenizer (``decode`` and ``encode``).
        eos_token_id: the token forced once the closing tag is written.
        prompt_width: length of the (left-padded) prompt rows, so generated tokens can be told apart.
        max_new_tokens: the generation budget; the JSON is closed in time to fit it.
        top_k: most likely tokens checked per step.
    """

    def __init__(self, tokenizer: Any, eos_token_id: int, prompt_width: int, max_new_tokens: int, *, top_k: int = 48,
                 special_ids: Sequence[int] = ()) -> None:
        self.tokenizer = tokenizer
        self.eos = int(eos_token_id)
        self.width = int(prompt_width)
        self.budget = int(max_new_tokens)
        self.top_k = int(top_k)
        self.special = set(int(i) for i in special_ids) | {self.eos}
        self._rows: list[_Row] = []
        self._pieces: dict[int, str] = {}
        self._encoded: dict[str, int] = {}
        self.forced_steps = 0
        self.free_steps = 0

    def _piece(self, token: int) -> str:
        if token not in self._pieces:
            self._pieces[token] = "\0" if token in self.special else self.tokenizer.decode([token])
        return self._pieces[token]

    def _first_token(self, text: str) -> int:
        if text not in self._encoded:
            ids = self.tokenizer.encode(text, add_special_tokens=False)
            self._encoded[text] = int(ids[0]) if ids else self.eos
        return self._encoded[text]

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        rows, steps = input_ids.shape[0], input_ids.shape[1] - self.width
        if not self._rows:
            self._rows = [_Row() for _ in range(rows)]
        out = torch.full_like(scores, float("-inf"))
        for i in range(rows):
            generated = input_ids[i, self.width:].tolist()
            if generated and generated[-1] == self.eos:  # finished row: keep padding with eos
                out[i, self.eos] = 0.0
                continue
            row = self._update(self._rows[i], generated)
            allowed = self._allowed(row, scores[i], self.budget - steps)
            out[i, allowed] = scores[i, allowed]
        return out

    def _update(self, row: _Row, generated: list[int]) -> _Row:
        text = self.tokenizer.decode(generated) if generated else ""
        if not text.startswith(row.text) or row.broken:
            row.json, row.consumed, row.broken = JsonPrefix(), 0, False
        row.text = text
        body = text[len(PREFIX):] if text.startswith(PREFIX) else ""
        tail = body[row.consumed:]
        for ch in tail:
            if row.json.done:
                break
            if not row.json.feed(ch):
                row.broken = True
                break
            row.consumed += 1
        return row

    def _allowed(self, row: _Row, scores: torch.Tensor, left: int) -> list[int]:
        text = row.text
        if len(text) < len(PREFIX) or not text.startswith(PREFIX):
            return self._force(PREFIX[len(text):] if PREFIX.startswith(text) else PREFIX)
        state = row.json
        if state.done or row.broken:
            after = text[len(PREFIX) + row.consumed:]
            rest = SUFFIX[len(after):] if SUFFIX.startswith(after) else ""
            return self._force(rest) if rest else [self.eos]
        closing = state.completion() + SUFFIX
        need = self._tokens(closing) + 1
        if left <= need:
            return self._force(closing)
        candidates = torch.topk(scores, min(self.top_k, scores.shape[-1])).indices.tolist()
        valid = [t for t in candidates if scores[t] > float("-inf") and self._extends(state, self._piece(t))]
        if left <= need + 8:  # near the end: keep only tokens after which the closing still fits
            valid = [t for t in valid if self._fits(state, self._piece(t), left - 1)]
        if valid:
            self.free_steps += 1
            return valid
        return self._force(closing)

    def _tokens(self, text: str) -> int:
        return len(self.tokenizer.encode(text, add_special_tokens=False))

    def _fits(self, state: JsonPrefix, piece: str, left: int) -> bool:
        probe = state.copy()
        for k, ch in enumerate(piece):
            if probe.done:
                rest = SUFFIX[len(piece) - k:]
                return self._tokens(rest) + 1 <= left if rest else left >= 1
            probe.feed(ch)
        return self._tokens(probe.completion() + SUFFIX) + 1 <= left

    def _force(self, text: str) -> list[int]:
        self.forced_steps += 1
        return [self._first_token(text)]

    @staticmethod
    def _extends(state: JsonPrefix, piece: str) -> bool:
        if not piece or "\0" in piece or "\ufffd" in piece:
            return False
        probe = state.copy()
        for k, ch in enumerate(piece):
            if probe.done:
                return SUFFIX.startswith(piece[k:])
            if not probe.feed(ch):
                return False
        return True
