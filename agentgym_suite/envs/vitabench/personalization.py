"""VitaBench 2.0 prompts: the personalized agent's system prompt and the simulated user's.

They state upstream's rules (``vita/prompts/personalization_*.yaml``) in this suite's words:
the agent leans on the user preference memory when a request is vague and, in a proactive
subtask, must not act on needs the user has not expressed; the user keeps requests vague,
reveals preferences only through the memory, gives their user id when asked for identity,
accepts a recommendation that meets the instruction's explicit conditions, and in a proactive
subtask tells what it holds back only when the agent asks about it directly.

When the official prompt files are in ``$AGENTGYM_DATA/vitabench/prompts/`` (upstream's
``personalization_agent_system_prompt.yaml``, ``personalization_agent_proactive_system_prompt.yaml``,
``personalization_agent_addendum.yaml``, ``personalization_user_system_prompt.yaml`` and
``personalization_user_proactive_section.yaml``, English text), they are used instead.
"""

from __future__ import annotations

from typing import Any

import yaml

from agentgym_suite.core.data import data_dir

AGENT_PROMPT = """# Environment
- Current time: {time}

# Role
You are a personalized service assistant. Serve this user in a way that fits what you know about them.

# Using tools
- Before calling a tool, check that you know every argument; ask the user for what you cannot find.
- When the user cannot tell you something, look in the user preference memory first, then use the tools.
- When a request is vague (e.g. "order something for me"), infer the likely need from the preference memory.

# Using the preference memory
- Matching the user's preferences matters more than store ratings, distance or similar factors.
- Confirm a recommendation built on the user's preferences, but do not ask again what the memory already answers.
- Identity details such as the user id must be confirmed with the user; never invent one or use a placeholder.

# Conversation
- Use only information from this context, the memory and the tools; never make facts up.
- Serve the request; do not steer the user towards new needs.
- When the request is done, ask whether the user needs anything else; if not, write ###STOP### to end the conversation."""

AGENT_PROACTIVE_ROLE = ("You are a personalized service assistant. Act only on needs the user really has; do not decide for "
                        "the user and do not push services on them. When information you need is missing, ask for it.")

USER_PROMPT = """# Your role
You are a user talking to a service assistant. Your character:
<persona>
{persona}
</persona>

# Your request
Ask the assistant for this:
<instruction>
{instruction}
</instruction>

# How you talk
- Write one short line per message.
- Keep your requests vague and brief; do not volunteer details.
- When asked about your preferences, answer vaguely ("whatever", "you decide", "not sure").

# Accepting or rejecting
- Only accept or reject once the assistant makes a clear recommendation.
- Accept it when it meets every explicit condition of <instruction> (size, quantity, time, price limit…), whatever else it chose.
- If it misses an explicit condition, say briefly that you are not happy with it, without saying why.

# What you disclose
- Do not reveal your preferences; the assistant should know them from its memory.
- If asked for identity information (user id, phone number…), give your user id: {user_id}.
{proactive_section}
# Ending
- When the assistant has done what you asked and you are satisfied, write ###STOP### to end the conversation."""

USER_PROACTIVE_SECTION = """- There is something you have not told the assistant yet:
  <proactive_info>
  {proactive_info}
  </proactive_info>
- Tell it truthfully only when the assistant asks a question directly about it; otherwise keep it to yourself.
"""

MEMORY_SECTION = ("\n\n## User preference memory\nWhat is known about this user's preferences from past interactions. "
                  "Use it to serve the user, above all when a request is vague:\n\n{memory}")


def official_prompt(name: str) -> str | None:
    """The English text of an official prompt file in ``vitabench/prompts/``, or None when it is not there."""
    path = data_dir() / "vitabench" / "prompts" / f"{name}.yaml"
    if not path.exists():
        return None
    try:
        return str(yaml.safe_load(path.read_text(encoding="utf-8"))["english"])
    except (yaml.YAMLError, KeyError, TypeError):
        return None


def is_proactive(task: dict[str, Any]) -> bool:
    """True for a subtask that tests proactiveness (``"proactive"`` in ``skill_tested``)."""
    return "proactive" in (task.get("skill_tested") or [])


def profile_lines(profile: dict[str, Any]) -> str:
    """The user's account details as ``- key: value`` lines."""
    return "\n".join(f"- {k}: {', '.join(map(str, v)) if isinstance(v, list) else v}" for k, v in profile.items())


def agent_system_prompt(task: dict[str, Any], memory: str) -> str:
    """The agent's system prompt for a 2.0 subtask: rules, the user's account details and the memory read for it."""
    proactive = is_proactive(task)
    official = official_prompt("personalization_agent_proactive_system_prompt" if proactive else "personalization_agent_system_prompt")
    if official is not None:
        addendum = official_prompt("personalization_agent_addendum") or ""
        base = (official + ("\n\n" + addendum if addendum else "")).replace("{time}", str(task["environment"].get("time", "")))
    else:
        base = AGENT_PROMPT.replace("{time}", str(task["environment"].get("time", "")))
        if proactive:
            base = base.replace("You are a personalized service assistant. Serve this user in a way that fits what you know about them.",
                                AGENT_PROACTIVE_ROLE)
    profile = profile_lines(task.get("user_profile") or {})
    if profile:
        base += "\n\n## The user's account\nRegistered details you may use directly:\n" + profile
    return base + MEMORY_SECTION.format(memory=memory)


def user_system_prompt(task: dict[str, Any]) -> str:
    """The simulated user's system prompt for a 2.0 subtask (with the held-back intention when proactive)."""
    intention = str(task.get("user_intention") or "")
    proactive = is_proactive(task) and bool(intention)
    template = official_prompt("personalization_user_system_prompt")
    section_template = official_prompt("personalization_user_proactive_section") if template is not None else None
    section = ""
    if proactive:
        section = (section_template or USER_PROACTIVE_SECTION).replace("{proactive_info}", intention) + "\n"
    persona = profile_lines(task.get("user_profile") or {})
    text = (template or USER_PROMPT).replace("{persona}", persona).replace("{instruction}", str(task.get("instruction", "")))
    return text.replace("{proactive_section}", section).replace("{user_id}", str(task.get("user_id", "")))


__all__ = ["agent_system_prompt", "is_proactive", "official_prompt", "profile_lines", "user_system_prompt"]
