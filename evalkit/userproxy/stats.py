"""Aggregation of per-episode scores: mean, sd, Student-t and bootstrap 95% intervals; and the correlation
of a judge with human labels (Spearman, Pearson, Kendall)."""
from __future__ import annotations

from typing import Sequence

import numpy as np
from scipy import stats

__all__ = ["summarise", "judge_human_correlation"]


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


def judge_human_correlation(judge: Sequence[float], human: Sequence[float]) -> dict[str, float]:
    """Spearman, Pearson and Kendall (with p-values) between judge scores and human labels, NaNs dropped."""
    x, y = np.asarray(judge, dtype=float), np.asarray(human, dtype=float)
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    if len(x) < 3:
        raise ValueError(f"need at least 3 scored pairs, got {len(x)}")
    spearman, pearson, kendall = stats.spearmanr(x, y), stats.pearsonr(x, y), stats.kendalltau(x, y)
    return {"spearman": float(spearman.statistic), "spearman_p": float(spearman.pvalue),
            "pearson": float(pearson.statistic), "pearson_p": float(pearson.pvalue),
            "kendall": float(kendall.statistic), "kendall_p": float(kendall.pvalue), "n": int(len(x))}
