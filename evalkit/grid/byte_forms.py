"""A unit's file of any size or format with the given secrets overwritten in place, byte for byte: a checkpoint, a
parquet table or a log too large for the redaction keeps its length and so its format's offsets.

Two scans of the file's data (a sparse file's holes are skipped): each written form of a secret (:func:`byte_forms`:
the forms the redaction masks whole, as UTF-8 bytes, and the secret as UTF-16 or UTF-32 text) is overwritten
wherever it stands, and then every run of the file made of ``MIN_FRAGMENT``-byte pieces of a secret, in any case of
its ASCII letters (a JSON writer's escaped copy, a cut piece), unless the run is one ordinary word
(:func:`evalkit.models.secret_forms.piece_stays`). Each scan looks for all its strings at once, 4 MB at a time:
numpy marks the places whose first two bytes begin one, reads the bytes from there as a number and looks it up among
the strings' own, so the time grows with the file, not with the number of forms (a 200 MB file of random bytes and
four secrets, 217 forms: 2 s). What only the redaction reads — a piece inside an encoded run, a secret printed in
groups, base64 of a text that holds one, and pieces of a UTF-16 or UTF-32 text — is masked in files up to the
scrub's text limit.
"""
from __future__ import annotations

import codecs
import errno
import mmap
import os
import re
from pathlib import Path
from typing import Iterable, Iterator, Sequence

import numpy as np

from evalkit.models.secret_forms import (MIN_FRAGMENT, _encoded_variants, _variants, base64_forms, piece_sources,
                                         piece_stays)

__all__ = ["byte_forms", "mask_bytes_in_place", "holds_secret", "copy_data_parts", "TEXT_BOMS"]

# The byte order marks that open a UTF-32 or UTF-16 text, and the codec that reads each (UTF-32 first: its
# little-endian mark begins with UTF-16's)
TEXT_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF16_LE, "utf-16"),
             (codecs.BOM_UTF16_BE, "utf-16"))

_MIN_FORM = 4  # a shorter secret is not looked for in bytes (it would mask data by chance)
_WINDOW = 4 * 2**20  # bytes of a file compared with the pieces at once (8 bytes of memory each)
_WIDE = ("utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be")
_BASE32 = re.compile(r"[A-Z2-7]{16,}=*")


def byte_forms(secrets: Iterable[str]) -> set[bytes]:
    """Each secret as a file may hold it whole: as the redaction writes its forms (bare, URL-quoted, JSON-escaped
    with and without ASCII escapes; one of 12 characters or more also base64, base32, hex, reversed, as a list of
    its bytes, in lower or upper case), with every character escaped one way (``\\xNN``, ``\\uXXXX``, ``&#NN;``,
    ``&#xNN;``, ``%XX``), in UTF-16 or UTF-32, and in hex or base64 (also inside a longer base64 text, at each of
    its three alignments; also of the secret as UTF-16 text, and that text in hex), base32 in either case.

    >>> import json
    >>> secret = 'Pässwört"9' + chr(92) + 'Lm'  # a quote and a backslash, which JSON escapes
    >>> [json.dumps(secret, ensure_ascii=ascii)[1:-1].encode() in byte_forms([secret]) for ascii in (True, False)]
    [True, True]
    >>> byte_forms(["abc"])
    set()
    """
    given = [secret for secret in secrets if isinstance(secret, str) and len(secret) >= _MIN_FORM]
    texts = {*_variants(given), *_encoded_variants(given), *_escaped_forms(given)}
    texts |= {text.lower() for text in texts if _BASE32.fullmatch(text)}  # base32 written in lower case
    forms = {text.encode("utf-8", "surrogatepass") for text in texts}
    for secret in given:
        raw = secret.encode("utf-8", "surrogatepass")
        forms |= {secret.encode(encoding, "surrogatepass") for encoding in _WIDE}
        wide = [secret.encode(encoding, "surrogatepass") for encoding in _WIDE[:2]]  # UTF-16 text, encoded
        forms |= {raw.hex().encode(), raw.hex().upper().encode(), *base64_forms(raw),
                  *(form for text in wide for form in (*base64_forms(text), text.hex().encode(),
                                                        text.hex().upper().encode()))}
    return {form for form in forms if len(form) >= _MIN_FORM}


def _escaped_forms(secrets: Iterable[str]) -> list[str]:
    """Each secret of ``MIN_FRAGMENT`` characters or more with every character escaped the same way: ``\\xNN`` and
    octal ``\\NNN`` of its UTF-8 bytes, ``\\uXXXX``, ``&#NN;``, ``&#xNN;`` and ``%XX`` (hex digits in either
    case).

    >>> _escaped_forms(["abcdef"])[2:4]
    ['\\\\141\\\\142\\\\143\\\\144\\\\145\\\\146', '\\\\u0061\\\\u0062\\\\u0063\\\\u0064\\\\u0065\\\\u0066']
    """
    forms = []
    for secret in (secret for secret in secrets if len(secret) >= MIN_FRAGMENT):
        raw = secret.encode("utf-8", "surrogatepass")
        forms += ["".join(f"\\x{b:02x}" for b in raw), "".join(f"\\x{b:02X}" for b in raw),
                  "".join(f"\\{b:03o}" for b in raw), "".join(f"\\u{ord(c):04x}" for c in secret),
                  "".join(f"\\u{ord(c):04X}" for c in secret), "".join(f"&#{ord(c)};" for c in secret),
                  "".join(f"&#x{ord(c):x};" for c in secret), "".join(f"&#x{ord(c):X};" for c in secret),
                  "".join(f"%{b:02X}" for b in raw), "".join(f"%{b:02x}" for b in raw)]
    return forms


_LOWER = np.arange(256, dtype=np.uint8)
_LOWER[ord("A"):ord("Z") + 1] += 32  # ASCII letters lowered, every other byte kept


def _numbers_at(values: np.ndarray, starts: np.ndarray, size: int) -> np.ndarray:
    """The ``size`` bytes (at most 8) of ``values`` from each of ``starts``, each read as one little-endian
    number."""
    numbers = np.zeros(len(starts), dtype=np.uint64)
    for index in range(size):
        numbers |= values[starts + index].astype(np.uint64) << np.uint64(8 * index)
    return numbers


def _pair_starts(values: np.ndarray, count: int, table: np.ndarray) -> np.ndarray:
    """The places among the first ``count`` of ``values`` whose two bytes from there are marked in ``table``
    (indexed by the two bytes as a little-endian number)."""
    return np.flatnonzero(table[values[:count].astype(np.uint16) | values[1:count + 1].astype(np.uint16) << 8])


def _found(sorted_numbers: np.ndarray, numbers: np.ndarray) -> np.ndarray:
    """Which of ``numbers`` are among ``sorted_numbers``."""
    if not len(sorted_numbers):
        return np.zeros(len(numbers), dtype=bool)
    places = np.minimum(np.searchsorted(sorted_numbers, numbers), len(sorted_numbers) - 1)
    return sorted_numbers[places] == numbers


class _FormScan:
    """Whole byte strings (4 bytes or more) found all at once in a file's bytes: the places whose first two bytes
    begin some form are read as numbers of 8 bytes (4 for a shorter form), looked up among the forms' own, and
    confirmed whole, longest form first.

    >>> _FormScan([b"secret", b"sec", b"secret-key"]).spans(b"a secret-key and a secret")
    [(2, 12), (19, 25)]
    """

    def __init__(self, forms: Iterable[bytes]):
        self.forms: dict[tuple[int, int], list[bytes]] = {}
        for form in sorted((form for form in forms if len(form) >= 4), key=len, reverse=True):
            size = 8 if len(form) >= 8 else 4
            self.forms.setdefault((size, int.from_bytes(form[:size], "little")), []).append(form)
        self.numbers = {size: np.array(sorted(number for kind, number in self.forms if kind == size), dtype=np.uint64)
                        for size in (4, 8)}
        self.pairs = np.zeros(2**16, dtype=bool)
        self.pairs[[number & 0xFFFF for _, number in self.forms]] = True
        self.reach = max((len(form) for group in self.forms.values() for form in group), default=0)

    def spans(self, data: bytes) -> list[tuple[int, int]]:
        """The (start, end) of the longest form starting at each place of ``data`` where one does."""
        values = np.frombuffer(data, dtype=np.uint8)
        found = {}
        for size, numbers in self.numbers.items():
            if len(data) < size or not len(numbers):
                continue
            starts = _pair_starts(values, len(data) - size + 1, self.pairs)
            if len(starts):
                heads = _numbers_at(values, starts, size)
                hits = _found(numbers, heads)
                for start, head in zip(starts[hits].tolist(), heads[hits].tolist()):
                    form = next((form for form in self.forms[(size, head)] if data.startswith(form, start)), None)
                    if form is not None and len(form) > found.get(start, 0):
                        found[start] = len(form)
        return sorted((start, start + size) for start, size in found.items())


class _PieceScan:
    """Every ``MIN_FRAGMENT``-byte piece of some secrets' written forms (ASCII letters lowered), found all at once
    in a file's bytes: the windows whose first two bytes begin some piece are read as numbers and looked up among
    the pieces' numbers. A piece made of one repeated byte is left out (a run of zeros in a binary is no
    secret's)."""

    def __init__(self, secrets: Sequence[str]):
        self.secrets = piece_sources(secrets)
        pieces = {raw[i:i + MIN_FRAGMENT] for raw in (v.encode("utf-8", "surrogatepass").lower() for v in self.secrets)
                  for i in range(len(raw) - MIN_FRAGMENT + 1)}
        pieces = {piece for piece in pieces if len(set(piece)) > 1}
        self.numbers = np.array(sorted(int.from_bytes(piece, "little") for piece in pieces), dtype=np.uint64)
        self.heads = np.zeros(2**16, dtype=bool)
        self.heads[[piece[0] | piece[1] << 8 for piece in pieces]] = True

    def runs(self, data: bytes) -> list[tuple[int, int]]:
        """The (start, end) of each run of ``data`` that pieces cover, in order.

        >>> _PieceScan(["Zq8XwV3kLm9P"]).runs(b"id=zq8xwv3k, other")
        [(3, 11)]
        """
        count = len(data) - MIN_FRAGMENT + 1
        if count <= 0 or not len(self.numbers):
            return []
        lowered = _LOWER[np.frombuffer(data, dtype=np.uint8)]
        starts = _pair_starts(lowered, count, self.heads)
        found = starts[_found(self.numbers, _numbers_at(lowered, starts, MIN_FRAGMENT))]
        if not len(found):
            return []
        covered = np.zeros(len(data) + 1, dtype=np.int8)
        for index in range(MIN_FRAGMENT):
            covered[found + index] = 1
        edges = np.flatnonzero(np.diff(np.concatenate(([0], covered))))
        return [(int(start), int(end)) for start, end in zip(edges[0::2], edges[1::2])]


def mask_bytes_in_place(path: Path, secrets: Sequence[str]) -> None:
    """Overwrite each of ``secrets`` in ``path`` with as many ``*``: its written forms (:func:`byte_forms`) and
    every run of its pieces (see the module's description)."""
    forms = _FormScan(byte_forms(secrets))
    if not forms.reach or path.stat().st_size == 0:
        return
    pieces = _PieceScan([secret for secret in secrets if len(secret) >= _MIN_FORM])
    with open(path, "r+b") as handle, mmap.mmap(handle.fileno(), 0) as data:
        for start, end in _data_parts(handle.fileno(), len(data)):
            end = min(end + forms.reach, len(data))  # a form may end in a hole's first bytes (UTF-16's last zero)
            found = [*_form_spans(data, start, end, forms), *_piece_runs(data, start, end, pieces)]
            for found_start, found_end in found:  # both scans read the data as it was
                data[found_start:found_end] = b"*" * (found_end - found_start)


def holds_secret(path: Path, secrets: Sequence[str]) -> bool:
    """Whether :func:`mask_bytes_in_place` would change ``path`` (read only, up to the first thing it would mask).
    """
    forms = _FormScan(byte_forms(secrets))
    if not forms.reach or path.stat().st_size == 0:
        return False
    pieces = _PieceScan([secret for secret in secrets if len(secret) >= _MIN_FORM])
    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
        for start, end in _data_parts(handle.fileno(), len(data)):
            end = min(end + forms.reach, len(data))
            if next(_form_spans(data, start, end, forms), None) or next(_piece_runs(data, start, end, pieces), None):
                return True
    return False


def copy_data_parts(source: Path, target: Path) -> None:
    """Copy ``source`` into the existing file ``target`` part by part of its data, so a sparse file's holes stay
    holes (a 1 TB sparse file with 4 KB of data copies as 4 KB)."""
    with open(source, "rb") as reading, open(target, "r+b") as writing:  # made by the caller, never a link
        size = os.fstat(reading.fileno()).st_size
        for start, end in _data_parts(reading.fileno(), size):
            reading.seek(start)
            writing.seek(start)
            while start < end:
                block = reading.read(min(_WINDOW, end - start))
                if not block:
                    break
                writing.write(block)
                start += len(block)
        writing.truncate(size)


def _form_spans(data: mmap.mmap, start: int, end: int, scan: _FormScan) -> Iterator[tuple[int, int]]:
    """The (start, end) of every form in ``data[start:end]``, read a window at a time, each window read on past
    its end by the longest form's length (a form starting in a window is found whole)."""
    for position in range(start, end, _WINDOW):
        stop = min(position + _WINDOW, end)
        for form_start, form_end in scan.spans(data[position:min(stop + scan.reach - 1, end)]):
            if form_start < stop - position:
                yield position + form_start, position + form_end


def _piece_runs(data: mmap.mmap, start: int, end: int, scan: _PieceScan) -> Iterator[tuple[int, int]]:
    """The (start, end) of every run of pieces in ``data[start:end]`` that is not an ordinary word, read a window
    at a time; a run that reaches a window's end is left to the next window, which starts where it does (so the
    word rule sees it whole)."""
    position = start
    while position < end:
        stop = min(position + _WINDOW, end)
        chunk = data[position:min(stop + MIN_FRAGMENT - 1, end)]
        runs = scan.runs(chunk)
        if runs and stop < end and runs[-1][1] >= stop - position and runs[-1][0] > 0:
            stop = position + runs.pop()[0]
        for run_start, run_end in runs:
            if not piece_stays(chunk[run_start:run_end].decode("latin-1"), scan.secrets):
                yield position + run_start, position + run_end
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
