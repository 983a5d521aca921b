"""Data-directory resolution and the text of its errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentgym_suite.core.data import benchmark_dir, data_dir, has_benchmark_data
from agentgym_suite.core.errors import DataNotFoundError


def test_env_var_wins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("AGENTGYM_DATA", str(tmp_path))
    assert data_dir() == tmp_path


def test_missing_benchmark_error_names_variable_and_command(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("AGENTGYM_DATA", str(tmp_path))
    with pytest.raises(DataNotFoundError) as err:
        benchmark_dir("alfworld", "json_2.1.1")
    assert str(err.value) == (
        f"alfworld data not found: missing {tmp_path / 'alfworld' / 'json_2.1.1'}. "
        "Set AGENTGYM_DATA to a directory that holds 'alfworld/', "
        "or run `agentgym data fetch alfworld` to download it."
    )
    assert not has_benchmark_data("alfworld", "json_2.1.1")


def test_present_benchmark(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "searchqa" / "x").mkdir(parents=True)
    monkeypatch.setenv("AGENTGYM_DATA", str(tmp_path))
    assert benchmark_dir("searchqa", "x") == tmp_path / "searchqa"
