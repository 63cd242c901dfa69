"""One submission graded in a process of its own: ``python -m evalkit.course.worker SUBMISSION RESULT``.

The worker reads the submission (``.ipynb`` or a MyST ``.md``), finds its chapter (the release's
``evalkit.chapter`` metadata, else the labels of its ``course.check`` cells, else its file name), executes
every cell in a fresh kernel with errors allowed (a cell that raises does not stop the rest), and then runs
each exercise's public and hidden checks in that kernel on the answers the notebook left. It writes
``RESULT`` (JSON) and, before executing, ``RESULT.plan.json`` (chapter and exercises), so that the parent
can still write one row per exercise when it has to kill a notebook that hangs; the kernel's process group
goes into ``RESULT.kernel`` for the same reason. A submission that cannot be read is a result, not a crash.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import nbformat

from .checks import EXERCISES, chapter_exercises
from .release import answer_cells, with_parameter_set

__all__ = ["NotASubmission", "read_submission", "identify", "record", "main"]

CHAPTERS = tuple(dict.fromkeys(item.chapter for item in EXERCISES.values()))


class NotASubmission(ValueError):
    """The file is no notebook, or no chapter's: the message is the reason shown in the grades."""


def read_submission(path: Path) -> nbformat.NotebookNode:
    """The notebook in ``path`` (``.ipynb``: nbformat, validated; ``.md``: jupytext's MyST reader)."""
    suffix = path.suffix.lower()
    try:
        if suffix == ".ipynb":
            notebook = nbformat.read(path, as_version=4)
            nbformat.validate(notebook)
            return notebook
        if suffix == ".md":
            import jupytext

            notebook = jupytext.read(path, fmt="md:myst")
            if not any(cell.cell_type == "code" for cell in notebook.cells):
                raise NotASubmission("not a notebook: a Markdown file without a single code cell")
            return notebook
    except NotASubmission:
        raise
    except Exception as error:  # JSON errors, schema errors, undecodable bytes
        raise NotASubmission(f"not a notebook: {path.name} could not be read as one "
                             f"({type(error).__name__}: {_short(str(error))})") from None
    raise NotASubmission(f"not a notebook: {path.name} is a {suffix or 'suffix-less'} file (hand in the "
                         "chapter's .ipynb or .md)")


def identify(notebook: nbformat.NotebookNode, path: Path) -> str:
    """The chapter a submission belongs to."""
    meta = notebook.metadata.get("evalkit", {})
    if isinstance(meta, dict) and meta.get("chapter") in CHAPTERS:
        return meta["chapter"]
    labels = [label for label in answer_cells(notebook) if label in EXERCISES]
    if labels:
        chapters = [EXERCISES[label].chapter for label in labels]
        return max(set(chapters), key=chapters.count)
    named = [chapter for chapter in CHAPTERS if chapter in path.name or path.name.startswith(chapter[:3])]
    if len(named) == 1:
        return named[0]
    raise NotASubmission("not a chapter's notebook: no course.check cell, no evalkit chapter in its metadata "
                         "and no chapter in its file name")


def record(env: dict[str, Any], chapter: str, path: str) -> None:
    """Run in the graded kernel, after the student's cells: every exercise's public and hidden checks on the
    answers in ``env``, written as JSON to ``path``."""
    from . import grade_env

    rows = []
    for feedback in grade_env(chapter, env):
        public = [r for r in feedback.results if not r.hidden]
        hidden = [r for r in feedback.results if r.hidden]
        first = feedback.failures[0] if feedback.failures else None
        rows.append({"exercise": feedback.exercise.label, "points": feedback.exercise.points,
                     "score": feedback.score,
                     "public": _verdict(public, len(feedback.exercise.public)),
                     "hidden": _verdict(hidden, len(feedback.exercise.hidden)),
                     "check": first.check if first else "", "hidden_check": bool(first and first.hidden),
                     "message": first.message if first else ""})
    Path(path).write_text(json.dumps(rows, indent=1))


def _verdict(results: list, expected: int) -> str:
    if not results:
        return "not run"
    if any(not r.passed for r in results):
        return "failed"
    return "passed" if len(results) == expected else "not run"


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _cell_errors(notebook: nbformat.NotebookNode, graded: int) -> list[dict]:
    errors = []
    for index, cell in enumerate(notebook.cells[:graded]):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                first_line = (cell.source.strip().splitlines() or [""])[0]
                errors.append({"cell": index, "first_line": _short(first_line, 80),
                               "error": _short(f"{output.get('ename')}: {output.get('evalue')}")})
    return errors


def _execute(notebook: nbformat.NotebookNode, chapter: str, result: Path, workdir: Path) -> dict:
    from nbclient import NotebookClient
    from nbclient.exceptions import DeadKernelError

    checks = result.with_name(result.name + ".checks.json")
    graded = len(notebook.cells)
    notebook.cells.append(nbformat.v4.new_code_cell(
        "from evalkit.course.worker import record as _evalkit_record\n"
        f"_evalkit_record(globals(), {chapter!r}, {str(checks)!r})"))
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    client = NotebookClient(notebook, kernel_name="python3", allow_errors=True, timeout=None,
                            resources={"metadata": {"path": str(workdir)}})

    def kernel_started(**_: Any) -> None:
        provisioner = getattr(client.km, "provisioner", None)
        pgid = getattr(provisioner, "pgid", None) or getattr(provisioner, "pid", None)
        if pgid:
            result.with_name(result.name + ".kernel").write_text(str(pgid))

    client.on_notebook_start = kernel_started
    problem = None
    try:
        client.execute()
    except DeadKernelError as error:
        problem = f"the kernel died while running the notebook ({_short(str(error), 120)})"
    errors = _cell_errors(notebook, graded)
    notebook.cells = notebook.cells[:graded]
    nbformat.write(notebook, result.with_name(result.name + ".executed.ipynb"))
    exercises = json.loads(checks.read_text()) if checks.is_file() else None
    if exercises is None and problem is None:
        problem = "the checks could not run after the notebook (see the executed copy)"
    return {"errors": errors, "exercises": exercises, "problem": problem}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evalkit.course.worker", description=__doc__)
    parser.add_argument("submission", type=Path)
    parser.add_argument("result", type=Path)
    parser.add_argument("--workdir", type=Path, help="the kernel's working folder (default: beside RESULT)")
    parser.add_argument("--params", help="a parameter set whose sizes the notebook runs at (default: its own)")
    args = parser.parse_args(argv)
    result: Path = args.result
    outcome: dict[str, Any] = {"submission": str(args.submission), "chapter": None, "exercises": None,
                               "missing": [], "errors": [], "problem": None}
    try:
        notebook = read_submission(args.submission)
        chapter = identify(notebook, args.submission)
    except NotASubmission as reason:
        outcome["problem"] = str(reason)
        result.write_text(json.dumps(outcome, indent=1))
        return 0
    try:
        notebook = with_parameter_set(notebook, chapter, args.params)
    except ValueError as reason:  # its parameters cell was deleted: it cannot run at the set's sizes
        outcome.update(chapter=chapter, refused=True, problem=f"cannot run at the {args.params!r} sizes: {reason}")
        result.write_text(json.dumps(outcome, indent=1))
        return 0
    labels = [item.label for item in chapter_exercises(chapter)]
    cells = answer_cells(notebook)
    outcome.update(chapter=chapter, missing=[label for label in labels if label not in cells],
                   answer_cells={label: cells[label] for label in labels if label in cells})
    result.with_name(result.name + ".plan.json").write_text(json.dumps({**outcome, "labels": labels}, indent=1))
    workdir = args.workdir or result.with_name(result.name + ".work")
    workdir.mkdir(parents=True, exist_ok=True)
    outcome.update(_execute(notebook, chapter, result, workdir))
    result.write_text(json.dumps(outcome, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
