"""The answer key: the teacher's chapter, run once per chapter by the grader, where every exercise's public
and hidden checks run on the submissions' answers; and the stub that stands in for the checks inside a
submission's run.

The key's kernel runs the released chapter (:func:`evalkit.course.release.student_notebook`: the teacher's
cells, no solution) from the key folder (the book's ``notebooks/`` by default), then
:func:`evalkit.course.answers.check_all` on every submission's answers, decoded from data. The checks'
expected values are computed there from the teacher's own objects, so nothing a submission's kernel does
reaches them. Inside a submission's run the checks package is :func:`checks_stub`'s: labels, answer names
and points only.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import nbformat

from evalkit.course.answers import encode
from evalkit.course.checks import EXERCISES, chapter_exercises
from evalkit.course.intake import last_line, read_json
from evalkit.course.sandbox import Limits, supervise

__all__ = ["check_chapter", "checks_stub", "prepared", "CHECKS_PACKAGE"]

#: The folder of :mod:`evalkit.course.checks`, which a submission's run sees as the stub.
CHECKS_PACKAGE = Path(__file__).resolve().with_name("checks")


def prepared(notebook_text: str, final: str) -> tuple[str, int]:
    """The notebook with ``final`` as its last cell, and how many cells came before it."""
    notebook = nbformat.reads(notebook_text, as_version=4)
    graded = len(notebook.cells)
    notebook.cells.append(nbformat.v4.new_code_cell(final))
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nbformat.writes(notebook), graded


def check_chapter(chapter: str, answers: dict[str, dict[str, Any]], key_dir: Path, params: str | None,
                  private: Path, limits: Limits, active: list, *, per_submission: float | None = None
                  ) -> dict[str, dict]:
    """The teacher's chapter ``chapter`` (from ``key_dir``, at ``params``) run once in a kernel of the
    grader's, and every exercise's checks there on each submission's ``answers`` (id -> name -> value), within
    ``limits.timeout`` seconds in all and ``per_submission`` seconds for one submission's checks (the grader
    gives the key :func:`evalkit.course.grade.key_limits`, which grow with the number of submissions).
    Returns id -> label -> outcome, or id -> {"problem": reason} when the key could not run or could not be
    given that submission's answers. Only the chapter's answer names are passed on: a submission's other
    names are never encoded."""
    source = next((key_dir / f"{chapter}{suffix}" for suffix in (".md", ".ipynb")
                   if (key_dir / f"{chapter}{suffix}").is_file()), None)

    def fail(reason: str) -> dict[str, dict]:
        return {key: {"problem": reason} for key in answers}

    if source is None:
        return fail(f"the key has no {chapter} chapter in {key_dir}")
    from evalkit.course.release import student_notebook

    try:
        notebook = student_notebook(source, params=params)
    except ValueError as reason:
        return fail(f"the key's {chapter} could not be prepared: {reason}")
    base = private / "key" / f"{chapter}-{params or 'book'}".replace("/", "_")
    cwd, home = base / "cwd", base / "home"
    for folder in (cwd, home / "tmp", home / "runtime"):
        folder.mkdir(parents=True, exist_ok=True)
    answers_in, checked = base / "answers-in.json", base / "checked.json"
    names = {name for item in chapter_exercises(chapter) for name in item.answers}
    passed, refused = [], {}
    for key, given in answers.items():
        try:  # one submission's answers that cannot be passed on cost only its own rows
            passed.append(f"{json.dumps(key)}: " + json.dumps({name: encode(value) for name, value in given.items()
                                                               if name in names}))
        except Exception as error:  # MemoryError included
            refused[key] = {"problem": "the grader could not pass these answers to the key "
                                       f"({type(error).__name__})"}
    if not passed:
        return refused
    answers_in.write_text("{" + ", ".join(passed) + "}")
    del passed
    final = ("from evalkit.course.answers import check_all as _evalkit_check_all\n"
             f"_evalkit_check_all(globals(), {chapter!r}, {str(answers_in)!r}, {str(checked)!r}, "
             f"seconds={per_submission!r})")
    text, graded = prepared(nbformat.writes(notebook), final)
    (base / "key.ipynb").write_text(text)
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONUNBUFFERED": "1",
           "JUPYTER_RUNTIME_DIR": str(home / "runtime")}
    if env.get("EVALKIT_DATA_DIR"):
        env["EVALKIT_DATA_DIR"] = str(Path(env["EVALKIT_DATA_DIR"]).resolve())
    command = [sys.executable, "-m", "evalkit.course.worker", str(base / "key.ipynb"), str(base),
               "--cwd", str(cwd), "--graded", str(graded)]
    outcome = supervise(command, base, limits, None, env, [], [], active)
    results = read_json(checked, limit=64 * 2**20)
    if not isinstance(results, dict):
        return fail(f"the key's {chapter} did not run to its end ({outcome}): "
                    f"{last_line(base / 'worker.log') or 'no output'}") | refused
    return {key: refused.get(key) or results.get(key, {"problem": "the key's checks left no result"})
            for key in answers}


def checks_stub(private: Path) -> Path:
    """A package that stands in for :mod:`evalkit.course.checks` inside a run: the exercises' labels, answer
    names and points, and one public check that says the answer is checked when graded (no expected value,
    no hidden check)."""
    folder = private / "checks-stub"
    folder.mkdir(mode=0o755)
    items = ",\n    ".join(
        f"Exercise({item.label!r}, {item.chapter!r}, {item.answers!r}, ({'_checked_when_graded'},), (), "
        f"asks={item.asks!r}, points={item.points!r})" for item in EXERCISES.values())
    (folder / "__init__.py").write_text(f'''"""The exercises without their checks: the grader checks answers."""
from evalkit.course.core import Exercise, Wrong

__all__ = ["EXERCISES", "exercise", "chapter_exercises"]


def _checked_when_graded(work):
    raise Wrong("this answer is checked by the grader, outside the notebook")


EXERCISES = {{item.label: item for item in (
    {items},
)}}


def exercise(label):
    return EXERCISES[label]


def chapter_exercises(chapter):
    return [item for item in EXERCISES.values() if item.chapter == chapter]
''')
    os.chmod(folder / "__init__.py", 0o644)
    return folder
