"""Offline generation and caching of TextWorld games with TextWorld's own generator."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any

from agentgym_suite.core.data import cache_dir, data_dir
from agentgym_suite.core.errors import AgentGymError

CHALLENGES = ("custom", "tw-cooking", "tw-coin_collector", "tw-treasure_hunter")

DEFAULT_SETTINGS: dict[str, dict[str, Any]] = {
    "custom": {"nb_rooms": 3, "nb_objects": 6, "quest_length": 3},
    "tw-cooking": {"recipe": 1, "take": 1, "go": 1, "open": False, "cook": False, "cut": False, "drop": False},
    "tw-coin_collector": {"level": 1},
    "tw-treasure_hunter": {"level": 1},
}
"""Difficulty knobs per challenge. ``custom``: rooms, objects, quest length. ``tw-cooking``:
recipe size, ingredients to fetch, rooms (1, 6, 9, 12) and the skills open/cook/cut/drop.
``tw-coin_collector``/``tw-treasure_hunter``: ``level`` (1-300)."""

SPLIT_SEED_OFFSETS = {"train": 0, "valid": 1_000_003, "test": 2_000_003}
"""Games of different splits come from disjoint seed ranges."""


def games_root() -> Path:
    """Where generated games are written: ``cache_dir()/textworld/games`` (``$AGENTGYM_CACHE``
    or the per-user cache folder). Benchmark data folders are often shared and read-only, so
    nothing is generated into them."""
    return cache_dir() / "textworld" / "games"


def data_games_root() -> Path:
    """``$AGENTGYM_DATA/textworld/games``: games found there are played from there, never written."""
    return data_dir() / "textworld" / "games"


class DamagedGameError(AgentGymError, OSError):
    """A cached game file is unreadable or damaged (the Z-machine would abort the process)."""


def story_file_problem(path: str | Path) -> str:
    """Why the Z-machine story file at ``path`` cannot be played, or '' when it looks sound.

    The interpreter behind TextWorld ends the whole Python process on a bad story file, so
    the header is checked first: version byte, declared length against the file size, and
    the header checksum over the declared length.
    """
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        return f"cannot be read ({type(exc).__name__}: {exc})"
    if len(data) < 0x40:
        return f"is {len(data)} bytes long, shorter than a Z-machine header"
    version = data[0]
    if not 1 <= version <= 8:
        return f"has Z-machine version byte {version}, not 1-8"
    length = int.from_bytes(data[0x1A:0x1C], "big") * (2 if version <= 3 else 4 if version <= 5 else 8)
    if length and length > len(data):
        return f"is cut short ({len(data)} of {length} bytes)"
    expected = int.from_bytes(data[0x1C:0x1E], "big")
    if length and sum(data[0x40:length]) % 0x10000 != expected:
        return "fails its header checksum"
    return ""


def resolve_settings(challenge: str, settings: dict[str, Any] | None) -> dict[str, Any]:
    """Merge user ``settings`` over the challenge defaults, rejecting unknown knobs."""
    if challenge not in CHALLENGES:
        raise ValueError(f"Unknown TextWorld challenge {challenge!r}; choose one of {CHALLENGES}.")
    merged = dict(DEFAULT_SETTINGS[challenge])
    unknown = set(settings or {}) - set(merged)
    if unknown:
        raise ValueError(
            f"Unknown setting(s) {sorted(unknown)} for challenge {challenge!r}; known: {sorted(merged)}."
        )
    merged.update(settings or {})
    return merged


def family_key(challenge: str, settings: dict[str, Any]) -> str:
    """A short stable name for a (challenge, settings) family, used as a folder name."""
    digest = hashlib.sha1(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:10]
    return f"{challenge}-{digest}"


def game_path(challenge: str, settings: dict[str, Any], seed: int, root: Path | None = None) -> Path:
    """Path of the cached ``.z8`` game for one seed (it may not exist yet)."""
    return (root or games_root()) / family_key(challenge, settings) / f"seed-{seed}.z8"


def _playable(path: Path) -> bool:
    return path.exists() and path.with_suffix(".json").exists() and not story_file_problem(path)


def generate_game(challenge: str, settings: dict[str, Any], seed: int, root: Path | None = None) -> Path:
    """Return the path of the game for ``seed``, generating and caching it first if needed.

    Without ``root``, a sound copy already in :func:`data_games_root` is used as is; anything
    generated goes to :func:`games_root`. Generation writes into a temporary folder and moves
    the files into place, so concurrent processes never see half-written games.
    """
    target = game_path(challenge, settings, seed, root)
    if _playable(target):
        return target  # a damaged cached game falls through and is generated again
    if root is None:
        shared = game_path(challenge, settings, seed, data_games_root())
        if _playable(shared):
            return shared
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=".gen-"))
    try:
        with warnings.catch_warnings():
            # jericho warns that generated games lack its per-game score tables; TextWorld
            # tracks the score itself.
            warnings.filterwarnings("ignore", message=".*is not fully supported.*")
            produced = _compile(challenge, settings, seed, tmp / target.name)
        for suffix in (".json", ".z8"):  # the .z8 last: its presence marks a complete game
            source = produced.with_suffix(suffix)
            if source.exists():
                os.replace(source, target.with_suffix(suffix))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def _compile(challenge: str, settings: dict[str, Any], seed: int, path: Path) -> Path:
    import textworld
    import textworld.challenges
    from textworld import GameOptions

    options = GameOptions()
    options.seeds = seed
    options.path = str(path)
    options.force_recompile = True
    options.file_ext = ".z8"
    if challenge == "custom":
        options.nb_rooms = int(settings["nb_rooms"])
        options.nb_objects = int(settings["nb_objects"])
        options.quest_length = int(settings["quest_length"])
        game_file, _ = textworld.make(options)
    else:
        _, make, _ = textworld.challenges.CHALLENGES[challenge]
        challenge_settings = dict(settings)
        if challenge == "tw-cooking":
            challenge_settings.setdefault("recipe_seed", seed)
            challenge_settings.setdefault("split", "")
        game = make(challenge_settings, options)
        game_file = textworld.generator.compile_game(game, options)
    return Path(game_file)
