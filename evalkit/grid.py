"""Batch grids: a parameter grid expanded into units, run in a local process pool or on a Ray cluster.

A grid file (YAML) names what each unit runs — a notebook through papermill, or a command line — and the
grid of parameters: every combination of the listed values is one unit (``fixed`` values go to all).

.. code-block:: yaml

    name: judges-by-seed
    kind: notebook                 # or: command
    notebook: 03_metric_correlation
    base_params: smoke             # the parameter set the grid's values override (smoke, full or a file)
    grid: {seed: [1, 2], judges: [[yes_no], [likert]]}
    fixed: {judge_items: 12}
    out: runs/judges-by-seed       # relative to the grid file
    retries: 1
    workers: 2                     # local process pool size

A command unit runs in the grid file's folder, so relative paths in its arguments (``scored_{seed}.jsonl``)
name files beside the grid file. Its arguments are filled by one grammar, checked when the file is read:

- ``{name}`` — a name of letters, digits and ``_`` in single braces — is replaced by the unit's parameter
  ``name``; a name that is no parameter is an error;
- ``{{name}}`` is the literal text ``{name}``;
- a word in braces that is not such a name (``{judge-name}``, ``{1}``) is an error naming the file and field;
- any other brace is literal text (``{"a": 1}``, ``{}``).

Its result is the last line of its standard output that is a whole JSON object (other lines may follow it);
a command that prints none fails with that reason. A command unit runs in a process group of its own,
under a small reaper that kills the group — the command and whatever it started — when the command ends,
when the unit times out, and when the worker or driver above it dies, however it dies (SIGKILL included).

Every unit writes ``unit.json`` (its parameters, status, attempts, seconds, result or error) into
``out/units/<unit id>/``; a unit already finished there is skipped on the next run. A failing unit is
retried ``retries`` times and then reported; the others finish. The results of all units are gathered into
``out/results.csv`` (and ``results.parquet`` when pyarrow is installed), one row per unit with its parameters
and numeric results.

Credentials never leave in clear: a unit's folder name is its short values and a hash of the whole unit
(URLs and parameters named like ``api_key``, ``token`` or ``password`` are left out of it), and every text
written — ``unit.json``, ``results.csv``, the unit's captured output, its executed notebook, errors and
progress — passes :func:`evalkit.models.redact`, with the unit's own secrets (URL passwords and query
values, secret-named parameters) masked wherever they appear. The worker alone sees the real values.

Ray is the distributed engine: with ``ray_address`` (``auto``, ``ray://host:10001``) or an initialised Ray
the units are Ray tasks; no scheduler of our own. Judge and proxy calls inside units go through the model
door, so a shared OpenAI-compatible server (vLLM) with its bounded concurrency serves them all.
"""
from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import traceback
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import unquote, urlsplit

import pandas as pd

from .models import redact
from .specfile import Fields, SpecError, read_yaml

__all__ = ["GridSpec", "GridUnit", "GridSpecError", "GridLocked", "GridOutcome", "load_grid", "expand", "run_unit", "run_grid",
           "results_table"]


class GridSpecError(SpecError):
    """A grid file that cannot run; the message names the file and field."""


class GridLocked(RuntimeError):
    """Another grid run holds the output folder."""


# --------------------------------------------------------------------------- secrets

# A parameter whose name ends in one of these words holds a credential: its value is never shown.
_SECRET_NAME = re.compile(r"(?i)(^|[_-])(pass(word|wd|phrase)?|secret|token|credentials?|auth(orization)?|"
                          r"api[_-]?key|apikey|key|sig(nature)?)$")
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://\S+")


def _mask_url(text: str) -> str:
    """A URL with its user-info and every query value masked (other text as it is).

    >>> _mask_url("http://me:pw@host:8000/v1?key=K&sig=S&flag")
    'http://***@host:8000/v1?key=***&sig=***&flag'
    """
    if not _URL.fullmatch(text):
        return text
    parts = urlsplit(text)
    netloc = f"***@{parts.netloc.rpartition('@')[2]}" if "@" in parts.netloc else parts.netloc
    pairs = (part.partition("=") for part in parts.query.split("&"))
    query = "&".join(f"{name}=***" if eq else name for name, eq, _ in pairs)
    return parts._replace(netloc=netloc, query=query).geturl()


def _secrets(value: Any, name: str = "") -> list[str]:
    """The credentials inside a unit's values, longest first: secret-named values, URL passwords and query
    values (masked wherever they appear, also without their URL)."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            found += _secrets(item, str(key))
    elif isinstance(value, list):
        for item in value:
            found += _secrets(item, name)
    elif _SECRET_NAME.search(name) and value is not None and not isinstance(value, bool):
        found.append(str(value))
    elif isinstance(value, str) and _URL.fullmatch(value):
        parts = urlsplit(value)
        found += [parts.password or "", unquote(parts.password or "")]
        for _, _, query_value in (p.partition("=") for p in parts.query.split("&")):
            if len(query_value) >= 6:  # shorter values (json, en, 1) would mask ordinary words
                found += [query_value, unquote(query_value)]
    return sorted({s for s in found if len(s) >= 4}, key=len, reverse=True)


def _public(value: Any, secrets: list[str], name: str = "") -> Any:
    """``value`` as it may be written: secret-named values as ``***``, every text redacted."""
    if isinstance(value, dict):
        return {redact(str(k), secrets): _public(v, secrets, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [_public(v, secrets, name) for v in value]
    if _SECRET_NAME.search(name) and value is not None and not isinstance(value, bool):
        return "***"
    return redact(_mask_url(value), secrets) if isinstance(value, str) else value


def _shown(name: str, value: Any) -> bool:
    """Whether a value may appear in a unit's folder name: no secret-named parameter, no URL, nothing that
    redaction would change."""
    if _SECRET_NAME.search(name):
        return False
    if isinstance(value, dict):
        return all(_shown(str(k), v) for k, v in value.items())
    if isinstance(value, list):
        return all(_shown(name, v) for v in value)
    if isinstance(value, str):
        return not re.search(r"[@:?=&#%\s]", value) and redact(value) == value
    return True


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

        >>> GridUnit("command", '["echo"]', {"seed": 1, "judge": "likert"}).unit_id
        'judge=likert,seed=1-4cfd555a'
        >>> GridUnit("command", '["echo"]', {"seed": 1, "base_url": "http://u:pw@host/v1"}).unit_id
        'seed=1-afe8b488'
        """
        readable = ",".join(f"{k}={_short(v)}" for k, v in sorted(self.params.items()) if _shown(k, v))[:80]
        digest = hashlib.sha256(json.dumps([self.kind, self.target, self.params, self.base_params],
                                           sort_keys=True).encode()).hexdigest()[:8]
        return f"{readable}-{digest}" if readable else digest

    @property
    def secrets(self) -> list[str]:
        """The credentials in this unit's values (masked in everything written)."""
        return _secrets(self.params)

    def public(self) -> dict[str, Any]:
        """What a record stores of the unit: kind, target, parameters, base parameters and time limit, with
        credentials masked (``workdir`` is where, not what, and is left out)."""
        return _public({k: v for k, v in asdict(self).items() if k != "workdir"}, self.secrets)


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in text)[:24]


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
        raise GridSpecError(redact(_mask_url(str(error)), _secrets(raw))) from None


def _parse_grid(raw: Any, source: str, base: Path) -> GridSpec:
    read = Fields(raw, source, known=_FIELDS, error=GridSpecError)
    kind = read.text("kind", "notebook", choices=("notebook", "command"))
    grid = read.mapping("grid", nonempty=True)
    values = read.nested("grid", grid)
    for name in grid:
        if not isinstance(name, str):
            read.fail("grid", f"parameter name {name!r} is not a text")
        listed = values.values(name)
        repeated = sorted({json.dumps(v) for v in listed if listed.count(v) > 1})
        if repeated:
            values.fail(name, f"{', '.join(repeated)} listed more than once (the same unit would run twice)")
    fixed = read.mapping("fixed", {})
    both = sorted(set(grid) & set(fixed))
    if both:
        read.fail("fixed", f"{', '.join(both)} also in grid (a grid value would silently replace the fixed one)")
    if kind == "notebook":
        target = read.text("notebook")
        from .runner import notebook_sources

        try:
            matches = notebook_sources([target])
        except ValueError:
            matches = []
        if len(matches) != 1:
            read.fail("notebook", f"{target!r} must name exactly one notebook (matches: {[m.stem for m in matches]})")
        from .runner import chapter_parameters

        accepted = set(chapter_parameters(matches[0])) - {"output_dir", "results_path", "store_path"}
        for field_name, names in (("grid", grid), ("fixed", fixed)):
            unknown = sorted(set(names) - accepted)
            if unknown:
                read.fail(field_name, f"{', '.join(unknown)} not a parameter of {matches[0].stem} "
                                      f"(its parameters: {', '.join(sorted(accepted))})")
    else:
        command = read.value("command", None)
        if not isinstance(command, list) or not command or not all(isinstance(c, (str, int, float)) for c in command):
            read.fail("command", "expected a non-empty list of arguments")
        names = set(grid) | set(fixed)
        for index, part in enumerate(map(str, command)):
            try:
                used = placeholders(part)
            except ValueError as error:
                read.fail(f"command[{index}]", str(error))
            for placeholder in used:
                if placeholder not in names:
                    read.fail(f"command[{index}]", f"placeholder {{{placeholder}}} names no parameter "
                                                   f"(parameters: {', '.join(sorted(names))})")
        program = str(command[0])
        if not placeholders(program) and shutil.which(program) is None:
            if not (base / program).is_file():
                read.fail("command[0]", f"{program!r} is not a program on PATH nor a file")
            if "/" not in program:  # a bare name is looked up on PATH only
                read.fail("command[0]", f"{program!r} is not on PATH; write ./{program} for the file beside the "
                                        "grid file")
        target = json.dumps([str(c) for c in command])
    base_params = read.text("base_params", "smoke")
    if Path(base_params).suffix and not Path(base_params).is_absolute():
        base_params = str((base / base_params).resolve())
    if kind == "notebook":
        from .runner import load_params

        try:
            load_params(base_params)
        except (FileNotFoundError, ValueError) as error:
            read.fail("base_params", str(error))
    name = read.text("name", "grid")
    out = Path(read.text("out", f"grid-runs/{name}"))
    return GridSpec(name=name, kind=kind, target=target, grid=grid, fixed=fixed, base_params=base_params,
                    out=str(out if out.is_absolute() else (base / out).resolve()),
                    retries=read.integer("retries", 1, minimum=0), workers=read.integer("workers", 2, minimum=1),
                    timeout_s=read.number("timeout_s", None, optional=True, positive=True), base_dir=str(base))


def expand(spec: GridSpec) -> list[GridUnit]:
    """Every combination of the grid's values (in the file's order), each with the fixed values added.

    >>> spec = GridSpec("g", "command", '["echo"]', {"a": [1, 2], "b": ["x"]}, {"c": 0})
    >>> [u.params for u in expand(spec)]
    [{'c': 0, 'a': 1, 'b': 'x'}, {'c': 0, 'a': 2, 'b': 'x'}]
    """
    names = list(spec.grid)
    return [GridUnit(spec.kind, spec.target, {**spec.fixed, **dict(zip(names, values))}, spec.base_params,
                     spec.timeout_s, spec.base_dir) for values in itertools.product(*(spec.grid[n] for n in names))]


# --------------------------------------------------------------------------- one unit

def _run_notebook(unit: GridUnit, folder: Path) -> dict[str, Any]:
    """The notebook with its base parameter set, the unit's values laid over that notebook's entry."""
    from .results import read_results
    from .runner import load_params, notebook_sources, run_notebooks

    params = load_params(unit.base_params)
    (source,) = notebook_sources([unit.target])
    notebooks = {**params["notebooks"], source.stem: {**(params["notebooks"].get(source.stem) or {}), **unit.params}}
    (run,) = run_notebooks({"defaults": params["defaults"], "notebooks": notebooks}, only=[source.stem],
                           out_dir=folder)
    return read_results(run.results) if run.results.is_file() else {}


# The process between a worker and its command. It asks for SIGTERM when its parent (the worker, or the
# driver itself) dies — however it dies — and starts the command in a session and process group of its own
# (the command itself asks for SIGKILL when the reaper dies). Told to stop, or orphaned, it kills the whole
# group, the command and all it started; when the command ends it kills what the command left running (a
# background child would otherwise hold the output pipes open). It is a child subreaper, so what the command
# detached into a session of its own (setsid) is reparented to it and killed too. A command killed by a signal
# is reported as killed by that signal.
_REAPER = r"""
import ctypes, os, signal, subprocess, sys, time
def children():
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if fields[1] == str(me):
                found.append(int(entry))
    return found
def kill_descendants():
    # What the command started and detached (setsid) is reparented here (we are a child subreaper): kill it.
    for _ in range(50):
        pids = children()
        if not pids:
            return
        for pid in pids:
            for kill in (os.killpg, os.kill):
                try:
                    kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        while True:
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    break
            except ChildProcessError:
                break
        time.sleep(0.02)
def die_with_parent(signum):
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signum))  # PR_SET_PDEATHSIG (Linux)
    except (OSError, AttributeError):
        pass
parent, me, group = int(sys.argv[1]), os.getpid(), None
die_with_parent(signal.SIGTERM)
if os.getppid() != parent:
    os._exit(143)
os.setsid()
try:
    ctypes.CDLL(None, use_errno=True).prctl(36, 1)  # PR_SET_CHILD_SUBREAPER: orphans of the command come here
except (OSError, AttributeError):
    pass
def stop(signum, frame):
    if group is not None:
        try:
            os.killpg(group, signal.SIGKILL)
        except OSError:
            pass
    kill_descendants()
    os._exit(128 + signum)
for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(signum, stop)
def child_setup():
    die_with_parent(signal.SIGKILL)
    if os.getppid() != me:
        os._exit(137)
try:
    child = subprocess.Popen(sys.argv[2:], start_new_session=True, preexec_fn=child_setup)
except OSError as error:
    print(f"cannot start {sys.argv[2]!r}: {type(error).__name__}: {error.strerror or error}", file=sys.stderr)
    os._exit(127)
group = child.pid
code = child.wait()
try:
    os.killpg(group, signal.SIGKILL)
except OSError:
    pass
kill_descendants()
if code < 0:
    signal.signal(-code, signal.SIG_DFL)
    os.kill(me, -code)
sys.exit(code if code >= 0 else 128 - code)
"""


def _json_result(stdout: str) -> dict[str, Any]:
    """The last line of ``stdout`` that is a whole JSON object.

    >>> _json_result('{"a": 1}\\nnot json\\n[2]\\n{"b": 2}\\ndone\\n')
    {'b': 2}
    """
    for line in reversed(stdout.splitlines()):
        line = line.strip()
        if line.startswith("{") and line.endswith("}"):
            try:
                value = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                return value
    raise RuntimeError("no result: no line of its standard output is a JSON object (a command unit prints its "
                       "result as one JSON object on a line of its own)")


def _run_command(unit: GridUnit, folder: Path, secrets: list[str]) -> dict[str, Any]:
    arguments = [fill(part, unit.params) for part in json.loads(unit.target)]
    reaper = subprocess.Popen([sys.executable, "-I", "-S", "-c", _REAPER, str(os.getpid()), *arguments],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, encoding="utf-8", errors="replace",
                              cwd=unit.workdir or None)
    timed_out = False
    try:
        try:
            stdout, stderr = reaper.communicate(timeout=unit.timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            reaper.terminate()  # the reaper kills the command's process group
            stdout, stderr = reaper.communicate()
    finally:
        if reaper.poll() is None:  # this worker is interrupted: its unit's processes go with it
            reaper.terminate()
            reaper.wait()
    (folder / "stdout.txt").write_text(redact(stdout, secrets))
    (folder / "stderr.txt").write_text(redact(stderr, secrets))
    if timed_out:
        raise TimeoutError(f"still running after timeout_s = {unit.timeout_s:g} s; its processes were killed")
    if reaper.returncode != 0:
        ended = (f"killed by signal {signal.Signals(-reaper.returncode).name}" if reaper.returncode < 0
                 else f"exit status {reaper.returncode}")
        tail = (stderr.strip() or stdout.strip())[-1500:]
        raise RuntimeError(f"{ended}: {tail}")
    return _json_result(stdout)


_TEXT_FILES = (".ipynb", ".json", ".jsonl", ".txt", ".log", ".md", ".html", ".csv")


def _scrub_folder(folder: Path, secrets: list[str]) -> None:
    """Mask credentials in the text files a unit left in its folder (an executed notebook shows its
    parameters cell)."""
    for path in folder.rglob("*"):
        if path.suffix not in _TEXT_FILES or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        masked = redact(text, secrets)
        if masked != text:
            path.write_text(masked, encoding="utf-8")


def run_unit(unit: GridUnit, out_dir: str) -> dict[str, Any]:
    """Run one unit into ``out_dir/units/<id>/`` and return its record (never raises: a failure is recorded
    with its error). Importable by process-pool and Ray workers alike."""
    folder = Path(out_dir) / "units" / unit.unit_id
    folder.mkdir(parents=True, exist_ok=True)
    secrets = unit.secrets
    started = time.perf_counter()
    record: dict[str, Any] = {"unit_id": unit.unit_id, "unit": unit.public(), "status": "ok", "error": None,
                              "result": {}}
    try:
        result = _run_notebook(unit, folder) if unit.kind == "notebook" else _run_command(unit, folder, secrets)
        record["result"] = _public(result, secrets)
    except Exception as error:  # noqa: BLE001 — any failure of a unit is reported, the grid goes on
        record.update(status="failed", error=redact(f"{type(error).__name__}: {error}", secrets),
                      traceback=redact(traceback.format_exc(limit=6), secrets))
    record["seconds"] = time.perf_counter() - started
    if unit.kind == "notebook":
        _scrub_folder(folder, secrets)
    # Filed here too, not only by the driver: a driver killed while this worker ran loses nothing it did.
    _write_record(Path(out_dir), unit, record)
    return record


# --------------------------------------------------------------------------- the grid

@dataclass
class GridOutcome:
    """What a grid run did: units run now, skipped as finished, failed after retries; the gathered table."""

    ran: list[str]
    skipped: list[str]
    failed: dict[str, str]
    table: pd.DataFrame
    csv: Path

    def summary(self) -> str:
        lines = [f"{len(self.ran)} units run, {len(self.skipped)} skipped (finished before), "
                 f"{len(self.failed)} failed; results: {self.csv}"]
        lines += [f"FAILED {unit_id}: {error}" for unit_id, error in self.failed.items()]
        return "\n".join(lines)


def _record_path(out: Path, unit: GridUnit) -> Path:
    return out / "units" / unit.unit_id / "unit.json"


def _write_record(out: Path, unit: GridUnit, record: dict[str, Any]) -> None:
    """Write a unit's record whole or not at all (a kill mid-write leaves the previous record)."""
    path = _record_path(out, unit)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".json.{os.getpid()}.tmp")
    partial.write_text(json.dumps(record, indent=1, default=str))
    os.replace(partial, path)


def _finished(out: Path, unit: GridUnit) -> bool:
    """Whether the unit's folder holds an ``ok`` record of this very unit. The record stores the unit with
    its credentials masked, so equal stored forms alone could hide a changed password; but the folder is
    named by a hash of the real values, so a unit with another credential has another folder (and no
    record), while the stored form still tells apart units whose short hashes collide."""
    path = _record_path(out, unit)
    if not path.is_file():
        return False
    try:
        record = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError):
        return False  # a damaged record: the unit runs again
    return (record.get("status") == "ok" and record.get("unit_id") == unit.unit_id
            and record.get("unit") == json.loads(json.dumps(unit.public())))


def _failed_record(unit: GridUnit, error: BaseException) -> dict[str, Any]:
    return {"unit_id": unit.unit_id, "unit": unit.public(), "status": "failed",
            "error": redact(f"{type(error).__name__}: {error}", unit.secrets), "result": {}, "seconds": 0.0}


def _die_with_parent() -> None:
    """Pool-worker initializer: on Linux, ask for SIGTERM when the driver dies, however it dies, so a killed
    grid leaves no idle workers behind (elsewhere a no-op). A worker's command units die with it (see
    ``_REAPER``)."""
    import ctypes

    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
    except OSError:
        return
    parent = os.getppid()
    libc.prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the driver died before the request took effect
        os._exit(1)


def _execute(units: list[GridUnit], out: Path, *, engine: str, workers: int,
             ray_address: str | None) -> Iterator[tuple[GridUnit, dict[str, Any]]]:
    """(unit, record) pairs in the order units finish, so the caller can file each at once."""
    if not units:
        return
    if engine == "ray":
        import ray

        if not ray.is_initialized():
            ray.init(address=ray_address, ignore_reinit_error=True, log_to_driver=False)
        task = ray.remote(max_retries=0)(run_unit)  # retries are ours: counted and recorded
        waiting = {task.remote(unit, str(out)): unit for unit in units}
        while waiting:
            (done,), _ = ray.wait(list(waiting), num_returns=1)
            unit = waiting.pop(done)
            try:
                yield unit, ray.get(done)
            except Exception as error:  # noqa: BLE001 — a worker that died is a failed unit
                yield unit, _failed_record(unit, error)
        return
    if workers == 1:
        for unit in units:
            yield unit, run_unit(unit, str(out))
        return
    with ProcessPoolExecutor(max_workers=workers, initializer=_die_with_parent) as pool:
        futures = {pool.submit(run_unit, unit, str(out)): unit for unit in units}
        for future in as_completed(futures):
            try:
                yield futures[future], future.result()
            except Exception as error:  # noqa: BLE001 — a worker process that died is a failed unit
                yield futures[future], _failed_record(futures[future], error)


_HELD: set[str] = set()  # output folders locked by this process (POSIX locks do not exclude threads)
_HELD_GUARD = threading.Lock()


@contextmanager
def _folder_lock(out: Path):
    """Hold ``out/.grid.lock`` for the run; a second run on the same folder — from another process or
    another thread — is refused. A POSIX record lock belongs to this process alone: worker processes do not
    inherit it, and it goes with the process, so a killed run leaves no lock behind. (Closing any handle of
    the file releases such a lock, so this process never opens it twice: threads are kept apart first.)"""
    import fcntl

    key = str(out.resolve())
    path = out / ".grid.lock"

    def refuse() -> GridLocked:
        holder = path.read_text().strip() if path.is_file() else ""
        return GridLocked(f"{out} is in use by another grid run (process {holder or 'unknown'}); wait for it to "
                          "finish or give this grid another `out` folder")

    with _HELD_GUARD:
        if key in _HELD:
            raise refuse()
        handle = open(path, "a+")
        try:
            fcntl.lockf(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()  # this process does not hold the lock, so closing releases nothing
            raise refuse() from None
        _HELD.add(key)
    try:
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        yield
    finally:
        with _HELD_GUARD:
            _HELD.discard(key)
            handle.close()


def run_grid(spec: GridSpec, *, engine: str = "local", ray_address: str | None = None,
             workers: int | None = None, progress: bool = False) -> GridOutcome:
    """Run every unit of ``spec`` not finished before; retry failures ``spec.retries`` times; gather results.

    ``engine``: ``local`` (a process pool of ``workers``) or ``ray`` (tasks on the Ray cluster at
    ``ray_address``, or on the Ray instance this process already initialised). Each unit's record is
    written the moment it finishes, so a run killed part-way repeats none of its finished units; the
    output folder is locked against a second run for the duration.
    """
    if engine not in ("local", "ray"):
        raise ValueError(f"engine must be local or ray, not {engine!r}")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ValueError(f"workers (--workers) must be a whole number of at least 1, not {workers!r}")
    out = Path(spec.out)
    out.mkdir(parents=True, exist_ok=True)
    with _folder_lock(out):
        units = expand(spec)
        pending = [u for u in units if not _finished(out, u)]
        skipped = [u.unit_id for u in units if u not in pending]
        ran: list[str] = []
        failed: dict[str, str] = {}
        for attempt in range(spec.retries + 1):
            if not pending:
                break
            if progress:
                print(f"attempt {attempt + 1}: {len(pending)} units on {engine}", file=sys.stderr, flush=True)
            retry = []
            size = spec.workers if workers is None else workers
            for unit, record in _execute(pending, out, engine=engine, workers=size, ray_address=ray_address):
                record["attempts"] = attempt + 1
                _write_record(out, unit, record)
                if record["status"] == "ok":
                    ran.append(unit.unit_id)
                    failed.pop(unit.unit_id, None)
                else:
                    failed[unit.unit_id] = record["error"]
                    retry.append(unit)
            pending = [u for u in pending if u in retry]  # the file's order, whatever order they finished in
        table = results_table(spec)
        csv = out / "results.csv"
        table.to_csv(csv, index=False)
        try:
            table.to_parquet(out / "results.parquet", index=False)
        except ImportError:
            pass  # Parquet needs pyarrow (pip install pyarrow); the CSV has the same table
    return GridOutcome(ran, skipped, failed, table, csv)


def results_table(spec: GridSpec) -> pd.DataFrame:
    """One row per unit of the grid that has a record: its parameters, status, attempts, seconds and the
    numeric (or short text) values of its result, nested keys joined with ``/``."""
    out = Path(spec.out)
    rows = []
    for unit in expand(spec):
        path = _record_path(out, unit)
        if not path.is_file():
            continue
        record = json.loads(path.read_text())
        flat = pd.json_normalize(record.get("result") or {}, sep="/").to_dict("records")
        values = {k: v for k, v in (flat[0] if flat else {}).items()
                  if isinstance(v, (int, float, bool)) or (isinstance(v, str) and len(v) <= 80)}
        shown = unit.public()["params"]  # a record written before masking is masked here too
        values = _public(values, unit.secrets)
        rows.append({"unit_id": unit.unit_id, **{f"param/{k}": _short(v) if isinstance(v, (list, dict)) else v
                                                   for k, v in shown.items()},
                     "status": record["status"], "attempts": record.get("attempts", 1),
                     "seconds": round(record.get("seconds", 0.0), 3),
                     "error": _public(record.get("error"), unit.secrets), **values})
    return pd.DataFrame(rows)
