"""Envs and credit plug-ins of another distribution are found through entry points, everywhere.

The fixture builds a tiny installed distribution in a temporary folder: the docs' two worked
examples (``examples/weather_tool_env.py``, ``examples/discounted_grpo.py``) as its modules, and a
``dist-info`` whose ``entry_points.txt`` holds the entry points ``examples/pyproject.toml``
declares. With that folder on ``sys.path`` (what ``pip install ./examples`` gives), the suite's
registry, ``gym.make``, ``agentgym list`` (in a fresh process, as a user runs it), ``evaluate``, the
credit registry, a training config's ``credit`` and ``agentgym compare``'s method check see the env
and the plug-in by name, with no edit to the suite.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import pytest

from agentgym_suite.core import plugins

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
DIST = tomllib.loads((EXAMPLES / "pyproject.toml").read_text(encoding="utf-8"))["project"]
MODULES = ("weather_tool_env", "discounted_grpo", "length_penalty_credit")
ENV_ID, CREDIT, INPUT_CREDIT = "Weather-v0", "discounted_grpo", "length_penalty"


def install_examples(site: Path) -> None:
    """Write the examples distribution into ``site`` as an installer would: modules and a dist-info."""
    for module in MODULES:
        shutil.copy(EXAMPLES / f"{module}.py", site / f"{module}.py")
    info = site / f"{DIST['name'].replace('-', '_')}-{DIST['version']}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {DIST['name']}\nVersion: {DIST['version']}\n",
                                   encoding="utf-8")
    groups = DIST["entry-points"]
    (info / "entry_points.txt").write_text(
        "".join(f"[{group}]\n" + "".join(f"{name} = {value}\n" for name, value in points.items()) + "\n"
                for group, points in groups.items()), encoding="utf-8")


@pytest.fixture()
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The examples installed into a folder on ``sys.path`` for one test; removed afterwards (modules of
    the same name that other tests imported from ``examples/`` are set aside meanwhile)."""
    assert ENV_ID not in gym.registry
    for module in MODULES:
        monkeypatch.delitem(sys.modules, module, raising=False)
    site = tmp_path / "site-packages"
    site.mkdir()
    install_examples(site)
    monkeypatch.syspath_prepend(str(site))
    yield site
    gym.registry.pop(ENV_ID, None)
    for module in MODULES:
        sys.modules.pop(module, None)
    monkeypatch.undo()  # the path, and the modules set aside
    plugins.refresh()


def test_the_distribution_declares_both_groups() -> None:
    assert set(DIST["entry-points"]) == {plugins.ENVS_GROUP, plugins.CREDIT_GROUP}


def test_nothing_is_found_before_the_install() -> None:
    from agentgym_suite.registration import all_entries
    from agentgym_suite.trainers.credit import available_credit_assigners

    assert ENV_ID not in {e.id for e in all_entries()} and CREDIT not in available_credit_assigners()


def test_the_env_is_found_everywhere(installed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from agentgym_suite.cli import build_parser

    import agentgym_suite
    from agentgym_suite.commands import list_envs
    from agentgym_suite.evaluation import evaluate
    from agentgym_suite.registration import entry, missing_requirements

    item = entry(ENV_ID)
    assert item.entry_point == "weather_tool_env:WeatherEnv" and not missing_requirements(item)
    agentgym_suite.register_all()  # what importing the package does in a fresh process
    env = gym.make(ENV_ID)
    try:
        _, info = env.reset(options={"task_id": "oslo"})
        assert info["task_id"] == "oslo"
    finally:
        env.close()

    list_envs.run(build_parser().parse_args(["list", "--plain"]))
    lines = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert [ENV_ID, "ready"] in [line[:2] for line in lines]
    list_envs.run(build_parser().parse_args(["list", "--markdown"]))
    assert ENV_ID not in capsys.readouterr().out, "the docs catalogue lists the suite's own ids only"

    result = evaluate(ENV_ID, "oracle", out_dir=tmp_path / "eval", episodes=2, seed=0, progress=False)
    assert result.summary["success_rate"] == 1.0


def test_agentgym_list_in_a_fresh_process_shows_the_env(installed: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(installed), str(ROOT)])}
    out = subprocess.run([sys.executable, "-m", "agentgym_suite.cli", "list", "--plain"], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=120, check=True).stdout
    assert any(line.startswith(f"{ENV_ID}\tready\t") for line in out.splitlines()), out


def test_the_credit_plugin_is_found_everywhere(installed: Path) -> None:
    from agentgym_suite.comparisons.runner import teacher_needs
    from agentgym_suite.comparisons.settings import CompareSettings, check_methods
    from agentgym_suite.trainers.config import AgentGRPOConfig
    from agentgym_suite.trainers.credit import available_credit_assigners, credit_assigner_class, get_credit_assigner

    assert set(available_credit_assigners()[-2:]) == {CREDIT, INPUT_CREDIT}  # plug-ins follow the suite's own
    cls = credit_assigner_class(CREDIT)
    assert cls.__module__ == "discounted_grpo" and cls.name == CREDIT
    assert get_credit_assigner(CREDIT, gamma=0.5).config.gamma == 0.5
    config = AgentGRPOConfig(output_dir=str(installed / "run"), credit=CREDIT, report_to="none", use_cpu=True)
    assert config.credit_class is cls
    check_methods(CompareSettings(methods=["grpo", CREDIT], seeds=[0]))
    assert teacher_needs(["grpo", CREDIT], {}) == []


def test_a_plugin_with_an_input_of_its_own_is_found_and_declares_it(installed: Path) -> None:
    """The worked example whose plug-in brings a new row input works as an installed distribution."""
    from agentgym_suite.trainers.credit import credit_assigner_class, get_credit_assigner

    cls = credit_assigner_class(INPUT_CREDIT)
    assert cls.__module__ == "length_penalty_credit" and cls.name == INPUT_CREDIT
    names = [provider.name for provider in get_credit_assigner(INPUT_CREDIT).row_inputs]
    assert names and all(name in get_credit_assigner(INPUT_CREDIT).required_fields for name in names)


def test_a_broken_entry_point_is_warned_about_and_skipped(installed: Path) -> None:
    from agentgym_suite.registration import all_entries
    from agentgym_suite.trainers.credit import available_credit_assigners

    info = next(installed.glob("*.dist-info"))
    (info / "entry_points.txt").write_text(
        f"[{plugins.ENVS_GROUP}]\nbroken = no_such_module_xyz:ENTRY\nnot_an_entry = weather_tool_env:TOOLS\n"
        f"weather = weather_tool_env:ENTRY\n\n[{plugins.CREDIT_GROUP}]\ngrpo = discounted_grpo:DiscountedGRPOCredit\n"
        "wrong_name = discounted_grpo:DiscountedGRPOCredit\n", encoding="utf-8")
    plugins.refresh()
    with pytest.warns(UserWarning) as caught:
        ids = [e.id for e in all_entries()]
        names = available_credit_assigners()
    messages = " | ".join(str(w.message) for w in caught)
    assert ENV_ID in ids and "TextWorld-v0" in ids, "a broken entry point hides nothing else"
    assert "no_such_module_xyz" in messages and "not an EnvEntry" in messages
    assert "'grpo' is taken" in messages and "name the entry point 'discounted_grpo'" in messages
    assert names.count("grpo") == 1 and CREDIT not in names
