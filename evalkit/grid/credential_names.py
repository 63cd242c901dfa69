"""Names that say a value is a credential: the words of a parameter's, option's or header's name
(:func:`name_words`), whether they name a credential (:func:`credential_name`: ``api_key``, ``--accessToken``,
``-storepass``, ``X-Api-Key``), and the words of a command line that read as one."""
from __future__ import annotations

import re

from evalkit.models.redaction import _URL_START, _compound_pass

_URL = re.compile(rf"{_URL_START}\S+")  # a scheme read back at most 32 characters: linear on a long run


_NAME_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def name_words(name: str) -> list[str]:
    """The words of a name, lower-cased: split at ``-``, ``_``, ``.``, blanks and changes of case.

    >>> name_words("--accessToken"), name_words("X-Api-Key"), name_words("HTTPHeader"), name_words("oauth2-bearer")
    (['access', 'token'], ['x', 'api', 'key'], ['http', 'header'], ['oauth', '2', 'bearer'])
    """
    return [word.lower() for word in _NAME_WORD.findall(name)]


# The last word of a name that holds a credential (an option, a parameter, a header, a JSON field).
_CREDENTIAL_WORDS = frozenset({"password", "passwd", "passwords", "pwd", "pw", "pass", "passphrase", "passcode", "token",
                               "secret", "secrets", "credential", "credentials", "cred", "creds", "auth", "authorization",
                               "jwt", "pat", "apikey", "sig", "signature", "webhook", "dsn", "psk", "assertion",
                               "authkey", "authz", "bearer", "cookie", "cookies", "sas", "hmac", "otp", "totp",
                               "pin", "connstr"})
# A first word that makes the name a one-time credential (mfa_code, totp_seed, otp_value).
_ONE_TIME_WORDS = frozenset({"mfa", "otp", "totp", "hotp"})
# Credential words for a command-line option or a header only (a parameter or a result named "session" or
# "sid" may be a flag or a count).
_OPTION_WORDS = frozenset({"session", "sid"})
# A last word made of a credential word and another (dbpassword, accesstoken, clientsecret, privatekey).
_COMPOUND_ENDINGS = ("password", "passwd", "passphrase", "secret", "token", "credential", "credentials", "creds",
                     "apikey", "accesskey", "privatekey", "secretkey", "webhook", "authkey", "hmackey")
# KEY is a credential after one of these words (api key, access key, X-Goog-Api-Key, AccountKey), or alone.
_KEY_OWNERS = frozenset({"api", "access", "private", "secret", "client", "signing", "encryption", "master",
                         "account", "storage", "subscription", "license", "auth", "app", "consumer", "shared",
                         "service", "deploy", "session", "hmac", "pre", "psk", "admin", "root", "write", "read",
                         "ingest", "webhook", "bot", "ssh", "gpg", "pgp", "tls", "ssl", "jwt", "oauth",
                         # a service's key (openai_key, --hf-key): the services a grid is likely to call
                         "openai", "anthropic", "hf", "huggingface", "groq", "azure", "cohere", "mistral",
                         "google", "gemini", "together", "fireworks", "replicate", "deepseek", "perplexity", "xai",
                         "voyage", "pinecone", "wandb", "stripe", "github", "gitlab", "slack", "aws", "gcp",
                         "openrouter", "deepinfra", "elevenlabs", "serpapi", "tavily", "langsmith", "weaviate",
                         "qdrant", "sentry", "datadog", "twilio", "sendgrid", "mailgun", "discord", "telegram",
                         "notion", "airtable", "firebase", "supabase", "vertex", "bedrock", "nvidia", "ngc",
                         "cerebras", "sambanova", "anyscale", "modal", "runpod", "lambda", "jina", "unstructured",
                         "kaggle", "sonar", "codecov", "snyk", "npm", "pypi", "nuget", "dockerhub", "cloudflare",
                         "heroku", "vercel", "netlify", "circleci", "jira", "atlassian", "okta", "auth0", "mapbox",
                         "algolia", "newrelic", "honeycomb", "grafana", "splunk", "mailchimp", "shopify", "zendesk",
                         # whose key: the judge's, the LLM's, an endpoint's, a provider's or gateway's
                         "judge", "llm", "endpoint", "provider", "gateway", "sa"})
# Words after a credential word that still name the credential itself (--token-value, --password-b64).
_VALUE_WORDS = frozenset({"value", "string", "str", "text", "b64", "b", "base64", "hex", "raw", "plain", "plaintext",
                          "literal", "data", "pem", "der", "json",
                          # another copy of the same credential: password_2, token_v2, api_key_old, hf_token_backup
                          "v", "old", "new", "backup", "bak", "prev", "previous", "next", "alt", "primary",
                          "secondary", "current", "orig", "original", "copy", "tmp", "temp"})
# A first word that makes the name a switch, not a credential (--no-password, --ask-pass, --prompt-token).
_SWITCH_WORDS = frozenset({"no", "ask", "prompt", "skip", "disable", "enable", "require", "without"})


def credential_name(name: str, *, option: bool = False) -> bool:
    """Whether ``name`` — a command-line option (``option=True``, also a request header's name), a grid
    parameter or a field of a result or a JSON body — names a credential.

    The name is split into words (:func:`name_words`: at ``-``, ``_``, ``.`` and changes of case, so
    ``--accessToken`` is *access token* and ``--dbPassword`` *db password*), trailing words that name the same
    value (``value``, ``string``, ``b64``...) are dropped, and the name is a credential when its **last** word

    * is a credential word: ``password``, ``passwd``, ``pwd``, ``pw``, ``pass``, ``passphrase``, ``token``,
      ``secret``, ``credential(s)``, ``creds``, ``auth``, ``authorization``, ``jwt``, ``pat``, ``apikey``,
      ``sig``, ``signature``, ``webhook``, ``dsn``; for an option or a header also ``cookie``, ``bearer``,
      ``session``;
    * ends in one (``storepass``, ``keypass``, ``dbpassword``, ``accesstoken``, ``privatekey``; a word ending
      in ``pass`` that names none, ``bypass``, ``compass``, ``askpass``, does not count);
    * is ``key`` after ``api``, ``access``, ``private``, ``secret``, ``client``, ``account``... or alone;
    * or the name ends in ``secret id`` or ``session id`` (Vault's ``--secret-id``) or ``secret key base``
      (Rails' ``secret_key_base``).

    Only the last word counts, not a credential word anywhere: the value of a credential option becomes a
    secret masked wherever it appears, so ``--auth-mode basic`` would mask every "basic" and a result's
    ``pass_rate`` would be hidden. So a name whose last word says *where* or *how* a credential is kept stays
    readable: ``--password-file``, ``--key-file``, ``--password-stdin``, ``--cookie-jar``, ``--token-limit``,
    ``--auth-type``; so do switches (``--no-password``, ``--ask-pass``) and names where a credential word is
    only a part of another word (``--tokenizer``, ``--max-tokens``, ``--author``, ``--passes``, ``--keyboard``).

    >>> [credential_name(n, option=True) for n in ("--accessToken", "--dbPassword", "-storepass", "-keypass",
    ...     "--pat", "--apiKey", "--client-secret", "--secret-id", "--session", "X-Goog-Api-Key", "PRIVATE-TOKEN",
    ...     "--private-key", "--token-value", "--oauth2-bearer", "--key", "--MY_SERVICE_CREDS", "secret_key_base")]
    [True, True, True, True, True, True, True, True, True, True, True, True, True, True, True, True, True]
    >>> [credential_name(n, option=True) for n in ("--port", "--passes", "--keyboard", "--author", "--tokenizer",
    ...     "--max-tokens", "--key-file", "--password-file", "--password-stdin", "--cookie-jar", "--auth-type",
    ...     "--no-password", "--sort-key", "--bypass", "--token-limit", "--db-url")]
    [False, False, False, False, False, False, False, False, False, False, False, False, False, False, False, False]
    >>> [credential_name(n) for n in ("pat", "hf_token", "creds", "webhook", "session", "pass_rate", "cookie")]
    [True, True, True, True, False, False, True]
    """
    words = name_words(name)
    if not words or words[0] in _SWITCH_WORDS:
        return False
    if "." in name.strip("."):  # a property: a credential anywhere before a host or resource name
        parts = [part for part in name.split(".") if part]
        if any(credential_name(".".join(parts[:end]).replace(".", "_"), option=option)
               for end in range(1, len(parts))) or (len(parts) > 1 and parts[-1].lower() == "login"
                                                    and parts[-2].lower().endswith("sonar")):
            return True  # spark...fs.azure.account.key.ACCOUNT.dfs.core.windows.net; sonar.login holds a token
    if words[-2:] in (["connection", "string"], ["conn", "str"], ["conn", "string"]) or words[0] in _ONE_TIME_WORDS:
        return True  # a connection string holds its password; mfa_code, totp_seed
    while len(words) > 1 and (words[-1] in _VALUE_WORDS or words[-1].isdigit()):
        words = words[:-1]
    if words[-3:] == ["secret", "key", "base"]:
        return True  # Rails' secret_key_base signs its sessions
    last = words[-1]
    if last == "keys" and len(words) > 1:
        last = "key"  # api_keys
    if len(words) > 1 and last == "id" and words[-2] in ("secret", "session"):
        return option or words[-2] == "secret"
    if last in _CREDENTIAL_WORDS or (option and last in _OPTION_WORDS):
        return True
    if last == "key":
        return len(words) == 1 or words[-2] in _KEY_OWNERS
    return last.endswith(_COMPOUND_ENDINGS) or _compound_pass(last)


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


# A subcommand's first word (set-credentials, create-secret): the word after it names an object.
_VERBS = frozenset({"set", "get", "list", "create", "delete", "remove", "add", "use", "show", "rotate", "describe"})
