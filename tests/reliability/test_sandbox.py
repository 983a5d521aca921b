"""Path-like tool arguments cannot touch the real disk.

BFCL's ``GorillaFileSystem`` is an in-memory tree: ``../..``, absolute paths and names of
real symlinks resolve inside it. Every call runs under a Python audit hook that records
file opens, writes, renames, removals and directory changes, so a call that reached the
real file system is caught whichever way it did so.
"""

from __future__ import annotations

import inspect
import os
from pathlib import Path
from typing import Any

import pytest

from reliability.audit import watch

ESCAPES = ["../../etc/passwd", "/etc/passwd", "../../../../../../etc/shadow", "..", "/", "~/.ssh/id_rsa",
           "/tmp/agentgym-escape", "../escape.txt", "link_to_passwd", "a/../../b", "\x00", "C:\\Windows\\win.ini"]


@pytest.fixture()
def gorilla(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    pytest.importorskip("bfcl_eval")
    from agentgym_suite.envs.bfcl.backends import BackendSession

    monkeypatch.chdir(tmp_path)
    (tmp_path / "link_to_passwd").symlink_to("/etc/passwd")
    scenario = {"root": {"alice": {"type": "directory", "contents": {
        "notes.txt": {"type": "file", "content": "inside the sandbox"},
        "docs": {"type": "directory", "contents": {}},
    }}}}
    probe = BackendSession(["GorillaFileSystem"], {"GorillaFileSystem": scenario}, [])
    public = [n for n, _ in inspect.getmembers(probe.instances["GorillaFileSystem"], inspect.ismethod)
              if not n.startswith("_")]
    return BackendSession(["GorillaFileSystem"], {"GorillaFileSystem": scenario}, public), tmp_path


def _string_params(method: Any) -> list[str]:
    return [p.name for p in inspect.signature(method).parameters.values()
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


def test_gorilla_file_system_keeps_every_path_in_memory(gorilla: Any) -> None:
    session, cwd = gorilla
    before = sorted(os.listdir(cwd))
    results: list[str] = []
    with watch() as events:
        for name in sorted(session.allowed):
            params = _string_params(session.method(name))
            for escape in ESCAPES:
                arguments = {p: escape for p in params}
                _, text = session.call(name, arguments)
                results.append(text)
            session.call("cd", {"folder": "/"})
    assert events == [], f"calls reached the real file system: {events[:5]}"
    assert sorted(os.listdir(cwd)) == before
    assert not Path("/tmp/agentgym-escape").exists()
    real_passwd = Path("/etc/passwd").read_text(encoding="utf-8", errors="replace").splitlines()[0]
    assert not any(real_passwd in text for text in results)


def test_gorilla_dotdot_stays_inside_the_tree(gorilla: Any) -> None:
    session, _ = gorilla
    for _ in range(5):
        session.call("cd", {"folder": ".."})
    _, pwd = session.call("pwd", {})
    _, listing = session.call("ls", {})
    assert "etc" not in listing and "/etc" not in pwd
    _, text = session.call("cat", {"file_name": "../../etc/passwd"})
    assert "root:" not in text


def test_private_and_unlisted_backend_methods_are_refused(gorilla: Any) -> None:
    session, _ = gorilla
    for name in ("_load_scenario", "__init__", "__class__", "not_a_tool"):
        with pytest.raises(KeyError, match="not an available function"):
            session.method(name)
        result, text = session.call(name, {})
        assert "not an available function" in text and "error" in result


def test_the_audit_hook_sees_real_file_access(tmp_path: Path) -> None:
    with watch() as events:
        (tmp_path / "probe.txt").write_text("x", encoding="utf-8")
        os.listdir(tmp_path)
    assert {"open", "os.listdir"} <= {event for event, _ in events}
