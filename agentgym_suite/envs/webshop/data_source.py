"""WebShop's data: the AgentGym copy of the 1,000-product catalogue and WebShop's human goals."""

from __future__ import annotations

from agentgym_suite.core.data_sources import DataSource, RemoteFile

_AGENTGYM = "https://raw.githubusercontent.com/WooooDyy/AgentGym/3ef9235d23e68e7c2920c5422ad957dc8ced5c6c/agentenv-webshop/webshop/data"
_WEBSHOP = "https://raw.githubusercontent.com/princeton-nlp/WebShop/64fa2a5c15c7daa698b9ac93f5bb5437b634c9bd"

SOURCE = DataSource(
    "webshop",
    files=(
        RemoteFile(f"{_AGENTGYM}/items_shuffle_1000.json", "data/items_shuffle_1000.json", "08dfda9a1c89"),
        RemoteFile(f"{_AGENTGYM}/items_ins_v2_1000.json", "data/items_ins_v2_1000.json", "22837ad99f31"),
        RemoteFile(f"{_AGENTGYM}/items_human_ins.json", "data/items_human_ins.json", "b2ab7479b979"),
        RemoteFile(f"{_WEBSHOP}/baseline_models/data/human_goals.json", "baseline_models/data/human_goals.json", "95f63cf63ada"),
    ),
    known_blobs={
        "data/items_shuffle_1000.json": "08dfda9a1c89",
        "data/items_ins_v2_1000.json": "22837ad99f31",
        "data/items_human_ins.json": "b2ab7479b979",
        "baseline_models/data/human_goals.json": "95f63cf63ada",
        "baseline_models/data/goal_query_map.json": "8e6b6424fab8",
    },
    required=("data/items_shuffle_1000.json", "data/items_ins_v2_1000.json", "data/items_human_ins.json"),
)
"""Where WebShop's files come from and which of them the env needs."""
