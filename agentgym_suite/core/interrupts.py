"""Ctrl-C that always stops a command, even where a library swallows ``KeyboardInterrupt``.

Python turns SIGINT into a ``KeyboardInterrupt`` raised wherever the main thread is. Code that
catches every exception (a bare ``except:``, ``except BaseException`` around an optional import
or a worker's call) can swallow it, and the run goes on as if nothing was pressed: seen once in
the demo's held-out evaluation, where two Ctrl-C were ignored. :func:`stop_on_interrupt`
installs a SIGINT handler that

* raises ``KeyboardInterrupt`` as Python's own does (the clean stop: ``agentgym`` prints
  ``interrupted`` and exits 130), and remembers it: :func:`check`, called between batches of
  episodes and between training steps, raises it again when it was swallowed;
* on a second SIGINT while the first has not stopped the run, prints why and ends the process at
  once with exit code 130 (no cleanup: a hung or swallowing call cannot hold it).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from typing import Any, Iterator

EXIT_CODE = 130
"""The exit code of a command stopped by Ctrl-C (128 + SIGINT), as shells report it."""

_pending = 0
"""SIGINTs received since the handler was installed and not yet seen by :func:`check` or the CLI."""


def _handler(signum: int, frame: Any) -> None:
    global _pending
    _pending += 1
    if _pending >= 2:
        os.write(2, b"\ninterrupted again before the run stopped: exiting now (exit code 130)\n")
        os._exit(EXIT_CODE)
    raise KeyboardInterrupt


def pending() -> bool:
    """True when a SIGINT arrived under :func:`stop_on_interrupt` and nothing has cleared it."""
    return _pending > 0


def check() -> None:
    """Raise ``KeyboardInterrupt`` when a Ctrl-C arrived but the run is still going (some call
    swallowed it). Cheap; call it between units of work (a batch of episodes, a training step)."""
    if _pending:
        raise KeyboardInterrupt


@contextlib.contextmanager
def stop_on_interrupt() -> Iterator[None]:
    """Install the SIGINT handler of this module for the duration of the block (main thread only,
    and only over Python's default handler: a handler someone else installed is left alone)."""
    global _pending
    if threading.current_thread() is not threading.main_thread() \
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return
    _pending = 0
    signal.signal(signal.SIGINT, _handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        _pending = 0
