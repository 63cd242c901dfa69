"""Reading a class folder as hostile input: every student gets an entry, no link is followed, every file is
copied into the grader's private folder before anything runs.

A *student* is a folder directly under the class folder (``alice/...``) or a file directly inside it
(``alice.ipynb``, named by its stem). Under a student's folder every regular file is a submission; hidden
names and checkpoint folders are skipped. What cannot be read safely is an entry with a status instead of a
copy: ``refused: symlink`` (a link, its target never opened), ``refused: not a regular file`` (a FIFO, a
device), ``refused: too large``, ``no submission`` (a student folder holding no file) and ``refused: ambiguous
student`` (``bob/`` beside ``bob.txt``, or ``bob.ipynb`` beside ``bob.md``: entries that name the same student
are never merged, and none of them is read). What a run leaves behind is read the same way
(:func:`read_capped`, :func:`read_json`, :func:`tail`): plain files only, capped.
"""
from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Entry", "intake", "read_capped", "read_json", "tail", "last_line", "MAX_SUBMISSION_BYTES"]

MAX_SUBMISSION_BYTES = 50 * 1024 * 1024  # a chapter notebook with its outputs is a few MB
_SKIPPED = (".ipynb_checkpoints", "__MACOSX", "__pycache__")
_MAX_FILES = 200  # per student: more is no hand-in
_MAX_DEPTH = 8    # folders per student: a hand-in is one or two deep


@dataclass(frozen=True)
class Entry:
    """One row's source: a student's file copied to ``copy``, or the reason it was not (``refused``)."""

    student: str
    submission: str          # the path inside the class folder, as the teacher sees it
    copy: Path | None        # the grader's private copy; None when refused
    refused: str = ""        # the status of a file that was not copied
    reason: str = ""

    def __post_init__(self):
        # A file name need not be valid UTF-8: the tables show its undecodable bytes escaped, never fail on them.
        object.__setattr__(self, "student", printable(self.student))
        object.__setattr__(self, "submission", printable(self.submission))


def printable(name: str) -> str:
    """A file name as text a table can hold: bytes that are not UTF-8 (kept by Python as surrogates) escaped as
    ``\\xNN`` and a backslash doubled, so two different names never print alike.

    >>> printable("bob"), printable("02" + chr(0xDCFF) + ".ipynb") == "02" + chr(92) + "xff.ipynb"
    ('bob', True)
    >>> printable(chr(92) + "xff") == printable(chr(0xDCFF))
    False
    """
    return "".join(chr(92) * 2 if c == chr(92) else f"{chr(92)}x{ord(c) - 0xDC00:02x}" if 0xDC80 <= ord(c) <= 0xDCFF
                   else f"{chr(92)}u{ord(c):04x}" if 0xD800 <= ord(c) <= 0xDFFF else c for c in name)


def intake(folder: Path, copies: Path) -> list[Entry]:
    """Every student of ``folder`` (a real folder, not a link), each file copied under ``copies``."""
    info = os.lstat(folder)
    if stat.S_ISLNK(info.st_mode):
        raise ValueError(f"{folder}: the folder of submissions is a symbolic link; give its real path")
    entries: list[Entry] = []
    visible = _visible(folder)
    named: dict[str, list[str]] = {}
    for name, _, mode in visible:  # by the name the tables show: two names that print alike are one student there
        named.setdefault(printable(_student(name, mode)), []).append(name + ("/" if stat.S_ISDIR(mode) else ""))
    for name, path, mode in visible:
        student = _student(name, mode)
        if len(named[printable(student)]) > 1:  # bob/ and bob.ipynb: which is bob's is not for the grader to guess
            entries.append(Entry(student, name, None, "refused: ambiguous student",
                                 _ambiguous(named[printable(student)], student)))
            continue
        if stat.S_ISDIR(mode):
            found = _walk(folder, path, name, copies, entries)
            if not found:
                entries.append(Entry(name, name, None, "no submission", "the student's folder holds no file"))
        else:
            entries.append(_copy(folder, path, Path(name).stem, copies, len(entries)))
    return entries


def _student(name: str, mode: int) -> str:
    """The student an entry of the class folder belongs to: a folder's name, a file's stem."""
    return name if stat.S_ISDIR(mode) else Path(name).stem


def _ambiguous(names: list[str], student: str) -> str:
    names = [printable(name) for name in names[:5]] + ([f"{len(names) - 5} more"] if len(names) > 5 else [])
    listed = ", ".join(names[:-1]) + " and " + names[-1]
    return (f"{listed} {'both' if len(names) == 2 else 'all'} name the student {printable(student)!r}, so none of "
            "them is graded: hand in one folder or one file per student")


def _hidden(name: str) -> bool:
    return name.startswith(".") or name in _SKIPPED


def _visible(directory: Path) -> list[tuple[str, Path, int]]:
    """(name, path, mode) of each entry of ``directory`` a grader reads, sorted by name; links are not followed."""
    with os.scandir(directory) as listing:
        names = sorted(entry.name for entry in listing)
    return [(name, directory / name, os.lstat(directory / name).st_mode) for name in names if not _hidden(name)]


def _walk(folder: Path, directory: Path, student: str, copies: Path, entries: list[Entry], depth: int = 1) -> int:
    found = 0
    for name, path, mode in _visible(directory):
        if stat.S_ISDIR(mode):
            if depth >= _MAX_DEPTH:
                entries.append(Entry(student, str(path.relative_to(folder)), None, "refused: too deep",
                                     f"folders nested more than {_MAX_DEPTH} deep are not read"))
                found += 1
                continue
            found += _walk(folder, path, student, copies, entries, depth + 1)
            continue
        if found >= _MAX_FILES:
            entries.append(Entry(student, str(path.relative_to(folder)), None, "refused: too many files",
                                 f"more than {_MAX_FILES} files in the student's folder; the rest are not read"))
            return found + 1
        entries.append(_copy(folder, path, student, copies, len(entries)))
        found += 1
    return found


def _copy(folder: Path, path: Path, student: str, copies: Path, number: int) -> Entry:
    """``path`` copied without following a link (the link's target is never opened)."""
    relative = str(path.relative_to(folder))
    mode = os.lstat(path).st_mode
    if stat.S_ISLNK(mode):
        return Entry(student, relative, None, "refused: symlink",
                     "the submission is a symbolic link; hand in the notebook file itself")
    if not stat.S_ISREG(mode):
        return Entry(student, relative, None, "refused: not a regular file", "the submission is not a plain file")
    try:
        source = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as error:
        return Entry(student, relative, None, "refused: unreadable", f"the file could not be opened "
                                                                     f"({type(error).__name__})")
    try:
        info = os.fstat(source)
        if not stat.S_ISREG(info.st_mode):
            return Entry(student, relative, None, "refused: not a regular file", "the submission is not a plain file")
        if info.st_size > MAX_SUBMISSION_BYTES:
            return Entry(student, relative, None, "refused: too large",
                         f"the file is over {MAX_SUBMISSION_BYTES // 2**20} MB")
        target = copies / f"{number:04d}"
        target.mkdir(mode=0o700)
        copy = target / Path(relative).name
        with os.fdopen(os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as handle:
            remaining = MAX_SUBMISSION_BYTES + 1
            while remaining > 0:
                chunk = os.read(source, min(remaining, 1 << 20))
                if not chunk:
                    break
                handle.write(chunk)
                remaining -= len(chunk)
        if remaining <= 0:
            copy.unlink()
            return Entry(student, relative, None, "refused: too large",
                         f"the file is over {MAX_SUBMISSION_BYTES // 2**20} MB")
        return Entry(student, relative, copy)
    finally:
        os.close(source)


# --- what a run left: plain files only, capped ---------------------------------------------------------

def read_capped(path: Path, limit: int) -> bytes | None:
    """The bytes of ``path`` when it is a plain file (not a link) of at most ``limit`` bytes, else None."""
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            return None
        data = b""
        while len(data) <= limit:
            chunk = os.read(handle, min(1 << 20, limit + 1 - len(data)))
            if not chunk:
                break
            data += chunk
        return data if len(data) <= limit else None
    finally:
        os.close(handle)


def read_json(path: Path, limit: int = 2**20) -> Any:
    """``path`` parsed as JSON (as :func:`read_capped` reads it), None when it cannot be."""
    data = read_capped(path, limit)
    if data is None:
        return None
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return None


def tail(path: Path, limit: int) -> str:
    """The last ``limit`` bytes of the plain file ``path``, as text ('' when it is not one)."""
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return ""
    try:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            return ""
        size = os.fstat(handle).st_size
        os.lseek(handle, max(0, size - limit), os.SEEK_SET)
        text = os.read(handle, limit).decode(errors="replace").strip()
    finally:
        os.close(handle)
    return text


def last_line(path: Path) -> str:
    lines = tail(path, 2000).splitlines()
    return " ".join(lines[-1].split())[:200] if lines else ""
