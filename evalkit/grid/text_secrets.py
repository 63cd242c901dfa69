"""Credentials written in a text a command line carries: JSON and Python-literal fields named as credentials
(:func:`_json_fields`), ``Authorization`` and cookie values, ``user:password`` pairs, passwords in URLs, and
assignments in code and configuration (:func:`_text_secrets`)."""
from __future__ import annotations

import json
import re

from evalkit.models.credential_names import name_words
from evalkit.models.redaction import (MASK, _HOST_LIKE, _NOT_NEXT_URL, _URL_START, _basic_value, _ordinary_word,
                                      path_secrets, secret_variable)
from evalkit.grid.credential_names import _URL, _credential_header, credential_name

_HEADER = re.compile(r"\s*+([A-Za-z][\w-]*+)\s*+:\s*+(\S.*)", re.DOTALL)
_SCHEME = re.compile(r"(?i)(bearer|basic|token|digest|negotiate|apikey)\s+(\S.*)", re.DOTALL)
# A field of a JSON (or Python) object: "name": "value" (escapes read), 'name': 'value' or "name": 1234.
_JSON_FIELD = re.compile(r"""(["'])([^"'\s:{}]+(?: [^"'\s:{}]+){0,3})\1\s*:\s*(?:(["'])((?:\\.|(?!\3)[^\\])*)\3|([^\s,}\]"'\[{][^\s,}\]"']*))""")
# A field whose value is a list ("creds": ["a", "b"]): each of its strings.
_JSON_LIST = re.compile(r"""(["'])([^"'\s:{}]+)\1\s*:\s*\[([^\[\]{}]*)\]""")
_QUOTED = re.compile(r"""(["'])((?:\\.|(?!\1)[^\\])*)\1""")
_PLACEHOLDER = re.compile(r"\{[A-Za-z_]\w*\}")


def _pair(value: str) -> tuple[list[str], str]:
    """The secrets of a ``user:password`` value and how it is shown: the password (the user when the password
    is empty: a token passed as the user), the whole value and the Basic header it makes; shown with the
    password (or the token) masked. A value without ``:`` names a user only (the program asks for the password).

    >>> _pair("alice:pw-1234")
    (['pw-1234', 'alice:pw-1234', 'YWxpY2U6cHctMTIzNA=='], 'alice:***')
    >>> _pair("sk_test_0123:")[1], _pair("alice")
    ('***:', ([], 'alice'))
    """
    if ":" not in value or "://" in value or _templated(value):
        return [], value
    user, _, password = value.partition(":")
    shown = f"{user}:{MASK}" if password else f"{MASK}:"
    return [password or user, value, _basic_value(user, password)], shown


def _cookies(value: str) -> list[str]:
    """The secrets of cookie data: the whole of it and each cookie's value of at least 6 characters (a program
    may print one alone; a shorter one, such as ``dark``, would mask ordinary words).

    >>> _cookies("sid=abc123; theme=dark")
    ['sid=abc123; theme=dark', 'abc123']
    """
    values = (piece.partition("=")[2].strip() for piece in value.split(";") if "=" in piece)
    return [value, *(cookie for cookie in values if len(cookie) >= 6)]


def _header(value: str) -> tuple[list[str], str]:
    """The secret of a request header named as a credential (``Authorization``, ``Cookie``, ``X-Api-Key``,
    ``X-Auth-Token``...) and how it is shown: its value, after an auth scheme (``Bearer``, ``Basic``...) kept
    readable. Another header is no secret.

    >>> _header("Authorization: Bearer abc.def-123"), _header("X-Api-Key:k3y-0001"), _header("Accept: text/csv")
    ((['abc.def-123'], 'Authorization: Bearer ***'), (['k3y-0001'], 'X-Api-Key: ***'), ([], 'Accept: text/csv'))
    """
    match = _HEADER.fullmatch(value)
    if not match or _templated(value) or not _credential_header(match[1]):
        return [], value
    scheme = _SCHEME.fullmatch(match[2].strip())
    if scheme:
        return [scheme[2]], f"{match[1]}: {scheme[1]} {MASK}"
    return [match[2].strip()], f"{match[1]}: {MASK}"


def _json_fields(text: str, *, printed: bool = False) -> tuple[list[str], str]:
    """The secrets of a JSON body (or a Python literal) written in an argument — the values of its fields named
    as credentials (:func:`credential_name`: ``token``, ``password``, ``api_key``,
    ``client_secret``, ``session``...), at any depth — and the text with them masked. A value with a
    placeholder (``{pw}``), ``null``, ``true`` or ``false`` stays; so does a lone ``key``'s in what a program
    ``printed`` (a request body's ``"key"`` is an API key, a printed record's its id).

    >>> _json_fields('{"token": "t0k-1234", "user": {"password":"pw-5678"}, "max_tokens": 9}')
    (['t0k-1234', 'pw-5678'], '{"token": "***", "user": {"password":"***"}, "max_tokens": 9}')
    >>> _json_fields('{"token": "{tok}", "ok": true}')
    ([], '{"token": "{tok}", "ok": true}')
    >>> _json_fields('{"creds": ["c-0001", "c-0002"], "tags": ["a"]}')
    (['c-0001', 'c-0002'], '{"creds": ["***", "***"], "tags": ["a"]}')
    """
    found: list[str] = []

    def mask(match: re.Match) -> str:
        group = 4 if match[3] else 5
        value = match[group]
        if (not credential_name(match[2], option=True) or (printed and name_words(match[2]) == ["key"]) or not value or value in ("null", "true", "false", MASK)
                or _PLACEHOLDER.search(value)):
            return match[0]
        found.append(value)
        if "\\" in value and match[3] == '"':
            try:
                found.append(json.loads(f'"{value}"'))  # as the program reads it
            except ValueError:
                pass
        start, end = match.start(group) - match.start(0), match.end(group) - match.start(0)
        return match[0][:start] + MASK + match[0][end:]

    def mask_list(match: re.Match) -> str:
        if not credential_name(match[2], option=True):
            return match[0]
        items = _QUOTED.sub(lambda item: item[1] + MASK + item[1] if item[2] and item[2] != MASK
                            and not _PLACEHOLDER.search(item[2]) and not found.append(item[2]) else item[0], match[3])
        return match[0][:match.start(3) - match.start(0)] + items + "]"

    shown = _JSON_FIELD.sub(mask, _JSON_LIST.sub(mask_list, text))
    return found, shown


def _templated(text: str) -> bool:
    """Whether ``text`` holds a grid placeholder (``{pw}``): its value is the unit's, masked with the unit's
    values; other braces (a JSON body, ``PWD={x y}``) are text like any other.

    >>> _templated("{pw}"), _templated('{"x": "S"}'), _templated("-p{pw}")
    (True, False, True)
    """
    return bool(_PLACEHOLDER.search(text))
# name=value pieces of any argument (--from-literal=password=X, -o user=me,password=X, vault login token=X).
# (a value is read at most 2 KB on, so a run of "key=key=..." costs time linear in its length)
_PIECE = re.compile(r"""(?:^|(?<=[\s,;&?=]))([^\s=,;&?'"{}]+)==?(?=([^\s,;&'"=(\[{>][^\s,;&'"]{0,2047}))""")
# Secrets in code and statements, whatever the program: SQL's IDENTIFIED BY 'X' and PASSWORD 'X', an Oracle JDBC
# URL's user/password@, a .pgpass line, requests' auth=('user', 'X'), Perl's $ENV{NAME}="X", PowerShell's
# ConvertTo-SecureString "X".
_STATEMENT_SECRETS = (
    re.compile(r"""(?i)(?<!["'\w])(?:identified\s+by|password)(?:\s+|\s*=\s*)(["'])([^"']+)\1"""),
    re.compile(r"""(?i)\bjdbc:oracle:\w+:[^/\s@:]+/([^@\s/]+)@"""),
    re.compile(r"""^(?:[^:\s]+|\*):(?:\d+|\*):(?:[^:\s]+|\*):(?:[^:\s]+|\*):(\S+)$"""),
    re.compile(r"""\bauth\s*=\s*\(\s*(["'])[^"']*\1\s*,\s*(["'])([^"']+)\2"""),
    re.compile(r"""(?i)convertto-securestring\s+(?:-string\s+)?(["'])([^"']+)\1"""),
    re.compile(r"""(?i)\bidentified\s+with\s+\w+\s+by\s+(["'])([^"']+)\1"""),
    re.compile(r"""(?i)\bset\s+password\s+(?:for\s+\S+\s*)?=\s*(?:password\s*\(\s*)?(["'])([^"']+)\1"""),
    re.compile(r"""\b(?:auth|changeUserPassword|updateUser)\(\s*(["'])[^"']*\1\s*,\s*(["'])([^"']+)\2"""),
    # DuckDB's CREATE SECRET (TYPE s3, KEY_ID K, SECRET 'X'): its SECRET, TOKEN or PASSWORD
    re.compile(r"""(?i)\bcreate\s+(?:or\s+replace\s+)?(?:persistent\s+|temporary\s+)?secret\b[^;]*?"""
               r"""\b(?:secret|token|password)\s+(["']?)([^\s,)'"]+)\1"""),
)
_PERL_ENV = re.compile(r"""\$ENV\{\s*["']?(\w+)["']?\s*\}\s*=\s*(["'])([^"']+)\2""")
# A credential assigned in code: os.environ['OPENAI_API_KEY'] = 'X', api_key = "X", {'token': 'X'}, Ruby's
# :password => "X" and {"api_key" => "X"}, Go's api_key := "X", R's api_key <- "X". A value starts with no
# blank, ";" or bracket: in expect "Password:"; send "X" the quotes around '; send ' close one string and open the
# next.
_CODE_ASSIGNMENT = re.compile(r"""(?:(["'])([A-Za-z_][\w.-]*)\1\s*\]?|\b([A-Za-z_]\w*))\s*(?:=>|:=|<-|[:=])\s*"""
                              r"""(["'])(?![\s;,{}()\[\]])([^"'\\]+)\4""")
# An Authorization header's value written anywhere (git -c http.extraHeader="Authorization: Bearer X",
# Authorization=Bearer X), a Bearer token, and a Basic credential (base64).
_AUTHORIZATION = re.compile(r"(?i)\b(?:proxy-)?authorization\s*[:=]\s*(?:(?:bearer|basic|token|digest|negotiate|apikey)"
                            r"\s+)?([^\s,;&'\"]+)")
_BEARER = re.compile(r"(?i)(?:^|(?<=[\s:=]))(?:bearer[ \t]+(?!-)([^\s'\"]{4,})|basic[ \t]+([A-Za-z0-9+/]{8,}={0,2})(?![^\s'\"]))")
_SCHEMES = ("bearer", "basic", "token", "digest", "negotiate", "apikey")
# An argument after which the next one is the header's value: "Authorization:", "Authorization: Bearer".
_AUTHORIZATION_END = re.compile(r"(?i).*\b(?:proxy-)?authorization\s*+(?:[:=]\s*+)?(?:bearer|basic|token)?")


# A URL whose password holds an unencoded "/" (postgres://me:pa/ss@db/app): a URL parser ends the host at that
# "/", so its user-info is read here, up to the last "@" a host follows. The part before the ":" is no host
# ("[::1]"), the password's first segment no port (https://h:8080/u/@me is a path) and holds no "@" (then the
# user-info ends there, as a parser reads it).
# (the scheme read as the redaction reads it, 32 characters at most from each start: a long run of "a.a.a."
# would otherwise be scanned to its end from every word in it)
_SLASHED_USERINFO = re.compile(rf"""{_URL_START}[^\s/?#@:\[\]"'<>]*:"""
                               r"""((?!\d+/)[^\s?#"'<>/@]*/[^\s?#"'<>]*)"""
                               r"""@(?=[A-Za-z0-9\[][\w.\[\]:-]*(?:[/?#\s"'<>]|$))""")
# ... and one whose password holds an "@" before its "/" (postgres://me:p@ss/w0rd@db/app): to the last "@" a host
# name follows (redaction's reading of such an ambiguous URL).
_AT_SLASHED_USERINFO = re.compile(rf"""{_URL_START}[^\s/?#@:\[\]"'<>]*:"""
                                  rf"""([^\s?#"'<>/]*@[^\s?#"'<>/@]*/(?:{_NOT_NEXT_URL}[^\s?#"'<>])*)"""
                                  rf"""@(?={_HOST_LIKE})""")


def _slashed_passwords(text: str) -> list[tuple[int, int]]:
    """Where in ``text`` the passwords of URLs with an unencoded ``/`` in them are (:data:`_SLASHED_USERINFO`).

    >>> text = "psql postgres://me:pa/ss9@db:5432/app; see https://h:8080/u/@me and https://medium.com/@alice"
    >>> [text[start:end] for start, end in _slashed_passwords(text)]
    ['pa/ss9']
    >>> text = "psql postgres://me:p@ss/w0rd@db/app"
    >>> [text[start:end] for start, end in _slashed_passwords(text)]
    ['p@ss/w0rd']
    """
    return [match.span(1) for pattern in (_AT_SLASHED_USERINFO, _SLASHED_USERINFO) for match in pattern.finditer(text)]


def _text_secrets(text: str, *, printed: bool = False) -> tuple[list[str], str]:
    """The credentials written anywhere in one argument, whatever the program — ``name=value`` pieces whose name
    is a credential's (:func:`credential_name`), an ``Authorization`` value, a ``Bearer`` token, a ``Basic``
    credential — and the argument with them masked. In what a program ``printed`` a lone ``key`` names no
    credential (a command's ``key=X`` is a key, a printed record's ``"key": X`` its id), nor does a lower-case
    name an environment variable's reading would take (``"secret_santa": "alice"``) or an option's word alone
    (``Session: run-01``).

    >>> _text_secrets("--from-literal=password=Pw-1234")
    (['Pw-1234'], '--from-literal=password=***')
    >>> _text_secrets("http.extraHeader=Authorization: Bearer tok-5678")[1], _text_secrets("user=me,password=x1")
    ('http.extraHeader=Authorization: Bearer ***', (['x1'], 'user=me,password=***'))
    >>> _text_secrets("seed=3,max_tokens=64")
    ([], 'seed=3,max_tokens=64')
    >>> _text_secrets("os.environ['OPENAI_API_KEY']='sk0-1234'; print(1)")[1], _text_secrets("api_key==k-99")[1]
    ("os.environ['OPENAI_API_KEY']='***'; print(1)", 'api_key==***')
    """
    spans: list[tuple[int, int]] = []
    for match in _PIECE.finditer(text):
        if credential_name(match[1], option=not printed) and match[2] != MASK and match[2].lower() not in _SCHEMES \
                and not (printed and name_words(match[1]) == ["key"]):
            spans.append(match.span(2))
    for pattern in _STATEMENT_SECRETS:
        for match in pattern.finditer(text):
            spans.append(match.span(pattern.groups if pattern.groups else 0))  # the last group: the secret
    for match in _PERL_ENV.finditer(text):
        if secret_variable(match[1]) or credential_name(match[1]):
            spans.append(match.span(3))
    for match in _CODE_ASSIGNMENT.finditer(text):
        name = match[2] or match[3]
        if name.lower() == "key" and re.match(r"\s*(?:/?>|value\s*=)", text[match.end():]):
            continue  # <entry key="db.password">X</entry>, <add key="ApiKey" value="X"/>: the key is a name
        if (credential_name(name, option=not printed) or (secret_variable(name) and (name.isupper() or not printed))) \
                and match[5] != MASK and not (printed and name_words(name) == ["key"]):
            spans.append(match.span(5))
    for match in _URL.finditer(text):  # a key in a URL's path, wherever the URL stands
        for key in path_secrets(match[0]):
            start = text.find(key, match.start())
            spans.append((start, start + len(key)))
    spans += _slashed_passwords(text)
    for pattern in (_AUTHORIZATION, _BEARER):
        for match in pattern.finditer(text):
            group = next((g for g in range(1, pattern.groups + 1) if match[g] is not None), None)
            if group is not None and match[group] != MASK and match[group].lower() not in _SCHEMES:
                spans.append(match.span(group))
    found, shown, last = [], [], 0
    for start, end in sorted(set(spans)):
        if start < last or _PLACEHOLDER.search(text[start:end]):
            continue
        found.append(text[start:end])
        shown += [text[last:start], MASK]
        last = end
    return found, "".join(shown) + text[last:]


def _user_pair(value: str, separators: str = ":%") -> tuple[list[str], str]:
    """The secrets of a ``user:password`` (or Samba's ``user%password``) given to a user option of any program,
    and how it is shown; a pair whose second part is a number is an id pair (``docker run -u 1000:1000``), and a
    user with an empty password that is no ordinary word is a token (Stripe's ``curl -u sk_test_...:``).

    >>> _user_pair("alice:pw-1234")[1], _user_pair("alice%pw-1234")[1], _user_pair("1000:1000"), _user_pair("bob")
    ('alice:***', 'alice%***', ([], '1000:1000'), ([], 'bob'))
    >>> _user_pair("tkCurlU5Lm9Pq3:")[1], _user_pair("alice:")
    ('***:', ([], 'alice:'))
    """
    separator = next((c for c in separators if c in value), None)
    if separator is None or "://" in value or _templated(value):
        return [], value
    user, _, password = value.partition(separator)
    if not password and value.endswith(separator) and len(user) >= 6 and not _ordinary_word(user) \
            and not user.isdigit():  # a token given as the user, its password empty (curl -u sk_live_...:)
        return [user, value, _basic_value(user, "")], f"{MASK}{separator}"
    if not password or password.isdigit() or password == MASK:
        return [], value
    return [password, value, _basic_value(user, password)], f"{user}{separator}{MASK}"


def _words(line: str) -> list[str]:
    """A shell line's words, its quoting read as a shell would and ``;``, ``&&``, ``|``... words of their own
    (a line that does not parse, split on blanks).

    >>> _words("a -p 'x y';b&&c")
    ['a', '-p', 'x y', ';', 'b', '&&', 'c']
    """
    import shlex

    try:
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|()")
        lexer.whitespace_split = True
        return list(lexer)
    except ValueError:
        return line.split()
