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
from sklearn.model_selection import GroupKFold, KFold

from evalkit.stats import Kind, bootstrap_ci, correlation, cramers_v, paper_kind
from evalkit.upheld.release import CALIBRATION_SOURCES

# correlation, cramers_v, paper_kind and bootstrap_ci live in evalkit.stats (shared by every chapter) and are
# re-exported here, where chapter 3 has always found them.
__all__ = ["CALIBRATION_SOURCES", "evaluation_frame", "correlation", "cramers_v", "paper_kind", "folds",
           "fold_correlations", "bootstrap_ci", "correlation_table"]



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
