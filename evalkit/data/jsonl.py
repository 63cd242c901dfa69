"""Reading data files with errors that say where: text, JSON Lines and CSV, plain or gzipped.

One set of helpers for every loader of the kit: a damaged ``.gz`` names the file, undecodable bytes name
the file, line and byte, a JSON line that does not parse names its line, and a CSV row with more or fewer
fields than its header names its line (pandas would pad it with blanks or fail without the file's name).
A CSV the kit writes for people to open guards its text cells (:func:`spreadsheet_safe`).
"""
from __future__ import annotations

import csv
import gzip
import io
import json
import tarfile
import zipfile
import zlib
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import pandas as pd

__all__ = ["read_bytes", "read_text", "json_lines", "csv_frame", "archive_errors_named", "TOO_DEEP", "spreadsheet_safe"]

# What a reader says of JSON nested deeper than Python's parser goes (it raises RecursionError, which names no file).
TOO_DEEP = "JSON nested too deeply to read (hundreds of levels of [ or {): not a data file of the kit"

_DAMAGED = (EOFError, gzip.BadGzipFile, zlib.error, tarfile.TarError, zipfile.BadZipFile)


@contextmanager
def archive_errors_named(path: str | Path, error: type[Exception] = ValueError, what: str = "archive"):
    """Inside this block a truncated or damaged archive (gzip, tar, zip) raises ``error`` naming ``path``.

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "x.zip")
    >>> _ = open(path, "wb").write(b"not a zip")
    >>> with archive_errors_named(path):
    ...     zipfile.ZipFile(path)
    Traceback (most recent call last):
    ...
    ValueError: ...x.zip: the archive is truncated or damaged (BadZipFile: File is not a zip file); restore it, or delete it so that it is downloaded again
    """
    try:
        yield
    except _DAMAGED as failure:
        raise error(f"{path}: the {what} is truncated or damaged ({type(failure).__name__}: {failure}); "
                    "restore it, or delete it so that it is downloaded again") from None


def read_bytes(path: str | Path, error: type[Exception] = ValueError) -> bytes:
    """The file's bytes (``.gz`` decompressed); a truncated or damaged archive raises ``error`` naming it."""
    path = Path(path)
    with archive_errors_named(path, error, "gzip file"):
        if path.suffix == ".gz":
            with gzip.open(path, "rb") as handle:
                return handle.read()
        return path.read_bytes()


def read_text(path: str | Path, error: type[Exception] = ValueError) -> str:
    """The file as UTF-8 text (a leading byte-order mark dropped); bad bytes raise ``error`` naming the file,
    line and byte offset.

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "x.csv")
    >>> _ = open(path, "wb").write(b"a,b\\n1,caf\\xe9\\n")
    >>> read_text(path)
    Traceback (most recent call last):
    ...
    ValueError: ...x.csv, line 2: not UTF-8 text (byte 0xe9 at offset 9); save the file as UTF-8
    """
    raw = read_bytes(path, error)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as failure:
        line = raw[:failure.start].count(b"\n") + 1
        raise error(f"{path}, line {line}: not UTF-8 text (byte 0x{raw[failure.start]:02x} at offset "
                    f"{failure.start}); save the file as UTF-8") from None


def json_lines(path: str | Path, error: type[Exception] = ValueError) -> Iterator[tuple[int, Any]]:
    """(line number, parsed value) for every non-blank line of a JSON Lines file (``.gz`` read through gzip);
    a line that is not JSON, or nested too deeply to parse, raises ``error`` naming the file and line.

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "x.jsonl")
    >>> _ = open(path, "w").write('{"a": 1}\\n\\n[2]\\n')
    >>> list(json_lines(path))
    [(1, {'a': 1}), (3, [2])]
    """
    for number, line in enumerate(read_text(path, error).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except ValueError as failure:  # not JSON, or an integer of more digits than Python converts (4,300)
            raise error(f"{path}, line {number}: not JSON ({getattr(failure, 'msg', failure)})") from None
        except RecursionError:
            raise error(f"{path}, line {number}: {TOO_DEEP}") from None


def csv_frame(path: str | Path, error: type[Exception] = ValueError) -> tuple[pd.DataFrame, list[int]]:
    """A CSV file as text cells (blanks kept as ""), and the file line on which each row starts.

    Every row must have as many fields as the header; one that has more or fewer raises ``error`` naming the
    file, line and both counts (a quoted field may span lines, so line numbers are the file's, not row
    numbers + 1).

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "x.csv")
    >>> _ = open(path, "w").write('a,b\\n1,"two\\nlines"\\n3\\n')
    >>> csv_frame(path)
    Traceback (most recent call last):
    ...
    ValueError: ...x.csv, line 4: 1 field(s) where the header has 2 (a missing or extra comma, or an unclosed quote?)
    """
    reader = csv.reader(io.StringIO(read_text(path, error), newline=""))
    try:
        header = next(reader)
    except StopIteration:
        raise error(f"{path}: empty file (no header line)") from None
    rows, lines = [], []
    start = reader.line_num + 1
    try:
        for row in reader:
            if row:
                if len(row) != len(header):
                    raise error(f"{path}, line {start}: {len(row)} field(s) where the header has {len(header)} "
                                "(a missing or extra comma, or an unclosed quote?)")
                rows.append(row)
                lines.append(start)
            start = reader.line_num + 1
    except csv.Error as failure:
        raise error(f"{path}, line {start}: not valid CSV ({failure})") from None
    duplicated = sorted({name for name in header if header.count(name) > 1})
    if duplicated:
        raise error(f"{path}, line 1 (header): column(s) named twice: {', '.join(duplicated)}")
    return pd.DataFrame(rows, columns=header, dtype=str), lines


_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(value):
    """``value`` with a leading ``'`` when it is a text a spreadsheet would read as a formula: every text cell
    of a CSV the kit writes for people to open (grades, grid results) goes through this.

    >>> spreadsheet_safe("=HYPERLINK(1)")
    "'=HYPERLINK(1)"
    >>> spreadsheet_safe("alice"), spreadsheet_safe(-1.0)
    ('alice', -1.0)
    """
    if isinstance(value, str) and value.startswith(_FORMULA):
        return "'" + value
    return value
