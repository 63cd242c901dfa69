"""Batch runs: execute the chapter notebooks with a named parameter set, then build the book.

Each chapter has one source, a MyST Markdown notebook (``notebooks/NN_name.md``, opened as a notebook by
JupyterLab through jupytext). Its ``parameters`` cell holds the book's values; a parameter set only
overrides some of them. Sets are YAML files (``params/smoke.yml``, or any path; ``full`` is the book as
written, no overrides)::

    defaults:            # given to every notebook
      seed: 13
    notebooks:
      01_dataset_building:
        sample_size: 6

Each notebook also receives ``output_dir`` (its folder in the build) and ``results_path`` (the JSON
its key results go to, beside the executed copy).

A set is checked before anything runs, as job and grid files are (:mod:`evalkit.data.specfile`; the message
names the file, line and field): a notebook key must name a chapter, an override must be a parameter of
that chapter, a default a parameter of at least one chapter, each value of the type of the chapter's own
value (a whole number where the chapter has ``8``, ``true``/``false`` where it has ``True``), and no key may
be given twice.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable

import nbformat

from evalkit.data.specfile import Fields, SpecError, describe, read_yaml

__all__ = ["PROJECT_ROOT", "NotebookFailure", "NotebookRun", "ParamsError", "load_params", "check_params",
           "notebook_sources", "read_chapter", "chapter_parameters", "chapter_parameter_values",
           "run_notebooks", "build_book"]

PROJECT_ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK_DIR = PROJECT_ROOT / "notebooks"
PARAMS_DIR = PROJECT_ROOT / "params"
BOOK_FILES = ("_config.yml", "_toc.yml", "references.bib", "book", "_static")  # _static: the book's CSS


class NotebookFailure(RuntimeError):
    """One or more notebooks failed; the message names each notebook and cell."""


class ParamsError(SpecError):
    """A parameter set that cannot run; the message names the file (or set), the line and the field."""


@dataclass(frozen=True)
class NotebookRun:
    """Where a notebook's executed copy and recorded results went, and whether it failed."""

    name: str
    executed: Path
    results: Path
    error: str | None = None
    seconds: float = float("nan")    # wall clock of the execution (the kernel's start included)


def load_params(name_or_path: str | Path) -> dict:
    """A parameter set by name (``smoke``, ``full``) or by path to a YAML file, checked against the chapters
    (:func:`check_params`); an empty file is the book as written."""
    path = Path(name_or_path)
    if not path.suffix:
        path = PARAMS_DIR / f"{name_or_path}.yml"
    if not path.is_file():
        known = sorted(p.stem for p in PARAMS_DIR.glob("*.yml"))
        raise FileNotFoundError(f"no parameter set {str(name_or_path)!r}: {path} does not exist "
                                f"(named sets: {', '.join(known)})")
    raw = read_yaml(path, ParamsError, lines=True)
    return {**check_params({} if raw is None else raw, str(path)), "name": path.stem}


class _Unknown:
    """A parameter whose value in the chapter is an expression, not a literal: any override type goes."""


def chapter_parameter_values(source: str | Path) -> dict[str, object]:
    """The chapter's parameters with the literal value its parameters cell gives each (an instance of
    ``_Unknown`` where the value is an expression)."""
    import ast

    cells = [c for c in read_chapter(source).cells if "parameters" in c.metadata.get("tags", [])]
    if len(cells) > 1:
        raise ValueError(f"{source}: {len(cells)} cells are tagged 'parameters'; papermill needs one")
    values: dict[str, object] = {}
    for node in ast.parse(cells[0].source).body if cells else []:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            try:
                values[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                values[node.targets[0].id] = _Unknown()
    return values


def _check_value(read: Fields, name: str, value: object, book: object, chapter: str) -> None:
    """``value`` must have the type of the chapter's own value ``book`` (None or an expression: any type)."""
    if book is None or isinstance(book, _Unknown):
        return
    shown = f"{chapter}.md's parameters cell has {name} = {book!r}"
    if isinstance(book, bool):
        ok, kind = isinstance(value, bool), "true or false"
    elif isinstance(book, int):
        ok, kind = isinstance(value, int) and not isinstance(value, bool), "a whole number"
    elif isinstance(book, float):
        ok, kind = isinstance(value, (int, float)) and not isinstance(value, bool) and value == value, "a number"
    elif isinstance(book, str):
        ok, kind = isinstance(value, str), "a text"
    elif isinstance(book, (list, tuple)):
        kinds = {type(item) for item in book}
        ok, kind = isinstance(value, list), "a list"
        if len(kinds) == 1:
            item_type = kinds.pop()
            kind = f"a list of {'texts' if item_type is str else item_type.__name__ + ' values'}"
            ok = ok and all(type(item) is item_type or (item_type is float and type(item) is int) for item in value)
    elif isinstance(book, dict):
        ok, kind = isinstance(value, dict), "a mapping"
    else:
        return
    if not ok:
        read.fail(name, f"expected {kind} ({shown}), got {describe(value)}")


def check_params(raw: object, source: str, sources: Iterable[Path] | None = None) -> dict:
    """A parameter set's ``defaults`` and ``notebooks``, checked against the chapters' parameters cells
    (``sources``: default every chapter); raises :class:`ParamsError` naming ``source``, line and field."""
    import difflib

    read = Fields(raw, source, known=("defaults", "notebooks"), error=ParamsError)
    chapters = {path.stem: chapter_parameter_values(path) for path in (sources or notebook_sources())}
    owned = {name: [stem for stem, values in chapters.items() if name in values]
             for values in chapters.values() for name in values}

    def usable(fields: Fields, name: object) -> str:
        if not isinstance(name, str) or not name.isidentifier():
            fields.fail(str(name), f"{name!r} is not a parameter name")
        if name in _SET_BY_RUNNER:
            fields.fail(name, "is set by the runner for each notebook (its folder in the build); leave it out")
        return name

    defaults_raw = read.mapping("defaults", {})
    defaults = read.nested("defaults", defaults_raw)
    for name, value in defaults_raw.items():
        usable(defaults, name)
        if name not in owned:
            close = difflib.get_close_matches(name, list(owned), n=3)
            defaults.fail(name, "no chapter's parameters cell defines it (it would be injected and ignored)"
                          + (f"; did you mean {', '.join(close)}?" if close else ""))
        for stem in owned[name]:
            _check_value(defaults, name, value, chapters[stem][name], stem)
    notebooks_raw = read.mapping("notebooks", {})
    notebooks = read.nested("notebooks", notebooks_raw, known=chapters)
    checked = {}
    for stem in notebooks_raw:
        overrides_raw = notebooks.mapping(stem, {})
        known = [name for name in chapters[stem] if name not in _SET_BY_RUNNER]
        overrides = notebooks.nested(stem, overrides_raw)
        for name, value in overrides_raw.items():
            usable(overrides, name)
            if name not in chapters[stem]:
                overrides.fail(name, f"not a parameter of {stem}.md (its parameters: {', '.join(known) or 'none'})")
            _check_value(overrides, name, value, chapters[stem][name], stem)
        checked[stem] = dict(overrides_raw)
    return {"defaults": dict(defaults_raw), "notebooks": checked}


def notebook_sources(only: Iterable[str] | None = None) -> list[Path]:
    """Chapter sources (MyST ``.md``) in order, optionally only those whose name starts with one of ``only``."""
    sources = sorted(NOTEBOOK_DIR.glob("[0-9][0-9]_*.md"))
    if only:
        wanted = [prefix.strip() for prefix in only if prefix.strip()]
        sources = [s for s in sources if any(s.stem.startswith(prefix) for prefix in wanted)]
        if not sources:
            raise ValueError(f"no notebook matches {wanted}")
    return sources


_ADDED_TAGS = ("injected-parameters", "papermill-error-cell-tag")


def read_chapter(source: str | Path) -> nbformat.NotebookNode:
    """A chapter's MyST source as a notebook (jupytext), ready for papermill; a ``.ipynb`` is read as is."""
    import jupytext

    source = Path(source)
    notebook = nbformat.read(source, as_version=4) if source.suffix == ".ipynb" else jupytext.read(source)
    notebook.metadata.setdefault("kernelspec", {"name": "python3", "display_name": "Python 3", "language": "python"})
    return notebook


def chapter_parameters(source: str | Path) -> list[str]:
    """Names a chapter's ``parameters`` cell assigns (what a parameter set may override; none without one)."""
    return list(chapter_parameter_values(source))


_RUN_PLUMBING = ("output_dir", "results_path", "store_path")
_SET_BY_RUNNER = ("output_dir", "results_path")


def _show_parameters_once(executed: Path) -> None:
    """Fold papermill's injected values into the chapter's own parameters cell and hide the injected cell, so
    a reader sees each parameter once, with the value the run used. The build's own paths (``output_dir``,
    ``results_path``) stay as the chapter writes them: they are plumbing, and absolute paths of the build
    machine mean nothing to a reader."""
    import ast

    notebook = nbformat.read(executed, as_version=4)
    injected = next((c for c in notebook.cells if "injected-parameters" in c.metadata.get("tags", [])), None)
    own = next((c for c in notebook.cells if "parameters" in c.metadata.get("tags", [])), None)
    if injected is None or own is None:
        return
    values = {}
    for node in ast.parse(injected.source).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            values[node.targets[0].id] = ast.get_source_segment(injected.source, node.value)
    lines = []
    for line in own.source.splitlines():
        name, equals, rest = line.partition("=")
        name = name.strip()
        if equals and name.isidentifier() and name in values and name not in _RUN_PLUMBING:
            value, hash_, comment = rest.partition("#")
            old = value.strip()
            if old != values[name]:
                head = f"{line[:len(line) - len(rest)]} {values[name]}"
                line = head + (" " * max(1, len(line) - len(comment) - 1 - len(head)) + "#" + comment if hash_ else "")
        lines.append(line)
    own.source = "\n".join(lines)
    tags = injected.metadata.setdefault("tags", [])
    if "remove-cell" not in tags:
        tags.append("remove-cell")
    nbformat.write(notebook, executed)


def _describe_failure(error: Exception, executed: Path) -> str:
    """'cell N (first line of its source): Error: message', N counted in the *source* notebook (papermill
    adds a parameters cell and error banners to the executed copy, which would shift the index)."""
    ename, evalue = getattr(error, "ename", type(error).__name__), getattr(error, "evalue", str(error))
    where = "before any cell ran"
    try:
        cells = nbformat.read(executed, as_version=4).cells
    except (OSError, ValueError):
        cells = []  # the executed copy is missing when the kernel never started
    source_index = 0
    for cell in cells:
        if any(tag in cell.metadata.get("tags", []) for tag in _ADDED_TAGS):
            continue
        if cell.metadata.get("papermill", {}).get("exception"):
            first_line = (cell.source.strip().splitlines() or [""])[0][:80]
            where = f"cell {source_index} ({first_line!r})"
            break
        source_index += 1
    return f"{where}: {ename}: {evalue}"


TIMINGS_FILE = "timings.json"


def record_timing(path: Path, run: NotebookRun, params: str) -> None:
    """Add one chapter's wall clock to the timings file beside the executed notebooks (other chapters' entries
    are kept, so a run of one chapter updates only its own): seconds, the parameter set, whether it failed and
    when it ran. A teacher's guide or a budget check reads measured times from here, not from notes.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> record_timing(folder / "t.json", NotebookRun("04", folder, folder, None, 61.0), "lab")
    >>> json.loads((folder / "t.json").read_text())["04"]["lab"]["seconds"]
    61.0
    """
    timings = json.loads(path.read_text()) if path.is_file() else {}
    timings.setdefault(run.name, {})[params] = {"seconds": round(run.seconds, 1), "failed": run.error is not None,
                                                "finished": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    path.write_text(json.dumps(timings, indent=1, sort_keys=True))


def run_notebooks(params: str | Path | dict, *, only: Iterable[str] | None = None,
                  out_dir: str | Path = PROJECT_ROOT / "_build" / "executed", raise_on_failure: bool = True,
                  progress: bool = False) -> list[NotebookRun]:
    """Execute the notebooks with papermill; every notebook runs, failures are collected and raised together.

    ``params`` is a set's name, a path, or a dict with ``defaults`` and ``notebooks`` (checked the same way:
    a misspelt override would be injected, ignored and never noticed)."""
    if isinstance(params, dict):
        chosen = {**check_params({k: v for k, v in params.items() if k != "name"},
                                 f"parameter set {params.get('name', '?')!r}"), "name": params.get("name", "?")}
    else:
        chosen = load_params(params)
    sources = notebook_sources(only)
    import papermill

    # Kernels run in notebooks/, so a relative data directory must be made absolute first.
    if os.environ.get("EVALKIT_DATA_DIR"):
        os.environ["EVALKIT_DATA_DIR"] = str(Path(os.environ["EVALKIT_DATA_DIR"]).resolve())
    out = Path(out_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    runs = []
    for source in sources:
        executed, results = out / f"{source.stem}.ipynb", out / f"{source.stem}.results.json"
        results.unlink(missing_ok=True)
        executed.unlink(missing_ok=True)
        parameters = {**chosen["defaults"], **(chosen["notebooks"].get(source.stem) or {}),
                      "output_dir": str(out / source.stem), "results_path": str(results)}
        error, started = None, time.perf_counter()
        try:
            papermill.execute_notebook(read_chapter(source), str(executed), parameters=parameters, cwd=str(NOTEBOOK_DIR),
                                       kernel_name="python3", progress_bar=progress, log_output=False)
        except Exception as failure:  # papermill raises its own error type for a failing cell
            error = f"{source.name} failed in {_describe_failure(failure, executed)}"
        if executed.is_file():
            _show_parameters_once(executed)
        runs.append(NotebookRun(source.stem, executed, results, error, time.perf_counter() - started))
        record_timing(out / TIMINGS_FILE, runs[-1], chosen["name"])
    failures = [run.error for run in runs if run.error]
    if failures and raise_on_failure:
        raise NotebookFailure("\n".join(failures))
    return runs


_SOLUTION = re.compile(r"```\{solution-start\}.*?```\{solution-end\}\s*```", re.S)


def strip_solutions(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The notebook without its exercises' solutions: everything from a ``{solution-start}`` directive to
    its ``{solution-end}``, the code cells between included (sphinx-exercise's own ``hide_solutions`` cannot
    remove gated solutions that span cells)."""
    kept, inside = [], False
    for cell in notebook.cells:
        if cell.cell_type != "markdown":
            if not inside:
                kept.append(cell)
            continue
        text = cell.source
        if inside:
            end = text.find("```{solution-end}")
            if end < 0:
                continue
            text = text[text.index("```", end + 3) + 3:]
            inside = False
        text = _SOLUTION.sub("", text)
        start = text.find("```{solution-start}")
        if start >= 0:
            text, inside = text[:start], True
        if text.strip():
            cell.source = text.strip()
            kept.append(cell)
    notebook.cells = kept
    return notebook


def build_book(executed_dir: str | Path, build_dir: str | Path = PROJECT_ROOT / "_build" / "book", *,
               student: bool = False) -> Path:
    """Stage the book sources with the executed notebooks and build the HTML with ``-W --keep-going``.

    ``student`` leaves the exercises' solutions out (:func:`strip_solutions`); by default they are in the
    pages, folded in toggles. Returns the built ``index.html``. Raises ``RuntimeError`` with the
    builder's output on any warning.
    """
    executed, build = Path(executed_dir).resolve(), Path(build_dir).resolve()
    source = build / "src"
    shutil.rmtree(source, ignore_errors=True)
    source.mkdir(parents=True)
    for name in BOOK_FILES:
        origin = PROJECT_ROOT / name
        if origin.is_dir():
            shutil.copytree(origin, source / name)
        elif origin.exists():
            shutil.copy2(origin, source / name)
    (source / "notebooks").mkdir()
    for notebook in sorted(executed.glob("[0-9][0-9]_*.ipynb")):
        shutil.copy2(notebook, source / "notebooks" / notebook.name)
        if student:
            staged = nbformat.read(source / "notebooks" / notebook.name, as_version=4)
            nbformat.write(strip_solutions(staged), source / "notebooks" / notebook.name)
        figures = executed / notebook.stem
        if figures.is_dir():
            shutil.copytree(figures, source / "notebooks" / notebook.stem)
    jupyter_book = Path(sys.executable).parent / "jupyter-book"
    command = [str(jupyter_book if jupyter_book.exists() else "jupyter-book"), "build", str(source),
               "--path-output", str(build), "-W", "--keep-going", "--all"]
    edition = {**os.environ, "EVALKIT_EDITION": "student" if student else "instructor"}  # evalkit.book.links
    completed = subprocess.run(command, capture_output=True, text=True, env=edition)
    if completed.returncode != 0:
        raise RuntimeError(f"jupyter-book build failed ({completed.returncode}):\n"
                           f"{completed.stdout[-6000:]}\n{completed.stderr[-6000:]}")
    index = build / "_build" / "html" / "index.html"
    if not index.is_file():
        raise RuntimeError(f"jupyter-book reported success but {index} is missing:\n{completed.stdout[-3000:]}")
    return index
