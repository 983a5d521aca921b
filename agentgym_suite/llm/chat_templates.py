"""Chat templates the suite ships (Jinja, in the format ``transformers`` applies).

``CHATML_TOOLS_TEMPLATE`` is ChatML with tool support in the Hermes/Qwen convention: the
tool schemas go into the system turn inside ``<tools></tools>``, the assistant calls a tool
by writing ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``, and tool results
come back in a user turn inside ``<tool_response></tool_response>`` blocks.
"""

from __future__ import annotations

import json
from typing import Any

CHATML_TOOLS_TEMPLATE = (
    "{% set ns = namespace(system='') %}"
    "{% if messages and messages[0]['role'] == 'system' %}"
    "{% set ns.system = messages[0]['content'] %}"
    "{% set rest = messages[1:] %}"
    "{% else %}{% set rest = messages %}{% endif %}"
    "{% if tools %}"
    "<|im_start|>system\n"
    "{% if ns.system %}{{ ns.system }}\n\n{% endif %}"
    "# Tools\n\nYou can call the functions described in <tools></tools>:\n<tools>"
    "{% for tool in tools %}{{ '\\n' }}{{ tool | tojson }}{% endfor %}{{ '\\n' }}</tools>\n\n"
    "To call one, write a JSON object with its name and arguments inside "
    "<tool_call></tool_call> tags, for example:\n"
    "<tool_call>\n{\"name\": \"fn\", \"arguments\": {\"x\": 1}}\n</tool_call><|im_end|>\n"
    "{% elif ns.system %}"
    "<|im_start|>system\n{{ ns.system }}<|im_end|>\n"
    "{% endif %}"
    "{% for message in rest %}"
    "{% if message['role'] == 'tool' %}"
    "{% if loop.first or loop.previtem['role'] != 'tool' %}<|im_start|>user{% endif %}"
    "{{ '\\n' }}<tool_response>\n{{ message['content'] }}\n</tool_response>"
    "{% if loop.last or loop.nextitem['role'] != 'tool' %}<|im_end|>\n{% endif %}"
    "{% elif message['role'] == 'assistant' %}"
    "<|im_start|>assistant\n{{ message['content'] or '' }}"
    "{% for call in message.get('tool_calls') or [] %}"
    "{% set fn = call['function'] if 'function' in call else call %}"
    "{{ '\\n' }}<tool_call>\n{\"name\": \"{{ fn['name'] }}\", \"arguments\": "
    "{{ fn['arguments'] if fn['arguments'] is string else fn['arguments'] | tojson }}}\n</tool_call>"
    "{% endfor %}"
    "<|im_end|>\n"
    "{% else %}"
    "<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
    "{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
"""ChatML + Hermes-style tool calls."""


def template_supports_tools(template: str | None) -> bool:
    """True when a Jinja chat template reads the ``tools`` variable."""
    return bool(template) and "tools" in template


def render_chat(tokenizer: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
                *, add_generation_prompt: bool, template_kwargs: dict[str, Any] | None = None) -> str:
    """Apply ``tokenizer``'s chat template to ``messages``.

    Tools go in as the template's ``tools`` variable when the template reads it; otherwise
    they are described in the system message (:func:`inject_tools`). ``template_kwargs`` are
    further template variables (e.g. ``{"enable_thinking": False}`` for Qwen3's non-thinking mode).
    """
    kwargs: dict[str, Any] = {**(template_kwargs or {}), "tokenize": False,
                              "add_generation_prompt": add_generation_prompt}
    if tools and template_supports_tools(getattr(tokenizer, "chat_template", None)):
        kwargs["tools"] = tools
    elif tools:
        messages = inject_tools(messages, tools)
    return tokenizer.apply_chat_template(messages, **kwargs)


def inject_tools(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Describe ``tools`` in the system message, for chat templates that ignore ``tools``.

    Uses the same Hermes-style wording as :data:`CHATML_TOOLS_TEMPLATE`; the input list is
    not modified.
    """
    block = "\n".join(json.dumps(t, ensure_ascii=False) for t in tools)
    text = (
        f"# Tools\n\nYou can call the functions described in <tools></tools>:\n<tools>\n{block}\n</tools>\n\n"
        "To call one, write a JSON object with its name and arguments inside <tool_call></tool_call> tags, "
        'for example:\n<tool_call>\n{"name": "fn", "arguments": {"x": 1}}\n</tool_call>'
    )
    messages = [dict(m) for m in messages]
    if messages and messages[0].get("role") == "system":
        messages[0]["content"] = f"{messages[0].get('content') or ''}\n\n{text}".strip()
    else:
        messages.insert(0, {"role": "system", "content": text})
    return messages


def tool_call_text(call: dict[str, Any]) -> str:
    """One OpenAI ``tool_calls`` item written as a Hermes ``<tool_call>`` block."""
    fn = call.get("function") if isinstance(call.get("function"), dict) else call
    arguments = fn.get("arguments", {})
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return f'<tool_call>\n{{"name": {json.dumps(str(fn.get("name", "")), ensure_ascii=False)}, "arguments": {arguments or "{}"}}}\n</tool_call>'


def hermes_messages(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """The conversation in the Hermes text convention, for a server whose template ignores tools.

    The tool schemas go into the system message (:func:`inject_tools`), an assistant message's
    ``tool_calls`` become ``<tool_call>`` blocks after its text, and tool results become one user
    message of ``<tool_response>`` blocks, as :data:`CHATML_TOOLS_TEMPLATE` renders them. The
    result holds only ``role``/``content`` messages; the input list is not modified.
    """
    source = inject_tools(messages, tools) if tools else [dict(m) for m in messages]
    out: list[dict[str, Any]] = []
    results_open = False
    for message in source:
        role = message.get("role")
        content = message.get("content")
        text = content if isinstance(content, str) else ("" if content is None else json.dumps(content, ensure_ascii=False))
        if role == "tool":
            block = f"<tool_response>\n{text}\n</tool_response>"
            if results_open:
                out[-1]["content"] += "\n" + block
            else:
                out.append({"role": "user", "content": block})
            results_open = True
            continue
        results_open = False
        if role == "assistant" and message.get("tool_calls"):
            blocks = "\n".join(tool_call_text(call) for call in message["tool_calls"])
            out.append({"role": "assistant", "content": f"{text}\n{blocks}".strip()})
        else:
            out.append({"role": str(role), "content": text})
    return out
