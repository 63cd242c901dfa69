"""What a unit leaves in its folder, scrubbed of credentials: every file (an executed notebook shows its parameters
cell; a command may write logs, tables and binaries there) and every name.

A text goes through the redaction (:func:`evalkit.models.redact`) in every reading its bytes allow (UTF-8, UTF-16
or UTF-32 by a byte-order mark or by its zero bytes, Latin-1 for a text with a stray byte) up to 16 MB. A binary
file's strings (runs of printable ASCII, or of UTF-16 ASCII) go through it too, up to 16 MB, and what it masks is
overwritten by as many ``*`` in place. Every file, text or not, then has each secret's bytes (UTF-8/16/32, hex,
base64) overwritten in place, so a binary keeps its length and its format's offsets. A name, a link's target or an
extended attribute holding a secret is renamed, re-pointed or removed. Links are not followed, and a file with
other hard links is first made a copy of its own, so no file outside the folder is ever changed; a file that
cannot be scrubbed, even made writable, is removed (it may hold a secret).
"""
from __future__ import annotations

import base64
import codecs
import difflib
import mmap
import os
import re
import shutil
from pathlib import Path

from evalkit.models import redact
from evalkit.grid.printed_secrets import output_secrets

__all__ = ["scrub_folder"]

# A larger file is masked by the secrets' bytes only: the redaction reads about 0.3 MB of log lines a second, and
# a unit's scrub is not bounded by its time limit
_TEXT_BYTES = 16 * 2**20
_TEXT_BYTE_VALUES = bytes(range(9, 14)) + bytes(range(32, 256))  # what a text's bytes are, control codes aside
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF16_LE, "utf-16"),
         (codecs.BOM_UTF16_BE, "utf-16"))


def scrub_folder(folder: Path, secrets: list[str]) -> None:
    """Mask ``secrets`` and the credentials the redaction finds in every file under ``folder`` and in every name
    there (deepest first, so a folder is renamed after what it holds)."""
    for path in sorted(folder.rglob("*"), key=lambda p: len(p.parts), reverse=True):
        _drop_secret_attributes(path, secrets)
        if path.is_symlink():
            _repoint_if_secret(path, secrets)
        elif path.is_file() and path.stat().st_size > 0:
            try:
                _scrub_file(path, secrets)
            except OSError:
                try:
                    path.chmod(path.stat().st_mode | 0o600)
                    _scrub_file(path, secrets)
                except OSError:
                    path.unlink(missing_ok=True)
        _rename_if_secret(path, secrets)


def _rename_if_secret(path: Path, secrets: list[str]) -> None:
    """Rename ``path`` when its name holds a credential (``cache-<key>.json`` becomes ``cache-***.json``)."""
    masked = redact(path.name, secrets).replace("/", "_")
    if masked == path.name or not os.path.lexists(path):
        return
    target, number = path.with_name(masked), 1
    while os.path.lexists(target):
        number += 1
        target = path.with_name(f"{masked}.{number}")
    os.rename(path, target)


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
    return any(form in data for form in _byte_forms(secrets))


def _own_copy(path: Path) -> None:
    """Make ``path`` a file of its own when other hard links share it (one may lie outside the folder)."""
    if path.stat().st_nlink > 1:
        copy = path.with_name(path.name + ".scrub")
        shutil.copyfile(path, copy)
        os.replace(copy, path)


def _encodings(data: bytes) -> list[str]:
    """The readings of ``data`` as text: by its byte-order mark, else UTF-16 where its zero bytes say so (ASCII
    text with a zero after or before each byte), then UTF-8 or, for a text with a stray byte, Latin-1; none for
    binary data."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            return [name, "utf-8"]
    head = data[:4096 if len(data) > 4096 else len(data) // 2 * 2]  # a stray last byte leaves UTF-16 text UTF-16
    readings = []
    if head[1::2].count(0) > len(head) // 4:
        readings.append("utf-16-le")
    elif head[0::2].count(0) > len(head) // 4:
        readings.append("utf-16-be")
    try:
        data.decode("utf-8")
        readings.append("utf-8")
    except UnicodeDecodeError:
        if len(data.translate(None, _TEXT_BYTE_VALUES)) <= len(data) // 100:
            readings.append("latin-1")
    return readings


def _scrub_file(path: Path, secrets: list[str]) -> None:
    _own_copy(path)
    if path.stat().st_size <= _TEXT_BYTES:
        data = path.read_bytes()
        encodings = _encodings(data)
        for encoding in encodings:
            # UTF-16 and UTF-32 are read in whole code units; a stray last byte is kept as it is
            whole = len(data) - len(data) % (4 if "32" in encoding else 2 if "16" in encoding else 1)
            try:
                text = data[:whole].decode(encoding)
            except UnicodeDecodeError:
                continue
            masked = redact(text, [*secrets, *output_secrets(text)])
            if masked != text:
                data = masked.encode(encoding, "surrogatepass") + data[whole:]
                path.write_bytes(data)
        if not encodings:
            _mask_strings_in_place(path, data, secrets)
    _mask_bytes_in_place(path, secrets)  # whatever the readings saw: the secrets' own bytes


def _byte_forms(secrets: list[str]) -> set[bytes]:
    """Each secret's bytes as UTF-8, UTF-16 or UTF-32 text, and written whole in hex (either case) or base64: what a
    binary file may hold (nine forms a secret: each is one scan of the file)."""
    forms: set[bytes] = set()
    for secret in (secret for secret in secrets if len(secret) >= 4):
        raw = secret.encode("utf-8", "surrogatepass")
        forms |= {secret.encode(encoding, "surrogatepass") for encoding in ("utf-8", "utf-16-le", "utf-16-be",
                                                                                "utf-32-le", "utf-32-be")}
        forms |= {raw.hex().encode(), raw.hex().upper().encode(), base64.b64encode(raw).rstrip(b"="),
                  base64.urlsafe_b64encode(raw).rstrip(b"=")}
    return {form for form in forms if len(form) >= 4}


def _mask_bytes_in_place(path: Path, secrets: list[str]) -> None:
    """Overwrite each of ``secrets`` (:func:`_byte_forms`) in ``path`` with as many ``*``: a binary file (a
    checkpoint, a picture, a parquet table) keeps its length and so its format's offsets."""
    forms = _byte_forms(secrets)
    if not forms or path.stat().st_size == 0:
        return
    with open(path, "r+b") as handle, mmap.mmap(handle.fileno(), 0) as data:
        for form in sorted(forms, key=len, reverse=True):
            index = data.find(form)
            while index >= 0:
                data[index:index + len(form)] = b"*" * len(form)
                index = data.find(form, index + len(form))


# The strings of a binary file, as `strings` finds them: runs of printable ASCII, and of ASCII as UTF-16
_ASCII_RUN = re.compile(rb"[\t\n\r\x20-\x7e]{6,}")
_UTF16_RUN = re.compile(rb"(?:[\t\n\r\x20-\x7e]\x00){6,}")
_TOKEN = re.compile(r"\w+|\W")


def _mask_strings_in_place(path: Path, data: bytes, secrets: list[str]) -> None:
    """Overwrite what the redaction masks in each string of a binary file (:data:`_ASCII_RUN`,
    :data:`_UTF16_RUN`) by as many ``*``: a piece of a secret, its other cases and escapes, and credentials of a
    known shape, in a file whose format's offsets must stay."""
    spans = []
    for pattern, width in ((_ASCII_RUN, 1), (_UTF16_RUN, 2)):
        runs = list(pattern.finditer(data))
        texts = [run.group().decode("utf-16-le" if width == 2 else "ascii") for run in runs]
        for run, text, masked in zip(runs, texts, _redacted(texts, secrets)):
            for start, end in _changed_spans(text, masked):
                spans.append((run.start() + start * width, run.start() + end * width, width))
    if not spans:
        return
    with open(path, "r+b") as handle, mmap.mmap(handle.fileno(), 0) as mapped:
        for start, end, width in spans:
            mapped[start:end] = (b"*" if width == 1 else b"*\x00") * ((end - start) // width)


# Between strings read at once: no string holds it, and the redaction reads its "\x1e" as a blank, as it does "\n"
_STRING_BREAK = "\n\x1e\n"


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
