"""Credentials in a grid's values: which parameters hold them, which literal credentials a command line
carries (:func:`_scan`), how a value is written with them masked, and which values may appear in a unit's
folder name. The environment's credentials (:func:`evalkit.models.environment_secrets`) are added to these
by :attr:`evalkit.grid.GridUnit.secrets`."""
from __future__ import annotations

import json
import re
from typing import Any, Sequence
from urllib.parse import quote, unquote, urlsplit

from evalkit.models.redaction import (MASK, _HOST_LIKE, _NOT_NEXT_URL, _URL_START, _basic_value, _compound_pass,
                                     _ordinary_word, path_secrets, public_endpoint, redact, secret_variable,
                                     url_credentials)
from evalkit.grid.scripts import expect_secrets, ftp_secrets, heredocs

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
        found += [value[start:end] for start, end in _slashed_passwords(value)]  # postgres://me:pa/ss@db
        pieces = parts.query.split("&") + ([parts.fragment, *parts.fragment.split("&")] if parts.fragment else [])
        for piece in pieces:  # query values, and a fragment (#access_token=X) whole and by its values
            value = piece.partition("=")[2] or (piece if piece == parts.fragment else "")
            if len(value) >= 6:  # shorter values (json, en, 1) would mask ordinary words
                found += [value, unquote(value)]
    return sorted({s for s in found if len(s) >= 4}, key=len, reverse=True)


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


# Programs whose short options carry a credential (each program's options are read only after its name).
_CURL = frozenset({"curl"})
_MYSQL = frozenset({"mysql", "mysqldump", "mysqladmin", "mysqlimport", "mysqlshow", "mysqlcheck", "mysqlslap",
                    "mariadb", "mariadb-dump", "mariadb-admin"})
_HTTPIE = frozenset({"http", "https", "httpie", "xh", "xhs"})  # xh reads HTTPie's syntax
# Programs whose short options take a password or a passphrase, standing alone or attached (redis-cli -a PASS,
# zip -P PASS, ssh-keygen -N PHRASE, openssl enc -k PASS, ldapsearch -w PASS).
_LDAP = ("ldapsearch", "ldapadd", "ldapmodify", "ldapdelete", "ldapwhoami", "ldappasswd", "ldapcompare", "ldapmodrdn")
_PASSWORD_OPTIONS = {"redis-cli": frozenset({"-a"}), "mongosh": frozenset({"-p"}), "mongo": frozenset({"-p"}),
                     "zip": frozenset({"-P"}), "unzip": frozenset({"-P"}), "zipcloak": frozenset({"-P"}),
                     "openssl": frozenset({"-k", "-K"}), "ssh-keygen": frozenset({"-N", "-P"}),
                     "sqlcmd": frozenset({"-P"}), "bcp": frozenset({"-P"}), "mosquitto_pub": frozenset({"-P"}),
                     "mosquitto_sub": frozenset({"-P"}), "rabbitmqadmin": frozenset({"-p"}),
                     "twine": frozenset({"-p"}), "cqlsh": frozenset({"-p"}), "cypher-shell": frozenset({"-p"}),
                     "ipmitool": frozenset({"-P"}), "evil-winrm": frozenset({"-p"}), "rdesktop": frozenset({"-p"}),
                     "doctl": frozenset({"-t"}), "useradd": frozenset({"-p"}), "usermod": frozenset({"-p"}),
                     "poetry": frozenset({"-p"}), "nuget": frozenset({"-k", "-p"}), "codecov": frozenset({"-t"}),
                     "influx": frozenset({"-t"}), "doveadm": frozenset({"-p"}), "security": frozenset({"-w"}),
                     "ncftp": frozenset({"-p"}), "ncftpput": frozenset({"-p"}), "ncftpget": frozenset({"-p"}),
                     "sendemail": frozenset({"-xp"}), "yt-dlp": frozenset({"-p"}), "youtube-dl": frozenset({"-p"}),
                     "p4": frozenset({"-P"}), "openai": frozenset({"-k"}), "schtasks": frozenset({"/p", "/rp", "/P", "/RP"}),
                     **{name: frozenset({"-p"}) for name in ("psexec", "PsExec", "psexec64", "PsExec64")},
                     # SNMP: -A/-X passphrases, -c the community (an ordinary word such as "public" stays)
                     **{name: frozenset({"-A", "-X", "-c"}) for name in ("snmpwalk", "snmpget", "snmpset",
                                                                         "snmpbulkwalk", "snmptrap")},
                     **{name: frozenset({"-w"}) for name in _LDAP}, "ldappasswd": frozenset({"-w", "-s", "-a"})}
# Options that take a password in one subcommand only (airflow users create -p X; airflow webserver -p 8080).
_SUBCOMMAND_PASSWORD_OPTIONS = {"airflow": (("users", "create"), frozenset({"-p"})),
                                "kaggle": (("config", "set"), frozenset({"-v", "--value"}))}
# Options whose value is a user name, or "user:password" (also user%password, Samba's form) for any program;
# a pair whose second part is a number is an id pair (docker run -u 1000:1000), no password.
_USER_PAIR_OPTIONS = frozenset({"-u", "-U", "--user", "--username"})
# lftp's -u takes "user,password".
_COMMA_PAIR = {"lftp": frozenset({"-u"})}
# Programs that read a short option's value attached to it (zip -PPASS); openssl's -kfile is another option.
_ATTACHED_OK = frozenset({"zip", "unzip", "zipcloak", "ssh-keygen", "mosquitto_pub", "mosquitto_sub", "sqlcmd",
                          "bcp", *_LDAP})
# Programs whose "login" subcommand takes a token as its argument (vault login TOKEN, wandb login KEY).
_TOKEN_LOGIN = frozenset({"vault", "bao", "wandb", "cargo", "snyk", "bw"})
_TOKEN_LOGIN_WORDS = frozenset({"login", "auth", "unlock"})
# Oracle's tools take USER/PASSWORD[@DATABASE] (also as userid=USER/PASSWORD).
_ORACLE = frozenset({"sqlplus", "sql", "rman", "exp", "imp", "expdp", "impdp", "sqlldr", "dgmgrl"})
_ORACLE_LOGIN = re.compile(r"((?:userid|user)=)?([^/\s@=]+)/([^/\s@]+)(@\S+)?")
# Programs whose password is a positional word (read by _scan's end of command).
_POSITIONAL = frozenset({"smbclient", "net", "wpa_passphrase", "mc", "poetry", "gh", "rabbitmqctl", "xfreerdp",
                         "wlfreerdp", "ngrok", "az", "aws", "chpasswd", "mkpasswd", "rclone", "ansible-vault",
                         "wrangler", "isql"})
# Subcommands whose first positional word is a password to hash or hide (openssl passwd X, rclone obscure X,
# ansible-vault encrypt_string X), and programs that take it as their last word (mkpasswd -m sha-512 X).
_PASSWORD_SUBCOMMANDS = {"openssl": "passwd", "rclone": "obscure", "ansible-vault": "encrypt_string"}
# An option that gives a stored secret's value, in a command about secrets (az keyvault secret set --value,
# aws ssm put-parameter --value, aws secretsmanager ... --secret-string, gh secret set --body).
_VALUE_OPTIONS = frozenset({"--value", "--body", "-b", "--secret-string", "--secret-value"})
_SECRET_COMMANDS = frozenset({"secret", "secrets", "keyvault", "secretsmanager", "ssm", "password", "token",
                              "credential", "credentials", "put-parameter"})
# Options that make a program read a secret from its standard input (echo S | docker login --password-stdin).
_STDIN_SECRET = frozenset({"--password-stdin", "--with-token", "--passwd-on-stdin", "--pass-stdin", "-i",
                           "--stdin", "--token-stdin", "-S", "-s", "--passphrase-fd"})
_STDIN_PROGRAMS = frozenset({"chpasswd", "passwd", "htpasswd", "docker", "podman", "gh", "openconnect", "helm",
                             "cosign", "skopeo", "buildah", "oras", "nerdctl", "crane", "sudo", "smbpasswd", "gpg",
                             "gpg2"})
# Programs that store what they read from standard input as a secret, whatever their options (pass insert).
_STDIN_STORES = {"pass": "insert", "gopass": "insert", "security": "add-generic-password"}
# A credential word standing alone that is also a subcommand or an ordinary value (git credential fill,
# kubectl create secret generic, npm token list, jq .key): the word after it is no credential. A key's name
# (aws_secret_access_key, //registry/:_authToken, http.proxyPassword) and a netrc's "password" are.
_AMBIGUOUS_WORDS = frozenset({"token", "tokens", "secret", "secrets", "credential", "credentials", "cred", "creds", "auth",
                              "authorization", "key", "pass", "pw", "pwd", "sig", "signature", "session", "sid",
                              "cookie", "cookies", "dsn", "pat", "jwt", "webhook", "bearer"})
# Archivers whose -pPASS is the archive's password (7z a -pPASS x.7z).
_ARCHIVERS = frozenset({"7z", "7za", "7zr", "rar", "unrar"})
_PROGRAMS = (_CURL | _MYSQL | _HTTPIE | _ARCHIVERS | set(_PASSWORD_OPTIONS) | set(_COMMA_PAIR) | _TOKEN_LOGIN
             | _ORACLE | _POSITIONAL | set(_SUBCOMMAND_PASSWORD_OPTIONS) | {"sshpass", "htpasswd"})
# -pVALUE for another program (a wrapper passing it on) is a password when VALUE looks like one: at least 6
# characters, letters and digits, no "/" or ":" (-p8080:80, -pthread, -pedantic, -pno:cacheprovider and
# Java-style options such as -projectId stay).
_ATTACHED_PASSWORD = re.compile(r"(?=[^/:]*(?:[A-Za-z][^/:]*\d|\d[^/:]*[A-Za-z]))[^/:\s]{6,}")
# Where a shell line starts another command: the next word is a program.
_SEPARATORS = frozenset({";", "&&", "||", "|", "|&", "&", "(", ")", ";;"})
# Options whose value is "user:password", for any program, and for curl and HTTPie only.
_PAIR_OPTIONS = frozenset({"--login", "--proxy-user", "--basic-auth"})
_PROGRAM_PAIR_OPTIONS = {"curl": frozenset({"-u", "--user", "-U", "--proxy-user"}),
                         "httpie": frozenset({"-a", "--auth"})}
_HEADER_OPTIONS = frozenset({"-H", "--header"})
# A header's name given alone to a header option, its value the next argument (--header X-Api-Key VALUE).
_HEADER_NAME = re.compile(r"([A-Za-z][\w-]*):?")
# Commands of an expect script: after a prompt ("Password:") the next word is one, no value (what it sends is
# read by evalkit.grid.scripts.expect_secrets).
_EXPECT_COMMANDS = frozenset({"send", "exp_send", "expect", "interact", "exp_continue"})
# Words between a credential's name and its value in code and configuration (password = X, :password => X).
_ASSIGNS = frozenset({"=", "=>", ":", ":="})
_HEADER = re.compile(r"\s*([A-Za-z][\w-]*)\s*:\s*(\S.*)", re.DOTALL)
_SCHEME = re.compile(r"(?i)(bearer|basic|token|digest|negotiate|apikey)\s+(\S.*)", re.DOTALL)
_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=([^=\s]\S*)")
# A field of a JSON (or Python) object: "name": "value" (escapes read), 'name': 'value' or "name": 1234.
_JSON_FIELD = re.compile(r"""(["'])([^"'\s:{}]+)\1\s*:\s*(?:(["'])((?:\\.|(?!\3)[^\\])*)\3|([^\s,}\]"'\[{][^\s,}\]"']*))""")
# A field whose value is a list ("creds": ["a", "b"]): each of its strings.
_JSON_LIST = re.compile(r"""(["'])([^"'\s:{}]+)\1\s*:\s*\[([^\[\]{}]*)\]""")
_QUOTED = re.compile(r"""(["'])((?:\\.|(?!\1)[^\\])*)\1""")
_PLACEHOLDER = re.compile(r"\{[A-Za-z_]\w*\}")
# A login subcommand (docker login, podman login, az login, helm registry login): its -p is the password.
_LOGIN = re.compile(r"(?i)([\w.]+[-_])?login")
# Options whose value is a user name (ssh -l login): a "login" after one names a user, not a subcommand.
_USER_OPTIONS = frozenset({"-l", "-u", "-U", "--user", "--username", "--login"})
_SSHPASS_VALUED = frozenset({"-p", "-f", "-d", "-P"})
# A parameter of a URL's path: /api;jsessionid=X (a session id), /v1;token=X.
_PATH_PARAMETER = re.compile(r";([\w.-]+)=([^;/?#]+)")
# A Windows option with its value: /pass:X, /password:X (its name judged as an option's).
_SLASH_OPTION = re.compile(r"/([A-Za-z][\w-]*):(\S+)")


def _program(word: str) -> str:
    """The program a word names, by its file name (``/usr/bin/curl`` is curl, ``PsExec.exe`` PsExec; http, https
    and xh are HTTPie)."""
    name = word.rsplit("/", 1)[-1].rsplit("\\", 1)[-1]
    name = name[:-4] if name.lower().endswith(".exe") else name
    return "httpie" if name in _HTTPIE else name


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


def _header_name(argument: str, following: str | None) -> str | None:
    """The credential header's name that ``following`` is when it is given alone to a header option
    (``--header X-Api-Key VALUE``, ``-H "Authorization:" VALUE``), else None. After ``-H`` the name is
    capitalised, as headers are written (``grep -H token notes.txt`` names a pattern and a file).

    >>> _header_name("--header", "x-api-key"), _header_name("-H", "Authorization:"), _header_name("-H", "token")
    ('x-api-key', 'Authorization', None)
    """
    if argument not in _HEADER_OPTIONS or following is None or not _HEADER_NAME.fullmatch(following):
        return None
    name = following.rstrip(":")
    if argument == "-H" and not (name[:1].isupper() or following.endswith(":")):
        return None
    return name if _credential_header(name) else None


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


def _json_fields(text: str) -> tuple[list[str], str]:
    """The secrets of a JSON body (or a Python literal) written in an argument — the values of its fields named
    as credentials (:func:`credential_name`: ``token``, ``password``, ``api_key``,
    ``client_secret``, ``session``...), at any depth — and the text with them masked. A value with a
    placeholder (``{pw}``), ``null``, ``true`` or ``false`` stays.

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
        if (not credential_name(match[2], option=True) or not value or value in ("null", "true", "false", MASK)
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
# :password => "X" and {"api_key" => "X"}. A value starts with no blank, ";" or bracket: in expect "Password:";
# send "X" the quotes around '; send ' close one string and open the next.
_CODE_ASSIGNMENT = re.compile(r"""(?:(["'])([A-Za-z_][\w.-]*)\1\s*\]?|\b([A-Za-z_]\w*))\s*(?:=>|[:=])\s*"""
                              r"""(["'])(?![\s;,{}()\[\]])([^"'\\]+)\4""")
# An Authorization header's value written anywhere (git -c http.extraHeader="Authorization: Bearer X",
# Authorization=Bearer X), a Bearer token, and a Basic credential (base64).
_AUTHORIZATION = re.compile(r"(?i)\b(?:proxy-)?authorization\s*[:=]\s*(?:(?:bearer|basic|token|digest|negotiate|apikey)"
                            r"\s+)?([^\s,;&'\"]+)")
_BEARER = re.compile(r"(?i)(?:^|(?<=[\s:=]))(?:bearer\s+(?!-)([^\s'\"]{4,})|basic\s+([A-Za-z0-9+/]{8,}={0,2})(?![^\s'\"]))")
_SCHEMES = ("bearer", "basic", "token", "digest", "negotiate", "apikey")
# An argument after which the next one is the header's value: "Authorization:", "Authorization: Bearer".
_AUTHORIZATION_END = re.compile(r"(?i).*\b(?:proxy-)?authorization\s*[:=]?\s*(?:bearer|basic|token)?")


# A URL whose password holds an unencoded "/" (postgres://me:pa/ss@db/app): a URL parser ends the host at that
# "/", so its user-info is read here, up to the last "@" a host follows. The part before the ":" is no host
# ("[::1]"), the password's first segment no port (https://h:8080/u/@me is a path) and holds no "@" (then the
# user-info ends there, as a parser reads it).
_SLASHED_USERINFO = re.compile(r"""\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#@:\[\]"'<>]*:"""
                               r"""((?!\d+/)[^\s?#"'<>/@]*/[^\s?#"'<>]*)"""
                               r"""@(?=[A-Za-z0-9\[][\w.\[\]:-]*(?:[/?#\s"'<>]|$))""")
# ... and one whose password holds an "@" before its "/" (postgres://me:p@ss/w0rd@db/app): to the last "@" a host
# name follows (redaction's reading of such an ambiguous URL).
_AT_SLASHED_USERINFO = re.compile(r"""\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#@:\[\]"'<>]*:"""
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


def _text_secrets(text: str) -> tuple[list[str], str]:
    """The credentials written anywhere in one argument, whatever the program — ``name=value`` pieces whose name
    is a credential's (:func:`credential_name`), an ``Authorization`` value, a ``Bearer`` token, a ``Basic``
    credential — and the argument with them masked.

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
        if credential_name(match[1], option=True) and match[2] != MASK and match[2].lower() not in _SCHEMES:
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
        if (credential_name(name, option=True) or secret_variable(name)) and match[5] != MASK:
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
    and how it is shown; a pair whose second part is a number is an id pair (``docker run -u 1000:1000``).

    >>> _user_pair("alice:pw-1234")[1], _user_pair("alice%pw-1234")[1], _user_pair("1000:1000"), _user_pair("bob")
    ('alice:***', 'alice%***', ([], '1000:1000'), ([], 'bob'))
    """
    separator = next((c for c in separators if c in value), None)
    if separator is None or "://" in value or _templated(value):
        return [], value
    user, _, password = value.partition(separator)
    if not password or password.isdigit() or password == MASK:
        return [], value
    return [password, value, _basic_value(user, password)], f"{user}{separator}{MASK}"


def _scan(arguments: list[str], *, prose: bool = False) -> tuple[list[str], dict[int, str]]:
    """The literal credentials in a command's arguments, and the arguments that show one, as they are shown.

    Three general rules hold for every program: the word after a word that names a credential key
    (:func:`_credential_word`: ``aws_secret_access_key X``, ``//registry/:_authToken X``, a netrc line's
    ``password X``; in ``prose``, a prompt's words, only a value that is no ordinary word); every ``name=value``
    piece of an argument whose name is a credential's, an ``Authorization`` value and a ``Bearer`` token
    (:func:`_text_secrets`); and the password of ``user:password`` (or ``user%password``) given to ``-u``,
    ``-U``, ``--user`` or ``--username`` (:func:`_user_pair`). A ``--`` between an option and its value is
    skipped (``--password -- X``).

    Read too, for every program: the value of an option named as a credential (``--password x``,
    ``--password=x``, ``--token x``, ``--api-key=x``, ``--cookie x``: the next argument unless it starts with
    ``--``; a value that starts with ``-`` is taken); the password of a ``user:password`` given to ``--login``,
    ``--proxy-user`` or ``--basic-auth``; the value of a credential header given to ``-H``/``--header``
    (``-H "Authorization: Bearer x"``; also a name and a value as two arguments, ``--header X-Api-Key x``, where
    after ``-H`` the name is capitalised); the value of a variable named as a credential assigned in the command
    (``MYSQL_PWD=x mysql ...``, see :func:`evalkit.models.redaction.secret_variable`); the password given as
    ``pass:x`` to openssl's ``-passin``, ``-passout`` or ``-pass``; the password of a URL
    (``https://user:pw@host/...``; the URL itself is masked where it is written); the values of fields named
    as credentials in a JSON body (``-d '{"token": "x"}'``, ``--data={"password": "x"}``, see
    :func:`_json_fields`); the password after ``-p`` (or attached, ``-pPASS``) following a login subcommand
    (``docker login -u me -p x``, ``podman login``, ``az login``, ``helm registry login``; a ``login`` that is
    the value of ``-l``, ``-u``, ``--user``... is a user name); a value attached to ``-p`` that looks like a
    password (at least 6 characters, letters and digits, no ``/`` or ``:``: ``-pS3cret-x``; ``-p8080``,
    ``-pthread``, ``-pedantic``, ``-projectId`` stay).

    Read only after the program's name, since the same short option means other things elsewhere
    (``ssh -p 2222``, ``python -u``): for curl ``-u``/``--user``/``-U`` ``user:password`` (also attached,
    ``-uuser:pw``), ``-b`` cookie data (a value with ``=``; without one it names a cookie file) and ``-H``
    attached; for HTTPie (``http``, ``https``, ``xh``) ``-a``/``--auth user:password`` and credential headers written
    ``Name:value``; for mysql, mysqldump, mysqladmin, mariadb... (and 7z, rar, unrar) the password attached
    to ``-p`` (``-pPASS``; a ``-p`` standing alone asks for the password, and the word after it is the
    database, which stays); for sshpass ``-p PASS`` and ``-pPASS`` (the program it runs starts a command of
    its own); the short password options of :data:`_PASSWORD_OPTIONS` (redis-cli ``-a``, mongosh ``-p``,
    zip ``-P``, openssl ``-k``/``-K``, ssh-keygen ``-N``/``-P``, ldapsearch ``-w``...; a value that starts with
    ``-`` is the next option: the program asks for the password); htpasswd's password with ``-b`` (its last
    word); vault's ``login TOKEN``; lftp's ``-u user,password``. A program is the first word of a command, or one of
    these names later in it (``sudo mysql``, ``timeout 9 curl``; ``http`` and ``https`` only as the first
    word: they are ordinary words too).

    A word with blanks in it is a shell line (``sh -c "..."``), read as a command of its own; in a shell line
    ``;``, ``&&``, ``|``... start another command, and its here-documents and expect scripts are read too
    (:func:`_script_secrets`). A value with a placeholder (``{pw}``) is shown as it is: the
    unit's value is masked with its values.

    >>> _scan(["curl", "-u", "bob:pw-1234", "-b", "sid=c00kie9", "-p", "8080"])[1]
    {2: 'bob:***', 4: '***'}
    >>> _scan(["mysql", "-uroot", "-pdbpass1", "app"])[1], _scan(["ssh", "-p", "2222", "host"])[1]
    ({2: '-p***'}, {})
    """
    found: list[str] = []
    shown: dict[int, str] = {}
    program = ""
    starts = True  # the next word that is no option and no assignment is a program (sshpass's own command too)
    login = False  # after a login subcommand: -p is its password
    skip = set()
    batch, words = False, []  # htpasswd -b; the positions of the command's words that are no option
    piped: list[int] = []  # the words an echo or printf pipes into the next command
    begun = 0  # where the command being read starts

    def secret_at(position: int, value: str | None = None, shown_as: str = MASK) -> None:
        if not _templated(arguments[position]):
            found.append(arguments[position] if value is None else value)
            shown[position] = shown_as

    def end_command() -> None:
        """The passwords a program takes as a positional word, read once its words are known."""
        texts = [arguments[i] for i in words]
        if program in ("chpasswd", "passwd") and piped:
            for position in piped:  # echo USER:PASSWORD | chpasswd: the line and its password
                secret_at(position)
                if ":" in arguments[position] and not _templated(arguments[position]):
                    found.append(arguments[position].partition(":")[2].split(":")[0])
        if piped and _STDIN_STORES.get(program) in texts:
            for position in piped:  # echo X | pass insert -e web/site
                secret_at(position)
        if piped and {"secret", "secrets"} & set(texts) and {"set", "put", "create", "add"} & set(texts):
            for position in piped:  # echo X | gh secret set NAME; printf X | wrangler secret put NAME
                secret_at(position)
        if program in _PASSWORD_SUBCOMMANDS and texts[:1] == [_PASSWORD_SUBCOMMANDS[program]] and len(words) >= 2:
            secret_at(words[-1] if program == "openssl" else words[1])  # openssl passwd -6 X; rclone obscure X
        if program == "mkpasswd":
            valued = {"-m", "--method", "-S", "--salt", "-R", "--rounds", "-P", "--password-fd"}
            plain = [i for i in words if not (i and arguments[i - 1] in valued)]
            if plain:
                secret_at(plain[0])  # mkpasswd [-m METHOD] PASSWORD [SALT]
        if program == "htpasswd" and batch and len(words) >= 2:
            secret_at(words[-1])  # htpasswd -b [-c] FILE USER PASSWORD: the last word
        elif program in ("smbclient", "net"):  # smbclient //host/share PASSWORD; net use \\host\share PASSWORD
            share = next((k for k, t in enumerate(texts) if t.startswith(("//", "\\\\"))), None)
            if share is not None and share + 1 < len(texts) and words[share + 1] == words[share] + 1 \
                    and texts[share + 1] != "*" and not texts[share + 1].startswith("/"):
                secret_at(words[share + 1])  # the word right after the share
        elif program == "rabbitmqctl" and texts[:1] in (["add_user"], ["change_password"]) and len(words) >= 3:
            secret_at(words[2])  # rabbitmqctl add_user USER PASSWORD
        elif program == "ngrok" and "add-authtoken" in texts and texts.index("add-authtoken") + 1 < len(texts):
            secret_at(words[texts.index("add-authtoken") + 1])
        elif program == "isql" and len(words) >= 3:
            secret_at(words[2])  # isql DSN USER PASSWORD (unixODBC)
        elif program == "wpa_passphrase" and len(words) >= 2:
            secret_at(words[1])  # wpa_passphrase SSID PASSPHRASE
        elif program == "mc" and texts[:2] == ["alias", "set"] and len(words) >= 6:
            secret_at(words[5])  # mc alias set ALIAS URL ACCESS_KEY SECRET_KEY
        elif program == "mc" and texts[:3] == ["config", "host", "add"] and len(words) >= 7:
            secret_at(words[6])
        elif program == "poetry":  # poetry config http-basic.REPO USER PASSWORD
            basic = next((k for k, t in enumerate(texts) if t.startswith("http-basic.")), None)
            if basic is not None and basic + 2 < len(texts):
                secret_at(words[basic + 2])
        elif program in _ORACLE:  # sqlplus USER/PASSWORD@DATABASE, expdp userid=USER/PASSWORD
            for position, text in zip(words, texts):
                pair = _ORACLE_LOGIN.fullmatch(text)
                if pair:
                    secret_at(position, pair[3], f"{pair[1] or ''}{pair[2]}/{MASK}{pair[4] or ''}")

    for index, argument in enumerate(arguments):
        value_index = index + 1
        if value_index + 1 < len(arguments) and ((arguments[value_index] == "--" and (
                (_secret_option(argument) and "=" not in argument) or _credential_word(argument)))
                or (arguments[value_index] in _ASSIGNS and _credential_word(argument))):
            value_index += 1  # --password -- VALUE: "--" ends the options; password = VALUE, :password => VALUE
        following = arguments[value_index] if value_index < len(arguments) else None
        if index in skip:
            continue
        named_header = _header_name(argument, following)
        if named_header and value_index + 1 < len(arguments) and arguments[value_index + 1] not in _SEPARATORS \
                and not arguments[value_index + 1].startswith("-"):  # --header X-Api-Key VALUE: two arguments
            secrets, text = _header(f"{named_header}: {arguments[value_index + 1]}")
            if secrets:
                secret_at(value_index + 1, secrets[0], text.partition(": ")[2])
            skip.update({value_index, value_index + 1})
            continue
        if argument in _SEPARATORS:
            end_command()
            piped = [i for i in words if program in ("echo", "printf")] if argument in ("|", "|&") else []
            program, starts, login, batch, words = "", True, False, False, []
            continue
        named = _program(argument)
        assigned = _ASSIGNMENT.fullmatch(argument)
        if assigned and _program(assigned[2]) in _PROGRAMS - _HTTPIE:  # ProxyCommand=sshpass -p X ssh j
            end_command()
            program, starts, login, batch, words = _program(assigned[2]), False, False, False, []
            begun = index
            continue
        if not argument.startswith("-") and not assigned and (
                starts or (named in _PROGRAMS and named not in _HTTPIE)):  # curl after sudo, timeout 5, env...
            end_command()
            program, starts, login, batch, words = named, named == "sshpass", False, False, []
            begun = index
            continue
        if not argument.startswith("-") and index not in skip:
            words.append(index)
        if program == "htpasswd":
            if argument.startswith("-") and not argument.startswith("--"):
                batch = batch or "b" in argument[1:]
            continue
        if program == "isql" and not argument.startswith("-"):
            continue  # isql DSN USER PASSWORD: positional words (end_command); a DSN here names a data source
        earlier = [arguments[i] for i in words if i < index]
        if argument.partition("=")[0] in _VALUE_OPTIONS and any(
                word in _SECRET_COMMANDS or set(name_words(word)) & {"secret", "secrets", "password", "parameter"}
                for word in earlier):  # gh secret set NAME --body VALUE; az keyvault secret set --value VALUE
            if "=" in argument and not _templated(argument):
                found.append(argument.partition("=")[2])
                shown[index] = argument.partition("=")[0] + "=" + MASK
            elif following is not None and "=" not in argument:
                secret_at(value_index)
                skip.add(value_index)
            continue
        if argument == "<<<" and following is not None and (
                program in ("chpasswd", "passwd") or _STDIN_STORES.get(program) in earlier
                or (program in _STDIN_PROGRAMS and any(arguments[i] in _STDIN_SECRET for i in range(begun, index)))):
            secret_at(value_index)  # gh auth login --with-token <<< TOKEN: a here-string is the program's input
            skip.add(value_index)
            continue
        if piped and (argument in _STDIN_SECRET and program in _STDIN_PROGRAMS or program in ("chpasswd",)):
            for position in piped:  # echo SECRET | docker login --password-stdin
                secret_at(position)
            piped = []
        if program in ("vault", "bao") and (earlier[:2] in (["kv", "put"], ["kv", "patch"]) or earlier[:1] == ["write"]) \
                and "=" in argument and not argument.startswith("-") and not _templated(argument):
            name, _, value = argument.partition("=")  # vault kv put PATH key=VALUE: every value is stored secret
            if value and not value.startswith("@"):
                found.append(value)
                shown[index] = f"{name}={MASK}"
            continue
        if program in ("vault", "bao") and earlier[:1] == ["token"] and len(earlier) == 1 \
                and argument in ("lookup", "revoke", "renew") and following is not None \
                and not following.startswith("-"):
            secret_at(value_index)  # vault token lookup TOKEN
            skip.add(value_index)
            continue
        if program == "redis-cli" and argument.upper() == "SET" and [w.upper() for w in earlier[-1:]] == ["CONFIG"] \
                and following is not None and value_index + 1 < len(arguments) \
                and (credential_name(following) or following.lower() in ("masterauth", "requirepass")):
            secret_at(value_index + 1)  # CONFIG SET masterauth PASSWORD
            skip.add(value_index + 1)
            continue
        if program == "redis-cli" and argument.upper() == "AUTH":
            rest = []
            for k in range(index + 1, min(index + 3, len(arguments))):
                if arguments[k] in _SEPARATORS or arguments[k].startswith("-"):
                    break
                rest.append(k)
            if rest:
                secret_at(rest[-1])  # AUTH [USER] PASSWORD
            continue
        if program == "httpie" and argument in ("-a", "--auth") and following is not None and ":" not in following \
                and any(arguments[k].lower() in ("bearer", "--auth-type=bearer", "-abearer")
                        for k in range(begun, index)):
            secret_at(value_index)  # http -A bearer -a TOKEN: the token whole
            skip.add(value_index)
            continue
        subcommand, flags = _SUBCOMMAND_PASSWORD_OPTIONS.get(program, ((), frozenset()))
        if argument in flags and following is not None and tuple(earlier[:len(subcommand)]) == subcommand \
                and not following.startswith("-") and (program != "kaggle" or any(
                    credential_name(word) for word in earlier[len(subcommand):])):
            secret_at(value_index)  # airflow users create -p X; kaggle config set -n key -v X
            skip.add(value_index)
            continue
        if program in ("xfreerdp", "wlfreerdp") and argument.lower().startswith("/p:"):
            secret_at(index, argument[3:], argument[:3] + MASK)
            continue
        if (_LOGIN.fullmatch(argument) or (program in _TOKEN_LOGIN and argument in _TOKEN_LOGIN_WORDS)) \
                and not (index and arguments[index - 1] in _USER_OPTIONS):
            login = True
            continue
        if login and program in _TOKEN_LOGIN and not argument.startswith("-") and "=" not in argument:
            if not _templated(argument):  # vault login TOKEN
                found.append(argument)
                shown[index] = MASK
            login = False
            continue
        if login and argument.startswith("-p") and not argument.startswith("--"):
            value = argument[2:] or (following if following is not None and not following.startswith("-") else "")
            if value and not _templated(value):
                found.append(value)
                shown[index if argument[2:] else index + 1] = f"-p{MASK}" if argument[2:] else MASK
            if not argument[2:] and value:
                skip.add(index + 1)
            login = False  # its one password: a later -p (ssh -p 2222) is another program's
            continue
        secrets, replacement, taken = _argument_secrets(program, argument, following, prose=prose)
        if program == "sshpass" and argument in _SSHPASS_VALUED and following is not None:
            taken = True  # -f FILE, -d FD, -P PROMPT: values of sshpass's own options, not the program it runs
        if " " in argument.strip():
            secrets = _scan(_words(argument), prose=_prose(arguments, index))[0] + secrets  # sh -c "..."
        found += secrets
        if replacement is not None:
            shown[value_index if taken else index] = replacement
        if taken:
            skip.add(value_index)
    end_command()
    return [value for value in dict.fromkeys(found) if value], shown


def _argument_secrets(program: str, argument: str, following: str | None, *,
                      prose: bool = False) -> tuple[list[str], str | None, bool]:
    """What one argument of ``program`` gives away: (secrets, how the argument holding them is shown or None,
    whether that argument is the next one, ``following``). See :func:`_scan` for the forms read; in ``prose``
    (the words of a text such as a prompt) the word after a credential's name counts only when it is no
    ordinary word ("password reset" stays, "password hunter2" does not)."""
    option, equals, attached = argument.partition("=")
    prefixed = argument.startswith("-") and bool(equals)  # --data={...}
    body = attached if prefixed else argument
    if body.lstrip().startswith(("{", "[")):  # a JSON body: its credential fields
        secrets, text = _json_fields(body)
        if secrets:
            return secrets, (f"{option}={text}" if prefixed else text), False
    nxt = following if following is not None and not following.startswith("--") else None
    pairs = _PAIR_OPTIONS | _PROGRAM_PAIR_OPTIONS.get(program, frozenset())
    if option in pairs and argument.startswith("-"):
        if equals:
            secrets, text = _pair(attached)
            return secrets, f"{option}={text}" if secrets else None, False
        if nxt is not None and (":" in nxt or option not in _PAIR_OPTIONS):
            secrets, text = _pair(nxt)
            return secrets, text if secrets else None, True
        return [], None, False
    if option in _COMMA_PAIR.get(program, ()) and nxt is not None:
        secrets, text = _user_pair(nxt, ",")  # lftp -u user,password
        return secrets, text if secrets else None, bool(secrets)
    if option in _USER_PAIR_OPTIONS or (argument[:2] in ("-u", "-U") and len(argument) > 2 and not equals):
        value = attached if equals else nxt if option in _USER_PAIR_OPTIONS else argument[2:]
        secrets, text = _user_pair(value or "")
        if secrets:
            shown = f"{option}={text}" if equals else text if option in _USER_PAIR_OPTIONS else argument[:2] + text
            return secrets, shown, option in _USER_PAIR_OPTIONS and not equals
    if option in ("-passin", "-passout", "-pass") and (attached if equals else following or "").startswith("pass:"):
        value = attached if equals else following or ""  # openssl: pass:PASSWORD (env:, file:, fd: name no secret)
        return [value[5:], value], (f"{option}=pass:{MASK}" if equals else f"pass:{MASK}"), not equals
    if program in _ARCHIVERS and argument.startswith("-hp") and len(argument) > 3 and not _templated(argument):
        return [argument[3:]], f"-hp{MASK}", False  # rar -hpPASSWORD: the headers' password too
    if argument.startswith("-p") and len(argument) > 2 and not argument.startswith("--") and (
            program in _MYSQL or program in _ARCHIVERS or program == "sshpass"
            or _ATTACHED_PASSWORD.fullmatch(argument[2:])):  # before the options: -pMyPassword is no --my-password
        return ([], None, False) if _templated(argument) else ([argument[2:]], f"-p{MASK}", False)
    for flag in _PASSWORD_OPTIONS.get(program, ()):  # zip -P PASS, ssh-keygen -N PHRASE, ldapsearch -wPASS
        if argument == flag and following is not None and not following.startswith("-") \
                and not (flag == "-c" and _ordinary_word(following)):
            return ([], None, True) if _templated(following) else ([following], MASK, True)
        if argument.startswith(flag) and len(argument) > 2 and program in _ATTACHED_OK and not _templated(argument):
            return [argument[2:]], flag + MASK, False
    slashed = _SLASH_OPTION.fullmatch(argument)
    if slashed and credential_name(slashed[1], option=True) and not _templated(argument):
        return [slashed[2]], f"/{slashed[1]}:{MASK}", False  # cmdkey /pass:X, wmic /password:X
    if _secret_option(argument) and argument not in _STDIN_SECRET:  # --with-token is a switch: input is the token
        read = _cookies if "cookie" in option.lower() else (lambda value: [value])
        if equals:
            return ([], None, False) if _templated(attached) else (read(attached), f"{option}={MASK}", False)
        if following is not None and not following.startswith("--"):
            return ([], None, True) if _templated(following) else (read(following), MASK, True)
        return [], None, False
    if argument in _HEADER_OPTIONS or (option == "--header" and equals):
        value = attached if equals else following
        if value is None:
            return [], None, False
        secrets, text = _header(value)
        return (secrets, (f"{option}={text}" if equals else text) if secrets else None, not equals)
    if program == "curl" and argument[:2] in ("-u", "-U", "-H", "-b") and len(argument) > 2:
        flag, value = argument[:2], argument[2:]
        secrets, text = _header(value) if flag == "-H" else _pair(value) if flag in ("-u", "-U") else \
            ((_cookies(value), MASK) if "=" in value and not _templated(value) else ([], value))
        return secrets, (flag + text) if secrets else None, False
    if program == "curl" and argument == "-b" and following is not None:
        return (_cookies(following), MASK, True) if "=" in following and not _templated(following) else ([], None, True)
    if program == "httpie" and not argument.startswith("-") and ":" in argument and "://" not in argument:
        secrets, text = _header(argument.replace(":", ": ", 1))
        if secrets:
            return secrets, text, False
    if program == "curl" and option in ("--cert", "-E", "--proxy-cert") and (attached if equals else following):
        value = attached if equals else following or ""  # curl --cert FILE:PASSWORD
        path, colon, password = value.rpartition(":")
        if colon and password and not re.fullmatch(r"[A-Za-z]", path) and "/" not in password \
                and "\\" not in password and not _templated(value):
            text = f"{path}:{MASK}"
            return [password], (f"{option}={text}" if equals else text), not equals
    if program == "sshpass" and argument == "-p" and following is not None and not following.startswith("-"):
        return ([], None, True) if _templated(following) else ([following], MASK, True)
    if _credential_word(argument) and following is not None and following not in _SEPARATORS \
            and following not in _EXPECT_COMMANDS and not following.startswith(("-", "=")) \
            and not (prose and _ordinary_word(following)):  # aws configure set aws_secret_access_key X; netrc
        return ([], None, True) if _templated(following) else ([following], MASK, True)
    if _AUTHORIZATION_END.fullmatch(argument.strip()) and following is not None and not following.startswith("-") \
            and following not in _SEPARATORS and not _templated(following) \
            and not following.lower().startswith(_SCHEMES):  # "Authorization:" "TOKEN", "Authorization: Bearer" "TOKEN"
        return [following], MASK, True
    assignment = _ASSIGNMENT.fullmatch(argument)
    if assignment and secret_variable(assignment[1]) and not _templated(assignment[2]):
        return [assignment[2]], f"{assignment[1]}={MASK}", False
    if _URL.fullmatch(argument) and not _templated(argument):  # its password, also where it appears without the URL
        credentials = url_credentials(argument)
        secrets = [credentials[1], quote(credentials[1], safe="")] if credentials is not None and credentials[1] \
            else []
        secrets += path_secrets(argument)  # a webhook's key, a bot's token: a key in the path
        secrets += [match[2] for match in _PATH_PARAMETER.finditer(urlsplit(argument).path)
                    if credential_name(match[1], option=True) or match[1].lower().endswith(("sessionid", "sid"))]
        secrets += [argument[start:end] for start, end in _slashed_passwords(argument)]
        if secrets:
            return secrets, redact(argument, secrets), False
    secrets, text = _text_secrets(argument)
    scripted = [secret for secret in _script_secrets(argument) if secret not in secrets]
    if scripted:  # a here-document's body, an expect script: their credentials wherever they stand
        return secrets + scripted, redact(text, scripted), False
    return (secrets, text, False) if secrets else ([], None, False)


def _script_secrets(text: str) -> list[str]:
    """The credentials of the scripts a shell line feeds a program (:mod:`evalkit.grid.scripts`): each
    here-document's body read as printed output is read (:func:`output_secrets`: ``password=X``, ``token: X``,
    SQL's ``IDENTIFIED BY 'X'``...) with ftp's ``user NAME PASSWORD`` for an ftp client, and what an expect
    script sends after a password prompt. A value with a placeholder (``{pw}``) stays: the unit's value is
    masked with its values.

    >>> _script_secrets("ftp -n h <<EOF\\nuser me Hunter2xQ9\\nEOF\\ncat > a.ini <<'X'\\n[db]\\npassword = Pw-ini9\\nX")
    ['Hunter2xQ9', 'Pw-ini9']
    >>> _script_secrets('expect -c \\'spawn ssh u@h; expect "*assword*"; send "Hunter2\\\\r"\\'')
    ['Hunter2']
    """
    found = []
    for opening, body in heredocs(text):
        found += ftp_secrets(opening, body) + output_secrets(body)
    found += expect_secrets(text)
    return [secret for secret in dict.fromkeys(found) if secret != MASK and not _templated(secret)]


def _prose(arguments: list[str], index: int) -> bool:
    """Whether the argument at ``index``, which has blanks, is a text (a prompt, a message) rather than a shell
    line: no ``-c`` before it (``sh -c "..."``) and no netrc line (``machine HOST login ... password ...``).

    >>> _prose(["sh", "-c", "a b"], 2), _prose(["t", "--prompt", "a b"], 2), _prose(["printf", "machine h login"], 1)
    (False, True, False)
    """
    return not ((index and arguments[index - 1] == "-c") or arguments[index].lstrip().startswith(("machine ",
                                                                                                  "default ")))


def _command_secrets(arguments: list[str]) -> list[str]:
    """The credentials written into a command's arguments (the forms :func:`_scan` reads).

    >>> _command_secrets(["tool", "--password", "hunter2", "--api-key=k3y0", "--seed", "1"])
    ['hunter2', 'k3y0']
    >>> _command_secrets(["sh", "-c", "sshpass -p ssh-pw-1 ssh -p 2222 host; curl -H 'Authorization: Bearer t0k'"])
    ['ssh-pw-1', 't0k']
    """
    return _scan(arguments)[0]


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


# Lines a program prints with a credential in them: "token: X" (YAML), "pass = X" (INI), 'export SECRET_KEY="X"',
# ":password => X" (Ruby), a table row "token    X" or a netrc line "password X" (a name and one value), and a
# private key's PEM block.
_PRINTED_ASSIGNMENT = re.compile(r"""^[ \t]*(?:export[ \t]+|set[ \t]+|-[ \t]+)?:?"""
                                 r"""(["']?)([A-Za-z_][\w.-]*)\1[ \t]*(?::=|=>|[:=])[ \t]*(["']?)([^"'\s#,]+)\3[ \t,]*(?:#.*)?$""", re.M)
_PRINTED_ROW = re.compile(r"^[ \t]*(?:setenv[ \t]+)?([A-Za-z_][\w.-]*)[ \t]+(\S+)[ \t]*$", re.M)
# A row of a table a database client prints: MySQL's "| password | X |", psql's " password | X".
_TABLE_ROW = re.compile(r"^[ \t]*\|?[ \t]*([A-Za-z_][\w.-]*)[ \t]*\|[ \t]*([^\s|]+)[ \t]*\|?[ \t]*$", re.M)
# A name of a few words before its value: "API Key: X", "Client secret = X".
_SPACED_NAME = re.compile(r"^[ \t]*([A-Za-z][A-Za-z0-9]*(?:[ \t][A-Za-z][A-Za-z0-9]*){1,3})[ \t]*[:=][ \t]*(\S+)[ \t]*$",
                          re.M)
# Named values in printed records: {"name": "DB_PASSWORD", "value": "X"} and "- name: X / value: Y" (Kubernetes
# env lists), <add key="ApiKey" value="X"/> (NuGet, .NET config), <password>X</password>, Set-Cookie headers.
_NAME_VALUE = (re.compile(r'"name"\s*:\s*"([^"]+)"\s*,\s*"value"\s*:\s*"([^"]*)"'),
               re.compile(r"""(?m)^[ \t]*-?[ \t]*name:[ \t]*["']?([\w.-]+)["']?[ \t]*\n[ \t]*value:[ \t]*["']?([^"'\s]+)"""),
               re.compile(r'\bkey\s*=\s*"([^"]+)"\s+value\s*=\s*"([^"]*)"'),
               re.compile(r"<([A-Za-z_][\w.-]*)>([^<\s]+)</\1>"),
               re.compile(r"""<[A-Za-z_][\w.-]*\s+(?:key|name)\s*=\s*["']([^"']+)["'][^>]*>([^<\s]+)</"""))
_SET_COOKIE = re.compile(r"(?im)^[ \t]*set-cookie:[ \t]*[^=;\s]+=([^;\s]+)")
# A shell's trace of the commands it runs (set -x, bash -x): "+ mysql -pX", "++ curl -u u:X".
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
    found = _json_fields(text)[0] + _text_secrets(text)[0]
    for pattern, name_group, value_group in ((_PRINTED_ASSIGNMENT, 2, 4), (_PRINTED_ROW, 1, 2), (_TABLE_ROW, 1, 2),
                                             (_SPACED_NAME, 1, 2)):
        for match in pattern.finditer(text):
            name, value = match[name_group], match[value_group]
            if (credential_name(name, option=True) or (name.isupper() and secret_variable(name))) and value != MASK \
                    and not _ordinary_word(value) and not value.isdigit() and value.lower() not in ("null", "none",
                                                                                                 "true", "false"):
                found.append(value)
    for pattern in _NAME_VALUE:
        for match in pattern.finditer(text):
            if (credential_name(match[1], option=True) or secret_variable(match[1])) and match[2] \
                    and match[2] != MASK and not _ordinary_word(match[2]):
                found.append(match[2])
    found += [match[1] for match in _SET_COOKIE.finditer(text)]
    for match in _TRACE.finditer(text):
        found += _scan(_words(match[1]))[0]
    for block in _PRIVATE_KEY_BLOCK.finditer(text):  # its body; an armour header ("Version: GnuPG") stays
        found += [line.strip() for line in block[1].splitlines() if len(line.strip()) >= 8 and ": " not in line]
    found += _record_secrets(text)
    found += [match[2] for match in _PRINTED_OPTION.finditer(text) if _secret_option(match[1])
              and not match[2].startswith("-") and not _ordinary_word(match[2]) and not _templated(match[2])]
    return [value for value in dict.fromkeys(found) if value and value != MASK]


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
