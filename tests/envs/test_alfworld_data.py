"""ALFWorld's data check: every released game file has a published blob id, and a changed file is refused."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest

from agentgym_suite.core.data import has_benchmark_data
from agentgym_suite.core.fetch import ChecksumError, verify
from agentgym_suite.envs.alfworld.data_source import SOURCE, game_manifest
from agentgym_suite.envs.alfworld.env import FULL_TRAIN_GAMES


def test_the_manifest_lists_the_whole_release() -> None:
    splits = Counter(path.split("/")[1] for path in game_manifest())
    assert splits == {"train": FULL_TRAIN_GAMES, "valid_seen": 140, "valid_unseen": 134}
    assert set(SOURCE.known_blobs) == set(game_manifest())


@pytest.mark.skipif(not has_benchmark_data("alfworld", "json_2.1.1"), reason="ALFWorld data not present")
def test_present_games_match_and_a_changed_one_is_refused(tmp_path: Path) -> None:
    from agentgym_suite.core.data import data_dir

    report = verify(SOURCE)
    present = [rel for rel, status in report.items() if status == "ok"]
    assert len(present) >= 274  # both valid splits at least
    rel = next(p for p in present if "/valid_seen/" in p)
    copy = tmp_path / "alfworld" / rel
    copy.parent.mkdir(parents=True)
    shutil.copy(data_dir() / "alfworld" / rel, copy)
    assert verify(SOURCE, root=tmp_path)[rel] == "ok"
    copy.write_bytes(copy.read_bytes().replace(b"desk", b"dusk", 1))
    with pytest.raises(ChecksumError, match="does not match"):
        verify(SOURCE, root=tmp_path)
