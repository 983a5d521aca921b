"""The HTML viewer: all text escaped, filters work in a real headless Chromium.

The browser tests need Chromium (Debian: ``apt-get install -y chromium``) and skip without it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from agentgym_suite.agents.base import OracleAgent
from agentgym_suite.cli import main
from agentgym_suite.evaluation.runner import evaluate
from agentgym_suite.evaluation.viewer import render_html, write_viewer

from .fake_env import register_fake_env

FAKE = register_fake_env()
SCRIPT = '<script>alert("pwned")</script>'
IMG = '"><img src=x onerror=alert(1)>'
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="Chromium is not installed; install it with `apt-get install -y chromium`"
)


class HostileAgent(OracleAgent):
    """Solves even tasks; on odd ones answers with markup that must never run in the viewer."""

    name = "hostile"

    def act(self, observation: str, info: dict[str, Any]) -> str:
        if int(info["task_id"].split("-")[1]) % 2:
            self.last_turn = {"thinking": f"think {SCRIPT}", "prompt": f"prompt {IMG}"}
            return SCRIPT if info["turn"] % 2 == 0 else IMG
        self.last_turn = None
        return super().act(observation, info)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("view_run")
    evaluate(FAKE, HostileAgent(), out_dir=out, episodes=4, seed=0, max_turns=3, progress=False)
    return out


def test_all_model_text_is_escaped(run_dir: Path) -> None:
    page = write_viewer(run_dir).read_text(encoding="utf-8")
    assert page.count("<script>") == 1  # only the page's own filter script
    assert "<img" not in page and 'alert("pwned")' not in page
    assert "&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt;" in page
    assert "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;" in page
    assert "Unknown command: &quot;&gt;&lt;img" in page  # the env echoes the action; escaped too
    assert "http://" not in page and "https://" not in page  # no external assets


def test_render_html_escapes_attributes_and_errors() -> None:
    from agentgym_suite.rollout.records import Trajectory

    record = Trajectory('x" onclick="alert(1)', task=SCRIPT, error=f"RuntimeError: {SCRIPT}", error_stage="agent")
    page = render_html([record], {"env_id": SCRIPT, "agent": "a"})
    assert 'onclick="alert' not in page and page.count("<script>") == 1


class _Episodes(HTMLParser):
    """Collects each episode element's attributes from a dumped DOM."""

    def __init__(self) -> None:
        super().__init__()
        self.episodes: list[dict[str, str | None]] = []
        self.body: dict[str, str | None] = {}
        self.tags: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        values = dict(attrs)
        if tag == "body":
            self.body = values
        if tag == "details" and "episode" in (values.get("class") or ""):
            self.episodes.append(values)


def _chromium(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    profile = tmp_path / "profile"
    profile.mkdir(exist_ok=True)
    command = [
        str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        f"--user-data-dir={profile}", *args,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=180, check=False)


@needs_chromium
def test_filter_preset_from_the_address_in_chromium(run_dir: Path, tmp_path: Path) -> None:
    page = write_viewer(run_dir, tmp_path / "page.html")
    done = _chromium(["--dump-dom", page.as_uri() + "#status=lost&q=task-"], tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    dom = _Episodes()
    dom.feed(done.stdout)
    assert dom.body.get("data-ready") == "1", "the filter script did not run"
    assert len(dom.episodes) == 4
    shown = {e["data-key"] for e in dom.episodes if "hidden" not in e}
    lost = {e["data-key"] for e in dom.episodes if e["data-status"] in ("lost", "error")}
    assert shown == lost and 0 < len(shown) < 4
    assert "img" not in dom.tags  # the injected markup stayed text
    assert re.search(r'id="shown"[^>]*>2<', done.stdout)

    won = sorted(e["data-key"] for e in dom.episodes if e["data-status"] == "won")[0]
    narrowed = _chromium(["--dump-dom", page.as_uri() + "#status=all&q=" + won.split("#")[0].upper()], tmp_path)
    dom = _Episodes()
    dom.feed(narrowed.stdout)
    assert {e["data-key"] for e in dom.episodes if "hidden" not in e} == {won}


@needs_chromium
def test_screenshot_renders(run_dir: Path, tmp_path: Path) -> None:
    page = write_viewer(run_dir, tmp_path / "page.html")
    shot = tmp_path / "shot.png"
    done = _chromium([f"--screenshot={shot}", "--window-size=1200,900", page.as_uri()], tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 5_000


def test_view_command(run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "v.html"
    assert main(["view", str(run_dir), "--out", str(target)]) == 0
    assert target.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert main(["view", str(tmp_path / "missing")]) == 2
    assert "agentgym eval" in capsys.readouterr().err
