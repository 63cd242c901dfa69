"""Credentials in a grid's values: which parameters hold them, how a value is written with them masked, and
which values may appear in a unit's folder name."""
from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote, urlsplit

from evalkit.models.redaction import MASK, public_endpoint, redact

# A parameter whose name ends in one of these words holds a credential: its value is never shown.
_SECRET_NAME = re.compile(r"(?i)(^|[_-])(pass(word|wd|phrase)?|pwd?|secret|token|credentials?|auth(orization)?|"
                          r"api[_-]?key|apikey|key|sig(nature)?)$")
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://\S+")


def _mask_url(text: str) -> str:
    """A URL as a shared record keeps it (:func:`evalkit.models.public_endpoint`: user-info and every query value
    masked, and the environment's credentials); other text as it is.

    >>> _mask_url("http://me:pw@host:8000/v1?key=K&sig=S&flag")
    'http://***@host:8000/v1?key=***&sig=***&***'
    """
    return public_endpoint(text) if _URL.fullmatch(text) else text


def _secrets(value: Any, name: str = "") -> list[str]:
    """The credentials inside a unit's values, longest first: secret-named values, URL passwords and query
    values (masked wherever they appear, also without their URL)."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            found += _secrets(item, str(key))
    elif isinstance(value, list):
        for item in value:
            found += _secrets(item, name)
    elif _SECRET_NAME.search(name) and value is not None and not isinstance(value, bool):
        found.append(str(value))
    elif isinstance(value, str) and _URL.fullmatch(value):
        parts = urlsplit(value)
        found += [parts.password or "", unquote(parts.password or "")]
        for _, _, query_value in (p.partition("=") for p in parts.query.split("&")):
            if len(query_value) >= 6:  # shorter values (json, en, 1) would mask ordinary words
                found += [query_value, unquote(query_value)]
    return sorted({s for s in found if len(s) >= 4}, key=len, reverse=True)


def _secret_option(argument: str) -> bool:
    """Whether a command argument is an option named as a credential (``--password``, ``--api-key=...``).

    >>> [_secret_option(a) for a in ("--password", "--db-password=x", "-token", "--seed", "password")]
    [True, True, True, False, False]
    """
    name = argument.lstrip("-").partition("=")[0]
    return argument.startswith("-") and bool(name) and bool(_SECRET_NAME.search(name))


def _command_secrets(arguments: list[str]) -> list[str]:
    """The credentials written into a command's arguments: the argument after an option named as one
    (``"--password", "hunter2"``) and the value after its ``=`` (``"--api-key=k3y"``).

    >>> _command_secrets(["tool", "--password", "hunter2", "--api-key=k3y0", "--seed", "1"])
    ['hunter2', 'k3y0']
    """
    found = []
    for index, argument in enumerate(arguments):
        if " " in argument.strip():
            found += _command_secrets(_words(argument))  # a shell line inside one argument (sh -c "...")
        if not _secret_option(argument):
            continue
        if "=" in argument:
            found.append(argument.partition("=")[2])
        elif index + 1 < len(arguments) and not arguments[index + 1].startswith("--"):
            found.append(arguments[index + 1])  # a value may start with "-"; the next option starts with "--"
    return [value for value in found if value]


def _words(line: str) -> list[str]:
    """A shell line's words (its quoting read as a shell would; a line that does not parse, split on spaces)."""
    import shlex

    try:
        return shlex.split(line)
    except ValueError:
        return line.split()


def _public_command(arguments: list[str]) -> list[str]:
    """A command's arguments as a record may keep them: a literal credential (see :func:`_command_secrets`) is
    ``***``; a placeholder stays (its value is masked with the unit's values).

    >>> _public_command(["tool", "--password", "hunter2", "--token={token}", "--api-key=k3y0", "-x", "1"])
    ['tool', '--password', '***', '--token={token}', '--api-key=***', '-x', '1']
    """
    shown = list(arguments)
    for index, argument in enumerate(arguments):
        if not _secret_option(argument):
            continue
        if "=" in argument:
            option, _, value = argument.partition("=")
            shown[index] = argument if "{" in value else f"{option}={MASK}"
        elif index + 1 < len(arguments) and not arguments[index + 1].startswith("--") and "{" not in arguments[index + 1]:
            shown[index + 1] = MASK
    for index, argument in enumerate(shown):  # a shell line inside one argument: its literal credentials masked
        if " " in argument.strip():
            shown[index] = redact(argument, [s for s in _command_secrets(_words(argument)) if "{" not in s])
    return shown


def _public(value: Any, secrets: list[str], name: str = "") -> Any:
    """``value`` as it may be written: secret-named values as ``***``, every text redacted."""
    if isinstance(value, dict):
        return {redact(str(k), secrets): _public(v, secrets, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [_public(v, secrets, name) for v in value]
    if _SECRET_NAME.search(name) and value is not None and not isinstance(value, bool):
        return "***"
    return redact(_mask_url(value), secrets) if isinstance(value, str) else value


def _shown(name: str, value: Any) -> bool:
    """Whether a value may appear in a unit's folder name: no secret-named parameter, no URL, nothing that
    redaction would change."""
    if _SECRET_NAME.search(name):
        return False
    if isinstance(value, dict):
        return all(_shown(str(k), v) for k, v in value.items())
    if isinstance(value, list):
        return all(_shown(name, v) for v in value)
    if isinstance(value, str):
        return not re.search(r"[@:?=&#%\s]", value) and redact(value) == value
    return True
