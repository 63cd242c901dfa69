"""The credentials a program prints (:func:`output_secrets`): JSON fields, configuration lines and table rows
named as credentials, named values in printed records, a shell's trace of the commands it ran, and private
keys' PEM blocks — so a unit's captured output masks them where they appear."""
from __future__ import annotations

import re

from evalkit.models.key_shapes import NAMED_SHAPES, PRIVATE_KEY_SHAPES, PROSE_SHAPES
from evalkit.models.named_fields import mask_named_fields
from evalkit.models.secret_blocks import secret_data_texts
from evalkit.models.redaction import MASK, _ordinary_word, secret_variable
from evalkit.grid.text_secrets import _JSON_FIELD, _PLACEHOLDER, _json_fields, _templated, _text_secrets, _words
from evalkit.models.credential_names import name_words
from evalkit.grid.credential_names import _holds_credentials, _secret_option, credential_column, credential_name
from evalkit.grid.command_secrets import _scan

# Lines a program prints with a credential in them: "token: X" (YAML), "pass = X" (INI), 'export SECRET_KEY="X"',
# ":password => X" (Ruby), a table row "token    X" or a netrc line "password X" (a name and one value), and a
# private key's PEM block.
_PRINTED_ASSIGNMENT = re.compile(r"""^[ \t]*(?:export[ \t]+|set[ \t]+|-[ \t]+)?:?"""
                                 r"""(["']?)([A-Za-z_][\w.-]*)\1[ \t]*(?::=|=>|[:=])[ \t]*(["']?)([^"'\s#,]+)\3[ \t,]*(?:#.*)?$""", re.M)
_PRINTED_ROW = re.compile(r"^[ \t]*(?:setenv[ \t]+)?([A-Za-z_][\w.-]*)[ \t]+(\S+)[ \t]*$", re.M)
# A row of a table a database client prints: MySQL's "| password | X |", psql's " password | X".
# (possessive: two runs of blanks around an optional bar cannot split one run between them, which was quadratic)
_TABLE_ROW = re.compile(r"^[ \t]*+\|?[ \t]*+([A-Za-z_][\w.-]*)[ \t]*+\|[ \t]*+([^\s|]+)[ \t]*+\|?[ \t]*$", re.M)
# A name of a few words before its value: "API Key: X", "Client secret = X", '"api key": "X"' (quoted).
_SPACED_NAME = re.compile(r"""^[ \t]*+(["']?)([A-Za-z][A-Za-z0-9]*(?:[ \t][A-Za-z][A-Za-z0-9]*){1,3})\1[ \t]*[:=][ \t]*"""
                          r"""(["']?)([^\s"']+)\3[ \t,]*$""", re.M)
# A list written on its name's line: YAML's "api_keys: [A, B]", a TOML array "api_keys = ['A',\n 'B']" whose
# items go on over lines (read up to its closing bracket, never across another bracket or brace)
_FLOW_LIST = re.compile(r"""^[ \t]*+(["']?)([A-Za-z_][\w.-]{0,80})\1[ \t]*+[:=][ \t]*+\[([^\[\]{}]{1,65536}+)\]""", re.M)
# A setter given a credential's name and then its value: os.environ.setdefault("DB_PASSWORD", "X"), os.putenv,
# monkeypatch.setenv, a config's set("db", "password", "X") (the name is the first string argument, or the second
# after a section's name; a getter's default, os.getenv("API_KEY", "sk-placeholder"), is no value)
_CALL_PAIR = re.compile(r"""\b(?:set\w*|put\w*|\w*set(?:env|default))\(\s*+(?:(["'])[\w.-]{0,200}+\1\s*+,\s*+)?"""
                        r"""(["'])([A-Za-z_][\w.-]{0,80})\2\s*+,\s*+(["'])([^"'\r\n]{4,4096}+)\4\s*+[,)]""")
_LEARNED_SHAPES = [shape for shape in NAMED_SHAPES if shape not in PROSE_SHAPES + PRIVATE_KEY_SHAPES]
# The name a value follows (key="db.host", password: X)
_NAME_BEFORE = re.compile(r"""([A-Za-z_][\w.-]{0,80})["']?[ \t]*(?::=|<-|=>?|:)[ \t]*["']?$""")
# a variable a template or a YAML tag fills in, or a YAML anchor or alias standing for a value
_TEMPLATE = re.compile(r"\$\{|\$\(|\{\{|\{%|^!!?[A-Za-z]+\s|^[&*][A-Za-z_][A-Za-z_-]*$")
_SPECIAL_TOKEN = re.compile(r"<\|?[\w.:/-]{1,40}\|?>|\[[A-Za-z_]{2,12}\]")  # a tokenizer's "<|endoftext|>", "[PAD]"
_IDENTIFIER = re.compile(r"[a-z]+(?:_[a-z]+)+|[A-Z]+(?:_[A-Z]+)+")  # a name in a list of names: "base_url"
# Code where a value would stand (:func:`_is_code`): a name or a path of names, and a call or a subscript
_REFERENCE = re.compile(r"_*+[A-Za-z]++(?:[._]++[A-Za-z]++)++")  # (possessive: no split of "a_a_a..." tried twice)
_CALLED = re.compile(r"(_*+[A-Za-z]++(?:[._]++[A-Za-z]++)*+)([(\[])(.*)", re.S)
_VARIABLE = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z][A-Z0-9]*)+")  # an environment variable's name: DB_PASS1
_ARGUMENT = re.compile(r"""\s*(?:[A-Za-z_][\w.]*|(["'])[^"']*\1)?\s*""")  # a call's or subscript's own: x, "k", none
# Named values in printed records: {"name": "DB_PASSWORD", "value": "X"} and "- name: X / value: Y" (Kubernetes
# env lists), <add key="ApiKey" value="X"/> (NuGet, .NET config; name= and single quotes too, either order),
# <password>X</password>, Set-Cookie headers.
_NAME_VALUE = (re.compile(r'"name"\s*:\s*"([^"]+)"\s*,\s*"value"\s*:\s*"([^"]*)"'),
               re.compile(r"""(?m)^[ \t]*+(?:-[ \t]*+)?(?:name|key):[ \t]*["']?([\w.-]+)["']?[ \t]*\r?\n[ \t]*value:[ \t]*["']?([^"'\s]+)"""),
               re.compile(r"""\b(?:key|name)\s*=\s*(["'])(?P<name>[^"']+)\1\s+value\s*=\s*(["'])(?P<value>[^"']*)\3"""),
               re.compile(r"""\bvalue\s*=\s*(["'])(?P<value>[^"']*)\1\s+(?:key|name)\s*=\s*(["'])(?P<name>[^"']+)\3"""),
               re.compile(r"<([A-Za-z_][\w.-]*)>([^<\s]+)</\1>"),
               re.compile(r"""<[A-Za-z_][\w.-]*\s+(?:key|name)\s*=\s*["']([^"']+)["'][^>]*>([^<\s]+)</"""))
# A name of one to three words and a token-like value inside a line of a log ("INFO Using API key: V for requests")
_INLINE_NAME = re.compile(r"""(?<![\w-])((?:[A-Za-z][A-Za-z0-9]*+[ \t]){0,2}+[A-Za-z][\w-]*+)[ \t]*+[:=][ \t]*+"""
                          r"""([^\s"'`,;\[\]{}()<>]{8,200}+)(?![^\s"'`,;\[\]{}()<>])""")
_NAME_TAILS = frozenset({"provided", "given", "used", "supplied", "received", "sent", "is", "was", "value"})
# A pair written as a list of two strings: a headers list's ["X-Api-Key", "V"]
_LISTED_PAIR = re.compile(r"""\[\s*+(["'])([A-Za-z_][\w.-]{0,80})\1\s*+,\s*+(["'])([^"'\r\n]{4,4096}+)\3\s*+\]""")
_SET_COOKIE = re.compile(r"(?im)^[ \t]*set-cookie:[ \t]*[^=;\s]+=([^;\s]+)")
# A value written on the lines below its name: a YAML block scalar ("password: |" then the indented value; a tag
# or an anchor may stand before the marker, the name may be quoted), a YAML list or a TOML array of one item per
# line, a TOML multi-line string (secret_key = ''' ... '''), and Hadoop's XML properties.
_BLOCK_SCALAR = re.compile(r"^([ \t]*)(?:-[ \t]+)?([\"']?)([A-Za-z_][\w.-]*)\2[ \t]*:[ \t]*(?:[!&][^\s]*[ \t]+){0,2}"
                           r"[|>](?:[+-]?[0-9]?|[0-9][+-])(?:[ \t]+#[^\r\n]*)?[ \t]*\r?\n"
                           r"((?:[ \t]*\r?\n)*(?:\1[ \t]+[^\r\n]*(?:\r?\n|\Z)){1,64})", re.M)
_LIST_HEADER = re.compile(r"^([ \t]*+)([\"']?)([A-Za-z_][\w.-]{0,80})\2[ \t]*+(?::|=[ \t]*+\[)[ \t]*+(?:#[^\r\n]*)?\r?$",
                          re.M)
_MOST_ITEMS = 256  # lines of a list read below its name
# A value kept under its name's "value:" field a few lines below (a run's config: "openai_api_key:", "  desc: null",
# "  value: V"), perhaps behind a YAML anchor or tag
_NESTED_VALUE = re.compile(r"""^([ \t]*+)(["']?)([A-Za-z_][\w.-]{0,80})\2[ \t]*+:[ \t]*+\r?\n"""
                           r"""(?:\1[ \t]++(?!value[ \t]*:)[^\r\n]*+\r?\n){0,8}+\1[ \t]++value[ \t]*+:[ \t]*+"""
                           r"""(?:(?:&[A-Za-z_][\w-]*+|!!?[A-Za-z]*+)[ \t]++){0,2}+(["']?)([^\s"'#]++)\4""", re.M)
_MULTILINE_STRING = re.compile(r"""^[ \t]*([\"']?)([A-Za-z_][\w.-]*)\1[ \t]*=[ \t]*('''|\"\"\")\\?\r?\n?"""
                               r"""((?:(?!\3).){1,4096}?)\3""", re.M | re.S)
# Hadoop's <property>: its name and value in either order, perhaps with a description, a comment, CDATA, a
# namespace prefix, in any case; or as attributes (<property name="N" value="V"/>)
_XML_START = re.compile(r"(?i)<(?:[\w-]{1,40}:)?property\b[^<>]{0,1000}>")
_XML_END = re.compile(r"(?i)</(?:[\w-]{1,40}:)?property\s*>")
_MOST_PROPERTIES = 10_000  # <property> elements read in one text
# (a field's text or its CDATA; the CDATA form read only where a block holds one: its lazy scan costs time)
_XML_FIELD_FORM = r"(?is)<(?:[\w-]+:)?(name|key|value)\s*>\s*(?:{cdata}([^<]*?))\s*</(?:[\w-]+:)?\1\s*>"
_XML_FIELD = re.compile(_XML_FIELD_FORM.format(cdata=r"<!\[CDATA\[(.*?)\]\]>|"))
_XML_PLAIN_FIELD = re.compile(_XML_FIELD_FORM.format(cdata="()"))
_XML_COMMENT = re.compile(r"(?s)<!--.*?-->")
_XML_PAIR = re.compile(r"(?i)<(name|key)>\s*([^<>\s]+)\s*</\1>\s*(?:<description>[^<>]*</description>\s*)?"
                       r"<value>\s*([^<>\s]+)\s*</value>")  # a pair outside a <property> element
_XML_ATTRIBUTES = re.compile(r"""(?is)<(?:[\w-]+:)?property\s+(?:name|key)\s*=\s*["']([^"']+)["']\s+value\s*=\s*"""
                             r"""["']([^"']+)["']""")
# A table's header row that may name a credential column ("user,password"): a line with a delimiter and a word
# that begins a credential's name; the rows below it are read as CSV (:func:`_table_column_secrets`)
_TABLE_HEADER = re.compile(r"(?im)^(?=[^\n]{0,2000}(?:pass|secret|token|key|cred|auth|pwd))[^\n]{0,2000}[,;\t|][^\n]*$")
_MOST_TABLE_ROWS = 100_000  # rows read below one header
# A value of several words, unquoted, to the end of its line ("password = Xk9v horse7 Qp2zt", INI, .env, YAML)
# (each word free of quotes, brackets, calls and variables: "getpass.getpass('Password: ')" is code, not a value)
_PHRASE_ASSIGNMENT = re.compile(r"^[ \t]*(?:export[ \t]+)?([\"']?)([A-Za-z_][\w.-]{0,80})\1[ \t]*(?::=|=|:)[ \t]*"
                                r"([^\s\"'#|>\[\]{}()<>,;=$!&*`]+(?:[ \t][^\s\"'#|>\[\]{}()<>,;=$!&*`]+){1,20})"
                                r"[ \t]*(?:[ \t]#[^\r\n]*)?\r?$", re.M)
# A row of two cells, a name and its value: a key-value table's "password,X" (comma, semicolon, tab or bar)
_NAME_VALUE_ROW = re.compile(r"""^[ \t]*+(["']?)([A-Za-z_][\w.-]{0,80})\1[ \t]*+[,;\t|][ \t]*+(["']?)"""
                             r"""([^"'\r\n,;\t|]{1,4096}+)\3[ \t]*+\r?$""", re.M)
_COLUMN_NAME = re.compile(r"[A-Za-z_][\w .-]{0,63}")
_BLOCK_INDICATOR = re.compile(r"[|>](?:[+-]?[0-9]?|[0-9][+-])")  # "password: |": the value is on the lines below
# A shell's trace of the commands it runs (set -x, bash -x): "+ mysql -pX", "++ curl -u u:X".
_TERMINAL_CODE = re.compile(r"\x1b\[[0-?]{0,32}[ -/]{0,4}[@-~]")  # ESC [ ... m: a colour or cursor code
_TRACE = re.compile(r"(?m)^[ \t]*\++[ \t]+(.+)$")
# (the body read atomically up to the next run of five dashes: a BEGIN line with no END costs one scan to the next)
_PRIVATE_KEY_BLOCK = re.compile(r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----((?>(?:[^-]|-(?!----))*))"
                                r"-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
# A credential option and its value in printed text ("login with --password X", a logged command line).
_PRINTED_OPTION = re.compile(r"""(?<![\w-])(--?[A-Za-z][\w-]*)(?:=|[ \t]+)([^\s"',;=$<\[\](){}]+)(?![^\s"',;])""")
# A JSON object with no object inside it ({"Name": N, "Type": T, "Value": V}), and one under a field's name.
_FLAT_OBJECT = re.compile(r"\{[^{}]*\}")
_NAMED_OBJECT = re.compile(r"""(["'])([^"'\s:{}]+)\1\s*:\s*(\{[^{}]*\})""")
# A field of an object that names the secret its "value" field holds: a stored secret's name (AWS SSM's
# "Name", an env list's "name", an app setting's "key"), a storage account's "keyName", a vault's "id".
_VALUE_NAMES = frozenset({"name", "key", "parametername", "secretname"})


def output_secrets(text: str) -> list[str]:
    """The credentials a program printed: the values of JSON (or Python literal) fields named as credentials
    (:func:`_json_fields`: ``"SecretAccessKey"``, ``"SessionToken"``, ``"client_token"``...), the forms
    :func:`_text_secrets` reads (``name=value``, code, ``Authorization``, keys in a URL's path), lines of
    configuration or tables whose name is a credential's (``token: X``, ``pass = X``, ``export SECRET_KEY="X"``,
    ``token    X``, a netrc's ``password X``; a value that is one ordinary word stays: "password required")
    and the body of a private key's PEM block — so a unit's stdout and stderr files mask them where they appear.

    >>> output_secrets('{"Credentials": {"AccessKeyId": "ASIA1", "SecretAccessKey": "wJal-r", "SessionToken": "Fw0-9"}}')
    ['wJal-r', 'Fw0-9']
    >>> output_secrets("users:\\n- name: me\\n  token: kube-T0k9\\npass = rcl0ne-x\\nexport SECRET_KEY='dj4ngo'\\n"
    ...                "token      hvs.CAES9x\\npassword required\\nmax_tokens: 64")
    ['dj4ngo', 'kube-T0k9', 'rcl0ne-x', 'hvs.CAES9x']
    """
    if "\x1b[" in text:
        text = _TERMINAL_CODE.sub("", text)  # a coloured log: its fields read as the terminal shows them
    found = _json_fields(text, printed=True)[0] + _text_secrets(text, printed=True)[0]
    for pattern, name_group, value_group in ((_PRINTED_ASSIGNMENT, 2, 4), (_PRINTED_ROW, 1, 2), (_TABLE_ROW, 1, 2),
                                             (_SPACED_NAME, 2, 4)):
        for match in pattern.finditer(text):
            name, value = match[name_group], match[value_group]
            if _BLOCK_INDICATOR.fullmatch(value):
                continue  # a YAML block scalar's value stands on the lines below (:func:`_written_below`)
            if _names_credential(name) and _kept_value(value):
                found.append(value)
    found += _paired_values(text) + [match[1] for match in _SET_COOKIE.finditer(text)]
    for match in _PHRASE_ASSIGNMENT.finditer(text):  # an unquoted passphrase: the whole rest of its line
        if _names_credential(match[2]) and _passphrase(match[3].strip()):
            found.append(match[3].strip())
    for match in _NAME_VALUE_ROW.finditer(text):
        value = match[4].strip()
        if (credential_column(match[2]) or (match[2].isupper() and secret_variable(match[2]))) and _kept_value(value) \
                and (not re.search(r"\s", value) or _passphrase(value)):  # (a lone "key", "auth", "token" names data)
            found.append(value)
    found += [value for name, value in _written_below(text) if _names_credential(name)]
    found += _table_column_secrets(text) + _json_table_secrets(text)
    for match in _FLOW_LIST.finditer(text):
        if credential_column(match[2]):
            found += [item for item in _flow_items(match[3]) if _kept_value(item)]
    found += _masked_named_values(text)
    for decoded in secret_data_texts(text):  # a Secret's data: its value, or what a file of settings it holds names
        found += output_secrets(decoded) if "\n" in decoded else [decoded] if _kept_value(decoded) else []
    for match in _TRACE.finditer(text):
        found += _scan(_words(match[1]))[0]
    for block in _PRIVATE_KEY_BLOCK.finditer(text):  # its body; an armour header ("Version: GnuPG") stays
        found += [line.strip() for line in block[1].splitlines() if len(line.strip()) >= 8 and ": " not in line]
    found += _record_secrets(text)
    found += [match[2] for match in _PRINTED_OPTION.finditer(text) if _secret_option(match[1])
              and not match[2].startswith("-") and not _ordinary_word(match[2]) and not _templated(match[2])]
    return [value for value in dict.fromkeys(found) if _learnable(value)]


def _learnable(value: str) -> bool:
    """Whether a value read under a credential's name is one to learn: not code standing where a value would
    (:func:`_is_code`: learned, its pieces would mask every "password" of a unit's files), a tokenizer's special
    token, stars or a value after a mask (what was read is masked already), a template's variable
    (``${DB_PASSWORD}``, ``{{secrets.HF}}``, ``$(PW)``, a YAML ``!ENV`` tag, anchor or alias), a credential's name and its sign
    (``password=``), or three signs at most (a YAML block's marker, a list's opening bracket).

    >>> [_learnable(v) for v in ("Zq8v-Lm3p", "ab***cd9", "db_password", "<|endoftext|>", "***-x", "password=", "|-",
    ...                          "${DB_PASSWORD}", "!ENV DB_PASS1")]
    [True, True, False, False, False, False, False, False, False]
    """
    return bool(value.strip("*")) and not value.startswith(MASK) and not _is_code(value) \
        and not _SPECIAL_TOKEN.fullmatch(value) and not _TEMPLATE.search(value) \
        and not (value[-1] in ":=" and credential_name(value.rstrip(":="))) \
        and not (len(value) <= 3 and not any(character.isalnum() for character in value))


def _paired_values(text: str) -> list[str]:
    """Values written beside a name that names a credential, as a pair: a record's ``{"name": N, "value": V}``,
    ``<add key=N value=V/>``, ``<N>V</N>``; a headers list's ``["X-Api-Key", V]``; a setter's
    ``os.environ.setdefault(N, V)``; a log line's ``Using API key: V for requests`` or ``API key provided: V.`` (a
    name of one to three words, not by a word that also names data, ``token``; a value of 12 letters, digits and
    ``_.~+/=-`` or more, both letters and digits among them).

    >>> _paired_values('[["X-Api-Key", "Hb8-Xq3W"]] os.putenv("HF_TOKEN", "hf-Tk-82x") INFO API key: Ge1Xq3Wz6Lp1 ok')
    ['Hb8-Xq3W', 'hf-Tk-82x', 'Ge1Xq3Wz6Lp1']
    """
    found = []
    for pattern in _NAME_VALUE:
        for match in pattern.finditer(text):
            name, value = (match["name"], match["value"]) if "name" in pattern.groupindex else (match[1], match[2])
            if (credential_column(name) or (name.isupper() and secret_variable(name))) and value \
                    and value != MASK and not _ordinary_word(value):
                found.append(value)
    found += [match[4] for match in _LISTED_PAIR.finditer(text) if credential_column(match[2]) and _kept_value(match[4])
              and " " not in match[4].strip()]
    found += [match[5] for match in _CALL_PAIR.finditer(text) if _names_credential(match[3]) and _kept_value(match[5])
              and not _IDENTIFIER.fullmatch(match[5]) and (" " not in match[5].strip() or _passphrase(match[5]))]
    for match in _INLINE_NAME.finditer(text):  # (a credential's name in its last words, perhaps before "provided")
        words = match[1].split()
        words = words[:-1] if len(words) > 1 and words[-1].lower() in _NAME_TAILS else words
        value = match[2].rstrip(".")
        if any(credential_column(" ".join(words[-count:])) for count in range(1, len(words) + 1)) \
                and _TOKEN_LIKE.fullmatch(value):
            found.append(value)
    return found


def _names_credential(name: str) -> bool:
    """Whether a name a program printed a value under names a credential: a field's name (:func:`credential_name`;
    an option's ``session`` alone is a log's, ``Session: run-01``) other than a lone ``key`` (a record's id, a
    map's key), or an environment variable's.

    >>> [_names_credential(n) for n in ("db_password", "API_KEY", "DB_PASS", "key", "max_tokens")]
    [True, True, True, False, False]
    """
    if name_words(name) == ["key"]:
        return False
    return credential_name(name) or (name.isupper() and secret_variable(name))


def _object_fields(text: str) -> dict[str, str]:
    """The fields of a flat JSON object written in ``text``, their names lower-cased (a later one wins).

    >>> _object_fields('{"Name": "/db/password", "Version": 1, "Value": "S"}')
    {'name': '/db/password', 'version': '1', 'value': 'S'}
    """
    return {match[2].lower(): match[4] if match[3] else match[5] for match in _JSON_FIELD.finditer(text)}


def _record_secrets(text: str) -> list[str]:
    """The credentials of printed records whose ``value`` field is a secret by what else the record says — its
    name field is a credential's, whatever its case and wherever it stands (AWS SSM's ``{"Name":
    "/prod/db/password", "Type": "SecureString", "Value": X}``, ``[{"Name": "DB_PASSWORD", "Value": X}]``), it
    is a ``SecureString``, it has a ``keyName`` (``az storage account keys list``) or it is a vault's secret
    (``az keyvault secret show``: ``{"id": ".../secrets/db", "value": X}``) — and every value of a map under a
    name that holds credentials (``{"secrets": {"openai": X}}``, masked whole as a grid's parameters are; a map
    with fields named as credentials is a record read field by field: AWS STS's ``"Credentials"`` keeps its
    ``AccessKeyId`` and ``Expiration`` readable).

    >>> _record_secrets('{"Parameter": {"Name": "/prod/db/password", "Type": "String", "Version": 1, "Value": "Ss-1"}}')
    ['Ss-1']
    >>> _record_secrets('[{"keyName": "key1", "permissions": "FULL", "value": "Az=="}, {"attributes": {"enabled": '
    ...                 'true}, "id": "https://v/secrets/db", "value": "Kv-1"}] {"secrets": {"openai": "Ns-1"}}')
    ['Az==', 'Kv-1', 'Ns-1']
    >>> _record_secrets('[{"name": "region", "value": "eu-west-1"}, {"Name": "DB_PASSWORD", "Value": "Pw-9"}] {"id": "/v/1", "value": "x"}')
    ['Pw-9']
    """
    found, objects, inner = [], [], text
    for _ in range(8):  # the innermost objects, then those around them with each inner one read as a 0
        objects += _FLAT_OBJECT.findall(inner)
        inner = _FLAT_OBJECT.sub("0", inner)
    for match in objects:
        fields = _object_fields(match)
        value = fields.get("value")
        if not value or value in (MASK, "null", "true", "false") or _PLACEHOLDER.search(value):
            continue
        name = next((fields[n] for n in _VALUE_NAMES if n in fields), "")
        if (name and (credential_name(name.replace("/", "_"), option=True) or secret_variable(name))) \
                or fields.get("type", "").lower() == "securestring" or "keyname" in fields \
                or "/secrets/" in fields.get("id", ""):
            found.append(value)
    for match in _NAMED_OBJECT.finditer(text):  # {"secrets": {"openai": X}}: judged by the outer name
        fields = _object_fields(match[3])
        if _holds_credentials(match[2]) and not any(credential_name(name, option=True) for name in fields):
            found += [value for value in fields.values()
                      if value not in (MASK, "null", "true", "false") and not _PLACEHOLDER.search(value)]
    return found


_MOST_JSON_NODES = 1_000_000  # lists and maps walked in one JSON text
_TOKEN_LIKE = re.compile(r"(?=[^\s]*\d)(?=[^\s]*[A-Za-z])[\w.~+/=-]{12,200}")  # letters and digits, both


def _json_table_secrets(text: str) -> list[str]:
    """The values of a table written as JSON with its column names apart from its rows
    (``{"fields": ["user", "token"], "rows": [["bob", "X"]]}``, pandas' ``orient="split"``): in a map holding a list
    of names, one naming a credential column (not by a word that also names data: ``token``, ``auth``), and a list
    of rows as long as it, each row's item in that column.

    >>> _json_table_secrets('{"columns": ["user", "api_token"], "data": [["ann", "Nb8-Xq3W"], ["bob", null]]}')
    ['Nb8-Xq3W']
    """
    stripped = text.strip()
    if not stripped[:1] in ("{", "[") or '"' not in stripped:
        return []
    import json

    try:
        document = json.loads(stripped)
    except (ValueError, RecursionError):
        return []
    found, waiting, walked = [], [document], 0
    while waiting and walked < _MOST_JSON_NODES:
        node = waiting.pop()
        walked += 1
        children = list(node.values()) if isinstance(node, dict) else node if isinstance(node, list) else []
        waiting += [child for child in children if isinstance(child, (dict, list))]
        if not isinstance(node, dict):
            continue
        tables: dict[int, list[list]] = {}  # the map's lists of rows, by their rows' width (read once)
        for rows in children:
            if isinstance(rows, list) and rows and isinstance(rows[0], list) and all(
                    isinstance(row, list) and len(row) == len(rows[0]) for row in rows):
                tables.setdefault(len(rows[0]), []).append(rows)
        for names in children if tables else ():
            if not (isinstance(names, list) and len(names) in tables and all(isinstance(name, str) for name in names)):
                continue
            columns = [index for index, name in enumerate(names) if credential_column(name)]
            if columns:  # (each table read once, whatever names another list gives it)
                found += [row[index] for rows in tables.pop(len(names)) for row in rows for index in columns
                          if isinstance(row[index], str) and _kept_value(row[index])]
    return found


def _is_code(value: str) -> bool:
    """Whether a value read under a credential's name is code standing where a value would: a reference to a name
    that names a credential (``db_password``, ``settings.SECRET_KEY``), a call or a subscript of a dotted name
    (``jax.random.PRNGKey(42)``, ``os.environ[``), or of a name of letters given a name, a text or nothing
    (``tokens[i]``, ``len(x)``, ``read()``), an environment variable's name (``DB_PASS1``). Learned, its pieces
    would mask every "password" of a unit's files. A
    password with brackets is none: a digit in its name or its brackets (``hunter(2)``, ``Secr3t(pass)``).

    >>> [_is_code(v) for v in ("db_password", "settings.SECRET_KEY", "tokens[i]", "jax.random.PRNGKey(42)")]
    [True, True, True, True]
    >>> [_is_code(v) for v in ("tiger_lily_moon", "correct.horse.battery", "hunter(2)", "abc[123]", "Secr3t(pass)",
    ...                        "ab_cd[Zq8v", "Zq8v-Lm3p")]
    [False, False, False, False, False, False, False]
    """
    if _REFERENCE.fullmatch(value):
        return any(credential_name(part) for part in value.split("."))
    if _VARIABLE.fullmatch(value) and secret_variable(value):
        return True  # an environment variable's name (password: !ENV DB_PASS1)
    called = _CALLED.fullmatch(value)  # a name of letters (no digit), then a bracket
    if not called:
        return False
    closing = ")" if called[2] == "(" else "]"
    inside = called[3][:-1] if called[3].endswith(closing) else called[3]
    # dotted (os.environ[, getpass.getpass("Password: "), cut where a bracket opens, or holding a name or a text
    return "." in called[1] or not called[3] or bool(_ARGUMENT.fullmatch(inside) and called[3].endswith(closing))


def _passphrase(phrase: str) -> bool:
    """Whether ``phrase``, words under a credential's name, is a passphrase: a digit among words that are not all
    ordinary ones ("set via ENV_VAR" is a note, "correct horse 9 battery" a passphrase)."""
    return any(character.isdigit() for character in phrase) and not all(_ordinary_word(word) for word in phrase.split())


def _kept_value(value: str) -> bool:
    """Whether ``value``, found under a credential's name, is one to mask: not empty, the mask, one ordinary word,
    a number, a JSON literal (``password: null``, ``token: required``) or stars (``Password: ********``)."""
    return bool(value) and value.strip("*") != "" and not _ordinary_word(value) and not value.isdigit() \
        and value.lower() not in ("null", "none", "true", "false", "~")


def _masked_named_values(text: str) -> list[str]:
    """The values the redaction's named shapes (:data:`evalkit.models.key_shapes.NAMED_SHAPES`, not those read in
    prose) and :func:`evalkit.models.named_fields.mask_named_fields` mask where they stand in ``text`` (a YAML
    value on the line below its name, a flow map's field, a netrc line, ``DB_PASSWORD=X`` inside a JSON string),
    so the scrub learns each form the redaction reads. The masked text's pieces between its masks are laid over
    ``text`` twice, each piece at its first place from the left and at its last from the right: a piece found
    at the same place both ways stands there in every reading, and a gap between two such pieces is a masked
    value; a gap the readings disagree on (two masks parted by a blank, a value holding the next piece) teaches
    nothing. Words with no digit among them ("set via ENV_VAR"), a flow list's opening, a comment after a value and a
    value after one word that also names data (``key``, ``pass``, ``token``, ``session``) or a ``<word>_key`` that
    names no credential (``<entry key="db.host">``, a training log's ``pass: 2of3``, ``"eval_key": X``) are no
    value: the readers of whole lines take ``token: X`` where it stands alone.

    >>> _masked_named_values("db: {user: ann, password: Zq8v-Lm3p}\\nmachine h login bob password Yt7u-Kp2q\\n")
    ['Zq8v-Lm3p', 'Yt7u-Kp2q']
    >>> _masked_named_values("passphrase: set via ENV_VAR"), _masked_named_values("passphrase: correct horse 9 staple")
    ([], ['correct horse 9 staple'])
    """
    masked = text
    for pattern, replacement in _LEARNED_SHAPES:
        masked = pattern.sub(replacement, masked)
    masked = mask_named_fields(masked)
    if masked == text:
        return []
    pieces = masked.split(MASK)
    if not text.startswith(pieces[0]) or not text.endswith(pieces[-1]) \
            or len(text) - len(pieces[-1]) < len(pieces[0]):
        return []  # (not a masking of values in place: nothing read)
    lefts, at = [0], len(pieces[0])  # each piece's first place, after the one before it
    for piece in pieces[1:-1]:
        place = text.find(piece, at, len(text) - len(pieces[-1]))
        if place < 0:
            return []
        lefts.append(place)
        at = place + len(piece)
    rights, at = [len(text) - len(pieces[-1])], len(text) - len(pieces[-1])  # its last place, before the next
    for piece in reversed(pieces[1:-1]):
        place = text.rfind(piece, len(pieces[0]), at)
        rights.append(place)
        at = place
    rights = [*reversed(rights)]
    lefts.append(len(text) - len(pieces[-1]))
    rights.insert(0, 0)
    found = []
    for index in range(len(pieces) - 1):
        if lefts[index] != rights[index] or lefts[index + 1] != rights[index + 1]:
            continue  # (the readings disagree on where this value starts or ends)
        start = lefts[index] + len(pieces[index])
        value = text[start:lefts[index + 1]].split(" #", 1)[0].strip()  # (a comment after it is none of it)
        if not value:
            continue
        if value[-1] in ")]}" and "([{"[")]}".index(value[-1])] not in value:
            value = value[:-1]  # a usage line's "[--password PASSWORD]": the bracket closes the line's own
        name = _NAME_BEFORE.search(text, max(0, start - 100), start)
        words = name_words(name[1]) if name else []
        if (len(words) == 1 and not credential_column(name[1])) or (words[-1:] == ["key"] and not credential_name(name[1])):
            continue  # a setting's key="db.host", a training "pass: 2of3", "Using token: 4096ctx1", "eval_key:"
        found.append(value)
    return [value for value in found if _kept_value(value) and value[:1] not in "[{"
            and (not re.search(r"\s", value) or _passphrase(value))]


def _flow_items(items: str) -> list[str]:
    """The items of a list written between brackets (``A, 'B', "C"``), over one line or several, comments left out.

    >>> _flow_items(" 'Ak-1x9z', # first\\n  Ak-2y8w ,\\n")
    ['Ak-1x9z', 'Ak-2y8w']
    """
    lines = (line.split(" #", 1)[0] if not line.lstrip().startswith("#") else "" for line in items.splitlines())
    return [item.strip().strip("\"'") for line in lines for item in line.split(",") if item.strip().strip("\"'")]


def _written_below(text: str) -> list[tuple[str, str]]:
    """(name, value) of values written on the lines below their name: each line of a YAML block scalar or of a
    TOML multi-line string, each item of a YAML list or a TOML array written one per line, and a Hadoop XML
    property's value.

    >>> _written_below("db:\\n  password: |\\n    Yb-7x9w\\nkey = \'\'\'\\nTm-2k8q\\n\'\'\'\\n<name>fs.s3a.secret.key</name><value>Xe-4p</value>")
    [('password', 'Yb-7x9w'), ('key', 'Tm-2k8q'), ('fs.s3a.secret.key', 'Xe-4p')]
    >>> _written_below('api_keys = [\\n  "Ak-1x9z",\\n  "Ak-2y8w",\\n]\\npasswords:\\n  - Pw-3v7u\\ntokens:\\n  - tokenizer\\n')
    [('api_keys', 'Ak-1x9z'), ('api_keys', 'Ak-2y8w'), ('passwords', 'Pw-3v7u')]
    """
    found = []
    for match in _BLOCK_SCALAR.finditer(text):
        found += [(match[3], line.strip()) for line in match[4].splitlines() if line.strip()]
    for header in _LIST_HEADER.finditer(text):
        if credential_column(header[3]):  # a name that names only credentials ("auth:" lists methods)
            found += [(header[3], item) for item in _items_below(text, header.end(), header[1])]
    for match in _MULTILINE_STRING.finditer(text):
        found += [(match[2], line.strip()) for line in match[4].splitlines() if line.strip()]
    at = 0
    for _ in range(_MOST_PROPERTIES):  # elements read one after another, never one inside another's stretch
        start = _XML_START.search(text, at)
        end = _XML_END.search(text, start.end(), start.end() + 4000) if start else None
        if start is None:
            break
        at = end.end() if end else start.end()
        if end is None:
            continue
        block = _XML_COMMENT.sub("", text[start.end():end.start()])
        fields = {}
        for field in (_XML_FIELD if "]]>" in block else _XML_PLAIN_FIELD).finditer(block):
            fields.setdefault("value" if field[1].lower() == "value" else "name",
                              (field[2] or field[3] or "").strip())
        if fields.get("name") and fields.get("value"):
            found.append((fields["name"], fields["value"]))
    found += [(match[1], match[2]) for match in _XML_ATTRIBUTES.finditer(text)]
    found += [(match[3], match[5]) for match in _NESTED_VALUE.finditer(text)]
    found += [(match[2], match[3]) for match in _XML_PAIR.finditer(text)]
    return [(name, value) for name, value in found if _kept_value(value) and not _BLOCK_INDICATOR.fullmatch(value)]


def _items_below(text: str, at: int, indent: str) -> list[str]:
    """The items of a YAML list (``- X``) or a TOML array (``"X",``) written one per line from ``text[at:]`` (the
    line after a name), as deep as the name or deeper, up to the first other line (a TOML array's ``]``)."""
    found: list[str] = []
    for _ in range(_MOST_ITEMS):
        start = at + 1
        end = text.find("\n", start)
        line = text[start:end if end >= 0 else len(text)].rstrip("\r")
        at = end if end >= 0 else len(text)
        stripped = line.strip()
        if not line.startswith(indent) or not stripped or len(line) > 1000:
            break
        if stripped.startswith(("- ", "-\t")):
            item = stripped[2:].split(" #", 1)[0].strip().strip("\"'")
        elif stripped[:1] in "\"'" and stripped[1:].find(stripped[0]) > 0:  # "X", and perhaps a comment
            item = stripped[1:1 + stripped[1:].find(stripped[0])]
        else:
            break
        found.append(item)
        if end < 0:
            break
    return found


def _csv_rows(rows, delimiter: str):
    """The rows :mod:`csv` reads from ``rows``, up to the first it cannot (a field past its length limit)."""
    import csv

    reader = csv.reader(rows, delimiter=delimiter)
    while True:
        try:
            yield next(reader)
        except (StopIteration, csv.Error):
            return


def _table_column_secrets(text: str) -> list[str]:
    """The values of a table's column named for a credential (``user,password`` then ``alice,X``), read as CSV
    (comma, semicolon, tab or bar between cells) down to the first row of another width; by a name that names only
    credentials (a vocabulary's ``token`` column holds words).

    >>> _table_column_secrets("note\\nuser,password,role\\nalice,Cv-8k2m9q,admin\\nbob,\\"Pq;7,z\\",user\\n\\nafter")
    ['Cv-8k2m9q', 'Pq;7,z']
    >>> _table_column_secrets("token,count\\ntokenizer,3\\n")
    []
    """
    import csv

    found: list[str] = []
    lines: list[str] | None = None  # the text's lines, split once the first header names a credential column
    line_of, counted_to, read_to = 0, 0, -1  # a header's line number, counted on from the last header's
    for header in _TABLE_HEADER.finditer(text):
        line_of += text.count("\n", counted_to, header.start())
        counted_to = header.start()
        if line_of <= read_to:  # a row of a table already read
            continue
        line = header[0].lstrip("\ufeff")  # a spreadsheet's export starts with a byte order mark
        if len(line) > 65536:  # a record holding a long text, not a table's header
            continue
        delimiter = max(",;\t|", key=line.count)
        try:  # (a field longer than the csv module's limit raises csv.Error: no header)
            names = [name.strip().strip("\"'") for name in next(csv.reader([line], delimiter=delimiter), [])]
        except csv.Error:
            continue
        if sum(1 for name in names if name) < 2 or not names[-1] \
                or not all(not name or _COLUMN_NAME.fullmatch(name) for name in names):
            # a header names two columns or more, and nothing else (pandas leaves the index's name empty); a line
            # ending in its delimiter is an item of a list written one per line ("password",), not a header
            continue
        columns = [index for index, name in enumerate(names) if name and credential_column(name)]
        if not columns:
            continue
        lines = text.split("\n") if lines is None else lines
        read_to = line_of
        rows = (lines[number] for number in range(line_of + 1, min(len(lines), line_of + 1 + _MOST_TABLE_ROWS)))
        for cells in _csv_rows(rows, delimiter):
            if len(cells) != len(names):
                break
            read_to += 1
            # a value is one word or a passphrase (a Markdown table's "---" rule and a sentence are not values)
            found += [cells[index].strip() for index in columns if _kept_value(cells[index].strip())
                      and (not re.search(r"\s", cells[index].strip()) or _passphrase(cells[index].strip()))
                      and cells[index].strip(" -:")]
    return found
