"""The course edition: exercises students check themselves, a student release and grading.

In a chapter, each exercise is followed by one cell where the student assigns the answer and runs the
exercise's public checks::

    half_ceilings = ...  # {10: ceiling, 50: ceiling, 200: ceiling}
    course.check("ch2-half", half_ceilings=half_ceilings)

The checks (:mod:`evalkit.course.checks`, one module per chapter) compute the expected value from the
chapter's own data and say what is wrong, never the answer. The teacher's hidden checks run only when grading
(``evalkit course grade``); ``evalkit course release`` writes the student notebooks without solutions.
"""
from __future__ import annotations

import sys
from typing import Any

from evalkit.course.checks import EXERCISES, chapter_exercises, exercise
from evalkit.course.core import Exercise, Feedback, Wrong, run_exercise

__all__ = ["check", "grade_env", "EXERCISES", "Exercise", "Feedback", "Wrong", "exercise", "chapter_exercises"]


def check(label: str, /, **answers: Any) -> Feedback:
    """Run exercise ``label``'s public checks on ``answers`` (keyword arguments named like the exercise's
    answer variables; names not given are read from the calling notebook), with the notebook's variables as
    the data. Returns the feedback, which a notebook shows as the cell's output; never raises on a wrong
    answer."""
    env = sys._getframe(1).f_globals
    item = exercise(label)
    unknown = [name for name in answers if name not in item.answers]
    if unknown:
        raise TypeError(f"{label} takes {', '.join(item.answers)}; not {', '.join(unknown)}")
    return run_exercise(item, answers, env)


def grade_env(chapter: str, env: dict[str, Any]) -> list[Feedback]:
    """Every exercise of ``chapter`` checked, public and hidden, on the answers ``env`` holds (the namespace
    of a notebook that has run)."""
    return [run_exercise(item, {}, env, hidden=True) for item in chapter_exercises(chapter)]
