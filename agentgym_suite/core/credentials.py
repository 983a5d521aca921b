"""Keyword arguments that are credentials, masked wherever a run writes down its settings."""

from __future__ import annotations

from typing import Any

SECRET_KEYS = frozenset({"token", "api_key", "password", "secret", "access_token", "auth_token"})
"""Argument names whose values are credentials (compared exactly: ``max_tokens`` is not one)."""
MASK = "<secret>"
"""What a credential's value is written as."""


def masked(kwargs: dict[str, Any]) -> dict[str, Any]:
    """``kwargs`` with the value of every credential (:data:`SECRET_KEYS`, at any depth) replaced by
    :data:`MASK`; a credential that is None or empty stays as it is (there is nothing to hide)."""
    return {key: (MASK if key.lower() in SECRET_KEYS and value not in (None, "") else
                  masked(value) if isinstance(value, dict) else value)
            for key, value in kwargs.items()}
