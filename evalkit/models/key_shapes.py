"""What a credential looks like by itself, wherever it stands: the known shapes of keys and tokens
(:data:`KEY_SHAPES`, which :func:`evalkit.models.redact` masks in any text) and the keys some services put in a
URL's path or path parameters (:func:`path_secrets`, :func:`path_parameters`), which a backend's name, a card
and a grid's records mask as secrets of their own.
"""
from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

__all__ = ["KEY_SHAPES", "path_secrets", "path_parameters"]

KEY_SHAPES = [
    # the token after Bearer/Basic, unless it is one ordinary word ("a basic reply", "the bearer of news")
    (re.compile(r"\b((?i:bearer|basic))\s+(?!-)(?!(?:[A-Z]?[a-z]{1,12}|[A-Z]{1,12})(?![^\s\"',;]))[^\s\"',;]+"),
     r"\1 ***"),
    (re.compile(r"(?i)((?:api[_-]?key|access[_-]?token|auth[_-]?token|refresh[_-]?token|client[_-]?secret|token"
                r"|secret|password|passwd|pwd|sig|signature|credential|key)\s*=>?\s*[\"']?)[^&\s\"',;]+"), r"\1***"),
    (re.compile(r"(?i)(\"?(?:api[_-]?key|authorization|x-api-key|access[_-]?token|refresh[_-]?token|secret"
                r"|password)\"?\s*:\s*\"?)(?!(?:bearer|basic)\s)[^\"\s,}]+"), r"\1***"),
    (re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"), "sk-***"),
    (re.compile(r"\b(hf|ghp|gho|ghu|ghs|ghr|github_pat|glpat)_[A-Za-z0-9_\-]{16,}"), r"\1_***"),
    # GitLab (glpat-), Groq, Replicate, xAI, Perplexity, LangSmith, NVIDIA, Docker Hub, Notion, Stripe webhooks,
    # Databricks, HubSpot, SendGrid keys; Atlassian API tokens, Figma, Netlify, Linear, Square tokens
    (re.compile(r"\b(glpat-|gsk_|r8_|xai-|pplx-|lsv2_(?:pt|sk)_|nvapi-|dckr_pat_|ntn_|whsec_|pat-na1-|pat-eu1-"
                r"|ATATT|figd_|nfp_|lin_api_|sq0atp-|sq0csp-)[A-Za-z0-9_\-=]{12,}"), r"\1***"),
    (re.compile(r"\bdapi[0-9A-Za-z]{24,}(?:-\d+)?\b"), "dapi***"),
    (re.compile(r"\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}"), "SG.***"),
    (re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{10,}"), "xox-***"),
    # AWS access key ids: long-term (AKIA) and temporary (ASIA, from STS)
    (re.compile(r"\b(AKIA|ASIA)[0-9A-Z]{16}\b"), r"\1***"),
    (re.compile(r"\bAIza[0-9A-Za-z_\-]{30,}"), "AIza***"),
    (re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"), "jwt-***"),
    # Google OAuth access tokens, HashiCorp Vault tokens, npm, PyPI, DigitalOcean, Grafana, Stripe live/test keys
    (re.compile(r"\b(ya29|hvs|hvb|hvr)\.[A-Za-z0-9_\-]{16,}"), r"\1.***"),
    (re.compile(r"\b(npm|dop_v1|glsa|sk_live|sk_test|rk_live|rk_test|shpat)_[A-Za-z0-9_\-]{16,}"), r"\1_***"),
    (re.compile(r"\bpypi-[A-Za-z0-9_\-]{16,}"), "pypi-***"),
]


def path_parameters(url: str) -> list[str]:
    """The values of a URL path's ``;name=value`` parameters (``/v1;jsessionid=ABC``: a session id in the path).

    >>> path_parameters("https://h/v1;jsessionid=A1b2C3d4;v=2/chat")
    ['A1b2C3d4', '2']
    """
    try:
        segments = urlsplit(url).path.split("/")
    except ValueError:
        return []
    return [unquote(piece.partition("=")[2]) for segment in segments for piece in segment.split(";")[1:]
            if "=" in piece]


# Prefixes of well-known key formats (OpenAI, Hugging Face, GitHub, GitLab, Slack, AWS, Google, Telegram bots).
_KEY_PREFIX = re.compile(r"(?:sk-|sk_|rk_|pk_|hf_|ghp_|gho_|ghs_|ghu_|github_pat_|glpat-|xox[abposr]-|AKIA|AIza|"
                         r"gsk_|r8_|xai-|pplx-|lsv2_pt_|nvapi-|dckr_pat_|ntn_|whsec_|ASIA|ATATT|figd_|nfp_|lin_api_|"
                         r"sq0atp-|sq0csp-|dapi|"
                         r"bot\d+:)[\w:-]{8,}")
_TOKEN_CHARS = re.compile(r"[\w:~+=-]+")


# A path segment that names what the next one is (/token/<value>/, /x-api-key/<value>, /accesskey/<value>).
_NAMING_SEGMENT = re.compile(r"(?i).*(?:key|keys|token|tokens|secret|secrets|password|passwd|pwd|sig|signature|auth"
                             r"|credential|credentials)")


def _decoded(path: str) -> str:
    """``path`` percent-decoded until it no longer changes (at most three times: ``%253F`` is ``?``)."""
    for _ in range(3):
        decoded = unquote(path)
        if decoded == path:
            break
        path = decoded
    return path


def _key_like(segment: str) -> bool:
    """Whether one path segment reads as a key by its letters alone: a well-known prefix; 20+ characters mixing
    cases and digits with no seven-letter lower-case run; 12+ letters and digits alone, two of each kind, with no
    run of four letters of one case (``Zq8XwV3kLm9P``); or 32+ characters a quarter digits (hex)."""
    digits = sum(c.isdigit() for c in segment)
    upper, lower = sum(c.isupper() for c in segment), sum(c.islower() for c in segment)
    return bool(_KEY_PREFIX.fullmatch(segment)
                or (len(segment) >= 20 and min(digits, upper, lower) >= 2 and not re.search(r"[a-z]{7}", segment))
                or (len(segment) >= 12 and segment.isalnum() and min(digits, upper, lower) >= 2
                    and not re.search(r"[a-z]{4}|[A-Z]{4}", segment))
                or (len(segment) >= 32 and digits * 4 >= len(segment)))


def path_secrets(url: str) -> list[str]:
    """The segments of ``url``'s path that hold a key — a key some services put in the path (a Telegram bot's
    ``/bot<id>:<token>/``, a Slack webhook's ``/T…/B…/<secret>``, ``/key/<value>/``): a segment shaped like a
    key (:func:`_key_like`), the segment after one that names a credential (``/token/<value>``; a word such as
    ``refresh`` stays), the token of a ``Bearer <token>`` segment, and a credential's value in a segment that
    holds an encoded query (``/v1%3Fapi_key%3D<value>``). Model names, versions and routes stay.

    >>> path_secrets("https://h/bot123456:AAHdqTcvCH1vGWJxfSeofSAs0K5PALD/v1")
    ['bot123456:AAHdqTcvCH1vGWJxfSeofSAs0K5PALD']
    >>> path_secrets("https://h/services/T0AAA/B0BBB/Xq7LmW2pZk9RtY4vN8cJ3hAa/v1")
    ['Xq7LmW2pZk9RtY4vN8cJ3hAa']
    >>> path_secrets("https://h/hooks/T0ABCDEF/B0ABCDEF/x9y8z7w6v5u4t3"), path_secrets("https://h/v1/Zq8XwV3kLm9P")
    (['x9y8z7w6v5u4t3'], ['Zq8XwV3kLm9P'])
    >>> path_secrets("https://h/v1/token/abcdefgh12"), path_secrets("https://h/v1/token/refresh")
    (['abcdefgh12'], [])
    >>> path_secrets("https://h/v1/Bearer%20HDRsecret12345"), path_secrets("https://h/v1%3Fapi_key%3DENCk3y12")
    (['HDRsecret12345'], ['ENCk3y12'])
    >>> path_secrets("https://h/v1/x-api-key/tok.en.1234"), path_secrets("https://h/v1%253Fcode%253DENCk3y12%2523fr4g")
    (['tok.en.1234'], ['ENCk3y12', 'fr4g'])
    >>> path_secrets("https://h/openai/deployments/Meta-Llama-3.1-8B-Instruct/v1"), path_secrets("http://h:8000/v1")
    ([], [])
    >>> path_secrets("https://h/models/Qwen2-7B-Instruct/v1/chat/completions")
    []
    """
    try:
        segments = _decoded(urlsplit(url).path).split("/")
    except ValueError:
        return []
    found = []
    for index, segment in enumerate(segments):
        after = segments[index - 1] if index else ""
        bearer = re.fullmatch(r"(?i)bearer[\s+]+(\S{6,})", segment)
        if bearer:
            found.append(bearer[1])
        elif "?" in segment or "#" in segment:  # an encoded query or fragment: every value, as a real one's
            head, _, rest = segment.partition("?") if "?" in segment else segment.partition("#")
            found += [value for piece in re.split(r"[&;#]", rest)
                      for value in [piece.partition("=")[2] or piece] if len(value) >= 4]
        elif "=" in segment:  # path parameters (/v1;jsessionid=X) are read by path_parameters
            found += [value for name, value in re.findall(r"([\w-]+)=([^&;\s]{4,})", segment)
                      if _NAMING_SEGMENT.fullmatch(name)]
        elif (_NAMING_SEGMENT.fullmatch(after) and len(segment) >= 6
              and not (segment.isalpha() and segment.islower())):
            found.append(segment)  # /token/<value>: a lower-case word (refresh, revoke) is a route
        elif not _TOKEN_CHARS.fullmatch(segment):
            continue
        elif _key_like(segment):
            found.append(segment)
        elif (index >= 2 and re.fullmatch(r"T[A-Z0-9]{6,}", segments[index - 2])
              and re.fullmatch(r"B[A-Z0-9]{6,}", after) and len(segment) >= 12):
            found.append(segment)  # a Slack webhook: /T<team>/B<bot>/<secret>
    return found
