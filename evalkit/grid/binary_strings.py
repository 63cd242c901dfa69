"""The strings of a binary file, as `strings` finds them — runs of printable ASCII, alone or as UTF-16 or UTF-32
code units (numpy keeps its text arrays as UTF-32) — and what the redaction masks in them, overwritten in place by
as many ``*`` so the file keeps its length and its format's offsets. In a NumPy array file the strings end where its
items do: a fixed-width item filled to its width runs on into the next one with no byte between them."""
from __future__ import annotations

import bisect
import difflib
import io
import math
import mmap
import re
from pathlib import Path
from typing import Iterator

import numpy as np
from numpy.lib import format as npy_format

from evalkit.models import redact
from evalkit.models.url_path_keys import _KEY_PREFIX
from evalkit.models.redaction import _ordinary_word
from evalkit.grid.credential_names import credential_name
from evalkit.grid.printed_secrets import output_secrets

__all__ = ["string_runs", "mask_strings_in_place", "named_in_binary", "named_in_strings"]

_PRINTABLE = rb"[\t\n\r\x20-\x7e]"
# (pattern, bytes per character, byte order): ASCII, then UTF-16 and UTF-32 in either order
_RUNS = ((re.compile(_PRINTABLE + rb"{6,}"), 1, "little"),
         (re.compile(rb"(?:" + _PRINTABLE + rb"\x00){6,}"), 2, "little"),
         (re.compile(rb"(?:\x00" + _PRINTABLE + rb"){6,}"), 2, "big"),
         (re.compile(rb"(?:" + _PRINTABLE + rb"\x00\x00\x00){6,}"), 4, "little"),
         (re.compile(rb"(?:\x00\x00\x00" + _PRINTABLE + rb"){6,}"), 4, "big"))
_TOKEN = re.compile(r"\w+|\W")
# A key glued to the bytes before it (a database row's columns back to back, a pickle's length byte before its
# string): the character before a key's prefix is read as a blank, so a shape that starts at a word's edge is seen
_GLUED_KEY = re.compile(rf"[A-Za-z0-9](?=(?:{_KEY_PREFIX.pattern}|eyJ[\w-]{{10,}}\.))")
# Between strings read at once: no string holds it, and the redaction reads its "\x1e" as a blank, as it does "\n"
_STRING_BREAK = "\n\x1e\n"
# A "?" starts a query in a binary's string only after a URL's scheme or a path, or before a named value of 8
# characters or more: numbers stored as bytes hold "?" everywhere (0x3F, the high byte of floats near 1), and the
# redaction of text reads any "x?y" as a URL's query. Elsewhere it is read as a blank.
_BINARY_QUERY = re.compile(r"\?(?=[A-Za-z_][\w.\-]{0,63}=[^\s#\"'<>\\&;]{8})")
_PATH_END = re.compile(r"/[\w.\-~%]{1,255}\Z")  # a "?" after a path ("cdn.example.com/f.bin?s=...")
# Likewise an "@" ends user-info only before a host: a name with a dot, an IP address, localhost, a service name
# before its path or a port, or ending the string ("u:p@db.internal", "u:p@10.0.0.5", "u:p@rabbitmq/vhost",
# "u:p@db:5432", a DSN stored alone: "u:p@redis")
_BINARY_HOST = re.compile(r"@(?=(?:[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})*\.[A-Za-z]{2,63}|\d{1,3}(?:\.\d{1,3}){3}"
                          r"|\[[0-9A-Fa-f:.]{2,45}\]|localhost|[a-z][a-z0-9_-]{1,62}(?=/))(?::\d{2,5})?(?![\w.])"
                          r"|[A-Za-z0-9-]{1,63}:\d{2,5}(?![\w.])|[a-z][a-z0-9_-]{1,62}\Z)")
# A string that names a credential (a pickled dict's key, a config's field): a name, not bytes that hold "pw" by
# chance; its value stands at most _NEAR bytes after it, zero bytes aside (a pickle's opcode and length, a NumPy
# field's padding)
_NAME = re.compile(r"[A-Za-z_][\w.\-]{1,63}")
_NEAR = 16


def _strings(data: bytes) -> Iterator[tuple[int, int, str, str]]:
    """(start, bytes per character, byte order, text) of every string of ``data``. A run of one order that
    overlaps one of the other order in the same width is the same text read a byte off, and is left out.

    >>> data = b"\x01\x02hello world\x01\x01" + "wide one".encode("utf-16-le") + b"\x01"
    >>> [(s, w, t) for s, w, _, t in _strings(data)]
    [(2, 1, 'hello world'), (15, 2, 'wide one')]
    """
    starts: dict[int, list[int]] = {}  # the little-endian runs of each width, in order (they never overlap)
    ends: dict[int, list[int]] = {}
    arrays = numpy_items(data)
    for pattern, width, order in _RUNS:
        for run in pattern.finditer(data):
            if order == "little":
                starts.setdefault(width, []).append(run.start())
                ends.setdefault(width, []).append(run.end())
            else:  # the first little-endian run ending after this one starts must start after it ends
                index = bisect.bisect_right(ends.get(width, []), run.start())
                if index < len(starts.get(width, [])) and starts[width][index] < run.end():
                    continue
            text = run.group()[(width - 1 if order == "big" else 0)::width].decode("ascii")
            cuts = _item_cuts(arrays, run.start(), run.end(), width) if arrays else []
            for low, high in zip([0, *cuts], [*cuts, len(text)]):
                yield run.start() + low * width, width, order, text[low:high]


def numpy_items(data: bytes) -> list[tuple[int, int, int, list[int]]]:
    """Where the items of each NumPy array in ``data`` lie (a ``.npy`` file, or one stored in an ``.npz`` or a tar):
    the start and end of its data, the size of one record, and the offsets in a record at which a string field
    starts or ends. An array of objects (a pickle), or a header NumPy would not read, is left out.

    >>> buffer = io.BytesIO()
    >>> np.save(buffer, np.array(["alpha" * 5, "beta"]))
    >>> numpy_items(buffer.getvalue())
    [(128, 328, 100, [0, 100])]
    >>> record = np.dtype([("n", "i4"), ("name", "U24"), ("tag", "S20"), ("code", "S2")])
    >>> buffer = io.BytesIO(); np.save(buffer, np.zeros(2, record))
    >>> [item[2:] for item in numpy_items(buffer.getvalue())]
    [(122, [4, 100, 120])]
    """
    arrays = []
    at, tried = data.find(_NUMPY_MAGIC), 0
    while at >= 0 and tried < _MOST_ARRAYS:
        tried += 1
        handle = io.BytesIO(data)
        handle.seek(at)
        try:
            major, _ = npy_format.read_magic(handle)
            read = npy_format.read_array_header_1_0 if major == 1 else npy_format.read_array_header_2_0
            shape, _, dtype = read(handle)
            edges = set() if dtype.hasobject or dtype.itemsize == 0 else _string_edges(dtype, 0)
        except Exception:  # noqa: BLE001 (a hint only: a header NumPy's reader refuses in any way is no array)
            edges = set()
        if edges:
            start = handle.tell()
            arrays.append((start, min(len(data), start + math.prod(shape) * dtype.itemsize), dtype.itemsize,
                           sorted(edges)))
        at = data.find(_NUMPY_MAGIC, at + 1)
    # an array's data ends, at the latest, where the next header starts (stacked headers of large shapes)
    return [(start, min(end, following[0]), size, edges)
            for (start, end, size, edges), following in zip(arrays, [*arrays[1:], (len(data),)])]


_NUMPY_MAGIC = b"\x93NUMPY"
_MOST_ARRAYS = 10_000  # headers read at most: an .npz of more arrays has the rest read as any binary
_WHOLE_VALUE = 20  # characters of a string field at least, for its edges to end the strings read across them
_MOST_EDGES = 4096  # a record of more string fields than this is read as one run, as any binary is


def _string_edges(dtype: np.dtype, offset: int) -> set[int]:
    """The offsets at which the string fields of ``dtype`` (placed at ``offset`` in a record) start and end."""
    if dtype.fields:
        edges: set[int] = set()
        for field, at, *_ in dtype.fields.values():
            edges |= _string_edges(field, offset + at)
            if len(edges) > _MOST_EDGES:
                return set()
        return edges
    if dtype.subdtype is not None:
        base, shape = dtype.subdtype
        one = _string_edges(base, 0)
        if not one or math.prod(shape) * len(one) > _MOST_EDGES:
            return set()
        return {offset + index * base.itemsize + edge for index in range(math.prod(shape)) for edge in one}
    characters = dtype.itemsize // (4 if dtype.kind == "U" else 1)
    # an item this wide holds whole values; a narrower one may be a piece of a text cut into items (a key across it)
    return {offset, offset + dtype.itemsize} if dtype.kind in "SU" and characters >= _WHOLE_VALUE else set()


def _item_cuts(arrays: list[tuple[int, int, int, list[int]]], start: int, end: int, width: int) -> list[int]:
    """The characters, counted from a run's ``start``, at which a NumPy array's string items start or end within
    the run (a cut that falls inside a character of this width is not one of its items' edges)."""
    cuts = []
    for data_start, data_end, size, edges in arrays:
        first, last = max(start, data_start), min(end, data_end)
        if first >= last:
            continue
        for record in range((first - data_start) // size, (last - 1 - data_start) // size + 1):
            for edge in edges:
                at = data_start + record * size + edge
                if start < at < end and (at - start) % width == 0:
                    cuts.append((at - start) // width)
    return sorted(set(cuts))


def string_runs(data: bytes) -> list[tuple[int, int, str, str]]:
    """(start, bytes per character, byte order, text) of every string of ``data``, in every width: one scan,
    which a file's text reading and :func:`named_in_binary` can share."""
    return list(_strings(data))


# A value stored right after its credential's name, as a database row keeps its columns: "passwordJd3nF6hB1s"
_GLUED_NAMED = re.compile(r"(?i:password|passwd|secret|token|api_?key|access_?key|private_?key)([A-Z0-9][\w+/=.\-]{7,})")
_VALUE = re.compile(r"[^\s\"'<>{}\[\],;]{6,256}")


def named_in_binary(data: bytes, runs: list[tuple[int, int, str, str]] | None = None) -> list[str]:
    """The credentials the strings of ``data`` name (:func:`named_in_strings`), a name and its value read as a
    pair only where the value starts within :data:`_NEAR` bytes of the name's end (zero bytes, a fixed-width
    field's padding, aside), in the same width. ``runs``: its :func:`string_runs`, where they were read already.

    >>> named_in_binary(b"\\x80\\x04}\\x8c\\x08password\\x94\\x8c\\x0cQm7vT2xR9kL4\\x94.")
    ['Qm7vT2xR9kL4']
    >>> named_in_binary(b"\\x80\\x04}\\x8c\\x08password" + b"\\x01" * 40 + b"Qm7vT2xR9kL4\\x94.")
    []
    """
    strings: list[str] = []
    last: tuple[int, str, int] | None = None
    for start, width, order, text in sorted(string_runs(data) if runs is None else runs,
                                            key=lambda found: (found[1], found[2], found[0])):
        if len(text) < 2:  # a stray byte between two fields (a float's "?" glued to the value after it)
            continue
        if last is not None and (last[:2] != (width, order)
                                 or start - last[2] - data.count(b"\0", last[2], start) > _NEAR):
            strings.append("")  # no pair across a gap
        strings.append(text)
        last = (width, order, start + len(text) * width)
    return named_in_strings(strings)


def named_in_strings(strings: list[str]) -> list[str]:
    """The credentials a binary file names in its strings: a string that follows one naming a credential (a
    pickled ``{"password": X}`` keeps the name and the value as two strings), and a value glued to its name.

    >>> named_in_strings(["config", "password", "Qm7vT2xR9kL4", "epochs", "warmup", "tokenizer_config"])
    ['Qm7vT2xR9kL4']
    >>> named_in_strings(["notepasswordJd3nF6hB1sG5", "tokenizer_config2"])
    ['Jd3nF6hB1sG5']
    """
    found = [value for name, value in zip(strings, strings[1:])
             if _NAME.fullmatch(name.strip()) and credential_name(name.strip()) and _VALUE.fullmatch(value)
             and not _ordinary_word(value)]
    found += [glued[1] for text in strings for glued in _GLUED_NAMED.finditer(text)]
    return list(dict.fromkeys(found))


# Characters a masked span of a binary's string holds at least. Numbers stored as bytes make short strings by
# chance, and a few of them read as a credential's syntax ("b:)@jg" as user-info); a credential is no shorter than
# this, and the secrets given are masked, in every piece, by the scrub's byte search whatever this drops.
SHORTEST_MASKED = 8


def mask_strings_in_place(path: Path, data: bytes, secrets: list[str]) -> None:
    """Overwrite what the redaction masks in each string of ``data`` (the bytes of ``path``) by as many ``*``: a
    piece of a secret, its other cases and escapes, and credentials of a known shape, each span of at least
    :data:`SHORTEST_MASKED` characters (a binary of numbers, holding no secret, keeps every byte)."""
    found = list(_strings(data))
    texts = [_as_read(text) for *_, text in found]
    spans = []
    for (start, width, order, _), text, masked in zip(found, texts, _redacted(texts, secrets)):
        for low, high in _changed_spans(text, masked):
            if high - low >= SHORTEST_MASKED:
                spans.append((start + low * width, (high - low), width, order))
    if not spans:
        return
    with open(path, "r+b") as handle, mmap.mmap(handle.fileno(), 0) as mapped:
        for start, count, width, order in spans:
            star = b"*".rjust(width, b"\x00") if order == "big" else b"*".ljust(width, b"\x00")
            mapped[start:start + count * width] = star * count


def _as_read(text: str) -> str:
    """A binary's string as the redaction is to read it, as long as it is (the masked spans stay in place): a key
    glued to the bytes before it set apart, and a "?" that starts no query or an "@" before no host read as a blank.

    >>> _as_read("x?N2~Pw"), _as_read("GET /v1?token=Zq8XwV3kLm9P"), _as_read("https://h/v1?k=1")
    ('x N2~Pw', 'GET /v1?token=Zq8XwV3kLm9P', 'https://h/v1?k=1')
    >>> _as_read("6M8H:E=i@v"), _as_read("app:Pw-99x@db.internal/app"), _as_read("app:Pw-99x@db:5432")
    ('6M8H:E=i v', 'app:Pw-99x@db.internal/app', 'app:Pw-99x@db:5432')
    """
    text = _GLUED_KEY.sub(" ", text)
    if ("?" in text or "@" in text) and "://" not in text:
        text = "".join(" " if (char == "?" and not _BINARY_QUERY.match(text, at)
                                and not _PATH_END.search(text, max(0, at - 256), at))
                       or (char == "@" and not _BINARY_HOST.match(text, at)) else char for at, char in enumerate(text))
    return text


def _redacted(texts: list[str], secrets: list[str]) -> list[str]:
    """Each of ``texts`` redacted: all in one reading (a binary file holds many short strings), or one by one where
    a mask reached across the break between two."""
    joined = _STRING_BREAK.join(texts)
    masked = redact(joined, [*secrets, *output_secrets(joined)])
    if masked == joined:
        return texts
    pieces = masked.split(_STRING_BREAK)
    if len(pieces) == len(texts):
        return pieces
    return [redact(text, [*secrets, *output_secrets(text)]) for text in texts]


def _changed_spans(text: str, masked: str) -> list[tuple[int, int]]:
    """The character spans of ``text`` that do not survive unchanged into ``masked``, aligned word by word (a
    word that loses a piece is masked whole).

    >>> text = "ok token=ghp_0123456789abcdefghijABCDEFGHIJ0123456 end"
    >>> [text[a:b] for a, b in _changed_spans(text, redact(text))]
    ['ghp_0123456789abcdefghijABCDEFGHIJ0123456']
    """
    if masked == text:
        return []
    before, after = _TOKEN.findall(text), _TOKEN.findall(masked)
    offsets = [0]
    for token in before:
        offsets.append(offsets[-1] + len(token))
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    return [(offsets[i1], offsets[i2]) for tag, i1, i2, _, _ in matcher.get_opcodes() if tag in ("replace", "delete")
            and i2 > i1]
