"""Chapter 3 — how well does a metric track the humans? Correlations, protocols, folds and intervals.

The paper reports Pearson for numeric labels, Cramér's V for categorical ones and point-biserial for binary
ones, as the mean ± sd over 5 cross-validation folds. Two protocol choices move these numbers a lot on the
released data, so :func:`evaluation_frame` makes both explicit:

* ``target="item_mean"`` (one row per item, the mean of its ratings) or ``"annotations"`` (one row per
  rating);
* ``sources="all"`` (all six candidate sources) or ``"real"`` (the four real models, without the random
  utterance and the paraphrased reference, which stretch the range and make correlation easy).

Folds are plain shuffled K-fold (as the paper) or grouped by conversation (ours: the same turn appears with
six candidates and one shared reference, so plain folds put near-copies in train and test).
"""
from __future__ import annotations

from typing import Iterator, Literal

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.model_selection import GroupKFold, KFold

from .upheld import CALIBRATION_SOURCES

__all__ = ["CALIBRATION_SOURCES", "evaluation_frame", "correlation", "cramers_v", "paper_kind", "folds",
           "fold_correlations", "bootstrap_ci", "correlation_table"]

Kind = Literal["pearson", "spearman", "kendall", "pointbiserial", "cramers_v"]


def evaluation_frame(items: pd.DataFrame, labels: pd.DataFrame, scores: pd.DataFrame, label: str, *,
                     target: Literal["item_mean", "annotations"] = "item_mean",
                     sources: Literal["all", "real"] = "all") -> pd.DataFrame:
    """Rows to correlate: ``item_id``, ``conversation_id``, ``model``, ``target`` (and the item's rating sd
    ``target_std`` and agreement bin) and the score columns.

    ``scores`` is indexed by ``item_id`` (one row per item, one column per metric).
    """
    base = items.set_index("item_id")[["conversation_id", "model", f"{label}_mean", f"{label}_std", f"{label}_bin"]]
    base = base.rename(columns={f"{label}_mean": "target", f"{label}_std": "target_std",
                                f"{label}_bin": "agreement_bin"})
    if target == "annotations":
        ratings = labels[["item_id", label]].dropna().rename(columns={label: "target"})
        frame = ratings.join(base.drop(columns="target"), on="item_id")
    elif target == "item_mean":
        frame = base.dropna(subset=["target"]).reset_index()
    else:
        raise ValueError(f"target must be 'item_mean' or 'annotations', not {target!r}")
    if sources == "real":
        frame = frame[~frame["model"].isin(CALIBRATION_SOURCES)]
    elif sources != "all":
        raise ValueError(f"sources must be 'all' or 'real', not {sources!r}")
    # Only items that were scored take part (a sample may score fewer items than the set holds).
    return frame.join(scores, on="item_id", how="inner").reset_index(drop=True)


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


def folds(frame: pd.DataFrame, *, n_splits: int = 5, grouped: bool = False,
          seed: int = 0) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(train, test) index arrays: shuffled K-fold, or grouped by ``conversation_id`` when ``grouped``."""
    if grouped:
        splitter = GroupKFold(n_splits=n_splits, shuffle=True, random_state=seed)
        yield from splitter.split(frame, groups=frame["conversation_id"])
    else:
        yield from KFold(n_splits=n_splits, shuffle=True, random_state=seed).split(frame)


def fold_correlations(frame: pd.DataFrame, column: str, kind: Kind = "pearson", *, n_splits: int = 5,
                      grouped: bool = False, seed: int = 0) -> tuple[float, float]:
    """Mean and sd of the correlation on each test fold (the paper's 'mean ± sd' for a fixed metric)."""
    values = [correlation(frame[column].to_numpy()[test], frame["target"].to_numpy()[test], kind)
              for _, test in folds(frame, n_splits=n_splits, grouped=grouped, seed=seed)]
    return float(np.nanmean(values)), float(np.nanstd(values, ddof=1))


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


def correlation_table(frame: pd.DataFrame, columns: list[str], kind: Kind = "pearson", *, n_splits: int = 5,
                      seed: int = 0) -> pd.DataFrame:
    """Per score column: correlation on all rows, Spearman, Kendall, and fold mean ± sd for both fold kinds."""
    rows = []
    for column in columns:
        plain = fold_correlations(frame, column, kind, n_splits=n_splits, seed=seed)
        grouped = fold_correlations(frame, column, kind, n_splits=n_splits, grouped=True, seed=seed)
        rows.append({"metric": column, kind: correlation(frame[column], frame["target"], kind),
                     "spearman": correlation(frame[column], frame["target"], "spearman"),
                     "kendall": correlation(frame[column], frame["target"], "kendall"),
                     "cv mean": plain[0], "cv sd": plain[1],
                     "grouped cv mean": grouped[0], "grouped cv sd": grouped[1]})
    return pd.DataFrame(rows).set_index("metric")
