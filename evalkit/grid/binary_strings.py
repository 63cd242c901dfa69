"""The strings of a binary file, as `strings` finds them — runs of printable ASCII, alone or as UTF-16 or UTF-32
code units (numpy keeps its text arrays as UTF-32) — and what the redaction masks in them, overwritten in place by
as many ``*`` so the file keeps its length and its format's offsets."""
from __future__ import annotations

import bisect
import difflib
import mmap
import re
from pathlib import Path
from typing import Iterator

from evalkit.models import redact
from evalkit.models.key_shapes import _KEY_PREFIX
from evalkit.models.redaction import _ordinary_word
from evalkit.grid.credential_names import credential_name
from evalkit.grid.printed_secrets import output_secrets

__all__ = ["binary_strings", "mask_strings_in_place", "named_in_strings"]

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


def _strings(data: bytes) -> Iterator[tuple[int, int, str, str]]:
    """(start, bytes per character, byte order, text) of every string of ``data``. A run of one order that
    overlaps one of the other order in the same width is the same text read a byte off, and is left out.

    >>> data = b"\x01\x02hello world\x01\x01" + "wide one".encode("utf-16-le") + b"\x01"
    >>> [(s, w, t) for s, w, _, t in _strings(data)]
    [(2, 1, 'hello world'), (15, 2, 'wide one')]
    """
    starts: dict[int, list[int]] = {}  # the little-endian runs of each width, in order (they never overlap)
    ends: dict[int, list[int]] = {}
    for pattern, width, order in _RUNS:
        for run in pattern.finditer(data):
            if order == "little":
                starts.setdefault(width, []).append(run.start())
                ends.setdefault(width, []).append(run.end())
            else:  # the first little-endian run ending after this one starts must start after it ends
                index = bisect.bisect_right(ends.get(width, []), run.start())
                if index < len(starts.get(width, [])) and starts[width][index] < run.end():
                    continue
            yield run.start(), width, order, run.group()[(width - 1 if order == "big" else 0)::width].decode("ascii")


def binary_strings(data: bytes) -> list[str]:
    """The strings of ``data``, in every width."""
    return [text for _, _, _, text in _strings(data)]


# A value stored right after its credential's name, as a database row keeps its columns: "passwordJd3nF6hB1s"
_GLUED_NAMED = re.compile(r"(?i:password|passwd|secret|token|api_?key|access_?key|private_?key)([A-Z0-9][\w+/=.\-]{7,})")
_VALUE = re.compile(r"[^\s\"'<>{}\[\],;]{6,256}")


def named_in_strings(strings: list[str]) -> list[str]:
    """The credentials a binary file names in its strings: a string that follows one naming a credential (a
    pickled ``{"password": X}`` keeps the name and the value as two strings), and a value glued to its name.

    >>> named_in_strings(["config", "password", "Qm7vT2xR9kL4", "epochs", "warmup", "tokenizer_config"])
    ['Qm7vT2xR9kL4']
    >>> named_in_strings(["notepasswordJd3nF6hB1sG5", "tokenizer_config2"])
    ['Jd3nF6hB1sG5']
    """
    found = [value for name, value in zip(strings, strings[1:])
             if credential_name(name.strip()) and _VALUE.fullmatch(value) and not _ordinary_word(value)]
    found += [glued[1] for text in strings for glued in _GLUED_NAMED.finditer(text)]
    return list(dict.fromkeys(found))


def mask_strings_in_place(path: Path, data: bytes, secrets: list[str]) -> None:
    """Overwrite what the redaction masks in each string of ``data`` (the bytes of ``path``) by as many ``*``: a
    piece of a secret, its other cases and escapes, and credentials of a known shape."""
    found = list(_strings(data))
    texts = [_GLUED_KEY.sub(" ", text) for *_, text in found]  # as long as the strings: the spans stay in place
    spans = []
    for (start, width, order, _), text, masked in zip(found, texts, _redacted(texts, secrets)):
        for low, high in _changed_spans(text, masked):
            spans.append((start + low * width, (high - low), width, order))
    if not spans:
        return
    with open(path, "r+b") as handle, mmap.mmap(handle.fileno(), 0) as mapped:
        for start, count, width, order in spans:
            star = b"*".rjust(width, b"\x00") if order == "big" else b"*".ljust(width, b"\x00")
            mapped[start:start + count * width] = star * count


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
