"""A known secret, or any piece of it, inside an encoded run of text: base64 (also wrapped in MIME lines), base32,
hex (bare, ``0x``/``\\x``-prefixed or separated: a Go ``[]byte``; a dump over several lines), lists of byte
values or of characters (also numpy's, without commas), single characters joined by a separator, runs of
``%XX``, ``=XX`` (quoted-printable), ``\\uXXXX``, ``&#NN;`` or octal escapes (also mixed with plain characters, or
escaped twice), and Ascii85.

Each run is decoded (from every alignment where the encoding has one) and masked whole when its bytes hold any
``MIN_PIECE``-character piece of a secret, written as UTF-8, UTF-16 or UTF-32 text (or Latin-1), or, two layers
deep, are text holding such a run (hex of a ``Basic`` header); bytes that are a gzip or zlib stream (base64 of a
gzipped config) are read inflated, their first MiB. :func:`mask_encoded_pieces`
reads a text once per kind of run, and each run's bytes are searched once for all pieces together, so its time
grows with the text, not with the number of pieces.
"""
from __future__ import annotations

import base64
import binascii
import functools
import html
import re
import zlib
from typing import Callable, Iterable, Sequence

import numpy as np

__all__ = ["MIN_PIECE", "mask_encoded_pieces"]

MIN_PIECE = 6  # a piece of a secret this long, found in a run's decoding, masks the run
_MASK = "***"
_SHORT = 256  # bytes below which a reading is searched window by window
_ENCODINGS = ("utf-8", "utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be")


class _Pieces:
    """Every ``MIN_PIECE``-character piece of some secrets in each of the encodings, searched for in bytes by
    their first ``MIN_PIECE`` bytes at once (numpy compares every window of the bytes with all of them), then
    confirmed whole where one starts: time linear in the bytes, whatever the number of pieces."""

    def __init__(self, secrets: Iterable[str]):
        pieces = {secret[i:i + MIN_PIECE].encode(encoding, "surrogatepass")
                  for secret in secrets if isinstance(secret, str) and len(secret) >= MIN_PIECE
                  for i in range(len(secret) - MIN_PIECE + 1) for encoding in _ENCODINGS}
        pieces |= {secret[i:i + MIN_PIECE].encode("latin-1") for secret in secrets  # a non-ASCII secret in Latin-1
                   if isinstance(secret, str) and len(secret) >= MIN_PIECE and not secret.isascii()
                   and all(ord(c) < 256 for c in secret) for i in range(len(secret) - MIN_PIECE + 1)}
        self.by_head: dict[int, list[bytes]] = {}
        for piece in pieces:
            self.by_head.setdefault(self._number(piece[:MIN_PIECE]), []).append(piece)
        self.heads = np.array(sorted(self.by_head), dtype=np.uint64)

    @staticmethod
    def _number(window: bytes) -> int:
        return int.from_bytes(window, "little")

    def found_in(self, data: bytes) -> bool:
        """Whether ``data`` holds one of the pieces."""
        count = len(data) - MIN_PIECE + 1
        if count <= 0 or not len(self.heads):
            return False
        if count < _SHORT:  # a word's worth: looked up window by window (numpy's set-up would cost more)
            for start in range(count):
                head = self._number(data[start:start + MIN_PIECE])
                if head in self.by_head and any(data.startswith(piece, start) for piece in self.by_head[head]):
                    return True
            return False
        values = np.frombuffer(data, dtype=np.uint8).astype(np.uint64)
        windows = np.zeros(count, dtype=np.uint64)
        for index in range(MIN_PIECE):
            windows |= values[index:index + count] << np.uint64(8 * index)
        for start in np.flatnonzero(np.isin(windows, self.heads)):
            start = int(start)
            if any(data.startswith(piece, start) for piece in self.by_head[int(windows[start])]):
                return True
        return False


def _aligned_readings(body: str, group: int, short_tails: tuple[int, ...],
                      decode: Callable[[str], bytes]) -> list[bytes]:
    """``body`` decoded from each of its first ``group`` characters (base64 groups 4 characters, base32 8): a
    piece cut out of a longer encoded text starts anywhere in a group. A tail of one of the ``short_tails``
    lengths holds no whole byte and is dropped; a reading that still fails is skipped."""
    readings = []
    for offset in range(group):
        piece = body[offset:]
        tail = len(piece) % group
        if tail in short_tails:
            piece = piece[:len(piece) - tail]
        try:
            readings.append(decode(piece + "=" * (-len(piece) % group)))
        except (binascii.Error, ValueError):
            continue
    return readings


def _base64_readings(run: str) -> list[bytes]:
    """A base64 run (standard or URL-safe, its line breaks raw or escaped) read from each of its first four
    characters."""
    body = re.sub(r"\s|\\{1,2}[rn]", "", run).rstrip("=").replace("-", "+").replace("_", "/")
    return _aligned_readings(body, 4, (1,), base64.b64decode)


def _base32_readings(run: str) -> list[bytes]:
    """A base32 run, in either case, read from each of its first eight characters."""
    return _aligned_readings(run.rstrip("=").upper(), 8, (1, 3, 6), base64.b32decode)


def _hex_readings(run: str) -> list[bytes]:
    """A hex run: its pairs of digits (after any ``0x``/``\\x`` prefix or separator); a run of bare digits also
    from its second digit."""
    pairs = re.findall(r"(?:0[xX]|\\x)?([0-9A-Fa-f]{2})", run)
    readings = [bytes.fromhex("".join(pairs))]
    if re.fullmatch(r"[0-9A-Fa-f]+", run):
        readings.append(bytes.fromhex(run[1:len(run) - (len(run) - 1) % 2]))
    return readings


def _number_readings(run: str) -> list[bytes]:
    """A list of byte values (``[72, 120, 55]``, ``72;120;55``)."""
    values = [int(value) for value in re.findall(r"\d+", run)]
    return [bytes(values)] if all(value < 256 for value in values) else []


def _character_readings(run: str) -> list[bytes]:
    """A list of one-character strings (``['H', 'x', '7']``)."""
    return [bytes("".join(re.findall(r"[\"']([^\"'\\])[\"']", run)), "utf-8", "surrogatepass")]


def _joined_readings(run: str) -> list[bytes]:
    """Single characters joined by one separator (``P,w,9,x``): every character but the separators."""
    step = 3 if ", " in run[:3] else 2
    return [run[::step].encode("utf-8", "surrogatepass")]


def _dump_readings(run: str) -> list[bytes]:
    """A hex dump's lines: after each line's offset, its hex groups up to the first word that is not one (the
    text column)."""
    digits = []
    for line in run.splitlines():
        for word in line.split()[1:]:
            if not re.fullmatch(r"[0-9A-Fa-f]{2}|[0-9A-Fa-f]{4}", word):
                break
            digits.append(word)
    return [bytes.fromhex("".join(digits))]


def _octal_readings(run: str) -> list[bytes]:
    """Octal escapes of one to three digits (``\\120\\167``), one byte each."""
    return [bytes(int(code, 8) & 0xFF for code in re.findall(r"\\([0-7]{1,3})", run))]


def _escape_readings(run: str) -> list[bytes]:
    """A run of ``%XX``, ``=XX``, ``\\uXXXX`` or ``&#NN;`` escapes."""
    if run.startswith(("%", "=")):
        return [bytes.fromhex(run.replace("%", "").replace("=", ""))]
    if run.startswith("\\"):
        text = "".join(chr(int(code, 16)) for code in re.findall(r"\\u([0-9A-Fa-f]{4})", run))
    else:
        text = html.unescape(run)
    return [text.encode("utf-8", "surrogatepass")]


# (a backslash escape may be escaped once more: "\\\\u0051" is how a JSON file keeps a printed "\\u0051")
_ESCAPE = r"\\{1,2}u[0-9A-Fa-f]{4}|\\{1,2}x[0-9A-Fa-f]{2}|%[0-9A-Fa-f]{2}|&#(?:[0-9]{1,7}|[xX][0-9A-Fa-f]{1,6});"


def _mixed_readings(run: str) -> list[bytes]:
    """Escapes mixed with plain characters (every other character of a key ``\\u``-escaped, or ``%XX`` escaped
    twice: ``%2554%2566``): each escape read as its byte or character, the rest as written.

    >>> _mixed_readings("T\\u00665\\u0057x"), _mixed_readings("%2554%2566")
    ([b'Tf5Wx'], [b'%54%66'])
    """
    out = bytearray()
    done = 0
    for escape in re.finditer(_ESCAPE, run):
        out += run[done:escape.start()].encode("utf-8", "surrogatepass")
        code = escape[0]
        bare = code.lstrip("\\")
        if code.startswith("%") or bare.startswith("x"):
            out.append(int(code[-2:], 16))
        elif bare.startswith("u"):
            out += chr(int(bare[1:], 16)).encode("utf-8", "surrogatepass")
        else:
            out += html.unescape(code).encode("utf-8", "surrogatepass")
        done = escape.end()
    return [bytes(out + run[done:].encode("utf-8", "surrogatepass"))]


def _ascii85_readings(run: str) -> list[bytes]:
    """An Ascii85 text between ``<~`` and ``~>``."""
    try:
        return [base64.a85decode(run[2:-2], ignorechars=b" \t\n\r\v")]
    except ValueError:
        return []


# Each kind of run and how to read it. A run may end at a separator or a line break that is escaped; every
# pattern reads a run once (no two ways to split it), so the scan stays linear.
_RUNS: Sequence[tuple[re.Pattern[str], Callable[[str], list[bytes]]]] = (
    # (lines of any width: a first line under 8 characters only where another line follows)
    # (never from the letter of an escape: "\\n" in a JSON string stays whole)
    (re.compile(r"(?<!\\)(?:[A-Za-z0-9+/_\-]{8,}|[A-Za-z0-9+/_\-]{2,7}(?=(?:\r?\n|(?:\\{1,2}r)?\\{1,2}n)[A-Za-z0-9+/_\-]))"
                # (a line that does not end where its characters do, "label: ...", is no line of it)
                r"(?:(?:\r?\n|(?:\\{1,2}r)?\\{1,2}n)[A-Za-z0-9+/_\-]{1,76}(?![^\s\"'=\\]))*={0,2}"), _base64_readings),
    # (in one case, with a digit, a padding "=" or 13 capitals or more: words of prose are not read as base32)
    (re.compile(r"(?<![A-Za-z0-9\\])(?=[A-Za-z]*[2-7]|[A-Za-z]{10,}=|[A-Z]{13})(?:[A-Z2-7]{10,}|[a-z2-7]{10,})"
                r"={0,6}(?![A-Za-z0-9])"),
     _base32_readings),
    (re.compile(r"(?<![A-Za-z0-9])[0-9A-Fa-f]{12,}(?![0-9A-Za-z])"), _hex_readings),  # also at an odd start
    (re.compile(r"(?<![A-Za-z0-9])(?:(?:0[xX]|\\x)?[0-9A-Fa-f]{2}(?:, ?|[:;\-]|[ ]{1,2}|\t)?){5,}(?:0[xX]|\\x)?[0-9A-Fa-f]{2}"
                r"(?![0-9A-Za-z])"), _hex_readings),
    # byte values joined by commas, semicolons or spaces (a list, numpy's print, od -tu1)
    (re.compile(r"(?<![\w.])\d{1,3}(?:(?:\s*[,;]\s*|[ \t]+)\d{1,3}){5,}(?![\w.])"), _number_readings),
    (re.compile(r"[\"'][^\"'\\][\"'](?:\s*,?\s*[\"'][^\"'\\][\"']){5,}"), _character_readings),
    # single characters joined by one separator repeated (P,w,9,x or P w 9 x)
    (re.compile(r"(?<!\S)[^\s,;](?P<joint>[,;]|[ ]|, )(?:[^\s,;](?P=joint)){4,}[^\s,;](?!\S)"), _joined_readings),
    # a hex dump over several lines (xxd, hexdump -C, od -tx1): its hex columns read as one run
    (re.compile(r"(?m)(?:^[0-9A-Fa-f]{4,8}:?[ \t]+[0-9A-Fa-f]{2,4}(?:[ \t]+[0-9A-Fa-f]{2,4})*[^\n]*(?:\n|$))+"),
     _dump_readings),
    (re.compile(r"(?:\\[0-7]{1,3}){4,}"), _octal_readings),  # octal escapes of any width (\120\167\71)
    (re.compile(r"(?:%[0-9A-Fa-f]{2}){3,}|(?:=[0-9A-F]{2}){3,}|(?:\\{1,2}u[0-9A-Fa-f]{4}){3,}"
                r"|(?:&#(?:[0-9]{1,7}|[xX][0-9A-Fa-f]{1,6});){3,}"),
     _escape_readings),
    (re.compile(r"<~[!-uz\s]{1,65536}?~>"), _ascii85_readings),
    # escapes mixed with up to 4 plain characters between them (no plain character starts an escape: linear)
    (re.compile(rf"(?:[A-Za-z0-9_.~+/:@!$*\-]{{0,4}}(?:{_ESCAPE})){{2,}}[A-Za-z0-9_.~+/:@!$*\-]{{0,4}}"),
     _mixed_readings),
)


@functools.lru_cache(maxsize=16)
def _pieces_of(secrets: tuple[str, ...]) -> _Pieces:
    """The pieces of ``secrets``, made once for the many texts one scrub masks with the same secrets."""
    return _Pieces(secrets)


def mask_encoded_pieces(text: str, secrets: Sequence[str]) -> str:
    """``text`` with each encoded run masked whose decoding holds a piece (``MIN_PIECE`` characters or more) of
    one of ``secrets``.

    >>> import base64
    >>> secret = "Hx7!kQ2m"
    >>> mask_encoded_pieces(f"hex {secret[1:].encode().hex()} b64 {base64.b64encode(b'u:' + secret.encode()).decode()}",
    ...                     [secret])
    'hex *** b64 ***'
    >>> mask_encoded_pieces(f"{list(secret)} and {list(secret.encode())} and 48656c6c6f20776f726c64", [secret])
    '[***] and [***] and 48656c6c6f20776f726c64'
    >>> basic = b"Authorization: Basic " + base64.b64encode(b"root:" + secret.encode())
    >>> mask_encoded_pieces(f"xxd -p: {basic.hex()}", [secret])
    'xxd -p: ***'
    """
    pieces = _pieces_of(tuple(secrets))
    if not pieces.by_head:
        return text
    return _masked_runs(text, pieces, _LAYERS)


_LAYERS = 2  # a run whose decoding is itself text with an encoded run in it (hex of a Basic header) is read this deep
_READABLE = re.compile(rb"[\t\n\r\x20-\x7e]{8,}")


_MAX_INFLATED = 2**20  # bytes of a compressed reading (base64 of a gzip) read for pieces


def zlib_header(head: bytes) -> bool:
    """Whether ``head`` begins with a zlib stream's header: deflate, any window, no preset dictionary, and the
    check bits that make the first two bytes a multiple of 31.

    >>> zlib_header(zlib.compress(b"x")), zlib_header(b"x\\x9c"), zlib_header(b"plain")
    (True, True, False)
    """
    return (len(head) >= 2 and head[0] & 0x0F == 8 and head[0] >> 4 <= 7 and not head[1] & 0x20
            and (head[0] * 256 + head[1]) % 31 == 0)


def _inflated(reading: bytes) -> bytes | None:
    """The first :data:`_MAX_INFLATED` bytes a gzip or zlib stream inflates to (base64 of a gzipped config), or None
    when ``reading`` is no such stream.

    >>> import gzip; _inflated(gzip.compress(b"token=abc")), _inflated(b"plain")
    (b'token=abc', None)
    """
    if not (reading[:2] == b"\x1f\x8b" or zlib_header(reading)):
        return None
    try:
        return zlib.decompressobj(wbits=47).decompress(reading, _MAX_INFLATED) or None
    except zlib.error:
        return None


def _masked_runs(text: str, pieces: _Pieces, layers: int) -> str:
    """``text`` with each run masked whose decoding holds a piece, or, ``layers`` deep, whose decoding is text in
    which such a run stands: ``xxd -p`` of ``Authorization: Basic <base64 of user:password>``."""
    def found(reading: bytes) -> bool:
        if pieces.found_in(reading):
            return True
        inflated = _inflated(reading)  # base64 of a gzip: its text is read, and its runs one layer deeper
        if inflated is not None:
            if pieces.found_in(inflated):
                return True
            reading = inflated
        if layers > 1 and _READABLE.fullmatch(reading):
            inner = reading.decode("ascii")
            return _masked_runs(inner, pieces, layers - 1) != inner
        return False

    def masked(run: re.Match, read: Callable[[str], list[bytes]]) -> str:
        return _MASK if any(found(reading) for reading in read(run[0])) else run[0]

    for pattern, read in _RUNS:
        text = pattern.sub(lambda run: masked(run, read), text)
    return text
