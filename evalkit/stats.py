"""Statistics every chapter shares: intervals for proportions and correlation with human scores.

A result in the book is a number with its n and an interval; these are the functions that give them.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Sequence

import numpy as np
from scipy import stats

__all__ = ["Proportion", "proportion", "HumanCorrelation", "correlation_with_humans", "CorrelationDifference",
           "correlation_difference"]


@dataclass(frozen=True)
class Proportion:
    """``successes`` of ``n`` with a Wilson score interval (``level``, default 95%)."""

    successes: int
    n: int
    low: float
    high: float
    level: float = 0.95

    @property
    def value(self) -> float:
        return self.successes / self.n if self.n else float("nan")

    def __str__(self) -> str:
        return f"{self.value:.3f} [{self.low:.3f}, {self.high:.3f}] (n = {self.n})"

    def as_dict(self) -> dict[str, float]:
        return {**asdict(self), "value": self.value}


def proportion(outcomes: Sequence[bool] | np.ndarray, *, level: float = 0.95) -> Proportion:
    """The share of true outcomes with a Wilson interval (NaN outcomes — abstentions — are left out).

    >>> str(proportion([True] * 85 + [False] * 15))
    '0.850 [0.767, 0.907] (n = 100)'
    """
    values = np.asarray(outcomes, dtype=float)
    values = values[~np.isnan(values)]
    n, successes = int(len(values)), int(values.sum())
    if n == 0:
        return Proportion(0, 0, float("nan"), float("nan"), level)
    interval = stats.binomtest(successes, n).proportion_ci(confidence_level=level, method="wilson")
    return Proportion(successes, n, float(interval.low), float(interval.high), level)


@dataclass(frozen=True)
class HumanCorrelation:
    """Pearson and Spearman of a metric with human scores: p-values, n, and percentile-bootstrap intervals
    (items resampled with replacement, ``bootstrap`` times; 0 leaves the intervals out)."""

    pearson: float
    pearson_p: float
    pearson_low: float
    pearson_high: float
    spearman: float
    spearman_p: float
    spearman_low: float
    spearman_high: float
    n: int
    missing: int

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


def correlation_with_humans(metric: Sequence[float], human: Sequence[float], *, bootstrap: int = 1000,
                            seed: int = 0, level: float = 0.95) -> HumanCorrelation:
    """How well ``metric`` tracks ``human`` on the same items; pairs with a missing side are left out and
    counted in ``missing``.

    >>> result = correlation_with_humans([1, 2, 3, 4, 5], [2, 1, 4, 3, 5], bootstrap=0)
    >>> round(result.pearson, 2), round(result.spearman, 2), result.n
    (0.8, 0.8, 5)
    """
    x, y = np.asarray(metric, dtype=float), np.asarray(human, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"metric and human scores differ in length ({len(x)} vs {len(y)})")
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    if len(x) < 3:
        raise ValueError(f"a correlation needs at least 3 scored items, got {len(x)}")
    pearson, spearman = stats.pearsonr(x, y), stats.spearmanr(x, y)
    bounds = {"pearson": (np.nan, np.nan), "spearman": (np.nan, np.nan)}
    if bootstrap:
        rng = np.random.default_rng(seed)
        draws = rng.integers(0, len(x), size=(bootstrap, len(x)))
        tail = (1 - level) / 2 * 100
        with np.errstate(invalid="ignore", divide="ignore"):
            xs, ys = x[draws], y[draws]
            ranks_x, ranks_y = stats.rankdata(xs, axis=1), stats.rankdata(ys, axis=1)
            for name, (a, b) in {"pearson": (xs, ys), "spearman": (ranks_x, ranks_y)}.items():
                a = a - a.mean(axis=1, keepdims=True)
                b = b - b.mean(axis=1, keepdims=True)
                r = (a * b).sum(axis=1) / np.sqrt((a * a).sum(axis=1) * (b * b).sum(axis=1))
                r = r[np.isfinite(r)]  # a resample of constant scores has no correlation
                bounds[name] = (float(np.percentile(r, tail)), float(np.percentile(r, 100 - tail)))
    return HumanCorrelation(float(pearson.statistic), float(pearson.pvalue), *bounds["pearson"],
                            float(spearman.statistic), float(spearman.pvalue), *bounds["spearman"],
                            int(len(x)), int((~keep).sum()))


@dataclass(frozen=True)
class CorrelationDifference:
    """Pearson r of ``first`` minus that of ``second`` with the humans, on the same items, with a paired
    percentile-bootstrap interval (items resampled once for both)."""

    difference: float
    low: float
    high: float
    n: int

    @property
    def clear(self) -> bool:
        """True when the interval excludes zero — a difference the sample supports."""
        return bool(self.low > 0 or self.high < 0)


def correlation_difference(first: Sequence[float], second: Sequence[float], human: Sequence[float], *,
                           bootstrap: int = 1000, seed: int = 0, level: float = 0.95) -> CorrelationDifference:
    """How much better ``first`` tracks ``human`` than ``second`` does (Pearson), with a paired interval.

    >>> rng = np.random.default_rng(0)
    >>> human = rng.normal(size=300)
    >>> good, poor = human + rng.normal(size=300), human + 3 * rng.normal(size=300)
    >>> result = correlation_difference(good, poor, human, bootstrap=300)
    >>> result.clear, result.difference > 0
    (True, True)
    """
    a, b, y = (np.asarray(v, dtype=float) for v in (first, second, human))
    keep = ~(np.isnan(a) | np.isnan(b) | np.isnan(y))
    a, b, y = a[keep], b[keep], y[keep]
    if len(y) < 3:
        raise ValueError(f"a correlation needs at least 3 scored items, got {len(y)}")

    def pearson(x: np.ndarray, z: np.ndarray) -> np.ndarray:
        x = x - x.mean(axis=-1, keepdims=True)
        z = z - z.mean(axis=-1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            return (x * z).sum(axis=-1) / np.sqrt((x * x).sum(axis=-1) * (z * z).sum(axis=-1))

    draws = np.random.default_rng(seed).integers(0, len(y), size=(bootstrap, len(y)))
    differences = pearson(a[draws], y[draws]) - pearson(b[draws], y[draws])
    differences = differences[np.isfinite(differences)]
    tail = (1 - level) / 2 * 100
    return CorrelationDifference(float(pearson(a, y) - pearson(b, y)), float(np.percentile(differences, tail)),
                                 float(np.percentile(differences, 100 - tail)), int(len(y)))
