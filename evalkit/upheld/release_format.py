"""The UPHELD release's format (part of :mod:`evalkit.upheld.release`, which re-exports these names): its three
subsets, its three labels with the release's spelling of every value, and how one cell is read — a label
(the integer before the colon, checked against the known text) and a ``chat_history`` (``user:`` /
``assistant:`` turns between blank lines). A cell that cannot be read raises :class:`UpheldFormatError` or
is reported by status, never guessed at.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = ["Subset", "SUBSETS", "DATASET_NAMES", "SET_LABELS", "set_label", "LabelSpec", "LABELS", "LABEL_NAMES",
           "TEXT_COLUMNS", "ID_COLUMNS", "UpheldFormatError", "parse_label", "parse_history"]

Subset = Literal["main", "llm_arena", "topical_chat"]
SUBSETS: dict[str, str] = {"main": "", "llm_arena": "additional_resources/llm_arena_annotated/",
                           "topical_chat": "additional_resources/topical_chat_annotated/"}
DATASET_NAMES = {"main": "upheld", "llm_arena": "llm_arena", "topical_chat": "topical_chat"}
#: The one label each set is shown under in every table, printed line and sentence of the book, and on a judge
#: card (:data:`evalkit.judgecard.SET_NAMES`), keyed by the loader's subset name and by the dataset name.
SET_LABELS = {"main": "upheld-main", "upheld": "upheld-main", "llm_arena": "upheld-llm_arena",
              "topical_chat": "upheld-topical_chat"}


def set_label(name: str) -> str:
    """The label the set ``name`` (a subset or dataset name) is shown under; any other name as it is.

    >>> set_label("main"), set_label("upheld"), set_label("topical_chat"), set_label("fed")
    ('upheld-main', 'upheld-main', 'upheld-topical_chat', 'fed')
    >>> from evalkit.judgecard._names import SET_NAMES  # the card spells them the same way
    >>> set(SET_LABELS.values()) <= set(SET_NAMES)
    True
    """
    return SET_LABELS.get(name, name)


@dataclass(frozen=True)
class LabelSpec:
    """One annotation dimension: its column, the allowed values and the release's spelling of each."""

    name: str
    column: str
    spellings: dict[int, str]

    @property
    def scale(self) -> tuple[int, ...]:
        return tuple(self.spellings)

    @property
    def maximum(self) -> int:
        return max(self.spellings)


LABELS: dict[str, LabelSpec] = {
    spec.name: spec for spec in (
        LabelSpec("content", "score_task_1_content", {
            1: "1: Strongly Disagree -- no content overlap",
            2: "2: Disagree - very little overlap of content",
            3: "3: Neutral  - some overlap of content",
            4: "4: Agree - mostly same content",
            5: "5: Strongly Agree -- same content"}),
        LabelSpec("style", "score_task_2_style", {
            1: "1: Different styles", 3: "3: Somewhat same styles", 5: "5: Same styles"}),
        LabelSpec("reasonable", "score_task_3_reasonableness", {
            1: "1: Not a reasonable continuation", 5: "5:  A reasonable continuation"}),
    )
}
LABEL_NAMES: tuple[str, ...] = tuple(LABELS)
#: The columns of an annotator file: the three texts, and the turn id under one of its three names.
TEXT_COLUMNS = ("chat_history", "Option A", "Option B")
ID_COLUMNS = ("id_annotated", "Unnamed: 0", "id")


class UpheldFormatError(ValueError):
    """A file of the release cannot be read as UPHELD: names the file, row and column."""

    def __init__(self, file: Path | str, message: str, *, row: int | None = None, column: str | None = None):
        where = str(file)
        if row is not None:
            where += f", row {row}"
        if column is not None:
            where += f", column {column!r}"
        super().__init__(f"{where}: {message}")
        self.file, self.row, self.column = str(file), row, column


# --------------------------------------------------------------------------- reading one cell

def _normalise_label_text(text: str) -> str:
    """Lower-case, one space between words, any run of dashes as one '-'."""
    text = re.sub(r"[-\u2013\u2014]+", "-", text.strip().lower())
    return re.sub(r"\s+", " ", text)


_LABEL_RE = re.compile(r"^\s*(\d+)\s*:\s*(.+?)\s*$", re.DOTALL)
_KNOWN_TEXT: dict[str, dict[str, int]] = {
    name: {_normalise_label_text(text.split(":", 1)[1]): value for value, text in spec.spellings.items()}
    for name, spec in LABELS.items()
}


def parse_label(raw: str, label: str) -> tuple[int | None, str]:
    """Value of one label cell and its status: 'ok', 'variant', 'blank', 'misplaced' or 'bad'.

    >>> parse_label("3: Neutral  - some overlap of content", "content")
    (3, 'ok')
    >>> parse_label("3: Neutral - some overlap of content", "content")
    (3, 'variant')
    >>> parse_label("1: Not a reasonable continuation", "style")
    (None, 'misplaced')
    >>> parse_label("  ", "style")
    (None, 'blank')
    >>> parse_label("4: Same styles", "style")
    (None, 'bad')
    """
    if not raw.strip():
        return None, "blank"
    match = _LABEL_RE.match(raw)
    if not match:
        return None, "bad"
    value, text = int(match.group(1)), _normalise_label_text(match.group(2))
    if _KNOWN_TEXT[label].get(text) == value:
        return value, "ok" if raw == LABELS[label].spellings[value] else "variant"
    if any(_KNOWN_TEXT[other].get(text) == value for other in LABELS if other != label):
        return None, "misplaced"
    return None, "bad"


_TURN_SPLIT = re.compile(r"\s*\n\s*\n\s*(?=(?:user|assistant):)")
_TURN_RE = re.compile(r"^(user|assistant):[ \t]*(.*)$", re.DOTALL)


def parse_history(text: str) -> list[tuple[str, str]]:
    """Split a ``chat_history`` cell into ``(speaker, text)`` turns.

    Turns are ``user: …`` / ``assistant: …`` separated by blank lines (the release uses
    ``"\\n \\n\\n  "`` with varying spaces).

    >>> parse_history("user: Hi!\\n \\n\\n  assistant: Hello.\\nHow can I help?\\n \\n\\n  user: A car.")
    [('user', 'Hi!'), ('assistant', 'Hello.\\nHow can I help?'), ('user', 'A car.')]
    >>> parse_history("")
    []
    """
    text = text.strip()
    if not text:
        return []
    turns = []
    for part in _TURN_SPLIT.split(text):
        match = _TURN_RE.match(part)
        if match is None:
            raise ValueError(f"a turn does not start with 'user:' or 'assistant:': {part[:60]!r}")
        turns.append((match.group(1), match.group(2).strip()))
    return turns
