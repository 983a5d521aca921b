"""Download and verify benchmark data (``agentgym data fetch`` / ``agentgym data verify``).

Both take the benchmark's :class:`~agentgym_suite.core.data_sources.DataSource`; the command
finds it by name through ``registration.data_sources()``.
"""

from __future__ import annotations

import shutil
import tarfile
import tempfile
import urllib.error
import urllib.request
import zipfile
from pathlib import Path
from urllib.parse import urlparse

from agentgym_suite.core.data import DATA_ENV_VAR, data_dir
import hashlib

from agentgym_suite.core.data_sources import DataSource, ManualFile, RemoteFile, git_blob_id
from agentgym_suite.core.errors import AgentGymError, NoNetworkError

DOWNLOAD_TIMEOUT_S = 30


class ChecksumError(AgentGymError):
    """A downloaded or present file does not match its published git blob id."""


def _download(url: str, target: Path, timeout: float) -> None:
    host = urlparse(url).netloc
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response, target.open("wb") as out:
            shutil.copyfileobj(response, out)
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        raise NoNetworkError(
            f"Could not download {url}: {getattr(exc, 'reason', exc)}. This machine cannot reach {host}; "
            f"download the file on a machine with internet access and copy it into the folder that "
            f"{DATA_ENV_VAR} names, then run `agentgym data verify`."
        ) from exc


def _check_blob(path: Path, expected: str, label: str) -> None:
    actual = git_blob_id(path)
    if expected and not actual.startswith(expected):
        raise ChecksumError(f"{label}: git blob id {actual[:12]} does not match the published {expected}; the file is corrupt or altered.")


def _check_sha256(path: Path, expected: str, label: str) -> None:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    if expected and digest.hexdigest() != expected:
        raise ChecksumError(f"{label}: sha256 {digest.hexdigest()[:12]} does not match the pinned {expected[:12]}; "
                            "the download is corrupt or upstream changed the file.")


def _extract(archive: Path, members: dict[str, str], dest: Path) -> list[Path]:
    written: list[Path] = []

    def place(name: str) -> Path | None:
        inner = name.split("/", 1)[1] if archive.suffix == ".gz" and "/" in name else name  # tarballs wrap a top folder
        for prefix, target_prefix in members.items():
            if inner.startswith(prefix) and not inner.endswith("/"):
                target = (dest / (target_prefix + inner[len(prefix):])).resolve()
                if dest.resolve() not in target.parents:
                    raise ChecksumError(f"archive member {name!r} would escape {dest}")
                target.parent.mkdir(parents=True, exist_ok=True)
                return target
        return None

    if archive.suffix == ".zip":
        with zipfile.ZipFile(archive) as zf:
            for info in zf.infolist():
                target = place(info.filename)
                if target is not None:
                    with zf.open(info) as src, target.open("wb") as out:
                        shutil.copyfileobj(src, out)
                    written.append(target)
    else:
        with tarfile.open(archive) as tf:
            for member in tf.getmembers():
                target = place(member.name) if member.isfile() else None
                if target is not None:
                    extracted = tf.extractfile(member)
                    assert extracted is not None
                    with extracted, target.open("wb") as out:
                        shutil.copyfileobj(extracted, out)
                    written.append(target)
    return written


def _count_lines(path: Path) -> int:
    with path.open("rb") as handle:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 24), b""))


def check_manual(manual: ManualFile, path: Path) -> str:
    """``ok`` or ``missing`` for a hand-placed file; raises :class:`ChecksumError` when it differs
    from what is published (size, sha256, line count)."""
    if not path.exists():
        return "missing"
    if manual.size is not None and path.stat().st_size != manual.size:
        raise ChecksumError(f"{path}: {path.stat().st_size} bytes, the published file has {manual.size}; download it again.")
    if manual.sha256:
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 24), b""):
                digest.update(chunk)
        if digest.hexdigest() != manual.sha256:
            raise ChecksumError(f"{path}: sha256 {digest.hexdigest()[:12]} does not match the published {manual.sha256[:12]}.")
    if manual.rows is not None:
        lines = _count_lines(path)
        if lines != manual.rows:
            raise ChecksumError(f"{path}: {lines} lines, the published file has {manual.rows}; it is truncated or another version.")
    return "ok"


def manual_instructions(src: DataSource, *, root: Path | None = None) -> list[str]:
    """One line per hand-placed file that is missing: where to download it and where to put it."""
    base = (root or data_dir()) / src.benchmark
    lines = []
    for manual in src.manual_files:
        if not (base / manual.dest).exists():
            extra = f" ({manual.note})" if manual.note else ""
            lines.append(f"place {manual.url} at {base / manual.dest}{extra}")
    return lines


def fetch(src: DataSource, *, root: Path | None = None, timeout: float = DOWNLOAD_TIMEOUT_S) -> list[Path]:
    """Download a benchmark's official files into ``root/<benchmark>`` and verify them.

    Raises:
        NoNetworkError: when an upstream host cannot be reached (the message says what to do).
        ChecksumError: when a file does not match its published id (nothing is kept).
    """
    benchmark = src.benchmark
    dest = (root or data_dir()) / benchmark
    if not src.files and not src.manual_files:
        raise AgentGymError(f"There is nothing to download for {benchmark}. {src.note}")
    dest.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    with tempfile.TemporaryDirectory(prefix=f"agentgym-{benchmark}-") as tmp:
        downloads = []
        for index, remote in enumerate(src.files):  # every file downloaded and checked before any is placed
            local = Path(tmp) / str(index) / Path(urlparse(remote.url).path).name
            local.parent.mkdir()
            _download(remote.url, local, timeout)
            _check_sha256(local, remote.sha256, remote.dest)
            if not remote.archive_members:
                _check_blob(local, remote.git_blob, remote.dest)
            downloads.append((remote, local))
        for remote, local in downloads:
            if remote.archive_members:
                written += _extract(local, remote.archive_members, dest)
            else:
                target = dest / remote.dest
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.move(str(local), target)
                written.append(target)
    if src.after_fetch is not None:
        written += src.after_fetch(dest)
    verify(src, root=root)
    return written


def verify(src: DataSource, *, root: Path | None = None) -> dict[str, str]:
    """Check the present files of a benchmark against their published ids.

    Returns path -> ``ok`` | ``missing``; raises :class:`ChecksumError` on a mismatch.
    """
    base = (root or data_dir()) / src.benchmark
    report: dict[str, str] = {}
    for rel, blob in src.known_blobs.items():
        path = base / rel
        if not path.exists():
            report[rel] = "missing"
            continue
        _check_blob(path, blob, str(path))
        report[rel] = "ok"
    for manual in src.manual_files:
        report[manual.dest] = check_manual(manual, base / manual.dest)
    return report


__all__ = ["ChecksumError", "DataSource", "ManualFile", "RemoteFile", "check_manual", "fetch", "manual_instructions", "verify"]
