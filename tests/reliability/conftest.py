"""Fixtures of the reliability tests: the misbehaving fake envs and a release of hung steps."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from reliability.fakes import RELEASE, register_fakes

register_fakes()


@pytest.fixture(autouse=True)
def release_hung_steps() -> Iterator[None]:
    """Let any step a test left hanging return once the test is over."""
    RELEASE.clear()
    yield
    RELEASE.set()
