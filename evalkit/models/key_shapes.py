"""What a credential looks like by itself, wherever it stands: the known shapes of keys and tokens
(:data:`KEY_SHAPES`, which :func:`evalkit.models.redact` masks in any text) and the keys some services put in a
URL's path or path parameters (:func:`path_secrets`, :func:`path_parameters`), which a backend's name, a card
and a grid's records mask as secrets of their own, and the names of environment variables that hold a credential
(:func:`secret_variable`).
"""
from __future__ import annotations

import re

from evalkit.models.command_shapes import COMMAND_SHAPES
from evalkit.models.url_path_keys import path_parameters, path_secrets

__all__ = ["KEY_SHAPES", "NAMED_SHAPES", "PRIVATE_KEY_SHAPES", "PROSE_SHAPES", "path_secrets", "path_parameters", "secret_variable"]

# A password, passphrase or secret named in prose whose value mixes letters and digits (passphrase S3cretPw9;
# "secret sauce" stays), and a token-shaped value named in prose ("using token <v>"): read where they stand, never
# learned as a unit's secrets (a log's "pass epoch_1" is a training pass)
_PROSE_SECRET = (re.compile(r"(?i)(\b(?:password|passwd|passphrase|pass|secret|pwd|pw)[ \t]+)(?=[^\s\"',;]{0,200}\d)"
                            r"(?=[^\s\"',;]{0,200}[a-z])(?![\d.]+[a-z]{1,3}(?![^\s\"',;]))"
                            r"[^\s\"',;<>]{6,200}(?![^\s\"',;<>])"), r"\1***")
_PROSE_TOKEN = (re.compile(r"(?i)(\b(?:token|api[ _-]?key|secret|password|passphrase)\s+)(?=[\w\-]{0,200}\d)"
                           r"(?=[\w\-]{0,200}[a-z])[A-Za-z0-9_\-]{16,}(?![\w\-])"), r"\1***")
PROSE_SHAPES = [_PROSE_SECRET, _PROSE_TOKEN]

# A private key's body: a PEM block, raw or with its line breaks written as "\n" in JSON (its headers' single
# dashes included; read up to the next "--", at most 16 KB on); one cut before its END line (its base64 body, to the
# first character that is not one of it); a PuTTY key's private lines (masked where they stand; a unit's scrub
# learns a key's lines by its own reader, which keeps an armour header's "Version: GnuPG v2")
PRIVATE_KEY_SHAPES = [
    (re.compile(r"(-----BEGIN [A-Z ]{0,40}PRIVATE KEY(?: BLOCK)?-----)(?:[^-]|-(?!-)){1,16384}"
                r"(-----END [A-Z ]{0,40}PRIVATE KEY(?: BLOCK)?-----)"),
     r"\1***\2"),
    (re.compile(r"(-----BEGIN [A-Z ]{0,40}PRIVATE KEY(?: BLOCK)?-----)(?>(?:\\[nr]|\s|[A-Za-z0-9+/=])+)"), r"\1***"),
    (re.compile(r"(Private-Lines:\s*\d+\s*)(?>(?:\\[nr]|\s|[A-Za-z0-9+/=])+)"), r"\1***"),
]

# A YAML value's node properties, stepped over before it: up to two anchors (&tok) or tags (!!str, !ENV), on its
# line (or before the next line's value); and an alias (*tok), which is no value
_PROPERTIES = r"(?:(?:&[A-Za-z_][\w-]*|!!?[A-Za-z]*)[ \t]+){0,2}+"
_PROPERTIES_TO_NEXT_LINE = r"(?:(?:&[A-Za-z_][\w-]*|!!?[A-Za-z]*)\s+){0,2}+"
_NOT_AN_ALIAS = r"(?!\*[A-Za-z_][A-Za-z_-]*(?:\s|$))"

# Values a name, an option, a command or a header introduces (password=..., --token ..., Authorization: ...)
NAMED_SHAPES = [
    *PRIVATE_KEY_SHAPES,
    # a PuTTY key's MAC; a JSON web key's private members (d, p, q, dp, dq, qi; k of a symmetric key)
    (re.compile(r"(Private-MAC:\s*)[0-9a-fA-F]{16,}"), r"\1***"),
    (re.compile(r"(\\?\"(?:d|p|q|dp|dq|qi|k)\\?\"\s*:\s*\\?\")[A-Za-z0-9_\-]{20,}"), r"\1***"),
    # the token after Bearer/Basic, unless it is one ordinary word ("a basic reply", "the bearer of news")
    # (on its line: "token_type: bearer" then a new line starts another field)
    (re.compile(r"\b((?i:bearer|basic))[ \t]+(?!-)(?!(?:[A-Z]?[a-z]{1,12}|[A-Z]{1,12})(?![^\s\"',;]))[^\s\"',;]+"),
     r"\1 ***"),
    # XML settings holding a credential (before key="..." below reads the setting's name as a key)
    (re.compile(r"(?i)(<add\s+key\s*=\s*[\"'][^\"'<>]{0,60}(?:key|token|secret|password|passwd|pwd|credential)"
                r"[^\"'<>]{0,60}[\"']\s+value\s*=\s*[\"'])[^\"']+"), r"\1***"),
    (re.compile(r"(?i)(<((?:[\w-]{0,30}[_-])?(?:password|passwd|secret|token|api[_-]?key|apikey|access[_-]?key"
                r"|private[_-]?key|client[_-]?secret))(?:\s[^<>]{0,200})?>)[^<]{1,4096}(?=</\2>)"), r"\1***"),
    # a quoted credential, whole to its closing quote (a password with spaces: password="correct horse")
    (re.compile(r"(?i)((?:api[_-]?key|access[_-]?token|auth[_-]?token|refresh[_-]?token|client[_-]?secret|(?<![\w-])token"
                r"|secret|password|passwd|passphrase|pwd|credential)(?:\\?[\"'])?\s*(?::=|<-|=>?|:)\s*" + _PROPERTIES_TO_NEXT_LINE + r"(\\?[\"']))"
                r"(?:(?!\2)[^\r\n]){1,200}(?=\2)"), r"\1***"),
    # an unquoted password or passphrase, to the end of its line (it may hold spaces: "passphrase: a b c")
    # (not a YAML block scalar's marker, "password: |": its value stands on the lines below, masked where it stands)
    (re.compile(r"(?i)(\b(?:password|passwd|passphrase)[ \t]*(?::=|<-|[=:])[ \t]*" + _PROPERTIES + _NOT_AN_ALIAS + r")(?![\"'\s\\])"
                r"(?![|>](?:[+-]?[0-9]?|[0-9][+-])(?:[ \t]+#[^\r\n]*)?[ \t]*(?:\r?\n|$))[^\r\n\"'&;,}<>\\]{1,200}"),
     r"\1***"),
    (re.compile(r"(?i)((?:api[_-]?key|access[_-]?token|auth[_-]?token|refresh[_-]?token|client[_-]?secret|token"
                r"|secret|password|passwd|pwd|sig|signature|credential|session[_-]?id"
                r"|(?<!mon)(?<!tur)(?<!don)(?<!hoc)(?<!joc)(?<!whis)key)\s*(?::=|<-|=>?)\s*" + _PROPERTIES + _NOT_AN_ALIAS + r"[\"']?)(?:[^&\s\"',;\\]|\\(?![\"']))+"),
     r"\1***"),  # (to a backslash that escapes a quote: the JSON text around it stays JSON)
    # a value named pass or pw, alone or as a name's last word (pass=X, DB_PASS=X, ROOT_PW: X), unless it is a
    # number, a flag or one ordinary word (pass=3, pass: ok, pw=true: a count or a switch)
    (re.compile(r"(?i)((?<![A-Za-z0-9])(?:pass|pw)(?:\\?[\"'])?[ \t]*(?::=|<-|=>?|:)[ \t]*" + _PROPERTIES + _NOT_AN_ALIAS + r"(?:\\?[\"'])?)"
                r"(?!(?:[\d./%:-]+|(?-i:[a-z]{1,12}|[A-Z][a-z]{0,11}|[A-Z]{1,12}))(?![^\s\"',;&\\]))[^&\s\"',;\\]+"),
     r"\1***"),
    # a netrc line's password (machine h login bob password X), and a password, passphrase or secret named in
    # prose whose value mixes letters and digits (passphrase S3cretPw9; "secret sauce" stays)
    (re.compile(r"(?i)(\blogin[ \t]+\S+[ \t]+(?:password|passwd|passphrase|account)[ \t]+)[^\s\"']+"), r"\1***"),
    _PROSE_SECRET,
    # a Docker config's "auth" (base64 of user:password), in config.json and a .dockerconfigjson
    (re.compile(r"(\\?\"auth\\?\"\s*:\s*\\?\")[A-Za-z0-9+/]{8,}={0,2}(?=\\?\")"), r"\1***"),
    # an OAuth code or assertion in a form body (code=..., no "?" before it), 10 characters or more
    (re.compile(r"(?i)(\b(?:code|authorization_code|client_assertion|assertion|id_token_hint)=)[A-Za-z0-9._~/+\-]{10,}"),
     r"\1***"),
    (re.compile(r"(?i)((?:\\?[\"'])?(?:api[_-]?key|x-api-key|access[_-]?token|refresh[_-]?token|secret|password"
                r"|(?:x-)?auth[_-]?token|private[_-]?(?:token|key)|api[_-]?token|client[_-]?secret"
                r"|[\w-]{0,40}subscription[_-]?key|x-goog-api-key|(?<![\w-])token|x-[\w-]{0,30}-token"
                r"|(?:aws_)?secret_access_key|session[_-]?token|id[_-]?token|secret[_-]?key|bearer[_-]?token"
                r"|x-auth-key|x-access-key|(?<![\w-])[a-z0-9]{2,30}_(?:api_)?key)"
                r"(?:\\?[\"'])?\s*:(?!=)\s*" + _PROPERTIES_TO_NEXT_LINE + r"(?:\\?[\"'])?)(?!(?:bearer|basic)\s)"
                r"(?![|>](?:[+-]?[0-9]?|[0-9][+-])(?:[ \t]+#[^\r\n]*)?[ \t]*(?:\r?\n|$))"
                r"(?![^\"'\s,}\\\x1b]*:(?:\s|$))" + _NOT_AN_ALIAS + r"(?!-[ \t])[^\"'\s,}\\\x1b]+"), r"\1***"),
    # a token-shaped value named in prose ("using token <v>"): 16+ letters, digits, "_" or "-", a digit among them
    _PROSE_TOKEN,
    # a credential given to a command-line option in free text (--api-key <v>, --token <v>)
    (re.compile(r"(?i)(--(?:api[_-]?key|token|password|passwd|pass|pw|pwd|passphrase|secret|access[_-]?token"
                r"|auth[_-]?token)\s+)"
                r"(?!-)[^\s\"',;]+"), r"\1***"),
    *COMMAND_SHAPES,  # passwords on command lines quoted in free text
    # an HTTP Digest response (a hash of the password)
    (re.compile(r"(?i)(\bresponse\s*=\s*\\?\"?)[0-9a-f]{32,128}"), r"\1***"),
    # a key in a URL path after a segment that names it (/token/<value>; a lower-case word is a route, and a file
    # name of a common kind, "cards/secret/card.json", a file)
    (re.compile(r"((?i:/(?:[\w-]{0,20}[_-])?(?:tokens?|api[_-]?keys?|apikeys?|secrets?|passwords?|passwd|access[_-]?keys?"
                r"|bearer|credentials?|signature)/))(?![a-z]+(?:[-_][a-z]+)*(?:[/?#\s\"'<>]|$))"
                r"(?![a-z]+(?:[-_][a-z0-9]+)*\.(?i:json|jsonl|csv|tsv|ya?ml|toml|txt|md|html?|ipynb|py|log|pdf|png|svg)"
                r"(?:[/?#\s\"'<>:,;)\]]|$))"
                r"[^/\s?#\"'<>]{6,}"),
     r"\1***"),
    # a Telegram bot's token without its /bot prefix
    (re.compile(r"(\b\d{6,12}:)[A-Za-z0-9_\-]{35}(?![A-Za-z0-9_\-])"), r"\1***"),
    # an Authorization header's credential after any scheme (Token, ApiKey, SSWS, Bot, Digest...): the scheme
    # masked with it, except Bearer and Basic, which the first pattern keeps readable
    (re.compile(r"(?i)(\"?(?:proxy-)?authorization\"?\s*:\s*\"?)(?!(?:bearer|basic)\s)"
                r"(?:[A-Za-z][\w.-]{0,30}\s+)?[^\"\s,}]+"), r"\1***"),
    # a cookie header's value, whole (a session id by any name)
    (re.compile(r"(?i)(\b(?:set-)?cookie\"?\s*:\s*\"?)[^\"\r\n]+"), r"\1***"),
]
# ... and, after them, keys known by their own shape wherever they stand (sk-..., hf_..., AKIA...)
KEY_SHAPES = [
    *NAMED_SHAPES,
    (re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"), "sk-***"),
    (re.compile(r"\b(hf|ghp|gho|ghu|ghs|ghr|github_pat|glpat)_[A-Za-z0-9_\-]{16,}"), r"\1_***"),
    # GitLab (glpat-), Groq, Replicate, xAI, Perplexity, LangSmith, NVIDIA, Docker Hub, Notion, Stripe webhooks,
    # Databricks, HubSpot, SendGrid keys; Atlassian API tokens, Figma, Netlify, Linear, Square tokens
    (re.compile(r"\b(glpat-|gsk_|r8_|xai-|pplx-|lsv2_(?:pt|sk)_|nvapi-|dckr_pat_|ntn_|whsec_|pat-na1-|pat-eu1-"
                r"|ATATT|figd_|nfp_|lin_api_|sq0atp-|sq0csp-|tvly-|pcsk_|xapp-|GOCSPX-|xoxe-|xoxe\.xox[a-z]-|glrt-|PMAK-"
                r"|AGE-SECRET-KEY-1)[A-Za-z0-9_\-=]{12,}"), r"\1***"),
    (re.compile(r"\bdapi[0-9A-Za-z]{24,}(?:-\d+)?\b"), "dapi***"),
    # Supabase, Fly.io and Doppler tokens, Terraform Cloud's (<14>.atlasv1.<rest>), Google OAuth refresh tokens,
    # Mailgun keys (key-<32 hex>), Twilio API key secrets' ids (SK<32 hex>), Discord bot tokens
    (re.compile(r"\b(sbp_|fo1_|dp\.(?:st|sa|ct|scim|audit)\.)[A-Za-z0-9_\-.]{16,}"), r"\1***"),
    (re.compile(r"\b([A-Za-z0-9]{14}\.atlasv1\.)[A-Za-z0-9_\-=]{20,}"), r"\1***"),
    (re.compile(r"(?<![\w/])(1//0[A-Za-z0-9_\-]{2})[A-Za-z0-9_\-]{20,}"), r"\1***"),
    (re.compile(r"\b(key-)[0-9a-f]{32}\b"), r"\1***"),
    (re.compile(r"\b(SK)[0-9a-fA-F]{32}\b"), r"\1***"),
    (re.compile(r"\b[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6,7}\.[A-Za-z0-9_\-]{27,40}\b"), "***"),
    (re.compile(r"\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}"), "SG.***"),
    (re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{10,}"), "xox-***"),
    # an AWS secret access key written after its key id, unlabelled ("AKIA... wJalr...")
    (re.compile(r"\b((?:AKIA|ASIA)[0-9A-Z]{16}[\s:,;/|]{1,3})[A-Za-z0-9/+]{40}\b"), r"\1***"),
    # AWS access key ids: long-term (AKIA) and temporary (ASIA, from STS)
    (re.compile(r"\b(AKIA|ASIA)[0-9A-Z]{16}\b"), r"\1***"),
    # the same keys glued to a name by "_", "-" or "." (a scores file run_hf_<key>.jsonl, a folder f_AKIA<id>): in
    # their strict forms only (random: digits among the letters, both cases), so "bert_hf_checkpoint_final",
    # "REGION_ASIAPACIFIC" or "results_sk-learn-v2" stay
    (re.compile(r"(?<=[_.\-])(hf|ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}(?![A-Za-z0-9])"), r"\1_***"),
    (re.compile(r"(?<=[_.\-])(AKIA|ASIA)(?=[A-Z2-7]{0,15}[2-7])[A-Z2-7]{16}(?![0-9A-Z])"), r"\1***"),
    (re.compile(r"(?<=[_.\-])AIza[0-9A-Za-z_\-]{35}"), "AIza***"),
    (re.compile(r"(?<=[_.])sk-(?:proj-|ant-)?(?=[A-Za-z_\-]{0,80}[0-9])(?=[a-z0-9_\-]{0,80}[A-Z])[A-Za-z0-9_\-]{20,}"),
     "sk-***"),
    # a Slack webhook's secret and a Telegram bot's token, in free text as in a URL
    (re.compile(r"(hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/)[A-Za-z0-9]+"), r"\1***"),
    (re.compile(r"(/bot\d{5,}:)[A-Za-z0-9_\-]{30,}"), r"\1***"),
    (re.compile(r"\bAIza[0-9A-Za-z_\-]{30,}"), "AIza***"),
    # (the first part read up to the next "-eyJ" only, so that a run of "eyJ-eyJ-..." takes linear time)
    (re.compile(r"\beyJ(?:(?!-eyJ)[A-Za-z0-9_\-]){8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"), "jwt-***"),
    # Google OAuth access tokens, HashiCorp Vault tokens, npm, PyPI, DigitalOcean, Grafana, Stripe live/test keys
    (re.compile(r"\b(ya29|hvs|hvb|hvr)\.[A-Za-z0-9_\-]{16,}"), r"\1.***"),
    (re.compile(r"\b(npm|dop_v1|glsa|sk_live|sk_test|rk_live|rk_test|shpat)_[A-Za-z0-9_\-]{16,}"), r"\1_***"),
    (re.compile(r"\bpypi-[A-Za-z0-9_\-]{16,}"), "pypi-***"),
]


_SECRET_WORDS = frozenset({"token", "tokens", "secret", "secrets", "password", "passwd", "pass", "passphrase",
                           "credential", "credentials", "cred", "creds", "cookie", "cookies", "webhook", "auth",
                           "authorization", "authtoken", "authkey", "dsn", "apikey", "accesskey", "pat", "jwt",
                           "psk", "hec", "pepper",
                           # abbreviations, and "password" in other languages (German, Spanish, Portuguese,
                           # Italian, French, Dutch, Swedish)
                           "pswd", "pwrd", "passwrd", "tkn", "tok", "passwort", "kennwort", "contrasena",
                           "contraseña", "senha", "clave", "motdepasse", "wachtwoord", "losenord"})
# Words naming a key (OPENAI_API_KEY, KEY_OPENAI, JUDGE_SAS, MY_BEARER): a credential unless a later word says
# what of the key the variable holds (AWS_ACCESS_KEY_ID, SSH_KEY_TYPE, API_KEY_HEADER is a header's name).
_KEY_WORDS = frozenset({"key", "keys", "apikeys", "privatekey", "bearer", "sas", "keypair", "keypairs"})
_KEY_DESCRIPTORS = frozenset({"id", "ids", "name", "names", "type", "types", "kind", "size", "length", "len", "bits",
                              "alg", "algo", "algorithm", "format", "fmt", "vault", "ring", "store", "region",
                              "prefix", "suffix", "column", "col", "field", "index", "idx", "map", "mapping",
                              "func", "fn", "function", "count", "limit", "arn", "usage", "rotation", "expiry",
                              "expiration", "expires", "created", "age", "policy", "mode", "method", "header",
                              "param", "parameter", "var", "variable", "env", "source", "provider", "helper",
                              "command", "cmd", "url", "uri", "endpoint", "host", "fingerprint", "hash", "folder",
                              "location", "files"})
# Words that end in "pass" and name no password (GIT_ASKPASS is a program; a two-pass encoding).
_NOT_PASSWORDS = frozenset({"askpass", "bypass", "compass", "encompass", "surpass", "trespass", "overpass",
                            "underpass", "multipass", "onepass", "twopass", "singlepass", "firstpass",
                            "secondpass"})
# Written anywhere in a name, also without "_" around it (SSHPASS is a whole name of its own).
_SECRET_PARTS = re.compile(r"(?i)passw(or)?d|passphrase|secret|credential|cookie|webhook|private_?key|^sshpass$"
                           r"|service_?account_?(?:json|key)"
                           r"|(?:^|_)id_(?:rsa|dsa|ecdsa|ed25519)(?:_|$)")
# A name ending in one of these words holds where a credential is, not the credential (SSH_AUTH_SOCK,
# AWS_SHARED_CREDENTIALS_FILE, PASSWORD_STORE_DIR).
_LOCATION_WORDS = frozenset({"file", "path", "dir", "sock", "socket", "home"})
# ... and a name ending in one of these says what kind of credential is used, not which (TOKEN_TYPE=bearer,
# AUTH_METHOD=password, SECRET_BACKEND=vault).
_KIND_WORDS = frozenset({"type", "types", "method", "methods", "backend", "provider", "mode", "kind", "scheme",
                         "algorithm", "alg", "version", "enabled", "required", "ttl", "timeout", "strategy"})
# Last words naming another copy, encoding, stage or owner of the same credential (..._KEY_OLD, ..._KEY_B64,
# ..._PWD_PROD, ..._SK_LIVE).
_COPY_WORDS = frozenset({"old", "new", "backup", "bak", "prev", "next", "alt", "b64", "base64", "hex", "pem", "json",
                         "primary", "secondary", "current", "prod", "production", "prd", "dev", "devel",
                         "development", "test", "tests", "testing", "staging", "stage", "stg", "qa", "uat", "live",
                         "sandbox", "work", "personal", "local", "remote", "main", "default", "shared", "private"})


def _name_words(name: str) -> list[str]:
    """The words of a variable's name, lower-cased: split on ``_``, ``-``, ``.`` and spaces, a mixed-case part
    also where its case changes (``AzureOpenAIKey``: azure, open, ai, key), a word's trailing digits apart
    (``KEY1``: key, 1; ``V2`` stays one word).

    >>> _name_words("OPENAI-API-KEY1"), _name_words("AzureOpenAIKey_v2"), _name_words("OP_SESSION_myteam")
    (['openai', 'api', 'key', '1'], ['azure', 'open', 'ai', 'key', 'v2'], ['op', 'session', 'myteam'])
    """
    words: list[str] = []
    for part in re.split(r"[_\-.\s]+", name):
        if part.isalnum() and not (part.isupper() or part.islower()):
            pieces = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", part)  # AzureOpenAIKey
        else:
            pieces = [part]
        for piece in (piece.lower() for piece in pieces if piece):
            digits = re.fullmatch(r"([a-z]{2,})(\d+)", piece)
            if digits and piece not in _COPY_WORDS:  # KEY1 (not V2, B64)
                words += [digits[1], digits[2]]
            else:
                words.append(piece)
    return words


def secret_variable(name: str) -> bool:
    """Whether the environment variable ``name`` holds a credential. Its words (:func:`_name_words`: split on
    ``_``, ``-``, changes of case and trailing digits) decide: a word is one of ``TOKEN``, ``SECRET``,
    ``PASSWORD``, ``PASSWD``, ``PASS``, ``PASSPHRASE``, ``CRED``, ``CREDENTIALS``, ``COOKIE``, ``WEBHOOK``,
    ``AUTH``, ``AUTHORIZATION``, ``DSN``, ``PAT``, ``JWT``...; a word is ``KEY``, ``APIKEY``, ``BEARER`` or
    ``SAS`` and no later word says what of the key the name holds (``OPENAI_API_KEY_PROD``, ``KEY_OPENAI``,
    ``JUDGE_SAS``; not ``AWS_ACCESS_KEY_ID``, ``SSH_KEY_TYPE``); its last word ends in ``KEY`` (``OPENAIKEY``);
    a later ``VALUE`` says the name holds the key after all (``API_KEY_HEADER_VALUE``); it ends in ``_PWD``
    (``MYSQL_PWD``), ``_SALT`` or a one-time password's ``_SEED`` (``TOTP_SEED``), or is ``PW``; a word ends in
    ``TOKEN``, ``SECRET`` or ``PASSCODE`` (``GITHUBTOKEN``); it names a session's id (``SESSION_ID``); it contains
    ``PASSWORD``, ``PASSWD``, ``PASSPHRASE``, ``SECRET``, ``CREDENTIAL``, ``COOKIE``, ``WEBHOOK``, ``PRIVATE_KEY``
    or ``SERVICE_ACCOUNT_JSON`` (``PGPASSWORD``); its last word is ``PIN`` or ``OTP`` (``SIM_PIN``; not
    ``PIN_MEMORY``), or its first ``PWD`` or ``PW`` with more after it (``PWD_DB``); a word ends in ``PASS`` as a
    password does (``SSHPASS``, ``PGPASS``; not ``GIT_ASKPASS``). Last words naming a copy, a stage or an owner
    of the same credential (``_OLD``, ``_B64``, ``_PROD``, ``_TEST``, ``_LIVE``, ``_PERSONAL``, ``_2``) do not
    change the answer. A name whose last word is ``FILE``, ``PATH``, ``DIR``, ``SOCK``, ``SOCKET`` or ``HOME``
    names where a credential is kept, and one whose last word is ``TYPE``, ``METHOD``, ``BACKEND``, ``MODE``...
    names what kind is used (``TOKEN_TYPE``, ``AUTH_METHOD``): neither is a credential.

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
    >>> [secret_variable(n) for n in ("OPENAI_API_KEY_PROD", "OPENAI_API_KEY1", "KEY_OPENAI", "OPENAI-API-KEY",
    ...                               "VLLM_CRED", "AZURE_STORAGE_SAS", "MYSQL_PWD_STAGING", "STRIPE_SK_LIVE")]
    [True, True, True, True, True, True, True, True]
    >>> [secret_variable(n) for n in ("PWD", "OLDPWD", "SSH_AUTH_SOCK", "GIT_ASKPASS", "GIT_AUTHOR_NAME",
    ...                               "AWS_ACCESS_KEY_ID", "TOKENIZERS_PARALLELISM", "PASSWORD_STORE_DIR")]
    [False, False, False, False, False, False, False, False]
    >>> [secret_variable(n) for n in ("OPENAI_API_KEY_FILE", "KEY_ID_PROD", "SSH_KEY_TYPE", "API_KEY_HEADER")]
    [False, False, False, False]
    >>> [secret_variable(n) for n in ("OPENAI_KEY_LIST", "OPENAI_API_KEY_HEADER_VALUE", "OPENAIAPIKEYPROD", "PW",
    ...                               "OPENAI_KEYPAIR", "TOTP_SEED", "HMAC_SALT", "SERVICE_ACCOUNT_JSON")]
    [True, True, True, True, True, True, True, True]
    >>> [secret_variable(n) for n in ("GITHUBTOKEN", "SLACK_BOTTOKEN", "SESSION_ID", "SESSIONID", "DB_PASSCODE")]
    [True, True, True, True, True]
    >>> [secret_variable(n) for n in ("RANDOM_SEED", "PYTHONHASHSEED", "KEY_MAP", "SALT_MASTER", "XDG_SESSION_TYPE")]
    [False, False, False, False, False]
    >>> [secret_variable(n) for n in ("PIN", "SIM_PIN", "OTP", "PWD_DB", "PIN_MEMORY", "PWD", "OLDPWD")]
    [True, True, True, True, False, False, False]
    """
    words = _name_words(name)
    if not words:
        return False
    if len(words) > 1 and words[-1] in _LOCATION_WORDS | _KIND_WORDS:
        return False
    while len(words) > 1 and (words[-1] in _COPY_WORDS or re.fullmatch(r"v?\d+", words[-1])):
        words = words[:-1]  # OPENAI_API_KEY_2, SIGNING_KEY_V2, ENCRYPTION_KEY_B64, MYSQL_PWD_PROD: the same credential
    return (bool(_SECRET_WORDS.intersection(words))
            or any(word in _KEY_WORDS and (not _KEY_DESCRIPTORS.intersection(words[index + 1:])
                                           or words[-1] in ("value", "values", "val"))  # ..._KEY_HEADER_VALUE
                   for index, word in enumerate(words))
            or re.fullmatch(rf"[a-z0-9]+(?:api)?keys?(?:{'|'.join(sorted(_COPY_WORDS))})?", words[-1]) is not None
            or (len(words) > 1 and words[-1] in ("salt", "seed")  # HMAC_SALT; TOTP_SEED (not RANDOM_SEED)
                and (words[-1] == "salt" or bool({"totp", "otp", "hotp", "mfa"}.intersection(words))))
            or words == ["pw"]
            or any(re.fullmatch(r"[a-z0-9]+(?:token|secret|passcode)s?|passcodes?", word) for word in words)  # HFTOKEN
            or "sessionid" in words or any(a == "session" and b in ("id", "key") for a, b in zip(words, words[1:]))
            or (len(words) > 1 and words[-1] == "session")  # BW_SESSION (not XDG_SESSION_TYPE)
            or words[:2] == ["op", "session"]  # 1Password's OP_SESSION_<account>
            or (len(words) > 1 and words[-1] in ("pwd", "pw", "sk"))  # MYSQL_PWD, DB_PW, STRIPE_SK
            or words[-1] in ("pin", "otp", "totp", "hotp")  # PIN, SIM_PIN, OTP (not PIN_MEMORY)
            or (len(words) > 1 and words[0] in ("pwd", "pw"))  # PWD_DB (PWD alone is the working folder)
            or bool(_SECRET_PARTS.search(name)) or any(_compound_pass(word) for word in words))


def _compound_pass(word: str) -> bool:
    """Whether one word of a name ends in ``pass`` as a password does (``pgpass``, ``storepass``, ``keypass``;
    not ``askpass``, ``bypass``, ``compass``)."""
    return word.endswith("pass") and len(word) > 4 and word not in _NOT_PASSWORDS
