"""Credentials in a field whose name says it holds one, whatever the syntax around it: YAML's ``GITHUB_TOKEN: V``,
code's ``os.environ['HF_TOKEN'] = 'V'`` and ``creds = '''V'''``, ``pwd: V``, a line such as ``API key: V``, a
command's arguments written as a list (``["--token", "V"]``) and Windows' ``setx API_TOKEN V``. The name decides
(:func:`evalkit.models.credential_names.credential_name`, or an environment variable's name that
:func:`evalkit.models.secret_variable` reads as a credential's), so a field named like ``max_tokens``,
``pass_rate`` or ``session`` stays readable; so does a value that is a number, a switch, one ordinary word or a
placeholder. :func:`evalkit.models.redact` applies :func:`mask_named_fields` after the shapes of
:mod:`evalkit.models.key_shapes`.
"""
from __future__ import annotations

import functools
import re

from evalkit.models.credential_names import credential_name, name_words
from evalkit.models.key_shapes import secret_variable
from evalkit.models.secret_forms import MASK, _ordinary_word

__all__ = ["mask_named_fields"]

# A name (bare or quoted, a subscript's closing "]" allowed: os.environ['X'] = ...), an assignment (=, :, :=, =>,
# <-) and a value, bare or in one to three quotes; the value read to a blank, a quote or a separator, however long.
# A YAML anchor or tag before the value is stepped over (token: &tok V, api_key: !!str V); an alias, or an anchor or
# a tag alone at its line's end (the value below it), is no value.
_NAMED_VALUE = re.compile(r"""(?<![\w.\-$@])(["']?)([A-Za-z_][\w.\-]{0,80})\1[ \t]*+(?:\][ \t]*+)?(?::=|=>|<-|[:=])[ \t]*+"""
                          r"""(?:(?:&[A-Za-z_][\w-]*+|!!?[A-Za-z]*+)[ \t]++){0,2}+"""
                          r"""(?![*&][A-Za-z_][A-Za-z_-]*+(?:\s|$)|!!?[A-Za-z]*+(?:\s|$))"""
                          r"""(["']{0,3})([^\s"'`,;&|}\]\\<>]{4,}+)""")
# A command's option and its value written as items of a list: "--token", "V"
_LISTED_OPTION = re.compile(r"""(["'])(--?[A-Za-z][\w-]{0,60})\1[ \t]*,[ \t]*(["'])([^"'\s]{4,}+)\3""")
# A line that names its value in a few words: "API key: V", "Client secret = V".
_SPACED_NAME = re.compile(r"(?m)^[ \t]*+([A-Za-z][A-Za-z0-9]*+(?:[ \t][A-Za-z][A-Za-z0-9]*+){1,3})[ \t]*+[:=][ \t]*+"
                          r"([^\s\"'`]{4,}+)[ \t]*$")
_SETX = re.compile(r"""(?i)\bsetx[ \t]+([A-Za-z_]\w{0,80})[ \t]+(["']?)([^\s"']{4,}+)\2""")
# Values that are no credential: a number, a date or a version, a switch, nothing, a placeholder.
_NOT_A_VALUE = re.compile(r"""(?i)[\d.:/%+\-]+|true|false|none|null|nil|undefined|yes|no|on|off|required|optional"""
                          r"""|\$\{?\w+\}?|\{\{?[\w.\s]*\}?\}|%\w+%|\*+|x+|\.\.\.""")


@functools.lru_cache(maxsize=4096)
def _names_a_credential(name: str) -> bool:
    """Whether a field's name names a credential: by :func:`credential_name` as a parameter's (``session`` and
    ``sid`` are not), or as an environment variable's name; a lone ``key`` is left to the shapes (``key: id``)."""
    if name_words(name) == ["key"]:
        return False
    return credential_name(name) or (name.isupper() and secret_variable(name))


def _is_secret_value(value: str) -> bool:
    return MASK not in value and not _ordinary_word(value) and not _NOT_A_VALUE.fullmatch(value)


def mask_named_fields(text: str) -> str:
    """``text`` with the value of each field named as a credential masked.

    >>> mask_named_fields("env:\\n  GITHUB_TOKEN: Vq7Zx2Lm9Kp4\\n  max_tokens: 64\\n  pass_rate: 0.9")
    'env:\\n  GITHUB_TOKEN: ***\\n  max_tokens: 64\\n  pass_rate: 0.9'
    >>> mask_named_fields("os.environ['HF_TOKEN'] = 'Vq7Zx2Lm9Kp4'; creds = '''c-99x'''; session: s-1234")
    "os.environ['HF_TOKEN'] = '***'; creds = '''***'''; session: s-1234"
    >>> mask_named_fields('run(["--token", "Vq7Zx2Lm9Kp4", "--port", "8080"]) and setx API_TOKEN Vq7Zx2Lm9Kp4')
    'run(["--token", "***", "--port", "8080"]) and setx API_TOKEN ***'
    >>> mask_named_fields("API key: Vq7Zx2Lm9Kp4\\nAPI version: 2024-06-01")
    'API key: ***\\nAPI version: 2024-06-01'
    >>> mask_named_fields("password: required, token: ${TOKEN}, auth: none, pwd: 2026-01-01")
    'password: required, token: ${TOKEN}, auth: none, pwd: 2026-01-01'
    """
    def field(match: re.Match) -> str:
        if not (_names_a_credential(match[2]) and _is_secret_value(match[4])):
            return match[0]
        return match[0][:match.start(4) - match.start()] + MASK

    def listed(match: re.Match) -> str:
        if not (credential_name(match[2].lstrip("-"), option=True) and _is_secret_value(match[4])):
            return match[0]
        return match[0][:match.start(4) - match.start()] + MASK + match[3]

    def spaced(match: re.Match) -> str:
        if not (credential_name(match[1]) and _is_secret_value(match[2])):
            return match[0]
        return match[0][:match.start(2) - match.start()] + MASK + match[0][match.end(2) - match.start():]

    def setx(match: re.Match) -> str:
        if not (secret_variable(match[1]) and _is_secret_value(match[3])):
            return match[0]
        return match[0][:match.start(3) - match.start()] + MASK + match[2]

    if ":" in text or "=" in text or "<-" in text:
        text = _NAMED_VALUE.sub(field, text)
        text = _SPACED_NAME.sub(spaced, text)
    if "," in text:
        text = _LISTED_OPTION.sub(listed, text)
    return _SETX.sub(setx, text) if "setx" in text.lower() else text
