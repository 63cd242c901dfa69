"""Statistics every chapter shares: correlation with human scores (the paper's kinds, with intervals),
intervals for proportions and means, and the paired difference of two correlations.

A result in the book is a number with its n and an interval; these are the functions that give them.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats

__all__ = ["Kind", "correlation", "cramers_v", "paper_kind", "bootstrap_ci", "Proportion", "proportion", "summarise",
           "HumanCorrelation", "correlation_with_humans", "CorrelationDifference", "correlation_difference",
           "mean_correlation_difference"]

Kind = Literal["pearson", "spearman", "kendall", "pointbiserial", "cramers_v"]


# --------------------------------------------------------------------------- correlation of a metric with labels

def cramers_v(first, second) -> float:
    """Cramér's V between two categorical variables (scipy's association measure).

    >>> round(cramers_v([1, 1, 2, 2], ["a", "a", "b", "b"]), 4)
    1.0
    """
    table = pd.crosstab(pd.Series(np.asarray(first)), pd.Series(np.asarray(second)))
    if min(table.shape) < 2:
        return float("nan")
    return float(stats.contingency.association(table.to_numpy(), method="cramer"))


def paper_kind(values) -> Kind:
    """The paper's choice for a metric: point-biserial for a binary one, Pearson otherwise.

    >>> paper_kind([0, 1, 1, 0]), paper_kind([0.2, 0.9, 0.4])
    ('pointbiserial', 'pearson')
    """
    return "pointbiserial" if len(np.unique(np.asarray(values, dtype=float))) == 2 else "pearson"


def correlation(x, y, kind: Kind = "pearson") -> float:
    """Correlation of metric ``x`` with human target ``y``; NaN pairs dropped, NaN when undefined.

    ``pointbiserial`` wants a binary ``x``; ``cramers_v`` treats both as categories (round item means first).

    >>> round(correlation([1, 2, 3, 4], [1, 2, 3, 5]), 4)
    0.9827
    >>> correlation([1, 1, 1], [1, 2, 3])
    nan
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    if kind == "pearson":
        return float(stats.pearsonr(x, y)[0])
    if kind == "spearman":
        return float(stats.spearmanr(x, y)[0])
    if kind == "kendall":
        return float(stats.kendalltau(x, y)[0])
    if kind == "pointbiserial":
        if len(np.unique(x)) != 2:
            raise ValueError("point-biserial correlation needs a binary metric")
        return float(stats.pointbiserialr(x == x.max(), y)[0])
    if kind == "cramers_v":
        return cramers_v(x, y)
    raise ValueError(f"unknown correlation kind {kind!r}")


def bootstrap_ci(frame: pd.DataFrame, column: str, kind: Kind = "pearson", *, n: int = 1000, seed: int = 0,
                 by_conversation: bool = True, level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the correlation, resampling whole conversations by default."""
    rng = np.random.default_rng(seed)
    if by_conversation:
        groups = frame.groupby("conversation_id").indices
        members = list(groups.values())
    else:
        members = [np.array([i]) for i in range(len(frame))]
    x, y = frame[column].to_numpy(dtype=float), frame["target"].to_numpy(dtype=float)
    estimates = []
    for _ in range(n):
        chosen = np.concatenate([members[i] for i in rng.integers(len(members), size=len(members))])
        estimates.append(correlation(x[chosen], y[chosen], kind))
    low, high = np.nanpercentile(estimates, [(1 - level) / 2 * 100, (1 + level) / 2 * 100])
    return float(low), float(high)


# --------------------------------------------------------------------------- proportions and means

@dataclass(frozen=True)
class Proportion:
    """``successes`` of ``n`` with a Wilson score interval (``level``, default 95%)."""

    successes: float  # a whole count, or with half-wins (ties) a multiple of 0.5
    n: int
    low: float
    high: float
    level: float = 0.95

    @property
    def value(self) -> float:
        return self.successes / self.n if self.n else float("nan")

    @property
    def interval(self) -> str:
        """The value and its interval without n, for a sentence that gives n once.

        >>> Proportion(3, 4, 0.3, 0.95).interval
        '0.750 [0.300, 0.950]'
        """
        return f"{self.value:.3f} [{self.low:.3f}, {self.high:.3f}]"

    def __str__(self) -> str:
        return f"{self.interval} (n = {self.n})"

    def as_dict(self) -> dict[str, float]:
        return {**asdict(self), "value": self.value}


def proportion_difference(first: Proportion, second: Proportion) -> tuple[float, float, float]:
    """``first - second`` of two independent proportions with Newcombe's hybrid score interval (1998, method
    10), built from the two Wilson intervals at their own level.

    >>> a, b = proportion([1] * 56 + [0] * 14), proportion([1] * 48 + [0] * 32)  # Newcombe's example
    >>> tuple(round(x, 4) for x in proportion_difference(a, b))
    (0.2, 0.0524, 0.3339)
    """
    difference = first.value - second.value
    low = difference - np.hypot(first.value - first.low, second.high - second.value)
    high = difference + np.hypot(first.high - first.value, second.value - second.low)
    return float(difference), float(low), float(high)


def proportion(outcomes: Sequence[bool] | np.ndarray, *, level: float = 0.95) -> Proportion:
    """The share of true outcomes with a Wilson interval (NaN outcomes — abstentions — are left out).

    Outcomes of 0.5 (a tie counted as half a win) count as half a success; the Wilson formula is used as is
    with the fractional count (scipy's binomial test wants whole counts).

    >>> str(proportion([True] * 85 + [False] * 15))
    '0.850 [0.767, 0.907] (n = 100)'
    >>> proportion([1, 0, 0.5, 1]).value
    0.625
    """
    values = np.asarray(outcomes, dtype=float)
    values = values[~np.isnan(values)]
    n, successes = int(len(values)), float(values.sum())
    if n == 0:
        return Proportion(0, 0, float("nan"), float("nan"), level)
    if successes.is_integer():
        successes = int(successes)
        interval = stats.binomtest(successes, n).proportion_ci(confidence_level=level, method="wilson")
        return Proportion(successes, n, float(interval.low), float(interval.high), level)
    z = float(stats.norm.ppf(0.5 + level / 2))
    share = successes / n
    centre = (share + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(share * (1 - share) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return Proportion(successes, n, float(centre - half), float(centre + half), level)


def summarise(values: Sequence[float], *, bootstrap: int = 0, seed: int = 0, level: float = 0.95) -> dict[str, float]:
    """Mean, sd, n and a Student-t interval of the non-missing values (plus a percentile bootstrap
    interval when ``bootstrap`` resamples are asked for); ``missing`` counts the NaNs left out.

    >>> result = summarise([1.0, 2.0, 3.0, float("nan")])
    >>> result["mean"], result["n"], result["missing"], round(result["t_low"], 3), round(result["t_high"], 3)
    (2.0, 3, 1, -0.484, 4.484)
    """
    array = np.asarray(values, dtype=float)
    kept = array[~np.isnan(array)]
    n = len(kept)
    out = {"mean": float(kept.mean()) if n else float("nan"), "sd": float(kept.std(ddof=1)) if n > 1 else float("nan"),
           "n": n, "missing": int(len(array) - n)}
    if n > 1:
        half = stats.t.ppf(0.5 + level / 2, n - 1) * out["sd"] / np.sqrt(n)
        out.update(t_low=float(out["mean"] - half), t_high=float(out["mean"] + half))
    else:
        out.update(t_low=float("nan"), t_high=float("nan"))
    if bootstrap and n > 1:
        rng = np.random.default_rng(seed)
        means = kept[rng.integers(0, n, size=(bootstrap, n))].mean(axis=1)
        out.update(boot_low=float(np.quantile(means, (1 - level) / 2)),
                   boot_high=float(np.quantile(means, 0.5 + level / 2)))
    return out


# --------------------------------------------------------------------------- correlation with humans, with intervals

@dataclass(frozen=True)
class HumanCorrelation:
    """Pearson, Spearman and Kendall of a metric with human scores: p-values, n, and percentile-bootstrap
    intervals for Pearson and Spearman (items resampled with replacement, ``bootstrap`` times; 0 leaves the
    intervals out)."""

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
    kendall: float = float("nan")
    kendall_p: float = float("nan")

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
    pearson, spearman, kendall = stats.pearsonr(x, y), stats.spearmanr(x, y), stats.kendalltau(x, y)
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
                            int(len(x)), int((~keep).sum()), float(kendall.statistic), float(kendall.pvalue))


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
    a, b, y = (np.asarray(v, dtype=float) for v in (first, second, human))
    keep = ~(np.isnan(a) | np.isnan(b) | np.isnan(y))
    a, b, y = a[keep], b[keep], y[keep]
    if len(y) < 3:
        raise ValueError(f"a correlation needs at least 3 scored items, got {len(y)}")
    if kind not in ("pearson", "spearman"):
        raise ValueError(f"kind must be pearson or spearman, not {kind!r}")
    if bootstrap < 1:
        raise ValueError(f"a paired interval needs at least one bootstrap resample, got {bootstrap}")
    ranked = (lambda v: stats.rankdata(v, axis=-1)) if kind == "spearman" else (lambda v: v)  # noqa: E731
    draws = np.random.default_rng(seed).integers(0, len(y), size=(bootstrap, len(y)))
    differences = (_pearson_rows(ranked(a[draws]), ranked(y[draws]))
                   - _pearson_rows(ranked(b[draws]), ranked(y[draws])))
    a, b, y = ranked(a), ranked(b), ranked(y)
    return float(_pearson_rows(a, y) - _pearson_rows(b, y)), differences, int(len(y))


def correlation_difference(first: Sequence[float], second: Sequence[float], human: Sequence[float], *,
                           bootstrap: int = 1000, seed: int = 0, level: float = 0.95,
                           kind: Literal["pearson", "spearman"] = "pearson") -> CorrelationDifference:
    """How much better ``first`` tracks ``human`` than ``second`` does (Pearson, or Spearman: Pearson of the
    ranks, re-ranked within each resample), with a paired interval.

    >>> rng = np.random.default_rng(0)
    >>> human = rng.normal(size=300)
    >>> good, poor = human + rng.normal(size=300), human + 3 * rng.normal(size=300)
    >>> result = correlation_difference(good, poor, human, bootstrap=300)
    >>> result.clear, result.difference > 0
    (True, True)
    """
    observed, differences, n = _difference_draws(first, second, human, bootstrap=bootstrap, seed=seed, kind=kind)
    differences = differences[np.isfinite(differences)]
    if not len(differences):
        raise ValueError(f"every one of {bootstrap} resamples was constant: no interval on {n} items")
    tail = (1 - level) / 2 * 100
    return CorrelationDifference(observed, float(np.percentile(differences, tail)),
                                 float(np.percentile(differences, 100 - tail)), n)


def mean_correlation_difference(sets: Mapping[str, tuple[Sequence[float], Sequence[float], Sequence[float]]], *,
                                bootstrap: int = 1000, seed: int = 0, level: float = 0.95,
                                kind: Literal["pearson", "spearman"] = "pearson") -> CorrelationDifference:
    """The mean over several sets of (correlation of ``first`` minus that of ``second`` with the humans), as in
    a table's "mean over sets" column, with a paired interval: each set's items are resampled on their own
    (the sets are independent samples) and the per-set differences averaged within each resample. ``sets``
    maps a set's name to (first, second, human); ``n`` is the total number of items.

    >>> rng = np.random.default_rng(1)
    >>> def one(n):
    ...     human = rng.normal(size=n)
    ...     return human + rng.normal(size=n), human + 2 * rng.normal(size=n), human
    >>> result = mean_correlation_difference({"a": one(200), "b": one(300)}, bootstrap=300)
    >>> result.clear, result.difference > 0, result.n
    (True, True, 500)
    """
    if not sets:
        raise ValueError("no sets to average over")
    observed, draws, total = [], [], 0
    for offset, (name, (first, second, human)) in enumerate(sets.items()):
        value, differences, n = _difference_draws(first, second, human, bootstrap=bootstrap, seed=seed + offset,
                                                  kind=kind)
        observed.append(value)
        draws.append(differences)
        total += n
    means = np.mean(draws, axis=0)
    means = means[np.isfinite(means)]
    if not len(means):
        raise ValueError(f"every one of {bootstrap} resamples was constant in some set")
    tail = (1 - level) / 2 * 100
    return CorrelationDifference(float(np.mean(observed)), float(np.percentile(means, tail)),
                                 float(np.percentile(means, 100 - tail)), total)
