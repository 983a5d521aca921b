"""ScienceWorld's tasks ship inside the scienceworld package: nothing to download or place."""

from __future__ import annotations

from agentgym_suite.core.data_sources import DataSource

SOURCE = DataSource("scienceworld", note="ScienceWorld's tasks ship inside the scienceworld package: pip install 'agentgym-suite[scienceworld]'")
"""ScienceWorld needs no data folder."""
