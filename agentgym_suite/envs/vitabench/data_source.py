"""VitaBench's data: the domains and prompt files of the pinned upstream commit."""

from __future__ import annotations

from agentgym_suite.core.data_sources import DataSource, RemoteFile

_VITA = "https://github.com/meituan-longcat/vitabench/archive/96f3b8529d8ea38d330de2405af7e32a1454f6cd.tar.gz"

SOURCE = DataSource(
    "vitabench",
    files=(RemoteFile(_VITA, ".", archive_members={"data/vita/domains/": "domains/", "src/vita/prompts/": "prompts/"}),),
    known_blobs={
        "domains/delivery/tasks_en.json": "803c6a28452d",
        "domains/instore/tasks_en.json": "744adaabf291",
        "prompts/agent_system_prompt.yaml": "3b20305d8067",
        "prompts/user_system_prompt.yaml": "a037e2ae5f29",
    },
    required=("domains", "prompts"),
    note=("VitaBench's files, from upstream's archive at the pinned commit: domains/<domain>/tasks_en.json (English tasks), "
          "domains/<domain>/tasks.json (Chinese tasks, upstream's default language; language='chinese'), for domain in "
          "delivery, instore (ota and cross_domain are not played here), and prompts/*.yaml (src/vita/prompts/)."),
)
"""Where VitaBench's files come from and which folders the env needs."""
