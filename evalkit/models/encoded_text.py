"""Credentials written in an encoded form: a text read once more with its escapes decoded, and what that reading
shows to be a credential masked in the text as written.

A message, a reply or a log line can carry a credential nobody configured in a form the shapes of
:mod:`evalkit.models.key_shapes` do not read: every character ``\\u``-escaped (``\\u0073\\u006b-...``), the
name percent-encoded or written as HTML entities (``api%5Fkey%3D...``, ``api_key&#61;...``), or the value split
by a backslash-newline. :func:`encoded_credentials` decodes those escapes (only where the text has one) and
returns the credentials the shapes find in the decoded text; :func:`mask_written_forms` masks each of them
where it stands, character by character in any of those writings.
"""
from __future__ import annotations

import html
import re
from typing import Iterable, Sequence
from urllib.parse import unquote

__all__ = ["encoded_credentials", "mask_written_forms", "decoded_text"]

_ESCAPED = re.compile(r"%[0-9A-Fa-f]{2}|&#|&[A-Za-z]{2,8};|\\u[0-9A-Fa-f]{4}|\\x[0-9A-Fa-f]{2}|\\\r?\n")
_SPLIT = r"(?:\\\r?\n)?"  # a backslash-newline may stand between any two characters of a value
_MIN_VALUE = 6  # a decoded value shorter than this is not masked by its characters (it would mask words)


def decoded_text(text: str) -> str:
    """``text`` with backslash-newlines joined and ``\\u``/``\\x`` escapes, HTML character references and
    percent-escapes decoded (each once).

    >>> decoded_text(r"api%5Fkey%3Dab\\u0063 &#61; x\\x41")
    'api_key=abc = xA'
    """
    text = re.sub(r"\\\r?\n", "", text)
    text = re.sub(r"\\u([0-9A-Fa-f]{4})|\\x([0-9A-Fa-f]{2})", lambda m: chr(int(m[1] or m[2], 16)), text)
    return unquote(html.unescape(text))


def encoded_credentials(text: str, shapes: Sequence[tuple[re.Pattern, str]]) -> list[str]:
    """The credentials that ``shapes`` (pattern, replacement: ``r"\\1***"`` keeps the first group) find in the
    decoded ``text`` (at least 6 characters each); none where ``text`` has no escape to decode.

    >>> shape = (re.compile(r"(key=)[^&\\s]+"), r"\\1***")
    >>> encoded_credentials("key%3Dsecret-value-42 and key=plain1", [shape])
    ['secret-value-42', 'plain1']
    >>> encoded_credentials("no escape: key=plain1", [shape])
    []
    """
    if not _ESCAPED.search(text):
        return []
    decoded = decoded_text(text)
    if decoded == text:
        return []
    found: dict[str, None] = {}  # in the order found, each once (a dict: many matches cost no list scans)
    for pattern, replacement in shapes:
        keeps_first = replacement.startswith("\\1") and pattern.groups
        for match in pattern.finditer(decoded):
            value = match[0][len(match[1] or "") if keeps_first else 0:]
            if len(value) >= _MIN_VALUE:
                found.setdefault(value)
    return list(found)


def _written(character: str) -> str:
    """A pattern for one character as written bare, ``\\u``- or ``\\x``-escaped, percent-encoded or as an HTML
    character reference."""
    code = ord(character)
    forms = [re.escape(character), rf"\\u(?i:{code:04x})", rf"&#0*{code};", rf"&#(?i:x0*{code:x});"]
    if code < 256:
        forms += [rf"\\x(?i:{code:02x})", rf"%(?i:{code:02x})"]
    return f"(?:{'|'.join(forms)})"


def mask_written_forms(text: str, values: Iterable[str], mask: str) -> str:
    """``text`` with each of ``values`` masked however its characters are written (see :func:`_written`) and
    wherever a backslash-newline splits it.

    >>> mask_written_forms("t=\\\\u0073k-1234\\\\\\nabcd end", ["sk-1234abcd"], "***")
    't=*** end'
    """
    if not _ESCAPED.search(text):
        return text
    for value in sorted(set(values), key=len, reverse=True):
        if len(value) >= _MIN_VALUE:
            text = re.sub(_SPLIT.join(_written(c) for c in value), mask, text)
    return text
