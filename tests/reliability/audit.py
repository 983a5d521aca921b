"""A Python audit hook that records file-system events of the current thread inside :func:`watch`."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

WATCHED = {"open", "os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.symlink", "os.link", "os.chdir",
           "os.truncate", "shutil.rmtree", "shutil.move", "shutil.copyfile", "os.listdir", "os.scandir"}

_state = threading.local()
_events: list[tuple[str, tuple]] = []


def _hook(event: str, args: tuple) -> None:
    if getattr(_state, "watching", False) and event in WATCHED:
        _events.append((event, tuple(str(a)[:200] for a in args)))


sys.addaudithook(_hook)  # audit hooks cannot be removed; it records only inside watch()


@contextmanager
def watch() -> Iterator[list[tuple[str, tuple]]]:
    """Record the file-system audit events of the current thread."""
    _events.clear()
    _state.watching = True
    try:
        yield _events
    finally:
        _state.watching = False
