"""A file of scores as a judge (:class:`ScoresJudge`): scores a user already has, in a meta-evaluation file, read
and checked line by line (every line names its item, no item twice, every score a number) and matched to a set's
items by id, or by context and response.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from evalkit.judgecard._names import MAX_NAME_CHARS, shortened
from evalkit.judges.protocol import OneReplyAtATime, Scored

__all__ = ["ScoresJudge"]


@dataclass
class ScoresJudge(OneReplyAtATime):
    """Scores a user already has, in a meta-evaluation file (:func:`evalkit.paireval.read_meta_eval`) with one
    score column or several (``column``: a name or a sequence of names, default ``score_judge``). Several
    columns are independent draws of one judge (seeds, samples): the score is their mean, an item missing in any
    of them is unscored, and the card measures how the draws agree. A set's item takes the file's score of the
    row with its ``item_id`` when the file has that column, else of the row with the same context and response
    (and ``dataset``, when the file names it); an item the file lacks is unscored (NaN), counted as missing. A file
    with ids needs one on every line (a line without one is refused, by file and line); its lines that no item
    matches are named by :meth:`unread`. A long file or column name is shortened in the judge's name
    (:data:`~._names.MAX_NAME_CHARS`)."""

    path: str
    column: str | Sequence[str] = "score_judge"
    name: str = ""
    _frame: pd.DataFrame = field(default=None, repr=False)

    def __post_init__(self):
        from evalkit.paireval.schema import MetaEvalFormatError, metric_scores, read_meta_eval
        from evalkit.judgecard.sets import refuse_repeated_ids

        self.column = (self.column,) if isinstance(self.column, str) else tuple(self.column)
        if not self.column or len(set(self.column)) != len(self.column):
            raise MetaEvalFormatError(f"{self.path}: name each score column once (got {list(self.column)})")
        frame = read_meta_eval(self.path, human=False)  # a judge's scores need no human score beside them
        for column in self.column:
            if column not in frame.columns:
                raise MetaEvalFormatError(f"{self.path}: no score column {column!r} (columns: "
                                          f"{', '.join(map(str, frame.columns))}); name it with --score-column")
            frame[column] = metric_scores(frame, column, source=self.path)
        _refuse_missing_ids(frame, self.path)
        refuse_repeated_ids(frame, self.path)
        self._frame = frame
        where = frame.attrs.get("where")
        self._where = list(where) if where is not None and len(where) == len(frame) else \
            [f"row {k + 1}" for k in range(len(frame))]
        if not self.name:  # a file or column named after a key from the environment is masked in the card's name
            from evalkit.models.redaction import environment_secrets, mask_secrets

            named = f"scores:{Path(self.path).name}#{'+'.join(self.column)}"
            self.name = shortened(mask_secrets(named, environment_secrets()), MAX_NAME_CHARS)
        # What the card's judge record keeps of the file: two files of one name are two judges, and a board
        # told to --merge one judge's cards never joins cards scored from different files.
        self.fingerprint = hashlib.sha256(Path(self.path).read_bytes()).hexdigest()[:16]

    def _rows(self, items: pd.DataFrame) -> np.ndarray:
        """The file's row of each item (-1: none): the row with its ``item_id`` when the file has that column and
        any of its ids is an item's, else the row with the same context and response (and ``dataset``, when the
        file names the items' sets)."""
        frame = self._frame
        if "item_id" in frame.columns:  # the ids of the kit's sets, or of the file the user scored
            by_id = {item: row for row, item in enumerate(frame["item_id"].astype(str))}
            rows = np.array([by_id.get(str(item), -1) for item in items["item_id"]], dtype=int)
            if (rows >= 0).any():
                return rows
        named = ("dataset" in frame.columns and frame["dataset"].notna().all()
                 and bool(set(frame["dataset"]) & set(items["dataset"])))  # a file's own set names match nothing

        def key(dataset, context, response) -> tuple:
            return ((dataset,) if named else ()) + (tuple(context), str(response))

        table = {key(d, c, r): row for row, (d, c, r) in
                 enumerate(zip(frame.get("dataset", [None] * len(frame)), frame["context"], frame["response"]))}
        datasets = items["dataset"] if "dataset" in items else [None] * len(items)
        return np.array([table.get(key(d, c, r), -1) for d, c, r in
                         zip(datasets, items["context"], items["response"])], dtype=int)

    def _lookup(self, items: pd.DataFrame) -> np.ndarray:
        """The file's values for the items, one row per item and one column per score column (NaN: not in the
        file)."""
        values = self._frame[list(self.column)].to_numpy(dtype=float)
        rows = self._rows(items)
        found = np.full((len(items), len(self.column)), np.nan)
        found[rows >= 0] = values[rows[rows >= 0]]
        return found

    def unread(self, sets: Sequence[Any], *, shown: int = 5) -> str | None:
        """A note naming the file's lines that no item of ``sets`` (:class:`~.sets.HumanSet` values, whole: both
        halves, every item) matches, among the lines of those sets — a line whose ``dataset`` names another set
        is that set's (``judge export`` writes every set's items in one file) and is not counted: how many, and
        the first ``shown`` by line and ``item_id``. Such a line's score is read by no card of these sets (an id
        mistyped, a number where the set's id is text); None when there is none.

        >>> import json, tempfile
        >>> from evalkit.judgecard.sets import HumanSet
        >>> lines = [{"item_id": i, "dataset": "toy", "context": ["hi"], "response": "r", "score_judge": 1.0}
        ...          for i in ("toy:0", "toy:nope", 7)]
        >>> path = Path(tempfile.mkdtemp()) / "mine.jsonl"
        >>> _ = path.write_text("".join(json.dumps(line) + "\\n" for line in lines))
        >>> toy = HumanSet("toy", pd.DataFrame({"item_id": ["toy:0", "toy:1"], "dataset": "toy",
        ...                                      "context": [["hi"], ["hi"]], "response": ["r", "s"]}))
        >>> ScoresJudge(str(path)).unread([toy])
        "mine.jsonl: 2 lines match no item of the sets scored (toy), either half, and were not read: line 2 (item_id 'toy:nope'), line 3 (item_id 7)"
        """
        frame = self._frame
        read = np.zeros(len(frame), dtype=bool)
        names: set[str] = set()
        for human_set in sets:
            rows = self._rows(human_set.items)
            read[rows[rows >= 0]] = True
            names.add(str(human_set.name))
            if "dataset" in human_set.items:
                names.update(map(str, human_set.items["dataset"].dropna()))
        theirs = (frame["dataset"].isna() | frame["dataset"].astype(str).isin(names)).to_numpy() \
            if "dataset" in frame.columns else np.ones(len(frame), dtype=bool)
        unread = np.flatnonzero(~read & theirs)
        if not len(unread):
            return None

        def line(row: int) -> str:
            if "item_id" not in frame.columns:
                return self._where[row]
            return f"{self._where[row]} (item_id {shortened(repr(frame['item_id'].iat[row]), 60)})"

        more = f", and {len(unread) - shown:,} more" if len(unread) > shown else ""
        return (f"{Path(self.path).name}: {len(unread):,} line{'s' if len(unread) != 1 else ''} match"
                f"{'es' if len(unread) == 1 else ''} no item of the sets scored "
                f"({', '.join(sorted(str(s.name) for s in sets))}), either half, and "
                f"{'were' if len(unread) != 1 else 'was'} not read: {', '.join(line(row) for row in unread[:shown])}"
                f"{more}")

    def score(self, items: pd.DataFrame) -> Scored:
        found = self._lookup(items)
        incomplete = np.isnan(found).any(axis=1)
        scores = np.where(incomplete, np.nan, found.mean(axis=1) if found.shape[1] else np.nan)
        if found.shape[1] < 2:
            return Scored(scores)
        return Scored(scores, draws=tuple(found[:, k] for k in range(found.shape[1])),
                      draws_from=f"the file's score columns ({', '.join(self.column)})")


def _no_id(value: Any) -> bool:
    """Whether a file's ``item_id`` value names no item: absent (None or NaN, as a line without the field reads)
    or empty text."""
    return value is None or (isinstance(value, float) and value != value) or (isinstance(value, str)
                                                                              and not value.strip())


def _refuse_missing_ids(frame: pd.DataFrame, source: str) -> None:
    """A file of scores that names its items by ``item_id`` names every one: a line without an id would be matched
    by no item and its score silently not read. Raises
    :class:`~evalkit.paireval.schema.MetaEvalFormatError` naming ``source``, the first such line and the field.

    >>> frame = pd.DataFrame({"item_id": ["a", None, ""]})
    >>> frame.attrs["where"] = ["line 1", "line 2", "line 3"]
    >>> _refuse_missing_ids(frame, "mine.jsonl")
    Traceback (most recent call last):
    ...
    evalkit.paireval.schema.MetaEvalFormatError: mine.jsonl, line 2, field 'item_id': no item id (2 lines without one in all): a file that names its items by item_id needs one on every line
    """
    from evalkit.paireval.schema import MetaEvalFormatError

    if "item_id" not in frame.columns:
        return
    missing = [row for row, value in enumerate(frame["item_id"]) if _no_id(value)]
    if missing:
        where = frame.attrs.get("where")
        where = where if where is not None and len(where) == len(frame) else [f"row {k + 1}" for k in range(len(frame))]
        raise MetaEvalFormatError(f"{source}, {where[missing[0]]}, field 'item_id': no item id ({len(missing)} "
                                  f"line{'s' if len(missing) != 1 else ''} without one in all): a file that names "
                                  "its items by item_id needs one on every line")
