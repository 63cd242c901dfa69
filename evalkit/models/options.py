"""What a spec file may set for each backend: the keyword options of the backend's constructor.

An option's name, type and default are read from the constructor's signature (``int`` is read as a whole
number, ``float`` as a number, ``bool`` as true/false, ``str`` or ``Path`` as a text; ``| None`` allows
``null``); its range or choices from the backend's ``option_checks`` (the keywords of
:class:`evalkit.data.specfile.Fields`' readers: ``minimum``, ``maximum``, ``positive``, ``choices``), written
beside the constructor. So an option a backend gains is accepted, and checked, by every spec reader at
once, with no table of its own to keep in step. Not options: what a spec names in fields of its own
(``model``, ``base_url``, ``adapter``) and parameters no file can hold (a :class:`RetryPolicy` object).

>>> options = backend_options("openai")
>>> options["timeout_s"].reader, options["timeout_s"].checks, options["api_key_env"].optional
('number', {'positive': True}, True)
>>> "retry" in options, sorted(backend_options("llamacpp"))[:3]
(False, ['context', 'min_shared_prefix', 'share_prefixes'])
"""
from __future__ import annotations

import inspect
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from evalkit.models.hf import TransformersBackend
from evalkit.models.llamacpp import LlamaCppBackend
from evalkit.models.openai_compatible import OpenAICompatibleBackend

__all__ = ["BACKEND_CLASSES", "BackendOption", "backend_options", "read_option"]

# A spec's ``kind`` -> the backend class it builds (as :func:`evalkit.models.open_backend` does).
BACKEND_CLASSES: dict[str, type] = {"transformers": TransformersBackend, "llamacpp": LlamaCppBackend,
                                    "openai": OpenAICompatibleBackend}

_SPEC_FIELDS = ("model", "base_url", "adapter")  # set by a spec's own fields, never as options

# The checks of a backend that does not declare its own ``option_checks`` yet (their place is beside the
# constructor, as the local backends have them).
_CHECKS_KEPT_HERE: dict[type, dict[str, dict[str, Any]]] = {
    OpenAICompatibleBackend: {"max_concurrency": {"minimum": 1}, "max_retries": {"minimum": 0},
                              "backoff_s": {"minimum": 0.0}, "timeout_s": {"positive": True},
                              "deadline_s": {"positive": True}, "top_logprobs": {"minimum": 1, "maximum": 20}}}
_READERS = {bool: "boolean", int: "integer", float: "number", str: "text", Path: "text"}


@dataclass(frozen=True)
class BackendOption:
    """One keyword option of a backend: how a spec value is read (``integer``, ``number``, ``boolean`` or
    ``text``), whether ``null`` is allowed, the constructor's default and the checks the value gets."""

    name: str
    reader: str
    optional: bool
    default: Any
    checks: Mapping[str, Any] = field(default_factory=dict)


def _reader(annotation: Any) -> tuple[str | None, bool]:
    """The reader for an annotation and whether it allows None; no reader for a type a file cannot hold.

    >>> _reader(int), _reader(int | None), _reader(str | Path | None), _reader(list[str])
    (('integer', False), ('integer', True), ('text', True), (None, False))
    """
    union = typing.get_origin(annotation) in (typing.Union, types.UnionType)
    members = typing.get_args(annotation) if union else (annotation,)
    optional = type(None) in members
    readers = {_READERS.get(member) for member in members if member is not type(None)}
    if len(readers) != 1 or None in readers:
        return None, optional
    return readers.pop(), optional


def backend_options(backend: str | type) -> dict[str, BackendOption]:
    """The options of a backend (a kind of :data:`BACKEND_CLASSES` or a class), in its signature's order.

    Raises ``TypeError`` when the class's ``option_checks`` names a parameter that is not one of its options
    (a renamed option would otherwise lose its checks silently).
    """
    cls = BACKEND_CLASSES[backend] if isinstance(backend, str) else backend
    hints = typing.get_type_hints(cls.__init__)
    checks: Mapping[str, Mapping[str, Any]] = getattr(cls, "option_checks", None) or next(
        (kept for base, kept in _CHECKS_KEPT_HERE.items() if issubclass(cls, base)), {})
    options = {}
    for name, parameter in inspect.signature(cls.__init__).parameters.items():
        if parameter.kind is not parameter.KEYWORD_ONLY or name in _SPEC_FIELDS:
            continue
        reader, optional = _reader(hints.get(name))
        if reader is not None:
            options[name] = BackendOption(name, reader, optional, parameter.default, dict(checks.get(name, {})))
    stray = sorted(set(checks) - set(options))
    if stray:
        raise TypeError(f"{cls.__name__}.option_checks names {', '.join(stray)}, not keyword options of its "
                        f"constructor (its options: {', '.join(options)})")
    return options


def read_option(fields: Any, option: BackendOption) -> Any:
    """``option``'s value from ``fields`` (an :class:`evalkit.data.specfile.Fields` of the options mapping),
    checked for its type and its checks; errors name the source and the field."""
    if option.reader == "boolean":
        if option.optional and fields.raw.get(option.name) is None:
            return None
        return fields.boolean(option.name)
    return getattr(fields, option.reader)(option.name, optional=option.optional, **option.checks)
