"""``agentgym data``: fetch from a local server, checksum checks, the offline message, verify."""

from __future__ import annotations

import functools
import http.server
import io
import socket
import tarfile
import threading
from pathlib import Path
from typing import Iterator

import pytest

from agentgym_suite.cli import main
from agentgym_suite.core.data_sources import DataSource, RemoteFile, git_blob_id
from agentgym_suite.core.errors import NoNetworkError
from agentgym_suite.core.fetch import ChecksumError, fetch, verify
from agentgym_suite.registration import data_sources


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    root = tmp_path / "www"
    root.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *a, **k: None  # type: ignore[attr-defined]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", root
    server.shutdown()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_fetch_verifies_and_writes(served: tuple[str, Path], tmp_path: Path) -> None:
    url, www = served
    (www / "a.json").write_text('{"x": 1}')
    blob = git_blob_id(www / "a.json")[:12]
    after: list[Path] = []
    demo = DataSource("demo", files=(RemoteFile(f"{url}/a.json", "sub/a.json", blob),), known_blobs={"sub/a.json": blob},
                      after_fetch=lambda dest: after.append(dest) or [])
    written = fetch(demo, root=tmp_path / "data")
    assert written == [tmp_path / "data" / "demo" / "sub" / "a.json"]
    assert after == [tmp_path / "data" / "demo"]  # the source's own setup step ran on the folder
    assert verify(demo, root=tmp_path / "data") == {"sub/a.json": "ok"}


def test_fetch_rejects_a_bad_checksum(served: tuple[str, Path], tmp_path: Path) -> None:
    url, www = served
    (www / "a.json").write_text("tampered")
    demo = DataSource("demo", files=(RemoteFile(f"{url}/a.json", "a.json", "0123456789ab"),))
    with pytest.raises(ChecksumError, match="does not match the published 0123456789ab"):
        fetch(demo, root=tmp_path / "data")
    assert not (tmp_path / "data" / "demo" / "a.json").exists()


def test_archive_members_are_mapped_and_cannot_escape(served: tuple[str, Path], tmp_path: Path) -> None:
    url, www = served
    with tarfile.open(www / "repo.tar.gz", "w:gz") as tf:
        for name, body in {"repo-abc/data/x/keep.txt": b"keep", "repo-abc/other/skip.txt": b"skip"}.items():
            info = tarfile.TarInfo(name)
            info.size = len(body)
            tf.addfile(info, io.BytesIO(body))
    demo = DataSource("demo", files=(RemoteFile(f"{url}/repo.tar.gz", ".", archive_members={"data/x/": "x/"}),))
    written = fetch(demo, root=tmp_path / "data")
    assert [p.relative_to(tmp_path / "data" / "demo").as_posix() for p in written] == ["x/keep.txt"]
    with tarfile.open(www / "evil.tar.gz", "w:gz") as tf:
        info = tarfile.TarInfo("repo-abc/data/x/../../../../escape.txt")
        info.size = 1
        tf.addfile(info, io.BytesIO(b"!"))
    evil = DataSource("demo", files=(RemoteFile(f"{url}/evil.tar.gz", ".", archive_members={"data/x/": "x/"}),))
    with pytest.raises(ChecksumError, match="escape"):
        fetch(evil, root=tmp_path / "data")


def test_offline_fetch_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/items.json"
    offline = DataSource("webshop", files=(RemoteFile(url, "data/items.json"),))
    monkeypatch.setattr("agentgym_suite.envs.webshop.data_source.SOURCE", offline)
    with pytest.raises(NoNetworkError, match="This machine cannot reach 127.0.0.1"):
        fetch(offline, root=tmp_path, timeout=2)
    monkeypatch.setenv("AGENTGYM_DATA", str(tmp_path))
    assert main(["data", "fetch", "webshop", "--timeout", "2"]) == 1
    assert "AGENTGYM_DATA" in capsys.readouterr().err


def test_nothing_to_download_explains(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="bfcl-eval"):
        fetch(data_sources()["bfcl"], root=tmp_path)


def test_each_benchmark_package_declares_its_data_source(capsys: pytest.CaptureFixture[str]) -> None:
    sources = data_sources()
    assert {"alfworld", "webshop", "searchqa", "tau2", "vitabench", "finmcp", "bfcl", "scienceworld", "textworld"} <= set(sources)
    for name, source in sources.items():
        assert source.files or source.note, f"{name}: nothing to download and no note saying why"
    assert main(["data", "fetch", "zork"]) == 2
    assert "unknown benchmark 'zork'; choose one of: alfworld" in capsys.readouterr().err


def test_verify_shared_data_checksums(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["data", "verify", "tau2"])
    out = capsys.readouterr().out
    assert "ok       domains/retail/db.json" in out
    missing = [line for line in out.splitlines() if line.startswith("missing")]
    # the shared data may lack only the banking domain and upstream's tool sources (placed by a later fetch)
    assert all("banking_knowledge" in line or line.endswith("_source.py") for line in missing)
    assert code == (1 if missing else 0)
    assert main(["data", "verify", "webshop"]) == 1  # the catalogue is not in the shared data
    assert "missing  data/items_shuffle_1000.json" in capsys.readouterr().out


def test_hand_placed_files_are_named_and_checked(tmp_path: Path) -> None:
    import hashlib

    from agentgym_suite.core.data_sources import ManualFile
    from agentgym_suite.core.fetch import manual_instructions

    body = b'{"q": 1}\n{"q": 2}\n'
    source = DataSource("bench", manual_files=(
        ManualFile("https://hub.example/a.jsonl", "sets/a.jsonl", rows=2, sha256=hashlib.sha256(body).hexdigest()),
        ManualFile("https://hub.example/b.jsonl", "sets/b.jsonl", rows=3, note="gunzip it"),
    ))
    assert manual_instructions(source, root=tmp_path) == [
        f"place https://hub.example/a.jsonl at {tmp_path / 'bench/sets/a.jsonl'}",
        f"place https://hub.example/b.jsonl at {tmp_path / 'bench/sets/b.jsonl'} (gunzip it)",
    ]
    (tmp_path / "bench/sets").mkdir(parents=True)
    (tmp_path / "bench/sets/a.jsonl").write_bytes(body)
    assert verify(source, root=tmp_path) == {"sets/a.jsonl": "ok", "sets/b.jsonl": "missing"}
    (tmp_path / "bench/sets/b.jsonl").write_bytes(body)
    with pytest.raises(ChecksumError, match="2 lines, the published file has 3"):
        verify(source, root=tmp_path)
    (tmp_path / "bench/sets/a.jsonl").write_bytes(body + b'{"q": 3}\n')
    with pytest.raises(ChecksumError, match="sha256"):
        verify(source, root=tmp_path)


def test_fetch_searchqa_names_search_r1s_files(tmp_path: Path) -> None:
    from agentgym_suite.core.fetch import manual_instructions

    out = "\n".join(manual_instructions(data_sources()["searchqa"], root=tmp_path))
    for rel in ("flashrag/nq/test.jsonl", "flashrag/bamboogle/test.jsonl", "flashrag/hotpotqa/train.jsonl",
                "wiki-18/wiki-18.jsonl", "wiki-18/e5_Flat.index"):
        assert f"at {tmp_path / 'searchqa' / rel}" in out
    assert "huggingface.co/datasets/RUC-NLPIR/FlashRAG_datasets/resolve/main/popqa/test.jsonl" in out
