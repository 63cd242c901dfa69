"""The bootstrap engine of :mod:`evalkit.stats`: every interval of the kit draws its resamples here.

Two ways to draw — items with replacement (:func:`resample_items`) or whole groups such as the replies to one
context (:func:`group_resamples`, since those replies are not independent items) — and one way to read an
interval from resampled values (:func:`percentile_interval`). On them: which of two scores tracks the human
scores better on the same items (a paired interval: the items are resampled once for both), the mean over sets
of a correlation or of a difference, and grouped intervals of Pearson, Spearman and Kendall at once. Chapters
import these from :mod:`evalkit.stats`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats

__all__ = ["resample_items", "group_resamples", "percentile_interval", "CorrelationDifference",
           "correlation_difference", "mean_correlation_difference", "mean_correlation", "grouped_correlation_intervals"]


# --------------------------------------------------------------------------- drawing resamples, reading intervals

def resample_items(n: int, *, bootstrap: int, seed: int | np.random.Generator) -> np.ndarray:
    """``bootstrap`` resamples of ``n`` item indices drawn with replacement, as a (bootstrap x n) array.
    ``seed`` may be a generator, to continue its stream (several groups resampled from one seed).

    >>> resample_items(3, bootstrap=2, seed=0).tolist()
    [[2, 1, 1], [0, 0, 0]]
    """
    return np.random.default_rng(seed).integers(0, n, size=(bootstrap, n))


def percentile_interval(values: Sequence[float] | np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """The percentile interval of resampled ``values``, skipping resamples without a value (NaN: a constant
    resample has no correlation); (NaN, NaN) when none has one.

    >>> [round(bound, 3) for bound in percentile_interval([0.1, 0.2, float("nan"), 0.3, 0.4], level=0.5)]
    [0.175, 0.325]
    >>> percentile_interval([float("nan")])
    (nan, nan)
    """
    array = np.asarray(values, dtype=float)
    kept = array[np.isfinite(array)]
    if not len(kept):
        return float("nan"), float("nan")
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(kept, [tail, 100 - tail])
    return float(low), float(high)


# --------------------------------------------------------------------------- the paired difference of two correlations

@dataclass(frozen=True)
class CorrelationDifference:
    """The correlation (Pearson or Spearman) of ``first`` minus that of ``second`` with the humans, on the
    same items (those where neither abstains), with a paired percentile-bootstrap interval (items resampled
    once for both)."""

    difference: float
    low: float
    high: float
    n: int

    @property
    def clear(self) -> bool:
        """True when the interval excludes zero — a difference the sample supports."""
        return bool(self.low > 0 or self.high < 0)


def _pearson_rows(x: np.ndarray, z: np.ndarray) -> np.ndarray:
    x = x - x.mean(axis=-1, keepdims=True)
    z = z - z.mean(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (x * z).sum(axis=-1) / np.sqrt((x * x).sum(axis=-1) * (z * z).sum(axis=-1))


def _difference_draws(first: Sequence[float], second: Sequence[float], human: Sequence[float], *, bootstrap: int,
                      seed: int, kind: str) -> tuple[float, np.ndarray, int]:
    """The observed difference of correlations, its ``bootstrap`` paired resamples (NaN where a resample was
    constant) and n, on the items where no input is NaN."""
    a, b, y, keep = _paired_inputs(first, second, human, kind)
    if bootstrap < 1:
        raise ValueError(f"a paired interval needs at least one bootstrap resample, got {bootstrap}")
    ranked = (lambda v: stats.rankdata(v, axis=-1)) if kind == "spearman" else (lambda v: v)  # noqa: E731
    draws = resample_items(len(y), bootstrap=bootstrap, seed=seed)
    differences = (_pearson_rows(ranked(a[:, draws]), ranked(y[draws])).mean(axis=0)
                   - _pearson_rows(ranked(b[draws]), ranked(y[draws])))
    a, b, y = ranked(a), ranked(b), ranked(y)
    return float(_pearson_rows(a, y).mean() - _pearson_rows(b, y)), differences, int(len(y))


def _paired_inputs(first, second, human, kind: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``first`` as a (draws x items) array (a 1-D score is one draw), ``second`` and ``human`` as arrays, all
    restricted to the items where nothing is NaN, and that mask."""
    a = np.atleast_2d(np.asarray(first, dtype=float))
    b, y = np.asarray(second, dtype=float), np.asarray(human, dtype=float)
    if a.shape[1] != len(b) or len(b) != len(y):
        raise ValueError(f"paired scores need one value per item: {a.shape[1]}, {len(b)} and {len(y)} given")
    keep = ~(np.isnan(a).any(axis=0) | np.isnan(b) | np.isnan(y))
    if keep.sum() < 3:
        raise ValueError(f"a correlation needs at least 3 scored items, got {int(keep.sum())}")
    if kind not in ("pearson", "spearman"):
        raise ValueError(f"kind must be pearson or spearman, not {kind!r}")
    return a[:, keep], b[keep], y[keep], keep


def _grouped_difference_draws(first: Sequence[float], second: Sequence[float], human: Sequence[float],
                              groups: Sequence[object], *, bootstrap: int, seed: int, kind: str
                              ) -> tuple[float, np.ndarray, int]:
    """:func:`_difference_draws` with whole groups resampled (:func:`group_resamples`).

    >>> rng = np.random.default_rng(2)
    >>> h = rng.normal(size=60)
    >>> value, draws, n = _grouped_difference_draws(h + rng.normal(size=60), rng.normal(size=60), h,
    ...                                             [i // 3 for i in range(60)], bootstrap=50, seed=0, kind="pearson")
    >>> n, draws.shape, bool(value > 0)
    (60, (50,), True)
    """
    a, b, y, keep = _paired_inputs(first, second, human, kind)
    if len(groups) != len(keep):
        raise ValueError(f"{len(groups)} groups for {len(keep)} items")
    kept_groups = [g for g, k in zip(groups, keep) if k]
    ranked = (lambda v: stats.rankdata(v, axis=-1)) if kind == "spearman" else (lambda v: v)  # noqa: E731
    differences = np.array([_pearson_rows(ranked(a[:, d]), ranked(y[d])).mean()
                            - _pearson_rows(ranked(b[d]), ranked(y[d]))
                            for d in group_resamples(kept_groups, bootstrap=bootstrap, seed=seed)])
    return (float(_pearson_rows(ranked(a), ranked(y)).mean() - _pearson_rows(ranked(b), ranked(y))), differences,
            int(len(y)))


def correlation_difference(first: Sequence[float], second: Sequence[float], human: Sequence[float], *,
                           bootstrap: int = 1000, seed: int = 0, level: float = 0.95,
                           kind: Literal["pearson", "spearman"] = "pearson",
                           groups: Sequence[object] | None = None) -> CorrelationDifference:
    """How much better ``first`` tracks ``human`` than ``second`` does (Pearson, or Spearman: Pearson of the
    ranks, re-ranked within each resample), with a paired interval; with ``groups`` (one key per item, e.g. its
    context) whole groups are resampled, since replies to one context are not independent items. ``first`` may
    be a (draws x items) array — one judge fitted on several seeded draws of labels: the difference is then the
    mean over draws of its correlation, minus ``second``'s, and each resample averages over the same draws.

    >>> rng = np.random.default_rng(0)
    >>> human = rng.normal(size=300)
    >>> good, poor = human + rng.normal(size=300), human + 3 * rng.normal(size=300)
    >>> result = correlation_difference(good, poor, human, bootstrap=300)
    >>> result.clear, result.difference > 0
    (True, True)
    >>> fits = np.stack([human + rng.normal(size=300) for _ in range(4)])  # four draws of a fitted judge
    >>> several = correlation_difference(fits, poor, human, bootstrap=300, groups=np.arange(300) // 2)
    >>> several.clear, several.n
    (True, 300)
    """
    if groups is not None:
        observed, differences, n = _grouped_difference_draws(first, second, human, groups, bootstrap=bootstrap,
                                                             seed=seed, kind=kind)
    else:
        observed, differences, n = _difference_draws(first, second, human, bootstrap=bootstrap, seed=seed, kind=kind)
    if not np.isfinite(differences).any():
        raise ValueError(f"every one of {bootstrap} resamples was constant: no interval on {n} items")
    return CorrelationDifference(observed, *percentile_interval(differences, level), n)


def mean_correlation_difference(sets: Mapping[str, tuple[Sequence[float], Sequence[float], Sequence[float]]], *,
                                bootstrap: int = 1000, seed: int = 0, level: float = 0.95,
                                kind: Literal["pearson", "spearman"] = "pearson") -> CorrelationDifference:
    """The mean over several sets of (correlation of ``first`` minus that of ``second`` with the humans), as in
    a table's "mean over sets" column, with a paired interval: each set's items are resampled on their own
    (the sets are independent samples) and the per-set differences averaged within each resample. ``sets``
    maps a set's name to (first, second, human) or (first, second, human, groups): with ``groups`` (one key
    per item, e.g. its context) whole groups are resampled instead of items. ``n`` is the total number of items.

    >>> rng = np.random.default_rng(1)
    >>> def one(n):
    ...     human = rng.normal(size=n)
    ...     return human + rng.normal(size=n), human + 2 * rng.normal(size=n), human
    >>> result = mean_correlation_difference({"a": one(200), "b": one(300)}, bootstrap=300)
    >>> result.clear, result.difference > 0, result.n
    (True, True, 500)
    """
    def draws_of(name: str, entry: tuple, seed: int) -> tuple[float, np.ndarray, int]:
        first, second, human, *grouping = entry
        if grouping:  # whole groups (contexts) resampled: replies to one context are not independent items
            return _grouped_difference_draws(first, second, human, grouping[0], bootstrap=bootstrap, seed=seed,
                                             kind=kind)
        return _difference_draws(first, second, human, bootstrap=bootstrap, seed=seed, kind=kind)

    return CorrelationDifference(*_mean_over_sets(sets, draws_of, bootstrap=bootstrap, seed=seed, level=level))


def _mean_over_sets(sets: Mapping[str, tuple], draws_of, *, bootstrap: int, seed: int,
                    level: float) -> tuple[float, float, float, int]:
    """(mean of the sets' observed values, percentile interval of the per-resample means, total n), where
    ``draws_of(name, entry, seed)`` gives one set's (observed value, ``bootstrap`` resampled values, n) and each set
    draws from its own seed (the sets are independent samples)."""
    if not sets:
        raise ValueError("no sets to average over")
    observed, draws, total = [], [], 0
    for offset, (name, entry) in enumerate(sets.items()):
        value, resampled, n = draws_of(name, entry, seed + offset)
        observed.append(value)
        draws.append(resampled)
        total += n
    means = np.mean(draws, axis=0)
    if not np.isfinite(means).any():
        raise ValueError(f"every one of {bootstrap} resamples was constant in some set")
    return (float(np.mean(observed)), *percentile_interval(means, level), total)


def mean_correlation(sets: Mapping[str, tuple[Sequence[float], Sequence[float]]], *, bootstrap: int = 1000,
                     seed: int = 0, level: float = 0.95) -> tuple[float, float, float, int]:
    """The mean over several sets of one score's Pearson r with the humans (a table's "mean over sets"), with a
    percentile-bootstrap interval: each set resampled on its own, whole groups when ``sets`` maps a name to
    (score, human, groups) rather than (score, human). Returns (mean, low, high, n items).

    >>> rng = np.random.default_rng(3)
    >>> human = rng.normal(size=200)
    >>> mean, low, high, n = mean_correlation({"a": (human + rng.normal(size=200), human)}, bootstrap=300)
    >>> low < mean < high, n, round(mean, 1)
    (True, 200, 0.7)
    """
    def draws_of(name: str, entry: tuple, seed: int) -> tuple[float, np.ndarray, int]:
        score, human, *grouping = entry
        x, y = np.asarray(score, dtype=float), np.asarray(human, dtype=float)
        keep = ~(np.isnan(x) | np.isnan(y))
        x, y = x[keep], y[keep]
        if len(y) < 3:
            raise ValueError(f"set {name!r}: a correlation needs at least 3 scored items, got {len(y)}")
        if grouping:
            kept = [g for g, k in zip(grouping[0], keep) if k]
            resampled = np.array([_pearson_rows(x[d], y[d]) for d in group_resamples(kept, bootstrap=bootstrap,
                                                                                     seed=seed)])
        else:
            picks = resample_items(len(y), bootstrap=bootstrap, seed=seed)
            resampled = _pearson_rows(x[picks], y[picks])
        return float(_pearson_rows(x, y)), resampled, int(len(y))

    return _mean_over_sets(sets, draws_of, bootstrap=bootstrap, seed=seed, level=level)


# --------------------------------------------------------------------------- resampling contexts, not items

def group_resamples(groups: Sequence[object], *, bootstrap: int, seed: int) -> list[np.ndarray]:
    """``bootstrap`` resamples of item indices, each drawing whole groups (contexts) with replacement: the
    replies to one context are not independent items, so they enter or leave a resample together.

    >>> [sorted(draw.tolist()) for draw in group_resamples(["a", "a", "b"], bootstrap=2, seed=0)]
    [[2, 2], [0, 1, 2]]
    """
    members = list(pd.Series(range(len(groups))).groupby(pd.Series(list(groups), dtype=object), sort=True)
                   .apply(lambda s: s.to_numpy()))
    rng = np.random.default_rng(seed)
    return [np.concatenate([members[i] for i in rng.integers(len(members), size=len(members))])
            for _ in range(bootstrap)]


def _weighted_pearson(x: np.ndarray, y: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Pearson's r of each row's sample, where ``weights[b, i]`` is how often item ``i`` is in sample ``b``
    (the r of the sample written out with its repeats)."""
    total = weights.sum(axis=-1, keepdims=True)
    dx = x - (weights * x).sum(axis=-1, keepdims=True) / total
    dy = y - (weights * y).sum(axis=-1, keepdims=True) / total
    with np.errstate(invalid="ignore", divide="ignore"):
        return (weights * dx * dy).sum(-1) / np.sqrt((weights * dx * dx).sum(-1) * (weights * dy * dy).sum(-1))


def _value_counts(x: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per sample, how often each distinct value of ``x`` occurs (samples x values, values ascending), and
    which distinct value each item has."""
    values, inverse = np.unique(x, return_inverse=True)
    # columns grouped by value and summed per group: samples x items memory, not an items x values one-hot
    order = np.argsort(inverse, kind="stable")
    starts = np.searchsorted(inverse[order], np.arange(len(values)))
    return np.add.reduceat(weights[:, order], starts, axis=1), inverse


def _weighted_ranks(counts: np.ndarray, inverse: np.ndarray) -> np.ndarray:
    """Each item's mid-rank (ties share their mean rank) in each sample, from :func:`_value_counts`."""
    below = np.cumsum(counts, axis=1) - counts
    return (below + (counts + 1) / 2)[:, inverse]


def _weighted_kendall(x: np.ndarray, y: np.ndarray, weights: np.ndarray, x_counts: np.ndarray,
                      y_counts: np.ndarray, *, block: int = 1024) -> np.ndarray:
    """Kendall's tau-b of each sample (as :func:`scipy.stats.kendalltau` gives on the sample with its repeats):
    concordant minus discordant pairs over the root of the pairs not tied in x times those not tied in y. Two
    copies of one item are tied in both and count in neither; the pair sums run over column blocks to bound
    memory on large sets."""
    signed = np.zeros(len(weights))
    for start in range(0, len(x), block):
        part = slice(start, start + block)
        agree = np.sign(x[:, None] - x[None, part]) * np.sign(y[:, None] - y[None, part])
        signed += ((weights @ agree) * weights[:, part]).sum(axis=1)
    total = weights.sum(axis=1)
    pairs = total * (total - 1) / 2
    tied_x = (x_counts * (x_counts - 1) / 2).sum(axis=1)
    tied_y = (y_counts * (y_counts - 1) / 2).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return signed / 2 / np.sqrt((pairs - tied_x) * (pairs - tied_y))


def grouped_correlation_intervals(metric: Sequence[float], human: Sequence[float], groups: Sequence[object], *,
                                  bootstrap: int = 1000, seed: int = 0, level: float = 0.95
                                  ) -> dict[str, tuple[float, float]]:
    """Percentile-bootstrap intervals of Pearson, Spearman and Kendall between ``metric`` and ``human``,
    resampling ``groups`` (one key per item, e.g. its context) rather than items. Pairs with a missing side
    are left out first; a resample that is constant gives no value and is skipped. All resamples are computed
    at once, each as item weights (how often it was drawn); the values are those of the resamples written
    out (``tests/upheld/test_correlation.py`` checks them against scipy, resample by resample).

    >>> rng = np.random.default_rng(0)
    >>> human = rng.normal(size=60)
    >>> bounds = grouped_correlation_intervals(human + rng.normal(size=60), human, np.arange(60) // 3, bootstrap=200)
    >>> low, high = bounds["pearson"]
    >>> bool(low < 0.707 < high), bounds["kendall"][1] < high  # Kendall's tau runs below Pearson's r
    (True, True)
    """
    x, y = np.asarray(metric, dtype=float), np.asarray(human, dtype=float)
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y, keys = x[keep], y[keep], np.asarray(list(groups), dtype=object)[keep]
    draws = group_resamples(keys, bootstrap=bootstrap, seed=seed)
    if not draws or not len(x):
        return {name: (float("nan"), float("nan")) for name in ("pearson", "spearman", "kendall")}
    weights = np.stack([np.bincount(draw, minlength=len(x)) for draw in draws]).astype(float)
    (x_counts, x_of), (y_counts, y_of) = _value_counts(x, weights), _value_counts(y, weights)
    varied = ((weights.sum(axis=1) >= 3) & ((x_counts > 0).sum(axis=1) > 1) & ((y_counts > 0).sum(axis=1) > 1))
    weights, x_counts, y_counts = weights[varied], x_counts[varied], y_counts[varied]
    values = {"pearson": _weighted_pearson(x, y, weights),
              "spearman": _weighted_pearson(_weighted_ranks(x_counts, x_of), _weighted_ranks(y_counts, y_of), weights),
              "kendall": _weighted_kendall(x, y, weights, x_counts, y_counts)}
    return {name: percentile_interval(v, level) for name, v in values.items()}
