"""A unit's file of any size or format with the given secrets overwritten in place, byte for byte: a checkpoint, a
parquet table or a log too large for the redaction keeps its length and so its format's offsets.

Two scans of the file's data (a sparse file's holes are skipped): each written form of a secret (:func:`byte_forms`:
the forms the redaction masks whole, as UTF-8 bytes, and the secret as UTF-16 or UTF-32 text) is overwritten
wherever it stands, and then every run of the file made of ``MIN_FRAGMENT``-byte pieces of a secret, in any case of
its ASCII letters (a JSON writer's escaped copy, a cut piece), unless the run is one ordinary word
(:func:`evalkit.models.secret_forms.piece_stays`). The pieces are searched for all at once, window by window
(numpy compares each window of 6 bytes with every piece), so the scan's time grows with the file, not with the
number of secrets. What only the redaction reads — a piece inside an encoded run, a secret printed in groups,
base64 of a text that holds one, and pieces of a UTF-16 or UTF-32 text — is masked in files up to the scrub's text
limit.
"""
from __future__ import annotations

import errno
import json
import mmap
import os
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from evalkit.models.secret_forms import (MIN_FRAGMENT, _encoded_variants, _variants, base64_forms, piece_sources,
                                         piece_stays)

__all__ = ["byte_forms", "mask_bytes_in_place"]

_MIN_FORM = 4  # a shorter secret is not looked for in bytes (it would mask data by chance)
_WINDOW = 4 * 2**20  # bytes of a file compared with the pieces at once (8 bytes of memory each)
_WIDE = ("utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be")


def byte_forms(secrets: Iterable[str]) -> set[bytes]:
    """Each secret as a file may hold it whole: as the redaction writes its forms (bare, URL-quoted, JSON-escaped
    with and without ASCII escapes; one of 12 characters or more also base64, base32, hex, reversed, as a list of
    its bytes, in lower or upper case), with every character escaped one way (``\\xNN``, ``\\uXXXX``, ``&#NN;``,
    ``&#xNN;``, ``%XX``), in UTF-16 or UTF-32, and in hex or base64 (also inside a longer base64 text, at each of
    its three alignments).

    >>> secret = 'Pässwört"9' + chr(92) + 'Lm'  # a quote and a backslash, which JSON escapes
    >>> [json.dumps(secret, ensure_ascii=ascii)[1:-1].encode() in byte_forms([secret]) for ascii in (True, False)]
    [True, True]
    >>> byte_forms(["abc"])
    set()
    """
    given = [secret for secret in secrets if isinstance(secret, str) and len(secret) >= _MIN_FORM]
    texts = {*_variants(given), *_encoded_variants(given), *_escaped_forms(given),
             *(_json_text(secret) for secret in given)}
    forms = {text.encode("utf-8", "surrogatepass") for text in texts}
    for secret in given:
        raw = secret.encode("utf-8", "surrogatepass")
        forms |= {secret.encode(encoding, "surrogatepass") for encoding in _WIDE}
        forms |= {raw.hex().encode(), raw.hex().upper().encode(), *base64_forms(raw)}
    return {form for form in forms if len(form) >= _MIN_FORM}


def _json_text(secret: str) -> str:
    """``secret`` as a JSON string's inside, written with its letters beyond ASCII kept (``ensure_ascii=False``)."""
    return json.dumps(secret, ensure_ascii=False)[1:-1]


def _escaped_forms(secrets: Iterable[str]) -> list[str]:
    """Each secret of ``MIN_FRAGMENT`` characters or more with every character escaped the same way: ``\\xNN`` of
    its UTF-8 bytes, ``\\uXXXX`` (either case of hex digits), ``&#NN;``, ``&#xNN;`` and ``%XX`` (either case).

    >>> _escaped_forms(["abcdef"])[:2]
    ['\\\\x61\\\\x62\\\\x63\\\\x64\\\\x65\\\\x66', '\\\\u0061\\\\u0062\\\\u0063\\\\u0064\\\\u0065\\\\u0066']
    """
    forms = []
    for secret in (secret for secret in secrets if len(secret) >= MIN_FRAGMENT):
        raw = secret.encode("utf-8", "surrogatepass")
        forms += ["".join(f"\\x{b:02x}" for b in raw), "".join(f"\\u{ord(c):04x}" for c in secret),
                  "".join(f"\\u{ord(c):04X}" for c in secret), "".join(f"&#{ord(c)};" for c in secret),
                  "".join(f"&#x{ord(c):x};" for c in secret), "".join(f"%{b:02X}" for b in raw),
                  "".join(f"%{b:02x}" for b in raw)]
    return forms


class _PieceScan:
    """Every ``MIN_FRAGMENT``-byte piece of some secrets' written forms (ASCII letters lowered), found all at once
    in a file's bytes: each window of the bytes is read as a number and looked up among the pieces' numbers."""

    def __init__(self, secrets: Sequence[str]):
        self.secrets = piece_sources(secrets)
        pieces = {raw[i:i + MIN_FRAGMENT] for raw in (v.encode("utf-8", "surrogatepass").lower() for v in self.secrets)
                  for i in range(len(raw) - MIN_FRAGMENT + 1)}
        self.numbers = np.array(sorted(int.from_bytes(piece, "little") for piece in pieces), dtype=np.uint64)

    def runs(self, data: bytes) -> list[tuple[int, int]]:
        """The (start, end) of each run of ``data`` that pieces cover, in order.

        >>> _PieceScan(["Zq8XwV3kLm9P"]).runs(b"id=zq8xwv3k, other")
        [(3, 11)]
        """
        count = len(data) - MIN_FRAGMENT + 1
        if count <= 0 or not len(self.numbers):
            return []
        values = np.frombuffer(data, dtype=np.uint8)
        values = np.where((values >= 65) & (values <= 90), values + 32, values).astype(np.uint64)
        windows = np.zeros(count, dtype=np.uint64)
        for index in range(MIN_FRAGMENT):
            windows |= values[index:index + count] << np.uint64(8 * index)
        places = np.searchsorted(self.numbers, windows)
        found = self.numbers[np.minimum(places, len(self.numbers) - 1)] == windows
        if not found.any():
            return []
        covered = np.convolve(found.astype(np.int8), np.ones(MIN_FRAGMENT, dtype=np.int8))[:len(data)] > 0
        edges = np.flatnonzero(np.diff(np.concatenate(([False], covered, [False])).astype(np.int8)))
        return [(int(start), int(end)) for start, end in zip(edges[0::2], edges[1::2])]


def mask_bytes_in_place(path: Path, secrets: Sequence[str]) -> None:
    """Overwrite each of ``secrets`` in ``path`` with as many ``*``: its written forms (:func:`byte_forms`) and
    every run of its pieces (see the module's description)."""
    forms = sorted(byte_forms(secrets), key=len, reverse=True)
    if not forms or path.stat().st_size == 0:
        return
    scan = _PieceScan([secret for secret in secrets if len(secret) >= _MIN_FORM])
    reach = max(map(len, forms))  # a form may end in the first bytes of a hole (a UTF-16 form's last zero)
    with open(path, "r+b") as handle, mmap.mmap(handle.fileno(), 0) as data:
        for start, end in _data_parts(handle.fileno(), len(data)):
            end = min(end + reach, len(data))
            for form in forms:
                index = data.find(form, start, end)
                while index >= 0:
                    data[index:index + len(form)] = b"*" * len(form)
                    index = data.find(form, index + len(form), end)
            _mask_pieces(data, start, end, scan)


def _mask_pieces(data: mmap.mmap, start: int, end: int, scan: _PieceScan) -> None:
    """Overwrite the runs of pieces in ``data[start:end]``, a window at a time; a run that reaches a window's end
    is left to the next window, which starts where it does (so the word rule sees it whole)."""
    position = start
    while position < end:
        stop = min(position + _WINDOW, end)
        chunk = data[position:min(stop + MIN_FRAGMENT - 1, end)]
        runs = scan.runs(chunk)
        if runs and stop < end and runs[-1][1] >= stop - position and runs[-1][0] > 0:
            stop = position + runs.pop()[0]
        for run_start, run_end in runs:
            if not piece_stays(chunk[run_start:run_end].decode("latin-1"), scan.secrets):
                data[position + run_start:position + run_end] = b"*" * (run_end - run_start)
        position = stop


def _data_parts(descriptor: int, size: int) -> list[tuple[int, int]]:
    """The (start, end) of each part of an open file that holds data, holes left out; the whole file where the
    file system cannot tell."""
    parts, offset = [], 0
    try:
        while offset < size:
            start = os.lseek(descriptor, offset, os.SEEK_DATA)
            end = os.lseek(descriptor, start, os.SEEK_HOLE)
            parts.append((start, end))
            offset = end
    except OSError as error:  # ENXIO: no data past offset
        if error.errno != errno.ENXIO:
            return [(0, size)]
    except AttributeError:  # no SEEK_DATA on this system
        return [(0, size)]
    return parts
