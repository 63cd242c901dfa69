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
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import nbformat
import yaml

__all__ = ["PROJECT_ROOT", "NotebookFailure", "NotebookRun", "load_params", "notebook_sources", "read_chapter",
           "chapter_parameters",
           "run_notebooks", "build_book"]

PROJECT_ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK_DIR = PROJECT_ROOT / "notebooks"
PARAMS_DIR = PROJECT_ROOT / "params"
BOOK_FILES = ("_config.yml", "_toc.yml", "references.bib", "book", "_static")  # _static: the book's CSS


class NotebookFailure(RuntimeError):
    """One or more notebooks failed; the message names each notebook and cell."""


@dataclass(frozen=True)
class NotebookRun:
    """Where a notebook's executed copy and recorded results went, and whether it failed."""

    name: str
    executed: Path
    results: Path
    error: str | None = None


def load_params(name_or_path: str | Path) -> dict:
    """A parameter set by name (``smoke``, ``full``) or by path to a YAML file."""
    path = Path(name_or_path)
    if not path.suffix:
        path = PARAMS_DIR / f"{name_or_path}.yml"
    if not path.is_file():
        known = sorted(p.stem for p in PARAMS_DIR.glob("*.yml"))
        raise FileNotFoundError(f"no parameter set {str(name_or_path)!r}: {path} does not exist "
                                f"(named sets: {', '.join(known)})")
    params = yaml.safe_load(path.read_text()) or {}
    unknown = set(params) - {"defaults", "notebooks"}
    if unknown:
        raise ValueError(f"{path}: unknown top-level keys {sorted(unknown)} (allowed: defaults, notebooks)")
    return {"defaults": params.get("defaults") or {}, "notebooks": params.get("notebooks") or {},
            "name": path.stem}


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
    import ast

    cells = [c for c in read_chapter(source).cells if "parameters" in c.metadata.get("tags", [])]
    if len(cells) > 1:
        raise ValueError(f"{source}: {len(cells)} cells are tagged 'parameters'; papermill needs one")
    return [] if not cells else [node.targets[0].id for node in ast.parse(cells[0].source).body
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)]


_RUN_PLUMBING = ("output_dir", "results_path", "store_path")


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


def run_notebooks(params: str | Path | dict, *, only: Iterable[str] | None = None,
                  out_dir: str | Path = PROJECT_ROOT / "_build" / "executed", raise_on_failure: bool = True,
                  progress: bool = False) -> list[NotebookRun]:
    """Execute the notebooks with papermill; every notebook runs, failures are collected and raised together."""
    import papermill

    # Kernels run in notebooks/, so a relative data directory must be made absolute first.
    if os.environ.get("EVALKIT_DATA_DIR"):
        os.environ["EVALKIT_DATA_DIR"] = str(Path(os.environ["EVALKIT_DATA_DIR"]).resolve())
    chosen = params if isinstance(params, dict) else load_params(params)
    out = Path(out_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    runs = []
    sources = notebook_sources(only)
    for source in sources:  # a misspelt override would be injected, ignored and never noticed
        unknown = set(chosen["notebooks"].get(source.stem) or {}) - set(chapter_parameters(source))
        if unknown:
            raise ValueError(f"parameter set {chosen.get('name', '?')!r}, notebook {source.stem}: "
                             f"{sorted(unknown)} are not parameters of {source.name}")
    for source in sources:
        executed, results = out / f"{source.stem}.ipynb", out / f"{source.stem}.results.json"
        results.unlink(missing_ok=True)
        executed.unlink(missing_ok=True)
        parameters = {**chosen["defaults"], **(chosen["notebooks"].get(source.stem) or {}),
                      "output_dir": str(out / source.stem), "results_path": str(results)}
        error = None
        try:
            papermill.execute_notebook(read_chapter(source), str(executed), parameters=parameters, cwd=str(NOTEBOOK_DIR),
                                       kernel_name="python3", progress_bar=progress, log_output=False)
        except Exception as failure:  # papermill raises its own error type for a failing cell
            error = f"{source.name} failed in {_describe_failure(failure, executed)}"
        if executed.is_file():
            _show_parameters_once(executed)
        runs.append(NotebookRun(source.stem, executed, results, error))
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
    completed = subprocess.run(command, capture_output=True, text=True)
    if completed.returncode != 0:
        raise RuntimeError(f"jupyter-book build failed ({completed.returncode}):\n"
                           f"{completed.stdout[-6000:]}\n{completed.stderr[-6000:]}")
    index = build / "_build" / "html" / "index.html"
    if not index.is_file():
        raise RuntimeError(f"jupyter-book reported success but {index} is missing:\n{completed.stdout[-3000:]}")
    return index
