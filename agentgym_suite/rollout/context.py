"""History that fits a context window: the oldest exchanges leave a chat prompt first.

A chat prompt is a head — the leading system messages, the task message (the first user
message) and anything else before the model's first reply — then one exchange per turn: the
model's reply and what answered it (tool results, the env's observation, the user's next
message). :func:`fit_messages` drops whole exchanges, oldest first, until the prompt fits; the
head and the latest exchange (the state the model must answer) are always kept, and a tool
result never loses the call it answers.
"""

from __future__ import annotations

from typing import Any, Callable

Messages = list[dict[str, Any]]


def split_exchanges(messages: Messages) -> tuple[Messages, list[Messages]]:
    """``(head, exchanges)``: exchange ``k`` starts at the model's ``k``-th reply (turn ``k``)."""
    first_reply = next((i for i, m in enumerate(messages) if m.get("role") == "assistant"), len(messages))
    head = list(messages[:first_reply])
    exchanges: list[Messages] = []
    for message in messages[first_reply:]:
        if message.get("role") == "assistant" or not exchanges:
            exchanges.append([message])
        else:
            exchanges[-1].append(message)
    return head, exchanges


def fit_messages(messages: Messages, budget: int, count: Callable[[Messages], int]) -> tuple[Messages, list[int]]:
    """The messages to send within ``budget`` tokens (as ``count`` measures them), and the turns left out.

    Returns ``(messages, trimmed)``: ``trimmed`` holds the indices of the turns whose exchange was
    dropped (empty when everything fits). When even the head and the latest exchange do not fit,
    they are returned as they are: the server will say the prompt is too long.
    """
    if count(messages) <= budget:
        return messages, []
    head, exchanges = split_exchanges(messages)
    drop = 0
    while drop < len(exchanges) - 1:
        drop += 1
        kept = head + [m for exchange in exchanges[drop:] for m in exchange]
        if count(kept) <= budget:
            return kept, list(range(drop))
    kept = head + [m for exchange in exchanges[drop:] for m in exchange]
    return kept, list(range(drop))
