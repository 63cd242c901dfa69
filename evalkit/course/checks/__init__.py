"""Every exercise's checks, one module per chapter (``ch00`` ... ``ch06``), gathered by label."""
from __future__ import annotations

from evalkit.course.core import Exercise
from evalkit.course.checks import ch00, ch01, ch02, ch03, ch04, ch05, ch06

__all__ = ["EXERCISES", "exercise", "chapter_exercises"]

EXERCISES: dict[str, Exercise] = {item.label: item for module in (ch00, ch01, ch02, ch03, ch04, ch05, ch06)
                                  for item in module.EXERCISES}


def exercise(label: str) -> Exercise:
    """The exercise of ``label`` (as in the chapter's ``{exercise}`` directive)."""
    try:
        return EXERCISES[label]
    except KeyError:
        import difflib

        close = difflib.get_close_matches(label, list(EXERCISES), n=3)
        raise KeyError(f"no exercise {label!r}" + (f"; did you mean {', '.join(close)}?" if close else
                                                   f" (exercises: {', '.join(EXERCISES)})")) from None


def chapter_exercises(chapter: str) -> list[Exercise]:
    """The exercises of one chapter (its notebook stem, e.g. ``02_agreement``), in the chapter's order."""
    return [item for item in EXERCISES.values() if item.chapter == chapter]
