"""The run store: one SQLite file holding every user-proxy run, so a run can be inspected, reported and resumed.

Three levels, as in MirrorBench's design:

* ``runs`` — one row per job configuration (its id is a hash of the configuration, so starting the same job
  again finds the same run);
* ``units`` — one row per (kind, proxy, dataset, metric, judge, seed): a ``rollout`` unit holds the proxy's
  conversations, a ``metric`` unit one metric's scores of them; each with its status, timing and, when done,
  its summary (mean, sd, intervals, controls);
* ``episodes`` — one row per episode of a unit: a rollout's conversation or a metric's value, written as
  soon as its chunk of episodes is finished;

plus ``calls``, the telemetry of every model call a unit made (role, backend, tokens, latency, cache hit).
"""
from __future__ import annotations

import json
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

import pandas as pd

from evalkit.models.cache import CallRecord, open_store
from evalkit.models import redact

__all__ = ["Unit", "RunStore"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY, name TEXT NOT NULL, config TEXT NOT NULL, created REAL NOT NULL,
    finished REAL, status TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS units (
    unit_id TEXT PRIMARY KEY, run_id TEXT NOT NULL REFERENCES runs(run_id), position INTEGER NOT NULL,
    kind TEXT NOT NULL, proxy TEXT NOT NULL, dataset TEXT NOT NULL, metric TEXT NOT NULL, judge TEXT NOT NULL,
    seed INTEGER NOT NULL, status TEXT NOT NULL, summary TEXT, error TEXT, started REAL, finished REAL,
    seconds REAL NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS episodes (
    unit_id TEXT NOT NULL REFERENCES units(unit_id), position INTEGER NOT NULL, episode_id TEXT NOT NULL,
    value REAL, payload TEXT, seconds REAL NOT NULL, PRIMARY KEY (unit_id, position));
CREATE TABLE IF NOT EXISTS calls (
    unit_id TEXT NOT NULL REFERENCES units(unit_id), role TEXT NOT NULL, backend TEXT NOT NULL,
    operation TEXT NOT NULL, prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL,
    latency_s REAL NOT NULL, cache_hit INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS units_by_run ON units(run_id);
CREATE INDEX IF NOT EXISTS calls_by_unit ON calls(unit_id);
"""


@dataclass(frozen=True)
class Unit:
    """One piece of a run: the rollouts of a proxy on a dataset with a seed (``kind="rollout"``,
    ``metric="rollout"``), or one metric of those rollouts, scored by ``judge`` ("" for lexical metrics)."""

    run_id: str
    kind: str
    proxy: str
    dataset: str
    metric: str
    judge: str
    seed: int

    @property
    def unit_id(self) -> str:
        """Readable and unique within the store: run, then the unit's coordinates.

        >>> Unit("r1", "metric", "smol", "qulac", "gteval", "smol", 3).unit_id
        'r1/smol/qulac/gteval@smol/seed3'
        """
        metric = f"{self.metric}@{self.judge}" if self.judge else self.metric
        return f"{self.run_id}/{self.proxy}/{self.dataset}/{metric}/seed{self.seed}"

    @property
    def rollout_id(self) -> str:
        """The id of the rollout unit whose conversations this unit scores (itself for a rollout unit)."""
        return Unit(self.run_id, "rollout", self.proxy, self.dataset, "rollout", "", self.seed).unit_id


class RunStore:
    """The SQLite run store (WAL mode; safe to share between threads of one process)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._db = open_store(self.path, _SCHEMA, "an evalkit user-proxy run store")
        self._db.row_factory = sqlite3.Row

    # ---------------------------------------------------------------- writing

    def open_run(self, run_id: str, name: str, config: dict[str, Any], units: Sequence[Unit]) -> bool:
        """Register a run and its units; True when the run is new, False when it exists (a resume: its
        finished units and episodes are kept)."""
        with self._lock, self._db:
            exists = self._db.execute("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)).fetchone() is not None
            if not exists:
                self._db.execute("INSERT INTO runs VALUES (?, ?, ?, ?, NULL, 'planned')",
                                 (run_id, name, json.dumps(config, sort_keys=True), time.time()))
            self._db.executemany(
                "INSERT OR IGNORE INTO units (unit_id, run_id, position, kind, proxy, dataset, metric, judge, seed, "
                "status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending')",
                [(u.unit_id, u.run_id, i, u.kind, u.proxy, u.dataset, u.metric, u.judge, u.seed)
                 for i, u in enumerate(units)])
        return not exists

    def start_unit(self, unit: Unit) -> None:
        with self._lock, self._db:
            self._db.execute("UPDATE units SET status = 'running', error = NULL, started = ? WHERE unit_id = ?",
                             (time.time(), unit.unit_id))

    def put_episodes(self, unit: Unit, rows: Iterable[tuple[int, str, float | None, Any, float]]) -> None:
        """Store finished episodes: (position, episode id, value, payload (JSON-able), seconds)."""
        with self._lock, self._db:
            self._db.executemany(
                "INSERT OR REPLACE INTO episodes VALUES (?, ?, ?, ?, ?, ?)",
                [(unit.unit_id, position, episode_id, None if value is None else float(value),
                  json.dumps(payload), seconds) for position, episode_id, value, payload, seconds in rows])

    def add_calls(self, unit: Unit, role: str, records: Iterable[CallRecord]) -> None:
        with self._lock, self._db:
            self._db.executemany(
                "INSERT INTO calls VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(unit.unit_id, role, r.backend, r.operation, r.prompt_tokens, r.completion_tokens, r.latency_s,
                  int(r.cache_hit)) for r in records])

    def finish_unit(self, unit: Unit, summary: dict[str, Any], seconds: float) -> None:
        with self._lock, self._db:
            self._db.execute("UPDATE units SET status = 'done', summary = ?, finished = ?, seconds = seconds + ? "
                             "WHERE unit_id = ?", (json.dumps(summary), time.time(), seconds, unit.unit_id))

    def fail_unit(self, unit: Unit, error: str, seconds: float, *, secrets: Sequence[str] = ()) -> None:
        """Mark ``unit`` failed with ``error``, stored redacted (:func:`evalkit.models.redact`, with the
        ``secrets`` the job's models are configured with): reports show what the store holds."""
        with self._lock, self._db:
            self._db.execute("UPDATE units SET status = 'failed', error = ?, seconds = seconds + ? WHERE unit_id = ?",
                             (redact(error, secrets), seconds, unit.unit_id))

    def close_run(self, run_id: str) -> None:
        """Mark the run done when all its units are, else ``incomplete``."""
        with self._lock, self._db:
            left = self._db.execute("SELECT COUNT(*) FROM units WHERE run_id = ? AND status != 'done'",
                                    (run_id,)).fetchone()[0]
            self._db.execute("UPDATE runs SET status = ?, finished = ? WHERE run_id = ?",
                             ("done" if left == 0 else "incomplete", time.time(), run_id))

    # ---------------------------------------------------------------- reading

    def runs(self) -> pd.DataFrame:
        with self._lock:
            rows = self._db.execute("SELECT run_id, name, status, created, finished FROM runs ORDER BY created")
            return pd.DataFrame([dict(r) for r in rows], columns=["run_id", "name", "status", "created", "finished"])

    def run_config(self, run_id: str) -> dict[str, Any]:
        with self._lock:
            row = self._db.execute("SELECT config FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        if row is None:
            raise KeyError(f"{self.path}: no run {run_id!r}")
        return json.loads(row["config"])

    def units(self, run_id: str) -> pd.DataFrame:
        """The run's units in plan order, with status, seconds and (when done) the summary as a dict."""
        with self._lock:
            rows = [dict(r) for r in self._db.execute(
                "SELECT unit_id, kind, proxy, dataset, metric, judge, seed, status, summary, error, seconds "
                "FROM units WHERE run_id = ? ORDER BY position", (run_id,))]
        for row in rows:
            row["summary"] = json.loads(row["summary"]) if row["summary"] else None
        return pd.DataFrame(rows, columns=["unit_id", "kind", "proxy", "dataset", "metric", "judge", "seed",
                                           "status", "summary", "error", "seconds"])

    def status(self, unit: Unit) -> str:
        with self._lock:
            row = self._db.execute("SELECT status FROM units WHERE unit_id = ?", (unit.unit_id,)).fetchone()
        return row["status"] if row else "absent"

    def episodes(self, unit_id: str) -> dict[int, dict[str, Any]]:
        """Stored episodes of a unit by position: episode id, value, payload and seconds."""
        with self._lock:
            rows = self._db.execute("SELECT position, episode_id, value, payload, seconds FROM episodes "
                                    "WHERE unit_id = ? ORDER BY position", (unit_id,)).fetchall()
        return {r["position"]: {"episode_id": r["episode_id"], "value": r["value"],
                                "payload": json.loads(r["payload"]), "seconds": r["seconds"]} for r in rows}

    def telemetry(self, run_id: str) -> pd.DataFrame:
        """Calls, cache hits, tokens and model seconds per unit and role."""
        with self._lock:
            rows = [dict(r) for r in self._db.execute(
                "SELECT c.unit_id, c.role, c.backend, COUNT(*) AS calls, SUM(c.cache_hit) AS cache_hits, "
                "SUM(c.prompt_tokens) AS prompt_tokens, SUM(c.completion_tokens) AS completion_tokens, "
                "SUM(c.latency_s) AS model_seconds FROM calls c JOIN units u ON u.unit_id = c.unit_id "
                "WHERE u.run_id = ? GROUP BY c.unit_id, c.role, c.backend ORDER BY u.position, c.role", (run_id,))]
        return pd.DataFrame(rows, columns=["unit_id", "role", "backend", "calls", "cache_hits", "prompt_tokens",
                                           "completion_tokens", "model_seconds"])

    def close(self) -> None:
        with self._lock:
            self._db.close()
