"""One redaction for every string that leaves the model door: exception messages, backend names (and so
cache keys and rows), telemetry, run stores and reports.

:func:`redact` masks, in this order,

1. every secret it is given — in full, URL-quoted and JSON-escaped (one of ``MIN_ENCODED`` (12) characters or
   more also base64-encoded, lower- or upper-cased and ``\\u``-escaped) — and every run of at least
   ``MIN_FRAGMENT`` (6) characters of a secret: a key cut by a message-length limit, or echoed by a server
   without its ``Bearer``/``key=`` prefix, is still masked; a run that is one ordinary word (letters only, in
   one case or capitalised, at most ``MAX_WORD`` characters: ``OPENAI`` of a key ``sk-...-OPENAI-...``,
   ``Bearer`` of a token ``BearerTok-...``) is not masked when it is all the text shares with the secret;
2. the user-info of URLs (``scheme://user:password@`` becomes ``scheme://***@``);
3. every query-string value (``?sig=...&code=...`` becomes ``?sig=***&code=***``; a bare ``?token`` becomes
   ``?***``) and URL fragments, after a URL or a path;
4. known shapes of credentials, also where escapes hide them (a name percent-encoded or written as HTML
   entities or full-width letters, a value ``\\u``-escaped, split by a backslash-newline or by invisible
   characters: :mod:`evalkit.models.encoded_text`), and passwords given to programs' options in free text:
   ``Bearer``/``Basic`` tokens, ``key=``/``token=``/``password=``... values,
   JSON and header fields such as ``"api_key": ...`` or ``Authorization: ...``, and ``sk-...``, ``hf_...``,
   ``ghp_...``, ``AKIA...``, ``AIza...``, ``xox?-...`` keys and JSON web tokens.
5. what only its surroundings show to be a credential (:mod:`evalkit.models.secret_blocks`): a private key's body
   before its ``END`` line, the base64 values under a Kubernetes Secret's ``data``, and a base64 run whose text
   holds a credential (read two layers deep: a ``.dockerconfigjson``).

The function is pure (its result depends on ``text`` and ``secrets`` only), so a backend name built with it
is the same in every process. :func:`configured_secrets` lists the secrets a backend is configured with,
:func:`environment_secrets` the credentials in the environment.

What a record shared with others — a judge card, a leaderboard, a run store, a grid unit — keeps of an
endpoint is :func:`public_endpoint` (the URL redacted with its own credentials and the environment's), and
what a judge's name says of it is :func:`endpoint_label` (host, port and path only).
"""
from __future__ import annotations

import base64
import os
import re
from typing import Mapping, Sequence
from urllib.parse import unquote, urlsplit

# The forms of a known secret and their masking live in secret_forms; this module's API re-exports them.
from evalkit.models.secret_forms import (MASK, MAX_WORD, MIN_ENCODED, MIN_FRAGMENT, _ordinary_word,  # noqa: F401
                                         mask_echoes, mask_secrets)
# path_secrets is part of this module's API too: a key in a URL's path is a configured secret.
from evalkit.models.key_shapes import KEY_SHAPES as _KEY_SHAPES, path_parameters as _path_parameters, path_secrets
from evalkit.models.encoded_text import mask_encoded_credentials
from evalkit.models.named_fields import mask_named_fields
from evalkit.models.secret_blocks import mask_encoded_secrets, mask_headless_private_keys, mask_secret_data
# secret_variable too: which environment variables hold a credential, by their names.
from evalkit.models.key_shapes import _compound_pass, secret_variable  # noqa: F401 (_compound_pass: evalkit.grid)

__all__ = ["redact", "mask_echoes", "configured_secrets", "environment_secrets", "secret_variable", "public_endpoint",
           "endpoint_label", "url_credentials", "path_secrets", "MASK", "MIN_FRAGMENT"]


# Every pattern here runs in time linear in the text (a card's example, a 64 KB spec): no pattern may scan from
# each of many starts to the same far end. A scheme is read back at most 32 characters from its "://" (a longer
# run of scheme characters is a URL's start too, from its last 32), and a pattern that reads a URL on across
# "/" stops at the next "://" after a scheme character, where the next URL starts.
_URL_START = r"(?:\b[A-Za-z][A-Za-z0-9+.\-]{0,31}|(?<=[A-Za-z0-9+.\-])[A-Za-z0-9+.\-]{32})://"
_NOT_NEXT_URL = r"(?!(?<=[A-Za-z0-9+.\-])://)"  # before a character of a URL read on across "/"
_USERINFO = re.compile(rf"({_URL_START})[^\s/?#\"'<>]*@")
# A password with an unencoded "/" (u:pa/ss@db): user-info to the last "@" a host follows; not a port's "h:80/".
# A password holding an unencoded "@" before its "/" (http://u:p@ss/w0rd@db/v1): read to the last "@" that a host
# name follows, so no piece of the password stays; a path with an "@" after user-info (https://me:pw@h/a/@b) then
# loses its host in what is shown, which is the safe side of an ambiguous URL.
_HOST_LIKE = r"(?:\[[0-9A-Fa-f:.]+\]|[\w.-]+)(?::\d+)?(?:[/?#\s\"'<>]|$)"
_AT_SLASHED_USERINFO_TEXT = re.compile(rf"({_URL_START})[^@\s/:\"'<>]+:(?>[^\s/\"'<>]*@[^\s/\"'<>@]*/)"
                                       rf"(?:{_NOT_NEXT_URL}[^\s\"'<>])*@(?={_HOST_LIKE})")
_SLASHED_USERINFO_TEXT = re.compile(rf"({_URL_START})[^@\s/:\"'<>]+:(?!\d+(?:/|\s|$))(?:{_NOT_NEXT_URL}[^\s\"'<>])*@"
                                    r"(?=[^@\s/?#\"'<>]+(?:[/?#\s\"'<>]|$))")
# A query starts at a "?" right after a URL or path character; it runs to a space, a quote or a fragment.
# (a quote ends it, and a backslash: URLs encode both, and "?\\"" in a JSON string keeps its escape)
_QUERY = re.compile(r"(?<=[\w/.\-:%\]])\?([^\s#\"'<>\\]+)")
# user:password@host without a well-formed scheme in front (a typo: "http:/u:p@h", or no scheme at all; the user
# may be empty, as a URL's netloc ":pw@redis:6379" is, before a password of 4 characters or more: ":D@alice" in a
# chat is no credential); it is looked for only in the stretch of text that ends at such an "@"
# (:func:`_mask_bare_userinfo`).
_BARE_USERINFO = re.compile(r"(?<![\w.~%+\-:])(?:[A-Za-z0-9._~%+\-]+:[^\s/?#@\"'<>]+|:[^\s/?#@\"'<>:]{4,})"
                            r"@(?=[A-Za-z0-9\[])")
_BARE_USERINFO_STRETCH = re.compile(r"(?<![^\s/?#@\"'<>])[^\s/?#@\"'<>]*@(?=[A-Za-z0-9\[])")
_FRAGMENT = re.compile(rf"({_URL_START}(?:{_NOT_NEXT_URL}[^\s#\"'<>])*)#[^\s\"'<>]+")
# ... and a URL whose start a configured secret has masked already ("***/v1#token"): its fragment still goes.
_MASKED_URL_FRAGMENT = re.compile(r"((?<![^\s\"'<>=(\[])\*\*\*(?:(?![=(\[]\*\*\*)[^\s#\"'<>])*)#[^\s\"'<>]+")
# User-info read in a text's decoded reading: up to (not with) the "@" a host follows.
_DECODED_SHAPES = [*_KEY_SHAPES, (re.compile(rf"({_URL_START})[^\s/?#\"'<>@]+(?=@[^\s/?#\"'<>@]+(?:[/?#\s\"'<>]|$))"),
                                  rf"\1{MASK}")]


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
    return _redacted(text, secrets, _ENCODED_LAYERS)


_ENCODED_LAYERS = 2  # base64 inside base64 (a .dockerconfigjson's "auth") is read this deep


def masked_parts(text: str, masked: str) -> list[str]:
    """The parts of a short ``text`` (a model's name) that its redaction ``masked`` replaced by masks: what to
    mask where the text is echoed, without its ordinary parts (``gpt-4o-mini`` of a name that also holds a key).

    >>> masked_parts("gpt-4o-mini?api_key=Zq8vLm3pWx9Qa1", redact("gpt-4o-mini?api_key=Zq8vLm3pWx9Qa1"))
    ['Zq8vLm3pWx9Qa1']
    """
    import difflib

    opcodes = difflib.SequenceMatcher(None, text, masked, autojunk=False).get_opcodes()
    return [text[start:end] for kind, start, end, _, _ in opcodes if kind in ("replace", "delete") and end > start]


def _redacted(text: str, secrets: Sequence[str], layers: int) -> str:
    """:func:`redact`, reading base64 runs of text ``layers`` deep."""
    # what the shapes and URL user-info show once escapes are decoded (a full-width "＠" in a URL's authority)
    text = mask_encoded_credentials(text, _DECODED_SHAPES, MASK)
    text = mask_echoes(text, secrets)  # the secrets given, whole, escaped and in part; then the shapes below
    text = _PARTLY_MASKED.sub(_masked_rest, text) if MASK in text else text
    text = _AT_SLASHED_USERINFO_TEXT.sub(rf"\1{MASK}@", text)  # before the plain form, which ends at the first "@"
    text = _USERINFO.sub(rf"\1{MASK}@", text)
    text = _SLASHED_USERINFO_TEXT.sub(rf"\1{MASK}@", text)
    text = _mask_bare_userinfo(text)
    text = _QUERY.sub(_masked_query, text)
    text = _FRAGMENT.sub(rf"\1#{MASK}", text)
    text = _MASKED_URL_FRAGMENT.sub(rf"\1#{MASK}", text)
    for pattern, replacement in _KEY_SHAPES:
        text = pattern.sub(replacement, text)
    text = mask_named_fields(text)  # a field named as a credential, whatever the syntax around it
    text = mask_secret_data(mask_headless_private_keys(text))
    if layers and len(text) >= 20:
        text = mask_encoded_secrets(text, lambda decoded: _redacted(decoded, secrets, layers - 1))
    return text


# A token a piece of a given secret was masked in: another key that shares the secret's prefix (every OpenAI project
# key starts "sk-proj-"), whose rest no shape reads once its prefix is gone
_PARTLY_MASKED = re.compile(r"(?<![\w\-*])[\w\-]*+(?:\*\*\*[\w\-]*+)+")


def _masked_rest(run: re.Match) -> str:
    """A token holding a mask, masked whole when 12 or more of its characters are left: the rest of a key.

    >>> redact("printed sk-proj-StudentOtherKeyQ9rS8tU7vW6 and sk-proj-TeacherKey0aB1", ["sk-proj-TeacherKey0aB1"])
    'printed *** and ***'
    >>> redact("a myhunter2xyzpass word", ["hunter2xyz"])
    'a my***pass word'
    """
    return MASK if len(run[0].replace(MASK, "")) >= 12 else run[0]


def _mask_bare_userinfo(text: str) -> str:
    """``text`` with :data:`_BARE_USERINFO` masked, as ``_BARE_USERINFO.sub`` would, in linear time: a match
    lies within a stretch of characters none of which ends it, up to the ``@`` a host follows, so each such
    stretch is searched once (a scan from every ``,a:`` of a long text to its end would be quadratic).

    >>> _mask_bare_userinfo("dsn u:pa,ss:w@db:5432 and a:b, c:d@e.f; ,a:,a:,a: netloc=:pw99@redis:6379 :D@alice")
    'dsn ***@db:5432 and a:b, ***@e.f; ,a:,a:,a: netloc=***@redis:6379 :D@alice'
    """
    out, done = [], 0
    for stretch in _BARE_USERINFO_STRETCH.finditer(text):
        match = _BARE_USERINFO.search(text, stretch.start(), stretch.end() + 1)
        if match:
            out += [text[done:match.start()], MASK, "@"]
            done = match.end()
    return "".join(out) + text[done:] if out else text


def _masked_query(match: re.Match) -> str:
    pieces = re.split(r"([&;])", match.group(1))
    masked = [piece if piece in ("", "&", ";") else
              (piece.split("=", 1)[0] + "=" + MASK if "=" in piece else MASK) for piece in pieces]
    return "?" + "".join(masked)


def configured_secrets(base_url: str | None = None, api_key_env: str | None = None, *,
                       query: bool = True, path: bool = True) -> list[str]:
    """The secrets a backend is configured with, for :func:`redact`: the API key in the environment
    variable ``api_key_env`` (read now), and the credentials written into ``base_url`` — its password (as
    written and decoded), its user name when that is the only credential or when it is no ordinary word of at
    least ``MIN_FRAGMENT`` characters (a token passed as the user, with or without a dummy password:
    ``https://TOKEN:x-oauth-basic@host``; a user such as ``alice`` or ``admin`` stays readable), the Basic-auth
    header value they make, (unless ``query`` is False) each query value of at least
    ``MIN_FRAGMENT`` characters (a signature, a code), so that a server echoing one bare is masked too, and
    (unless ``path`` is False) each segment of its path that is shaped like a key (:func:`path_secrets`).
    A backend's name masks query values by their place (``query=False``) and path keys as secrets, with a
    digest of both as given, so that two deployments that differ only there keep apart caches.

    >>> configured_secrets("http://alice:s3cr%40t99@h/v1?sig=0123abcd&n=1")
    ['s3cr%40t99', 's3cr@t99', 'YWxpY2U6czNjckB0OTk=', '0123abcd']
    >>> configured_secrets("https://Qm7Rt2Vx9Lp4Kd8Wn3Hs:x-oauth-basic@h/v1")[:2]
    ['x-oauth-basic', 'Qm7Rt2Vx9Lp4Kd8Wn3Hs']
    """
    secrets: list[str] = []
    key = os.environ.get(api_key_env) if api_key_env else None
    if key:
        secrets.append(key)
    credentials = url_credentials(base_url) if base_url else None
    if credentials is not None:
        secrets.extend(_userinfo_secrets(base_url, lone_user=True))
        secrets.append(_basic_value(*credentials))
    if query and base_url:
        secrets.extend(_query_secrets(base_url))
    if path and base_url:
        secrets.extend(_path_keys(base_url))
    return [secret for secret in secrets if secret]


# A query parameter named as a credential: its value is one however short (?pin=48213, ?otp=9921)
_CREDENTIAL_PARAMETER = re.compile(r"(?i)(?:^|[_\-.])(?:pin|otp|code|token|key|sig|signature|secret|pass|password|pwd"
                                   r"|passcode|auth|apikey|session|sid)$")


def _query_secrets(url: str) -> list[str]:
    """The values of ``url``'s query of at least ``MIN_FRAGMENT`` characters (a signature, a code), and of 4 or
    more where the parameter is named as a credential (``?pin=48213``).

    >>> _query_secrets("https://h/v1?pin=48213&page=2&sig=0123abcd")
    ['48213', '0123abcd']
    """
    named = [value for name, value in _query_pairs(url) if len(value) >= 4 and _CREDENTIAL_PARAMETER.search(name)]
    return list(dict.fromkeys([*named, *(value for value in _query_values(url) if len(value) >= MIN_FRAGMENT)]))


def _query_pairs(url: str) -> list[tuple[str, str]]:
    """``url``'s query as (name, value) pairs, values as written and decoded."""
    try:
        raw = urlsplit(url).query
    except ValueError:
        return []
    pairs = [piece.split("=", 1) for piece in re.split(r"[&;]", raw) if "=" in piece]
    return [(unquote(name), value) for name, written in pairs
            for value in dict.fromkeys([written, unquote(written.replace("+", " "))])]


def _path_keys(url: str) -> list[str]:
    """The keys in ``url``'s path (:func:`path_secrets`) and its path parameters' values of at least
    ``MIN_FRAGMENT`` characters (``;jsessionid=...``)."""
    return [*path_secrets(url), *(value for value in _path_parameters(url) if len(value) >= MIN_FRAGMENT)]


def _userinfo_secrets(url: str, *, lone_user: bool) -> list[str]:
    """The credentials in ``url``'s user-info, as written and decoded: its password, and its user name when
    that is no ordinary word of at least ``MIN_FRAGMENT`` characters (a token passed as the user, with or
    without a dummy password: ``https://TOKEN:x-oauth-basic@host``, ``https://TOKEN@host``); a user name
    given alone is a credential whatever its shape where ``lone_user`` (a backend's own URL), and only when so
    shaped where not (any URL in the environment: ``ssh://deploy@host`` names a login, not a secret).

    >>> _userinfo_secrets("https://alice:pw%40123@h/v1", lone_user=False)
    ['pw%40123', 'pw@123']
    >>> [_userinfo_secrets(url, lone_user=False) for url in ("https://Qm7Rt2Vx9Lp4@h/v1", "ssh://deploy@h")]
    [['Qm7Rt2Vx9Lp4'], []]
    """
    credentials = url_credentials(url)
    if credentials is None:
        return []
    (user, password), raw = credentials, _raw_userinfo(url) or ""
    raw_user, _, raw_password = raw.partition(":")
    found: list[str] = []
    if password:
        found.extend([raw_password, password])
    token_like = len(user) >= MIN_FRAGMENT and not _ordinary_word(user)
    if user and (token_like or (lone_user and not password)):
        found.extend([raw_user, user])
    return [value for value in dict.fromkeys(found) if value]


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


# Which values of the environment are credentials: its own module, which reads URLs with this one's readers.
from evalkit.models.environment_secrets import environment_secrets  # noqa: E402
