"""A killed worker is named by how it ended, promptly, even while another process holds its sentinel pipe.

``rollout.workers.processes._reaped`` polls ``waitpid`` instead of joining the worker. This test
covers the held-sentinel case (a grandchild the worker forked keeps the pipe open); it does not
reproduce the failure that led to the change (a SIGKILLed worker read as "still running" after the
Ray tests had run in the same pytest process, in 2 of 3 runs), which needs that test order.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import time

from agentgym_suite.core.process_groups import exit_reason
from agentgym_suite.rollout.workers.processes import _reaped


def _worker_with_a_grandchild(ready: multiprocessing.synchronize.Event) -> None:  # type: ignore[name-defined]
    os.setpgrp()  # the test ends the whole group afterwards
    if os.fork() == 0:  # the grandchild inherits the sentinel's write end and outlives the worker
        time.sleep(60)
        os._exit(0)
    ready.set()
    time.sleep(60)


def test_a_killed_worker_whose_sentinel_is_still_held_is_named_killed() -> None:
    ctx = multiprocessing.get_context("fork")
    ready = ctx.Event()
    process = ctx.Process(target=_worker_with_a_grandchild, args=(ready,), daemon=True)
    process.start()
    try:
        assert ready.wait(30), "the worker did not start"
        os.kill(process.pid, signal.SIGKILL)
        started = time.monotonic()
        assert exit_reason(_reaped(process, patience=10.0)) == "was killed by SIGKILL"
        assert time.monotonic() - started < 5.0
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
