"""The on-disk cache of model answers and the ledger of model calls: one SQLite file each.

:class:`CallCache` maps a call's key (see :mod:`agentgym_suite.llm.role_client`) to the samples
the model answered. :class:`CallLedger` keeps one row per call of a run (role, model, whether
the cache answered it, tokens, seconds) so that ``summary.json`` can report what each role cost,
across every process that played the run.

Both are safe for several processes and threads at once: each process opens its own connection
(write-ahead log, a busy timeout, one short transaction per write), and every row is committed
as soon as it is written, so a run that stops keeps every answer it has paid for.

A cache is never silently trusted: a file that is not an SQLite database (a truncated copy,
another program's file) or that fails SQLite's integrity check, or that another schema version
of this cache wrote, is refused with :class:`CacheError` saying what to do. A single row whose
checksum or version does not match is ignored (treated as a miss, with a warning) and replaced
by the next answer.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from agentgym_suite.core.errors import AgentGymError

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 1
"""The layout of the cache's rows; a file written by another version is refused."""
APPLICATION = "agentgym-suite model cache"
LEDGER_APPLICATION = "agentgym-suite model-call ledger"
CACHE_FILE = "answers.sqlite"
"""The cache's file name inside a ``--model-cache`` folder."""
LEDGER_FILE = "model_calls.sqlite"
"""The ledger's file name inside a run's output folder."""
BUSY_TIMEOUT_MS = 60_000


class CacheError(AgentGymError, RuntimeError):
    """A model cache (or ledger) file cannot be used; the message says why and what to do."""


def _checksum(key: str, payload: str, version: int) -> str:
    return hashlib.sha256(f"{version}\0{key}\0{payload}".encode()).hexdigest()


class _SQLiteFile:
    """One SQLite file opened per process and thread, in WAL mode, checked on first open."""

    application = ""
    schema: tuple[str, ...] = ()

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._local = threading.local()
        self._checked_pid: int | None = None
        self._lock = threading.Lock()

    def _refuse(self, why: str) -> CacheError:
        return CacheError(f"{self.path} is not a usable {self.application} ({why}). Nothing was read from it. Move it "
                          "away or delete it to start a fresh one, or name another folder with --model-cache "
                          "(--no-model-cache runs without one).")

    def connection(self) -> sqlite3.Connection:
        """This thread's connection (opened, and the file checked, on first use in the process)."""
        conn = getattr(self._local, "conn", None)
        if conn is not None and getattr(self._local, "pid", None) == os.getpid():
            return conn
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                                   check_same_thread=False)
        except sqlite3.DatabaseError as exc:
            raise self._refuse(f"{type(exc).__name__}: {exc}") from None
        try:
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            with self._lock:
                if self._checked_pid != os.getpid():
                    self._check(conn)
                    self._checked_pid = os.getpid()
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise self._refuse(f"{type(exc).__name__}: {exc}") from None
        except BaseException:
            conn.close()
            raise
        self._local.conn, self._local.pid = conn, os.getpid()
        return conn

    def _check(self, conn: sqlite3.Connection) -> None:
        """Create the schema in a new file; refuse a damaged file or one of another application or version."""
        conn.execute("PRAGMA journal_mode=WAL")
        problems = [row[0] for row in conn.execute("PRAGMA quick_check").fetchall()]
        if problems != ["ok"]:
            raise self._refuse("SQLite's integrity check failed: " + "; ".join(map(str, problems[:3])))
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute("CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)")
            found = dict(conn.execute("SELECT name, value FROM meta").fetchall())
            if not found:
                tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")} - {"meta"}
                if tables:
                    raise self._refuse(f"it holds tables {sorted(tables)} but no {self.application} header")
                conn.executemany("INSERT INTO meta VALUES (?, ?)",
                                 [("application", self.application), ("schema_version", str(SCHEMA_VERSION))])
            elif found.get("application") != self.application:
                raise self._refuse(f"its header names {found.get('application')!r}")
            elif found.get("schema_version") != str(SCHEMA_VERSION):
                raise self._refuse(f"schema version {found.get('schema_version')!r}, this agentgym-suite reads "
                                   f"version {SCHEMA_VERSION}")
            for statement in self.schema:
                conn.execute(statement)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def _write(self, sql: str, values: tuple[Any, ...]) -> None:
        conn = self.connection()
        try:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute(sql, values)
            conn.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise self._refuse(f"writing failed: {type(exc).__name__}: {exc}") from None

    def close(self) -> None:
        """Close this thread's connection (others close when their threads and the process end)."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None


class CallCache(_SQLiteFile):
    """Model answers by call key, in one SQLite file (``<folder>/answers.sqlite``).

    Args:
        folder: the cache folder (``--model-cache``); created when missing.
    """

    application = APPLICATION
    schema = ("CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, version INTEGER NOT NULL, role TEXT NOT NULL, "
              "model TEXT NOT NULL, payload TEXT NOT NULL, checksum TEXT NOT NULL, created REAL NOT NULL)",)

    def __init__(self, folder: str | Path) -> None:
        super().__init__(Path(folder) / CACHE_FILE)

    def get(self, key: str) -> list[dict[str, Any]] | None:
        """The stored samples of ``key``, or None (not stored, or a row that fails its checks)."""
        try:
            row = self.connection().execute("SELECT version, payload, checksum FROM answers WHERE key = ?",
                                            (key,)).fetchone()
        except sqlite3.DatabaseError as exc:
            raise self._refuse(f"reading failed: {type(exc).__name__}: {exc}") from None
        return None if row is None else self._valid(key, *row)

    def _valid(self, key: str, version: Any, payload: Any, checksum: Any) -> list[dict[str, Any]] | None:
        """The samples of a stored row, or None (with a warning) when it fails its version or checksum."""
        if version != SCHEMA_VERSION or not isinstance(payload, str) or checksum != _checksum(key, payload, version):
            logger.warning("%s: ignoring a cached answer written by another version or damaged (version %r); the "
                           "model is asked again and the row replaced.", self.path, version)
            return None
        try:
            samples = json.loads(payload)
        except ValueError:
            return None
        return samples if isinstance(samples, list) and all(isinstance(s, dict) for s in samples) else None

    def put(self, key: str, role: str, model: str, samples: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Store ``samples`` under ``key`` (committed at once) and return what the cache holds for it: when
        another process stored a valid answer first, that one (so every process replays the same answer)."""
        payload = json.dumps(samples, ensure_ascii=False, sort_keys=True)
        conn = self.connection()
        try:
            conn.execute("BEGIN IMMEDIATE")  # the check and the write under one lock: the first writer wins
            row = conn.execute("SELECT version, payload, checksum FROM answers WHERE key = ?", (key,)).fetchone()
            stored = None if row is None else self._valid(key, *row)
            if stored is None:
                conn.execute("INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?, ?, ?, ?)",
                             (key, SCHEMA_VERSION, role, model, payload, _checksum(key, payload, SCHEMA_VERSION),
                              time.time()))
            conn.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise self._refuse(f"writing failed: {type(exc).__name__}: {exc}") from None
        return stored if stored is not None else json.loads(payload)

    def __len__(self) -> int:
        return int(self.connection().execute("SELECT COUNT(*) FROM answers").fetchone()[0])


class CallLedger(_SQLiteFile):
    """One row per model call of a run: who asked, which model, cache hit or paid call, tokens, seconds."""

    application = LEDGER_APPLICATION
    schema = ("CREATE TABLE IF NOT EXISTS calls (id INTEGER PRIMARY KEY AUTOINCREMENT, invocation TEXT NOT NULL, "
              "role TEXT NOT NULL, model TEXT NOT NULL, cached INTEGER NOT NULL, prompt_tokens INTEGER NOT NULL, "
              "completion_tokens INTEGER NOT NULL, wall_s REAL NOT NULL, at REAL NOT NULL)",)

    def record(self, invocation: str, role: str, model: str, *, cached: bool, prompt_tokens: int,
               completion_tokens: int, wall_s: float) -> None:
        """Add one call (committed at once)."""
        self._write("INSERT INTO calls (invocation, role, model, cached, prompt_tokens, completion_tokens, wall_s, at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (invocation, role, model, int(cached), int(prompt_tokens), int(completion_tokens), float(wall_s),
                     time.time()))

    def rows(self) -> list[dict[str, Any]]:
        """Every call, oldest first."""
        cursor = self.connection().execute("SELECT invocation, role, model, cached, prompt_tokens, completion_tokens, "
                                           "wall_s FROM calls ORDER BY id")
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row)) for row in cursor.fetchall()]


__all__ = ["CACHE_FILE", "LEDGER_FILE", "CallCache", "CallLedger", "CacheError", "SCHEMA_VERSION"]
