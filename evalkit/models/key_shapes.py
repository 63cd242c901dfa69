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


def path_secrets(url: str) -> list[str]:
    """The segments of ``url``'s path shaped like a key — a key some services put in the path (a Telegram bot's
    ``/bot<id>:<token>/``, a webhook's last segment, ``/key/<hex>/``): a well-known key prefix (``sk-``,
    ``hf_``, ``ghp_``, ``xoxb-``...), or at least 20 characters mixing upper case, lower case and digits (two
    of each, no run of seven lower-case letters: ``Llama-3-8B-Instruct`` is a model's name), or at least 32
    characters a quarter of them digits (a hex key). Model names, versions and routes stay.

    >>> path_secrets("https://h/bot123456:AAHdqTcvCH1vGWJxfSeofSAs0K5PALD/v1")
    ['bot123456:AAHdqTcvCH1vGWJxfSeofSAs0K5PALD']
    >>> path_secrets("https://h/services/T0AAA/B0BBB/Xq7LmW2pZk9RtY4vN8cJ3hAa/v1")
    ['Xq7LmW2pZk9RtY4vN8cJ3hAa']
    >>> path_secrets("https://h/openai/deployments/Meta-Llama-3.1-8B-Instruct/v1"), path_secrets("http://h:8000/v1")
    ([], [])
    """
    try:
        segments = unquote(urlsplit(url).path).split("/")
    except ValueError:
        return []
    found = []
    for segment in segments:
        if not _TOKEN_CHARS.fullmatch(segment):
            continue
        digits = sum(c.isdigit() for c in segment)
        upper, lower = sum(c.isupper() for c in segment), sum(c.islower() for c in segment)
        if (_KEY_PREFIX.fullmatch(segment)
                or (len(segment) >= 20 and min(digits, upper, lower) >= 2 and not re.search(r"[a-z]{7}", segment))
                or (len(segment) >= 32 and digits * 4 >= len(segment))):
            found.append(segment)
    return found
