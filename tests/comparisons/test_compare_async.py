"""``agentgym compare --async``: every method of the comparison trains with asynchronous rollouts,
and the printed command gives the setting back."""

from __future__ import annotations

import shlex

from agentgym_suite.cli import build_parser
from agentgym_suite.commands.compare import settings_from
from agentgym_suite.comparisons.settings import CompareSettings, compare_command, shared_fields


def test_async_flag_reaches_every_units_config_and_the_printed_command():
    parsed = settings_from(build_parser().parse_args(["compare", "--preset", "rl-gain", "--async"]))
    assert parsed.async_rollouts is True and parsed.preset == "rl-gain"
    fields = shared_fields(parsed, "model")
    assert fields["async_rollouts"] is True
    again = settings_from(build_parser().parse_args(shlex.split(compare_command(parsed))[1:]))
    assert again == CompareSettings(**{**parsed.__dict__, "preset": None})
    plain = settings_from(build_parser().parse_args(["compare", "--preset", "rl-gain"]))
    assert plain.async_rollouts is None and "async_rollouts" not in shared_fields(plain, "model")
