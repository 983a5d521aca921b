"""Handing a finished stage's memory back before the next stage of the demo starts.

The demo runs every stage in one process. A finished stage's trainer, model copies and optimizer
state sit in reference cycles (trainer <-> callbacks) that Python frees only at its next full
collection, and glibc keeps freed small blocks in its heap instead of returning them: measured
on the default recipe (``benchmarks/demo_memory.py``), 2.4 GiB of the cloning stage stayed
resident through the GRPO stage. :func:`release_memory` collects the cycles and asks glibc to
return its free pages (``malloc_trim``; a no-op where the C library has none, e.g. macOS, musl).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import functools
from typing import Any


@functools.lru_cache(maxsize=1)
def _libc() -> Any | None:
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
    except OSError:
        return None
    return libc if libc is not None and hasattr(libc, "malloc_trim") else None


def release_memory() -> bool:
    """Free unreachable objects (a full ``gc.collect``) and return the C heap's free pages to the
    operating system; True when ``malloc_trim`` ran and released something."""
    gc.collect()
    libc = _libc()
    return bool(libc.malloc_trim(0)) if libc is not None else False
