"""``agentgym view``: one static, self-contained HTML page for reading an evaluation's episodes.

The page needs no server and loads nothing from outside. Every piece of text (actions,
observations, prompts, errors) is HTML-escaped when the page is written, so model output is
shown as text and can never become markup or script. A small inline script filters the list
(won / lost / crashed, and a substring of task id, task type or instruction); the filter can be
preset from the address: ``view.html#status=lost&q=pick``.
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any

from agentgym_suite.evaluation.store import SUMMARY_FILE, TRAJECTORIES_FILE, read_records
from agentgym_suite.rollout.records import Trajectory, Turn

VIEW_FILE = "view.html"

_CSS = """
body{font-family:system-ui,sans-serif;margin:1.5rem;color:#1d1d1f;background:#fafafa}
h1{font-size:1.3rem;margin:0 0 .5rem}
.meta{color:#555;margin-bottom:1rem}
.controls{position:sticky;top:0;background:#fafafa;padding:.5rem 0;border-bottom:1px solid #ddd;margin-bottom:1rem}
.controls label{margin-right:1rem}
details.episode{background:#fff;border:1px solid #ddd;border-radius:6px;margin:.4rem 0;padding:.3rem .6rem}
details.episode>summary{cursor:pointer;font-weight:600}
.badge{display:inline-block;padding:0 .4rem;border-radius:4px;font-size:.85em;margin-right:.4rem;color:#fff}
.won{background:#2e7d32}.lost{background:#c62828}.error{background:#6a1b9a}
.turn{border-left:3px solid #90a4ae;margin:.6rem 0;padding-left:.6rem}
.turn.invalid{border-left-color:#e65100}
.field{margin:.2rem 0}.field b{display:inline-block;min-width:6.5rem;color:#37474f}
pre{white-space:pre-wrap;word-break:break-word;background:#f3f5f7;padding:.4rem;border-radius:4px;margin:.2rem 0}
pre.thinking{background:#fff8e1}pre.action{background:#e3f2fd}pre.err{background:#fce4ec}
"""

_JS = """
(function(){
  var status=document.getElementById('status'), query=document.getElementById('q'),
      shown=document.getElementById('shown'), episodes=document.querySelectorAll('details.episode');
  function params(){
    var text=(location.hash||'').replace(/^#/,'')||(location.search||'').replace(/^\\?/,'');
    var out={};
    text.split('&').forEach(function(part){
      if(!part) return; var kv=part.split('=');
      try{out[decodeURIComponent(kv[0])]=decodeURIComponent((kv[1]||'').replace(/\\+/g,' '));}catch(e){}
    });
    return out;
  }
  function apply(){
    var s=status.value, q=query.value.trim().toLowerCase(), n=0;
    episodes.forEach(function(ep){
      var ok=(s==='all'||ep.dataset.status===s||(s==='lost'&&ep.dataset.status==='error'))
             &&(!q||ep.dataset.search.indexOf(q)!==-1);
      if(ok){ep.removeAttribute('hidden');n++;}else{ep.setAttribute('hidden','');}
    });
    shown.textContent=String(n);
  }
  var p=params();
  if(p.status&&['all','won','lost','error'].indexOf(p.status)!==-1) status.value=p.status;
  if(p.q) query.value=p.q;
  status.addEventListener('change',apply); query.addEventListener('input',apply);
  apply();
  document.body.setAttribute('data-ready','1');
})();
"""


def _text(value: Any) -> str:
    """Escape any value for HTML text or attribute content."""
    if value is None:
        return ""
    if not isinstance(value, str):
        value = json.dumps(value, ensure_ascii=False, indent=1) if isinstance(value, (dict, list)) else str(value)
    return escape(value, quote=True)


def _prompt_text(prompt: Any) -> str:
    """A chat prompt as ``role: content`` blocks; any other prompt as text."""
    if isinstance(prompt, list) and all(isinstance(m, dict) for m in prompt):
        return "\n\n".join(f"[{m.get('role', '?')}] {m.get('content', '')}" for m in prompt)
    return prompt if isinstance(prompt, str) else json.dumps(prompt, ensure_ascii=False, indent=1)


def _status(record: Trajectory) -> str:
    """``error`` for a crashed episode (:attr:`~Trajectory.broken`), else ``won`` or ``lost``."""
    return "error" if record.broken else ("won" if record.won else "lost")


def _field(label: str, value: Any, css: str = "") -> str:
    cls = f' class="{css}"' if css else ""
    return f'<div class="field"><b>{escape(label)}</b><pre{cls}>{_text(value)}</pre></div>'


def _turn_html(turn: Turn) -> str:
    number = int(turn.index) + 1
    parts = [f'<div class="turn{"" if turn.action_valid else " invalid"}" data-turn="{number}">']
    head = f"turn {number} · reward {turn.reward:g}" + ("" if turn.action_valid else " · invalid action")
    usage = turn.usage or {}
    if usage.get("prompt_tokens") is not None:
        head += f" · {usage['prompt_tokens']} prompt / {usage.get('completion_tokens', '?')} completion tokens"
    if turn.finish_reason and turn.finish_reason != "stop":
        head += f" · finish: {turn.finish_reason}"
    if turn.context_trimmed:
        shown = ", ".join(str(i + 1) for i in turn.context_trimmed)
        head += f" · turns {shown} left out of the prompt (context window)"
    parts.append(f"<div><i>{_text(head)}</i></div>")
    prompt = turn.prompt or turn.prompt_text
    if prompt:
        parts.append(f"<details><summary>prompt</summary><pre>{_text(_prompt_text(prompt))}</pre></details>")
    if turn.thinking:
        parts.append(_field("thinking", turn.thinking, "thinking"))
    parts.append(_field("action", turn.completion_text, "action"))
    parts.append(_field("observation", turn.observation))
    reason = turn.info.get("invalid_reason") if isinstance(turn.info, dict) else None
    if reason:
        parts.append(_field("why invalid", reason))
    parts.append("</div>")
    return "".join(parts)


def _episode_html(record: Trajectory) -> str:
    status = _status(record)
    search = " ".join(str(x) for x in (record.task_id, record.task_type or "", record.task)).lower()
    head = (
        f'<span class="badge {status}">{status}</span>{_text(record.task_id)} #{int(record.attempt)}'
        f" · {_text(record.task_type or '')} · score {record.score:.2f} · {record.num_turns} turns"
    )
    body = [_field("task", record.task), _field("first observation", record.initial_observation)]
    body += [_turn_html(t) for t in record.turns]
    if record.error:
        stage = f"error ({record.error_stage})" if record.error_stage else "error"
        body.append(_field(stage, record.error, "err"))
    return (
        f'<details class="episode" data-status="{status}" data-key="{_text(record.key)}" '
        f'data-search="{_text(search)}"><summary>{head}</summary>{"".join(body)}</details>'
    )


def render_html(records: list[Trajectory], summary: dict[str, Any] | None = None, title: str = "") -> str:
    """The viewer page for ``records`` (``summary`` adds a header line)."""
    summary = summary or {}
    heading = title or f"{summary.get('env_id', 'evaluation')} · {summary.get('agent', '')}"
    stats = []
    for key in ("episodes", "success_rate", "mean_score", "mean_turns", "invalid_action_rate", "pass@k", "pass^k"):
        value = summary.get(key)
        if value is not None:
            stats.append(f"{key} {value:.3f}" if isinstance(value, float) else f"{key} {value}")
    counts = {s: sum(1 for r in records if _status(r) == s) for s in ("won", "lost", "error")}
    controls = (
        '<div class="controls"><label>show <select id="status">'
        '<option value="all">all</option><option value="won">won</option>'
        '<option value="lost">lost (incl. crashed)</option><option value="error">crashed</option></select></label>'
        '<label>task id / type / text contains <input id="q" type="search" size="30"></label>'
        f'<span><span id="shown">{len(records)}</span> of {len(records)} episodes shown '
        f"({counts['won']} won, {counts['lost']} lost, {counts['error']} crashed)</span></div>"
    )
    episodes = "\n".join(_episode_html(r) for r in records)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">"
        f"<title>{_text(heading)}</title><style>{_CSS}</style></head><body>"
        f"<h1>{_text(heading)}</h1><div class=\"meta\">{_text(' · '.join(stats))}</div>"
        f"{controls}<main id=\"episodes\">{episodes}</main><script>{_JS}</script></body></html>\n"
    )


def write_viewer(run_dir: str | Path, out: str | Path | None = None) -> Path:
    """Write the viewer page of an evaluation directory (default ``DIR/view.html``) and return its path.

    Raises:
        FileNotFoundError: when ``DIR/trajectories.jsonl`` does not exist.
    """
    run_dir = Path(run_dir)
    path = run_dir / TRAJECTORIES_FILE
    if not path.exists():
        raise FileNotFoundError(f"{path} not found; point `agentgym view` at a directory written by `agentgym eval`.")
    records, _ = read_records(path)
    summary: dict[str, Any] = {}
    summary_path = run_dir / SUMMARY_FILE
    if summary_path.exists():
        try:
            summary = json.loads(summary_path.read_text(encoding="utf-8"))
        except ValueError:
            summary = {}
    target = Path(out) if out is not None else run_dir / VIEW_FILE
    target.parent.mkdir(parents=True, exist_ok=True)
    # text UTF-8 cannot encode (a lone surrogate in a model reply) is shown as its escape, not a crash
    target.write_text(render_html(records, summary), encoding="utf-8", errors="backslashreplace")
    return target
