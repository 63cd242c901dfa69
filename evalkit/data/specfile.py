"""Reading the kit's YAML files (grid specs, user-proxy jobs) with typed fields and ranges.

Every failure names the file and the field (and the line, for YAML that does not parse), so a user can fix
a file without reading a traceback. Values are never coerced: ``"false"`` is not a boolean and ``"3"`` is
not a number — a quoted value is almost always a mistake worth pointing out.

>>> fields = Fields({"seeds": [0, 1], "guided": True}, "job.yml")
>>> fields.integer_list("seeds", [0], minimum=0), fields.boolean("guided", False)
([0, 1], True)
>>> Fields({"guided": "false"}, "job.yml").boolean("guided", True)
Traceback (most recent call last):
...
evalkit.data.specfile.SpecError: job.yml, field 'guided': expected true or false, got the text 'false' (write it without quotes)
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Sequence

__all__ = ["SpecError", "read_yaml", "Fields", "describe"]

_MISSING = object()


class SpecError(ValueError):
    """A spec file that cannot run; the message names the file and the field (or line). The message quotes
    the offending value, so it is masked (:func:`evalkit.models.redact`: URL user-info, query values, key
    shapes) before it can be printed, stored or shown: a URL pasted into the wrong field must not leak.

    >>> str(SpecError("job.yml, field 'seed': got the text 'http://me:pw123456@h/v1?key=abcdef'"))
    "job.yml, field 'seed': got the text 'http://***@h/v1?key=***'"
    """

    def __init__(self, message: str = "", *args: Any):
        from evalkit.models.redaction import redact

        super().__init__(redact(str(message)), *args)


class _Lined(dict):
    """A mapping read from YAML that remembers the line of each of its keys (``lines``), for messages."""

    lines: dict[Any, int]


def _unique_keys_loader(lines: bool = False):
    """PyYAML's safe loader, refusing a key given twice in one mapping (it would keep the last silently);
    with ``lines``, mappings are read as :class:`_Lined` dicts that know the line of each key."""
    import yaml

    class UniqueKeyLoader(yaml.SafeLoader):
        def construct_mapping(self, node, deep=False):
            seen = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"key {key!r} is given twice", key_node.start_mark)
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

    if lines:
        def construct_lined_map(loader, node):
            data = _Lined()
            data.lines = {}
            yield data
            data.update(loader.construct_mapping(node))
            for key_node, _ in node.value:
                key = loader.construct_object(key_node)
                data.lines.setdefault(key, key_node.start_mark.line + 1)

        class LinedLoader(UniqueKeyLoader):
            pass

        LinedLoader.add_constructor("tag:yaml.org,2002:map", construct_lined_map)
        return LinedLoader
    return UniqueKeyLoader


def read_yaml(path: str | Path, error: type[SpecError] = SpecError, *, lines: bool = False) -> Any:
    """The parsed YAML of ``path``; unreadable text or bad YAML raise ``error`` naming the file and line.

    With ``lines``, every mapping remembers the line of each key, and :class:`Fields` built on it put
    ``line N`` in their messages.

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "p.yml")
    >>> _ = open(path, "w").write("defaults:\\n  seed: x\\n")
    >>> read = Fields(read_yaml(path, lines=True), "p.yml")
    >>> read.nested("defaults", read.mapping("defaults")).integer("seed")
    Traceback (most recent call last):
    ...
    evalkit.data.specfile.SpecError: p.yml, line 2, field 'defaults.seed': expected a whole number, got the text 'x'
    """
    import yaml

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as failure:
        raise error(f"{path}: not UTF-8 text (undecodable byte at offset {failure.start})") from None
    try:
        return yaml.load(text, Loader=_unique_keys_loader(lines))
    except yaml.YAMLError as failure:
        mark = getattr(failure, "problem_mark", None)
        where = f", line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(failure, "problem", None) or str(failure).splitlines()[0]
        raise error(f"{path}{where}: not valid YAML ({problem})") from None


def describe(value: Any) -> str:
    """A value as a message shows it: ``the text '3'``, ``int 3``, ``nothing (null)``."""
    if isinstance(value, str):
        return f"the text {value!r}"
    if value is None:
        return "nothing (null)"
    return f"{type(value).__name__} {value!r}"[:120]


class Fields:
    """Typed access to one mapping of a spec file; every failure names ``source`` and the field.

    ``prefix`` is prepended to field names in messages (``proxies.human-like.``); ``known`` lists the
    fields the mapping may hold (others are refused by name). Read with ``read_yaml(..., lines=True)``,
    messages also name the line of the field (``line`` is the line of the mapping itself, if known).
    """

    def __init__(self, raw: Any, source: str, *, prefix: str = "", known: Iterable[str] | None = None,
                 error: type[SpecError] = SpecError, line: int | None = None):
        self.source, self.prefix, self.error, self.line = source, prefix, error, line
        at = f", line {line}" if line is not None else ""
        if not isinstance(raw, dict):
            where = f", field '{prefix.rstrip('.')}'" if prefix else ""
            raise error(f"{source}{at}{where}: expected a mapping of fields, got {describe(raw)}")
        self.raw = raw
        if known is not None:
            unknown = sorted(set(raw) - set(known), key=str)
            if unknown:
                first = self._line(unknown[0])
                at = f", line {first}" if first is not None else at
                where = f", field '{prefix.rstrip('.')}'" if prefix else ""
                raise error(f"{source}{at}{where}: unknown field(s) {', '.join(map(str, unknown))}; "
                            f"known: {', '.join(sorted(map(str, known)))}")

    def _line(self, name: Any) -> int | None:
        lines = getattr(self.raw, "lines", None) or {}
        key = name.split("[", 1)[0] if isinstance(name, str) and name not in lines else name
        return lines.get(key)

    def fail(self, name: str, why: str):
        line = self._line(name)
        at = f", line {line}" if line is not None else ""
        raise self.error(f"{self.source}{at}, field '{self.prefix}{name}': {why}")

    def value(self, name: str, default: Any = _MISSING) -> Any:
        if name in self.raw:
            return self.raw[name]
        if default is _MISSING:
            self.fail(name, "is required")
        return default

    def _range(self, name: str, number: float, minimum: float | None, maximum: float | None) -> None:
        if minimum is not None and number < minimum:
            self.fail(name, f"must be at least {minimum}, got {number}")
        if maximum is not None and number > maximum:
            self.fail(name, f"must be at most {maximum}, got {number}")

    def integer(self, name: str, default: Any = _MISSING, *, minimum: int | None = None,
                maximum: int | None = None, optional: bool = False) -> int | None:
        """A whole number (``true`` and ``3.0`` are refused) within the range; None allowed when ``optional``."""
        value = self.value(name, default)
        if value is None and optional:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(name, f"expected a whole number, got {describe(value)}")
        self._range(name, value, minimum, maximum)
        return value

    def number(self, name: str, default: Any = _MISSING, *, minimum: float | None = None,
               maximum: float | None = None, optional: bool = False, positive: bool = False) -> float | None:
        """A finite number within the range (``positive``: strictly above 0)."""
        value = self.value(name, default)
        if value is None and optional:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or value in (
                float("inf"), float("-inf")):
            self.fail(name, f"expected a number, got {describe(value)}")
        if positive and value <= 0:
            self.fail(name, f"must be above 0, got {value}")
        self._range(name, value, minimum, maximum)
        return float(value)

    def boolean(self, name: str, default: Any = _MISSING) -> bool:
        value = self.value(name, default)
        if not isinstance(value, bool):
            hint = " (write it without quotes)" if isinstance(value, str) and value.lower() in (
                "true", "false", "yes", "no", "on", "off") else ""
            self.fail(name, f"expected true or false, got {describe(value)}{hint}")
        return value

    def text(self, name: str, default: Any = _MISSING, *, choices: Sequence[str] | None = None,
             optional: bool = False) -> str | None:
        """A non-empty string (one of ``choices`` when given); None allowed when ``optional``."""
        value = self.value(name, default)
        if value is None and optional:
            return None
        if not isinstance(value, str) or not value.strip():
            self.fail(name, f"expected a non-empty text, got {describe(value)}")
        if choices is not None and value not in choices:
            self.fail(name, f"{value!r} is not one of {', '.join(choices)}")
        return value

    def values(self, name: str, default: Any = _MISSING) -> list[Any]:
        """A non-empty list of values of any type."""
        value = self.value(name, default)
        if not isinstance(value, list):
            self.fail(name, f"expected a list, e.g. [0, 1], got {describe(value)}")
        if not value:
            self.fail(name, "expected at least one value, got an empty list")
        return value

    def text_list(self, name: str, default: Any = _MISSING, *, choices: Sequence[str] | None = None) -> list[str]:
        values = self.values(name, default)
        for index, value in enumerate(values):
            if not isinstance(value, str) or not value.strip():
                self.fail(f"{name}[{index}]", f"expected a non-empty text, got {describe(value)}")
            if choices is not None and value not in choices:
                self.fail(f"{name}[{index}]", f"{value!r} is not one of {', '.join(choices)}")
        return list(values)

    def integer_list(self, name: str, default: Any = _MISSING, *, minimum: int | None = None) -> list[int]:
        values = self.values(name, default)
        for index, value in enumerate(values):
            if isinstance(value, bool) or not isinstance(value, int):
                self.fail(f"{name}[{index}]", f"expected a whole number, got {describe(value)}")
            self._range(f"{name}[{index}]", value, minimum, None)
        return list(values)

    def mapping(self, name: str, default: Any = _MISSING, *, nonempty: bool = False) -> dict[str, Any]:
        value = self.value(name, default)
        if value is None and not nonempty:
            return {}
        if not isinstance(value, dict):
            self.fail(name, f"expected a mapping, got {describe(value)}")
        if nonempty and not value:
            self.fail(name, "expected at least one entry, got an empty mapping")
        return value

    def nested(self, name: str, raw: Any, *, known: Iterable[str] | None = None) -> "Fields":
        """Fields of a mapping inside this one (messages name it ``<prefix><name>.<field>``)."""
        return Fields(raw, self.source, prefix=f"{self.prefix}{name}.", known=known, error=self.error,
                      line=self._line(name))
