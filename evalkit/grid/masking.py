"""Credentials in a grid's values: which values hold them (:func:`_secrets`: secret-named parameters, URL
passwords and query values, and what a command line carries, :mod:`evalkit.grid.command_secrets`), how a value,
a command or a record is written with them masked, and which values may appear in a unit's folder name. The
environment's credentials (:func:`evalkit.models.environment_secrets`) are added to these by
:attr:`evalkit.grid.GridUnit.secrets`."""
from __future__ import annotations

import json
import re
from typing import Any, Sequence
from urllib.parse import unquote, urlsplit

from evalkit.models.redaction import MASK, _userinfo_secrets, public_endpoint, redact
from evalkit.grid.credential_names import _URL, _holds_credentials, _secret_name
from evalkit.grid.command_secrets import _prose, _scan, _script_secrets
from evalkit.grid.text_secrets import _slashed_passwords, _templated, _words
from evalkit.grid.printed_secrets import output_secrets


def _leaves(value: Any) -> list[str]:
    """Every scalar inside ``value`` (a map's values, a list's items, at any depth), as text."""
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in _leaves(item)]
    if isinstance(value, list):
        return [leaf for item in value for leaf in _leaves(item)]
    return [] if value is None or isinstance(value, bool) else [str(value)]


def _mask_url(text: str) -> str:
    """A URL as a shared record keeps it (:func:`evalkit.models.public_endpoint`: user-info and every query value
    masked, and the environment's credentials); other text as it is.

    >>> _mask_url("http://me:pw@host:8000/v1?key=K&sig=S&flag")
    'http://***@host:8000/v1?key=***&sig=***&***'
    """
    return public_endpoint(text) if _URL.fullmatch(text) else text


def _list_arguments(value: list) -> list[str]:
    """A list read as a command's arguments: its items as text (a number, ``true``, ``null`` as YAML writes
    them), when it holds a string and no map or list; else no arguments.

    >>> _list_arguments(["--password", "X", "--port", 5432]), _list_arguments(["--token", "X", None, True])
    (['--password', 'X', '--port', '5432'], ['--token', 'X', 'null', 'true'])
    >>> _list_arguments([1, 2]), _list_arguments(["a", {"b": 1}])
    ([], [])
    """
    if not any(isinstance(item, str) for item in value) or any(isinstance(item, (dict, list)) for item in value):
        return []
    return [item if isinstance(item, str) else json.dumps(item, default=str) for item in value]


def _secrets(value: Any, name: str = "") -> list[str]:
    """The credentials inside a unit's values, longest first: secret-named values, URL passwords, query values
    and fragments (masked wherever they appear, also without their URL).

    >>> sorted(_secrets({"cred": "c-123456", "u": "https://h.example/v1?key=k-123456#access_token=t-123456&x=1"}))
    ['c-123456', 'k-123456', 't-123456', 't-123456&x=1']
    >>> _secrets({"base_url": "http://tkUser9Kq7Lm2@127.0.0.1:8000/v1"}), _secrets({"repo": "ssh://deploy@host/r"})
    (['tkUser9Kq7Lm2'], [])
    """
    found: list[str] = []
    if isinstance(value, (dict, list)) and _holds_credentials(name):
        found += _leaves(value)  # {"api_keys": {"openai": X}}: judged by the outer name, not "openai"
    if isinstance(value, dict):
        for key, item in value.items():
            found += _secrets(item, str(key))
    elif isinstance(value, list):
        for item in value:
            found += _secrets(item, name)
        arguments = _list_arguments(value)
        if arguments:
            found += _scan(arguments)[0]  # arguments given as a list: ["--password", X, "--port", 5432]
    elif _secret_name(name) and value is not None and not isinstance(value, bool):
        found.append(str(value))
    elif isinstance(value, str) and ("\n" in value or "-----BEGIN" in value):
        found += output_secrets(value) + _script_secrets(value)  # a key file, a kubeconfig, a script: its lines
    elif isinstance(value, str) and " " in value.strip() and not _URL.fullmatch(value):
        found += _scan(_words(value), prose=True)[0]  # arguments given as one value: "--password X"
    elif isinstance(value, str) and _URL.fullmatch(value):
        parts = urlsplit(value)
        found += [parts.password or "", unquote(parts.password or "")]
        found += _userinfo_secrets(value, lone_user=False)  # a token given as the user (http://TOKEN@host/v1)
        found += [value[start:end] for start, end in _slashed_passwords(value)]  # postgres://me:pa/ss@db
        pieces = parts.query.split("&") + ([parts.fragment, *parts.fragment.split("&")] if parts.fragment else [])
        for piece in pieces:  # query values, and a fragment (#access_token=X) whole and by its values
            value = piece.partition("=")[2] or (piece if piece == parts.fragment else "")
            if len(value) >= 6:  # shorter values (json, en, 1) would mask ordinary words
                found += [value, unquote(value)]
    return sorted({s for s in found if len(s) >= 4}, key=len, reverse=True)


def _public_command(arguments: list[str]) -> list[str]:
    """A command's arguments as a record may keep them: each literal credential (see :func:`_scan`) is
    ``***``, an option's name, a header's name and scheme and a user name staying readable; a placeholder
    stays (its value is masked with the unit's values). Masking a masked command changes nothing.

    >>> _public_command(["tool", "--password", "hunter2", "--token={token}", "--api-key=k3y0", "-x", "1"])
    ['tool', '--password', '***', '--token={token}', '--api-key=***', '-x', '1']
    >>> _public_command(["curl", "-u", "bob:pw-1234", "-H", "Authorization: Bearer t0k3n", "--port", "8080"])
    ['curl', '-u', 'bob:***', '-H', 'Authorization: Bearer ***', '--port', '8080']
    """
    _, replaced = _scan(arguments)
    shown = [replaced.get(index, argument) for index, argument in enumerate(arguments)]
    for index, argument in enumerate(arguments):  # a shell line inside one argument: its literal credentials masked
        if " " in argument.strip():
            inner = _scan(_words(argument), prose=_prose(arguments, index))[0]
            shown[index] = redact(shown[index], [s for s in inner if not _templated(s)])
    return shown


def _public(value: Any, secrets: list[str], name: str = "") -> Any:
    """``value`` as it may be written: secret-named values as ``***``, every text redacted, a number that is a
    credential or a piece of one (:func:`_secret_number`) as ``***``."""
    if isinstance(value, (dict, list)) and _holds_credentials(name):
        value = json.loads(json.dumps(value, default=str))  # a copy whose every scalar is masked
        return {redact(str(k), secrets): _public(v, secrets, "password") for k, v in value.items()} \
            if isinstance(value, dict) else [_public(v, secrets, "password") for v in value]
    if isinstance(value, dict):
        return {redact(str(k), secrets): _public(v, secrets, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [_public(v, secrets, name) for v in value]
    if _secret_name(name) and value is not None and not isinstance(value, bool):
        return "***"
    if _secret_number(value, secrets):
        return MASK
    return redact(_mask_url(value), secrets) if isinstance(value, str) else value


def _secret_number(value: Any, secrets: Sequence[str]) -> bool:
    """Whether ``value`` is a number whose digits are a credential or a piece of one as long as
    :func:`evalkit.models.redact` masks (a numeric PIN, the digits of a token), written as JSON or as text.

    >>> token = ["hf_Xa83456019Lq"]
    >>> _secret_number(83456019, token), _secret_number(8345, token), _secret_number(True, ["1"])
    (True, False, False)
    """
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not secrets:
        return False
    return any(redact(text, secrets) != redact(text) for text in (json.dumps(value), str(value)))


def _shown(name: str, value: Any, secrets: Sequence[str] = ()) -> bool:
    """Whether a value may appear in a unit's folder name: no secret-named parameter, no URL, nothing that
    redaction with ``secrets`` (the unit's: its own and the environment's) would change — so neither a
    secret nor a piece of one as long as :func:`evalkit.models.redact` masks (``MIN_FRAGMENT`` characters:
    a key without its ``sk-proj-`` prefix), as the record's parameters mask it.

    >>> key = ["sk-proj-Qm7Rt2Vx9Lp4"]
    >>> _shown("model", "gpt2-small", key), _shown("model", "Qm7Rt2Vx9Lp4", key), _shown("seed", 1, key)
    (True, False, True)
    """
    if _secret_name(name) or isinstance(value, dict):
        return False  # a map is shown by its digest: its keys would judge its values, not its name
    if isinstance(value, list):
        return not _holds_credentials(name) and all(not isinstance(v, (dict, list)) and _shown(name, v, secrets)
                                                    for v in value) \
            and not _scan([str(v) for v in value])[0]  # ["--password", X] as a list
    if isinstance(value, str):
        return not re.search(r"[@:?=&#%\s]", value) and redact(value, secrets) == value
    return not _secret_number(value, secrets)  # a number that is (a piece of) a credential, as params mask it
