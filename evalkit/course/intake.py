"""Reading a class folder as hostile input: every student gets an entry, no link is followed, every file is
copied into the grader's private folder before anything runs.

A *student* is a folder directly under the class folder (``alice/...``) or a file directly inside it
(``alice.ipynb``, named by its stem). Under a student's folder every regular file is a submission; hidden names
and checkpoint folders are skipped. What cannot be read safely is an entry with a status instead of a copy:
``refused: hidden name`` (an entry of the class folder whose name starts with ``.``, such as ``.sneaky/``: a file
manager does not show it, so it is never read, and never left out unsaid; ``.ipynb_checkpoints`` folders are
skipped), ``refused: tool folder`` (``__MACOSX`` or ``__pycache__`` in the class folder, not read; in a
student's folder they are skipped), ``refused: symlink`` (a link, its target never opened), ``refused:
not a regular file`` (a FIFO, a device), ``refused: too large`` (over :data:`MAX_SUBMISSION_BYTES`), ``refused:
too much in all`` (past :data:`MAX_STUDENT_BYTES` of one student's files, each counted by its size), ``refused:
too deep`` (a folder nested past ``_MAX_DEPTH``), ``refused: too many files`` (one row for all past ``_MAX_FILES``
rows of a student, refused entries counted), ``no submission`` (a student folder holding no file). Entries
that name the same student (``bob/`` beside ``bob.txt``, ``bob.ipynb`` beside ``bob.md``) are never merged:
each is graded under a name of its own (a file under its file name) and every row of each says which entries it
collides with. Names are compared as a reader of the tables sees them (:func:`student_key`):
``alice``, ``Alice``, ``alice `` and ``аlice`` (its first letter Cyrillic) print as one student, so each is
graded and flagged, naming the others: a classmate's folder named to pass for another's costs nobody a grade,
and a student's second hand-in is shown, not hidden. What a run leaves behind is read the same way (:func:`read_capped`,
:func:`read_json`, :func:`tail`): plain files only, capped.
"""
from __future__ import annotations

import errno
import json
import os
import stat
import unicodedata
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

__all__ = ["Entry", "intake", "student_key", "shown_name", "read_capped", "read_json", "tail", "last_line", "MAX_SUBMISSION_BYTES",
           "MAX_STUDENT_BYTES"]

MAX_SUBMISSION_BYTES = 50 * 1024 * 1024  # a chapter notebook with its outputs is a few MB
MAX_STUDENT_BYTES = 200 * 1024 * 1024    # all of one student's copies: seven chapters of a few MB each
_CHECKPOINTS = ".ipynb_checkpoints"  # Jupyter's copies of the notebooks beside it: skipped wherever it stands
_TOOL_FOLDERS = ("__MACOSX", "__pycache__")  # an archiver's and Python's: skipped in a student's folder
_SKIPPED = (_CHECKPOINTS, *_TOOL_FOLDERS)
_MAX_FILES = 200  # rows per student (files copied and entries refused): more is no hand-in
_MAX_DEPTH = 8    # folders per student: a hand-in is one or two deep


@dataclass
class _Allowance:
    """What one student's folder may still add: rows (a file copied or an entry refused) and bytes of copies,
    counted by each file's size (a sparse file counts its holes)."""

    rows: int
    bytes: int
    stopped: bool = False    # the row "refused: too many files" was written


@dataclass(frozen=True)
class Entry:
    """One row's source: a student's file copied to ``copy``, or the reason it was not (``refused``)."""

    student: str
    submission: str          # the path inside the class folder, as the teacher sees it
    copy: Path | None        # the grader's private copy; None when refused
    refused: str = ""        # the status of a file that was not copied
    reason: str = ""
    note: str = ""           # said on each of its rows: the names it collides with

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
    root = os.open(folder, _FOLDER_FLAGS)
    try:
        return _intake(folder, root, copies)
    finally:
        os.close(root)


# Every folder is opened by its name inside its open parent, never followed if it is a link: a folder swapped for a
# link while the class is read (to a classmate's folder, to the key) is refused, not entered.
_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW


def _intake(folder: Path, root: int, copies: Path) -> list[Entry]:
    """:func:`intake`, the class folder open as ``root``."""
    listing = _listing(root, folder)
    entries: list[Entry] = [_hidden_student(name, mode) for name, _, mode in listing  # a row each, never read
                            if (name.startswith(".") or name in _TOOL_FOLDERS) and name != _CHECKPOINTS]
    visible = [(name, path, mode) for name, path, mode in listing if not _hidden(name)]
    named: dict[str, list[tuple[str, str]]] = {}
    for name, _, mode in visible:  # by the name the tables show: two names that read alike are one student there
        student = _student(name, mode)
        named.setdefault(student_key(student), []).append((name + ("/" if stat.S_ISDIR(mode) else ""), student))
    for name, path, mode in visible:
        student = _student(name, mode)
        group = named[student_key(student)]
        note = ""
        if len(group) > 1:  # bob/ and bob.ipynb, alice/ and Alice/: each graded under a name of its own, flagged
            note = _ambiguous(group, name + ("/" if stat.S_ISDIR(mode) else ""))
            if not stat.S_ISDIR(mode) and sum(1 for _, other in group if printable(other) == printable(student)) > 1:
                student = name  # bob/ beside bob.txt: the file's row is "bob.txt", never merged with the folder's
        start = len(entries)
        if stat.S_ISDIR(mode):
            _walk_folder(folder, root, path, name, copies, entries, _Allowance(_MAX_FILES, MAX_STUDENT_BYTES), 1)
            if len(entries) == start:
                entries.append(Entry(name, name, None, "no submission", "the student's folder holds no file"))
        else:
            entries.append(_copy(folder, root, path, student, copies, len(entries),
                                 _Allowance(_MAX_FILES, MAX_STUDENT_BYTES)))
        if note:
            entries[start:] = [replace(entry, note=note) for entry in entries[start:]]
    return entries


def _student(name: str, mode: int) -> str:
    """The student an entry of the class folder belongs to: a folder's name, a file's stem."""
    return name if stat.S_ISDIR(mode) else Path(name).stem


_LOOKALIKES = str.maketrans({
    # Cyrillic letters drawn like Latin ones, capital and small
    "\u0410": "A", "\u0412": "B", "\u0415": "E", "\u041a": "K", "\u041c": "M", "\u041d": "H", "\u041e": "O",
    "\u0420": "P", "\u0421": "C", "\u0422": "T", "\u0425": "X", "\u0405": "S", "\u0406": "I", "\u0408": "J",
    "\u0430": "a", "\u0435": "e", "\u043e": "o", "\u0440": "p", "\u0441": "c", "\u0443": "y", "\u0445": "x",
    "\u0455": "s", "\u0456": "i", "\u0458": "j", "\u0501": "d", "\u051b": "q", "\u051d": "w", "\u04bb": "h",
    "\u04cf": "l",
    # Greek letters drawn like Latin ones, capital and small
    "\u0391": "A", "\u0392": "B", "\u0395": "E", "\u0396": "Z", "\u0397": "H", "\u0399": "I", "\u039a": "K",
    "\u039c": "M", "\u039d": "N", "\u039f": "O", "\u03a1": "P", "\u03a4": "T", "\u03a5": "Y", "\u03a7": "X",
    "\u03bf": "o", "\u03b1": "a", "\u03b9": "i", "\u03ba": "k", "\u03bd": "v", "\u03c1": "p", "\u03c5": "u",
    "\u03c7": "x", "\u03f2": "c",
    # Latin IPA and Armenian letters drawn like plain Latin ones
    "\u0251": "a", "\u0261": "g", "\u0269": "i", "\u026a": "i", "\u0262": "g", "\u0280": "r", "\u028f": "y",
    "\u0585": "o", "\u0578": "n", "\u057c": "n", "\u0570": "h", "\u0566": "q", "\u0575": "j", "\u0581": "g",
})
"""The common Cyrillic and Greek letters that print like Latin ones (NFKC keeps them apart: they are letters of
their own scripts), mapped to the Latin letter they pass for. A short list, not Unicode's confusables table: it
catches the look-alike a class folder meets (``\u0430lice`` for ``alice``), not every one a font can draw."""


def student_key(name: str) -> str:
    """The student a name reads as in the tables: NFKC-normalised (full-width and ligature forms folded), the
    common Cyrillic and Greek look-alikes read as Latin (:data:`_LOOKALIKES`), case folded, characters that draw
    nothing (zero-width spaces, variation selectors, Hangul fillers: :func:`_draws_nothing`) dropped, spaces at
    either end removed and runs of spaces inside read as one.
    Two names with one key are one student to a reader, so neither is graded as a student of its own.

    >>> {student_key(name) for name in ("alice", "Alice", " alice ", "\u0430lice", "\uff21lice", "ali\u200bce",
    ...                                 "ali\u034fce", "alice\ufe0f", "alice\u3164", "alice\u2800")}
    {'alice'}
    >>> student_key("Bob  Stone"), student_key("b\u00f6b") == student_key("bob")
    ('bob stone', False)
    """
    text = unicodedata.normalize("NFKC", printable(name)).translate(_LOOKALIKES).casefold().translate(_LOOKALIKES)
    return " ".join("".join(c for c in text if not _draws_nothing(c)).split())


#: Code points a font draws as nothing or as a blank beyond the format characters (category Cf): Unicode's
#: default-ignorable ones (the grapheme joiner, Hangul fillers, Khmer inherent vowels, Mongolian and other
#: variation selectors, musical-symbol formatting, the tag plane) and the blank Braille pattern.
_DRAWN_AS_NOTHING = ((0x034F, 0x034F), (0x115F, 0x1160), (0x17B4, 0x17B5), (0x180B, 0x180F), (0x2800, 0x2800),
                     (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFFA0, 0xFFA0), (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF))


def _draws_nothing(character: str) -> bool:
    """Whether a name's character shows as nothing (or a blank) however a table draws it.

    >>> [_draws_nothing(c) for c in ("a", "\u200b", "\u034f", "\ufe0f", "\U000e0100", "\u3164", "\u2800", "e\u0301"[1])]
    [False, True, True, True, True, True, True, False]
    """
    code = ord(character)
    return unicodedata.category(character) == "Cf" or any(low <= code <= high for low, high in _DRAWN_AS_NOTHING)


def shown_name(name: str) -> str:
    """A name quoted, its non-ASCII letters named, so that names a font draws alike are told apart in a table.

    >>> shown_name("\u0430lice/")
    "'\u0430lice/' (U+0430 CYRILLIC SMALL LETTER A)"
    """
    odd = list(dict.fromkeys(c for c in printable(name) if not c.isascii()))
    named = ", ".join(f"U+{ord(c):04X} {unicodedata.name(c, 'unnamed')}" for c in odd[:3])
    return repr(printable(name)) + (f" ({named}{', ...' if len(odd) > 3 else ''})" if odd else "")


def _ambiguous(names: list[tuple[str, str]], name: str) -> str:
    """What the rows of the entry ``name`` say: the entries of ``names`` ((entry, its student)) read as one
    student in a table, so each is graded under the name it has (a file beside a folder of its stem under its
    file name) and flagged for the teacher; none is refused, so a classmate's look-alike folder cannot cost a
    student a grade."""
    others = [entry for entry, _ in names if entry != name]
    if len({printable(student) for _, student in names}) == 1:  # bob/ and bob.txt: one name, twice
        listed = [printable(entry) for entry in others[:5]] + ([f"{len(others) - 5} more"] if len(others) > 5 else [])
        return (f"collides with {', '.join(listed[:-1]) + ' and ' if len(listed) > 1 else ''}{listed[-1]}: "
                f"they name the student {printable(names[0][1])!r} alike, so each is graded under its own entry's "
                "name; check which is whose")
    listed = [shown_name(entry) for entry in others[:5]] + ([f"{len(others) - 5} more"] if len(others) > 5 else [])
    return (f"{shown_name(name)} collides with {', '.join(listed[:-1]) + ' and ' if len(listed) > 1 else ''}"
            f"{listed[-1]}: the names differ only in case, spaces or look-alike letters, so a table shows them "
            f"alike ({student_key(names[0][1])!r}); each is graded under the name it has: check which is whose")


def _hidden(name: str) -> bool:
    return name.startswith(".") or name in _SKIPPED


def _listing(opened: int, directory: Path) -> list[tuple[str, Path, int]]:
    """(name, path, mode) of each entry of ``directory`` (open as ``opened``), sorted by name; links are not
    followed. An entry gone before its mode is read is left out."""
    with os.scandir(opened) as listing:
        names = sorted(entry.name for entry in listing)
    found = []
    for name in names:
        try:
            found.append((name, directory / name, os.stat(name, dir_fd=opened, follow_symlinks=False).st_mode))
        except FileNotFoundError:
            continue
    return found


def _visible(opened: int, directory: Path) -> list[tuple[str, Path, int]]:
    """The entries of ``directory`` (:func:`_listing`) a grader reads: no hidden name, no checkpoint folder."""
    return [(name, path, mode) for name, path, mode in _listing(opened, directory) if not _hidden(name)]


def _hidden_student(name: str, mode: int) -> Entry:
    """The row of an entry of the class folder whose name starts with ``.``, or that a tool leaves
    (``__MACOSX``, ``__pycache__``): refused, never read, and never dropped unseen (a file manager hides the
    first, and a hand-in under either is a mistake or meant not to be noticed)."""
    kind = "folder" if stat.S_ISDIR(mode) else "file"
    if name in _TOOL_FOLDERS:
        return Entry(_student(name, mode), name, None, "refused: tool folder",
                     f"the {kind} {printable(name)!r} has the name of a folder a tool leaves (an archiver's or "
                     "Python's) and is not read: rename it to have it graded")
    return Entry(_student(name, mode), name, None, "refused: hidden name",
                 f"the {kind} {printable(name)!r} has a hidden name (it starts with '.') and is not read: rename it "
                 "without the leading dot to have it graded")


def _walk_folder(folder: Path, parent: int, directory: Path, student: str, copies: Path, entries: list[Entry],
                 allowance: _Allowance, depth: int) -> None:
    """:func:`_walk` of the folder ``directory``, opened by its name inside ``parent``: one that has become a link
    (or no folder) since it was listed gets a refused row instead."""
    try:
        opened = os.open(directory.name, _FOLDER_FLAGS, dir_fd=parent)
    except OSError as error:
        link = error.errno in (errno.ELOOP, errno.ENOTDIR)
        entries.append(Entry(student, str(directory.relative_to(folder)), None,
                             "refused: symlink" if link else "refused: unreadable",
                             "the folder was replaced by a link while the class was read; it is not entered" if link
                             else f"the folder could not be opened ({type(error).__name__})"))
        allowance.rows -= 1
        return
    try:
        _walk(folder, opened, directory, student, copies, entries, allowance, depth)
    finally:
        os.close(opened)


def _walk(folder: Path, opened: int, directory: Path, student: str, copies: Path, entries: list[Entry],
          allowance: _Allowance, depth: int = 1) -> None:
    """Each visible entry under ``directory`` (open as ``opened``) as a row of ``entries``: a file copied
    (:func:`_copy`) or an entry refused. A student's rows stop at :data:`_MAX_FILES` (whatever they are: a folder
    past the depth limit costs a row as a file does), then one row "refused: too many files" says the rest are not
    read."""
    for name, path, mode in _visible(opened, directory):
        if allowance.rows <= 0:
            if not allowance.stopped:
                entries.append(Entry(student, str(path.relative_to(folder)), None, "refused: too many files",
                                     f"more than {_MAX_FILES} files or folders in the student's folder; the rest "
                                     "are not read"))
                allowance.stopped = True
            return
        if stat.S_ISDIR(mode) and depth < _MAX_DEPTH:
            _walk_folder(folder, opened, path, student, copies, entries, allowance, depth + 1)
            continue
        if stat.S_ISDIR(mode):
            entries.append(Entry(student, str(path.relative_to(folder)), None, "refused: too deep",
                                 f"folders nested more than {_MAX_DEPTH} deep are not read"))
        else:
            entries.append(_copy(folder, opened, path, student, copies, len(entries), allowance))
        allowance.rows -= 1


def _copy(folder: Path, opened: int, path: Path, student: str, copies: Path, number: int,
          allowance: _Allowance) -> Entry:
    """``path`` (an entry of the folder open as ``opened``) copied without following a link (the link's target is
    never opened), its size taken from ``allowance.bytes``: a file larger than what is left of the student's bytes
    is refused."""
    relative = str(path.relative_to(folder))
    try:
        mode = os.stat(path.name, dir_fd=opened, follow_symlinks=False).st_mode
    except OSError as error:
        return Entry(student, relative, None, "refused: unreadable", f"the file could not be read "
                                                                     f"({type(error).__name__})")
    if stat.S_ISLNK(mode):
        return Entry(student, relative, None, "refused: symlink",
                     "the submission is a symbolic link; hand in the notebook file itself")
    if not stat.S_ISREG(mode):
        return Entry(student, relative, None, "refused: not a regular file", "the submission is not a plain file")
    try:
        source = os.open(path.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=opened)
    except OSError as error:
        if error.errno == errno.ELOOP:  # replaced by a link since it was listed
            return Entry(student, relative, None, "refused: symlink",
                         "the submission is a symbolic link; hand in the notebook file itself")
        return Entry(student, relative, None, "refused: unreadable", f"the file could not be opened "
                                                                     f"({type(error).__name__})")
    try:
        info = os.fstat(source)
        if not stat.S_ISREG(info.st_mode):
            return Entry(student, relative, None, "refused: not a regular file", "the submission is not a plain file")
        if info.st_size > MAX_SUBMISSION_BYTES:
            return Entry(student, relative, None, "refused: too large",
                         f"the file is over {MAX_SUBMISSION_BYTES // 2**20} MB")
        if info.st_size > allowance.bytes:
            return _over_allowance(student, relative)
        limit = min(MAX_SUBMISSION_BYTES, allowance.bytes)
        target = copies / f"{number:04d}"
        target.mkdir(mode=0o700)
        copy = target / Path(relative).name
        with os.fdopen(os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as handle:
            remaining = limit + 1
            while remaining > 0:
                chunk = os.read(source, min(remaining, 1 << 20))
                if not chunk:
                    break
                handle.write(chunk)
                remaining -= len(chunk)
        if remaining <= 0:  # it grew while it was copied
            copy.unlink()
            if limit < MAX_SUBMISSION_BYTES:
                return _over_allowance(student, relative)
            return Entry(student, relative, None, "refused: too large",
                         f"the file is over {MAX_SUBMISSION_BYTES // 2**20} MB")
        allowance.bytes -= limit + 1 - remaining
        return Entry(student, relative, copy)
    finally:
        os.close(source)


def _over_allowance(student: str, relative: str) -> Entry:
    """The row of a file that would take the student's copies past :data:`MAX_STUDENT_BYTES`."""
    return Entry(student, relative, None, "refused: too much in all",
                 f"the student's files are over {MAX_STUDENT_BYTES // 2**20} MB in all (each counted by its size); "
                 "this one is not read")


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
