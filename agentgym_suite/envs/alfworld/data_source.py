"""ALFWorld's data: the released game files, plus the PDDL domain and grammar of the alfworld package."""

from __future__ import annotations

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


SOURCE = DataSource(
    "alfworld",
    files=(RemoteFile(_ALFWORLD, ".", archive_members={"json_2.1.1/": "json_2.1.1/"}),),
    note="The PDDL domain and grammar (logic/alfred.pddl, logic/alfred.twl2) are copied from the installed alfworld package.",
    required=("json_2.1.1", "logic/alfred.twl2"),
    after_fetch=copy_pddl_logic,
)
"""Where ALFWorld's files come from and which of them the env needs."""
