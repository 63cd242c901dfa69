"""Chapter 3 — Mixture-of-Judges: learned ensembles of metric scores that predict the human score.

scikit-learn pipelines (linear regression, SVM regression, random forest) take the metric columns as
features and the item's mean human score as target. :func:`cross_validate` gives out-of-fold predictions
for plain or conversation-grouped folds; :func:`fit` trains on a whole set for transfer to the check sets;
:func:`single_feature_regressions` gives each feature's slope and p-value alone (paper App. I);
``agreement_weights`` makes training agreement-aware (items the annotators agreed on count more).
"""
from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import LinearRegression
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVR
from sklearn.tree import DecisionTreeRegressor

from .correlation import correlation, folds

__all__ = ["ENSEMBLES", "make_model", "agreement_weights", "cross_validate", "fit", "single_feature_regressions",
           "decision_tree"]

ENSEMBLES = ("linear", "svm", "random_forest")


def make_model(name: Literal["linear", "svm", "random_forest"], *, seed: int = 0) -> Pipeline:
    """A fresh, unfitted pipeline (features standardised first)."""
    if name == "linear":
        estimator = LinearRegression()
    elif name == "svm":
        estimator = SVR(kernel="rbf", C=1.0, epsilon=0.1)
    elif name == "random_forest":
        estimator = RandomForestRegressor(n_estimators=200, min_samples_leaf=5, random_state=seed, n_jobs=1)
    else:
        raise ValueError(f"unknown ensemble {name!r} (one of {ENSEMBLES})")
    return make_pipeline(StandardScaler(), estimator)


def agreement_weights(frame: pd.DataFrame, scale_range: float = 4.0) -> np.ndarray:
    """Weight per item from annotator agreement: 1 − (rating sd / half the scale range), floored at 0.1.

    >>> agreement_weights(pd.DataFrame({"target_std": [0.0, 2.0, float("nan")]})).round(2).tolist()
    [1.0, 0.1, 1.0]
    """
    spread = frame["target_std"].fillna(0.0).to_numpy(dtype=float)
    return np.clip(1.0 - spread / (scale_range / 2), 0.1, 1.0)


def _fit(model: Pipeline, features: np.ndarray, target: np.ndarray, weights: np.ndarray | None) -> Pipeline:
    if weights is None:
        return model.fit(features, target)
    step = model.steps[-1][0]
    return model.fit(features, target, **{f"{step}__sample_weight": weights})


def cross_validate(frame: pd.DataFrame, features: list[str], name: str, *, n_splits: int = 5,
                   grouped: bool = False, seed: int = 0, weighted: bool = False) -> dict[str, object]:
    """Out-of-fold predictions and the per-fold Pearson correlation (mean ± sd) of one ensemble."""
    data = frame.dropna(subset=[*features, "target"]).reset_index(drop=True)
    x, y = data[features].to_numpy(dtype=float), data["target"].to_numpy(dtype=float)
    weights = agreement_weights(data) if weighted else None
    predictions = np.full(len(data), np.nan)
    per_fold = []
    for train, test in folds(data, n_splits=n_splits, grouped=grouped, seed=seed):
        model = _fit(make_model(name, seed=seed), x[train], y[train], None if weights is None else weights[train])
        predictions[test] = model.predict(x[test])
        per_fold.append(correlation(predictions[test], y[test]))
    return {"predictions": pd.Series(predictions, index=data["item_id"]), "mean": float(np.nanmean(per_fold)),
            "sd": float(np.nanstd(per_fold, ddof=1)), "folds": per_fold}


def fit(frame: pd.DataFrame, features: list[str], name: str, *, seed: int = 0, weighted: bool = False) -> Pipeline:
    """An ensemble trained on every row of ``frame`` (for transfer to another dataset)."""
    data = frame.dropna(subset=[*features, "target"])
    weights = agreement_weights(data) if weighted else None
    return _fit(make_model(name, seed=seed), data[features].to_numpy(dtype=float),
                data["target"].to_numpy(dtype=float), weights)


def single_feature_regressions(frame: pd.DataFrame, features: list[str]) -> pd.DataFrame:
    """Each feature alone: OLS slope on the standardised feature, r, and p-value (paper App. I)."""
    rows = []
    for feature in features:
        data = frame[[feature, "target"]].dropna()
        values = data[feature].to_numpy(dtype=float)
        standardised = (values - values.mean()) / (values.std() or 1.0)
        fit_ = stats.linregress(standardised, data["target"].to_numpy(dtype=float))
        rows.append({"feature": feature, "coefficient (per sd)": fit_.slope, "r": fit_.rvalue,
                     "p-value": fit_.pvalue, "n": len(data)})
    return pd.DataFrame(rows).set_index("feature")


def decision_tree(frame: pd.DataFrame, features: list[str], *, max_depth: int = 3, seed: int = 0):
    """A shallow regression tree on the raw features, for the picture (paper Fig. 4)."""
    data = frame.dropna(subset=[*features, "target"])
    tree = DecisionTreeRegressor(max_depth=max_depth, min_samples_leaf=20, random_state=seed)
    return tree.fit(data[features].to_numpy(dtype=float), data["target"].to_numpy(dtype=float))

