"""Chapter 2 — how much do the annotators agree, and what does that allow a metric to reach?

All functions take the long label table of :func:`evalkit.upheld.release.load_upheld` (one row per item and
annotator; columns ``item_id``, ``annotator`` and the label columns) and the name of one label.

* :func:`pairwise_kappa` / :func:`mean_pairwise_kappa` — Cohen's kappa for every annotator pair on the items
  both rated (scikit-learn), and their mean (the paper's 0.33);
* :func:`alpha` — Krippendorff's alpha (the ``krippendorff`` package), ordinal or interval;
* :func:`agreement_shares` — the share of items that reach each agreement level (paper Figure 5);
* :func:`leave_one_out_ceiling` — each annotator against the mean of the others: how well a single human
  predicts the crowd, the bar a metric must clear to be "human level";
* :func:`split_half_reliability` — reliability of the item means (Spearman-Brown corrected); its square
  root bounds the correlation any metric can reach against item means;
* :func:`near_duplicate_raters` — annotator pairs that agree suspiciously well.
"""
from __future__ import annotations

from itertools import combinations
from typing import Literal

import krippendorff
import numpy as np
import pandas as pd
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from evalkit.stats.bootstrap import percentile_interval, resample_items
from evalkit.upheld.release import agreement_bin

__all__ = ["rating_matrix", "pairwise_kappa", "mean_pairwise_kappa", "alpha", "agreement_shares",
           "leave_one_out_ceiling", "split_half_reliability", "spearman_brown", "near_duplicate_raters",
           "agreement_summary", "kappa_by_group", "kappa_by_group_interval", "plot_agreement_shares", "LEVELS"]

#: Agreement levels from strictest to loosest; each level's items include the stricter levels' items.
LEVELS = ("perfect", "majority", "plurality")


def rating_matrix(labels: pd.DataFrame, label: str) -> pd.DataFrame:
    """Annotators (rows) x items (columns) of one label's scores; NaN where an annotator did not rate."""
    values = labels[["annotator", "item_id", label]].dropna(subset=[label])
    return values.pivot_table(index="annotator", columns="item_id", values=label, aggfunc="first").astype(float)


def pairwise_kappa(labels: pd.DataFrame, label: str, *, min_shared: int = 20,
                   weights: Literal["linear", "quadratic"] | None = None) -> pd.DataFrame:
    """Cohen's kappa of every annotator pair that shares at least ``min_shared`` rated items."""
    matrix = rating_matrix(labels, label)
    values, rated = matrix.to_numpy(), matrix.notna().to_numpy()
    rows = []
    for i, j in combinations(range(len(matrix)), 2):
        both = rated[i] & rated[j]
        if both.sum() < min_shared:
            continue
        a, b = values[i, both], values[j, both]
        kappa = 1.0 if (a == b).all() else cohen_kappa_score(a, b, weights=weights)
        rows.append({"annotator_a": matrix.index[i], "annotator_b": matrix.index[j], "shared_items": int(both.sum()),
                     "kappa": float(kappa), "exact_agreement": float((a == b).mean())})
    return pd.DataFrame(rows, columns=["annotator_a", "annotator_b", "shared_items", "kappa", "exact_agreement"])


def mean_pairwise_kappa(labels: pd.DataFrame, label: str, **options) -> float:
    """Mean Cohen's kappa over annotator pairs (unweighted mean of the pairs)."""
    return float(pairwise_kappa(labels, label, **options)["kappa"].mean())


def alpha(labels: pd.DataFrame, label: str, level: Literal["nominal", "ordinal", "interval"] = "ordinal") -> float:
    """Krippendorff's alpha of one label over all items (missing ratings allowed)."""
    matrix = rating_matrix(labels, label)
    return float(krippendorff.alpha(reliability_data=matrix.to_numpy(), level_of_measurement=level))


def agreement_shares(labels: pd.DataFrame, label: str) -> pd.Series:
    """Share of items (with at least two ratings) that reach each agreement level, cumulative (Figure 5).

    >>> frame = pd.DataFrame({"item_id": list("aaabbbccc"), "annotator": [1, 2, 3] * 3,
    ...                       "content": [5, 5, 5, 5, 5, 1, 1, 2, 3]})
    >>> agreement_shares(frame, "content").to_dict()
    {'perfect': 0.3333333333333333, 'majority': 0.6666666666666666, 'plurality': 0.6666666666666666}
    """
    bins = labels.dropna(subset=[label]).groupby("item_id")[label].agg(lambda v: agreement_bin(v.tolist()))
    bins = bins[bins != "single"]
    reached = {level: float(bins.isin(LEVELS[:position + 1]).mean()) for position, level in enumerate(LEVELS)}
    return pd.Series(reached, name=label)


def leave_one_out_ceiling(labels: pd.DataFrame, label: str,
                          method: Literal["pearson", "spearman"] = "pearson") -> pd.DataFrame:
    """Per annotator: correlation of their scores with the mean of the *other* annotators on the same items."""
    matrix = rating_matrix(labels, label)
    totals, counts = matrix.sum(axis=0), matrix.count(axis=0)
    rows = []
    for annotator in matrix.index:
        own = matrix.loc[annotator]
        # Mean of the others = (sum of all - own) / (count of all - 1), on the items this annotator rated.
        others = (totals - own) / (counts - 1)
        keep = own.notna() & (counts > 1)
        if keep.sum() < 3 or own[keep].nunique() < 2:
            continue
        function = stats.pearsonr if method == "pearson" else stats.spearmanr
        rows.append({"annotator": annotator, "items": int(keep.sum()),
                     "correlation": float(function(own[keep], others[keep])[0])})
    return pd.DataFrame(rows, columns=["annotator", "items", "correlation"])


def spearman_brown(correlation: float, factor: float = 2.0) -> float:
    """Reliability of a test ``factor`` times as long as one with reliability ``correlation``.

    >>> round(spearman_brown(0.5), 4)
    0.6667
    """
    return factor * correlation / (1 + (factor - 1) * correlation)


def split_half_reliability(labels: pd.DataFrame, label: str, *, repeats: int = 50, seed: int = 0) -> dict[str, float]:
    """Random split-half reliability of item means, Spearman-Brown corrected, averaged over ``repeats``.

    Each item's ratings are split at random into two halves (items with fewer than two ratings are left
    out); the correlation of the two halves' means across items, corrected to full length, estimates the
    reliability of the item means. ``ceiling`` (its square root) bounds any metric's Pearson correlation
    with the item means.
    """
    rng = np.random.default_rng(seed)
    matrix = rating_matrix(labels, label).T.to_numpy()  # items x annotators, NaN where not rated
    counts = (~np.isnan(matrix)).sum(axis=1)
    matrix, counts = matrix[counts >= 2], counts[counts >= 2]
    halves = counts // 2
    estimates = []
    rated, values = ~np.isnan(matrix), np.nan_to_num(matrix)
    for _ in range(repeats):
        # A random order of each item's ratings (unrated cells sorted last); the first half goes to one side.
        keys = np.where(rated, rng.random(matrix.shape), np.inf)
        ranks = keys.argsort(axis=1).argsort(axis=1)
        first = rated & (ranks < halves[:, None])
        second = rated & ~first
        first_mean = (values * first).sum(axis=1) / first.sum(axis=1)
        second_mean = (values * second).sum(axis=1) / second.sum(axis=1)
        estimates.append(stats.pearsonr(first_mean, second_mean)[0])
    half_r = float(np.mean(estimates))
    reliability = spearman_brown(half_r)
    return {"split_half_r": half_r, "reliability": reliability, "ceiling": float(np.sqrt(max(reliability, 0))),
            "items": int(len(matrix))}


def near_duplicate_raters(labels: pd.DataFrame, labels_to_check: tuple[str, ...] = ("content", "style", "reasonable"),
                          *, threshold: float = 0.9, min_shared: int = 20) -> pd.DataFrame:
    """Annotator pairs whose kappa exceeds ``threshold`` on at least one label — likely one person, or
    copied answers. Columns: the pair, each label's kappa, and which labels crossed the threshold."""
    tables = [pairwise_kappa(labels, name, min_shared=min_shared).set_index(["annotator_a", "annotator_b"])
              ["kappa"].rename(name) for name in labels_to_check]
    joined = pd.concat(tables, axis=1)
    above = joined > threshold
    flagged = joined[above.any(axis=1)].copy()
    flagged["labels_above"] = [", ".join(name for name in labels_to_check if above.loc[index, name])
                               for index in flagged.index]
    return flagged.reset_index()


def agreement_summary(labels_by_subset: dict[str, pd.DataFrame], label_names: tuple[str, ...] = ("content", "style",
                      "reasonable"), *, repeats: int = 50, seed: int = 0) -> pd.DataFrame:
    """One row per (subset, label): kappa, alpha (ordinal and interval), the leave-one-out human correlation
    and the split-half reliability with the ceiling it implies for metrics against item means."""
    rows = []
    for subset, labels in labels_by_subset.items():
        for name in label_names:
            split = split_half_reliability(labels, name, repeats=repeats, seed=seed)
            rows.append({"subset": subset, "label": name,
                         "mean pairwise kappa": mean_pairwise_kappa(labels, name),
                         "alpha (ordinal)": alpha(labels, name, "ordinal"),
                         "alpha (interval)": alpha(labels, name, "interval"),
                         "one annotator vs the others (r)": float(leave_one_out_ceiling(labels, name)["correlation"].mean()),
                         "split-half reliability": split["reliability"],
                         "ceiling vs item means (r)": split["ceiling"]})
    return pd.DataFrame(rows).set_index(["subset", "label"])


def kappa_by_group(labels: pd.DataFrame, label: str, by: str = "model", **options) -> pd.Series:
    """Mean pairwise kappa within each group (e.g. per candidate source)."""
    return pd.Series({group: mean_pairwise_kappa(part, label, **options)
                      for group, part in labels.groupby(by)}, name=label)


def _resampled_mean_kappa(labels: pd.DataFrame, label: str, weights: np.ndarray, min_shared: int) -> np.ndarray:
    """Mean pairwise (unweighted) Cohen's kappa for each row of ``weights`` (resample counts per item, items in
    the rating matrix's column order); pairs are those sharing ``min_shared`` items in the original sample."""
    matrix = rating_matrix(labels, label)
    values, rated = matrix.to_numpy(), matrix.notna().to_numpy()
    categories = np.unique(values[rated])
    codes = np.searchsorted(categories, np.where(rated, values, categories[0]))
    k = len(categories)
    kappas = []
    for i, j in combinations(range(len(matrix)), 2):
        both = np.flatnonzero(rated[i] & rated[j])
        if len(both) < min_shared:
            continue
        cells = np.zeros((len(both), k * k))
        cells[np.arange(len(both)), codes[i, both] * k + codes[j, both]] = 1.0
        confusion = (weights[:, both] @ cells).reshape(-1, k, k)
        total = confusion.sum(axis=(1, 2))
        observed = np.trace(confusion, axis1=1, axis2=2) / total
        expected = (confusion.sum(axis=2) * confusion.sum(axis=1)).sum(axis=1) / total ** 2
        with np.errstate(invalid="ignore", divide="ignore"):
            kappa = np.where(expected >= 1.0, np.where(observed >= 1.0, 1.0, 0.0),
                             (observed - expected) / (1.0 - expected))
        kappas.append(kappa)
    return np.mean(kappas, axis=0) if kappas else np.full(len(weights), np.nan)


def kappa_by_group_interval(labels: pd.DataFrame, label: str, by: str = "model", *, bootstrap: int = 500,
                            seed: int = 0, level: float = 0.95, min_shared: int = 20) -> pd.DataFrame:
    """:func:`kappa_by_group` with a percentile-bootstrap interval per group: the group's items are resampled
    with replacement (an item keeps all its ratings) and the mean pairwise kappa recomputed. Columns ``kappa``,
    ``low``, ``high``, ``items``.

    >>> frame = pd.DataFrame({"item_id": np.repeat(np.arange(40), 2), "annotator": [1, 2] * 40,
    ...                       "model": np.repeat(["a", "b"], 40), "content": [1, 1] * 20 + [1, 2, 2, 1] * 10})
    >>> kappa_by_group_interval(frame, "content", bootstrap=50, min_shared=5)[["kappa", "items"]]
       kappa  items
    a    1.0     20
    b   -1.0     20
    """
    rows, rng = {}, np.random.default_rng(seed)
    for group, part in labels.groupby(by):
        items = rating_matrix(part, label).shape[1]
        draws = resample_items(items, bootstrap=bootstrap, seed=rng)
        weights = np.stack([np.bincount(row, minlength=items) for row in draws]).astype(float)
        point = _resampled_mean_kappa(part, label, np.ones((1, items)), min_shared)[0]
        low, high = percentile_interval(_resampled_mean_kappa(part, label, weights, min_shared), level)
        rows[group] = {"kappa": float(point), "low": float(low), "high": float(high), "items": items}
    return pd.DataFrame(rows).T.astype({"items": int})


def plot_agreement_shares(shares: pd.DataFrame, title: str = "Share of items reaching each agreement level"):
    """Grouped bars: rows of ``shares`` are labels, columns the levels (paper Figure 5)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.6))
    width = 0.8 / len(shares.columns)
    positions = np.arange(len(shares.index))
    for offset, level in enumerate(shares.columns):
        ax.bar(positions + offset * width - 0.4 + width / 2, shares[level], width, label=level)
    ax.set_xticks(positions, [" / ".join(map(str, i)) if isinstance(i, tuple) else str(i) for i in shares.index],
                  rotation=15, ha="right")
    ax.set_ylim(0, 1)
    ax.set_ylabel("share of items kept")
    ax.set_title(title)
    ax.legend(title="at least", loc="lower right")
    fig.tight_layout()
    return fig
