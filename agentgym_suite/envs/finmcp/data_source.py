"""FinMCP-Bench's data: placed by hand (no redistribution license); tests use generated fixtures."""

from __future__ import annotations

from agentgym_suite.core.data_sources import DataSource

SOURCE = DataSource(
    "finmcp",
    note="FinMCP-Bench data carries no license that allows redistribution; place the official JSON files in "
    "$AGENTGYM_DATA/finmcp/ by hand (see agentgym_suite/envs/finmcp for the format).",
    required=("*.json",),
)
"""What FinMCP needs: at least one sample file in its folder."""
