"""What a unit leaves in its folder, scrubbed of credentials: every file (an executed notebook shows its parameters
cell; a command may write logs, tables and binaries there) and every name.

First the credentials written in a named field in any of the unit's files (``password = X`` in a config, a
``SecretAccessKey`` in a JSON file) are gathered, so each is masked in every file, not only the one that names it. A
text (a file that decodes whole, with almost no control characters, as UTF-8, UTF-16 or UTF-32 by a byte-order mark
or by its zero bytes, or Latin-1 with a stray byte) goes through the redaction (:func:`evalkit.models.redact`) up to
16 MB. Every other file up to 16 MB — a checkpoint, a pickle, a numpy array — and every text that is not plain UTF-8
has its strings (:mod:`evalkit.grid.binary_strings`) masked in place. Every file, of any size, then has each
secret's written forms and pieces overwritten in place (:mod:`evalkit.grid.byte_forms`), so a binary keeps its
length and its format's offsets. A name, a link's target or an extended attribute holding a secret is renamed, re-
pointed or removed. Links are not followed, a file with other hard links is first made a copy of its own (its holes
kept; one over 16 MB only when it holds something to mask), and a folder or file mounted there from elsewhere is not
entered (it is reported), so no file outside the folder is ever changed; a file that cannot be scrubbed, even made
writable and freed of its immutable flag, is removed (it may hold a secret), and one that cannot be removed either
is reported.
"""
from __future__ import annotations

import csv
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from evalkit.models import redact
from evalkit.grid.byte_forms import TEXT_BOMS, byte_forms, copy_data_parts, holds_secret, mask_bytes_in_place
from evalkit.grid.embedded_streams import scrub_embedded_streams
from evalkit.grid.compressed import (HEAD_BYTES, MAX_NESTING, NotReadWhole, compression_of, inner_contents,
                                     restore_tar_checksums, restore_zip_crcs, scrub_inside, tar_header_offsets,
                                     zip_stored_entries)
from evalkit.grid.binary_strings import SHORTEST_MASKED, mask_strings_in_place, named_in_binary, string_runs
from evalkit.grid.printed_secrets import _TERMINAL_CODE, output_secrets
from evalkit.grid.named_values import WAL_MAGIC, file_named_secret, named_in_array, named_in_pickle, named_in_sqlite, database_beside, database_with_log

__all__ = ["Scrubbed", "scrub_folder"]

# A larger file is masked by the secrets' written forms and pieces only: the redaction reads about 0.3 MB of log
# lines a second, and a unit's scrub is not bounded by its time limit
_TEXT_BYTES = 16 * 2**20
_TEXT_BYTE_VALUES = bytes(range(9, 14)) + bytes(range(32, 256))  # what a text's bytes are, control codes aside
_CONTROL = re.compile("[\x00-\x08\x0e-\x1f\x7f-\x9f\ufffe\uffff]")


@dataclass(frozen=True)
class Scrubbed:
    """What a scrub learned and what it could not do: the credentials named in the folder's files, and the files
    it could neither scrub nor remove (relative to the folder)."""

    learned: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()


def scrub_folder(folder: Path, secrets: list[str]) -> Scrubbed:
    """Mask ``secrets``, the credentials named in any file under ``folder``, and those the redaction finds, in
    every file there and in every name (deepest first, so a folder is renamed after what it holds). A folder that
    is itself a link is not entered; folders nested deeper than :data:`MAX_DEPTH` are removed unread."""
    if folder.is_symlink() or not folder.is_dir():
        return Scrubbed()
    paths, kept = _entries(folder)
    learned = _named_in_files(paths, secrets)
    known = sorted({*secrets, *learned}, key=len, reverse=True)
    for path in paths:
        try:
            if path.is_symlink():
                _repoint_if_secret(path, known)
            elif path.is_file() and path.stat().st_size > 0:
                try:
                    if not _scrubbed_or_removed(path, known):
                        kept.append(str(path.relative_to(folder)))
                except NotReadWhole as why:  # its bytes are scrubbed; what it holds is not known clean: said
                    kept.append(f"{path.relative_to(folder)} ({why})")
                except _DAMAGED_FILE_ERRORS as error:
                    # a damaged file no reader expected: said, and every other file of the folder still scrubbed
                    kept.append(f"{path.relative_to(folder)} (it could not be scrubbed: {type(error).__name__})")
            _drop_secret_attributes(path, known)  # after the scrub, which frees an immutable file
            _rename_if_secret(path, known)
        except OSError:  # an immutable folder around it, say: reported, and the unit fails with its name
            kept.append(redact(str(path.relative_to(folder)), known))
    _drop_secret_attributes(folder, known)
    return Scrubbed(tuple(learned), tuple(redact(name, known) for name in kept))


# What a damaged file no reader expected may raise out of a file's scrub (its other errors, OSError, are met by
# making it writable or removing it): the file is named, and every other file of the folder still scrubbed
_DAMAGED_FILE_ERRORS = (ValueError, ArithmeticError, EOFError, RuntimeError, NotImplementedError, LookupError,
                        TypeError, AttributeError, csv.Error)

MAX_DEPTH = 64
"""How deep a unit's folder may nest folders: deeper ones (a path past the system's length limit cannot even be
named) are removed whole, unread, and reported."""


def _entries(folder: Path) -> tuple[list[Path], list[str]]:
    """Every entry under ``folder``, deepest first, links not followed; and what could not be read, or was nested
    too deep and is removed (each named, relative to the folder)."""
    entries: list[Path] = []
    problems: list[str] = []
    unreadable: list[OSError] = []
    mounted = _mount_points(folder)
    for here, folders, files in os.walk(folder, onerror=unreadable.append):
        depth = len(Path(here).relative_to(folder).parts)
        inside = [name for name in (*folders, *files) if Path(here, name).relative_to(folder) in mounted] \
            if mounted else []
        for name in inside:
            problems.append(f"{Path(here, name).relative_to(folder)} (another file system mounted there: not entered, "
                            "not changed)")
            folders[:] = [other for other in folders if other != name]
            files = [other for other in files if other != name]
        if depth >= MAX_DEPTH:
            for name in folders:
                try:
                    _remove_tree(Path(here) / name)
                    problems.append(f"{Path(here, name).relative_to(folder)} (nested past {MAX_DEPTH} levels: removed)")
                except OSError:
                    problems.append(f"{Path(here, name).relative_to(folder)} (nested past {MAX_DEPTH} levels)")
            folders[:] = []
        entries += [Path(here) / name for name in (*folders, *files)]
    problems += [f"{error.filename} (unreadable: {error.strerror})" for error in unreadable]
    return sorted(entries, key=lambda p: len(p.parts), reverse=True), problems


def _mount_points(folder: Path) -> set[Path]:
    """The mount points below ``folder`` (relative to it), from the kernel's table of this process's mounts: a
    command that mounted a folder from elsewhere into its unit's (``mount --bind``) must not have the scrub change
    that folder's files. None where the table cannot be read.

    >>> _mount_points(Path("/proc")) == set() or all(not point.is_absolute() for point in _mount_points(Path("/proc")))
    True
    """
    try:
        table = Path("/proc/self/mountinfo").read_bytes()
    except OSError:
        return set()
    root = os.path.realpath(folder)
    found = set()
    for line in table.splitlines():
        fields = line.split(b" ")
        if len(fields) < 5:
            continue
        point = os.fsdecode(re.sub(rb"\\([0-7]{3})", lambda code: bytes([int(code[1], 8)]), fields[4]))
        if point.startswith(root.rstrip("/") + "/"):
            found.add(Path(point).relative_to(root))
    return found


def _remove_tree(top: Path) -> None:
    """Remove the folder ``top`` and all below it, however deep: one folder open at a time, each named relative
    to its parent (no path length limit, no recursion), links never followed."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
    descriptor, depth = os.open(top, flags), 0
    while True:
        below = None
        with os.scandir(descriptor) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    below = below or entry.name
                else:
                    os.unlink(entry.name, dir_fd=descriptor)
        if below is not None:
            inner = os.open(below, flags, dir_fd=descriptor)
            os.close(descriptor)
            descriptor, depth = inner, depth + 1
            continue
        if depth == 0:
            os.close(descriptor)
            os.rmdir(top)
            return
        emptied = os.fstat(descriptor).st_ino
        parent = os.open("..", flags, dir_fd=descriptor)
        os.close(descriptor)
        with os.scandir(parent) as entries:
            name = next(entry.name for entry in entries if entry.inode() == emptied)
        os.rmdir(name, dir_fd=parent)
        descriptor, depth = parent, depth - 1


def _scrubbed_or_removed(path: Path, secrets: list[str]) -> bool:
    """Scrub ``path``; made writable, or freed of its immutable and append-only flags, if it must be; else remove
    it. False when it can be neither scrubbed nor removed."""
    for make_writable in (lambda: None, lambda: path.chmod(path.stat().st_mode | 0o600), lambda: _clear_flags(path)):
        try:
            make_writable()
            _scrub_file(path, secrets)
            return True
        except OSError:
            continue
    try:
        path.unlink(missing_ok=True)
        return True
    except OSError:
        return False


def _head(path: Path) -> bytes:
    with open(path, "rb") as handle:
        return handle.read(HEAD_BYTES)


def _clear_flags(path: Path) -> None:
    """Clear the immutable and append-only flags of ``path`` (``chattr -i -a``; root only, on the file systems that
    keep them)."""
    import fcntl

    get_flags, set_flags, fixed = 0x80086601, 0x40086602, 0x10 | 0x20  # FS_IOC_{GET,SET}FLAGS; IMMUTABLE, APPEND
    descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        flags = bytearray(8)
        fcntl.ioctl(descriptor, get_flags, flags)
        value = int.from_bytes(flags, sys.byteorder)
        if value & fixed:
            fcntl.ioctl(descriptor, set_flags, (value & ~fixed).to_bytes(8, sys.byteorder))
    finally:
        os.close(descriptor)


def _named_in_files(paths: list[Path], secrets: list[str]) -> list[str]:
    """The credentials named in the files of ``paths`` and in what their archives and compressed streams hold
    (:func:`named_in_file`); the given ``secrets`` left out. Files over 16 MB are not read."""
    found: dict[str, None] = {}
    for path in paths:
        try:
            if path.is_symlink() or not path.is_file() or not 0 < path.stat().st_size <= _TEXT_BYTES:
                continue
            data = path.read_bytes()
            # (a SQLite log beside its database: the rows it holds, read with the database's pages)
            database = database_beside(path) if data.startswith(WAL_MAGIC) else b""
            found.update(dict.fromkeys(named_in_file(path.name, data, database=database)))
        except (OSError, *_DAMAGED_FILE_ERRORS):  # the file's own scrub names it
            continue
    return [secret for secret in found if secret not in secrets]


def named_in_file(name: str, data: bytes, *, depth: int = 0, budget: list[int] | None = None,
                  database: bytes = b"") -> list[str]:
    """The credentials a file named ``name`` names (:func:`named_in_data`) or holds as a file named for one
    (Docker's ``/run/secrets/db_password``), and those of every file its archive or compressed stream holds, read
    the same way down to :data:`MAX_NESTING` archives deep and up to 16 MB inflated in all (an archive's member
    counts as named for a credential only by a name that names only credentials: an ``.npz`` array saved as
    ``key`` holds ordinary data as often). A SQLite log is read with the pages of its ``database``, when given.

    >>> import gzip, io, tarfile; written = io.BytesIO()
    >>> with tarfile.open(fileobj=written, mode="w") as archive:
    ...     member = tarfile.TarInfo("secrets/api_token"); member.size = 12
    ...     archive.addfile(member, io.BytesIO(b"Qm7vT2xR9kL4"))
    >>> named_in_file("run.tar.gz", gzip.compress(written.getvalue()))
    ['Qm7vT2xR9kL4']
    """
    budget = [_TEXT_BYTES] if budget is None else budget
    found = [*named_in_data(data, database=database), *file_named_secret(name, data, member=depth > 0)]
    if depth < MAX_NESTING:
        for inner_name, content in inner_contents(data, budget):  # each piece taken from the one budget
            if content:
                found += named_in_file(inner_name or name, content, depth=depth + 1, budget=budget)
    return list(dict.fromkeys(found))


def named_in_data(data: bytes, *, database: bytes = b"") -> list[str]:
    """The credentials ``data`` names (:func:`evalkit.grid.printed_secrets.output_secrets`: a ``password = X``
    line, a ``"token": "X"`` field), in any reading of it as text and, where it may be binary or hold wide text,
    in its strings: a file of a unit, or what its command printed.

    >>> named_in_data('{"password": "Pw-Wide77x"}'.encode("utf-16-le")), named_in_data(b"\\x80\\x03token=Tk-88bin\\x00")
    (['Pw-Wide77x'], ['Tk-88bin'])
    """
    readings = _readings(data)
    found = [value for text in readings.values() for value in output_secrets(text)]
    if list(readings) in ([], ["latin-1"]) or b"\x00" in data:  # a binary, or a text that may hold wide strings
        # (short values are left out: a binary's strings make them by chance, as they do "pw: ," from numbers)
        runs = string_runs(data)  # one scan of its strings for both readings
        found += [value for value in output_secrets("\n".join(text for *_, text in runs)) + named_in_binary(data, runs)
                  if len(value) >= SHORTEST_MASKED]
    found += named_in_pickle(data)  # a pickle's key and value, opcodes between them (protocol 0: text lines)
    found += named_in_array(data)  # a NumPy record's field named for a credential
    found += named_in_sqlite(data)  # a table's key and value, or a column named for a credential
    if data.startswith(WAL_MAGIC):  # a SQLite log: its pages over its ``database``'s, or alone (in an archive, say)
        found += named_in_sqlite(database_with_log(database, data))
    return list(dict.fromkeys(found))


def _rename_if_secret(path: Path, secrets: list[str]) -> None:
    """Rename ``path`` when its name holds a credential (``cache-<key>.json`` becomes ``cache-***.json``)."""
    masked = redact(path.name, secrets).replace("/", "_")
    if masked == path.name or not os.path.lexists(path):
        return
    target, number = path.with_name(masked), 1
    while os.path.lexists(target):
        number += 1
        target = path.with_name(f"{masked}.{number}")
    try:
        os.rename(path, target)
    except PermissionError:  # the folder holding it (or the entry itself) immutable: freed, then renamed
        for frozen in (path.parent, path):
            try:
                _clear_flags(frozen)
            except OSError:
                pass
        os.rename(path, target)
    except OSError:  # the masked name too long for the file system: the entry goes, name and all
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()


def _repoint_if_secret(link: Path, secrets: list[str]) -> None:
    """Point ``link`` at its target masked when the target's text holds a credential (a link is never followed)."""
    target = os.readlink(link)
    masked = redact(target, secrets)
    if masked != target:
        link.unlink()
        os.symlink(masked, link)


def _drop_secret_attributes(path: Path, secrets: list[str]) -> None:
    """Remove each extended attribute of ``path`` (not followed) whose name or value holds a credential."""
    try:
        names = os.listxattr(path, follow_symlinks=False)
    except OSError:  # no extended attributes on this file system, or none allowed here
        return
    for name in names:
        try:
            value = os.getxattr(path, name, follow_symlinks=False).decode("latin-1")
        except OSError:
            continue
        if redact(value, secrets) != value or redact(name, secrets) != name or _has_byte_form(value, secrets):
            try:
                os.removexattr(path, name, follow_symlinks=False)
            except OSError:
                pass


def _has_byte_form(text: str, secrets: list[str]) -> bool:
    data = text.encode("latin-1")
    return any(form in data for form in byte_forms(secrets))


def _own_copy(path: Path) -> None:
    """Make ``path`` a file of its own when other hard links share it (one may lie outside the folder), its
    holes kept (a sparse file costs no more disk than it holds data)."""
    if path.stat().st_nlink > 1:
        # a name of its own, made exclusively: a link a command left under a chosen name is never written through
        descriptor, name = tempfile.mkstemp(dir=path.parent, prefix=".scrub-")
        os.close(descriptor)
        try:
            copy_data_parts(path, Path(name))
            shutil.copymode(path, name)
            os.replace(name, path)
        except BaseException:
            Path(name).unlink(missing_ok=True)
            raise


# The first bytes of binary formats whose numbers can read as printable text: NumPy, SQLite, HDF5, PNG, JPEG
_BINARY_MAGIC = (b"\x93NUMPY", b"SQLite format 3\x00", b"\x89HDF\r\n\x1a\n", b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff")


def _readings(data: bytes) -> dict[str, str]:
    """The readings of ``data`` as text, by encoding: by its byte-order mark, else UTF-16 where its zero bytes say
    so (ASCII text with a zero after or before each byte), then UTF-8 or, for a text with a stray byte, Latin-1. A
    reading counts only where the whole file decodes and holds almost no control characters; none for binary data.

    >>> [list(_readings(data)) for data in ("héllo\\n".encode(), "wide".encode("utf-16-le"), b"\\x80NUMPY\\x00\\x00" * 9)]
    [['utf-8'], ['utf-16-le'], []]
    """
    if data.startswith(_BINARY_MAGIC):  # numbers may look like text ("fff?" is float32 0.9), the format says not
        return {}
    candidates = [name for bom, name in TEXT_BOMS if data.startswith(bom)][:1]
    head = data[:4096 if len(data) > 4096 else len(data) // 2 * 2]  # a stray last byte leaves UTF-16 text UTF-16
    if not candidates and head[1::2].count(0) > len(head) // 4:
        candidates.append("utf-16-le")
    elif not candidates and head[0::2].count(0) > len(head) // 4:
        candidates.append("utf-16-be")
    candidates.append("utf-8")
    readings = {name: text for name in candidates if _is_text(text := _decoded(data, name, strict=True))}
    if "utf-8" not in readings and len(data.translate(None, _TEXT_BYTE_VALUES)) <= len(data) // 100:
        readings["latin-1"] = data.decode("latin-1")
    return readings


def _decoded(data: bytes, encoding: str, *, strict: bool = False) -> str | None:
    """``data`` as ``encoding`` text in whole code units (a stray last byte left out); None where it does not
    decode, or, unless ``strict``, decoded with replacement characters."""
    whole = len(data) - len(data) % _unit(encoding)
    try:
        return data[:whole].decode(encoding)
    except UnicodeDecodeError:
        return None if strict else data[:whole].decode(encoding, "replace")


def _unit(encoding: str) -> int:
    return 4 if "32" in encoding else 2 if "16" in encoding else 1


def _is_text(text: str | None) -> bool:
    """Whether ``text`` reads as text: at most 1 in 100 of its characters a control character other than white
    space or a terminal's colour code (a binary read as UTF-16 is full of NULs and other control codes)."""
    if text is not None and "\x1b[" in text:
        text = _TERMINAL_CODE.sub("", text)  # a coloured log is text
    return text is not None and len(_CONTROL.findall(text)) <= len(text) // 100


def _scrub_file(path: Path, secrets: list[str], depth: int = 0) -> None:
    if path.stat().st_nlink > 1 and path.stat().st_size > _TEXT_BYTES and not holds_secret(path, secrets):
        if compression_of(_head(path)) is None:
            return  # a large file shared with others (a deduplicated checkpoint) is copied only to be masked
    _own_copy(path)
    # what a compressed file holds first (a .gz log, a .zip of results), then its own bytes
    try:
        why = scrub_inside(path, lambda inner: _scrub_file(inner, secrets, depth + 1),
                           lambda name: redact(name, secrets), depth=depth)
    except NotReadWhole as inner:  # an archive inside it that could not be read whole
        why = str(inner)
    # A tar's headers and a zip's stored members carry checksums: one masked in place (a name's "?x=y" read as a
    # query, a secret in a stored JSON) is computed again
    kind = compression_of(_head(path))
    headers = tar_header_offsets(path) if kind == "tar" else []
    stored = zip_stored_entries(path) if kind in ("zip", None) else []
    written = path.stat().st_mtime_ns
    if kind is None and depth < MAX_NESTING and path.stat().st_size <= _TEXT_BYTES:
        # a gzip or zlib blob stored inside it (a sqlite cache's compressed rows)
        try:
            embedded = scrub_embedded_streams(path, lambda inner: _scrub_file(inner, secrets, depth + 1))
        except _DAMAGED_FILE_ERRORS as error:  # its own bytes are still scrubbed below
            embedded = f"a compressed stream inside it could not be scrubbed ({type(error).__name__})"
        why = why or embedded
    _scrub_bytes(path, secrets)
    if headers:
        restore_tar_checksums(path, headers)
    if stored and path.stat().st_mtime_ns != written:
        restore_zip_crcs(path, stored)
    if why is not None:
        raise NotReadWhole(why)


def _scrub_bytes(path: Path, secrets: list[str]) -> None:
    """A file's own bytes scrubbed: read as text (redacted) or as a binary (its strings masked) up to the text
    limit, then each secret's written forms and pieces overwritten in place, whatever its size."""
    try:
        if path.stat().st_size <= _TEXT_BYTES:
            _scrub_readings(path, secrets)
    finally:
        mask_bytes_in_place(path, secrets)  # whatever the readings saw: the secrets' own bytes and pieces


def _scrub_readings(path: Path, secrets: list[str]) -> None:
    """A file up to the text limit read as text (redacted) or as a binary (its strings masked)."""
    data = path.read_bytes()
    readings, written = _readings(data), False
    for encoding, text in readings.items():
        whole = len(data) - len(data) % _unit(encoding)  # a stray last byte is kept as it is
        if written:  # another reading masked the file: this one reads it again
            text = _decoded(data, encoding, strict=True)
            if text is None:
                continue
        masked = redact(text, [*secrets, *output_secrets(text)])
        if masked != text:
            data = masked.encode(encoding, "surrogatepass") + data[whole:]
            path.write_bytes(data)
            written = True
    if list(readings) != ["utf-8"] or b"\x00" in data:  # a binary, or a text that may hold wide strings
        mask_strings_in_place(path, data, secrets)
