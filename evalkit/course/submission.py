"""One submission's way through a grading (:mod:`evalkit.course.grade`): its copy read in a limited child process
(:func:`plan`: chapter, exercises, answer cells, the teacher's sizes), then run in the sandbox in a scratch folder
of its own (:func:`run_submission`), and what the run left — its answers, its errors, its executed copy and log —
collected as untrusted data: a sealed result that does not match, or an executed copy changed after the worker
wrote it, is not believed.
"""
from __future__ import annotations

import hashlib
import os
import re
import secrets
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat

from evalkit.course.checks import chapter_exercises
from evalkit.course.intake import Entry, last_line, read_capped, read_json, tail
from evalkit.course.key import CHECKS_PACKAGE, prepared
from evalkit.course.sandbox import Isolation, Limits, mount_scratch, release_mounts, scrubbed_environment, supervise
from evalkit.course.worker import READ_SECONDS, RESULT_KEY, unseal

__all__ = ["SubmissionRun", "plan", "run_submission", "remove_tree", "KEPT_BYTES", "LOG_TAIL"]

KEPT_BYTES = 5 * 2**20      # an executed copy larger than this is not kept in work/
LOG_TAIL = 4000             # characters of a run's log kept


@dataclass
class SubmissionRun:
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


def plan(run: SubmissionRun, params: str | None, *, read_seconds: float = READ_SECONDS) -> None:
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


def run_submission(run: SubmissionRun, private: Path, limits: Limits, isolation: Isolation, hide: list[Path],
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


def _run_in(base: Path, run: SubmissionRun, limits: Limits, isolation: Isolation, hide: list[Path], stub: Path | None,
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
    executed_bytes = read_capped(base / "executed.ipynb", KEPT_BYTES)
    if isinstance(result, dict) and result.get("executed_sha256") is not None and (
            hashlib.sha256(executed_bytes).hexdigest() != result["executed_sha256"] if executed_bytes is not None
            else not (isinstance(result.get("executed_bytes"), int) and result["executed_bytes"] > KEPT_BYTES)):
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
    run.kept["worker.log"] = tail(base / "worker.log", LOG_TAIL).encode()


def remove_tree(path: Path) -> None:
    """Remove a folder a submission may have filled, however deep it made it: ``shutil.rmtree`` recurses once per
    level and a notebook can nest folders past Python's recursion limit, so ``rm -rf`` removes what it could not."""
    try:
        shutil.rmtree(path, ignore_errors=True)
    except RecursionError:
        pass
    if os.path.lexists(path):
        subprocess.run(["rm", "-rf", "--one-file-system", str(path)], check=False, capture_output=True)


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
