"""``agentgym list`` fits an 80-column terminal by default; one env's full card and options with
``agentgym list ENV_ID``; ``--wide``, ``--json`` and ``--markdown`` for the rest. The env's options
are shown by ``agentgym eval ENV_ID --help`` too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentgym_suite.cli import main
from agentgym_suite.commands.env_options import docstring_args, env_options
from agentgym_suite.registration import all_entries

ROOT = Path(__file__).resolve().parents[1]


def _cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *args: str, columns: int = 80) -> str:
    """What ``agentgym ARGS`` prints in a terminal ``columns`` wide."""
    monkeypatch.setenv("COLUMNS", str(columns))
    try:
        assert main(list(args)) == 0
    except SystemExit as exit_:  # --help
        assert exit_.code == 0
    return capsys.readouterr().out


def test_the_default_table_fits_80_columns_with_one_row_start_per_id(capsys: pytest.CaptureFixture[str],
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    out = _cli(capsys, monkeypatch, "list")
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 80
    for entry in all_entries():  # each id whole, on its own row, with a status word and a conformance word
        row = next(line for line in lines if f"│{entry.id} " in line or f"│ {entry.id} " in line)
        assert ("ready" in row or "missing" in row) and any(w in row for w in ("checked (", "n/a", "none"))
    assert "licence" not in out and "steps/s" not in out  # the card's long columns are not in the compact view


def test_one_env_id_prints_its_full_card_and_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "Tau2-v0"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Tau2-v0: ") and "status: " in out and "licence: " in out and "published scores:" in out
    assert "domain = 'retail'" in out and "banking_knowledge" in out  # the options --env-kwargs takes
    assert "user = None" in out and "who plays the customer" in out
    assert main(["list", "NoSuchEnv-v0"]) == 2
    assert "not a suite env id" in capsys.readouterr().err


def test_wide_json_and_plain_keep_the_full_facts(capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    assert main(["list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [row["id"] for row in rows] == [e.id for e in all_entries()]
    alfworld = next(row for row in rows if row["id"] == "ALFWorld-v0")
    assert "0.908 success rate" in alfworld["references"] and alfworld["conformance_word"].startswith("checked")
    wide = _cli(capsys, monkeypatch, "list", "--wide", columns=400)
    assert "licence" in wide and "steps/s" in wide


def test_options_come_from_the_signature_and_the_docstring() -> None:
    options = {o.name: o for o in env_options("BFCL-v0")}
    assert options["category"].default == "'base'" and "miss_func" in options["category"].help
    assert "end_on_tool_error" in options  # reached through **kwargs from the base class
    assert "``" not in options["category"].help

    class Documented:
        """Something.

        Args:
            alpha: the first
                line continues.
            beta (int): the second.

        Returns:
            nothing.
        """

    assert docstring_args(Documented) == {"alpha": "the first line continues.", "beta": "the second."}


def test_eval_env_help_lists_the_envs_options(capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    out = _cli(capsys, monkeypatch, "eval", "BFCL-v0", "--help", columns=120)
    assert "BFCL-v0 options (--env-kwargs" in out and "category = 'base'" in out
    assert "agentgym list ENV_ID" in _cli(capsys, monkeypatch, "eval", "--help", columns=120)
