"""The credentials in the environment (:func:`environment_secrets`): what every record the kit shares masks
besides the secrets a backend is configured with, so that a key copied from the environment into a spec, a URL,
a command or a reply is masked wherever it is written.
"""
from __future__ import annotations

import base64
import functools
import json
import os
import re
from typing import Mapping

from evalkit.models.encoded_text import shaped_spans
from evalkit.models.key_shapes import KEY_SHAPES, secret_variable
from evalkit.models.redaction import (MIN_FRAGMENT, _URL_START, _path_keys, _query_secrets, _userinfo_secrets)

__all__ = ["environment_secrets"]


def environment_secrets(environ: Mapping[str, str] | None = None) -> list[str]:
    """The credentials in the environment, for :func:`redact`: the value of each variable named as one
    (:func:`secret_variable`: ``*_API_KEY``, ``*_TOKEN``, ``MYSQL_PWD``, ``SSHPASS``, ``*WEBHOOK*``...), and the
    credentials of a URL in any variable: its password (``DATABASE_URL=postgres://app:pw@db/app``, as written
    and decoded), its user name when that is shaped like a token (``https://Qm7Rt2Vx9Lp4:x@host``,
    :func:`_userinfo_secrets`), its query values and the keys in its path (``UPSTREAM=https://h/v1?api-key=...``);
    a value that is a URL (``SLACK_WEBHOOK_URL``) is masked after its ``scheme://``, which stays readable;
    only those of at least ``MIN_FRAGMENT`` characters (shorter ones would mask ordinary words wherever a
    shared record writes them). In any other variable, what the key shapes find (a header in
    ``GIT_CONFIG_PARAMETERS``, a ``password:`` line of YAML text, a private key) is a credential too, and so are
    values named as credentials in JSON lists of ``{"name": ..., "value": ...}`` pairs and an attached ``-pPASS``
    in a MySQL option string. A value that is a path to an existing file
    (``GOOGLE_APPLICATION_CREDENTIALS=/home/me/sa.json``) is a location, not a secret. A key copied from the
    environment into a spec, a URL or a command is masked wherever a shared record writes it.

    >>> environment_secrets({"OPENAI_API_KEY": "sk-0123456789", "HF_TOKEN": "hf_abcdefgh", "HOME": "/home/me",
    ...                      "SSH_AUTH_SOCK": "/tmp/agent", "MY_PASSWORD": "short",
    ...                      "DATABASE_URL": "postgres://app:s3cr%40t-db@db:5432/app",
    ...                      "SLACK_WEBHOOK_URL": "https://hooks.example.com/T0/B0/x9Y8z7"})
    ['sk-0123456789', 'hf_abcdefgh', 's3cr%40t-db', 's3cr@t-db', 'hooks.example.com/T0/B0/x9Y8z7']
    """
    environ = os.environ if environ is None else environ
    # read once per state of the environment: every message and record masks with it
    return list(_secrets_of(tuple((name, value) for name, value in environ.items() if isinstance(value, str))))


@functools.lru_cache(maxsize=16)
def _secrets_of(environ: tuple[tuple[str, str], ...]) -> tuple[str, ...]:
    found: list[str] = []
    for name, value in environ:
        if value.startswith(("/", "~")) and (_existing_file(value) or _FILE_PATH.fullmatch(value)):
            continue
        if secret_variable(name):  # a URL without its scheme: as a fragment, "https:" would mask every URL's
            found.append(re.sub(r"^[A-Za-z][A-Za-z0-9+.\-]*://", "", value.strip()))
            found.extend(_json_values(value))  # DOCKER_AUTH_CONFIG's {"auths": {...: {"auth": ...}}}
        else:
            for url in re.findall(rf"{_URL_START}[^\s,]+", value):  # every URL (pip's lists of them)
                found.extend(_userinfo_secrets(url, lone_user=False) if "@" in url else [])
                found.extend(_query_secrets(url) + _path_keys(url))
            # ... and a password holding a comma, which the list's split above cut off before its "@"
            found.extend(password for password in _COMMA_PASSWORD.findall(value) if "," in password)
            for text in (value, *_base64_text(value)):  # a file passed base64-encoded (KUBECONFIG_DATA)
                found.extend(_named_values(text) + _option_values(text) + _json_values(text))
                found.extend(text[start:end] for start, end in shaped_spans(text, KEY_SHAPES))
            if re.search(r"(?i)mysql|mariadb", name):  # MYSQL_OPTS="-u root -pPASS"
                found.extend(re.findall(r"(?:^|\s)-p([^\s\"']+)", value))
    found += [password for value in list(found) for password in _basic_password(value)]
    return tuple(value for value in dict.fromkeys(found) if len(value) >= MIN_FRAGMENT)


def _base64_text(value: str) -> list[str]:
    """The text a value of 16 or more base64 characters encodes, when it is printable text (a configuration
    file passed in a variable), else nothing.

    >>> _base64_text("dG9rZW46IGt1YmUtdDBrOQo="), _base64_text("AAECAwQFBgcICQoLDA0ODw==")
    (['token: kube-t0k9\\n'], [])
    """
    if not re.fullmatch(r"[A-Za-z0-9+/]{16,}={0,2}", value.strip()):
        return []
    try:
        decoded = base64.b64decode(value.strip() + "=" * (-len(value.strip()) % 4)).decode("utf-8")
    except ValueError:
        return []
    return [decoded] if all(c.isprintable() or c in "\r\n\t" for c in decoded) else []


def _basic_password(value: str) -> list[str]:
    """The password of a base64 ``user:password`` (``DOCKER_AUTH_CONFIG``'s and ``NPM_CONFIG__AUTH``'s form), which
    a log may print decoded.

    >>> _basic_password("YWxpY2U6aHVudGVyMnh5eg=="), _basic_password("not base64!")
    (['hunter2xyz'], [])
    """
    if not re.fullmatch(r"[A-Za-z0-9+/]{8,}={0,2}", value):
        return []
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4)).decode("utf-8")
    except ValueError:
        return []
    user, colon, password = decoded.partition(":")
    return [password] if colon and decoded.isprintable() else []


# a path to a file with a suffix (~/.config/gcloud/credentials.json): where a credential is, not the credential
_FILE_PATH = re.compile(r"(?:~|/[\w.\-]+)(?:/[\w.\-]+)+\.[A-Za-z][A-Za-z0-9]{0,5}")


def _existing_file(value: str) -> bool:
    """Whether ``value`` names a file or folder that exists (a credential's location, not the credential)."""
    try:
        return os.path.exists(os.path.expanduser(value.strip()))
    except (OSError, ValueError):
        return False


_COMMA_PASSWORD = re.compile(rf"{_URL_START}[^\s/@:,]*:([^\s/@]+)@")
_OPTION = re.compile(r"(?:^|\s)--?([A-Za-z][\w-]{0,60})(?:=|\s+)[\"']?([^\s\"']+)")
_NETRC = re.compile(r"(?i)(?:^|\s)(?:password|passwd|token|secret)\s+([^\s\"']+)")


def _option_values(text: str) -> list[str]:
    """The values of command-line options named as credentials in a variable's value (``VLLM_ARGS="--api-key
    X"``, ``--password=X``) and of netrc-style ``password X`` pairs.

    >>> _option_values("--port 80 --api-key Zq8XwV3kLm9P --model m"), _option_values("machine h password hunter2x")
    (['Zq8XwV3kLm9P'], ['hunter2x'])
    """
    return ([value for name, value in _OPTION.findall(text) if secret_variable(name)] + _NETRC.findall(text))


def _json_values(text: str) -> list[str]:
    """The strings of a JSON value that sit under a credential's name at any depth (``{"auth": {"value": X}}``).

    >>> _json_values('{"auth": {"value": "Zq8XwV3kLm9P"}, "model": "m"}')
    ['Zq8XwV3kLm9P']
    """
    if not text.lstrip().startswith(("{", "[")):
        return []
    try:
        tree = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
        return []
    found: list[str] = []

    def walk(node: object, named: bool) -> None:
        if isinstance(node, dict):
            label = next((node[k] for k in ("name", "Name", "key", "Key") if isinstance(node.get(k), str)), None)
            if label is not None and secret_variable(label):  # [{"name": "OPENAI_API_KEY", "value": X}]
                found.extend(v for k, v in node.items() if k in ("value", "Value") and isinstance(v, str))
            for key, child in node.items():
                walk(child, named or (isinstance(key, str) and secret_variable(key)))
        elif isinstance(node, list):
            for child in node:
                walk(child, named)
        elif named and isinstance(node, str):  # a header's scheme word ("Bearer X") left out
            found.append(node.split(" ")[-1] if re.fullmatch(r"[A-Za-z]{2,20} \S+", node) else node)
    walk(tree, False)
    return found


_NAMED_VALUE = re.compile(r"""["']?([A-Za-z][\w.\-]{0,60})["']?\s*(?:=|:\s|:(?![:/]))\s*["']?((?:[A-Za-z]{2,20} )?[^;&\s"',}]+)""")


def _named_values(text: str) -> list[str]:
    """The values a text names as credentials: ``Name=value`` pairs (a connection string's ``AccountKey=``,
    ``Password=``) and ``"Name": "value"`` fields (a JSON header's ``"Authorization": "Bearer ..."``) whose
    name reads as a credential's (:func:`secret_variable`), the scheme word of a header value left out.
    ``-Dpassword=hunter2xx -Xmx1g`` gives ``hunter2xx``.

    >>> _named_values("DefaultEndpointsProtocol=https;AccountName=me;AccountKey=Zq8XwV3kLm9P==;Suffix=core")
    ['Zq8XwV3kLm9P==']
    >>> _named_values('{"Authorization": "Bearer Zq8XwV3kLm9PqR7t", "Accept": "json"}')
    ['Zq8XwV3kLm9PqR7t']
    """
    found = []
    for name, value in _NAMED_VALUE.findall(text):
        if secret_variable(name):
            found.append(value.split(" ")[-1])
    return found
