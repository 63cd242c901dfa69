"""A board's checks against the human noise ceiling: a judge (or one of its rows) whose share lies above 1 is
flagged and not ranked (:data:`ABOVE_CEILING`, :data:`ROW_AT_CEILING`'s row form), one whose 95% interval reaches 1
keeps its rank with a caution (:data:`AT_CEILING`); :func:`ceiling_flags` gives the rule."""
from __future__ import annotations

import warnings
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from evalkit.stats.bootstrap import _pearson_rows, group_resamples, percentile_interval
from evalkit.judgecard.card import Card
from evalkit.judgecard.sets import HumanSet
from evalkit.judgecard.standing import _Rows


__all__ = ["ceiling_flags", "label_matches", "ABOVE_CEILING", "AT_CEILING", "ROW_AT_CEILING", "LABEL_MATCHES",
           "CEILING_Z"]


def _rating_stats(human_set: HumanSet, label: str, ids: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per item of ``ids``: how many ratings of ``label`` it has, their mean and their sum of squared deviations
    from that mean (0, 0 and 0 for an item without ratings)."""
    values = human_set.ratings[["item_id", label]].dropna()
    values = values.assign(item_id=values["item_id"].astype(str), **{label: values[label].astype(float)})
    grouped = values.groupby("item_id")[label]
    index = pd.Index(list(ids))
    count = grouped.count().reindex(index).fillna(0).to_numpy(dtype=float)
    mean = grouped.mean().reindex(index).fillna(0).to_numpy(dtype=float)
    spread = (grouped.var(ddof=0) * grouped.count()).reindex(index).fillna(0).to_numpy(dtype=float)
    return count, mean, spread


def _resampled_ceilings(count: np.ndarray, mean: np.ndarray, spread: np.ndarray,
                        draws: Sequence[np.ndarray]) -> np.ndarray:
    """The noise ceiling, sqrt(ICC(1, k)) as :func:`~evalkit.judgecard.sets.noise_ceiling` computes it, of each
    resample of items in ``draws`` (an item drawn twice counts twice; items with fewer than two ratings are left
    out; NaN where the reliability is not positive).

    >>> ratings = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]
    >>> values = np.array(ratings, dtype=float)
    >>> count, mean = np.full(6, 4.0), values.mean(axis=1)
    >>> spread = ((values - mean[:, None]) ** 2).sum(axis=1)
    >>> round(float(_resampled_ceilings(count, mean, spread, [np.arange(6)])[0]), 2)  # sqrt(0.44)
    0.67
    """
    rated = (count >= 2).astype(float)
    ceilings = np.full(len(draws), np.nan)
    for d, draw in enumerate(draws):
        weight = np.bincount(np.asarray(draw, dtype=int), minlength=len(count)) * rated
        items, total = weight.sum(), (weight * count).sum()
        if items < 2 or total <= items:
            continue
        grand = (weight * count * mean).sum() / total
        between = (weight * count * (mean - grand) ** 2).sum() / (items - 1)
        within = (weight * spread).sum() / (total - items)
        k0 = (total - (weight * count ** 2).sum() / total) / (items - 1)
        if between + (k0 - 1) * within == 0:
            continue
        single = (between - within) / (between + (k0 - 1) * within)
        k = total / items
        reliability = k * single / (1 + (k - 1) * single)
        if reliability > 0:
            ceilings[d] = np.sqrt(reliability)
    return ceilings


CEILING_Z = 3.09
"""How many standard errors above 1 a share must lie to be flagged (one-sided 0.001: the low end of a 99.8%
interval): a flag says a judge's scores may be the labels, so it asks for more than the board's 95%. A judge that
knew the true score reaches 1 on average and is flagged on about one sample in 1000 per row tested."""


def _above_one(point: float, draws: np.ndarray, bootstrap: int) -> tuple[float, float]:
    """The interval ``point`` +- :data:`CEILING_Z` standard errors, the standard error that of the resampled
    ``draws`` (a normal interval: steadier than a far percentile of a few hundred resamples); (point, point)
    without resamples.

    >>> [round(bound, 3) for bound in _above_one(1.1, np.array([1.0, 1.2]), 2)]
    [0.663, 1.537]
    """
    kept = np.asarray(draws, dtype=float)
    kept = kept[np.isfinite(kept)]
    if not bootstrap or len(kept) < 2:
        return point, point
    error = float(np.std(kept, ddof=1)) * CEILING_Z
    return point - error, point + error


ABOVE_CEILING = "above the human ceiling: scores may be the labels themselves"
"""How a flag for a share above the ceiling begins (see :func:`ceiling_flags`)."""

AT_CEILING = ("at the human ceiling: as close to people as another rater; check the scores are not derived from "
              "the labels")
"""How a caution begins for a ranked judge whose mean share's 95% interval reaches 1 (its high end 1 or more): the
sample cannot tell it from a judge as good as people's own agreement, which is what labels plus noise look like.
The judge stays ranked (unlike :data:`ABOVE_CEILING`), marked in the table, the JSON and the sentence."""

ROW_AT_CEILING = ("a row at the human ceiling: one set and label's share interval reaches 1, from a small row's "
                  "wide interval or from scores derived from the labels")
"""How a caution begins for a ranked judge one of whose rows (set and label) has a share whose 95% interval
reaches 1 while the mean's does not: on a set of few contexts any judge's interval can reach 1, so the mark is
a reason to read that row, not a verdict; a row forged from the labels and merged into an honest line is marked
this way (the mean, averaged with other rows, stays under the ceiling)."""


LABEL_MATCHES = "scores equal to the human scores"
"""How a flag (or a caution) begins for a row many of whose scores equal the set's human scores exactly, far more
than the same scores paired with the items at random would (:func:`label_matches`): part of the labels copied in.
A judge agreeing with people on a coarse scale matches some items exactly, and about as many as chance gives more."""

_FLAG_MATCHES = (0.2, 10)  # a row is flagged at this share of its items and this many times chance, or more
_CAUTION_MATCHES = (0.05, 3)  # ... cautioned at this share and this many times chance
_MIN_MATCHES = 5


def label_matches(scores: np.ndarray, human: np.ndarray) -> tuple[int, float]:
    """How many of ``scores`` equal the human score of their item exactly, and how many would on average with the
    scores paired with the items at random (each score's count among the human scores, over their number).

    >>> label_matches(np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, 2.0, 3.0, 3.5]))
    (3, 0.75)
    """
    values, counts = np.unique(human, return_counts=True)
    share = dict(zip(values.tolist(), (counts / len(human)).tolist()))
    return int(np.sum(scores == human)), float(sum(share.get(score, 0.0) for score in scores.tolist()))


def _matches_check(scores: np.ndarray, human: np.ndarray, row: str) -> tuple[str | None, str | None]:
    """A flag or a caution (the other None) for a row whose exact matches with the human scores are many, and
    many times what chance gives (:data:`LABEL_MATCHES`)."""
    found, chance = label_matches(scores, human)
    said = (f"{LABEL_MATCHES} (on {row}: {found} of {len(scores)} scores equal their item's human score exactly; "
            f"{chance:.1f} would, the same scores paired with the items at random)")
    for (share, times), kind in ((_FLAG_MATCHES, "flag"), (_CAUTION_MATCHES, "caution")):
        if found >= max(_MIN_MATCHES, share * len(scores)) and found >= times * chance:
            return (said, None) if kind == "flag" else (None, said)
    return None, None


def _at_ceiling(share: float, low: float, high: float) -> tuple[str, ...]:
    """The caution of a mean share whose interval reaches the ceiling (none otherwise).

    >>> _at_ceiling(0.999, 0.939, 1.029)[0][-61:]
    '(mean share 0.999 [0.939, 1.029]: its 95% interval reaches 1)'
    >>> _at_ceiling(0.8, 0.7, 0.9), _at_ceiling(float("nan"), float("nan"), float("nan"))
    ((), ())
    """
    if not high >= 1:
        return ()
    return (f"{AT_CEILING} (mean share {share:.3f} [{low:.3f}, {high:.3f}]: its 95% interval reaches 1)",)


def _from(files: Mapping[str, str] | None, name: str) -> str:
    """", from FILE" for a row of the set ``name`` when its card file is known (empty otherwise)."""
    return f", from {files[name]}" if files and files.get(name) else ""


def ceiling_flags(card: Card, human_sets: Mapping[str, HumanSet], ceilings: Mapping[tuple[str, str], float], *,
                  bootstrap: int, seed: int, files: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """Flags for a share of the human ceiling above 1, which no judge reaches honestly: the ceiling is how well
    the mean rating can agree with the true score, so a judge can exceed it only by agreeing with the raters'
    own noise, i.e. by holding (a noisy copy of) the labels.

    **The rule.** The board's shares divide by one ceiling per row, fixed; a test against 1 must also allow for
    that ceiling's own sampling error. So each of the card's rows (those of ``ceilings``) is resampled by whole
    groups of the items it scored, ``bootstrap`` times (seeded by ``seed``), and on every resample both the
    Pearson r and the ceiling are recomputed. A row whose share lies more than :data:`CEILING_Z` (3.09) standard
    errors of those resamples above 1 (its 99.8% interval above 1) is flagged, and so is the mean share when it
    lies that far above 1 by its resampled mean. A judge with a share just above 1 by chance (one that knew the
    true score would reach 1 on average) holds 1 in that interval and is not flagged. With no resamples
    (``bootstrap`` 0) a share (the point) above 1 is flagged. Every flagged row is named (set/label), with the
    card file its set came from (``files[set]``, when given: a merged line's rows come from several files)."""
    return _ceiling_checks(card, human_sets, ceilings, bootstrap=bootstrap, seed=seed, files=files)[0]


def _ceiling_checks(card: Card, human_sets: Mapping[str, HumanSet], ceilings: Mapping[tuple[str, str], float], *,
                    bootstrap: int, seed: int, files: Mapping[str, str] | None = None
                    ) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The flags of :func:`ceiling_flags` and the cautions of the card's rows: a row whose share's 95% percentile
    interval, over the same resamples (the ceiling resampled too, as a row's own ceiling is estimated on its
    items), reaches 1 is cautioned (:data:`ROW_AT_CEILING`), naming the row and the card file its set came from, so
    a row derived from the labels is marked even where the line's mean, averaged with other rows, is not."""
    judged = _Rows(card, human_sets, ceilings)
    points, draws, flags, cautions = [], [], [], []
    for name, label in judged.rows:
        items, scores = judged.aligned(name)
        human = items[label].to_numpy(dtype=float)
        keep = np.isfinite(human)
        items, scores, human = items[keep].reset_index(drop=True), scores[keep], human[keep]
        if len(items) < 3 or human_sets[name].ratings is None:
            continue
        flag, caution = _matches_check(scores, human, f"{name}/{label}{_from(files, name)}")
        flags += [flag] if flag else []
        cautions += [caution] if caution else []
        point = float(_pearson_rows(scores, human)) / ceilings[name, label]
        resamples = group_resamples(list(items["group"].astype(str)), bootstrap=bootstrap, seed=seed)
        resampled = _resampled_ceilings(*_rating_stats(human_sets[name], label, items["item_id"].astype(str)),
                                        resamples)
        shares = np.array([_pearson_rows(scores[d], human[d]) for d in resamples]) / resampled
        points.append(point)
        draws.append(shares)
        near_low, near_high = percentile_interval(shares)  # none without resamples
        if near_high >= 1:
            cautions.append(f"{ROW_AT_CEILING} (on {name}/{label}{_from(files, name)}: share {point:.3f} "
                            f"[{near_low:.3f}, {near_high:.3f}] at 95%, the ceiling resampled too: its interval "
                            "reaches 1)")
        low, high = _above_one(point, shares, bootstrap)
        if low > 1:
            flags.append(f"{ABOVE_CEILING} (on {name}/{label}{_from(files, name)}: share {point:.3f} "
                         f"[{low:.3f}, {high:.3f}] at 99.8%, the ceiling resampled too)")
    if not points:
        return (), ()
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = float(np.nanmean(points))
        low, high = _above_one(mean, np.nanmean(np.stack(draws), axis=0), bootstrap)
    if low > 1:  # the mean first, then every row flagged on its own, named with its set and file
        flags = [f"{ABOVE_CEILING} (mean share {mean:.3f} [{low:.3f}, {high:.3f}] at 99.8%, the ceiling resampled "
                 "too: more agreement with the mean rating than the raters' own agreement allows)", *flags]
    return tuple(flags), tuple(cautions)
