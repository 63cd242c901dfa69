"""The grading tables: ``grades.csv`` (one row per student, submission and exercise), ``totals.csv`` (one
per student and chapter) and ``grades.html`` (both, self-contained: inline style, no script, every text
escaped).

The output folder is one the grader creates, or an empty one (:func:`prepare_out`); each table is written to
a temporary file in it and renamed into place, so a table is whole or absent and never written through a
link. A spreadsheet cell that starts like a formula (``= + - @``, a tab or a carriage return) gets a leading
``'`` (:func:`spreadsheet_safe`). Every text a run can put in a row (its status, verdicts and reason: an
exception's message, the tail of a log) is masked by :func:`evalkit.models.redact` with the grader's
environment secrets (:func:`redacted_rows`): a credential a notebook read or printed shows as ``***``.
"""
from __future__ import annotations

import csv
import html
import io
import os
import shutil
import stat
import tempfile
import unicodedata
from collections import defaultdict
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, Sequence

from evalkit.course.intake import shown_name, student_key
from evalkit.data.folders import out_folder
from evalkit.data.jsonl import spreadsheet_safe

__all__ = ["write_tables", "totals", "name_collisions", "prepare_out", "spreadsheet_safe", "encodable", "write_atomic",
           "redacted_rows", "OUTPUTS", "RUN_TEXT_FIELDS"]

#: What a grading writes in its folder (``work`` holds each submission's executed copy and log).
OUTPUTS = ("grades.csv", "totals.csv", "grades.html", "work")
#: The text fields of a row that a run's output can reach (the student's and the file's names come from the
#: class folder, the chapter and the exercise from the key).
RUN_TEXT_FIELDS = ("status", "public", "hidden", "reason")


def redacted_rows(rows: Sequence, secrets: Sequence[str] | None = None) -> list:
    """``rows`` with each of :data:`RUN_TEXT_FIELDS` passed through :func:`evalkit.models.redact`: the
    ``secrets`` given (default: :func:`evalkit.models.environment_secrets` of the grader's environment), whole
    and in part, and every credential shape (``OPENAI_API_KEY=...``, ``sk-...``, ``password: ...``) masked.

    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Row:
    ...     student: str
    ...     status: str
    ...     public: str
    ...     hidden: str
    ...     reason: str
    >>> row, = redacted_rows([Row("ann", "cell error", "passed", "failed",
    ...                           "raised RuntimeError: OPENAI_API_KEY=q8Zr2Lk5Wm9Tx3Vb and hunter2-db-pw")],
    ...                      ["hunter2-db-pw"])
    >>> row.reason, row.student
    ('raised RuntimeError: OPENAI_API_KEY=*** and ***', 'ann')
    """
    from evalkit.models import environment_secrets, redact

    secrets = environment_secrets() if secrets is None else list(secrets)
    return [replace(row, **{name: redact(getattr(row, name), secrets) for name in RUN_TEXT_FIELDS
                            if isinstance(getattr(row, name, None), str)}) for row in rows]


#: What a grading keeps of one run in ``work/NNNN/`` (:func:`evalkit.course.grade`'s ``_keep``).
_KEPT_FILES = ("executed.ipynb", "worker.log")


def _not_written_by_a_grading(out: Path, present: list[str]) -> str | None:
    """The first path under ``out`` (relative, as shown) that a grading does not write, or None: its tables (beside
    a ``grades.csv`` with the grader's header), and ``work`` holding only numbered folders (``0001``) of
    :data:`_KEPT_FILES`. A link in their place is removed, not followed (a planted ``grades.html`` pointing
    elsewhere), so it counts as theirs.

    >>> import tempfile; out = Path(tempfile.mkdtemp()); (out / "work" / "thesis").mkdir(parents=True)
    >>> for table in ("grades.csv", "totals.csv", "grades.html"): (out / table).symlink_to("/dev/null")
    >>> _not_written_by_a_grading(out, ["grades.csv", "grades.html", "totals.csv", "work"])
    'work/thesis'
    """
    # A grading writes work/ first, then its tables one by one, grades.csv first: one interrupted leaves work/
    # alone, or grades.csv without the others. A file named like a table is a grading's only beside a grades.csv
    # with the grader's header (a teacher's own gradebook of that name is not).
    graded = "grades.csv" in present and (kind_of(out / "grades.csv") == "link" or (
        kind_of(out / "grades.csv") == "file" and _graded_header(out / "grades.csv")))
    if "grades.csv" in present and not graded:
        return "grades.csv"
    others = [name for name in ("totals.csv", "grades.html") if name in present and kind_of(out / name) != "link"]
    if others and not graded:
        return others[0]
    for name in present:
        if kind_of(out / name) == "link" or (name != "work" and kind_of(out / name) == "file"):
            continue
        if name != "work" or kind_of(out / name) != "folder":
            return name
        for run in sorted(os.listdir(out / "work")):
            if kind_of(out / "work" / run) == "link":
                continue
            if not (len(run) >= 4 and run.isascii() and run.isdigit() and kind_of(out / "work" / run) == "folder"):
                return f"work/{run}"
            for kept in sorted(os.listdir(out / "work" / run)):
                if kept not in _KEPT_FILES or kind_of(out / "work" / run / kept) not in ("file", "link"):
                    return f"work/{run}/{kept}"
    return None


def kind_of(path: Path) -> str:
    """``link``, ``folder``, ``file`` or ``other``: what ``path`` is, links not followed."""
    mode = os.lstat(path).st_mode
    return "link" if stat.S_ISLNK(mode) else "folder" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) \
        else "other"


def _graded_header(path: Path) -> bool:
    """Whether the CSV file at ``path`` begins with the header a grading writes (:data:`grade.COLUMNS`)."""
    from evalkit.course.grade import COLUMNS

    with open(path, "rb") as handle:
        first = handle.readline(4096).decode("utf-8", "replace").lstrip("\ufeff").strip()
    return first == ",".join(COLUMNS)


def prepare_out(out: Path, *, replace: bool = False) -> Path:
    """``out`` ready for a grading: created when absent; an existing folder must be empty, or (with
    ``replace``) hold only a previous grading's outputs, as a grading writes them, which are removed. A link, a file, or a folder that
    holds anything else is refused with a ``ValueError``, and so is a path under a file or one that cannot be
    made (the path and the reason named).

    >>> import tempfile
    >>> a_file = Path(tempfile.mkdtemp()) / "notes.txt"
    >>> _ = a_file.write_text("the teacher's notes")
    >>> prepare_out(a_file / "grades")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: --out .../notes.txt/grades: .../notes.txt is a file, not a folder
    """
    out = out_folder(out)
    try:
        info = os.lstat(out)
    except FileNotFoundError:
        try:
            out.mkdir(parents=True, mode=0o755)
        except OSError as error:
            raise ValueError(f"{out}: the output folder cannot be made ({error.strerror or type(error).__name__})"
                             ) from None
        return out
    except OSError as error:
        raise ValueError(f"{out}: the output folder cannot be read ({error.strerror or type(error).__name__})"
                         ) from None
    if stat.S_ISLNK(info.st_mode):
        raise ValueError(f"{out}: the output folder is a symbolic link; give a real folder")
    present = sorted(os.listdir(out))
    if not present:
        return out
    others = [name for name in present if name not in OUTPUTS]
    if others:
        raise ValueError(f"{out}: the output folder holds other files ({', '.join(others[:3])}); give a new or "
                         "empty folder")
    if not replace:
        raise ValueError(f"{out}: the output folder holds a previous grading ({', '.join(present)}); pass "
                         "--replace to overwrite it, or give a new folder")
    foreign = _not_written_by_a_grading(out, present)
    if foreign:  # a teacher's own folder named "work", a "grades.csv" that is a folder: never removed
        raise ValueError(f"{out}: {foreign} is not what a grading writes; --replace removes only a previous "
                         "grading's files: move it, or give a new folder")
    for name in present:
        path = out / name
        if stat.S_ISDIR(os.lstat(path).st_mode):
            shutil.rmtree(path)
        else:
            path.unlink()
    return out


def write_atomic(path: Path, text: str) -> None:
    """``text`` into ``path`` by a temporary file in the same folder renamed over it (a link at ``path``
    is replaced, never followed)."""
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
            stream.write(text)
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        if os.path.lexists(temporary):
            os.unlink(temporary)
        raise


_UNSEEN = ("Cf", "Zl", "Zp")  # format characters, line and paragraph separators: escaped, never drawn


def encodable(value):
    """``value`` as a table cell may hold it: any character a file cannot hold in UTF-8 (the lone surrogates that
    stand for the bytes of a name that is not UTF-8) written as its escape, ``\\xff``, and every control
    character but a line break and a tab (a terminal's escape sequences, which a student's exception message can
    carry to repaint other rows where the file is printed) as ``\\x1b``, and every invisible format character (a
right-to-left override that shows "\u202eecila" as "alice", a zero-width space) or line and paragraph separator
(U+2028, U+2029) as ``\\u202e``; other values unchanged.

    >>> encodable("bad\\udcffname.txt"), encodable(3.0)
    ('bad\\\\xffname.txt', 3.0)
    >>> encodable("boom\\x1b[2J\\x1b[1Afull marks\\x9b\\nnext line")
    'boom\\\\x1b[2J\\\\x1b[1Afull marks\\\\x9b\\nnext line'
    >>> encodable("\\u202eecila"), encodable("ali\\u200bce")
    ('\\\\u202eecila', 'ali\\\\u200bce')
    """
    if not isinstance(value, str):
        return value
    return "".join(f"\\x{ord(c) - 0xDC00:02x}" if "\udc80" <= c <= "\udcff" else
                   f"\\u{ord(c):04x}" if "\ud800" <= c <= "\udfff" or unicodedata.category(c) in _UNSEEN else
                   f"\\x{ord(c):02x}" if (ord(c) < 32 and c not in "\n\t") or 0x7f <= ord(c) <= 0x9f else c
                   for c in value)


def one_line(text: str) -> str:
    """``text`` as one line of the grader's progress on a terminal: :func:`encodable`, its line breaks and tabs
    escaped too (a file name holding a terminal's escape sequences, or a line break, cannot repaint the screen or
    fake another line).

    >>> one_line("eve/04\\x1b[1A\\x1b]52;c;eA==\\x07\\nalice: 10 / 10.ipynb")
    'eve/04\\\\x1b[1A\\\\x1b]52;c;eA==\\\\x07\\\\nalice: 10 / 10.ipynb'
    """
    return encodable(text).replace("\n", "\\n").replace("\t", "\\t")


def totals(rows: Sequence) -> list[dict]:
    """Score and points per (student, chapter), each exercise counted once: copies of one chapter are refused
    before they run (``refuse_several``), and rows of the same exercise never add up (the best score counts).
    Submissions that are no chapter's count under chapter ''; ``problems`` counts every row not graded.

    >>> from types import SimpleNamespace as Row
    >>> rows = [Row(student="s", chapter="04", exercise="ch4-a", score=s, points=1.0, status="graded")
    ...         for s in (1.0, 1.0, 0.0)]
    >>> [(t["score"], t["points"], t["exercises passed"]) for t in totals(rows)]
    [(1.0, 1.0, 1)]
    """
    problems: dict[tuple[str, str], int] = {}
    best: dict[tuple[str, str, str], Any] = {}
    for row in rows:
        key = (row.student, row.chapter)
        problems[key] = problems.get(key, 0) + int(row.status not in ("graded",))
        kept = best.get((*key, row.exercise))
        if kept is None or row.score > kept.score:
            best[(*key, row.exercise)] = row
    collisions = name_collisions([student for student, _ in problems])
    summed = {key: {"student": key[0], "chapter": key[1], "score": 0.0, "points": 0.0, "exercises passed": 0,
                    "problems": count, "collides with": collisions.get(key[0], "")}
              for key, count in problems.items()}
    for (student, chapter, _), row in best.items():
        entry = summed[(student, chapter)]
        entry["score"] += row.score
        entry["points"] += row.points
        entry["exercises passed"] += int(bool(row.points) and row.score == row.points)
    return list(summed.values())


def name_collisions(students: Sequence[str]) -> dict[str, str]:
    """For each student whose name a table shows alike another's (:func:`~evalkit.course.intake.student_key`:
    a decomposed ``josé`` beside a composed one, ``Alice`` beside ``alice``), the names it collides with, each
    quoted with its letters beyond ASCII named, so the two lines of a total can be told apart.

    >>> name_collisions(["jos\u00e9", "jose\u0301", "bob"])["jose\u0301"]
    "'jos\u00e9' (U+00E9 LATIN SMALL LETTER E WITH ACUTE)"
    """
    by_key: dict[str, list[str]] = defaultdict(list)
    for student in dict.fromkeys(students):
        by_key[student_key(student)].append(student)
    return {student: "; ".join(shown_name(other) for other in names if other != student)
            for names in by_key.values() if len(names) > 1 for student in names}


def write_tables(rows: Sequence, out: Path, *, isolation: str = "") -> tuple[Path, Path, Path]:
    """The three tables, each written atomically into ``out``, a run's texts masked (:func:`redacted_rows`);
    ``isolation`` (how the notebooks ran) is stated on the page."""
    from evalkit.course.grade import COLUMNS

    grades, total_path, page = out / "grades.csv", out / "totals.csv", out / "grades.html"
    rows = redacted_rows(rows)
    rows = [replace(row, **{name: encodable(value) for name, value in asdict(row).items() if isinstance(value, str)})
            for row in rows]  # a name that is not UTF-8 can reach any text field, the reasons included
    summary = totals(rows)
    write_atomic(grades, _csv(COLUMNS, [asdict(row) for row in rows]))
    write_atomic(total_path, _csv(["student", "chapter", "score", "points", "exercises passed", "problems",
                                   "collides with"], summary))
    write_atomic(page, _page(rows, summary, isolation))
    return grades, total_path, page


def _csv(columns: Sequence[str], records: Sequence[dict]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(columns))
    writer.writeheader()
    writer.writerows({key: spreadsheet_safe(value) for key, value in record.items()} for record in records)
    return buffer.getvalue()


_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem; color: #1f2328; }
table { border-collapse: collapse; margin-bottom: 2rem; }
th, td { border: 1px solid #d0d7de; padding: 0.3rem 0.6rem; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
td.full { background: #dafbe1; } td.zero { background: #ffebe9; } td.problem { background: #fff8c5; }
td.reason { max-width: 48rem; font-size: 0.9em; }
"""


def _page(rows: Sequence, summary: list[dict], isolation: str = "") -> str:
    escape = html.escape
    exercises = list(dict.fromkeys(row.exercise for row in rows if row.exercise))
    by_student: dict[str, dict[str, object]] = defaultdict(dict)
    for row in rows:
        if row.exercise:
            by_student[row.student][row.exercise] = row
    head = "".join(f"<th>{escape(label)}</th>" for label in exercises)
    collisions = {entry["student"]: entry["collides with"] for entry in summary}  # as the totals say
    matrix = []
    for student in dict.fromkeys(row.student for row in rows):
        cells = []
        for label in exercises:
            row = by_student[student].get(label)
            if row is None:
                cells.append("<td></td>")
                continue
            kind = "full" if row.score == row.points and row.points else "zero"
            if row.status not in ("graded", "cell error"):
                kind = "problem"
            cells.append(f'<td class="{kind}" title="{escape(row.reason)}">{row.score:g} / {row.points:g}</td>')
        total = [t for t in summary if t["student"] == student]
        score, points = sum(t["score"] for t in total), sum(t["points"] for t in total)
        shown = escape(student)
        if collisions.get(student):  # a name drawn like another's is shown with its letters named
            shown = (f'{escape(shown_name(student))}<br><small>collides with '
                     f'{escape(collisions[student])}</small>')
        matrix.append(f"<tr><th>{shown}</th>{''.join(cells)}<td>{score:g} / {points:g}</td></tr>")
    detail = "".join(
        f"<tr><td>{escape(row.student)}</td><td>{escape(row.submission)}</td><td>{escape(row.exercise)}</td>"
        f"<td>{row.score:g} / {row.points:g}</td><td>{escape(row.status)}</td><td>{escape(row.public)}</td>"
        f"<td>{escape(row.hidden)}</td><td class=\"reason\">{escape(row.reason)}</td></tr>" for row in rows)
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Grades</title>"
            f"<style>{_STYLE}</style></head><body>\n<h1>Grades</h1>\n"
            f"<p>{len(set(r.student for r in rows))} students, {len(rows)} rows. A cell's tooltip holds its reason; "
            f"every row is listed below.{' The notebooks ran in: ' + escape(isolation) + '.' if isolation else ''}</p>\n"
            f"<table><tr><th>student</th>{head}<th>total</th></tr>{''.join(matrix)}</table>\n"
            f"<h2>Every exercise</h2>\n<table><tr><th>student</th><th>submission</th><th>exercise</th>"
            f"<th>score</th><th>status</th><th>public</th><th>hidden</th><th>reason</th></tr>{detail}</table>\n"
            "</body></html>\n")
