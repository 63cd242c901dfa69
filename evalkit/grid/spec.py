"""The grid file: its fields and checks, the placeholder grammar of command arguments, and the units a grid
expands into."""
from __future__ import annotations

import hashlib
import itertools
import json
import re
import os
import shutil
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from evalkit.models import environment_secrets, redact
from evalkit.data.specfile import Fields, SpecError, read_yaml
from evalkit.grid.command_secrets import _command_secrets
from evalkit.grid.masking import _mask_url, _public, _public_command, _secrets, _shown


class GridSpecError(SpecError):
    """A grid file that cannot run; the message names the file and field."""


@dataclass(frozen=True)
class GridUnit:
    """One combination of the grid: what it runs and with which parameters (the real values, for the
    worker; what is written is :meth:`public`). ``workdir`` is where a command runs: the grid file's folder."""

    kind: str
    target: str
    params: dict[str, Any]
    base_params: str = "smoke"
    timeout_s: float | None = None
    workdir: str | None = None

    @property
    def unit_id(self) -> str:
        """A readable, stable id: the values safe to show, then a hash of the whole unit.

        A value is shown only where the record's parameters show it unchanged: masking with the unit's
        credentials (its own, its command's and the environment's, :attr:`secrets`) — whole or a piece of one
        as long as redaction masks — leaves it as it is. A value that holds one is left out of the id, as a
        URL or a secret-named parameter is; the hash of the real values keeps such units apart, and a unit
        whose values hold no credential keeps the id it always had (so a rerun finds it finished).

        >>> GridUnit("command", '["echo"]', {"seed": 1, "judge": "likert"}).unit_id
        'judge=likert,seed=1-4cfd555a'
        >>> GridUnit("command", '["echo"]', {"seed": 1, "base_url": "http://u:pw@host/v1"}).unit_id
        'seed=1-afe8b488'
        """
        secrets = self.secrets  # a value passed as a credential (--password {pw}) is not shown either
        shown = [f"{k}={_short(v)}" for k, v in sorted(self.params.items())
                 if _shown(k, v, secrets) and not any(secret in str(v) for secret in secrets)
                 and _unmasked(_short(v, None), secrets) and _unmasked(_short(v), secrets)]
        # Last, the id's text as a whole, before and after it is cut (names too, and what joining made): never
        # a piece of a credential.
        joined = ",".join(item for item in shown if _unmasked(item, secrets))
        readable = joined[:80] if _unmasked(joined, secrets) and _unmasked(joined[:80], secrets) else ""
        digest = hashlib.sha256(json.dumps([self.kind, self.target, self.params, self.base_params],
                                           sort_keys=True).encode()).hexdigest()[:8]
        readable = re.sub(r"[/\\\x00]", "_", readable)  # one folder's name, never a path (a spec refuses such names)
        return f"{readable}-{digest}" if readable else digest

    @property
    def secrets(self) -> list[str]:
        """The credentials in this unit's values, in its command's arguments (``"--password", "..."``,
        ``-u user:pw``..., filled with the values) and in this process's environment
        (:func:`evalkit.models.environment_secrets`: ``*_TOKEN``, ``MYSQL_PWD``, ``SSHPASS``...): masked in
        everything written, the command's output among it."""
        found = _secrets(self.params) + environment_secrets()
        if self.kind == "command":
            try:
                arguments = [fill(part, self.params) for part in json.loads(self.target)]
            except (ValueError, KeyError, TypeError):
                arguments = []
            found += [value for value in _command_secrets(arguments) if len(value) >= 4]
        return sorted(set(found), key=len, reverse=True)

    def public(self) -> dict[str, Any]:
        """What a record stores of the unit: kind, target, parameters, base parameters and time limit, with
        credentials masked (``workdir`` is where, not what, and is left out).

        >>> GridUnit("command", '["tool", "--password", "hunter2", "{x}"]', {"x": 1}).public()["target"]
        '["tool", "--password", "***", "{x}"]'
        """
        values = {k: v for k, v in asdict(self).items() if k != "workdir"}
        if self.kind == "command":
            try:
                values["target"] = json.dumps(_public_command(json.loads(self.target)))
            except (ValueError, TypeError):
                pass
        return _public(values, self.secrets)


def _unmasked(text: str, secrets: list[str]) -> bool:
    """Whether ``secrets`` (whole or in pieces, :func:`evalkit.models.redact`) mask nothing in ``text``."""
    return redact(text, secrets) == redact(text)


def _short(value: Any, limit: int | None = 24) -> str:
    text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in text)[:limit]


@dataclass
class GridSpec:
    """A parsed grid file; ``base_dir`` is the grid file's folder (where command units run)."""

    name: str
    kind: str
    target: str
    grid: dict[str, list[Any]]
    fixed: dict[str, Any] = field(default_factory=dict)
    base_params: str = "smoke"
    out: str = "grid-runs"
    retries: int = 1
    workers: int = 2
    timeout_s: float | None = None
    base_dir: str = "."


_FIELDS = {"name", "kind", "notebook", "command", "base_params", "grid", "fixed", "out", "retries", "workers",
           "timeout_s"}


def load_grid(path: str | Path) -> GridSpec:
    """Read and check a grid file; relative ``out`` and ``base_params`` paths are relative to it, and so is
    the folder command units run in."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such grid file")
    return parse_grid(read_yaml(path, GridSpecError) or {}, source=str(path), base_dir=path.parent)


# --------------------------------------------------------------------------- placeholders

# At one place: a word in double braces (literal), else a word in single braces (a placeholder).
_BRACED = re.compile(r"\{\{([\w.\-]+)\}\}|\{([\w.\-]+)\}", re.ASCII)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def placeholders(argument: str) -> list[str]:
    """The parameter names ``argument`` refers to; a malformed placeholder raises ``ValueError``.

    >>> placeholders("--seed={seed} {{literal}} {'a': 1}")
    ['seed']
    >>> placeholders("--judge={judge-name}")
    Traceback (most recent call last):
    ...
    ValueError: {judge-name} is not a placeholder {name} (a name of letters, digits and _); {{judge-name}} is the literal text
    """
    names = []
    for match in _BRACED.finditer(argument):
        if match.group(2) is None:
            continue
        if not _NAME.fullmatch(match.group(2)):
            raise ValueError(f"{match.group(0)} is not a placeholder {{name}} (a name of letters, digits and _); "
                             f"{{{match.group(0)}}} is the literal text")
        names.append(match.group(2))
    return names


def fill(argument: str, params: dict[str, Any]) -> str:
    """``{name}`` replaced by the unit's parameter of that name, ``{{name}}`` by ``{name}``; other braces are
    left as they are (the grammar of the module docstring, checked by :func:`placeholders` at parse time).

    >>> fill("--seed={seed}", {"seed": 3}), fill("{'a': 1} {{seed}}", {"seed": 3})
    ('--seed=3', "{'a': 1} {seed}")
    """
    return _BRACED.sub(lambda m: "{" + m.group(1) + "}" if m.group(2) is None else str(params[m.group(2)]), argument)


# --------------------------------------------------------------------------- the grid file

def parse_grid(raw: Any, *, source: str = "grid spec", base_dir: str | Path = ".") -> GridSpec:
    """A grid spec from parsed YAML/JSON, with errors naming ``source`` and the field (credentials masked)."""
    try:
        return _parse_grid(raw, source, Path(base_dir).resolve())
    except GridSpecError as error:
        command = raw.get("command") if isinstance(raw, dict) else None
        literals = _command_secrets([str(c) for c in command]) if isinstance(command, list) else []
        raise GridSpecError(redact(_mask_url(str(error)), [*_secrets(raw), *literals, *environment_secrets()])) \
            from None


def _parse_grid(raw: Any, source: str, base: Path) -> GridSpec:
    """The checked grid spec of ``raw`` (fields read in a fixed order, so the first error is always the same)."""
    read = Fields(raw, source, known=_FIELDS, error=GridSpecError)
    kind = read.text("kind", "notebook", choices=("notebook", "command"))
    grid = _grid_values(read)
    fixed = _fixed_values(read, grid)
    target = _notebook_target(read, grid, fixed) if kind == "notebook" else _command_target(read, grid, fixed, base)
    base_params = _base_params(read, kind, base)
    name = read.text("name", "grid")
    # the default folder is named by the grid's name, unless that is no plain name or holds a credential's shape
    plain = re.fullmatch(r"[\w.\-]{1,80}", name) and name not in (".", "..") and redact(name, environment_secrets()) == name
    out = Path(read.text("out", f"grid-runs/{name if plain else 'grid-' + hashlib.sha256(name.encode()).hexdigest()[:8]}"))
    return GridSpec(name=name, kind=kind, target=target, grid=grid, fixed=fixed, base_params=base_params,
                    out=str(out if out.is_absolute() else (base / out).resolve()),
                    retries=read.integer("retries", 1, minimum=0), workers=read.integer("workers", 2, minimum=1),
                    timeout_s=read.number("timeout_s", None, optional=True, positive=True), base_dir=str(base))


def _grid_values(read: Fields) -> dict[str, list[Any]]:
    """The ``grid`` field: parameter names that are texts, each with a list of distinct values."""
    grid = read.mapping("grid", nonempty=True)
    values = read.nested("grid", grid)
    for name in grid:
        if not isinstance(name, str):
            read.fail("grid", f"parameter name {name!r} is not a text")
        _check_name(read, "grid", name)
        listed = values.values(name)
        repeated = sorted({json.dumps(v) for v in listed if listed.count(v) > 1})
        if repeated:
            values.fail(name, f"{', '.join(repeated)} listed more than once (the same unit would run twice)")
    return grid


_PARAMETER_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]{0,63}")


def _check_name(read: Fields, field: str, name: object) -> None:
    """Refuse a parameter name that is no identifier-like text: a unit's folder is named by its parameters, so a
    name holding ``/`` or ``..`` would put it outside the grid's output folder."""
    if not isinstance(name, str) or not _PARAMETER_NAME.fullmatch(name):
        read.fail(field, f"parameter name {str(name)[:80]!r} is not a name (letters, digits, '_', '.', '-'; "
                         "starting with a letter or '_'; at most 64 characters)")


def _fixed_values(read: Fields, grid: dict[str, list[Any]]) -> dict[str, Any]:
    """The ``fixed`` field: values given to every unit, none of them also a grid parameter."""
    fixed = read.mapping("fixed", {})
    for name in fixed:
        _check_name(read, "fixed", name)
    both = sorted(set(grid) & set(fixed))
    if both:
        read.fail("fixed", f"{', '.join(both)} also in grid (a grid value would silently replace the fixed one)")
    return fixed


def command_path() -> str:
    """PATH for a command unit: the grid's own environment first, so `evalkit` and `python` in a command are
    the kit's, also when its virtual environment is not activated."""
    return os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])


def _notebook_target(read: Fields, grid: dict[str, list[Any]], fixed: dict[str, Any]) -> str:
    """The ``notebook`` field: exactly one chapter notebook, of which every grid and fixed name is a parameter."""
    target = read.text("notebook")
    from evalkit.book.runner import notebook_sources

    try:
        matches = notebook_sources([target])
    except ValueError:
        matches = []
    if len(matches) != 1:
        read.fail("notebook", f"{target!r} must name exactly one notebook (matches: {[m.stem for m in matches]})")
    from evalkit.book.runner import chapter_parameters

    accepted = set(chapter_parameters(matches[0])) - {"output_dir", "results_path", "store_path"}
    for field_name, names in (("grid", grid), ("fixed", fixed)):
        unknown = sorted(set(names) - accepted)
        if unknown:
            read.fail(field_name, f"{', '.join(unknown)} not a parameter of {matches[0].stem} "
                                  f"(its parameters: {', '.join(sorted(accepted))})")
    return target


def _command_target(read: Fields, grid: dict[str, list[Any]], fixed: dict[str, Any], base: Path) -> str:
    """The ``command`` field as a JSON list of texts: its placeholders well formed and naming parameters, its
    program on PATH or a file beside the grid file."""
    command = read.value("command", None)
    if not isinstance(command, list) or not command or not all(isinstance(c, (str, int, float)) for c in command):
        read.fail("command", "expected a non-empty list of arguments")
    names = set(grid) | set(fixed)
    from evalkit.models.redaction import MASK, redact

    # Braces also quote literal values (ODBC's PWD={...}, a password written "{...}"): what a command line
    # would hold as a credential, with its braces read as text, is never shown in a message.
    literal = _command_secrets([str(part).replace("{", "").replace("}", "") for part in command])
    for index, part in enumerate(map(str, command)):
        try:
            used = placeholders(part)
        except ValueError as error:
            read.fail(f"command[{index}]", redact(str(error), literal))
        for placeholder in used:
            if placeholder not in names:
                shown = MASK if any(placeholder in secret or secret in placeholder for secret in literal) \
                    else placeholder
                read.fail(f"command[{index}]", f"placeholder {{{shown}}} names no parameter "
                                               f"(parameters: {', '.join(sorted(names))})")
    program = str(command[0])
    if not placeholders(program) and shutil.which(program, path=command_path()) is None:
        if not (base / program).is_file():
            read.fail("command[0]", f"{program!r} is not a program on PATH nor a file")
        if "/" not in program:  # a bare name is looked up on PATH only
            read.fail("command[0]", f"{program!r} is not on PATH; write ./{program} for the file beside the "
                                    "grid file")
    return json.dumps([str(c) for c in command])


def _base_params(read: Fields, kind: str, base: Path) -> str:
    """The ``base_params`` field: a parameter-set name, or a file path made absolute from the grid file's
    folder; for a notebook grid it must load."""
    base_params = read.text("base_params", "smoke")
    if Path(base_params).suffix and not Path(base_params).is_absolute():
        base_params = str((base / base_params).resolve())
    if kind == "notebook":
        from evalkit.book.runner import load_params

        try:
            load_params(base_params)
        except (FileNotFoundError, ValueError) as error:
            read.fail("base_params", str(error))
    return base_params


def expand(spec: GridSpec) -> list[GridUnit]:
    """Every combination of the grid's values (in the file's order), each with the fixed values added.

    >>> spec = GridSpec("g", "command", '["echo"]', {"a": [1, 2], "b": ["x"]}, {"c": 0})
    >>> [u.params for u in expand(spec)]
    [{'c': 0, 'a': 1, 'b': 'x'}, {'c': 0, 'a': 2, 'b': 'x'}]
    """
    names = list(spec.grid)
    return [GridUnit(spec.kind, spec.target, {**spec.fixed, **dict(zip(names, values))}, spec.base_params,
                     spec.timeout_s, spec.base_dir) for values in itertools.product(*(spec.grid[n] for n in names))]
