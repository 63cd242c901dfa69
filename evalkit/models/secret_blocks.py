"""Credentials that only their surroundings show: the body of a private key whose ``BEGIN`` line was cut off
(only its ``END`` line says what it is), the values of a Kubernetes Secret's ``data`` (base64 under names
that can be anything: ``data: {db: cGFzc3dvcmQ=}``), and base64 of a text that holds a credential (a
``.dockerconfigjson``, an encoded settings file). :func:`evalkit.models.redact` masks all three; each is read in
one pass over the text.
"""
from __future__ import annotations

import base64
import binascii
import re
from typing import Callable

__all__ = ["mask_headless_private_keys", "mask_secret_data", "mask_encoded_secrets"]

_MASK = "***"
_PEM_END = re.compile(r"-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_BASE64_CHARACTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")
_MIN_BODY = 16  # base64 characters before an END line that make a key's body (an END line alone stays)


def mask_headless_private_keys(text: str) -> str:
    """``text`` with the base64 body before each private key's ``END`` line masked, however its lines are
    broken (raw or as ``\\n`` in JSON): a key printed from its middle still leaves no line of it. Each
    character is looked at once: a body is read back from its ``END`` line no further than the previous one.

    >>> mask_headless_private_keys("tail:\\nMIIEvQIBADANBgkqhkiG9w0B\\nAQEFAASCBKcwggSjAgEA\\n-----END PRIVATE KEY-----")
    'tail:\\n***\\n-----END PRIVATE KEY-----'
    >>> mask_headless_private_keys("-----BEGIN RSA PRIVATE KEY-----***-----END RSA PRIVATE KEY-----")
    '-----BEGIN RSA PRIVATE KEY-----***-----END RSA PRIVATE KEY-----'
    """
    out, done = [], 0
    for end_line in _PEM_END.finditer(text):
        index = end_line.start()
        while index > done and (text[index - 1] in _BASE64_CHARACTERS or text[index - 1].isspace()
                                or (text[index - 1] == "\\" and text[index:index + 1] in ("n", "r"))):
            index -= 1
        body = text[index:end_line.start()]
        first = next((i for i, c in enumerate(body) if c in _BASE64_CHARACTERS), len(body))
        last = len(body.rstrip()) - (2 if body.rstrip().endswith(("\\n", "\\r")) else 0)
        if sum(c in _BASE64_CHARACTERS for c in body) >= _MIN_BODY and last > first:
            out += [text[done:index + first], _MASK, text[index + last:end_line.end()]]
        else:
            out.append(text[done:end_line.end()])
        done = end_line.end()
    return "".join(out) + text[done:] if out else text


# A YAML mapping named data (or binaryData) and the lines indented under it; a JSON object under "data".
_YAML_DATA = re.compile(r"(?m)^([ \t]*)(?:[\"']?(?:data|binaryData)[\"']?):[ \t]*\r?\n((?:\1[ \t]+\S[^\r\n]*(?:\r?\n|$))+)")
_YAML_VALUE = re.compile(r"(?m)^([ \t]+[\"']?[\w.\-/]+[\"']?:[ \t]*[\"']?)([A-Za-z0-9+/]{8,}={0,2})(?=[\"']?[ \t]*$)")
_JSON_DATA = re.compile(r"(\\?[\"'](?:data|binaryData)\\?[\"']\s*:\s*)(\{[^{}]{0,65536}\})")
_JSON_VALUE = re.compile(r"(\\?[\"'][\w.\-/]+\\?[\"']\s*:\s*\\?[\"'])([A-Za-z0-9+/]{8,}={0,2})(?=\\?[\"'])")


def _encoded_text(value: str) -> bool:
    """Whether ``value`` is base64 of printable text (a password, a URL, a file of settings), not of binary.

    >>> _encoded_text("cGFzc3dvcmQxMjM="), _encoded_text("nginx1234567"), _encoded_text("AAECAwQFBgcI")
    (True, False, False)
    """
    if len(value) % 4 or "-" in value or "_" in value:  # the standard alphabet, padded, as a Secret's data is
        return False
    decoded = _decoded_text(value)
    return decoded is not None and len(decoded) >= 4


def mask_secret_data(text: str) -> str:
    """``text`` with each value under a ``data`` (or ``binaryData``) mapping masked that is base64 of printable
    text, in YAML or JSON: what a Kubernetes Secret holds, whatever its names. A ConfigMap's plain values and
    base64 of binary data stay.

    >>> mask_secret_data("kind: Secret\\ndata:\\n  db: cGFzc3dvcmQxMjM=\\n  size: 3\\nkind: x")
    'kind: Secret\\ndata:\\n  db: ***\\n  size: 3\\nkind: x'
    >>> mask_secret_data('{"data": {"token": "c2VjcmV0LXRva2VuLTk=", "mode": "fast"}}')
    '{"data": {"token": "***", "mode": "fast"}}'
    """
    def yaml_block(block: re.Match) -> str:
        body = _YAML_VALUE.sub(lambda m: m[1] + _MASK if _encoded_text(m[2]) else m[0], block[2])
        return block[0][:block.start(2) - block.start()] + body

    def json_block(block: re.Match) -> str:
        return block[1] + _JSON_VALUE.sub(lambda m: m[1] + _MASK if _encoded_text(m[2]) else m[0], block[2])

    if "data" not in text and "Data" not in text:
        return text
    return _JSON_DATA.sub(json_block, _YAML_DATA.sub(yaml_block, text))


def secret_data_texts(text: str) -> list[str]:
    """The texts a Kubernetes Secret's ``data`` values encode (those :func:`mask_secret_data` masks), decoded: a
    unit that writes one and its password elsewhere has both masked.

    >>> secret_data_texts("kind: Secret\\ndata:\\n  db: cGFzc3dvcmQxMjM=\\n  size: 3\\n")
    ['password123']
    """
    if "data" not in text and "Data" not in text:
        return []
    runs = [value[2] for block in _YAML_DATA.finditer(text) for value in _YAML_VALUE.finditer(block[2])]
    runs += [value[2] for block in _JSON_DATA.finditer(text) for value in _JSON_VALUE.finditer(block[2])]
    return [(_decoded_text(run) or "").strip() for run in runs if _encoded_text(run)]


# A run of base64 (standard or URL-safe, padded or not) long enough to hold a credential's text.
_BASE64_RUN = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{20,}={0,2}(?![A-Za-z0-9+/=_-])")


def _decoded_text(run: str) -> str | None:
    """The printable text that the base64 ``run`` encodes (either alphabet, padding optional), or None.

    >>> _decoded_text("eyJwYXNzd29yZCI6ICJ4In0"), _decoded_text("AAECAwQFBgcICQoLDA0ODxAR")
    ('{"password": "x"}', None)
    """
    body = run.rstrip("=").replace("-", "+").replace("_", "/")
    if len(body) % 4 == 1:
        return None
    try:
        decoded = base64.b64decode(body + "=" * (-len(body) % 4), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    return decoded if all(c.isprintable() or c in "\r\n\t" for c in decoded) else None


def mask_encoded_secrets(text: str, redact_decoded: Callable[[str], str]) -> str:
    """``text`` with each base64 run masked whole whose decoded text ``redact_decoded`` changes: a
    ``.dockerconfigjson`` (base64 of JSON whose ``auth`` is base64 of ``user:password``), an encoded settings
    file or header. Base64 of binary data (a picture) or of text with no credential stays.

    >>> from evalkit.models import redact
    >>> mask_encoded_secrets("cfg: eyJwYXNzd29yZCI6ICJodW50ZXIyeHl6In0= and bW9kZWw6IGdwdDIsIHNlZWQ6IDM=", redact)
    'cfg: *** and bW9kZWw6IGdwdDIsIHNlZWQ6IDM='
    """
    def masked(run: re.Match) -> str:
        decoded = _decoded_text(run[0])
        return _MASK if decoded is not None and redact_decoded(decoded) != decoded else run[0]

    return _BASE64_RUN.sub(masked, text)
