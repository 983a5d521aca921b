"""tau2-bench's data: the domains and user-simulator files of the pinned upstream commit."""

from __future__ import annotations

from agentgym_suite.core.data_sources import DataSource, RemoteFile

_TAU2 = "https://github.com/sierra-research/tau2-bench/archive/a2c024725189473d2d7cea3a5cfdbcc67478e41f.tar.gz"

SOURCE = DataSource(
    "tau2",
    files=(RemoteFile(_TAU2, ".", archive_members={
        "data/tau2/domains/": "domains/", "data/tau2/user_simulator/": "user_simulator/",
        # the banking domain's discoverable tools are described to the agent by their docstrings in upstream's source:
        # the file is data here (parsed, never run; see envs/tau2/banking/tool_docs.py)
        "src/tau2/domains/banking_knowledge/tools.py": "domains/banking_knowledge/tools_source.py"}),),
    known_blobs={
        "domains/airline/policy.md": "8098be7db3f4",
        "domains/airline/tasks.json": "ea4ff5e3f5e3",
        "domains/airline/split_tasks.json": "c83cce155671",
        "domains/retail/db.json": "4d67b03b2d39",
        "domains/retail/policy.md": "d127e6b07465",
        "domains/retail/tasks.json": "e95a9f898b2d",
        "domains/retail/split_tasks.json": "8b20704a17aa",
        "domains/banking_knowledge/db.json": "91f450a39a0d",
        "domains/banking_knowledge/tasks.json": "5da00be9f9b3",
        "domains/banking_knowledge/tools_source.py": "60ed2208905a",
    },
    required=("domains",),
)
"""Where tau2-bench's files come from and which folder the env needs."""
