"""TextWorld games are generated offline: nothing to download or place."""

from __future__ import annotations

from agentgym_suite.core.data_sources import DataSource

SOURCE = DataSource("textworld", note="TextWorld games are generated offline on first use; nothing to download.")
"""TextWorld needs no data folder."""
