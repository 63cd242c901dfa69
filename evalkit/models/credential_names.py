"""Names that say a value is a credential: the words of a parameter's, option's, header's or field's name
(:func:`name_words`) and whether they name a credential (:func:`credential_name`: ``api_key``, ``--accessToken``,
``-storepass``, ``X-Api-Key``, ``GITHUB_TOKEN``). The redaction masks a field so named wherever it is written
(:mod:`evalkit.models.named_fields`), and a grid reads its parameters, options and printed output by the same rule.
"""
from __future__ import annotations

import re

from evalkit.models.key_shapes import _compound_pass

__all__ = ["credential_name", "name_words"]

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
# TOKENS names credentials after one of these words (api_tokens, ACCESS_TOKENS); alone, or after "max", "special",
# "prompt", it counts a model's tokens.
_TOKEN_OWNERS = frozenset({"api", "access", "auth", "bearer", "refresh", "oauth", "session", "csrf", "id", "personal",
                           "deploy", "service", "bot", "secret", "client", "app", "admin", "github", "gitlab", "hf",
                           "npm", "pypi", "slack", "discord", "webhook", "jwt", "security", "sts"})
# TOKEN is a tokenizer's special token after one of these words (eos_token, pad_token: "<|endoftext|>", "[PAD]")
_TOKENIZER_ROLES = frozenset({"eos", "bos", "pad", "unk", "sep", "cls", "mask", "sos", "eot", "start", "end",
                              "special", "additional", "sentinel", "image", "audio", "video", "boi", "eoi", "im"})
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
    >>> [credential_name(n) for n in ("pat", "hf_token", "creds", "webhook", "session", "pass_rate", "cookie",
    ...     "api_tokens", "special_tokens", "eos_token")]
    [True, True, True, True, False, False, True, True, False, False]
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
    if last == "tokens" and len(words) > 1 and words[-2] in _TOKEN_OWNERS:
        return True
    if last == "token" and len(words) > 1 and words[-2] in _TOKENIZER_ROLES:
        return False
    if len(words) > 1 and last == "id" and words[-2] in ("secret", "session"):
        return option or words[-2] == "secret"
    if last in _CREDENTIAL_WORDS or (option and last in _OPTION_WORDS):
        return True
    if last == "key":
        return len(words) == 1 or words[-2] in _KEY_OWNERS
    return last.endswith(_COMPOUND_ENDINGS) or _compound_pass(last)
