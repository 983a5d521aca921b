"""cached_model_dir builds a model folder once and never leaves a staging folder behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentgym_suite.llm.model_cache import cached_model_dir


def _writer(calls: list[Path]):
    def build(folder: Path) -> None:
        calls.append(folder)
        (folder / "config.json").write_text("{}")
        (folder / "weights.bin").write_text("w")

    return build


def test_builds_once_then_reuses(tmp_path: Path) -> None:
    calls: list[Path] = []
    first = cached_model_dir("m-v1", ("config.json", "weights.bin"), _writer(calls), tmp_path)
    second = cached_model_dir("m-v1", ("config.json", "weights.bin"), _writer(calls), tmp_path)
    assert first == second == tmp_path / "m-v1"
    assert len(calls) == 1
    assert (first / "weights.bin").read_text() == "w"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m-v1"]


def test_failed_build_leaves_nothing(tmp_path: Path) -> None:
    def broken(folder: Path) -> None:
        (folder / "config.json").write_text("{}")
        raise RuntimeError("conversion failed")

    with pytest.raises(RuntimeError, match="conversion failed"):
        cached_model_dir("m-v1", ("config.json",), broken, tmp_path)
    assert list(tmp_path.iterdir()) == []
