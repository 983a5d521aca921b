"""Where each benchmark's official data comes from, and how a download is checked.

``agentgym data fetch NAME`` downloads the files listed here into ``$AGENTGYM_DATA/NAME/``.
Each file is checked against the git blob id its upstream repository records for it (the
first 12 hex digits; ``git hash-object`` computes the same id), so a corrupted or altered
download is rejected. Archives are checked file by file after extraction where ids are known.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class RemoteFile:
    """One downloadable file (or archive) and where it goes."""

    url: str
    dest: str
    """Path relative to the benchmark folder (for archives: the folder to extract into)."""
    git_blob: str = ""
    """First hex digits of the upstream git blob id; empty when upstream publishes none."""
    archive_members: dict[str, str] = field(default_factory=dict)
    """For archives: member path prefix inside the archive -> destination prefix."""


@dataclass(frozen=True)
class DataSource:
    """How one benchmark's data is obtained."""

    benchmark: str
    files: tuple[RemoteFile, ...] = ()
    note: str = ""
    """Shown when nothing can be downloaded (data in a package, or not redistributable)."""
    known_blobs: dict[str, str] = field(default_factory=dict)
    """Relative path -> git blob prefix, for ``agentgym data verify``."""


def git_blob_id(path: Path) -> str:
    """The git blob id (sha1 of ``"blob <size>\\0" + content``) of a file."""
    digest = hashlib.sha1()
    digest.update(f"blob {path.stat().st_size}\0".encode())
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


_AGENTGYM = "https://raw.githubusercontent.com/WooooDyy/AgentGym/3ef9235d23e68e7c2920c5422ad957dc8ced5c6c/agentenv-webshop/webshop/data"
_WEBSHOP = "https://raw.githubusercontent.com/princeton-nlp/WebShop/64fa2a5c15c7daa698b9ac93f5bb5437b634c9bd"
_HIPPORAG = "https://raw.githubusercontent.com/OSU-NLP-Group/HippoRAG/b144c46df14cabe5f5822d8caded4bec5f709461/data"
_TAU2 = "https://github.com/sierra-research/tau2-bench/archive/a2c024725189473d2d7cea3a5cfdbcc67478e41f.tar.gz"
_VITA = "https://github.com/meituan-longcat/vitabench/archive/96f3b8529d8ea38d330de2405af7e32a1454f6cd.tar.gz"
_ALFWORLD = "https://github.com/alfworld/alfworld/releases/download/0.4.0/json_2.1.2_tw-pddl.zip"

SOURCES: dict[str, DataSource] = {
    "webshop": DataSource(
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
    ),
    "searchqa": DataSource(
        "searchqa",
        files=(
            RemoteFile(f"{_HIPPORAG}/hotpotqa_train.json", "hipporag_hotpotqa/hotpotqa_train.json", "7dbdf068a437"),
            RemoteFile(f"{_HIPPORAG}/hotpotqa_train_corpus.json", "hipporag_hotpotqa/hotpotqa_train_corpus.json", "30c554d79d6a"),
            RemoteFile(f"{_HIPPORAG}/musique_train.json", "hipporag_musique/musique_train.json", "9e22c28d3d77"),
            RemoteFile(f"{_HIPPORAG}/musique_train_corpus.json", "hipporag_musique/musique_train_corpus.json", "d9019eedea1a"),
        ),
        known_blobs={
            "hipporag_hotpotqa/hotpotqa_train.json": "7dbdf068a437",
            "hipporag_hotpotqa/hotpotqa_train_corpus.json": "30c554d79d6a",
            "hipporag_musique/musique_train.json": "9e22c28d3d77",
            "hipporag_musique/musique_train_corpus.json": "d9019eedea1a",
        },
    ),
    "tau2": DataSource(
        "tau2",
        files=(RemoteFile(_TAU2, ".", archive_members={"data/tau2/domains/": "domains/", "data/tau2/user_simulator/": "user_simulator/"}),),
        known_blobs={
            "domains/airline/policy.md": "8098be7db3f4",
            "domains/airline/tasks.json": "ea4ff5e3f5e3",
            "domains/airline/split_tasks.json": "c83cce155671",
            "domains/retail/db.json": "4d67b03b2d39",
            "domains/retail/policy.md": "d127e6b07465",
            "domains/retail/tasks.json": "e95a9f898b2d",
            "domains/retail/split_tasks.json": "8b20704a17aa",
        },
    ),
    "vitabench": DataSource(
        "vitabench",
        files=(RemoteFile(_VITA, ".", archive_members={"data/vita/domains/": "domains/", "src/vita/prompts/": "prompts/"}),),
        known_blobs={
            "domains/delivery/tasks_en.json": "803c6a28452d",
            "domains/instore/tasks_en.json": "744adaabf291",
            "prompts/agent_system_prompt.yaml": "3b20305d8067",
            "prompts/user_system_prompt.yaml": "a037e2ae5f29",
        },
    ),
    "alfworld": DataSource(
        "alfworld",
        files=(RemoteFile(_ALFWORLD, ".", archive_members={"json_2.1.1/": "json_2.1.1/"}),),
        note="The PDDL domain and grammar (logic/alfred.pddl, logic/alfred.twl2) are copied from the installed alfworld package.",
    ),
    "bfcl": DataSource("bfcl", note="BFCL data ships inside the bfcl-eval package: pip install --no-deps bfcl-eval==2026.3.23 mpmath"),
    "scienceworld": DataSource("scienceworld", note="ScienceWorld's tasks ship inside the scienceworld package: pip install 'agentgym-suite[scienceworld]'"),
    "textworld": DataSource("textworld", note="TextWorld games are generated offline on first use; nothing to download."),
    "finmcp": DataSource(
        "finmcp",
        note="FinMCP-Bench data carries no license that allows redistribution; place the official JSON files in "
        "$AGENTGYM_DATA/finmcp/ by hand (see agentgym_suite/envs/finmcp for the format).",
    ),
}
"""Benchmark name -> its data source."""
