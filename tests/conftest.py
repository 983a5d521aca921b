"""Test-wide settings: benchmark data comes from ``../shared/data`` unless AGENTGYM_DATA is set."""

from __future__ import annotations

import os
from pathlib import Path

_SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
if not os.environ.get("AGENTGYM_DATA") and _SHARED_DATA.is_dir():
    os.environ["AGENTGYM_DATA"] = str(_SHARED_DATA)
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
