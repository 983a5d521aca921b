"""The ``info`` keys of the shared contract, and the union of every env's declared keys.

* :data:`INFO_KEYS` — keys with one meaning in every env, read by the generic layers: the
  required ones every env fills in (:data:`REQUIRED_INFO_KEYS`), and optional ones an env sets
  only when they apply (``error``, ``privileged``, tool-env conversations, env-rendered prompts...).
* Keys one benchmark adds for its own metrics and state are declared by its env class, as
  Gymnasium envs document theirs: a class attribute ``info_keys`` (key -> type and meaning)
  listed in the class docstring. :func:`documented_keys` unions the contract with the
  declarations of an env's classes (and of the envs it plays on, for envs that pass on their
  info: see :func:`documented_keys`).

A key of one method or benchmark is declared in its home even when a generic layer reads it:
a multi-task trial's ``role``, ``position`` and ``position_rewards`` (SkillRise's trial env), a
sequence's ``sequence_id`` (VitaBench), a world model's own records of its generations (a method's
env). The generic reader (the rollout engine, the per-sequence metrics) documents what it does with
the key; the declaring env documents what it means. So this module holds only the generic keys,
and the registration hook of every other key is the ``info_keys`` declaration of the class that
reports it (an env, or an agent that adds keys to the infos it passes on).

A key that is in neither is a mistake: the registration tests play every env and fail on an
undocumented key (:func:`undocumented_keys`). Declare a new key in the env class that reports it.
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator

import gymnasium as gym

INFO_KEYS: dict[str, str] = {
    "task_id": "str: id of the current task, one of env.unwrapped.task_ids().",
    "task": "str: the instruction the agent is asked to accomplish.",
    "won": "bool: the task is solved.",
    "score": "float in [0, 1]: normalised task score so far (1.0 when won).",
    "action_valid": "bool: the last action was well-formed and accepted (True after reset).",
    "turn": "int: number of agent actions taken in this episode.",
    "admissible_actions": "list[str] | None: commands the env accepts now (command envs).",
    "tools": "list[dict] | None: OpenAI-format tool schemas (tool envs).",
    "tools_in_prompt": "bool, optional: False when the env's own messages already describe its tools as the "
                       "benchmark's harness does (e.g. a prompting-style system prompt), so agents must not also pass "
                       "``tools`` to the chat template or the API; the env still checks calls against ``tools``.",
    "task_family": "str, in the reset info: the task's family (e.g. the ALFWorld task type), '' for none; "
                   "see TextEnv.task_family.",
    "departure_in_play": "str, optional: a departure from the benchmark's official harness that happened in this "
                         "episode's play rather than in the settings (e.g. a guard that refused a call upstream would "
                         "run); evaluation adds it to summary.json's leaderboard_departures.",
    "scorable": "bool, optional, at the end: False when the env could not score the episode (e.g. a judge it needs is "
                "missing); evaluation leaves such episodes out of its rates and counts them.",
    "user_simulator": "str, optional: who played the simulated user (``scripted``, ``llm:<backend spec>``…).",
    "error": "str, optional: why the episode ended abnormally (a backend crash, a timeout, a failed tool call "
             "under end_on_tool_error).",
    "privileged": "dict, only with privileged=True: what only a teacher may see (oracle solution, gold answer, the env's "
                  "privileged texts).",
    "invalid_reason": "str, optional: why the last action was not valid (set with action_valid=False).",
    "projected_action": "str, command envs after a step: the action as verl-agent's projection reads the completion "
                        "(extracted command lower-cased, else its last 30 characters; search formats keep the tag); "
                        "what the single prompt's history shows.",
    "messages": "list[dict], tool envs: the conversation so far in OpenAI chat format (system, user, assistant, "
                "tool messages).",
    "task_type": "str, optional: the task's family within its benchmark (evaluation summaries break success "
                 "down by it).",
    "raw_observation": "str, optional: the observation without prompt rendering, when the env renders its own "
                       "prompts (the anchor state of credit plug-ins that group steps by state).",
    "prompt_messages": "list[dict], optional: the whole prompt of the next turn when the env renders it itself; "
                       "sent to the model as it is.",
    "role_generations": "list[RoleGeneration], optional: generations a model made inside the env this step while "
                        "playing a role of it (see core.role_generation); the rollout engine keeps them on the turn "
                        "and a trainer trains those of a role its credit plug-in lists.",
    "prompt_truncation": "str, optional, with prompt_messages: 'error' when the prompt must not be cut to fit the "
                         "model's prompt limit (a longer prompt is an error, not a left-truncation).",
}
"""Key -> type and meaning of the shared contract. Only the :data:`REQUIRED_INFO_KEYS` are always present."""

SHARED_LABEL_KEYS: tuple[str, ...] = ("user_simulator",)
"""Keys of the shared contract that say how a result was obtained (see :func:`declared_label_keys`)."""

REQUIRED_INFO_KEYS = ("task_id", "task", "won", "score", "action_valid", "turn", "admissible_actions", "tools")


def declared_info_keys(*sources: Any) -> dict[str, str]:
    """Key -> meaning of every key the shared contract and ``sources`` document.

    A source is an env class or instance (or any class that adds keys to the infos it passes
    on, such as an agent that wraps another). Each class in a source's MRO may declare
    ``info_keys`` (the keys that class adds). For an instance, the envs it plays on count too:
    a ``gymnasium.Wrapper``'s ``env``, and the envs an env returns from ``inner_envs()`` (envs
    that pass on the info of the envs they play, such as SkillRise trials and envs over a tool env).
    """
    keys = dict(INFO_KEYS)
    for source in sources:
        for cls in _declaring_classes(source):
            keys.update(vars(cls).get("info_keys") or {})
    return keys


def declared_label_keys(*sources: Any) -> tuple[str, ...]:
    """The final-info keys that say how a result was obtained (which simulated user, judge, memory or
    retriever played its part): the shared ones, then each class's ``label_keys`` declaration in
    ``sources`` (classes or instances, as for :func:`declared_info_keys`), without repeats.
    Evaluation summaries list the values episodes reported for them under ``labels``."""
    keys = list(SHARED_LABEL_KEYS)
    for source in sources:
        for cls in _declaring_classes(source):
            keys.extend(vars(cls).get("label_keys") or ())
    return tuple(dict.fromkeys(keys))


def documented_keys(*sources: Any) -> frozenset[str]:
    """The keys the shared contract and ``sources`` document (see :func:`declared_info_keys`)."""
    return frozenset(declared_info_keys(*sources))


def undocumented_keys(info: Iterable[str], *sources: Any) -> list[str]:
    """The keys of ``info`` (a dict or any iterable of keys) that neither the shared contract nor
    ``sources`` (the env that reported them, see :func:`declared_info_keys`) document, sorted."""
    known = documented_keys(*sources)
    return sorted(str(key) for key in info if key not in known)


def _declaring_classes(source: Any, seen: set[int] | None = None) -> Iterator[type]:
    """The classes of ``source`` and, for an instance, of the envs it wraps or plays on."""
    seen = set() if seen is None else seen
    if id(source) in seen:
        return
    seen.add(id(source))
    if isinstance(source, type):
        yield from reversed(source.__mro__)
        return
    yield from reversed(type(source).__mro__)
    inner: list[Any] = []
    if isinstance(source, gym.Wrapper):
        inner.append(source.env)
    hook = getattr(source, "inner_envs", None)
    if callable(hook):
        inner.extend(hook())
    for env in inner:
        yield from _declaring_classes(env, seen)


def base_info(**values: Any) -> dict[str, Any]:
    """Return an info dict holding every required key (``None``/defaults where unknown)."""
    info: dict[str, Any] = {
        "task_id": "",
        "task": "",
        "won": False,
        "score": 0.0,
        "action_valid": True,
        "turn": 0,
        "admissible_actions": None,
        "tools": None,
    }
    info.update(values)
    return info
