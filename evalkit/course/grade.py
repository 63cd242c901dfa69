"""``evalkit course grade SUBMISSIONS_DIR``: a class graded on the assumption that every notebook is hostile.

The order of a grading, and what each step defends against (the teacher's guide states the threat model):

1. The output folder is checked (new or empty, see :func:`evalkit.course.report.prepare_out`) and every
   student's files are copied into a private folder without following a link (:mod:`evalkit.course.intake`):
   every student folder gets a row, and no run can change a classmate's file before it is graded.
2. The grader reads each copy (chapter, answer cells; parsed in a child process limited in memory and time,
   so a YAML alias bomb costs that child, not the grader) and runs it in the sandbox
   (:mod:`evalkit.course.sandbox`) under a wall-clock limit, in a scratch folder holding only that copy: the
   notebook's cells, then one cell that writes its answer variables as data. Past the limit, or when the run
   ends, every process it started is killed (:mod:`evalkit.course.submission`).
3. Per chapter, the teacher's own chapter (the *key*: the book's notebooks, or ``key``) runs once in a kernel
   of the grader's, and the exercises' public and hidden checks run there on each submission's answers
   (:func:`evalkit.course.answers.check_all`). Labels, points, expected values and the sizes the key runs
   at (``--params``, else the chapter's own) come from the teacher, never from a submission. The key may run
   for ``--timeout`` seconds plus ``--timeout`` per submission it checks, and each submission's checks for
   ``--timeout`` seconds. Only the chapter's answer names are read from a run's answers, within
   :func:`evalkit.course.answers.load`'s limits; whatever one submission's answers do while they are read or
   checked (an error, MemoryError included) gives that submission "not graded" rows with the reason, and
   every other submission is graded.
4. ``grades.csv``, ``totals.csv`` and ``grades.html`` are written after every run has ended, each atomically;
   ``work/NNNN/`` keeps each run's executed copy (outputs capped) and the tail of its log.
"""
from __future__ import annotations

import dataclasses
import os
import shutil
import signal
import stat
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from evalkit.course.checks import EXERCISES
from evalkit.course.intake import Entry, intake  # noqa: F401 (Entry: refuse_several's example)
from evalkit.course.key import check_chapter, checks_stub
from evalkit.course.report import one_line
from evalkit.course.sandbox import (Limits, check_timeout, check_visible_folders, clamped_limits, detect, end,
                                    release_mounts, unreadable_models, with_kit_cache)
from evalkit.course.submission import SubmissionRun, plan, remove_tree, run_submission
from evalkit.course.worker import READ_SECONDS

__all__ = ["GradeRow", "GradeRun", "Interrupted", "grade", "key_limits", "COLUMNS"]

COLUMNS = ("student", "submission", "chapter", "exercise", "score", "points", "status", "public", "hidden",
           "reason")


@dataclass(frozen=True)
class GradeRow:
    student: str
    submission: str
    chapter: str
    exercise: str
    score: float
    points: float
    status: str   # graded, cell error, missing cell, timeout, crashed, not run, not graded, not a notebook,
    public: str   # not a chapter, no submission, refused: ...; public/hidden: passed, failed, not run
    hidden: str
    reason: str


@dataclass(frozen=True)
class GradeRun:
    rows: list[GradeRow]
    csv: Path
    totals: Path
    html: Path
    isolation: str = ""


class Interrupted(BaseException):
    """SIGTERM or SIGINT reached the grader: the running submission was killed and no table was written."""

    def __init__(self, signum: int):
        super().__init__(f"interrupted by {signal.Signals(signum).name}: the running submission was killed and "
                         "no table was written")
        self.signum = signum


READ_BUDGET = 300.0  # seconds of reading one student's files may take in all; past it, the rest are refused


def grade(submissions_dir: str | Path, out_dir: str | Path, *, timeout: float = 900.0, progress: bool = False,
          params: str | Path | None = None, key: str | Path | None = None, trusted: bool = False,
          replace: bool = False, limits: Limits | None = None) -> GradeRun:
    """Grade every submission of ``submissions_dir`` and write the tables into ``out_dir`` (new or empty;
    ``replace``: a previous grading's outputs there are replaced). ``timeout``: seconds one notebook may run;
    ``params`` (e.g. ``"lab"``): run every submission and the key at that parameter set's sizes; ``key``: the
    folder of the teacher's chapters (default: the book's); ``trusted``: grade even where no sandbox starts.
    Raises ``ValueError`` on a bad argument and :class:`Interrupted` on SIGTERM or SIGINT."""
    from evalkit.course.report import prepare_out, write_tables

    timeout = check_timeout(timeout)
    limits = Limits(timeout=timeout) if limits is None else dataclasses.replace(limits, timeout=timeout)
    capped = clamped_limits(limits)  # a run never gets more than the grader's own hard limits: said, not raised
    for note in capped:
        print(f"evalkit: note: {note}", file=sys.stderr)
    folder, out = Path(submissions_dir), Path(out_dir)
    if params is not None:
        from evalkit.book.runner import load_params

        params = str(Path(params).resolve()) if Path(params).suffix else params
        if Path(params).suffix and Path(params).is_relative_to(folder.resolve()):  # a student could write it
            raise ValueError(f"{params}: the parameter file lies inside the folder of submissions; give one outside "
                             "it")
        load_params(params)  # a misspelt set fails here, before any submission runs
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such folder of submissions")
    if out.resolve() == folder.resolve() or out.resolve().is_relative_to(folder.resolve()):
        raise ValueError(f"{out}: the output folder lies inside the folder of submissions; give one outside it")
    key_dir = Path(key) if key is not None else _book_chapters()
    if key_dir.resolve() == folder.resolve() or key_dir.resolve().is_relative_to(folder.resolve()):
        # a submission there would be the teacher's chapter: run unsandboxed, and set everyone's expected values
        raise ValueError(f"{key_dir}: the answer key lies inside the folder of submissions; give the folder of the "
                         "teacher's chapters, outside it")
    check_visible_folders(with_kit_cache(os.environ), [folder.resolve(), out.resolve(), Path(key_dir).resolve()])
    isolation = detect(trusted=trusted)
    if isolation.namespace:
        _check_hidden(folder, out)
        private_models = unreadable_models(with_kit_cache(os.environ))
        if private_models:  # a run as another user cannot load them: every notebook that does would fail
            print(f"note: {', '.join(map(str, private_models))}{' ...' if len(private_models) >= 3 else ''} in the "
                  "model cache cannot be read by the graded runs (no read permission for others): make them "
                  "readable (chmod -R o+rX on the cache's models folder) or every notebook that loads them fails",
                  file=sys.stderr)
    out = prepare_out(out, replace=replace)
    remove_stale_gradings(Path(tempfile.gettempdir()))
    private = Path(tempfile.mkdtemp(prefix="evalkit-grade-"))
    for outside in (folder, out):
        if private.resolve().is_relative_to(outside.resolve()):
            shutil.rmtree(private)
            raise ValueError(f"the temporary folder {private} lies inside {outside}: set TMPDIR elsewhere")
    os.chmod(private, 0o711)
    (private / "grader.pid").write_text(str(os.getpid()))  # a later grading removes this folder if it dies
    active: list = []
    restore = _on_signals(active)
    try:
        copies = private / "copies"
        copies.mkdir(mode=0o700)
        runs = [SubmissionRun(number, entry) for number, entry in enumerate(intake(folder, copies))]
        stub = checks_stub(private) if isolation.namespace else None
        hide = [folder.resolve(), out.resolve(), copies, Path(key_dir).resolve()]
        reading: dict[str, float] = {}  # seconds spent reading each student's files
        for run in runs:
            student = run.entry.student
            if reading.get(student, 0.0) > READ_BUDGET and run.entry.copy is not None:
                run.status = "refused: too slow to read"
                run.problem = (f"the student's files took more than {READ_BUDGET:g} s to read in all (many or huge "
                               "cells?); the rest are not read")
                continue
            started = time.monotonic()
            try:
                plan(run, params, read_seconds=min(timeout, READ_SECONDS))
            except Exception as error:  # whatever one submission is, the class is graded
                run.status, run.problem = "crashed", f"the grader could not read this submission ({type(error).__name__})"
            reading[student] = reading.get(student, 0.0) + time.monotonic() - started
        refuse_several(runs)
        for run in runs:
            started = time.monotonic()
            try:
                if not run.status and run.chapter:
                    run_submission(run, private, limits, isolation, hide, stub, active)
            except Exception as error:  # whatever one submission does, the class is graded
                run.crashed = True
                run.problem = f"the grader could not run this submission ({type(error).__name__})"
                continue
            if progress:
                print(f"{one_line(run.entry.student)}: {one_line(run.entry.submission)} "
                      f"({time.monotonic() - started:.0f} s)", file=sys.stderr)
        for chapter, sizes in dict.fromkeys((run.chapter, run.key_params) for run in runs
                                            if run.answers is not None):
            answered = {str(run.number): run for run in runs if run.answers is not None
                        and (run.chapter, run.key_params) == (chapter, sizes)}
            checked = _check_chapter(chapter, answered, key_dir, sizes, private, limits, active, timeout)
            for key, run in answered.items():
                run.checked = checked[key]
        rows = [row for run in runs for row in _safe_rows(run, timeout)]
    finally:
        restore()
        remove_tree(private)
    _keep(runs, out)
    csv_path, totals, html = write_tables(rows, out, isolation="; ".join([isolation.name, *capped]))
    return GradeRun(rows, csv_path, totals, html, isolation.name)


def _check_chapter(chapter: str, answered: dict[str, SubmissionRun], key_dir: Path, sizes: str | None, private: Path,
                   limits: Limits, active: list, timeout: float) -> dict[str, dict]:
    """:func:`evalkit.course.key.check_chapter` for the submissions ``answered`` (id -> run). Should it raise
    (MemoryError included), each submission is checked again alone, so that what one submission's answers
    do costs only that submission's rows ("not graded", with the reason)."""
    def check(group: dict[str, SubmissionRun]) -> dict[str, dict]:
        return check_chapter(chapter, {key: run.answers for key, run in group.items()}, key_dir, sizes, private,
                             key_limits(limits, len(group)), active, per_submission=timeout)

    try:
        return check(answered)
    except Exception as error:  # whatever one submission's answers do, the class is graded
        if len(answered) == 1:
            return {key: {"problem": f"the key could not check these answers ({type(error).__name__})"}
                    for key in answered}
    checked = {}
    for key, run in answered.items():
        try:
            checked[key] = check({key: run})[key]
        except Exception as error:
            checked[key] = {"problem": f"the key could not check these answers ({type(error).__name__})"}
    return checked


def _safe_rows(run: SubmissionRun, timeout: float) -> list[GradeRow]:
    """:func:`_rows`, or one "not graded" row per exercise should they raise on what the run left."""
    try:
        return _rows(run, timeout)
    except Exception as error:
        entry = run.entry
        reason = f"the grader could not read this submission's results ({type(error).__name__})"
        return [GradeRow(entry.student, entry.submission, run.chapter, label, 0.0, float(EXERCISES[label].points),
                         "not graded", "not run", "not run", reason) for label in run.labels if label in EXERCISES
                ] or [GradeRow(entry.student, entry.submission, run.chapter, "", 0.0, 0.0, "not graded", "not run",
                               "not run", reason)]


def key_limits(limits: Limits, submissions: int) -> Limits:
    """The key's limits: ``limits.timeout`` to run the chapter and as much again per submission it checks.

    >>> key_limits(Limits(timeout=10), 3).timeout
    40.0
    """
    return dataclasses.replace(limits, timeout=float(limits.timeout) * (1 + max(0, submissions)))


def remove_stale_gradings(folder: Path) -> None:
    """Remove the private folders (students' copies, scratch mounts) of gradings whose grader died without
    cleaning up (SIGKILL cannot be caught): folders ``evalkit-grade-*`` in ``folder`` that this user owns and
    whose ``grader.pid`` names no running process."""
    for path in folder.glob("evalkit-grade-*"):
        try:
            info = os.lstat(path)
            if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
                continue
            pid = int((path / "grader.pid").read_text(encoding="ascii").strip())
        except (OSError, ValueError):
            continue
        try:
            os.kill(pid, 0)
            continue  # its grader still runs
        except ProcessLookupError:
            pass
        except PermissionError:
            continue
        release_mounts(path)
        remove_tree(path)


def refuse_several(runs: list[SubmissionRun]) -> None:
    """A student who hands in one chapter more than once has every copy refused, naming them: graded one by one,
    several copies would let a student try answers and keep what passes.

    >>> from types import SimpleNamespace as Entry
    >>> runs = [SubmissionRun(n, Entry(student="s", submission=f"s/{n}.ipynb")) for n in range(2)]
    >>> for run in runs:
    ...     run.chapter = "01_dataset_building"
    >>> refuse_several(runs)
    >>> runs[0].status, runs[1].problem
    ('refused: several copies', 's handed in 01_dataset_building 2 times (s/0.ipynb, s/1.ipynb): hand in one notebook per chapter')
    """
    handed: dict[tuple[str, str], list[SubmissionRun]] = {}
    for run in runs:
        if run.chapter and not run.status:
            handed.setdefault((run.entry.student, run.chapter), []).append(run)
    for (student, chapter), copies in handed.items():
        if len(copies) > 1:
            names = ", ".join(copy.entry.submission for copy in copies)
            for copy in copies:
                copy.status = "refused: several copies"
                copy.problem = (f"{student} handed in {chapter} {len(copies)} times ({names}): hand in one notebook "
                                "per chapter")


def _check_hidden(folder: Path, out: Path) -> None:
    """A run sees the class folder and the output folder empty: neither may hold what a run needs (the
    Python environment, the kit, the temporary folder)."""
    needed = [Path(sys.prefix).resolve(), Path(__file__).resolve().parents[2], Path(tempfile.gettempdir()).resolve()]
    for what, path in (("folder of submissions", folder), ("output folder", out)):
        path = path.resolve()
        inside = [str(thing) for thing in needed if thing == path or thing.is_relative_to(path)]
        if inside:
            raise ValueError(f"{path}: the {what} holds {inside[0]}, which every run needs; give a folder of "
                             "its own")


def _book_chapters() -> Path:
    from evalkit.book.runner import NOTEBOOK_DIR

    return NOTEBOOK_DIR


def _on_signals(active: list):
    """SIGTERM and SIGINT end the running submission (the ``finally`` of :func:`grade` and of the run) and
    raise :class:`Interrupted`; returns what puts the previous handlers back."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def interrupt(signum, _frame):
        for process, groups in list(active):
            end(process, groups)
        raise Interrupted(signum)

    previous = {signum: signal.signal(signum, interrupt) for signum in (signal.SIGTERM, signal.SIGINT)}
    return lambda: [signal.signal(signum, handler) for signum, handler in previous.items()]


def _rows(run: SubmissionRun, timeout: float) -> list[GradeRow]:
    """The submission's rows, each saying what the entry collides with (:attr:`Entry.note`)."""
    rows = _rows_of(run, timeout)
    note = run.entry.note
    if not note:
        return rows
    return [dataclasses.replace(row, reason=f"{row.reason} | {note}" if row.reason else note) for row in rows]


def _rows_of(run: SubmissionRun, timeout: float) -> list[GradeRow]:
    entry = run.entry
    student, submission = entry.student, entry.submission
    if not run.chapter or (run.status and not run.labels):
        status = run.status or "not a chapter"
        return [GradeRow(student, submission, "", "", 0.0, 0.0, status, "not run", "not run",
                         run.problem or "the submission could not be graded")]
    rows = []
    checked_problem = run.checked.get("problem") if isinstance(run.checked.get("problem"), str) else ""
    raised = "; ".join(f"cell {e['cell']} ({e['first_line']!r}) raised {e['error']}" for e in run.errors[:3])
    for label in run.labels:
        points = EXERCISES[label].points
        if label in run.missing:
            rows.append(GradeRow(student, submission, run.chapter, label, 0.0, points, "missing cell", "not run",
                                 "not run", f"the answer cell of {label} (a cell calling course.check("
                                            f"{label!r}, ...)) is missing from the notebook"))
            continue
        outcome = run.checked.get(label)
        if run.status or run.timed_out or run.crashed or checked_problem or not isinstance(outcome, dict):
            status = (run.status or ("timeout" if run.timed_out else "crashed" if run.crashed else "not graded"))
            rows.append(GradeRow(student, submission, run.chapter, label, 0.0, points, status, "not run",
                                 "not run", run.problem or checked_problem or "the checks did not run"))
            continue
        reason = str(outcome.get("message", ""))
        own = [e for e in run.errors if e["cell"] == run.answer_cells.get(label)]
        if reason and own:
            reason += f" (its answer cell raised {own[0]['error']})"
        status = "graded"
        if run.errors:
            status = "cell error"
            reason = (reason + " | " if reason else "") + raised
        if run.problem:
            reason = (reason + " | " if reason else "") + run.problem
        passed = outcome.get("passed") is True
        rows.append(GradeRow(student, submission, run.chapter, label, points if passed else 0.0, points, status,
                             str(outcome.get("public", "not run")), str(outcome.get("hidden", "not run")), reason))
    return rows


def _keep(runs: list[SubmissionRun], out: Path) -> None:
    """Each run's executed copy and log tail into ``out/work/NNNN/`` (new files, never through a link); the log
    tail masked by :func:`evalkit.models.redact` (the executed copy is kept as the run wrote it, hash-checked)."""
    from evalkit.models import environment_secrets, redact

    secrets = environment_secrets()
    work = out / "work"
    work.mkdir(mode=0o755)
    for run in runs:
        kept = dict(run.kept)
        if not kept:
            continue
        if "worker.log" in kept:
            kept["worker.log"] = redact(kept["worker.log"].decode(errors="replace"), secrets).encode()
        folder = work / f"{run.number:04d}"
        folder.mkdir(mode=0o755)
        for name, data in kept.items():
            with os.fdopen(os.open(folder / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644),
                           "wb") as handle:
                handle.write(data)
