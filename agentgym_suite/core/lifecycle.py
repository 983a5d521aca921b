"""What every env of the suite does the same way around its episodes: checking ``reset`` options,
refusing calls after ``close()``, and ``copy.deepcopy``.

* :func:`check_reset_options` — ``options`` must be a mapping whose keys the env declares
  (``reset_options``, a class attribute). Unknown keys are an **error**, not a warning:
  Gymnasium's own envs ignore options they do not read, but here the options choose the task,
  and a typo (``{"taskid": 3}``) would silently play a random task and put it in the results
  under the wrong id. An error costs one edit and loses nothing; a warning scrolls by in a long
  evaluation. (Gymnasium's vector envs take ``reset_mask`` out of ``options`` before the
  sub-envs see them, so it needs no declaration.)
* :func:`refuse_if_closed` — after ``close()`` the backend is gone (ScienceWorld's JVM shut
  down, TextWorld's game stopped); a later ``step`` or ``reset`` raises
  :class:`~agentgym_suite.core.errors.ClosedEnvError` rather than start a new backend behind
  the user's back. ``close()`` itself may be called again (Gymnasium's rule).
* :func:`deepcopy_env` — a field-by-field ``copy.deepcopy`` for envs whose state is plain Python
  data, so the copy plays on its own (:func:`copy_callable` re-binds the closures an env keeps,
  such as tool handlers, to the copy); an env whose backend cannot be copied declares it
  (``copyable = False``) or fails while copying, and either way the caller gets
  :class:`~agentgym_suite.core.errors.EnvNotCopyableError` saying how to get a second env.
"""

from __future__ import annotations

import copy
import difflib
import types
from collections.abc import Iterable, Mapping
from typing import Any

from agentgym_suite.core.errors import ClosedEnvError, EnvNotCopyableError, ResetOptionsError


def _env_id(env: Any) -> str:
    spec = getattr(env, "spec", None)
    return str(spec.id) if spec is not None else ""


def _make_hint(env: Any) -> str:
    env_id = _env_id(env)
    make = f"gymnasium.make({env_id!r}, ...)" if env_id else f"a new {type(env).__name__}(...)"
    return f"make another with {make}, or several at once with agentgym_suite.make_vec / gymnasium.make_vec"


def check_reset_options(env: Any, options: Any, accepted: Iterable[str]) -> dict[str, Any]:
    """``options`` as a dict after checking it: None is ``{}``; a mapping must hold only ``accepted`` keys.

    Raises:
        ResetOptionsError: ``options`` is not a mapping, or has a key outside ``accepted``
            (the message lists the accepted keys and the closest one).
    """
    name = type(env).__name__
    keys = sorted(accepted)
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise ResetOptionsError(
            f"{name}.reset(options=...) takes a dict, got {type(options).__name__} {options!r:.80}. "
            f"Pass e.g. options={{'task_id': ...}}; accepted keys: {', '.join(keys) or 'none'}."
        )
    unknown = [key for key in options if key not in accepted]
    if unknown:
        hints = []
        for key in unknown:
            close = difflib.get_close_matches(str(key), keys, n=1)
            hints.append(f"{key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        raise ResetOptionsError(
            f"{name}.reset() got unknown option(s) {', '.join(hints)}; it accepts: {', '.join(keys) or 'none'}."
        )
    return dict(options)


def refuse_if_closed(env: Any, call: str) -> None:
    """Raise :class:`ClosedEnvError` when ``env`` was closed (its ``_closed`` flag is set)."""
    if getattr(env, "_closed", False):
        raise ClosedEnvError(f"{type(env).__name__}.{call}() after close(): this env's backend is shut down. "
                             f"Stop using it and {_make_hint(env)}.")


def deepcopy_env(env: Any, memo: dict[int, Any]) -> Any:
    """``copy.deepcopy`` of ``env``'s fields into a new instance of its class (for ``__deepcopy__``).

    Raises:
        EnvNotCopyableError: ``env.copyable`` is False, or a field cannot be copied.
    """
    cls = type(env)
    if not getattr(env, "copyable", True):
        raise EnvNotCopyableError(f"copy.deepcopy cannot copy a {cls.__name__}: its backend (a running program) "
                                  f"cannot be copied. To get a second env, {_make_hint(env)}.")
    clone = object.__new__(cls)
    memo[id(env)] = clone
    try:
        for key, value in env.__dict__.items():
            clone.__dict__[key] = copy.deepcopy(value, memo)
    except EnvNotCopyableError:
        raise
    except Exception as exc:
        raise EnvNotCopyableError(f"copy.deepcopy cannot copy a {cls.__name__}: its field {key!r} holds a "
                                  f"{type(value).__name__} that cannot be copied ({type(exc).__name__}: {exc}). "
                                  f"To get a second env, {_make_hint(env)}.") from None
    return clone


def copy_callable(fn: Any, memo: dict[int, Any]) -> Any:
    """A closure re-bound for a deep copy: new cells hold the copies (from ``memo``, or made now) of
    what ``fn`` closed over, so an env's tool handler calls the copied env, not the original.

    ``copy.deepcopy`` shares functions between original and copy; this is for the closures a copy
    kept that way. Anything else (a bound method, which ``deepcopy`` already re-binds, a plain
    function) is returned as it is.
    """
    if not isinstance(fn, types.FunctionType) or not fn.__closure__:
        return fn
    if id(fn) in memo:
        return memo[id(fn)]
    cells = tuple(types.CellType(_copy_cell(cell, memo)) for cell in fn.__closure__)
    clone = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, cells)
    clone.__kwdefaults__ = fn.__kwdefaults__
    clone.__dict__.update(fn.__dict__)
    clone.__qualname__ = fn.__qualname__
    memo[id(fn)] = clone
    return clone


def _copy_cell(cell: Any, memo: dict[int, Any]) -> Any:
    try:
        content = cell.cell_contents
    except ValueError:  # an empty cell
        return None
    if isinstance(content, types.FunctionType):
        return copy_callable(content, memo)
    return copy.deepcopy(content, memo)
