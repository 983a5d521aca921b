"""Out-of-world commands of TextWorld's games, and which of them never reach the game.

TextWorld-v0 plays Inform 7 story files in the Z-machine interpreter that jericho bundles
(frotz). Besides moves in the story, that engine answers commands about the game itself.
The full list was read from the engines:

* the dictionary of the generated games (``jericho.FrotzEnv.get_dictionary()``): the Inform 7
  Standard Rules' out-of-world verbs ``save restore restart quit q verify version score
  script transcript verbose brief superbrief long short normal notify pronouns nouns``, the
  answers ``yes y no``, and TextWorld's own ``help goal print_state enable disable restrict
  tw-extra tw-print tw-trace``;
* the words the Inform parser handles before any grammar: ``undo``, ``oops``/``o`` and
  ``again``/``g``;
* TextWorld's Inform 7 source generator (``textworld.generator.inform7.world2inform7``), which
  defines ``tw-extra-infos …``, ``tw-trace-actions``, ``tw-print …``, ``print_state``,
  ``enable print state option``, ``disable print state option`` and ``restrict commands``;
* jericho's ``defines.ILLEGAL_ACTIONS``, the commands jericho keeps out of its own action
  candidates because they act on the game from outside the story; it adds ``unscript
  noscript recording replay die``.

Refused (an invalid action; the game never sees them), because each breaks the episode:

* files: ``save`` writes a ``.qzl`` file into the working directory, ``restore`` loads one,
  ``script``/``transcript`` start a transcript file there that grows with every command,
  ``unscript``/``noscript`` switch it, ``recording``/``replay`` write or read a command file;
* the story's life: ``restart`` starts the story again while the env's history (and so its
  oracle) goes on; ``quit``/``q``/``die`` leave a yes/no prompt, and a ``yes`` halts the
  interpreter; ``undo`` takes a move back, ``again``/``g`` repeat and ``oops``/``o`` redo the
  last move, all of which the env's history cannot see;
* presentation: ``verbose``/``long``, ``brief``/``normal``, ``superbrief``/``short`` and
  ``notify`` change how every later observation of the story reads;
* TextWorld's control channel: ``tw-extra-infos``, ``tw-trace-actions`` and ``tw-print`` are
  how TextWorld itself reads the game state; ``print_state`` and ``enable print state
  option`` print the whole hidden world (closed containers included); ``restrict commands``
  changes how taking things works for the rest of the story.

Passed through as TextWorld does, being harmless questions: ``score``, ``version``,
``verify``, ``pronouns``/``nouns``, ``help``, ``goal``, and ``yes``/``no`` (no refused command
is left to ask a question).

A command is matched the way the game reads it: lower-cased, cut into commands at ``.``, ``,``,
``"`` and the word ``then``, and each word compared as the Z-machine dictionary stores it
(its first nine Z-characters), so ``transcripts`` counts as ``transcript`` just as the game
would take it.
"""

from __future__ import annotations

import re

DICTIONARY_ZCHARS = 9
"""Z-characters a dictionary word keeps in story files of version 4 and later (TextWorld's .z8)."""
_ALPHABET_2 = "\n0123456789.,!?_#'\"/\\-:()"
"""The Z-machine's third alphabet from position 7: one shift plus one Z-character each."""

_REFUSED: dict[tuple[str, ...], str] = {}


def _refuse(reason: str, *phrases: str) -> None:
    for phrase in phrases:
        _REFUSED[tuple(phrase.split())] = reason


_refuse("it would write a save file into the working directory", "save")
_refuse("it would load a saved game behind the environment's back", "restore")
_refuse("it would start a transcript file in the working directory", "script", "transcript")
_refuse("it switches the interpreter's transcript file", "unscript", "noscript")
_refuse("it would write or read a file of recorded commands", "recording", "replay")
_refuse("it would restart the story while the episode goes on", "restart")
_refuse("it would end the story behind the environment's back", "quit", "q", "die")
_refuse("it would take back a move the environment has recorded", "undo")
_refuse("it would repeat the last move without the environment seeing it", "again", "g")
_refuse("it would redo the last move without the environment seeing it", "oops", "o")
_refuse("it changes how every later room description reads",
        "verbose", "long", "brief", "normal", "superbrief", "short")
_refuse("it switches score notices for the rest of the story", "notify")
_refuse("it is TextWorld's own channel for reading the game state",
        "tw-extra-infos", "tw-trace-actions", "tw-print")
_refuse("it prints the hidden state of the whole world",
        "print_state", "enable print state option", "disable print state option")
_refuse("it changes the rules of taking things for the rest of the story", "restrict commands")

_COMMAND_BREAKS = re.compile(r"[.,\"]|\bthen\b")


def dictionary_form(word: str) -> tuple[int, ...]:
    """``word`` as the Z-machine dictionary compares it: its Z-characters, cut after nine.

    Letters a-z take one Z-character, the punctuation of the third alphabet two, anything
    else four (a ZSCII escape); capitals take two, though games lower-case input first.
    """
    zchars: list[int] = []
    for ch in word:
        if "a" <= ch <= "z":
            zchars.append(ord(ch) - ord("a") + 6)
        elif ch in _ALPHABET_2:
            zchars += [5, 7 + _ALPHABET_2.index(ch)]
        elif "A" <= ch <= "Z":
            zchars += [4, ord(ch) - ord("A") + 6]
        else:
            code = ord(ch)
            zchars += [5, 6, (code >> 5) & 31, code & 31]
        if len(zchars) >= DICTIONARY_ZCHARS:
            break
    return tuple(zchars[:DICTIONARY_ZCHARS])


_REFUSED_FORMS = {tuple(dictionary_form(w) for w in phrase): (" ".join(phrase), reason)
                  for phrase, reason in _REFUSED.items()}
_LONGEST = max(len(p) for p in _REFUSED_FORMS)

REFUSED_COMMANDS: tuple[str, ...] = tuple(" ".join(p) for p in _REFUSED)
"""Every out-of-world command the env refuses (see the module docstring for why)."""
HARMLESS_COMMANDS = ("score", "version", "verify", "pronouns", "nouns", "help", "goal", "yes", "y", "no")
"""Out-of-world commands passed to the game: questions that change nothing."""


def meta_command_problem(command: str) -> str:
    """Why ``command`` would reach the interpreter as an out-of-world command ('' when it is a
    move in the story or a harmless question)."""
    for part in _COMMAND_BREAKS.split(command.lower()):
        words = part.split()
        forms = tuple(dictionary_form(w) for w in words[:_LONGEST])
        for size in range(min(len(forms), _LONGEST), 0, -1):
            found = _REFUSED_FORMS.get(forms[:size])
            if found:
                phrase, reason = found
                typed = " ".join(words[:size])
                read_as = "" if typed == phrase else f" (the game reads it as {phrase!r})"
                return f"{typed!r}{read_as} is an interpreter command, not a move in the game: {reason}"
    return ""
