"""Estimates with their intervals: correlation with human scores (the paper's kinds), proportions and means,
partial correlation and ICC. The paired and grouped bootstrap intervals are in :mod:`evalkit.stats.bootstrap`;
chapters take both from :mod:`evalkit.stats`.

A result in the book is a number with its n and an interval; these are the functions that give them.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from evalkit.stats.bootstrap import _pearson_rows, group_resamples, percentile_interval, resample_items

__all__ = ["Kind", "correlation", "cramers_v", "paper_kind", "bootstrap_ci", "Proportion", "proportion", "summarise",
           "HumanCorrelation", "correlation_with_humans", "partial_correlation", "icc_oneway", "proportion_difference"]

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
    """Percentile bootstrap interval of the correlation, resampling whole conversations by default (the
    frame's ``conversation_id``), items otherwise."""
    x, y = frame[column].to_numpy(dtype=float), frame["target"].to_numpy(dtype=float)
    draws = (group_resamples(frame["conversation_id"].tolist(), bootstrap=n, seed=seed) if by_conversation
             else resample_items(len(frame), bootstrap=n, seed=seed))
    return percentile_interval([correlation(x[chosen], y[chosen], kind) for chosen in draws], level)


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


def summarise(values: Sequence[float], *, bootstrap: int = 0, seed: int = 0, level: float = 0.95,
              bounds: tuple[float, float] | None = None) -> dict[str, float]:
    """Mean, sd, n and a Student-t interval of the non-missing values (plus a percentile bootstrap
    interval when ``bootstrap`` resamples are asked for); ``missing`` counts the NaNs left out.

    ``bounds`` is the range the values can take (a probability's [0, 1]): the t-interval is cut to it, since a
    mean cannot lie outside it and the cut interval covers the mean at least as often.

    >>> result = summarise([1.0, 2.0, 3.0, float("nan")])
    >>> result["mean"], result["n"], result["missing"], round(result["t_low"], 3), round(result["t_high"], 3)
    (2.0, 3, 1, -0.484, 4.484)
    >>> bounded = summarise([0.0, 0.9, 1.0], bounds=(0.0, 1.0))
    >>> round(bounded["t_low"], 3), bounded["t_high"]
    (0.0, 1.0)
    """
    array = np.asarray(values, dtype=float)
    kept = array[~np.isnan(array)]
    n = len(kept)
    out = {"mean": float(kept.mean()) if n else float("nan"), "sd": float(kept.std(ddof=1)) if n > 1 else float("nan"),
           "n": n, "missing": int(len(array) - n)}
    if n > 1:
        half = stats.t.ppf(0.5 + level / 2, n - 1) * out["sd"] / np.sqrt(n)
        low, high = out["mean"] - half, out["mean"] + half
        if bounds is not None:
            low, high = max(low, bounds[0]), min(high, bounds[1])
        out.update(t_low=float(low), t_high=float(high))
    else:
        out.update(t_low=float("nan"), t_high=float("nan"))
    if bootstrap and n > 1:
        means = kept[resample_items(n, bootstrap=bootstrap, seed=seed)].mean(axis=1)
        out.update(zip(("boot_low", "boot_high"), percentile_interval(means, level)))
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
        draws = resample_items(len(x), bootstrap=bootstrap, seed=seed)
        with np.errstate(invalid="ignore", divide="ignore"):
            xs, ys = x[draws], y[draws]
            ranks_x, ranks_y = stats.rankdata(xs, axis=1), stats.rankdata(ys, axis=1)
            for name, (a, b) in {"pearson": (xs, ys), "spearman": (ranks_x, ranks_y)}.items():
                a = a - a.mean(axis=1, keepdims=True)
                b = b - b.mean(axis=1, keepdims=True)
                r = (a * b).sum(axis=1) / np.sqrt((a * a).sum(axis=1) * (b * b).sum(axis=1))
                bounds[name] = percentile_interval(r, level)  # a resample of constant scores has no correlation
    return HumanCorrelation(float(pearson.statistic), float(pearson.pvalue), *bounds["pearson"],
                            float(spearman.statistic), float(spearman.pvalue), *bounds["spearman"],
                            int(len(x)), int((~keep).sum()), float(kendall.statistic), float(kendall.pvalue))


# --------------------------------------------------------------------------- partial correlation and reliability

def partial_correlation(x: Sequence[float], y: Sequence[float], control: Sequence[float]) -> float:
    """Pearson correlation of ``x`` and ``y`` with ``control`` partialled out of both:
    ``(r_xy - r_xc r_yc) / sqrt((1 - r_xc^2)(1 - r_yc^2))``; NaN pairs dropped, NaN when undefined.

    A judge's length bias is ``partial_correlation(judge, length, human)``: how much the judge follows reply
    length beyond what people's scores explain.

    >>> rng = np.random.default_rng(0)
    >>> human = rng.normal(size=500)
    >>> length = human + rng.normal(size=500)       # people like longer replies a little
    >>> fair = human + 0.1 * rng.normal(size=500)   # follows people only
    >>> abs(partial_correlation(fair, length, human)) < 0.1, partial_correlation(length, length, human) > 0.9
    (True, True)
    """
    a, b, c = (np.asarray(v, dtype=float) for v in (x, y, control))
    keep = ~(np.isnan(a) | np.isnan(b) | np.isnan(c))
    a, b, c = a[keep], b[keep], c[keep]
    if len(a) < 4 or min(np.ptp(a), np.ptp(b), np.ptp(c)) == 0:
        return float("nan")
    r_ab, r_ac, r_bc = (float(_pearson_rows(u, v)) for u, v in ((a, b), (a, c), (b, c)))
    denominator = np.sqrt((1 - r_ac ** 2) * (1 - r_bc ** 2))
    return float((r_ab - r_ac * r_bc) / denominator) if denominator > 0 else float("nan")


def icc_oneway(ratings: Sequence[Sequence[float]]) -> tuple[float, float, float]:
    """The one-way random-effects intraclass correlation of items rated by varying raters (Shrout and Fleiss
    1979, case 1): ``(ICC(1), ICC(1, k), k)``, where ``k`` is the mean number of ratings per item and
    ``ICC(1, k) = k ICC(1) / (1 + (k - 1) ICC(1))`` is the reliability of an item's mean rating.

    With unequal counts the ANOVA uses ``k0 = (N - sum k_i^2 / N) / (I - 1)``; items with fewer than two
    ratings are left out. Shrout and Fleiss's Table 2 (6 targets, 4 judges) gives 0.17 and 0.44:

    >>> table = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]
    >>> tuple(round(v, 2) for v in icc_oneway(table))
    (0.17, 0.44, 4.0)
    """
    groups = [np.asarray([v for v in row if v is not None and not np.isnan(v)], dtype=float) for row in ratings]
    groups = [g for g in groups if len(g) >= 2]
    if len(groups) < 2:
        return float("nan"), float("nan"), float("nan")
    counts = np.array([len(g) for g in groups], dtype=float)
    total, items = counts.sum(), len(groups)
    grand = np.concatenate(groups).mean()
    between = sum(len(g) * (g.mean() - grand) ** 2 for g in groups) / (items - 1)
    within = sum(((g - g.mean()) ** 2).sum() for g in groups) / (total - items)
    k0 = (total - (counts ** 2).sum() / total) / (items - 1)
    if between + (k0 - 1) * within == 0:
        return float("nan"), float("nan"), float(counts.mean())
    single = (between - within) / (between + (k0 - 1) * within)
    k = float(counts.mean())
    return float(single), float(k * single / (1 + (k - 1) * single)), k
