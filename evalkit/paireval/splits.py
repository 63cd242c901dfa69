"""Leak-free training data for the judges: nothing an evaluation set contains may reach training.

DailyDialog's official splits overlap (test and validation dialogues repeat train dialogues verbatim), many
DailyDialog++ contexts open with the same turns as a DailyDialog train dialogue, and many Khalid & Lee
(context turn, reply) pairs are adjacent train turns. A judge trained on such dialogues has seen the answer.

What counts as held-out text (after :func:`~evalkit.data.overlap.normalise`: lower case, punctuation and spacing
removed), the units of :mod:`evalkit.data.overlap`:

* every **adjacent pair of turns** in a held-out dialogue, context, or (last context turn, reply) — the unit
  a judge is asked about;
* every held-out **utterance of at least** :data:`~evalkit.data.overlap.DISTINCT_WORDS` **words** (shorter
  ones — "thank you .", "ok ." — are common to any two conversations and say nothing about a particular one).

A training dialogue that contains any of them is removed whole; :class:`LeakReport` counts what was removed
and why, per held-out source. :func:`leaked_units` is the check the test suite runs on the training data.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from evalkit.data.dialogue import Texts
from evalkit.data.overlap import DISTINCT_WORDS, conversation_units, normalise

__all__ = ["DISTINCT_WORDS", "normalise", "held_out_units", "LeakReport", "remove_held_out", "leaked_units"]


def held_out_units(conversations: Iterable[Texts]) -> set[str]:
    """Every held-out unit of a collection of conversations (each a list of turns, the reply included).

    >>> sorted(held_out_units([["Hi .", "Hello there !"]]))
    ['hi\u241ehello there']
    """
    units: set[str] = set()
    for turns in conversations:
        units |= conversation_units(turns)
    return units


@dataclass
class LeakReport:
    """Training dialogues before and after the cut, and how many each held-out source removed (a dialogue
    that several sources contain is counted under each)."""

    dialogues_before: int = 0
    dialogues_after: int = 0
    removed_by: dict[str, int] = field(default_factory=dict)

    @property
    def removed(self) -> int:
        return self.dialogues_before - self.dialogues_after

    def rows(self) -> list[tuple[str, int]]:
        """(what, count) rows for a table."""
        lines = [("training dialogues before", self.dialogues_before)]
        lines += [(f"removed: shares text with {source}", n) for source, n in self.removed_by.items()]
        lines += [("removed in all", self.removed), ("training dialogues kept", self.dialogues_after)]
        return lines


def remove_held_out(dialogues: Sequence[Texts], held_out: Mapping[str, Iterable[Texts]]
                    ) -> tuple[list[list[str]], LeakReport]:
    """``dialogues`` without every one that contains a unit of any held-out source.

    ``held_out`` maps a source's name (for the report) to its conversations.

    >>> train = [["a b", "c d"], ["e f", "g h"], ["i j", "k l"]]
    >>> kept, report = remove_held_out(train, {"test": [["E F", "g h!"]]})
    >>> kept, report.removed_by
    ([['a b', 'c d'], ['i j', 'k l']], {'test': 1})
    """
    by_source = {name: held_out_units(conversations) for name, conversations in held_out.items()}
    report = LeakReport(dialogues_before=len(dialogues), removed_by={name: 0 for name in by_source})
    kept = []
    for dialogue in dialogues:
        units = conversation_units(dialogue)
        hits = [name for name, held in by_source.items() if units & held]
        for name in hits:
            report.removed_by[name] += 1
        if not hits:
            kept.append(list(dialogue))
    report.dialogues_after = len(kept)
    return kept, report


def leaked_units(training: Iterable[Texts], held_out: Iterable[Texts]) -> set[str]:
    """Held-out units that occur in the training conversations (empty when the cut worked).

    >>> leaked_units([["x y", "z w"]], [["X Y", "z, w"]])
    {'x y\u241ez w'}
    """
    return held_out_units(training) & held_out_units(held_out)
