"""Keys written in a URL's path: ``;name=value`` parameters (a session id) and a segment that is a key by its
shape or by the segment before it (``/token/<value>``, ``/bot<id>:<token>/``), which :func:`evalkit.models.redact`
masks.
"""
from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

__all__ = ["path_parameters", "path_secrets"]


def path_parameters(url: str) -> list[str]:
    """The values of a URL path's ``;name=value`` parameters (``/v1;jsessionid=ABC``: a session id in the path).

    >>> path_parameters("https://h/v1;jsessionid=A1b2C3d4;v=2/chat")
    ['A1b2C3d4', '2']
    """
    try:
        segments = urlsplit(url).path.split("/")
    except ValueError:
        return []
    return [unquote(piece.partition("=")[2]) if "=" in piece else piece
            for segment in segments for piece in segment.split(";")[1:]
            if "=" in piece or _key_like(piece)]  # a bare ;<token> shaped like a key too


# Prefixes of well-known key formats (OpenAI, Hugging Face, GitHub, GitLab, Slack, AWS, Google, Telegram bots).
_KEY_PREFIX = re.compile(r"(?:sk-|sk_|rk_|pk_|hf_|ghp_|gho_|ghs_|ghu_|github_pat_|glpat-|xox[abposr]-|AKIA|AIza|"
                         r"gsk_|r8_|xai-|pplx-|lsv2_pt_|nvapi-|dckr_pat_|ntn_|whsec_|ASIA|ATATT|figd_|nfp_|lin_api_|"
                         r"sq0atp-|sq0csp-|dapi|tvly-|pcsk_|xapp-|GOCSPX-|xoxe-|glrt-|PMAK-|"
                         r"bot\d+:)[\w:-]{8,}")
_TOKEN_CHARS = re.compile(r"[\w:~+=-]+")


# A path segment that names what the next one is (/token/<value>/, /x-api-key/<value>, /accesskey/<value>).
_NAMING_SEGMENT = re.compile(r"(?i).*(?:key|keys|token|tokens|secret|secrets|password|passwd|pwd|sig|signature|auth"
                             r"|credential|credentials|bearer|authorization|session|sessions|webhook|webhooks)")
# ... or names it and holds it after a ":", "-", "_" or "=" (/key:<value>/, /apikey-<value>/, /auth_<value>/).
_NAMED_IN_SEGMENT = re.compile(r"(?i)(?:api[_-]?)?(?:key|token|tok|secret|password|passwd|pwd|sig|signature|auth"
                               r"|credential|bearer|session)[:\-_=](.{6,})")


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
    run of four letters of one case (``Zq8XwV3kLm9P``); 16+ letters and digits in one case, four of each kind,
    with no run of five letters (``zq8xwv3klm9pqr7t``: a word-free token, not ``mistral7binstruct``); or 32+
    characters a quarter digits (hex)."""
    digits = sum(c.isdigit() for c in segment)
    upper, lower = sum(c.isupper() for c in segment), sum(c.islower() for c in segment)
    return bool(_KEY_PREFIX.fullmatch(segment)
                or (len(segment) >= 20 and min(digits, upper, lower) >= 2 and not re.search(r"[a-z]{7}", segment))
                or (len(segment) >= 12 and segment.isalnum() and min(digits, upper, lower) >= 2
                    and not re.search(r"[a-z]{4}|[A-Z]{4}", segment))
                or (len(segment) >= 16 and segment.isalnum() and min(digits, upper + lower) >= 4
                    and not (upper and lower) and not re.search(r"[a-zA-Z]{5}", segment))
                or (len(segment) >= 32 and digits * 4 >= len(segment)))


def path_secrets(url: str) -> list[str]:
    """The segments of ``url``'s path that hold a key — a key some services put in the path (a Telegram bot's
    ``/bot<id>:<token>/``, a Slack webhook's ``/T…/B…/<secret>``, ``/key/<value>/``): a segment shaped like a
    key (:func:`_key_like`), the segment after one that names a credential (``/token/<value>``, ``/bearer/``,
    ``/authorization/``, ``/session/``, ``/webhook/``; a word such as ``refresh`` stays), the value of a segment
    that names it before a ``:`` or ``-`` (``/key:<value>``, ``/apikey-<value>``), a webhook's token after its id
    (``/webhooks/<id>/<token>``, whatever letters it holds; ``/hooks/catch/<id>/<token>``), the token of a
    ``Bearer <token>`` segment, and a credential's value in a segment that
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
    >>> path_secrets("https://h/v1/%Zx9Qw8Er7Ty6Ui5"), path_secrets("https://h/v1/llama-3.1@q4!fast")
    (['Zx9Qw8Er7Ty6Ui5'], [])
    >>> path_secrets("https://h/models/Qwen2-7B-Instruct/v1/chat/completions")
    []
    >>> path_secrets("https://h/zq8xwv3klm9pqr7tyu2b1234/v1"), path_secrets("https://h/mistral7binstructv02/v1")
    (['zq8xwv3klm9pqr7tyu2b1234'], [])
    >>> path_secrets("https://discord.com/api/webhooks/1234567890/Ab3_hellothereXyZ9-QwErTy12_abcdefgUVW45xyz")
    ['1234567890', 'Ab3_hellothereXyZ9-QwErTy12_abcdefgUVW45xyz']
    >>> path_secrets("https://hooks.zapier.com/hooks/catch/1234567/abcde12/"), path_secrets("https://h/key:zq8xwv9/v1")
    (['abcde12'], ['zq8xwv9'])
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
        elif (index >= 2 and after.isdigit() and len(segment) >= 4
              and (re.fullmatch(r"(?i)webhooks?", segments[index - 2])
                   or (index >= 3 and segments[index - 3].lower() == "hooks" and segments[index - 2].lower() == "catch"))):
            found.append(segment)  # a webhook's token after its id: Discord's /webhooks/<id>/<token>, Zapier's catch hook
        elif (named := _NAMED_IN_SEGMENT.fullmatch(segment)) and not re.fullmatch(r"[a-z]+(?:[-_][a-z]+)*", named[1]):
            found.append(named[1])  # /key:<value>, /apikey-<value>: a lower-case word (token-refresh) is a route
        elif not _TOKEN_CHARS.fullmatch(segment):  # a key behind a stray "%" or "!" is read on its own
            found += [run for run in _TOKEN_CHARS.findall(segment) if _key_like(run)]
        elif _key_like(segment):
            found.append(segment)
        elif (index >= 2 and re.fullmatch(r"T[A-Z0-9]{6,}", segments[index - 2])
              and re.fullmatch(r"B[A-Z0-9]{6,}", after) and len(segment) >= 12):
            found.append(segment)  # a Slack webhook: /T<team>/B<bot>/<secret>
    return found


# The words of an environment variable's name (split on "_", "-" and changes of case) that mark its value as a
# credential wherever they stand; PWD only as the last word (PWD and OLDPWD are folders).
