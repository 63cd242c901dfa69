"""Names that say a grid's value is a credential: a parameter's, a map's, an option's, a header's and the words of
a command line that read as one. Whether a name names a credential at all is the model door's rule
(:func:`evalkit.models.credential_names.credential_name`), which every reader here applies.
"""
from __future__ import annotations

import re

from evalkit.models.credential_names import credential_name, name_words  # noqa: F401 (re-exported for the grid)
from evalkit.models.redaction import _URL_START

_URL = re.compile(rf"{_URL_START}\S+")  # a scheme read back at most 32 characters: linear on a long run


def _secret_name(name: str) -> bool:
    """Whether a parameter (or a result's field) is named as a credential (:func:`credential_name`:
    ``password``, ``api_key``, ``hf_token``, ``pat``, ``creds``, ``webhook``...): its value is never shown,
    nor in a unit's folder name."""
    return credential_name(name)


def _holds_credentials(name: str) -> bool:
    """Whether a map or list named ``name`` holds credentials, whatever its keys: it is named as one
    (``api_keys``, ``secrets``, ``credentials``) or as a plural of one (``tokens``, ``keys``: a number named
    ``tokens`` stays readable, a map of them does not).

    >>> [_holds_credentials(n) for n in ("api_keys", "secrets", "tokens", "keys", "labels", "max_tokens")]
    [True, True, True, True, False, False]
    """
    words = name_words(name)
    return _secret_name(name) or words in (["tokens"], ["keys"])


def _secret_option(argument: str) -> bool:
    """Whether a command argument is an option named as a credential (``--password``, ``--api-key=...``,
    ``--cookie``, ``--oauth2-bearer``, ``--accessToken``, ``-storepass``; the rule, with the names that stay
    readable such as ``--password-file`` and ``--max-tokens``, is :func:`credential_name`).

    >>> [_secret_option(a) for a in ("--password", "--db-password=x", "-token", "--cookie", "--accessToken",
    ...                              "--dbPassword", "-storepass", "-keypass", "--pat", "--secret-id")]
    [True, True, True, True, True, True, True, True, True, True]
    >>> [_secret_option(a) for a in ("--seed", "password", "--port", "--passes", "--keyboard", "--author",
    ...                              "--tokenizer", "--max-tokens", "--key-file", "--password-stdin")]
    [False, False, False, False, False, False, False, False, False, False]
    """
    name = argument.lstrip("-").partition("=")[0]
    return argument.startswith("-") and bool(name) and credential_name(name, option=True)
# A credential word standing alone that is also a subcommand or an ordinary value (git credential fill,
# kubectl create secret generic, npm token list, jq .key): the word after it is no credential. A key's name
# (aws_secret_access_key, //registry/:_authToken, http.proxyPassword) and a netrc's "password" are.
_AMBIGUOUS_WORDS = frozenset({"token", "tokens", "secret", "secrets", "credential", "credentials", "cred", "creds", "auth",
                              "authorization", "key", "pass", "pw", "pwd", "sig", "signature", "session", "sid",
                              "cookie", "cookies", "dsn", "pat", "jwt", "webhook", "bearer"})


# The last word of an X- header's name that makes it a credential's (x-functions-key, X-JFrog-Art-Api).
_HEADER_WORDS = frozenset({"key", "keys", "api", "apikey", "token", "secret", "auth", "pass", "sig"})


def _credential_header(name: str) -> bool:
    """Whether a request header's name names a credential: as an option's would (:func:`credential_name`:
    ``Authorization``, ``X-Api-Key``, ``Ocp-Apim-Subscription-Key``) or an ``X-`` header ending in ``key``,
    ``api``, ``token``, ``secret`` or ``auth`` (Azure Functions' ``x-functions-key``, Artifactory's
    ``X-JFrog-Art-Api``). ``Idempotency-Key``, ``Sec-WebSocket-Key`` and ``X-Request-Id`` stay readable.

    >>> [_credential_header(n) for n in ("x-functions-key", "X-JFrog-Art-Api", "X-Auth", "Authorization",
    ...                                  "Idempotency-Key", "Sec-WebSocket-Key", "X-Request-Id", "X-Api-Version")]
    [True, True, True, True, False, False, False, False]
    """
    words = name_words(name)
    return credential_name(name, option=True) or (len(words) > 1 and words[0] == "x" and words[-1] in _HEADER_WORDS)


def _credential_word(word: str) -> bool:
    """Whether a word that is no option names a credential whose value is the next word: a key's name in a
    configuration command (``aws configure set aws_secret_access_key X``, ``npm config set
    //registry/:_authToken X``, ``git config http.proxyPassword X``) or a netrc line's ``password``. A credential
    word standing alone that is also a subcommand or an ordinary value (``token``, ``secret``, ``key``...) is
    not: ``npm token list``, ``kubectl create secret generic``.

    >>> [_credential_word(w) for w in ("aws_secret_access_key", "//registry.npmjs.org/:_authToken", "password",
    ...                                "http.proxyPassword", "token", "secret", "--password", "tokenizer", "a=b")]
    [True, True, True, True, False, False, False, False, False]
    """
    if word.startswith("-") or any(c in word for c in "={} ") or _URL.fullmatch(word):
        return False
    words = name_words(word)
    if len(words) > 1 and words[0] in _VERBS and words[-1] in ("credential", "credentials", "creds", "secret",
                                                                "secrets"):
        return False  # a subcommand naming a stored object (kubectl config set-credentials NAME): a name follows
    if len(words) > 1 and words[0] in ("change", "reset", "update", "rotate", "expire"):
        return False  # an action (rabbitmqctl change_password USER PASSWORD): a user's name follows
    return credential_name(word, option=True) and not (len(words) == 1 and words[0] in _AMBIGUOUS_WORDS)


def credential_column(name: str) -> bool:
    """Whether a table's column holds a credential in each row: named for one, and not by one word that also
    names ordinary data (a vocabulary's ``token``, a key-value table's ``key``, a ``session`` id).

    >>> [credential_column(n) for n in ("password", "api_token", "db_password", "token", "key", "session", "lr")]
    [True, True, True, False, False, False, False]
    """
    words = name_words(name)
    return credential_name(name) and not (len(words) == 1 and words[0] in _AMBIGUOUS_WORDS)


# A subcommand's first word (set-credentials, create-secret): the word after it names an object.
_VERBS = frozenset({"set", "get", "list", "create", "delete", "remove", "add", "use", "show", "rotate", "describe"})
