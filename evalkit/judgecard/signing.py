"""Who made a card: an HMAC-SHA256 signature over a card's record, with a key only its maker and the board's
keeper hold. A board told to merge one judge's cards (``judge leaderboard --merge``) trusts the judge record
each card carries; anyone can copy that record into a card of their own. With a key
(``judge card --sign-key-env VAR`` and ``judge leaderboard --merge --merge-key-env VAR``) only cards whose
signature verifies merge into a line; any other card of that judge's name is its own line, named by its file, so
it cannot move the signed line's numbers. The key is read from an environment variable, never written."""
from __future__ import annotations

import hashlib
import hmac
import json
import os
from typing import Any

__all__ = ["sign", "verify", "signing_key", "SIGNATURE_FIELD"]

SIGNATURE_FIELD = "signature"


def _payload(record: dict[str, Any]) -> bytes:
    """The bytes a signature covers: the record without its signature, as canonical JSON."""
    body = {key: value for key, value in record.items() if key != SIGNATURE_FIELD}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=True).encode()


def sign(record: dict[str, Any], key: bytes) -> str:
    """The signature of a card's record: ``hmac-sha256:`` and the hex digest.

    >>> sign({"judge": "length", "rows": []}, b"k3y")[:24]
    'hmac-sha256:f82325c38264'
    """
    return "hmac-sha256:" + hmac.new(key, _payload(record), hashlib.sha256).hexdigest()


def verify(record: Any, key: bytes) -> bool:
    """Whether ``record`` (a card file's JSON) carries a signature made with ``key`` over what it holds: any
    change to a field, or another key, and it does not.

    >>> record = {"judge": "length", "rows": [1, 2]}
    >>> record["signature"] = sign(record, b"k3y")
    >>> verify(record, b"k3y"), verify({**record, "rows": [1, 3]}, b"k3y"), verify(record, b"other")
    (True, False, False)
    """
    if not isinstance(record, dict) or not isinstance(record.get(SIGNATURE_FIELD), str):
        return False
    return hmac.compare_digest(record[SIGNATURE_FIELD], sign(record, key))


def signing_key(variable: str) -> bytes:
    """The key in the environment variable ``variable``; a clear error naming the variable (never its value)
    when it is unset or shorter than 16 characters.

    >>> os.environ["EVALKIT_DOCTEST_KEY"] = "0123456789abcdef"; signing_key("EVALKIT_DOCTEST_KEY")
    b'0123456789abcdef'
    >>> del os.environ["EVALKIT_DOCTEST_KEY"]  # (a key left set would be masked in every later output)
    """
    value = os.environ.get(variable, "")
    if len(value) < 16:
        raise ValueError(f"the signing key variable {variable} is {'unset' if not value else 'too short'}: set it "
                         "to a secret of at least 16 characters, shared only by the card's maker and the board")
    return value.encode("utf-8")
