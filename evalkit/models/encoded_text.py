"""Credentials written in an encoded form: a text read once more with its escapes decoded, and what that reading
shows to be a credential masked in the text as written.

A message, a reply or a log line can carry a credential nobody configured in a form the shapes of
:mod:`evalkit.models.key_shapes` do not read: every character ``\\u``-escaped (``\\u0073\\u006b-...``), the
name percent-encoded (once or twice: ``api%255Fkey``) or written as HTML entities (``api_key&#61;...``), in
full-width letters (``ｐａｓｓｗｏｒｄ``), with invisible characters or a terminal's colour codes between its
letters, a character escaped in another language's form (``\\u{73}``, ``\\U00000073``, ``%u0073``, octal
``\\163``, CSS ``\\73 ``), or the value split by a backslash-newline. :func:`decoded_reading` decodes those
writings in one pass per layer and keeps, for each decoded character, where it was written;
:func:`mask_encoded_credentials` masks what the shapes find in the decoded text, and :func:`mask_written_forms` a
known value, at the places they were written. Both take time linear in the text, however many credentials it
holds.
"""
from __future__ import annotations

import html
import re
import unicodedata
from typing import Iterable, Sequence

__all__ = ["decoded_text", "decoded_reading", "shaped_spans", "mask_encoded_credentials", "mask_written_forms"]

_TOKEN = re.compile(r"(?P<split>\\\r?\n)"
                    r"|(?P<hex>\\u[0-9A-Fa-f]{4}|\\x[0-9A-Fa-f]{2}|\\u\{[0-9A-Fa-f]{1,6}\}|\\U[0-9A-Fa-f]{8}"
                    r"|%u[0-9A-Fa-f]{4})|(?P<octal>\\[0-3][0-7]{2})"
                    # CSS: 1-6 hex digits ended by one space (which the escape takes), or six
                    r"|(?P<css>\\[0-9A-Fa-f]{1,6} |\\[0-9A-Fa-f]{6})"
                    r"|(?P<entity>&#[0-9]{1,7};?|&#[xX][0-9A-Fa-f]{1,6};?|&[A-Za-z]{2,8};)"
                    r"|(?P<percent>(?:%[0-9A-Fa-f]{2})+)"
                    # characters drawn as nothing: soft hyphen, joiners and marks, isolates, variation selectors,
                    # Hangul fillers, tags, NUL; a terminal's colour and cursor codes (ESC [ ... m)
                    r"|(?P<invisible>\x1b\[[0-?]{0,32}[ -/]{0,4}[@-~]|[\x00\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
                    r"\u202a-\u202e\u2060-\u206f\u2800\u3164\ufe00-\ufe0f\ufeff\uffa0\U0001d173-\U0001d17a"
                    r"\U000e0000-\U000e007f])"
                    r"|(?P<wide>[\uff01-\uff5e]+)|(?P<letterlike>[\U0001d400-\U0001d7ff]+)")
_LAYERS = 3  # an escape inside an escape (%2541, &#37;41) is read up to this deep
_MIN_VALUE = 6  # a decoded value shorter than this is not masked by its characters (it would mask words)
_SEARCHED_VALUES = 64  # the values looked for everywhere else in a text (each costs a scan of it)


def _decode_layer(text: str) -> tuple[str, list[int], list[int]]:
    """One layer of ``text``'s escapes decoded, with the written start and end of each decoded character."""
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    done = 0
    for token in _TOKEN.finditer(text):
        start, end = token.span()
        out.append(text[done:start])
        starts.extend(range(done, start))
        ends.extend(range(done + 1, start + 1))
        done = end
        kind, written = token.lastgroup, token[0]
        if kind in ("split", "invisible"):
            continue
        if kind == "hex":
            code = int(re.sub(r"^(?:\\[uUx]\{?|%u)|\}$", "", written), 16)
            decoded = chr(code) if code <= 0x10FFFF else "\ufffd"
        elif kind == "css":
            code = int(written[1:].rstrip(" "), 16)
            decoded = chr(code) if 0 < code <= 0x10FFFF else "\ufffd"
        elif kind == "octal":
            decoded = chr(int(written[1:], 8))
        elif kind == "entity":
            decoded = html.unescape(written)
        elif kind == "percent":
            decoded = bytes.fromhex(written.replace("%", "")).decode("utf-8", "replace")
            if len(decoded) * 3 == len(written):  # one byte per character: each kept to its own escape
                out.append(decoded)
                starts.extend(range(start, end, 3))
                ends.extend(range(start + 3, end + 1, 3))
                continue
        elif kind == "letterlike":  # mathematical bold, italic... letters and digits, one by one
            out.append("".join(unicodedata.normalize("NFKC", c)[:1] or c for c in written))
            starts.extend(range(start, end))
            ends.extend(range(start + 1, end + 1))
            continue
        else:  # full-width letters, one by one
            out.append("".join(chr(ord(c) - 0xFEE0) for c in written))
            starts.extend(range(start, end))
            ends.extend(range(start + 1, end + 1))
            continue
        out.append(decoded)
        starts.extend([start] * len(decoded))
        ends.extend([end] * len(decoded))
    out.append(text[done:])
    starts.extend(range(done, len(text)))
    ends.extend(range(done + 1, len(text) + 1))
    return "".join(out), starts, ends


def decoded_reading(text: str) -> tuple[str, list[int], list[int]]:
    """``text`` with every layer of its escapes decoded (backslash-newlines and invisible characters dropped;
    ``\\u``/``\\x`` escapes, HTML character references, percent-escapes and full-width letters read as what
    they write), and for each decoded character the start and end of where ``text`` writes it.

    >>> decoded, starts, ends = decoded_reading("k%253D\\\\u0076")
    >>> decoded, starts, ends
    ('k=v', [0, 1, 6], [1, 6, 12])
    """
    decoded, starts, ends = text, list(range(len(text))), list(range(1, len(text) + 1))
    for _ in range(_LAYERS):
        if not _TOKEN.search(decoded):
            break
        decoded, layer_starts, layer_ends = _decode_layer(decoded)
        starts = [starts[i] for i in layer_starts]
        ends = [ends[i - 1] for i in layer_ends]
    return decoded, starts, ends


def decoded_text(text: str) -> str:
    """``text`` as :func:`decoded_reading` reads it.

    >>> decoded_text(r"api%5Fkey%3Dab\\u0063 &#61; x\\x41 ｋｅｙ p\\u200bw")
    'api_key=abc = xA key pw'
    """
    return decoded_reading(text)[0]


def _masked(text: str, spans: Iterable[tuple[int, int]], mask: str) -> str:
    """``text`` with each of ``spans`` (overlapping ones merged) replaced by ``mask``."""
    out, done = [], 0
    for start, end in sorted(spans):
        if end <= done:
            continue
        start = max(start, done)
        if start > done or not out:
            out += [text[done:start], mask]
        done = end
    return "".join(out) + text[done:] if out else text


def _occurrences(decoded: str, value: str) -> Iterable[tuple[int, int]]:
    """Where ``value`` stands in ``decoded``, each start once."""
    index = decoded.find(value)
    while index >= 0:
        yield index, index + len(value)
        index = decoded.find(value, index + 1)


def _written_spans(spans: Iterable[tuple[int, int]], starts: list[int], ends: list[int]) -> list[tuple[int, int]]:
    """Spans of the decoded text as spans of the text as written."""
    return [(starts[start], ends[end - 1]) for start, end in spans if end > start]


def shaped_spans(text: str, shapes: Sequence[tuple[re.Pattern, str]]) -> list[tuple[int, int]]:
    """Where ``shapes`` (pattern, replacement: ``r"\\1***"`` keeps the first group, ``...\\2`` the second) find a
    value of at least 6 characters in ``text``: the part each replacement masks.

    >>> shaped_spans("a key=secret-value-42 b key=x", [(re.compile(r"(key=)[^&\\s]+"), r"\\1***")])
    [(6, 21)]
    """
    spans = []
    for pattern, replacement in shapes:
        keeps_first = replacement.startswith("\\1") and pattern.groups >= 1
        keeps_second = replacement.endswith("\\2") and pattern.groups >= 2
        for match in pattern.finditer(text):
            start = match.end(1) if keeps_first and match[1] is not None else match.start()
            end = match.start(2) if keeps_second and match[2] is not None else match.end()
            while start < end and text[start].isspace():  # "Bearer" + " ***" keeps the space
                start += 1
            if end - start >= _MIN_VALUE:
                spans.append((start, end))
    return spans


def mask_encoded_credentials(text: str, shapes: Sequence[tuple[re.Pattern, str]], mask: str) -> str:
    """``text`` with what ``shapes`` (pattern, replacement: ``r"\\1***"`` keeps the first group, ``...\\2`` the
    second) find in its decoded reading masked where it is written, and each such value of at least 6
    characters wherever else it stands, however written. A text with no escape is returned as it is.

    >>> shape = (re.compile(r"(key=)[^&\\s]+"), r"\\1***")
    >>> mask_encoded_credentials("key%3Dsecret-value-42 and echo secret%2Dvalue%2D42", [shape], "***")
    'key%3D*** and echo ***'
    >>> mask_encoded_credentials("no escape: key=plain1", [shape], "***")
    'no escape: key=plain1'
    """
    if not _TOKEN.search(text):
        return text
    decoded, starts, ends = decoded_reading(text)
    spans = shaped_spans(decoded, shapes)
    values = dict.fromkeys(decoded[start:end] for start, end in spans)  # in the order found, each once
    for value in list(values)[:_SEARCHED_VALUES]:
        spans.extend(_occurrences(decoded, value))
    return _masked(text, _written_spans(spans, starts, ends), mask)


def mask_written_forms(text: str, values: Iterable[str], mask: str) -> str:
    """``text`` with each of ``values`` (of at least 6 characters) masked wherever its decoded reading holds it:
    however its characters are written, and wherever a backslash-newline or an invisible character splits it.

    >>> mask_written_forms("t=\\\\u0073k-1234\\\\\\nabcd end", ["sk-1234abcd"], "***")
    't=*** end'
    """
    if not _TOKEN.search(text):
        return text
    decoded, starts, ends = decoded_reading(text)
    spans = [span for value in dict.fromkeys(values) if len(value) >= _MIN_VALUE
             for span in _occurrences(decoded, value)]
    return _masked(text, _written_spans(spans, starts, ends), mask)
