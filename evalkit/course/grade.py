"""``evalkit course grade SUBMISSIONS_DIR``: every student notebook graded in its own process.

A submission is any file under ``SUBMISSIONS_DIR`` (hidden files and checkpoint folders aside). The first
folder under it names the student (``alice/02_agreement.ipynb``); a file directly inside it is named by its
stem (``alice.ipynb``). Each runs in :mod:`evalkit.course.worker` under a wall-clock limit: past it, the
worker and its kernel are killed and every exercise of the chapter gets a row saying so. The result is one
row per (student, submission, exercise) — a submission that is no notebook or no chapter's gets one row with
the reason — written to ``grades.csv``, the students' totals to ``totals.csv`` and both to ``grades.html``
(self-contained).
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from .checks import EXERCISES

__all__ = ["GradeRow", "GradeRun", "submissions", "grade", "COLUMNS"]

COLUMNS = ("student", "submission", "chapter", "exercise", "score", "points", "status", "public", "hidden",
           "reason")
_SKIPPED = (".ipynb_checkpoints", "__MACOSX", "__pycache__")


@dataclass(frozen=True)
class GradeRow:
    student: str
    submission: str
    chapter: str
    exercise: str
    score: float
    points: float
    status: str   # graded, cell error, missing cell, timeout, not a notebook, not a chapter, crashed
    public: str   # passed, failed, not run
    hidden: str
    reason: str


@dataclass(frozen=True)
class GradeRun:
    rows: list[GradeRow]
    csv: Path
    totals: Path
    html: Path


def submissions(folder: Path) -> list[tuple[str, Path]]:
    """(student, file) for every submission under ``folder``, in name order."""
    found = []
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if not path.is_file() or any(part.startswith(".") or part in _SKIPPED for part in relative.parts):
            continue
        student = relative.parts[0] if len(relative.parts) > 1 else path.stem
        found.append((student, path))
    return found


def grade(submissions_dir: str | Path, out_dir: str | Path, *, timeout: float = 900.0,
          progress: bool = False, params: str | Path | None = None) -> GradeRun:
    """Grade every submission (each in its own process, at most ``timeout`` seconds) and write the tables;
    ``params`` (e.g. ``"lab"``) runs each at that parameter set's sizes instead of the values it holds."""
    folder, out = Path(submissions_dir), Path(out_dir)
    if params is not None:
        from ..runner import load_params

        params = str(Path(params).resolve()) if Path(params).suffix else params
        load_params(params)  # a misspelt set fails here, before any submission runs
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such folder of submissions")
    if timeout <= 0:
        raise ValueError(f"timeout must be positive, not {timeout}")
    work = out / "work"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    rows: list[GradeRow] = []
    for number, (student, path) in enumerate(submissions(folder)):
        started = time.monotonic()
        outcome = _run_one(path, work / f"{number:04d}", timeout, params)
        rows.extend(_rows(student, str(path.relative_to(folder)), outcome, timeout))
        if progress:
            print(f"{student}: {path.name} ({time.monotonic() - started:.0f} s)", file=sys.stderr)
    from .report import write_tables

    csv_path, totals, html = write_tables(rows, out)
    return GradeRun(rows, csv_path, totals, html)


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    if env.get("EVALKIT_DATA_DIR"):
        env["EVALKIT_DATA_DIR"] = str(Path(env["EVALKIT_DATA_DIR"]).resolve())
    env.setdefault("MPLBACKEND", "Agg")
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _run_one(path: Path, base: Path, timeout: float, params: str | None = None) -> dict:
    """The worker's result for one submission; on a timeout or a crash, what the parent knows."""
    base.mkdir(parents=True)
    result = base / "result.json"
    log = (base / "worker.log").open("wb")
    command = [sys.executable, "-m", "evalkit.course.worker", str(path.resolve()), str(result),
               "--workdir", str(base / "cwd"), *(["--params", str(params)] if params is not None else [])]
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                               cwd=base, env=_environment(), start_new_session=True)
    try:
        process.wait(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        _kill(process, base / "result.json.kernel")
        log.close()
    if timed_out:
        return {**_read(base / "result.json.plan.json"), "problem": f"timed out: did not finish within "
                f"{timeout:g} s (killed)", "timed_out": True}
    if result.is_file():
        return _read(result)
    tail = (base / "worker.log").read_text(errors="replace").strip().splitlines()[-1:] or ["no output"]
    return {**_read(base / "result.json.plan.json"), "crashed": True,
            "problem": f"the grading process failed (exit {process.returncode}): {tail[0][:200]}"}


def _kill(process: subprocess.Popen, kernel_file: Path) -> None:
    """End the worker's process group and the kernel's (a kernel runs in a session of its own)."""
    groups = [process.pid]
    if kernel_file.is_file():
        try:
            groups.append(int(kernel_file.read_text().strip()))
        except ValueError:
            pass
    for group in groups:
        try:
            os.killpg(group, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL is not refused
        pass


def _read(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def _rows(student: str, submission: str, outcome: dict, timeout: float) -> list[GradeRow]:
    chapter = outcome.get("chapter") or ""
    labels = outcome.get("labels") or [row["exercise"] for row in outcome.get("exercises") or []]
    if not labels and chapter:
        labels = [label for label, item in EXERCISES.items() if item.chapter == chapter]
    problem = outcome.get("problem")
    if not chapter:  # not a notebook, or no chapter's: one row with the reason
        status = "not a notebook" if (problem or "").startswith("not a notebook") else "not a chapter"
        if outcome.get("crashed"):
            status = "crashed"
        return [GradeRow(student, submission, "", "", 0.0, 0.0, status, "not run", "not run",
                         problem or "the submission could not be graded")]
    checked = {row["exercise"]: row for row in outcome.get("exercises") or []}
    missing = set(outcome.get("missing") or [])
    cells = outcome.get("answer_cells") or {}
    errors = outcome.get("errors") or []
    rows = []
    for label in labels:
        points = EXERCISES[label].points if label in EXERCISES else 1.0
        own = [e for e in errors if e["cell"] == cells.get(label)]
        raised = "; ".join(f"cell {e['cell']} ({e['first_line']!r}) raised {e['error']}" for e in errors[:3])
        if label in missing:
            rows.append(GradeRow(student, submission, chapter, label, 0.0, points, "missing cell", "not run",
                                 "not run", f"the answer cell of {label} (a cell calling course.check("
                                            f"{label!r}, ...)) is missing from the notebook"))
        elif outcome.get("timed_out") or label not in checked:
            status = "timeout" if outcome.get("timed_out") else "not run" if outcome.get("refused") else "crashed"
            rows.append(GradeRow(student, submission, chapter, label, 0.0, points, status, "not run", "not run",
                                 problem or "the checks did not run"))
        else:
            row = checked[label]
            reason = row["message"]
            if row["message"] and own:
                reason += f" (its answer cell raised {own[0]['error']})"
            status = "graded"
            if errors:
                status = "cell error"
                reason = (reason + " | " if reason else "") + raised
            if problem:
                reason = (reason + " | " if reason else "") + problem
            rows.append(GradeRow(student, submission, chapter, label, float(row["score"]), float(row["points"]),
                                 status, row["public"], row["hidden"], reason))
    return rows
