"""Whether a card's scores on a set are people's ratings copied rather than a judgement: the item means (near
enough), one person's ratings (one rater's, each item's rating at one position, a rating picked per item and
rescaled) or a weighted sum of two people's ratings. :mod:`evalkit.judgecard.verify` flags such cards.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd

from evalkit.stats import correlation
from evalkit.judgecard.sets import HumanSet

__all__ = ["NEAR_COPY", "NEAR_COPY_ITEMS", "MAX_RATING_LEVELS", "MAX_COMBINED_VECTORS"]

NEAR_COPY = 0.99
"""Agreement with the human item scores (|Pearson| or |Spearman|) that no judge reaches: people's own item means
agree with each other far less (the noise ceilings are 0.6-0.9), so such scores are the labels copied."""

NEAR_COPY_ITEMS = 20
"""The near-copy flag reads sets where the card scored at least this many items."""


def _rating_vectors(ratings: pd.DataFrame, label: str) -> dict[str, pd.Series]:
    """Each rater's ratings of ``label`` by item, and each item's first, second... rating (in the file's order)."""
    kept = ratings[["item_id", "rater", label]].dropna(subset=[label]).astype({"item_id": str})
    vectors = {f"rater {rater}'s ratings": group.groupby("item_id")[label].first()
               for rater, group in kept.groupby("rater", sort=False)}
    position = kept.groupby("item_id").cumcount()
    for k in range(int(position.max()) + 1 if len(position) else 0):
        vectors[f"each item's rating number {k + 1}"] = kept[position == k].groupby("item_id")[label].first()
    return vectors


def _one_rating_copied(scores: Mapping[str, float], human_set: HumanSet, label: str) -> str:
    """What the scores copy where they are one person's ratings rather than a judgement ("" if nothing): one
    rater's, or each item's rating at one position, read at |r| or |rho| of ``NEAR_COPY`` or more on at least
    ``NEAR_COPY_ITEMS`` items; or, on most items, exactly one of the item's own ratings after the linear map that
    puts the scores' extremes on two rating levels (a rating picked per item, from any rater, and rescaled), where
    the same scores shuffled over the items match far less often."""
    ratings = human_set.ratings
    if ratings is None or label not in ratings.columns:
        return ""
    judged = pd.Series(scores, dtype=float).dropna()
    for name, vector in _rating_vectors(ratings, label).items():
        both = pd.concat([judged, vector], axis=1, join="inner").dropna()
        if len(both) >= NEAR_COPY_ITEMS and both.iloc[:, 1].nunique() > 1:
            r = max(abs(correlation(both.iloc[:, 0], both.iloc[:, 1], kind=kind)) for kind in ("pearson", "spearman"))
            if r >= NEAR_COPY:
                return f"{name} (|r| = {r:.4f})"
    combined = _two_ratings_combined(judged, _rating_vectors(ratings, label))
    if combined:
        return combined
    per_item = ratings.dropna(subset=[label]).astype({"item_id": str}).groupby("item_id")[label].apply(set)
    shared = judged.index.intersection(per_item.index)
    if len(shared) < NEAR_COPY_ITEMS or judged[shared].nunique() < 2:
        return ""
    values, sets_of = judged[shared].to_numpy(), list(per_item[shared])
    own = np.full((len(sets_of), max(map(len, sets_of))), np.nan)  # each item's distinct ratings, padded with NaN
    for row, item in enumerate(sets_of):
        own[row, :len(item)] = sorted(item)
    levels = sorted(set(np.unique(own[~np.isnan(own)]).tolist()))
    if len(levels) > MAX_RATING_LEVELS:
        return ""  # ratings on a fine scale: a rating picked per item is not found this way
    best = (0.0, values)
    for start in levels:  # the scores' extremes onto any two rating levels, either way round
        for end in levels:
            if start != end:
                mapped = start + (values - values.min()) * (end - start) / (values.max() - values.min())
                best = max(best, (_share_on_a_rating(mapped, own), mapped), key=lambda pair: pair[0])
    hits, mapped = best
    rng = np.random.default_rng(0)
    shuffled = float(np.mean([_share_on_a_rating(rng.permutation(mapped), own) for _ in range(5)]))
    if hits >= ONE_RATING_SHARE and hits - shuffled >= ONE_RATING_MARGIN:
        return f"one of each item's own ratings on {hits:.0%} of {len(values)} items (shuffled over items: {shuffled:.0%})"
    return ""


MAX_COMBINED_VECTORS = 30
"""The rating vectors (each item's ratings by position first, then raters by how many items they share with the
card) whose pairs :func:`_two_ratings_combined` reads."""


def _two_ratings_combined(judged: pd.Series, vectors: Mapping[str, pd.Series]) -> str:
    """What the scores copy where they are a weighted sum of two people's ratings (the mean of two raters, of each
    item's first two ratings...): the least-squares fit of the scores on two rating vectors and a constant reaches
    a multiple r of ``NEAR_COPY`` on at least ``NEAR_COPY_ITEMS`` items ("" if no pair does).

    >>> a, b = pd.Series(range(30), dtype=float) % 5, pd.Series(range(30), dtype=float) % 7
    >>> _two_ratings_combined((a + b) / 2, {"rater 1's ratings": a, "rater 2's ratings": b})
    "a weighted sum of rater 1's ratings and rater 2's ratings (multiple r = 1.0000)"
    """
    shared = {name: int(vector.index.isin(judged.index).sum()) for name, vector in vectors.items()}
    usable = sorted((name for name in vectors if shared[name] >= NEAR_COPY_ITEMS),
                    key=lambda name: (not name.startswith("each item"), -shared[name]))[:MAX_COMBINED_VECTORS]
    for index, first in enumerate(usable):
        for second in usable[index + 1:]:
            both = pd.concat([judged, vectors[first], vectors[second]], axis=1, join="inner").dropna()
            if len(both) < NEAR_COPY_ITEMS or both.iloc[:, 0].nunique() < 2:
                continue
            design = np.column_stack([np.ones(len(both)), both.iloc[:, 1:].to_numpy()])
            target = both.iloc[:, 0].to_numpy()
            fitted = design @ np.linalg.lstsq(design, target, rcond=None)[0]
            # (numpy's r: a near-constant fit, two rating vectors that cancel, is no copy and warns of nothing)
            r = float(np.corrcoef(fitted, target)[0, 1]) if np.std(fitted) > 1e-9 * (1 + np.abs(fitted).max()) \
                else float("nan")
            if r >= NEAR_COPY:
                return f"a weighted sum of {first} and {second} (multiple r = {r:.4f})"
    return ""


MAX_RATING_LEVELS = 12
"""The rating-pick check reads sets whose ratings take at most this many values (Likert scales, 1-5 or 0-10)."""

ONE_RATING_SHARE, ONE_RATING_MARGIN = 0.9, 0.2
"""A set's scores that land on one of each item's own ratings on this share of its items, this much more often than
the same scores shuffled over the items, were picked from the ratings."""


def _share_on_a_rating(mapped: np.ndarray, own: np.ndarray) -> float:
    """The share of items whose mapped score is (to 1e-6) one of that item's ratings (``own``: items x ratings,
    NaN-padded)."""
    return float(np.mean(np.any(np.abs(mapped[:, None] - own) <= 1e-6, axis=1)))
