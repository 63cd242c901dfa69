"""``evalkit course grade SUBMISSIONS_DIR``: a class graded on the assumption that every notebook is hostile.

The order of a grading, and what each step defends against (the teacher's guide states the threat model):

1. The output folder is checked (new or empty, see :func:`evalkit.course.report.prepare_out`) and every
   student's files are copied into a private folder without following a link (:mod:`evalkit.course.intake`):
   every student folder gets a row, and no run can change a classmate's file before it is graded.
2. The grader reads each copy (chapter, answer cells; parsed in a child process limited in memory and time,
   so a YAML alias bomb costs that child, not the grader) and runs it in the sandbox
   (:mod:`evalkit.course.sandbox`) under a wall-clock limit, in a scratch folder holding only that copy: the
   notebook's cells, then one cell that writes its answer variables as data. Past the limit, or when the run
   ends, every process it started is killed.
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
import hashlib
import os
import re
import secrets
import shutil
import subprocess
import signal
import stat
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat

from evalkit.course.checks import EXERCISES, chapter_exercises
from evalkit.course.intake import Entry, intake, last_line, read_capped, read_json, tail
from evalkit.course.key import CHECKS_PACKAGE, check_chapter, checks_stub, prepared
from evalkit.course.sandbox import (Isolation, Limits, check_timeout, check_visible_folders, clamped_limits,
                                    detect, end, mount_scratch, release_mounts, scrubbed_environment, supervise)
from evalkit.course.worker import READ_SECONDS, RESULT_KEY, unseal

__all__ = ["GradeRow", "GradeRun", "Interrupted", "grade", "key_limits", "COLUMNS"]

COLUMNS = ("student", "submission", "chapter", "exercise", "score", "points", "status", "public", "hidden",
           "reason")
_KEPT_BYTES = 5 * 2**20      # an executed copy larger than this is not kept in work/
_LOG_TAIL = 4000             # characters of a run's log kept


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


@dataclass
class _Run:
    """One submission's way through the grading."""

    number: int
    entry: Entry
    chapter: str = ""
    labels: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    answer_cells: dict[str, int] = field(default_factory=dict)
    status: str = ""             # set when the submission is not graded by its checks (not a notebook, ...)
    problem: str = ""
    timed_out: bool = False
    crashed: bool = False
    errors: list[dict] = field(default_factory=list)
    answers: dict[str, Any] | None = None
    checked: dict[str, dict] = field(default_factory=dict)
    prepared: str = ""           # the notebook to run (nbformat JSON), parameters applied
    key_params: str | None = None  # the sizes the key runs at for this submission
    kept: dict[str, bytes] = field(default_factory=dict)


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
        load_params(params)  # a misspelt set fails here, before any submission runs
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such folder of submissions")
    if out.resolve() == folder.resolve() or out.resolve().is_relative_to(folder.resolve()):
        raise ValueError(f"{out}: the output folder lies inside the folder of submissions; give one outside it")
    key_dir = Path(key) if key is not None else _book_chapters()
    check_visible_folders(os.environ, [folder.resolve(), out.resolve(), Path(key_dir).resolve()])
    isolation = detect(trusted=trusted)
    if isolation.namespace:
        _check_hidden(folder, out)
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
        runs = [_Run(number, entry) for number, entry in enumerate(intake(folder, copies))]
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
                _plan(run, params, read_seconds=min(timeout, READ_SECONDS))
            except Exception as error:  # whatever one submission is, the class is graded
                run.status, run.problem = "crashed", f"the grader could not read this submission ({type(error).__name__})"
            reading[student] = reading.get(student, 0.0) + time.monotonic() - started
        refuse_several(runs)
        for run in runs:
            started = time.monotonic()
            try:
                if not run.status and run.chapter:
                    _run_submission(run, private, limits, isolation, hide, stub, active)
            except Exception as error:  # whatever one submission does, the class is graded
                run.crashed = True
                run.problem = f"the grader could not run this submission ({type(error).__name__})"
                continue
            if progress:
                print(f"{run.entry.student}: {run.entry.submission} ({time.monotonic() - started:.0f} s)",
                      file=sys.stderr)
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


def _check_chapter(chapter: str, answered: dict[str, _Run], key_dir: Path, sizes: str | None, private: Path,
                   limits: Limits, active: list, timeout: float) -> dict[str, dict]:
    """:func:`evalkit.course.key.check_chapter` for the submissions ``answered`` (id -> run). Should it raise
    (MemoryError included), each submission is checked again alone, so that what one submission's answers
    do costs only that submission's rows ("not graded", with the reason)."""
    def check(group: dict[str, _Run]) -> dict[str, dict]:
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


def _safe_rows(run: _Run, timeout: float) -> list[GradeRow]:
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


def refuse_several(runs: list[_Run]) -> None:
    """A student who hands in one chapter more than once has every copy refused, naming them: graded one by one,
    several copies would let a student try answers and keep what passes.

    >>> from types import SimpleNamespace as Entry
    >>> runs = [_Run(n, Entry(student="s", submission=f"s/{n}.ipynb")) for n in range(2)]
    >>> for run in runs:
    ...     run.chapter = "01_dataset_building"
    >>> refuse_several(runs)
    >>> runs[0].status, runs[1].problem
    ('refused: several copies', 's handed in 01_dataset_building 2 times (s/0.ipynb, s/1.ipynb): hand in one notebook per chapter')
    """
    handed: dict[tuple[str, str], list[_Run]] = {}
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


def _plan(run: _Run, params: str | None, *, read_seconds: float = READ_SECONDS) -> None:
    """Read the copy (parsed in a limited child process, at most ``read_seconds``): its chapter, its exercises
    (from the key) and its answer cells."""
    from evalkit.course.release import answer_cells, with_parameter_set
    from evalkit.course.worker import NotASubmission, identify, read_submission

    entry = run.entry
    if entry.copy is None:
        run.status, run.problem = entry.refused, entry.reason
        return
    try:
        notebook = read_submission(entry.copy, seconds=read_seconds)
        run.chapter = identify(notebook, Path(entry.submission))
    except NotASubmission as reason:
        run.status = "not a notebook" if str(reason).startswith("not a notebook") else "not a chapter"
        run.problem = str(reason)
        return
    except RecursionError:
        run.status, run.problem = "not a notebook", "not a notebook: nested too deeply to read"
        return
    run.labels = [item.label for item in chapter_exercises(run.chapter)]
    run.key_params = params  # the teacher's sizes (else the chapter's own), never what a submission names
    meta = notebook.metadata.get("evalkit")
    released = meta.get("params") if isinstance(meta, dict) else None
    if params is None and released is not None:  # it says it was released at a parameter set's sizes
        from evalkit.book.runner import PARAMS_DIR

        named = (isinstance(released, str) and re.fullmatch(r"[A-Za-z0-9_-]{1,40}", released)
                 and (PARAMS_DIR / f"{released}.yml").is_file())
        run.status = "not graded"
        run.problem = (f"the notebook says it was released at the {str(released)[:40]!r} sizes and the key runs "
                       "only at the sizes the teacher gives: grade with "
                       + (f"--params {released}" if named else "the --params of its release"))
        return
    try:
        notebook = with_parameter_set(notebook, run.chapter, params)
    except ValueError as reason:  # its parameters cell was deleted: it cannot run at the set's sizes
        run.status, run.problem = "not run", f"cannot run at the {params!r} sizes: {reason}"
        return
    cells = answer_cells(notebook)
    run.missing = [label for label in run.labels if label not in cells]
    run.answer_cells = {label: cells[label] for label in run.labels if label in cells}
    run.prepared = nbformat.writes(notebook)


def _answer_names(chapter: str) -> list[str]:
    return list(dict.fromkeys(name for item in chapter_exercises(chapter) for name in item.answers))


def _run_submission(run: _Run, private: Path, limits: Limits, isolation: Isolation, hide: list[Path],
                    stub: Path | None, active: list) -> None:
    """Run one copy in the sandbox and collect what it left, as untrusted data."""
    base = private / "runs" / f"{run.number:04d}"
    base.mkdir(parents=True, mode=0o700)
    os.chmod(base.parent, 0o711)
    scratch = isolation.namespace and isolation.uid is not None
    if scratch:
        mount_scratch(base, limits.scratch_bytes)
    try:
        _run_in(base, run, limits, isolation, hide, stub, active)
    finally:
        if scratch:
            release_mounts(base)
        remove_tree(base)


def _run_in(base: Path, run: _Run, limits: Limits, isolation: Isolation, hide: list[Path], stub: Path | None,
            active: list) -> None:
    cwd, home = base / "cwd", base / "home"
    answers_path = base / "answers.json"
    final = ("from evalkit.course.answers import dump as _evalkit_dump\n"
             f"_evalkit_dump(globals(), {_answer_names(run.chapter)!r}, {str(answers_path)!r})")
    text, graded = prepared(run.prepared, final)
    notebook = base / "submission.ipynb"
    notebook.write_text(text)
    for folder in (cwd, home, home / "tmp", home / "runtime"):
        folder.mkdir(parents=True, exist_ok=True)
    if isolation.uid is not None:
        for path in (base, cwd, home, home / "tmp", home / "runtime", notebook):
            os.chown(path, isolation.uid, isolation.gid)
    command = [sys.executable, "-m", "evalkit.course.worker", str(notebook), str(base), "--cwd", str(cwd),
               "--graded", str(graded)]
    bind = [(stub, CHECKS_PACKAGE)] if stub is not None else []
    key = secrets.token_hex(32)  # seals the worker's result: the submission's kernel never sees it
    outcome = supervise(command, base, limits, isolation, {**scrubbed_environment(home), RESULT_KEY: key}, hide,
                        bind, active)
    run.timed_out = outcome == "timeout"
    sealed = read_json(base / "result.json")
    result = unseal(sealed, key)
    executed_bytes = read_capped(base / "executed.ipynb", _KEPT_BYTES)
    if isinstance(result, dict) and result.get("executed_sha256") is not None and (
            hashlib.sha256(executed_bytes).hexdigest() != result["executed_sha256"] if executed_bytes is not None
            else not (isinstance(result.get("executed_bytes"), int) and result["executed_bytes"] > _KEPT_BYTES)):
        result = None  # the executed copy was rewritten, removed or linked after the worker wrote it (one that
        # the worker wrote over 5 MB is not kept, and says so)
    if run.timed_out:
        run.problem = f"timed out: did not finish within {limits.timeout:g} s (killed)"
    elif sealed is not None and result is None:
        run.crashed = True
        run.problem = "the run's result was changed from inside the notebook (its seal does not match): not graded"
    elif not isinstance(result, dict):
        run.crashed = True
        run.problem = f"the grading process failed ({outcome}): {last_line(base / 'worker.log') or 'no output'}"
    else:
        run.errors = _errors(result.get("errors"))
        if isinstance(result.get("problem"), str):
            run.problem = _short(result["problem"], 300)
        if result.get("truncated") is True:
            run.problem = (run.problem + " | " if run.problem else "") + "some output was cut (too long)"
    if not run.timed_out:
        from evalkit.course.answers import Unreadable, load

        try:  # only the chapter's answer names are decoded
            run.answers = load(answers_path, names=_answer_names(run.chapter))
        except Unreadable as reason:
            if not run.crashed:
                run.crashed = True
                run.problem = (run.problem + " | " if run.problem else "") + str(reason)
        except Exception as error:  # MemoryError included: this submission is not graded, the others are
            run.answers = None
            run.status = "not graded"
            run.problem = f"the grader could not read this submission's answers ({type(error).__name__})"
    run.kept["executed.ipynb"] = executed_bytes if executed_bytes is not None else (
        b"the executed copy was not kept: it is missing, not a plain file or over 5 MB\n")
    run.kept["worker.log"] = tail(base / "worker.log", _LOG_TAIL).encode()


def _rows(run: _Run, timeout: float) -> list[GradeRow]:
    """The submission's rows, each saying what the entry collides with (:attr:`Entry.note`)."""
    rows = _rows_of(run, timeout)
    note = run.entry.note
    if not note:
        return rows
    return [dataclasses.replace(row, reason=f"{row.reason} | {note}" if row.reason else note) for row in rows]


def _rows_of(run: _Run, timeout: float) -> list[GradeRow]:
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


def remove_tree(path: Path) -> None:
    """Remove a folder a submission may have filled, however deep it made it: ``shutil.rmtree`` recurses once per
    level and a notebook can nest folders past Python's recursion limit, so ``rm -rf`` removes what it could not."""
    try:
        shutil.rmtree(path, ignore_errors=True)
    except RecursionError:
        pass
    if os.path.lexists(path):
        subprocess.run(["rm", "-rf", "--one-file-system", str(path)], check=False, capture_output=True)


def _keep(runs: list[_Run], out: Path) -> None:
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


def _errors(value: Any) -> list[dict]:
    errors = []
    for item in value if isinstance(value, list) else []:
        if isinstance(item, dict) and isinstance(item.get("cell"), int) and not isinstance(item.get("cell"), bool):
            errors.append({"cell": item["cell"], "first_line": _short(str(item.get("first_line", "")), 80),
                           "error": _short(str(item.get("error", "")), 200)})
        if len(errors) == 50:
            break
    return errors


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


