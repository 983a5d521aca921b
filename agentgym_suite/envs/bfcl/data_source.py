"""BFCL's data ships inside the bfcl-eval package: nothing to download or place."""

from __future__ import annotations

from agentgym_suite.core.data_sources import DataSource
from agentgym_suite.envs.bfcl.data import INSTALL_COMMAND

SOURCE = DataSource("bfcl", note=f"BFCL data ships inside the bfcl-eval package: {INSTALL_COMMAND}")
"""BFCL needs no data folder."""
