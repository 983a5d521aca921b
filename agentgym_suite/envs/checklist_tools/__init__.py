"""``ChecklistTools-v0``: tool-use training sets in EnvACE's published checklist format."""

from agentgym_suite.envs.checklist_tools.dataset import ChecklistSample, load_checklist_samples
from agentgym_suite.envs.checklist_tools.env import ChecklistToolsEnv

__all__ = ["ChecklistSample", "ChecklistToolsEnv", "load_checklist_samples"]
