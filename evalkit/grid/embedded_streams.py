"""Compressed streams stored inside another file (a gzip or zlib blob in a sqlite cache, a compressed field of a
binary record): each complete one — its checksum holds, so it is no chance run of bytes — is inflated, scrubbed as
a file of the folder is, and, where that changed it, compressed again and written back over its old bytes, padded
with zero bytes to its old length (zlib and gzip readers stop at a stream's end). One that does not fit its old
length once compressed again cannot be masked in place, and is reported."""
from __future__ import annotations

import gzip
import re
import tempfile
import zlib
from pathlib import Path
from typing import Callable, Iterator

from evalkit.grid.compressed import MAX_INFLATED, _scrubbed

__all__ = ["scrub_embedded_streams"]

# The headers gzip and zlib write (zlib: a 32K window at each of the four levels). The test of a file's first bytes,
# models.encoded_runs.zlib_header, takes every valid zlib header; inside a binary the 64 pairs it allows would be
# tried 16 times as often in random bytes, for streams no common writer makes.
_STREAM_START = re.compile(rb"\x1f\x8b\x08|\x78[\x01\x5e\x9c\xda]")
_MOST_TRIED = 100_000  # stream starts tried in one file (random bytes hold one zlib-like pair in 16,000)
_MOST_INFLATED = 2**24  # bytes one embedded stream may inflate to; a larger one is left as it is


def embedded_streams(data: bytes) -> Iterator[tuple[int, int, str, bytes]]:
    """(start, end, kind, inflated bytes) of each complete gzip or zlib stream inside ``data``, not at its first
    byte (a file that is one stream is read as a compressed file).

    >>> blob = zlib.compress(b'{"password": "Pw-embedded-99"}')
    >>> [(start, end - start == len(blob), kind, text) for start, end, kind, text in
    ...  embedded_streams(b"row 1|" + blob + b"|x^2 and more")]
    [(6, True, 'zlib', b'{"password": "Pw-embedded-99"}')]
    """
    view, until = memoryview(data), 0
    for tried, found in enumerate(_STREAM_START.finditer(data, 1)):
        if tried >= _MOST_TRIED:
            raise _TooMany
        start = found.start()
        if start < until:  # inside a stream already found (a gzip kept in a zlib stream's stored blocks)
            continue
        kind = "gzip" if found.group().startswith(b"\x1f") else "zlib"
        inflate = zlib.decompressobj(wbits=31 if kind == "gzip" else 15)
        try:
            inflated = inflate.decompress(view[start:], _MOST_INFLATED)
        except zlib.error:
            continue
        if inflate.eof and inflated:  # its checksum (CRC-32 or Adler-32) held at its end
            until = len(data) - len(inflate.unused_data)
            yield start, until, kind, inflated


class _TooMany(Exception):
    """More places that may start a stream than :data:`_MOST_TRIED`."""


def scrub_embedded_streams(path: Path, scrub: Callable[[Path], None]) -> str | None:
    """Scrub each compressed stream stored inside ``path`` with ``scrub`` (a file's scrub, given a private copy of
    what it inflates to) and write it back in place where that changed it; None when done, else why one could not
    be written back."""
    with open(path, "rb") as handle:
        data = handle.read()
    try:
        data.decode("utf-8")
        return None  # a text: compressed bytes are never valid UTF-8
    except UnicodeDecodeError:
        pass
    changes, why, total = [], None, 0
    with tempfile.TemporaryDirectory(prefix="evalkit-embedded-") as private:
        copy = Path(private) / "stream"
        try:
            for start, end, kind, inflated in embedded_streams(data):
                total += len(inflated)
                if total > MAX_INFLATED:  # many streams that inflate to much: a bomb, or data too large to check
                    why = why or f"the compressed streams inside it inflate past {MAX_INFLATED} bytes and are not read"
                    break
                copy.write_bytes(inflated)
                unread = _scrubbed(scrub, copy)  # one not read whole is said; the others are read on
                why = why or unread
                scrubbed = copy.read_bytes()
                if scrubbed == inflated:
                    continue
                packed = gzip.compress(scrubbed, 9, mtime=0) if kind == "gzip" else zlib.compress(scrubbed, 9)
                if len(packed) > end - start:
                    why = why or (f"a {kind} stream inside it at byte {start} holds a secret and cannot be masked "
                                  "in place (compressed again, it is longer)")
                    continue
                changes.append((start, packed.ljust(end - start, b"\0")))
        except _TooMany:
            why = why or f"more than {_MOST_TRIED} places in it may start a compressed stream; the rest are not read"
    if changes:
        with open(path, "r+b") as handle:
            for start, packed in changes:
                handle.seek(start)
                handle.write(packed)
    return why
