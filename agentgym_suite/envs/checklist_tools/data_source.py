"""EnvACE checklist training sets: placed by hand in ``$AGENTGYM_DATA/envace_checklist/``."""

from __future__ import annotations

from agentgym_suite.core.data_sources import DataSource

SOURCE = DataSource(
    "envace_checklist",
    note="Place tool-use training sets in EnvACE's checklist format (JSON list or JSON Lines of items with "
    "extra_info.tools, extra_info.messages and extra_info.interaction_kwargs.checklist_list) in "
    "$AGENTGYM_DATA/envace_checklist/ (see agentgym_suite/envs/checklist_tools for the format).",
    required=("*.json*",),
)
"""What ChecklistTools needs: at least one sample file in its folder."""
