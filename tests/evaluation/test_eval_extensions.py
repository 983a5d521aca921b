"""Evaluation extensions: a method adds flags, an agent wrapper and a summary part to ``agentgym eval``.

The suite's own (EnvACE's test-time rehearsal) is declared by its env's registration entry; a
package outside the suite declares one by entry point. The fixture installs a tiny distribution
into a temporary folder on ``sys.path`` whose extension counts the agent's actions; the eval
command and the runner must take it with no edit to the suite.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentgym_suite.core import plugins
from agentgym_suite.core.eval_extensions import EvalExtension
from agentgym_suite.evaluation.extensions import active_extensions, eval_extensions, extension_names
from agentgym_suite.evaluation.runner import EvalConfigMismatch, evaluate

MODULE = "counting_eval_extension"
SOURCE = textwrap.dedent('''
    """A third-party evaluation extension: counts the agent's actions under --count-every."""
    from typing import Any


    class Counting:
        def __init__(self, agent: Any, every: int) -> None:
            self.agent, self.every, self.actions = agent, every, 0
            self.name = f"counting({agent.name})"

        def reset(self, env: Any, *, seed: Any = None) -> None:
            self.agent.reset(env, seed=seed)

        def act(self, observation: str, info: dict) -> str:
            self.actions += 1
            return self.agent.act(observation, info)


    class CountingExtension:
        name = "counting"

        def add_arguments(self, parser):
            parser.add_argument("--count-every", type=int, default=0, help="count the agent's actions")

        def options_from_args(self, args):
            if args.count_every < 0:
                raise ValueError(f"--count-every must be >= 0, got {args.count_every}.")
            return {"every": args.count_every} if args.count_every else None

        def wrap_agent(self, agent, options):
            return Counting(agent, int(options["every"]))

        def summary(self, agents):
            return {"actions": sum(a.actions for a in agents), "every": agents[0].every}

        def add_commands(self, subparsers, kit):
            parser = subparsers.add_parser("count-agent", help="name the agent a spec makes")
            parser.add_argument("spec")
            kit.add_model_call_flags(parser)
            parser.set_defaults(func=lambda args: print("agent:", kit.make_agent(args.spec, seed=0).name) or 0)


    EXTENSION = CountingExtension()
    NOT_ONE = object()
''')


def _install(site: Path, points: dict[str, str]) -> None:
    (site / f"{MODULE}.py").write_text(SOURCE, encoding="utf-8")
    info = site / "counting_eval-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: counting-eval\nVersion: 0.1\n", encoding="utf-8")
    lines = "".join(f"{name} = {value}\n" for name, value in points.items())
    (info / "entry_points.txt").write_text(f"[{plugins.EVAL_GROUP}]\n{lines}", encoding="utf-8")


@pytest.fixture()
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder on ``sys.path`` to install the distribution into; forgotten afterwards."""
    folder = tmp_path / "site-packages"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.delitem(sys.modules, MODULE, raising=False)
    yield folder
    sys.modules.pop(MODULE, None)
    monkeypatch.undo()
    plugins.refresh()


def test_the_suites_rehearsal_is_declared_by_its_method_packages_entry_point() -> None:
    declaring = {plugin.obj.name for plugin in plugins.suite_methods(plugins.EVAL_GROUP)}
    assert "rehearsal" in declaring and "rehearsal" in extension_names()
    assert all(isinstance(extension, EvalExtension) for extension in eval_extensions())


def test_the_eval_command_takes_each_extensions_flags() -> None:
    from agentgym_suite.cli import build_parser
    from agentgym_suite.evaluation.extensions import extension_options

    parse = build_parser().parse_args
    args = parse(["eval", "SyntheticTools-v0", "--out", "x", "--rehearsal-budget", "3", "--rehearsal-mode", "sequential",
                  "--rehearsal-world-model", "tiny"])
    assert extension_options(args) == {"rehearsal": {"budget": 3, "mode": "sequential", "world_model": "tiny"}}
    assert extension_options(parse(["eval", "SyntheticTools-v0", "--out", "x"])) == {}
    (extension, options), = active_extensions(extension_options(args))
    assert extension.name == "rehearsal" and options["budget"] == 3


def test_an_unknown_extension_name_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown eval extension.*declared: .*rehearsal"):
        evaluate("SyntheticTools-v0", "oracle", out_dir=tmp_path, episodes=1, progress=False,
                 extensions={"no-such": {}})


def test_a_third_party_extension_works_through_the_command(site: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    from agentgym_suite.cli import main

    _install(site, {"counting": f"{MODULE}:EXTENSION"})
    assert "counting" in extension_names()
    out = tmp_path / "run"
    code = main(["eval", "SyntheticTools-v0", "--agent", "oracle", "--episodes", "2", "--out", str(out), "--json",
                 "--no-progress", "--count-every", "5"])
    summary = json.loads(capsys.readouterr().out)
    records = [json.loads(line) for line in (out / "trajectories.jsonl").read_text(encoding="utf-8").splitlines()]
    assert code == 0 and summary["counting"] == {"actions": sum(len(r["turns"]) for r in records), "every": 5}
    assert json.loads((out / "config.json").read_text(encoding="utf-8"))["counting"] == {"every": 5}
    assert "rehearsal" not in summary  # an extension the flags leave off adds nothing
    # a resumed run must share the extension's options
    with pytest.raises(EvalConfigMismatch, match="counting"):
        evaluate("SyntheticTools-v0", "oracle", out_dir=out, episodes=2, progress=False, extensions={"counting": {"every": 6}})
    assert main(["eval", "SyntheticTools-v0", "--out", str(tmp_path / "b"), "--count-every", "-1"]) == 2
    assert "--count-every must be >= 0" in capsys.readouterr().err


def test_an_extension_brings_its_own_subcommand_with_the_command_lines_services(
        site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from agentgym_suite.cli import build_parser, main

    _install(site, {"counting": f"{MODULE}:EXTENSION"})
    assert main(["count-agent", "oracle", "--no-model-cache"]) == 0
    assert capsys.readouterr().out.strip() == "agent: oracle"
    commands = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert {"fidelity", "count-agent"} <= set(commands)  # EnvACE's fidelity comes the same way


def test_a_broken_or_wrong_entry_point_is_skipped_with_a_warning(site: Path) -> None:
    _install(site, {"missing": f"{MODULE}:NO_SUCH_NAME", "wrong": f"{MODULE}:NOT_ONE",
                    "twice": "agentgym_suite.methods.envace.eval_extension:RehearsalEvalExtension"})
    with pytest.warns(UserWarning) as caught:
        names = extension_names()
    messages = " ".join(str(w.message) for w in caught)
    assert names == ("rehearsal",)
    assert "cannot be loaded" in messages and "not an EvalExtension instance" in messages


def test_options_name_the_flag_when_out_of_range() -> None:
    rehearsal = next(e for e in eval_extensions() if e.name == "rehearsal")
    with pytest.raises(ValueError, match="--rehearsal-budget must be >= 0"):
        rehearsal.options_from_args(argparse.Namespace(rehearsal_budget=-2, rehearsal_mode="parallel",
                                                       rehearsal_world_model="same"))
