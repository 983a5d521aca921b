"""``FixtureProfile``: how the suite's generic tests play an env, declared by the env itself.

The generic test suites (Gymnasium's ``check_env`` and the oracle on every registered id, the
generated-action fuzz, the hostile-input tests, the worker and vector tests, evaluation) read an
env's :attr:`~agentgym_suite.core.text_env.TextEnv.fixture_profile` next to its
:meth:`~agentgym_suite.core.text_env.TextEnv.fixture_kwargs`, never a table of env ids, so a new
env is tested by them with no test edit. The defaults fit a quick env whose every listed action
is accepted; an env overrides only what differs.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

__all__ = ["FixtureProfile", "fixture_profile", "missing_programs"]


@dataclass(frozen=True)
class FixtureProfile:
    """What the generic tests need to know about an env made with its ``fixture_kwargs``."""

    fuzz_examples: int = 50
    """Hypothesis examples of the generated-action fuzz in the default run (each plays up to 8
    actions; ten times as many with ``-m slow``). Lower it for an env whose steps cost real time
    (a planner, a JVM)."""
    oracle_examples: int = 20
    """Examples of the test that lets the oracle win after hostile actions (ten times as many
    with ``-m slow``)."""
    admissible_guaranteed: bool = True
    """Every command in ``info["admissible_actions"]`` is accepted (``action_valid``). False when
    the list may hold commands the backend then rejects (ScienceWorld lists 'open drawer' where
    it answers 'No known action matches that input.'); the fuzz then checks only the rest."""
    refusals_scored: bool = False
    """A call the env refuses (an unknown tool, or an error result) still counts in the score, so the
    test that lets the oracle win after hostile actions sends no such call (FinMCP-Bench scores the
    name of every call made, answered or not, so such a call rightly costs the exact-sequence win);
    the fuzz still checks that they are invalid actions or error results, never crashes."""
    goes_on_kwargs: Mapping[str, Any] = field(default_factory=dict)
    """Keyword arguments that leave room to play the oracle after hostile actions: an env that ends
    an episode at the first malformed call by design (EnvACE), or whose turn budget counts refused
    actions (SearchQA counts every response, as Search-R1 does)."""
    refused_command: Callable[[str], Any] | None = None
    """For a command env: truthy for a bare command (plain action format) the env always refuses as
    an invalid action, such as its engine's out-of-world commands (``save``, ``reset task``); the
    fuzz checks that ``action_valid`` is False for them."""
    needs_programs: tuple[str, ...] = ()
    """Executables the env starts (ScienceWorld: ``java``): the tests skip the env where one is
    missing, and carry a pytest mark of each program's name (``-m "not java"``; a new program's
    mark is declared under ``markers`` in ``pyproject.toml``)."""
    needs_server: bool = False
    """The env is made against a running server only (``Remote-v0``): the registration and
    reliability tests leave it to ``tests/serving``."""
    role_kwargs: Mapping[str, Any] = field(default_factory=dict)
    """Keyword arguments, over the fixture kwargs, under which every model-played role the env declares
    (its ``user_setting``, ``judge_setting`` and ``policy_setting``) is asked within the oracle's first
    episodes once each is given a model: EnvACE's judge scores only with ``reward_mode='judge'``. The
    role-routing test (``tests/test_model_roles_routed.py``) adds them."""
    role_replies: Mapping[str, Callable[[Sequence[Mapping[str, Any]]], str]] = field(default_factory=dict)
    """Per role, the answer a stand-in model gives to a request's chat messages, for roles whose answer
    must meet a contract for the episode to go on to where the other roles are asked (EnvACE's world
    model answers in its ``<execution_result>`` layout, else the first call ends the episode before the
    judge speaks). Roles not named get a bare stop text."""


DEFAULT_PROFILE = FixtureProfile()


def fixture_profile(env_class: Any) -> FixtureProfile:
    """The profile ``env_class`` declares (the default for a class that declares none, such as a
    ``gymnasium.Env`` outside the suite)."""
    profile = getattr(env_class, "fixture_profile", DEFAULT_PROFILE)
    if not isinstance(profile, FixtureProfile):
        raise TypeError(f"{getattr(env_class, '__name__', env_class)}.fixture_profile is a {type(profile).__name__}; "
                        "declare a FixtureProfile (agentgym_suite.core.fixture_profile).")
    return profile


def missing_programs(profile: FixtureProfile) -> list[str]:
    """The executables of ``profile.needs_programs`` not found on ``PATH``."""
    return [program for program in profile.needs_programs if shutil.which(program) is None]
