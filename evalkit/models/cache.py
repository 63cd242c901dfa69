"""A content-addressed cache of model calls, and per-run telemetry.

Every call through the model door is keyed by a hash of (backend identity, operation, messages,
parameters). A key already in the cache never reaches the model again — a rerun, or a run resumed after an
interruption, repeats no call. The store is one SQLite file (WAL mode, writes batched per model call batch)
in ``$EVALKIT_CACHE_DIR/calls.sqlite``. API keys are never part of a key or a value.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from evalkit.models.defaults import cache_dir

__all__ = ["call_key", "CallCache", "CallRecord", "Telemetry", "default_cache_path", "StoreFileError",
           "open_store", "open_store_read_only", "cache_stats"]


class StoreFileError(RuntimeError):
    """A store file (call cache, metric store, run store) that is not the SQLite database it should be."""


def open_store(path: Path, schema: str, what: str) -> sqlite3.Connection:
    """One of the kit's SQLite stores at ``path`` (created when absent; WAL mode; ``schema`` applied); in a
    folder that cannot be written (a class's shared cache, which a graded notebook sees read-only), a copy in
    memory of what it holds (:func:`_store_in_memory`).

    A file there that is not such a database raises :class:`StoreFileError` naming it and what to do,
    instead of a bare ``sqlite3.DatabaseError`` traceback.
    """
    if path.parent.is_dir() and not os.access(path.parent, os.W_OK):
        return _store_in_memory(path, schema, what)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        connection = sqlite3.connect(path, check_same_thread=False, timeout=60)
        with connection:
            connection.execute("PRAGMA journal_mode=WAL")
            connection.executescript(schema)
    except sqlite3.DatabaseError as error:
        raise StoreFileError(f"{path}: not {what} (SQLite says: {error}). Move the file away or delete it; "
                             "evalkit creates a new one (only what it held is lost, the run itself is not).") from None
    return _checked_columns(connection, path, schema, what)


def _store_in_memory(path: Path, schema: str, what: str) -> sqlite3.Connection:
    """A store whose folder cannot be written: a copy in memory of the file at ``path`` (read as it is, never
    written), or an empty store when there is none; what the process adds is kept until it ends."""
    connection = sqlite3.connect(":memory:", check_same_thread=False)
    if path.is_file() and path.stat().st_size:
        try:
            source = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
            try:
                source.backup(connection)
            finally:
                source.close()
        except sqlite3.DatabaseError as error:
            raise StoreFileError(f"{path}: not {what} (SQLite says: {error}); it was read, not changed") from None
    with connection:
        connection.executescript(schema)
    return _checked_columns(connection, path, schema, what)


def _checked_columns(connection: sqlite3.Connection, path: Path, schema: str, what: str) -> sqlite3.Connection:
    """``connection`` when its tables have the columns of ``schema``; else it is closed and
    :class:`StoreFileError` names the file."""
    # A database of another program (or another layout) may hold a table of the same name: compare columns.
    reference = sqlite3.connect(":memory:")
    reference.executescript(schema)
    for (table,) in reference.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
        wanted = [row[1] for row in reference.execute(f"PRAGMA table_info({table})")]
        found = [row[1] for row in connection.execute(f"PRAGMA table_info({table})")]
        if found != wanted:
            connection.close()
            raise StoreFileError(f"{path}: its table {table!r} has the columns {found}, not {wanted}: not {what}. "
                                 "Move the file away or delete it; evalkit creates a new one.")
    reference.close()
    return connection


def open_store_read_only(path: Path, schema: str, what: str) -> sqlite3.Connection:
    """An existing store at ``path`` opened read-only (a ``mode=ro`` URI: no table is created, the journal mode
    is left as it is, the file is never written), after checking that its tables are those of ``schema``.

    Anything else — another program's database, an empty file, a file that is not SQLite — raises
    :class:`StoreFileError` saying that it is not ``what`` and that it was left unchanged.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    unchanged = "it was opened read-only and left unchanged"
    if path.stat().st_size == 0:
        raise StoreFileError(f"{path}: an empty file, not {what}; {unchanged}")
    try:
        connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False)
        tables = {name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError as error:
        raise StoreFileError(f"{path}: not {what} (SQLite says: {error}); {unchanged}") from None
    reference = sqlite3.connect(":memory:")
    reference.executescript(schema)
    try:
        for (table,) in reference.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
            wanted = [row[1] for row in reference.execute(f"PRAGMA table_info({table})")]
            found = [row[1] for row in connection.execute(f"PRAGMA table_info({table})")] if table in tables else []
            if found != wanted:
                connection.close()
                held = f"its tables are {', '.join(sorted(tables))}" if tables else "it holds no table"
                detail = f"its table {table!r} has the columns {found}" if found else f"no table {table!r}; {held}"
                raise StoreFileError(f"{path}: not {what} ({detail}); {unchanged}")
    finally:
        reference.close()
    return connection


_CALLS_SCHEMA = ("CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, backend TEXT NOT NULL, operation TEXT NOT "
                 "NULL, value TEXT NOT NULL, created REAL NOT NULL);")
_CALLS_WHAT = "an evalkit model-call cache"


def _stats(connection: sqlite3.Connection) -> list[dict[str, Any]]:
    rows = connection.execute(
        "SELECT backend, operation, COUNT(*), SUM(LENGTH(value)) FROM calls GROUP BY backend, operation "
        "ORDER BY backend, operation").fetchall()
    return [{"backend": b, "operation": o, "entries": n, "bytes": size} for b, o, n, size in rows]


def cache_stats(path: str | Path | None = None) -> list[dict[str, Any]]:
    """Entries per (backend, operation) of the cache at ``path`` (default: the kit's), read without changing
    the file (:func:`open_store_read_only`); a file that is not an evalkit cache raises :class:`StoreFileError`.
    """
    connection = open_store_read_only(Path(path) if path is not None else default_cache_path(), _CALLS_SCHEMA,
                                      _CALLS_WHAT)
    try:
        return _stats(connection)
    finally:
        connection.close()


def default_cache_path() -> Path:
    return cache_dir() / "calls.sqlite"


_DIGEST_KEY = "digest.key"
_process_key: list[bytes] = []  # where the cache folder cannot hold a key: one for this process


def keyed_digest(text: str, size: int = 10) -> str:
    """The first ``size`` hex digits of an HMAC-SHA256 of ``text`` under this cache folder's own random key
    (``digest.key``, made on first use, readable by its owner only): it tells two texts apart in a name the cache
    stores (two query secrets of one endpoint) without being a test of a guessed secret for whoever reads the
    cache file or a record that names it. A folder that cannot hold the key gives a key for this process.

    >>> keyed_digest("code=483920") == keyed_digest("code=483920") != keyed_digest("code=483921")
    True
    """
    return hmac.new(_digest_key(cache_dir()), text.encode("utf-8", "surrogatepass"), "sha256").hexdigest()[:size]


def _digest_key(folder: Path) -> bytes:
    """The key in ``folder/digest.key``, made there when absent (32 random bytes, mode 0600, never through a
    link); a process-wide random key where the folder cannot hold one."""
    path = folder / _DIGEST_KEY
    for _ in range(2):
        try:
            descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        except FileNotFoundError:
            try:
                folder.mkdir(parents=True, exist_ok=True)
                descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            except FileExistsError:
                continue  # another process made it first: read that one
            except OSError:
                break
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(os.urandom(32))
            continue
        except OSError:
            break
        with os.fdopen(descriptor, "rb") as handle:
            key = handle.read(64)
        if len(key) == 32:
            return key
        break
    if not _process_key:
        _process_key.append(os.urandom(32))
    return _process_key[0]


def call_key(backend: str, operation: str, messages: Any, parameters: dict[str, Any]) -> str:
    """Stable sha256 of one call; key order in dicts does not matter.

    >>> a = call_key("b", "generate", [{"role": "user", "content": "hi"}], {"t": 0, "n": 1})
    >>> a == call_key("b", "generate", [{"content": "hi", "role": "user"}], {"n": 1, "t": 0})
    True
    >>> a == call_key("b", "generate", [{"role": "user", "content": "hi!"}], {"t": 0, "n": 1})
    False
    """
    payload = json.dumps([backend, operation, messages, parameters], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class CallCache:
    """SQLite-backed map from call key to a JSON value, safe to share between threads."""

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path is not None else default_cache_path()
        self._lock = threading.Lock()
        self._connection = open_store(self.path, _CALLS_SCHEMA, _CALLS_WHAT)

    def get_many(self, keys: Iterable[str]) -> dict[str, Any]:
        """Values of the keys that are cached (missing keys are absent from the result)."""
        keys = list(dict.fromkeys(keys))
        found: dict[str, Any] = {}
        with self._lock:
            for start in range(0, len(keys), 500):
                chunk = keys[start:start + 500]
                marks = ",".join("?" * len(chunk))
                for key, value in self._connection.execute(
                        f"SELECT key, value FROM calls WHERE key IN ({marks})", chunk):
                    found[key] = json.loads(value)
        return found

    def put_many(self, entries: Iterable[tuple[str, str, str, Any]]) -> None:
        """Store ``(key, backend, operation, value)`` rows in one transaction."""
        now = time.time()
        rows = [(key, backend, operation, json.dumps(value), now) for key, backend, operation, value in entries]
        if not rows:
            return
        with self._lock, self._connection:
            self._connection.executemany("INSERT OR REPLACE INTO calls VALUES (?, ?, ?, ?, ?)", rows)

    def stats(self) -> list[dict[str, Any]]:
        """Entries per (backend, operation) (to read a cache file without opening it for writing:
        :func:`cache_stats`)."""
        with self._lock:
            return _stats(self._connection)

    def purge(self, backend: str | None = None) -> int:
        """Delete every entry (or those of one backend); returns how many were deleted."""
        with self._lock, self._connection:
            if backend is None:
                deleted = self._connection.execute("DELETE FROM calls").rowcount
            else:
                deleted = self._connection.execute("DELETE FROM calls WHERE backend = ?", (backend,)).rowcount
        with self._lock:
            self._connection.execute("VACUUM")
        return deleted

    def __len__(self) -> int:
        with self._lock:
            return self._connection.execute("SELECT COUNT(*) FROM calls").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._connection.close()


@dataclass(frozen=True)
class CallRecord:
    """Telemetry of one call (one prompt): tokens, latency and whether the cache answered."""

    backend: str
    operation: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    cache_hit: bool


@dataclass
class Telemetry:
    """Call records of one run, thread-safe, with a summary per backend and operation."""

    records: list[CallRecord] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, records: Iterable[CallRecord]) -> None:
        with self._lock:
            self.records.extend(records)

    def drain(self) -> list[CallRecord]:
        """Take the records gathered so far, leaving none (for a store that files them per unit of work)."""
        with self._lock:
            records, self.records = self.records, []
        return records

    def summary(self):
        """DataFrame: calls, cache hits, tokens and latency per backend and operation."""
        import pandas as pd

        columns = ["backend", "operation", "calls", "cache_hits", "prompt_tokens", "completion_tokens",
                   "model_seconds"]
        if not self.records:
            return pd.DataFrame(columns=columns)
        frame = pd.DataFrame([record.__dict__ for record in self.records])
        grouped = frame.groupby(["backend", "operation"])
        return pd.DataFrame({
            "calls": grouped.size(),
            "cache_hits": grouped["cache_hit"].sum(),
            "prompt_tokens": grouped["prompt_tokens"].sum(),
            "completion_tokens": grouped["completion_tokens"].sum(),
            "model_seconds": grouped["latency_s"].sum().round(3),
        }).reset_index()[columns]
