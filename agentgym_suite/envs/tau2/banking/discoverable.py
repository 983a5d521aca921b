"""Marking a toolkit method as a discoverable tool (hidden until the agent unlocks it or hands it over)."""

from __future__ import annotations

from typing import Any, Callable

READ, WRITE, GENERIC = "read", "write", "generic"


def discoverable(kind: str = READ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark a method as a discoverable tool of ``kind``; write tools change the database (their calls are logged)."""

    def mark(fn: Callable[..., Any]) -> Callable[..., Any]:
        fn.__discoverable__ = kind  # type: ignore[attr-defined]
        return fn

    return mark


def discoverable_methods(cls: type) -> dict[str, Callable[..., Any]]:
    """Name -> function of every discoverable tool ``cls`` has (its own and inherited)."""
    return {name: getattr(cls, name) for name in dir(cls) if getattr(getattr(cls, name, None), "__discoverable__", None)}


def upstream_names(owner: str) -> Callable[[type], type]:
    """Class decorator: name each discoverable method ``<owner>.<method>`` so that Python's own message for a call
    with missing or unexpected arguments (which the agent reads) names the same class as upstream's does."""

    def rename(cls: type) -> type:
        for name, fn in discoverable_methods(cls).items():
            fn.__qualname__ = f"{owner}.{name}"
        return cls

    return rename
