"""ALFWorld's data: the released game files, plus the PDDL domain and grammar of the alfworld package.

Every game file of the three splits (3,553 train, 140 valid_seen, 134 valid_unseen) is checked
against its git blob id and size, listed in ``json_2.1.1_games.tsv.gz`` beside this module. The ids
were read from a git copy of the release (``jiangmin8/lz-tool-skillopt`` at ``76b659f``, which holds
the same 3,827 files the ``alfworld-download`` release has); the files under
``$AGENTGYM_DATA/alfworld`` on the development machine (the valid splits and a 240-game train subset)
match them.
"""

from __future__ import annotations

import gzip
import importlib.util
import shutil
from pathlib import Path

from agentgym_suite.core.data_sources import DataSource, RemoteFile

_ALFWORLD = "https://github.com/alfworld/alfworld/releases/download/0.4.0/json_2.1.2_tw-pddl.zip"


def copy_pddl_logic(dest: Path) -> list[Path]:
    """Copy ``alfred.pddl`` and ``alfred.twl2`` from the installed alfworld package into ``dest/logic``."""
    spec = importlib.util.find_spec("alfworld")
    if spec is None or not spec.submodule_search_locations:
        return []
    package = Path(list(spec.submodule_search_locations)[0]) / "data"
    out = []
    for name in ("alfred.pddl", "alfred.twl2"):
        if (package / name).exists():
            (dest / "logic").mkdir(parents=True, exist_ok=True)
            out.append(Path(shutil.copy(package / name, dest / "logic" / name)))
    return out


MANIFEST = Path(__file__).with_name("json_2.1.1_games.tsv.gz")
"""``<split>/<task folder>/<trial>``, git blob prefix and byte size of every released game file."""


def game_manifest() -> dict[str, tuple[str, int]]:
    """Relative path of each released ``game.tw-pddl`` -> (git blob prefix, size in bytes)."""
    with gzip.open(MANIFEST, "rt", encoding="utf-8") as handle:
        rows = (line.rstrip("\n").split("\t") for line in handle if line.strip())
        return {f"json_2.1.1/{rel}/game.tw-pddl": (blob, int(size)) for rel, blob, size in rows}


SOURCE = DataSource(
    "alfworld",
    files=(RemoteFile(_ALFWORLD, ".", archive_members={"json_2.1.1/": "json_2.1.1/"}),),
    note="The PDDL domain and grammar (logic/alfred.pddl, logic/alfred.twl2) are copied from the installed alfworld package.",
    known_blobs={path: blob for path, (blob, _) in game_manifest().items()},
    required=("json_2.1.1", "logic/alfred.twl2"),
    after_fetch=copy_pddl_logic,
)
"""Where ALFWorld's files come from and which of them the env needs."""
