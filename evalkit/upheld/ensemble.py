"""Chapter 3 — Mixture-of-Judges: learned ensembles of metric scores that predict the human score.

scikit-learn pipelines (linear regression, SVM regression, random forest) take the metric columns as
features and the item's mean human score as target. :func:`cross_validate` gives out-of-fold predictions
for plain or conversation-grouped folds; :func:`fit` trains on a whole set for transfer to the check sets;
:func:`single_feature_regressions` gives each feature's slope and p-value alone (paper App. I);
``agreement_weights`` makes training agreement-aware (items the annotators agreed on count more).
"""
from __future__ import annotations

from typing import Literal, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import LinearRegression
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVR
from sklearn.tree import DecisionTreeRegressor

from evalkit.upheld.correlation import correlation, folds
from evalkit.stats import correlation_with_humans

__all__ = ["ENSEMBLES", "make_model", "agreement_weights", "cross_validate", "fit", "single_feature_regressions",
           "decision_tree", "ensemble_table", "feature_group_table", "chosen_on_training"]

ENSEMBLES = ("linear", "svm", "random_forest")


def make_model(name: Literal["linear", "svm", "random_forest"], *, seed: int = 0) -> Pipeline:
    """A fresh, unfitted pipeline (features standardised first)."""
    if name == "linear":
        estimator = LinearRegression()
    elif name == "svm":
        estimator = SVR(kernel="rbf", C=1.0, epsilon=0.1)
    elif name == "random_forest":
        # Trees are fitted on both cores (_fit); each tree's seed is drawn before they are shared out, so the
        # forest is the same as on one core. Prediction stays on one: threads would sum the trees' outputs in
        # the order they finish, and float sums depend on order.
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


FIT_JOBS = 2  # the two cores of the machine the book is sized for; the forest does not depend on it


def _fit(model: Pipeline, features: np.ndarray, target: np.ndarray, weights: np.ndarray | None) -> Pipeline:
    """``model`` fitted (with item weights where given); a random forest builds its trees on ``FIT_JOBS``
    threads and is left to predict on one."""
    estimator = model.steps[-1][1]
    forest = isinstance(estimator, RandomForestRegressor)
    if forest:
        estimator.set_params(n_jobs=FIT_JOBS)
    try:
        if weights is None:
            model.fit(features, target)
        else:
            model.fit(features, target, **{f"{model.steps[-1][0]}__sample_weight": weights})
    finally:
        if forest:
            estimator.set_params(n_jobs=1)
    return model


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



def _transfer(fitted: Pipeline, frame: pd.DataFrame, features: list[str], *, bootstrap: int,
              seed: int) -> tuple[dict[str, float], pd.Series]:
    """An ensemble trained elsewhere, applied unchanged to ``frame``: Pearson r with the humans, its
    bootstrap interval and n; and the predictions by item."""
    data = frame.dropna(subset=[*features, "target"])
    predicted = fitted.predict(data[features].to_numpy(dtype=float))
    result = correlation_with_humans(predicted, data["target"], bootstrap=bootstrap, seed=seed)
    return ({"r": result.pearson, "low": result.pearson_low, "high": result.pearson_high, "n": result.n},
            pd.Series(predicted, index=data["item_id"].to_numpy()))


def ensemble_table(frames: Mapping[str, Mapping[str, pd.DataFrame]], features: list[str], *,
                   labels: Sequence[str], train: str = "upheld", checks: Sequence[str] = ("llm_arena", "topical_chat"),
                   n_splits: int = 5, seed: int = 0, bootstrap: int = 1000) -> pd.DataFrame:
    """Every ensemble (plain and agreement-weighted) per label: cross-validated on ``train`` with plain and
    conversation-grouped folds (mean and sd over folds), then trained on all of ``train`` and applied
    unchanged to each check set (``<check> transfer`` r with ``low``/``high`` bootstrap bounds and ``n``).
    ``frames[label][dataset]`` are :func:`~evalkit.upheld.correlation.evaluation_frame` frames. Rows: (label,
    ensemble)."""
    rows = []
    for label in labels:
        training = frames[label][train]
        for name in ENSEMBLES:
            for weighted in (False, True):
                plain = cross_validate(training, features, name, n_splits=n_splits, seed=seed, weighted=weighted)
                grouped = cross_validate(training, features, name, n_splits=n_splits, seed=seed, grouped=True,
                                         weighted=weighted)
                row = {"label": label, "ensemble": name + (" (weighted)" if weighted else ""),
                       f"{train} cv": plain["mean"], f"{train} cv sd": plain["sd"],
                       f"{train} grouped cv": grouped["mean"], f"{train} grouped cv sd": grouped["sd"]}
                fitted = fit(training, features, name, seed=seed, weighted=weighted)
                for check in checks:
                    result, _ = _transfer(fitted, frames[label][check], features, bootstrap=bootstrap, seed=seed)
                    row.update({f"{check} transfer": result["r"], f"{check} low": result["low"],
                                f"{check} high": result["high"], f"{check} n": result["n"]})
                rows.append(row)
    return pd.DataFrame(rows).set_index(["label", "ensemble"])


def feature_group_table(frames: Mapping[str, Mapping[str, pd.DataFrame]], feature_sets: Mapping[str, list[str]], *,
                        labels: Sequence[str], required: list[str], train: str = "upheld",
                        checks: Sequence[str] = ("llm_arena", "topical_chat"), n_splits: int = 5, seed: int = 0,
                        bootstrap: int = 1000) -> pd.DataFrame:
    """The linear ensemble on each set of features, all on the same ``train`` items (those with every
    ``required`` column scored): grouped-fold CV on ``train`` and transfer to the check sets with bootstrap
    bounds. Rows: (label, features)."""
    rows = []
    for label in labels:
        training = frames[label][train].dropna(subset=required)
        for title, features in feature_sets.items():
            cv = cross_validate(training, features, "linear", n_splits=n_splits, seed=seed, grouped=True)
            row = {"label": label, "features": title, f"judged {train} items": len(training),
                   f"{train} grouped cv": cv["mean"], f"{train} grouped cv sd": cv["sd"]}
            fitted = fit(training, features, "linear", seed=seed)
            for check in checks:
                # Every row is scored on the same check items (those with the required columns), so the
                # rows' intervals compare like with like.
                same_items = frames[label][check].dropna(subset=required)
                result, _ = _transfer(fitted, same_items, features, bootstrap=bootstrap, seed=seed)
                row.update({f"{check} transfer": result["r"], f"{check} low": result["low"],
                            f"{check} high": result["high"], f"{check} n": result["n"]})
            rows.append(row)
    return pd.DataFrame(rows).set_index(["label", "features"])


def chosen_on_training(table: pd.DataFrame, label: str, column: str = "upheld grouped cv") -> str:
    """The ensemble of ``table`` (from :func:`ensemble_table`) with the best ``column`` for ``label`` — chosen on
    the training set's grouped folds alone, never on the sets it is then reported on.

    >>> table = pd.DataFrame({"upheld grouped cv": [0.5, 0.7], "llm_arena transfer": [0.9, 0.1]},
    ...                      index=pd.MultiIndex.from_tuples([("content", "svm"), ("content", "linear")]))
    >>> chosen_on_training(table, "content")
    'linear'
    """
    return str(table.loc[label][column].idxmax())
