"""An episode's token sequence, grown turn by turn without re-tokenising the history.

Model tokens are appended exactly as sampled. Environment turns are appended by rendering
only the new messages: the chat template is applied to a fixed two-message dummy
conversation with and without the new messages, and the difference is tokenised. The part of
the template that closes an assistant turn (``<|im_end|>\n`` in ChatML) is added as
environment tokens, minus whatever the model already produced (its end-of-turn token).
"""

from __future__ import annotations

from typing import Any

from agentgym_suite.llm.base import BackendError, Sample, TokenBackend

_MARKER = "\u2063ASSISTANT-CONTENT\u2063"
_DUMMY = [{"role": "user", "content": "\u2063USER\u2063"}, {"role": "assistant", "content": _MARKER}]


class TokenConversation:
    """Token ids, model-token mask, log-probs and turn spans of one chat episode.

    Args:
        backend: a backend with ``render_prompt``/``encode``/``decode``.
        messages: the opening messages (system, first user message).
        tools: OpenAI-format tool schemas rendered by the chat template, if any.
    """

    def __init__(self, backend: TokenBackend, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> None:
        self.backend = backend
        self.tools = tools
        first = backend.encode(backend.render_prompt(messages, tools))
        self.token_ids: list[int] = list(first)
        self.token_mask: list[int] = [0] * len(first)
        self.token_logprobs: list[float] = [0.0] * len(first)
        self.prompt_length = len(first)
        self.turn_spans: list[tuple[int, int]] = []
        base = backend.render_prompt(_DUMMY, add_generation_prompt=False)
        if _MARKER not in base:
            raise BackendError(f"{backend.name}: the chat template drops assistant content; use the 'single' prompt mode.")
        self._base = base
        self._close = base[base.rindex(_MARKER) + len(_MARKER) :]

    def add_completion(self, sample: Sample) -> tuple[int, int]:
        """Append a generation as model tokens; returns its ``[start, end)`` span."""
        start = len(self.token_ids)
        logprobs = list(sample.logprobs) + [0.0] * (len(sample.completion_ids) - len(sample.logprobs))
        self.token_ids.extend(sample.completion_ids)
        self.token_mask.extend([1] * len(sample.completion_ids))
        self.token_logprobs.extend(logprobs[: len(sample.completion_ids)])
        span = (start, len(self.token_ids))
        self.turn_spans.append(span)
        return span

    def add_messages(self, messages: list[dict[str, Any]], last_completion: list[int]) -> list[int]:
        """Append the environment's new messages plus the next generation prompt; returns their ids."""
        close = self._close
        if last_completion:
            end = self.backend.decode(last_completion[-1:], skip_special_tokens=False)
            if end and close.startswith(end) and end.strip():
                close = close[len(end) :]
        full = self.backend.render_prompt(_DUMMY + list(messages), None, add_generation_prompt=True)
        if not full.startswith(self._base):
            raise BackendError(f"{self.backend.name}: the chat template re-renders earlier turns; use the 'single' prompt mode.")
        ids = self.backend.encode(close + full[len(self._base) :])
        self.token_ids.extend(ids)
        self.token_mask.extend([0] * len(ids))
        self.token_logprobs.extend([0.0] * len(ids))
        return ids
