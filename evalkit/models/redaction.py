"""One redaction for every string that leaves the model door: exception messages, backend names (and so
cache keys and rows), telemetry, run stores and reports.

:func:`redact` masks, in this order,

1. every secret it is given — in full, URL-quoted and JSON-escaped — and every run of at least
   ``MIN_FRAGMENT`` (6) characters of a secret: a key cut by a message-length limit, or echoed by a server
   without its ``Bearer``/``key=`` prefix, is still masked; a run that is one ordinary word (letters only, in
   one case or capitalised, at most ``MAX_WORD`` characters: ``OPENAI`` of a key ``sk-...-OPENAI-...``,
   ``Bearer`` of a token ``BearerTok-...``) is not masked when it is all the text shares with the secret;
2. the user-info of URLs (``scheme://user:password@`` becomes ``scheme://***@``);
3. every query-string value (``?sig=...&code=...`` becomes ``?sig=***&code=***``; a bare ``?token`` becomes
   ``?***``) and URL fragments, after a URL or a path;
4. known shapes of credentials: ``Bearer``/``Basic`` tokens, ``key=``/``token=``/``password=``... values,
   JSON and header fields such as ``"api_key": ...`` or ``Authorization: ...``, and ``sk-...``, ``hf_...``,
   ``ghp_...``, ``AKIA...``, ``AIza...``, ``xox?-...`` keys and JSON web tokens.

The function is pure (its result depends on ``text`` and ``secrets`` only), so a backend name built with it
is the same in every process. :func:`configured_secrets` lists the secrets a backend is configured with,
:func:`environment_secrets` the credentials in the environment.

What a record shared with others — a judge card, a leaderboard, a run store, a grid unit — keeps of an
endpoint is :func:`public_endpoint` (the URL redacted with its own credentials and the environment's), and
what a judge's name says of it is :func:`endpoint_label` (host, port and path only).
"""
from __future__ import annotations

import base64
import json
import os
import re
from typing import Iterable, Mapping, Sequence
from urllib.parse import quote, unquote, urlsplit

# path_secrets is part of this module's API too: a key in a URL's path is a configured secret.
from evalkit.models.key_shapes import KEY_SHAPES as _KEY_SHAPES, path_parameters as _path_parameters, path_secrets

__all__ = ["redact", "configured_secrets", "environment_secrets", "secret_variable", "public_endpoint",
           "endpoint_label", "url_credentials", "path_secrets", "MASK", "MIN_FRAGMENT"]

MASK = "***"
MIN_FRAGMENT = 6  # a run this long of a configured secret is masked wherever it appears
MAX_WORD = 12  # ... unless it is one ordinary word no longer than this (OPENAI, Bearer)
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+")
_MIN_SECRET = 4  # shorter "secrets" are not masked in free text (they would mask ordinary words)

_URL_START = r"\b[A-Za-z][A-Za-z0-9+.\-]*://"
_USERINFO = re.compile(rf"({_URL_START})[^\s/?#\"'<>]*@")
# A password with an unencoded "/" (u:pa/ss@db): user-info to the last "@" a host follows; not a port's "h:80/".
# A password holding an unencoded "@" before its "/" (http://u:p@ss/w0rd@db/v1): read to the last "@" that a host
# name follows, so no piece of the password stays; a path with an "@" after user-info (https://me:pw@h/a/@b) then
# loses its host in what is shown, which is the safe side of an ambiguous URL.
_HOST_LIKE = r"(?:\[[0-9A-Fa-f:.]+\]|[\w.-]+)(?::\d+)?(?:[/?#\s\"'<>]|$)"
_AT_SLASHED_USERINFO_TEXT = re.compile(rf"({_URL_START})[^@\s/:\"'<>]+:[^\s/\"'<>]*@[^\s/\"'<>]*/[^\s\"'<>]*@"
                                       rf"(?={_HOST_LIKE})")
_SLASHED_USERINFO_TEXT = re.compile(rf"({_URL_START})[^@\s/:\"'<>]+:(?!\d+(?:/|\s|$))[^\s\"'<>]*@"
                                    r"(?=[^@\s/?#\"'<>]+(?:[/?#\s\"'<>]|$))")
# A query starts at a "?" right after a URL or path character; it runs to a space, a quote or a fragment.
_QUERY = re.compile(r"(?<=[\w/.\-:%\]])\?([^\s#\"'<>]+)")  # a quote ends it: URLs encode quotes
# user:password@host without a well-formed scheme in front (a typo: "http:/u:p@h", or no scheme at all).
_BARE_USERINFO = re.compile(r"(?<![\w.~%+\-:])[A-Za-z0-9._~%+\-]+:[^\s/?#@\"'<>]+@(?=[A-Za-z0-9\[])")
_FRAGMENT = re.compile(rf"({_URL_START}[^\s#\"'<>]*)#[^\s\"'<>]+")
# ... and a URL whose start a configured secret has masked already ("***/v1#token"): its fragment still goes.
_MASKED_URL_FRAGMENT = re.compile(r"((?<![^\s\"'<>=(\[])\*\*\*[^\s#\"'<>]*)#[^\s\"'<>]+")

def redact(text: str, secrets: Sequence[str] = ()) -> str:
    """``text`` with credentials masked: the ``secrets`` given (in full and in part), URL user-info, every
    query value and known key shapes (see the module's description).

    >>> redact("https://me:hunter2@host/v1?api_key=abc123&x=1")
    'https://***@host/v1?api_key=***&x=***'
    >>> redact("postgres://app:pa/ss9@db/app and https://medium.com/@alice, https://h:8080/u/@me")
    'postgres://***@db/app and https://medium.com/@alice, https://h:8080/u/@me'
    >>> redact('{"error": "bad header Authorization: Bearer sk-live-0123456789"}')
    '{"error": "bad header Authorization: Bearer ***"}'
    >>> redact("GET /v1/chat/completions?sig=0a1b2c&code=42 failed")
    'GET /v1/chat/completions?sig=***&code=*** failed'

    A configured secret is masked where it appears bare, and so is a part of it of 6 characters or more — the
    head of a key cut by a length limit, say:

    >>> key = "k3y-0123456789abcdef"
    >>> redact(f"server says: unknown key {key}; echo: '{key[:9]}", [key])
    "server says: unknown key ***; echo: '***"
    """
    variants = _variants(secrets)
    for variant in variants:
        text = text.replace(variant, MASK)
    text = _mask_fragments(text, [v for v in variants if len(v) > MIN_FRAGMENT])
    text = _AT_SLASHED_USERINFO_TEXT.sub(rf"\1{MASK}@", text)  # before the plain form, which ends at the first "@"
    text = _USERINFO.sub(rf"\1{MASK}@", text)
    text = _SLASHED_USERINFO_TEXT.sub(rf"\1{MASK}@", text)
    text = _BARE_USERINFO.sub(f"{MASK}@", text)
    text = _QUERY.sub(_masked_query, text)
    text = _FRAGMENT.sub(rf"\1#{MASK}", text)
    text = _MASKED_URL_FRAGMENT.sub(rf"\1#{MASK}", text)
    for pattern, replacement in _KEY_SHAPES:
        text = pattern.sub(replacement, text)
    return text


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


def _variants(secrets: Iterable[str]) -> list[str]:
    """Each secret as it may be written: bare, URL-quoted, URL-unquoted, JSON-escaped; longest first."""
    found: set[str] = set()
    for secret in secrets:
        if not isinstance(secret, str) or len(secret) < _MIN_SECRET:
            continue
        for variant in (secret, quote(secret, safe=""), unquote(secret), json.dumps(secret)[1:-1]):
            if len(variant) >= _MIN_SECRET:
                found.add(variant)
    return sorted(found, key=len, reverse=True)


def _mask_fragments(text: str, secrets: Sequence[str]) -> str:
    """``text`` with every run made of ``MIN_FRAGMENT``-character pieces of a secret replaced by the mask.

    Each stretch of ``text`` that is a substring (at least ``MIN_FRAGMENT`` long) of a secret is covered by
    that secret's ``MIN_FRAGMENT``-grams, so marking every position covered by one of them masks all such
    stretches (and, rarely, a little more)."""
    size = MIN_FRAGMENT
    grams = {secret[i:i + size] for secret in secrets for i in range(len(secret) - size + 1)}
    if not grams or len(text) < size:
        return text
    covered = bytearray(len(text))
    for start in range(len(text) - size + 1):
        if text[start:start + size] in grams:
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
            out.append(run if _ordinary_word(run) else MASK)
        else:
            out.append(text[index])
            index += 1
    return "".join(out)


def _ordinary_word(run: str) -> bool:
    """Whether a run of text that a secret shares is one ordinary word, left readable: letters only, all in
    one case or capitalised, at most ``MAX_WORD`` characters. A secret's words (``OPENAI`` in
    ``sk-probe-OPENAI-1``) are words of other texts too (``OPENAI_API_KEY``); a run with a digit, a sign or
    mixed case inside (``sk-liv``, ``Zq8XwV``, ``-live-``) is a piece of the secret.

    >>> [_ordinary_word(r) for r in ("OPENAI", "Bearer", "secret", "sk-liv", "-live-", "Zq8XwV", "OpenAI")]
    [True, True, True, False, False, False, False]
    """
    return len(run) <= MAX_WORD and bool(_WORD.fullmatch(run))


def _masked_query(match: re.Match) -> str:
    pieces = re.split(r"([&;])", match.group(1))
    masked = [piece if piece in ("", "&", ";") else
              (piece.split("=", 1)[0] + "=" + MASK if "=" in piece else MASK) for piece in pieces]
    return "?" + "".join(masked)


def configured_secrets(base_url: str | None = None, api_key_env: str | None = None, *,
                       query: bool = True, path: bool = True) -> list[str]:
    """The secrets a backend is configured with, for :func:`redact`: the API key in the environment
    variable ``api_key_env`` (read now), and the credentials written into ``base_url`` — its password (as
    written and decoded), its user name when that is the only credential (a token passed as the user), the
    Basic-auth header value they make, (unless ``query`` is False) each query value of at least
    ``MIN_FRAGMENT`` characters (a signature, a code), so that a server echoing one bare is masked too, and
    (unless ``path`` is False) each segment of its path that is shaped like a key (:func:`path_secrets`).
    A backend's name masks query values by their place (``query=False``) and path keys as secrets, with a
    digest of both as given, so that two deployments that differ only there keep apart caches.

    >>> configured_secrets("http://alice:s3cr%40t99@h/v1?sig=0123abcd&n=1")
    ['s3cr%40t99', 's3cr@t99', 'YWxpY2U6czNjckB0OTk=', '0123abcd']
    """
    secrets: list[str] = []
    key = os.environ.get(api_key_env) if api_key_env else None
    if key:
        secrets.append(key)
    credentials = url_credentials(base_url) if base_url else None
    if credentials is not None:
        (user, password), raw = credentials, _raw_userinfo(base_url) or ""
        if password:
            secrets.extend(dict.fromkeys([raw.partition(":")[2], password]))
        elif user:
            secrets.extend(dict.fromkeys([raw, user]))
        secrets.append(_basic_value(user, password))
    if query and base_url:
        secrets.extend(value for value in _query_values(base_url) if len(value) >= MIN_FRAGMENT)
    if path and base_url:
        secrets.extend(path_secrets(base_url))
        secrets.extend(value for value in _path_parameters(base_url) if len(value) >= MIN_FRAGMENT)
    return [secret for secret in secrets if secret]


# The words of an environment variable's name (split on "_") that mark its value as a credential; PWD only
# after another word (PWD and OLDPWD are folders), KEY only as the last word (AWS_ACCESS_KEY_ID is an id).
_SECRET_WORDS = frozenset({"token", "tokens", "secret", "secrets", "password", "passwd", "pass", "passphrase",
                           "credential", "credentials", "creds", "cookie", "cookies", "webhook", "auth",
                           "authorization", "authtoken", "authkey", "dsn", "apikey", "accesskey", "pat", "jwt",
                           "psk", "hec"})
# Words that end in "pass" and name no password (GIT_ASKPASS is a program; a two-pass encoding).
_NOT_PASSWORDS = frozenset({"askpass", "bypass", "compass", "encompass", "surpass", "trespass", "overpass",
                            "underpass", "multipass", "onepass", "twopass", "singlepass", "firstpass",
                            "secondpass"})
# Written anywhere in a name, also without "_" around it (SSHPASS is a whole name of its own).
_SECRET_PARTS = re.compile(r"(?i)passw(or)?d|passphrase|secret|credential|cookie|webhook|private_?key|^sshpass$"
                           r"|(?:^|_)id_(?:rsa|dsa|ecdsa|ed25519)(?:_|$)")
# A name ending in one of these words holds where a credential is, not the credential (SSH_AUTH_SOCK,
# AWS_SHARED_CREDENTIALS_FILE, PASSWORD_STORE_DIR).
_LOCATION_WORDS = frozenset({"file", "path", "dir", "sock", "socket", "home"})
# Last words naming another copy or encoding of the same credential (..._KEY_OLD, ..._KEY_B64).
_COPY_WORDS = frozenset({"old", "new", "backup", "bak", "prev", "next", "alt", "b64", "base64", "hex", "pem", "json",
                         "primary", "secondary", "current"})


def secret_variable(name: str) -> bool:
    """Whether the environment variable ``name`` holds a credential: a word of its name is one of
    ``TOKEN``, ``SECRET``, ``PASSWORD``, ``PASSWD``, ``PASS``, ``PASSPHRASE``, ``CREDENTIALS``, ``COOKIE``,
    ``WEBHOOK``, ``AUTH``, ``AUTHORIZATION``, ``DSN``...; its last word is ``KEY`` or ``BEARER`` or ends in
    ``KEY`` (``*_API_KEY``, ``*_PRIVATE_KEY``, ``OPENAIKEY``, ``AzureOpenAIKey``); it ends in ``_PWD`` (``MYSQL_PWD``); it contains ``PASSWORD``, ``PASSWD``,
    ``PASSPHRASE``, ``SECRET``, ``CREDENTIAL``, ``COOKIE``, ``WEBHOOK`` or ``PRIVATE_KEY`` (``PGPASSWORD``);
    a word of it is ``PAT``, ``JWT`` or ``CREDS`` (``GH_PAT``, ``CI_JOB_JWT``, ``MY_SERVICE_CREDS``) or ends
    in ``PASS`` as a password does (``SSHPASS``, ``PGPASS``; not ``GIT_ASKPASS``). A name whose last word is ``FILE``, ``PATH``, ``DIR``, ``SOCK``, ``SOCKET`` or
    ``HOME`` names where a credential is kept, and is none.

    >>> [secret_variable(n) for n in ("MYSQL_PWD", "SSHPASS", "GPG_PASSPHRASE", "SLACK_WEBHOOK_URL",
    ...                               "NPM_CONFIG__AUTH", "SENTRY_DSN", "DEPLOY_PRIVATE_KEY", "PGPASSWORD")]
    [True, True, True, True, True, True, True, True]
    >>> [secret_variable(n) for n in ("GH_PAT", "PGPASS", "CI_JOB_JWT", "MY_SERVICE_CREDS", "STRIPE_SK", "SPLUNK_HEC",
    ...                               "WIFI_PSK", "OPENAI_API_KEY_2", "OPENAI_API_KEYS", "SIGNING_KEY_V2", "DB_PW")]
    [True, True, True, True, True, True, True, True, True, True, True]
    >>> [secret_variable(n) for n in ("BW_SESSION", "OP_SESSION_myteam", "TS_AUTHKEY", "XDG_SESSION_TYPE")]
    [True, True, True, False]
    >>> [secret_variable(n) for n in ("OPENAIKEY", "GEMINIKEY", "AzureOpenAIKey", "MY_JUDGE_BEARER")]
    [True, True, True, True]
    >>> [secret_variable(n) for n in ("PWD", "OLDPWD", "SSH_AUTH_SOCK", "GIT_ASKPASS", "GIT_AUTHOR_NAME",
    ...                               "AWS_ACCESS_KEY_ID", "TOKENIZERS_PARALLELISM", "PASSWORD_STORE_DIR")]
    [False, False, False, False, False, False, False, False]
    """
    words = name.lower().split("_")
    if len(words) > 1 and words[-1] in _LOCATION_WORDS:
        return False
    while len(words) > 1 and (words[-1] in _COPY_WORDS or re.fullmatch(r"v?\d+", words[-1])):
        words = words[:-1]  # OPENAI_API_KEY_2, SIGNING_KEY_V2, ENCRYPTION_KEY_B64: the same credential
    return (bool(_SECRET_WORDS.intersection(words)) or words[-1] in ("key", "keys", "bearer")
            or re.fullmatch(r"[a-z0-9]+(?:api)?keys?", words[-1]) is not None  # OPENAIKEY, AzureOpenAIKey
            or (len(words) > 1 and words[-1] == "session")  # BW_SESSION (not XDG_SESSION_TYPE)
            or words[:2] == ["op", "session"]  # 1Password's OP_SESSION_<account>
            or (len(words) > 1 and words[-1] in ("pwd", "pw", "sk"))  # MYSQL_PWD, DB_PW, STRIPE_SK
            or bool(_SECRET_PARTS.search(name)) or any(_compound_pass(word) for word in words))


def _compound_pass(word: str) -> bool:
    """Whether one word of a name ends in ``pass`` as a password does (``pgpass``, ``storepass``, ``keypass``;
    not ``askpass``, ``bypass``, ``compass``)."""
    return word.endswith("pass") and len(word) > 4 and word not in _NOT_PASSWORDS


def environment_secrets(environ: Mapping[str, str] | None = None) -> list[str]:
    """The credentials in the environment, for :func:`redact`: the value of each variable named as one
    (:func:`secret_variable`: ``*_API_KEY``, ``*_TOKEN``, ``MYSQL_PWD``, ``SSHPASS``, ``*WEBHOOK*``...), and the
    password of a URL in any variable (``DATABASE_URL=postgres://app:pw@db/app``, as written and decoded);
    a value that is a URL (``SLACK_WEBHOOK_URL``) is masked after its ``scheme://``, which stays readable;
    only those of at least ``MIN_FRAGMENT`` characters (shorter ones would mask ordinary words wherever a
    shared record writes them). A key copied from the environment into a spec, a URL or a command is masked
    wherever a shared record writes it.

    >>> environment_secrets({"OPENAI_API_KEY": "sk-0123456789", "HF_TOKEN": "hf_abcdefgh", "HOME": "/home/me",
    ...                      "SSH_AUTH_SOCK": "/tmp/agent", "MY_PASSWORD": "short",
    ...                      "DATABASE_URL": "postgres://app:s3cr%40t-db@db:5432/app",
    ...                      "SLACK_WEBHOOK_URL": "https://hooks.example.com/T0/B0/x9Y8z7"})
    ['sk-0123456789', 'hf_abcdefgh', 's3cr%40t-db', 's3cr@t-db', 'hooks.example.com/T0/B0/x9Y8z7']
    """
    environ = os.environ if environ is None else environ
    found: list[str] = []
    for name, value in environ.items():
        if not isinstance(value, str):
            continue
        if secret_variable(name):  # a URL without its scheme: as a fragment, "https:" would mask every URL's
            found.append(re.sub(r"^[A-Za-z][A-Za-z0-9+.\-]*://", "", value.strip()))
        elif "://" in value and "@" in value:
            credentials, raw = url_credentials(value.strip()), _raw_userinfo(value.strip()) or ""
            if credentials is not None and credentials[1]:
                found.extend(dict.fromkeys([raw.partition(":")[2], credentials[1]]))
    return [value for value in dict.fromkeys(found) if len(value) >= MIN_FRAGMENT]


def public_endpoint(base_url: str | None, api_key_env: str | None = None) -> str | None:
    """What a shared record keeps of an endpoint (a judge card, a leaderboard, a run store, a grid unit):
    ``base_url`` through :func:`redact` with the credentials it carries (:func:`configured_secrets`, the key in
    ``api_key_env`` among them) and those of the environment (:func:`environment_secrets`). None stays None.

    >>> public_endpoint("http://user:hunter2@10.0.0.7:8000/v1?api_key=abc123&token=t0k3n9")
    'http://***@10.0.0.7:8000/v1?api_key=***&token=***'
    >>> public_endpoint("https://host/v1;jsessionid=9F8E7D6C5B")
    'https://host/v1;jsessionid=***'
    """
    if base_url is None:
        return None
    return redact(base_url, [*configured_secrets(base_url, api_key_env), *environment_secrets()])


def endpoint_label(base_url: str) -> str:
    """Where an endpoint is, for a name: host, port and path of :func:`public_endpoint` (no user-info, no
    query), so that judges served from different endpoints are named apart and no credential is in a name.

    >>> endpoint_label("https://user:pw@api.example.com:8443/v1/?key=k3y0123")
    'api.example.com:8443/v1'
    """
    shown = public_endpoint(base_url) or ""
    try:
        parts = urlsplit(shown)
    except ValueError:
        return shown
    if not parts.netloc:
        return shown
    return parts.netloc.rpartition("@")[2] + parts.path.rstrip("/")


def _query_values(url: str) -> list[str]:
    """The values (and bare pieces) of ``url``'s query string, as written and decoded."""
    try:
        raw = urlsplit(url).query
    except ValueError:
        return []
    values: list[str] = []
    for piece in re.split(r"[&;]", raw):
        value = piece.split("=", 1)[1] if "=" in piece else piece
        values.extend(dict.fromkeys([value, unquote(value.replace("+", " "))]))
    return values


_SLASHED_USERINFO = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://([^@\s/:]+:(?!\d+(?:/|$))\S*)@[^@\s/?#]+(?:[/?#]|$)")


def _raw_userinfo(url: str) -> str | None:
    """The ``user:password`` part of ``url``'s authority as written, or None when it has none; a password
    with an unencoded ``/`` (``postgres://u:pa/ss@db/app``, which a URL parser reads as a path) runs to the
    last ``@`` that a host follows (not a port: ``https://h:8080/u/@me`` has none), also when the password
    holds an ``@`` before its ``/`` (``http://u:p@ss/w@db/v1``): to the last ``@`` a host name follows.

    >>> _raw_userinfo("postgres://u:pa/ss@db/app"), _raw_userinfo("https://h:8080/u/@me")
    ('u:pa/ss', None)
    >>> _raw_userinfo("http://alice:p@ss/w%rd@127.0.0.1:8000/v1"), _raw_userinfo("postgres://a:p@ss/w0rd@db/app")
    ('alice:p@ss/w%rd', 'a:p@ss/w0rd')
    """
    try:
        netloc = urlsplit(url).netloc
    except ValueError:
        return None
    if "@" in netloc:
        at_slashed = _AT_SLASHED_USERINFO_TEXT.match(url.strip())
        return url.strip()[len(at_slashed[1]):at_slashed.end() - 1] if at_slashed else netloc.rpartition("@")[0]
    slashed = _SLASHED_USERINFO.match(url.strip())
    return slashed.group(1) if slashed else None


def url_credentials(url: str) -> tuple[str, str] | None:
    """(user, password), percent-decoded, written into ``url``'s authority; None when there are none.

    >>> url_credentials("https://u:p%2Fw@h:8000/v1"), url_credentials("http://h/v1")
    (('u', 'p/w'), None)
    """
    userinfo = _raw_userinfo(url)
    if userinfo is None:
        return None
    user, _, password = userinfo.partition(":")
    return unquote(user), unquote(password)


def _basic_value(user: str, password: str) -> str:
    """The value of the Basic ``Authorization`` header for (user, password), as requests builds it."""
    try:
        raw = f"{user}:{password}".encode("latin1")
    except UnicodeEncodeError:
        raw = f"{user}:{password}".encode("utf-8")
    return base64.b64encode(raw).decode("ascii")
