"""``evalkit course release``: the student notebooks of every chapter, solutions left out.

Per chapter ``NN_name`` the release folder gets ``NN_name/NN_name.md`` (MyST, what JupyterLab opens through
jupytext), ``NN_name/NN_name.ipynb`` (for any notebook tool) and ``NN_name.zip`` holding both. The solutions
are cut with :func:`evalkit.book.runner.strip_solutions`, outputs and execution counts are cleared, and the
notebook's metadata names its chapter and exercises (``evalkit.chapter``, ``evalkit.exercises``) so a
submission is recognised even when renamed. Hidden checks never live in a notebook (they are in
:mod:`evalkit.course.checks`), so nothing of them can reach the release.
"""
from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import nbformat

from evalkit.course.checks import chapter_exercises
from evalkit.data.folders import out_folder

__all__ = ["ReleasedChapter", "release", "student_notebook", "answer_cells", "with_parameter_set", "CHECK_CALL"]

#: A cell that runs an exercise's checks: ``course.check("ch2-half", ...)`` (any module alias).
CHECK_CALL = re.compile(r"""\bcheck\(\s*["'](?P<label>ch\d+-[\w-]+)["']""")
_LEFTOVERS = ("{solution-start}", "{solution-end}", "{solution}")


@dataclass(frozen=True)
class ReleasedChapter:
    """What the release wrote for one chapter."""

    chapter: str                 # the notebook's stem, e.g. 02_agreement
    markdown: Path               # the student MyST file
    notebook: Path               # the same as .ipynb, outputs cleared
    archive: Path                # both in one zip
    exercises: tuple[str, ...]   # the labels of its exercises, in order


def answer_cells(notebook: nbformat.NotebookNode) -> dict[str, int]:
    """Each exercise label with the index of the first code cell that calls its check."""
    found: dict[str, int] = {}
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type == "code":
            for match in CHECK_CALL.finditer(cell.source):
                found.setdefault(match["label"], index)
    return found


def with_parameter_set(notebook: nbformat.NotebookNode, chapter: str, params: str | Path | None
                       ) -> nbformat.NotebookNode:
    """``notebook`` with a parameter set's values for ``chapter`` (``lab``, ``smoke``, a YAML path) in a cell
    right after its ``parameters`` cell, tagged ``injected-parameters`` as papermill tags its own; a cell of
    that tag already there is replaced. Unchanged when ``params`` is None or the set overrides nothing here.
    Raises ``ValueError`` when the notebook has no ``parameters`` cell to follow."""
    if params is None:
        return notebook
    from evalkit.book.runner import load_params

    chosen = load_params(params)
    values = {**chosen["defaults"], **(chosen["notebooks"].get(chapter) or {})}
    if not values:
        return notebook
    tagged = [i for i, cell in enumerate(notebook.cells) if "parameters" in cell.metadata.get("tags", [])]
    if not tagged:
        raise ValueError(f"{chapter}: no cell tagged 'parameters', so the {chosen['name']!r} set has no place")
    cells = [cell for cell in notebook.cells if "injected-parameters" not in cell.metadata.get("tags", [])]
    index = next(i for i, cell in enumerate(cells) if "parameters" in cell.metadata.get("tags", []))
    source = "\n".join([f"# The {chosen['name']!r} parameter set's sizes for this chapter "
                        f"(params/{chosen['name']}.yml)", *(f"{name} = {value!r}" for name, value in values.items())])
    cells.insert(index + 1, nbformat.v4.new_code_cell(source, metadata={"tags": ["injected-parameters"]}))
    notebook.cells = cells
    return notebook


def student_notebook(source: str | Path, *, params: str | Path | None = None) -> nbformat.NotebookNode:
    """A chapter as a student gets it: no solutions, no outputs, its exercises named in the metadata.

    Raises ``ValueError`` when an exercise of the chapter has no answer cell (a student could not answer
    it) or a solution directive survived the cut. ``params`` (e.g. ``"lab"``) puts that parameter set's
    values in the notebook (:func:`with_parameter_set`), so the students run and are graded at its sizes."""
    from evalkit.book.runner import read_chapter, strip_solutions

    source = Path(source)
    notebook = with_parameter_set(strip_solutions(read_chapter(source)), source.stem, params)
    labels = [item.label for item in chapter_exercises(source.stem)]
    cells = answer_cells(notebook)
    missing = [label for label in labels if label not in cells]
    if missing:
        raise ValueError(f"{source.name}: no answer cell (a code cell calling course.check) for "
                         f"{', '.join(missing)}")
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        for key in ("execution", "papermill", "collapsed", "scrolled"):
            cell.metadata.pop(key, None)
        leftover = next((mark for mark in _LEFTOVERS if mark in cell.source), None)
        if leftover:
            raise ValueError(f"{source.name}: a {leftover} directive is left after cutting the solutions")
    notebook.metadata.pop("papermill", None)
    notebook.metadata["evalkit"] = {"chapter": source.stem, "exercises": labels, "edition": "student"}
    if params is not None:  # the grader runs the key at the same sizes
        from evalkit.book.runner import load_params

        notebook.metadata["evalkit"]["params"] = load_params(params)["name"]
    notebook.metadata.setdefault("jupytext", {})["notebook_metadata_filter"] = "evalkit"  # kept in the MyST header
    return notebook


def _refuse_links(*paths: Path) -> None:
    """The release writes only into folders and files of its own: a symbolic link planted where it writes
    would send the chapter's text to whatever the link names."""
    for path in paths:
        if path.is_symlink():
            raise ValueError(f"{path}: a symbolic link where the release writes; remove it (the release writes "
                             "only into real folders and files)")


def release(out_dir: str | Path, *, only: Iterable[str] | None = None,
            sources: Iterable[str | Path] | None = None, params: str | Path | None = None) -> list[ReleasedChapter]:
    """Write every chapter's student notebooks (MyST and ``.ipynb``) and a zip of the two into ``out_dir``
    (``only``: chapter prefixes such as ``02``; ``sources``: chapter files other than the book's; ``params``:
    a parameter set whose sizes the notebooks carry, e.g. ``"lab"``)."""
    import jupytext

    from evalkit.book.runner import notebook_sources

    out = out_folder(out_dir)
    released = []
    for source in (map(Path, sources) if sources is not None else notebook_sources(only)):
        notebook = student_notebook(source, params=params)
        folder = out / source.stem
        markdown, ipynb = folder / f"{source.stem}.md", folder / f"{source.stem}.ipynb"
        _refuse_links(out, folder, markdown, ipynb, out / f"{source.stem}.zip")
        folder.mkdir(parents=True, exist_ok=True)
        markdown.write_text(jupytext.writes(notebook, fmt="md:myst"), encoding="utf-8")
        nbformat.validate(notebook)
        nbformat.write(notebook, ipynb)
        archive = out / f"{source.stem}.zip"
        with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
            for path in (markdown, ipynb):
                bundle.write(path, f"{source.stem}/{path.name}")
        released.append(ReleasedChapter(source.stem, markdown, ipynb, archive,
                                        tuple(notebook.metadata["evalkit"]["exercises"])))
    return released
