"""How a known secret may be written, and masking it wherever it stands: whole (bare, URL-quoted, JSON-escaped;
one of ``MIN_ENCODED`` characters or more also base64-encoded, case-changed, ``\\u``-escaped or percent-encoded),
by any run of ``MIN_FRAGMENT`` characters of it that is not one ordinary word, and by any such piece inside an
encoded run of text (:mod:`evalkit.models.encoded_runs`). :mod:`evalkit.models.redaction`
builds on these, and so does every record the kit shares (:func:`mask_secrets` for a setting's text,
:func:`mask_echoes` for a model's reply).
"""
from __future__ import annotations

import base64
import binascii
import functools
import html
import json
import re
import unicodedata
from typing import Iterable, Sequence
from urllib.parse import quote, unquote

from evalkit.models.encoded_runs import mask_encoded_pieces
from evalkit.models.encoded_text import mask_written_forms
from evalkit.models.secret_blocks import mask_encoded_secrets

__all__ = ["MASK", "MIN_FRAGMENT", "MAX_WORD", "MIN_ENCODED", "mask_secrets", "mask_echoes", "piece_sources",
           "piece_stays", "base64_forms", "base85_forms"]

MASK = "***"
MIN_FRAGMENT = 6  # a run this long of a configured secret is masked wherever it appears
MAX_WORD = 12  # ... unless it is one ordinary word no longer than this (OPENAI, Bearer)
_LONG_WORD = 8  # ... and, if it is half the secret or more, shorter than this
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+")
_MIN_SECRET = 4  # shorter "secrets" are not masked in free text (they would mask ordinary words)


def mask_secrets(text: str, secrets: Sequence[str]) -> str:
    """``text`` with each of ``secrets`` (bare, URL-quoted or JSON-escaped) masked and nothing else changed: for
    a text that is no message (a model's name, a setting), where :func:`redact`'s shapes would alter ordinary
    words.

    >>> mask_secrets("model k3y-0123456789 at q?x=1", ["k3y-0123456789"])
    'model *** at q?x=1'
    """
    for variant in _variants(secrets):
        text = text.replace(variant, MASK)
    return text


def mask_echoes(text: str, secrets: Sequence[str], *, layers: int = 2) -> str:
    """A model's reply with each of ``secrets`` it echoes masked, whole (bare, URL-quoted or JSON-escaped), by
    any run of ``MIN_FRAGMENT`` characters or more (an endpoint repeating a cut piece of its key) and inside
    base64 of a text, ``layers`` deep (a run of base64 whose text holds one is masked whole), and
    nothing else changed: unlike :func:`redact`, no shape of a credential is looked for, so a model's words,
    URLs and ``key=value`` texts stay as written. What a backend stores in its call cache and hands on to
    cards and reports goes through this.

    >>> mask_echoes("echo: S3cretPas and https://h/?q=1 key=v", ["S3cretPassw0rd99x"])
    'echo: *** and https://h/?q=1 key=v'
    """
    variants = _variants(secrets)
    # escaped character by character (a UTF-8 byte at a time too: its reading is the secret's mojibake), or split
    # by a line break
    text = mask_written_forms(text, variants, MASK)
    encoded = _encoded_variants(secrets)
    for variant in [*variants, *encoded]:
        text = text.replace(variant, MASK)
    text = _mask_wrapped(text, encoded)  # an encoded writing wrapped over lines or spaced in groups
    text = mask_encoded_pieces(text, secrets)  # any piece in an encoded run (base64 of "user:pw", a hex dump)
    text = _mask_grouped(text, secrets)  # printed in groups ("Zq8X wV3k ..."), or split by dashes or tags
    text = _mask_fragments(text, piece_sources(secrets))
    if layers and secrets and len(text) >= 20:  # base64 of a text that holds one (a .dockerconfigjson)
        text = mask_encoded_secrets(text, lambda decoded: mask_echoes(decoded, secrets, layers=layers - 1))
    return text


MIN_ENCODED = 12  # a secret this long is masked also base64-encoded, in lower or upper case and JSON-\u-escaped
_MIN_ENCODED_PIECE = 8  # the part of a secret's base64 that no neighbouring byte changes, at least this long


def _encoded_variants(secrets: Iterable[str]) -> list[str]:
    """:func:`_encoded_variants_of` ``secrets``, made once for the many texts one scrub masks with them."""
    return list(_encoded_variants_of(tuple(secrets)))


@functools.lru_cache(maxsize=16)
def _encoded_variants_of(secrets: tuple[str, ...]) -> tuple[str, ...]:
    """Other writings of each secret of at least ``MIN_ENCODED`` characters, masked whole only (their pieces
    would mask ordinary text): base64 (standard and URL-safe, with and without padding, and the part that stays the
    same inside a longer base64 text at any alignment), base32 and base32hex (either case), Ascii85 and base85
    (also at any alignment), hex,
    quoted-printable, uuencoding, a bytes object's
    printing, lower and upper case, every character ``\\u``-escaped (either case of hex digits), every byte percent-encoded,
    its bytes as numbers (decimal, hex or octal, joined by commas, colons, dots or spaces) and its code points
    (``U+0047 U+0076 ...``); longest first.

    >>> "c2stMDEyMzQ1Njc4OWFi" in _encoded_variants(["sk-0123456789ab"]), _encoded_variants(["short"])
    (True, [])
    """
    found: set[str] = set()
    for secret in secrets:
        if not isinstance(secret, str) or len(secret) < MIN_ENCODED:
            continue
        raw = secret.encode("utf-8", "surrogatepass")
        found.update(form.decode("ascii") for form in base64_forms(raw))
        found.update((raw.hex(), raw.hex().upper(), secret[::-1]))
        for encode in (base64.b32encode, base64.b32hexencode):  # base32 and its "extended hex" alphabet, any case
            written = encode(raw).decode("ascii")
            found.update((written, written.rstrip("="), written.lower(), written.lower().rstrip("=")))
        # the secret as a list of its bytes or characters (a Buffer's JSON, a hex dump, od -b, a list of characters)
        for joiner in (",", ", ", ":", " ", ";", "; ", "."):
            found.update((joiner.join(str(b) for b in raw), joiner.join(f"{b:02x}" for b in raw),
                          joiner.join(f"{b:02X}" for b in raw), joiner.join(f"0x{b:02x}" for b in raw),
                          joiner.join(json.dumps(c) for c in secret), joiner.join(f"{b:03o}" for b in raw)))
        # quoted-printable (spaces kept or escaped), and the bytes as Python prints them (b'p\xc3\xa4...')
        found.update((binascii.b2a_qp(raw).decode("ascii"), binascii.b2a_qp(raw, quotetabs=True).decode("ascii"),
                      repr(raw)[2:-1]))
        if len(raw) <= 45:  # uuencoded, as one line (its first character the length), and that line's body, its
            for backtick in (False, True):  # padding written as spaces or backticks, kept or stripped
                line = binascii.b2a_uu(raw, backtick=backtick).decode("ascii").rstrip("\n")
                found.update((line, line.rstrip(" `"), line[1:].rstrip(" `")))
        found.update(form.decode("ascii") for form in base85_forms(raw))
        # its characters' code points as Unicode writes them ("U+0047 U+0076 ...")
        found.update(joiner.join(f"U+{ord(c):04{case}}" for c in secret) for joiner in (" ", "", ",", ", ")
                     for case in "Xx")
        found.update((secret.lower(), secret.upper(), "".join(f"\\u{ord(c):04x}" for c in secret),
                      "".join(f"\\u{ord(c):04X}" for c in secret), "".join(f"%{b:02X}" for b in raw),
                      "".join(f"%{b:02x}" for b in raw)))
    found.discard("")
    return tuple(sorted(found, key=len, reverse=True))


def base64_forms(raw: bytes) -> list[bytes]:
    """``raw`` in base64, standard and URL-safe, with and without padding, and the part of it that stays the same
    inside a longer base64 text (``"user:" + secret``, a Basic value) at each of the three alignments: the
    characters that depend on ``raw``'s bytes alone, where there are ``_MIN_ENCODED_PIECE`` or more.

    >>> base64_forms(b"sk-0123456789ab")[:2]
    [b'c2stMDEyMzQ1Njc4OWFi', b'c2stMDEyMzQ1Njc4OWFi']
    """
    forms = []
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        encoded = encode(raw)
        forms += [encoded, encoded.rstrip(b"=")]
        for shift in (0, 1, 2):
            middle = encode(b"\0" * shift + raw)[4 if shift else 0:-4]
            forms += [middle] if len(middle) >= _MIN_ENCODED_PIECE else []
    return forms


def base85_forms(raw: bytes) -> list[bytes]:
    """``raw`` in Ascii85 (bare, as ``base64.a85encode`` writes it) and in base85 (RFC 1924, git's binary
    patches), and the part of each that stays the same inside a longer encoded text at each of the four
    alignments, where there are ``_MIN_ENCODED_PIECE`` characters or more.

    >>> base85_forms(b"sk-0123456789ab")[0]
    b'F)*?]0etOA2)[BQ3FQ@'
    """
    forms = []
    for encode in (base64.a85encode, base64.b85encode):
        forms.append(encode(raw))
        for shift in (0, 1, 2, 3):
            middle = encode(b"\1" * shift + raw)[5 if shift else 0:-5]  # not a zero byte: a85 writes four as "z"
            forms += [middle] if len(middle) >= _MIN_ENCODED_PIECE else []
    return forms


_WRAP = re.compile(r"\r?\n|[ \t]")


def _mask_wrapped(text: str, forms: Sequence[str]) -> str:
    """``text`` with each of ``forms`` (a secret's encoded writings) masked where line breaks, spaces or tabs stand
    inside it: Ascii85 or base85 wrapped at a line width, base64 printed in groups of four, a hex dump's line ends.
    The text is read once with those characters left out; each form found there is masked from its first
    character to its last as written.

    >>> _mask_wrapped("a85: F)*?]0et\\nOA2)[BQ3FQ@ end", ["F)*?]0etOA2)[BQ3FQ@"])
    'a85: *** end'
    """
    if not forms or not _WRAP.search(text):
        return text
    kept = [0] * len(text)
    joined, count = [], 0
    done = 0
    for gap in _WRAP.finditer(text):
        piece = text[done:gap.start()]
        joined.append(piece)
        kept[count:count + len(piece)] = range(done, gap.start())
        count += len(piece)
        done = gap.end()
    joined.append(text[done:])
    kept[count:count + len(text) - done] = range(done, len(text))
    reading = "".join(joined)
    spans = []
    for form in forms:
        start = reading.find(form)
        while start != -1:
            first, last = kept[start], kept[start + len(form) - 1] + 1
            if text[first:last] != form:  # a form written whole is masked already
                spans.append((first, last))
            start = reading.find(form, start + len(form))
    if not spans:
        return text
    out, done = [], 0
    for first, last in sorted(spans):
        if last <= done:
            continue
        out += [text[done:max(first, done)], MASK if first >= done else ""]
        done = last
    return "".join(out) + text[done:]


MIN_GROUPED = 10  # a secret this long is masked also printed in groups or split by separators
_SEPARATOR = r"[ \t\-_.:;,|/+]"
# What may stand between two of its other characters (a line break with the offset a dump starts its next line with,
# od's 7 octal digits or hexdump's 8 hex digits, counts as one), read atomically: the secret's own separators are left out
# of its pattern, so no character is both (a gap never gives back what it read, and the scan stays linear).
_GROUP_GAP = rf"(?>(?:{_SEPARATOR}|\r?\n(?:[0-7]{{7}}|[0-9a-f]{{8}})(?= )|\r?\n|<[^<>]{{0,40}}>){{0,4}})"


def _mask_grouped(text: str, secrets: Sequence[str]) -> str:
    """``text`` with each of ``secrets`` of at least ``MIN_GROUPED`` characters masked where separators (spaces,
    dashes, dots, colons, ``+``, line breaks, markup tags) stand between its characters, in any case: a key printed
    in groups of four (also form-encoded, or upper-cased), a passphrase written in title case, or a key split by
    ``<span>`` tags.

    >>> _mask_grouped("key: Zq8X wV3k Lm9P qR7t! ZQ8X+WV3K+LM9P+QR7T", ["Zq8XwV3kLm9PqR7t"])
    'key: ***! ***'
    """
    for pattern in _grouped_patterns(tuple(secrets)):
        text = pattern.sub(MASK, text)
    return text


@functools.lru_cache(maxsize=16)
def _grouped_patterns(secrets: tuple[str, ...]) -> tuple[re.Pattern, ...]:
    """What :func:`_mask_grouped` searches for, compiled once for the many texts one scrub masks: each secret's
    characters other than separators, a gap allowed between any two, longest secret first."""
    patterns = []
    for secret in sorted({s for s in secrets if isinstance(s, str) and len(s) >= MIN_GROUPED}, key=len, reverse=True):
        kept = re.sub(_SEPARATOR, "", secret)
        if len(kept) >= MIN_GROUPED:
            patterns.append(re.compile(_GROUP_GAP.join(re.escape(c) for c in kept), re.IGNORECASE))
    return tuple(patterns)


def _variants(secrets: Iterable[str]) -> list[str]:
    """:func:`_variants_of` ``secrets``, made once for the many texts one scrub masks with them."""
    return list(_variants_of(tuple(secrets)))


@functools.lru_cache(maxsize=16)
def _variants_of(secrets: tuple[str, ...]) -> tuple[str, ...]:
    """Each secret as it may be written: bare, URL-quoted, URL-unquoted, JSON-escaped (with and without ASCII
    escapes), quoted by a shell, SQL, CSV or Python (:func:`_quoted_forms`); longest first."""
    found: set[str] = set()
    for secret in secrets:
        if not isinstance(secret, str) or len(secret) < _MIN_SECRET:
            continue
        quoted = quote(secret.encode("utf-8", "surrogatepass"), safe="")  # a lone surrogate (an undecodable byte)
        for variant in (secret, quoted, unquote(secret), *_json_forms(secret), secret.replace(" ", "+"),
                        secret.replace(" ", "_"), secret.replace(" ", "\u00a0"),  # a passphrase form-encoded,
                        *_other_unicode(secret), *_quoted_forms(secret)):  # joined, or with no-break spaces
            if len(variant) >= _MIN_SECRET:
                found.add(variant)
    return tuple(sorted(found, key=len, reverse=True))


def _json_forms(secret: str) -> list[str]:
    """A secret inside a JSON string: with and without ASCII escapes, with each ``/`` escaped as ``\\/`` (PHP's
    ``json_encode``, some Java writers), and that text inside a second JSON string (a JSON document stored as a
    string).

    >>> _json_forms("Ab1/Cd2")
    ['Ab1/Cd2', 'Ab1\\\\/Cd2', 'Ab1\\\\\\\\/Cd2']
    """
    forms = [json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1]]
    slashed = [form.replace("/", "\\/") for form in forms if "/" in form]
    forms += [*slashed, *(json.dumps(form)[1:-1] for form in slashed)]
    return list(dict.fromkeys(forms))


def _quoted_forms(secret: str) -> list[str]:
    """A secret holding quotes, backslashes, line breaks or HTML's specials as a program quotes it: HTML
    (``html.escape``), a shell (``shlex.quote``'s ``'"'"'`` and the common ``'\\''``), SQL and CSV (a quote
    doubled), Python's ``repr`` (also of the repr) and YAML's plain scalar (a line break written as a blank line).

    >>> for form in _quoted_forms("Rt1'Yu2")[1:4]:
    ...     print(form)
    Rt1'"'"'Yu2
    Rt1'\\''Yu2
    Rt1''Yu2
    """
    if not any(mark in secret for mark in "'\"\\\n&<>"):
        return []
    forms = [html.escape(secret), html.escape(secret, quote=False),
             secret.replace("'", "'\"'\"'"), secret.replace("'", "'\\''"), secret.replace("'", "''"),
             secret.replace('"', '""'), repr(secret)[1:-1], repr(repr(secret))[2:-2], secret.replace("\n", "\n\n")]
    return [form for form in dict.fromkeys(forms) if form != secret]


def _other_unicode(secret: str) -> list[str]:
    """A secret with letters beyond ASCII as other programs write it: decomposed or composed (NFD, NFC), its
    UTF-8 bytes read as Latin-1 or Windows-1252 (mojibake), and percent-encoded in Latin-1.

    >>> _other_unicode("Pässwörd9!"), _other_unicode("ascii-only")
    (['Pa\u0308sswo\u0308rd9!', 'PÃ¤sswÃ¶rd9!', 'P%E4ssw%F6rd9%21'], [])
    """
    if secret.isascii():
        return []
    forms = [unicodedata.normalize(form, secret) for form in ("NFD", "NFC")]
    raw = secret.encode("utf-8", "surrogatepass")
    forms += [raw.decode(encoding, "replace") for encoding in ("latin-1", "cp1252")]
    try:
        forms.append(quote(secret.encode("latin-1"), safe=""))
    except UnicodeEncodeError:
        pass
    return [form for form in dict.fromkeys(forms) if form != secret]


@functools.lru_cache(maxsize=16)
def _grams_of(secrets: tuple[str, ...]) -> frozenset[str]:
    """Every ``MIN_FRAGMENT``-character piece of ``secrets``, lower-cased, made once for the many texts one scrub
    masks."""
    return frozenset(secret[i:i + MIN_FRAGMENT].lower() for secret in secrets
                     for i in range(len(secret) - MIN_FRAGMENT + 1))


def _mask_fragments(text: str, secrets: Sequence[str]) -> str:
    """``text`` with every run made of ``MIN_FRAGMENT``-character pieces of a secret (in any case) replaced by the
    mask, unless the run is one ordinary word that holds no whole secret.

    Each stretch of ``text`` that is a substring (at least ``MIN_FRAGMENT`` long) of a secret is covered by
    that secret's ``MIN_FRAGMENT``-grams, so marking every position covered by one of them masks all such
    stretches (and, rarely, a little more)."""
    size = MIN_FRAGMENT
    grams = _grams_of(tuple(secrets))
    if not grams or len(text) < size:
        return text
    lowered = text.lower()  # a piece echoed in another case is a piece still
    lowered = lowered if len(lowered) == len(text) else text
    covered = bytearray(len(text))
    for start in range(len(text) - size + 1):
        if lowered[start:start + size] in grams:
            covered[start:start + size] = b"\x01" * size
    if not any(covered):
        return text
    out, index = [], 0
    while index < len(text):
        if covered[index]:
            start = index
            while index < len(text) and covered[index]:
                index += 1
            run = text[start:index]
            out.append(run if piece_stays(run, secrets) else MASK)
        else:
            out.append(text[index])
            index += 1
    return "".join(out)


def piece_sources(secrets: Iterable[str]) -> list[str]:
    """The texts whose ``MIN_FRAGMENT``-character pieces are masked: each written form of a secret (bare,
    quoted, escaped) longer than ``MIN_FRAGMENT``, and a secret of ``MIN_ENCODED`` characters or more reversed
    (a key echoed backwards, of which a piece is a piece still).

    >>> piece_sources(["bot1234:AAHk9xQ2"])[-1]
    '2Qx9kHAA:4321tob'
    """
    written = [variant for variant in _variants(secrets) if len(variant) > MIN_FRAGMENT]
    return [*written, *(secret[::-1] for secret in secrets if isinstance(secret, str) and len(secret) >= MIN_ENCODED)]


def piece_stays(run: str, secrets: Sequence[str]) -> bool:
    """Whether a run of text made of pieces of ``secrets`` stays readable: one ordinary word
    (:func:`_ordinary_word`) that is not a whole secret in any case (a password "sunflowerz" printed
    "SUNFLOWERZ"), nor a piece of a secret made of letters only, nor a long word that is half of one (a
    passphrase's words are the secret; a short word of a short key, "openai" of "sk-openai-1", stays).

    >>> piece_stays("openai", ["sk-openai-1"]), piece_stays("sk-ope", ["sk-openai-1"])
    (True, False)
    """
    return _ordinary_word(run) and not any(
        secret.lower() in run.lower() or (run.lower() in secret.lower() and (
            secret.isalpha() or (len(run) >= _LONG_WORD and 2 * len(run) >= len(secret))))
        for secret in secrets)


def _ordinary_word(run: str) -> bool:
    """Whether a run of text that a secret shares is one ordinary word, left readable: letters only, all in
    one case or capitalised, at most ``MAX_WORD`` characters. A secret's words (``OPENAI`` in
    ``sk-probe-OPENAI-1``) are words of other texts too (``OPENAI_API_KEY``); a run with a digit, a sign or
    mixed case inside (``sk-liv``, ``Zq8XwV``, ``-live-``) is a piece of the secret.

    >>> [_ordinary_word(r) for r in ("OPENAI", "Bearer", "secret", "sk-liv", "-live-", "Zq8XwV", "OpenAI")]
    [True, True, True, False, False, False, False]
    """
    return len(run) <= MAX_WORD and bool(_WORD.fullmatch(run))
