"""Ctrl-C stops a command even where the running code swallows ``KeyboardInterrupt``
(agentgym_suite.core.interrupts): a real process, real SIGINTs, no timing assertion beyond a
generous timeout."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_S = 60

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a process is POSIX")

# a command that runs through agentgym's CLI entry point (cli.main) and, like a library with a bare
# ``except:``, swallows every KeyboardInterrupt raised in its loop; ``check`` says whether the loop
# calls interrupts.check() between its units of work (as the evaluation loops do)
SWALLOWING_COMMAND = textwrap.dedent("""
    import sys, time
    from agentgym_suite import cli
    from agentgym_suite.core import interrupts

    def swallowing(args):
        print("ready", flush=True)
        for _ in range(6000):  # about 5 minutes: far longer than the test waits
            try:
                time.sleep(0.05)
            except BaseException:  # what the interrupt fix has to survive
                print("swallowed", flush=True)
            if sys.argv[1] == "check":
                interrupts.check()
        print("ran to the end", flush=True)
        return 0

    parser = cli.build_parser
    def build_parser():
        p = parser()
        sub = next(a for a in p._actions if a.__class__.__name__ == "_SubParsersAction")
        sub.add_parser("swallow").set_defaults(func=swallowing)
        return p
    cli.build_parser = build_parser
    sys.exit(cli.main(["swallow"]))
""")


def _start(mode: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    process = subprocess.Popen([sys.executable, "-c", SWALLOWING_COMMAND, mode], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    assert process.stdout is not None
    line = process.stdout.readline()
    if line.strip() != "ready":
        process.kill()
        raise AssertionError(f"the command did not start: {line!r} {process.communicate()[1][-2000:]}")
    return process


def _finish(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    try:
        out, err = process.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        raise AssertionError(f"Ctrl-C did not stop the command within {TIMEOUT_S} s:\n{err[-2000:]}") from None
    return process.returncode, out, err


def test_a_swallowed_ctrl_c_stops_at_the_next_check_with_exit_130() -> None:
    process = _start("check")
    process.send_signal(signal.SIGINT)
    code, out, err = _finish(process)
    assert code == 130
    assert "ran to the end" not in out
    assert "interrupted (Ctrl-C)" in err


def test_a_second_ctrl_c_ends_a_command_that_swallows_the_first() -> None:
    process = _start("no-check")
    process.send_signal(signal.SIGINT)
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "swallowed"  # the first Ctrl-C was handled, and swallowed
    process.send_signal(signal.SIGINT)
    code, out, err = _finish(process)
    assert code == 130
    assert "ran to the end" not in out
    assert "interrupted again before the run stopped: exiting now" in err
