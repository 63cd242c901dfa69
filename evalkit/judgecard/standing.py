"""A judge's line on a leaderboard (:class:`Standing`), the ceiling of each (set, label) row, and a judge's rows as
arrays aligned with their human sets, for resampling."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from evalkit.judgecard.card import Card
from evalkit.judgecard.sets import HumanSet, noise_ceiling


__all__ = ["Standing", "row_ceilings"]


@dataclass(frozen=True)
class Standing:
    """One judge's line on the board (NaN where it has no row with a ceiling)."""

    judge: str
    rank: int  # 0: not ranked (flagged, or no defined share of the ceiling)
    mean_share: float
    share_low: float
    share_high: float
    ceiling_rows: int
    mean_pearson: float
    pearson_rows: int
    tied_with: tuple[str, ...]
    sets_skipped: tuple[str, ...]
    flags: tuple[str, ...] = ()  # why the board does not rank it (evalkit.judgecard.verify); rank 0 then
    card: str = ""  # the card file(s) the line comes from, as the caller names them (``sources``)
    fingerprint: str = ""  # of the card's stored item scores (:func:`scores_fingerprint`)
    cautions: tuple[str, ...] = ()  # ranked, but marked: its share's interval reaches the ceiling (AT_CEILING)
    rows_from: tuple[str, ...] = ()  # which card file each of its sets on the board came from ("file: set, set")
    above: tuple[str, ...] = ()  # the judges above it by a paired interval (its rank is 1 + their number)
    # Its paired comparisons: (other judge, its mean share minus the other's on the rows and items both have,
    # that difference's 95% interval low, high), one per ranked judge it shares a row with.
    differences: tuple[tuple[str, float, float, float], ...] = ()


def row_ceilings(human_sets: Mapping[str, HumanSet], labels: Sequence[str] | None = None
                 ) -> dict[tuple[str, str], float]:
    """The ceiling of every (set, label) whose ratings are kept, on the set's items as given (only ``labels``,
    when given)."""
    ceilings = {}
    for name, human_set in human_sets.items():
        if human_set.ratings is None:
            continue
        for label in human_set.labels:
            if labels is not None and label not in labels:
                continue
            value = noise_ceiling(human_set.ratings, label).ceiling
            if value == value and value > 0:
                ceilings[name, label] = value
    return ceilings


class _Rows:
    """A judge's (set, label) rows with a ceiling, as arrays aligned with its human set, for resampling."""

    def __init__(self, card: Card, human_sets: Mapping[str, HumanSet], ceilings: Mapping[tuple[str, str], float]):
        self.scores: dict[str, pd.Series] = {entry.set: card.set_scores(entry.set) for entry in card.scores
                                             if entry.set in human_sets}
        self.rows = [(s, label) for (s, label) in ceilings if s in self.scores]
        self.human_sets, self.ceilings = human_sets, ceilings

    def aligned(self, name: str, common: set[str] | None = None) -> tuple[pd.DataFrame, np.ndarray]:
        items = self.human_sets[name].items
        ids = items["item_id"].astype(str)
        scores = ids.map(self.scores[name]).to_numpy(dtype=float)
        keep = ~np.isnan(scores) & (ids.isin(common).to_numpy() if common is not None else True)
        return items[keep].reset_index(drop=True), scores[keep]

    def ids(self, name: str) -> set[str]:
        series = self.scores[name]
        return set(series.index[series.notna()])


def _ranked(board: Sequence[Standing]) -> list[Standing]:
    """The judges the board ranks: a defined share, no flag."""
    return [s for s in board if s.mean_share == s.mean_share and not s.flags]
