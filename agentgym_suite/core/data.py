"""Where benchmark data lives, and clear errors when it is not there.

Data is read from the directory named by the ``AGENTGYM_DATA`` environment variable, else from
a per-user cache directory. Nothing is downloaded implicitly: ``agentgym data fetch NAME``
does that on purpose.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

from agentgym_suite.core.errors import DataNotFoundError

DATA_ENV_VAR = "AGENTGYM_DATA"
CACHE_ENV_VAR = "AGENTGYM_CACHE"


def data_dir() -> Path:
    """Return the root data directory: ``$AGENTGYM_DATA`` or the user cache dir."""
    configured = os.environ.get(DATA_ENV_VAR)
    if configured:
        return Path(configured).expanduser()
    return Path(platformdirs.user_cache_dir("agentgym-suite")) / "data"


def cache_dir() -> Path:
    """Return the directory for derived files (generated games, converted models, indexes)."""
    configured = os.environ.get(CACHE_ENV_VAR)
    root = Path(configured).expanduser() if configured else Path(platformdirs.user_cache_dir("agentgym-suite"))
    root.mkdir(parents=True, exist_ok=True)
    return root


def benchmark_dir(benchmark: str, *required: str) -> Path:
    """Return ``data_dir()/benchmark`` after checking that each ``required`` path exists in it.

    Raises:
        DataNotFoundError: naming the variable to set and the command that fetches the data.
    """
    root = data_dir() / benchmark
    missing = [rel for rel in (required or ("",)) if not (root / rel).exists()]
    if missing:
        shown = ", ".join(str(root / rel) for rel in missing[:3])
        raise DataNotFoundError(
            f"{benchmark} data not found: missing {shown}. "
            f"Set {DATA_ENV_VAR} to a directory that holds '{benchmark}/', "
            f"or run `agentgym data fetch {benchmark}` to download it."
        )
    return root


def has_benchmark_data(benchmark: str, *required: str) -> bool:
    """True when :func:`benchmark_dir` would succeed."""
    try:
        benchmark_dir(benchmark, *required)
    except DataNotFoundError:
        return False
    return True
