"""A judge adapted to a set with a few of its own human labels, and the label-budget curve.

Raters of different sets reward different things (the reply's length tracks people positively on one set
and negatively on another), so no judge transferred zero-shot follows every set. An **adapted judge** learns
how a set's people weigh the scores the kit already has — its zero-shot judges, its trained judges, reference
metrics where the set has references, and cheap text features — from ``k`` labelled items of the set's *dev*
half, and is reported on the *test* half. It is chapter 3's Mixture-of-Judges carried to any set.

The model is a ridge regression that shrinks toward the zero-shot judge (the ``prior``):

.. math:: \\hat y = a + b\\,z + \\sum_j w_j x_j, \\qquad \\text{minimising } \\|y - \\hat y\\|^2 + \\alpha \\|w\\|^2,

with :math:`z` the prior's score and :math:`x_j` the other features (standardised on the ``k`` items); only the
:math:`w_j` are penalised. As :math:`\\alpha \\to \\infty` the fit becomes a linear function of :math:`z` — the
zero-shot judge itself, with the same correlation. The penalty is chosen by a rule fixed before any test half is
seen: out-of-fold squared error over folds of whole context groups (:data:`FOLDS` at most), then the
:math:`\\alpha` with the smallest error (:func:`minimum_error_choice`; :math:`\\infty` among the candidates, so
labels that say nothing new keep the zero-shot judge). The more cautious one-standard-error rule
(:func:`one_standard_error_choice`) was compared with it on the dev halves of chapter 4's six sets, fitting
on one part of each dev half and scoring the other: it fell back on two sets and was lower by a paired interval
with every label, and not higher with 25 (``experiments/adapted_rules.py``).
Fitting takes milliseconds (closed form, :data:`ALPHAS` x folds small solves).

>>> import numpy as np, pandas as pd
>>> from evalkit.stats.halves import DevHalf
>>> rng = np.random.default_rng(0)
>>> x = rng.normal(size=(300, 3))
>>> human = x[:, 0] - x[:, 1] + 0.5 * rng.normal(size=300)
>>> features = pd.DataFrame({"zero-shot": x[:, 0] + rng.normal(size=300), "a": x[:, 0], "b": x[:, 1], "c": x[:, 2]})
>>> half = DevHalf("toy", pd.DataFrame({"score": human, "group": np.arange(300) // 3}))
>>> judge = fit_adapted(half, features, prior="zero-shot")
>>> judge.k, judge.fell_back, round(float(np.corrcoef(judge.score(features), human)[0, 1]), 2)
(300, False, 0.94)
"""
from __future__ import annotations

import math
import re
import warnings
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from evalkit.stats.halves import DevHalf, TestHalf, require_dev
from evalkit.stats import correlation, correlation_difference, mean_correlation_difference

__all__ = ["ALPHAS", "BUDGETS", "FOLDS", "MIN_LABELS", "AdaptedJudge", "fit_adapted", "text_features", "budget_label",
           "label_budget_curve", "mean_budget_curve", "smallest_paying_budget", "affordable",
           "minimum_error_choice", "one_standard_error_choice", "budget_predictions", "budget_sentence", "paying_budgets"]

ALPHAS = (0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0, math.inf)
"""The penalties the rule chooses among; ``inf`` is the zero-shot judge itself."""

BUDGETS = (0, 10, 25, 50, 100, None)
"""The label budgets of the curve: ``k`` dev items (0: the zero-shot judge; None: every dev item)."""

FOLDS = 10
"""At most this many cross-validation folds (fewer when the items hold fewer context groups)."""

MIN_LABELS = 10
"""Fewer labelled items than this are too few to cross-validate a penalty on: the judge is the zero-shot one."""

_WORD = re.compile(r"\w+", re.UNICODE)


# --------------------------------------------------------------------------- features computed from the texts alone

def _words(text: object) -> list[str]:
    return _WORD.findall(str(text).lower())


def _last_turn(context: object) -> str:
    turns = [context] if isinstance(context, str) else list(context)
    return str(turns[-1]) if turns else ""


def text_features(frame: pd.DataFrame) -> pd.DataFrame:
    """Cheap features of each (context, reply), computed row by row (so a dev and a test half get the same
    function of their own texts and nothing else): the reply's words and their log, the context's words, the
    reply's type-token ratio, whether it asks a question, and the share of its words found in the last turn.

    >>> frame = pd.DataFrame({"context": [["how are you ?"], ["where is it"]], "response": ["I am fine , you ?", ""]})
    >>> text_features(frame).round(2).to_dict("records")[0]
    {'reply words': 4.0, 'reply words (log)': 1.61, 'context words': 3.0, 'reply type-token ratio': 1.0, 'reply asks': 1.0, 'overlap with last turn': 0.25}
    """
    rows = []
    for context, reply in zip(frame["context"], frame["response"]):
        words = _words(reply)
        turns = [context] if isinstance(context, str) else list(context)
        last = set(_words(_last_turn(context)))
        rows.append({"reply words": float(len(words)), "reply words (log)": math.log1p(len(words)),
                     "context words": float(sum(len(_words(t)) for t in turns)),
                     "reply type-token ratio": len(set(words)) / len(words) if words else 0.0,
                     "reply asks": float("?" in str(reply)),
                     "overlap with last turn": sum(w in last for w in words) / len(words) if words else 0.0})
    return pd.DataFrame(rows, index=frame.index)


# --------------------------------------------------------------------------- the fit

@dataclass(frozen=True)
class AdaptedJudge:
    """A fitted adapted judge: ``score`` maps a feature table (the columns it was fitted on) to scores. ``alpha``
    is the penalty the rule chose (``inf``: the zero-shot judge ``prior`` itself); ``cv_error`` the out-of-fold
    mean squared error of each penalty tried."""

    prior: str
    features: tuple[str, ...]
    k: int
    alpha: float
    center: np.ndarray
    spread: np.ndarray
    weights: np.ndarray          # one per feature other than the prior, in standardised units
    intercept: float
    prior_slope: float           # on the prior's standardised score
    cv_error: dict[float, float] = field(default_factory=dict)

    @property
    def fell_back(self) -> bool:
        """True when the rule kept the zero-shot judge (no penalty had a smaller out-of-fold error)."""
        return math.isinf(self.alpha)

    def coefficients(self) -> pd.Series:
        """The fitted weights in the features' own units (the prior's included), for reading what the set's
        people reward; all zero but the prior's when the judge fell back."""
        others = [f for f in self.features if f != self.prior]
        values = {self.prior: self.prior_slope / self.spread[0] if not self.fell_back else 1.0}
        values.update({name: w / s for name, w, s in zip(others, self.weights, self.spread[1:])})
        return pd.Series(values)

    def standardised_weights(self) -> pd.Series:
        """The weights per standard deviation of each feature on the fitted items (how far the predicted score
        moves when the feature moves by one standard deviation): the prior's is NaN when the judge fell back
        (it is then the prior itself, on the prior's own scale), the others 0."""
        others = [f for f in self.features if f != self.prior]
        return pd.Series({self.prior: np.nan if self.fell_back else self.prior_slope,
                          **dict(zip(others, map(float, self.weights)))})

    def score(self, features: pd.DataFrame) -> np.ndarray:
        """Scores of the items in ``features`` (missing values take the fitted items' mean). A judge that fell
        back returns the prior's scores unchanged."""
        missing = [f for f in self.features if f not in features]
        if missing:
            raise KeyError(f"the adapted judge needs the features it was fitted on; missing: {missing}")
        if self.fell_back:
            return features[self.prior].to_numpy(dtype=float).copy()
        z = _standardised(features, self.features, self.center, self.spread)
        return self.intercept + self.prior_slope * z[:, 0] + z[:, 1:] @ self.weights


def _standardised(features: pd.DataFrame, columns: Sequence[str], center: np.ndarray,
                  spread: np.ndarray) -> np.ndarray:
    values = features[list(columns)].to_numpy(dtype=float)
    values = np.where(np.isfinite(values), values, center)
    return (values - center) / spread


def _scaling(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Column means and standard deviations over the finite values (1 where a column is constant)."""
    finite = np.where(np.isfinite(values), values, np.nan)
    with np.errstate(all="ignore"), warnings.catch_warnings():  # an all-missing column: mean 0, spread 1
        warnings.simplefilter("ignore", RuntimeWarning)
        center = np.nan_to_num(np.nanmean(finite, axis=0))
        spread = np.nan_to_num(np.nanstd(finite, axis=0))
    return center, np.where(spread > 1e-12, spread, 1.0)


def _solve(z: np.ndarray, y: np.ndarray, alpha: float) -> tuple[float, float, np.ndarray]:
    """(intercept, prior slope, weights) of the ridge that penalises only the non-prior columns of the
    standardised matrix ``z`` (column 0 is the prior), by partialling out the unpenalised part."""
    base = np.column_stack([np.ones(len(y)), z[:, 0]])
    others = z[:, 1:]
    projector = base @ np.linalg.pinv(base)
    if math.isinf(alpha) or others.shape[1] == 0:
        weights = np.zeros(others.shape[1])
    else:
        residual_x, residual_y = others - projector @ others, y - projector @ y
        gram = residual_x.T @ residual_x + alpha * np.eye(others.shape[1])
        weights = np.linalg.solve(gram, residual_x.T @ residual_y)
    intercept, slope = np.linalg.pinv(base) @ (y - others @ weights)
    return float(intercept), float(slope), weights


def _folds(groups: Sequence[object], seed: int) -> np.ndarray:
    """A fold number per item: whole groups per fold, at most :data:`FOLDS` folds, assigned by a seeded shuffle."""
    keys = pd.Series(list(groups), dtype=object).astype(str)
    distinct = sorted(keys.unique())
    order = np.random.default_rng(seed).permutation(len(distinct))
    folds = min(FOLDS, len(distinct))
    fold_of = {distinct[j]: rank % folds for rank, j in enumerate(order)}
    return keys.map(fold_of).to_numpy()


def _cv_errors(values: np.ndarray, y: np.ndarray, folds: np.ndarray,
               alphas: Sequence[float]) -> dict[float, np.ndarray]:
    """Out-of-fold squared errors of every penalty (each fold standardised on its own training items)."""
    errors = {alpha: np.empty(len(y)) for alpha in alphas}
    for fold in np.unique(folds):
        train, held = folds != fold, folds == fold
        center, spread = _scaling(values[train])
        standard = (np.where(np.isfinite(values), values, center) - center) / spread
        for alpha in alphas:
            intercept, slope, weights = _solve(standard[train], y[train], alpha)
            predicted = intercept + slope * standard[held, 0] + standard[held, 1:] @ weights
            errors[alpha][held] = (y[held] - predicted) ** 2
    return errors


def minimum_error_choice(errors: Mapping[float, np.ndarray]) -> float:
    """The penalty with the smallest mean out-of-fold error (the larger penalty on a tie).

    >>> minimum_error_choice({1.0: np.array([1.0, 1.2, 0.8]), math.inf: np.array([1.1, 1.3, 0.9])})
    1.0
    >>> minimum_error_choice({1.0: np.array([1.0, 1.0]), math.inf: np.array([1.0, 1.0])})
    inf
    """
    means = {alpha: float(np.mean(e)) for alpha, e in errors.items()}
    best = min(means.values())
    return max(alpha for alpha, mean in means.items() if mean == best)


def one_standard_error_choice(errors: Mapping[float, np.ndarray]) -> float:
    """The largest penalty whose mean error is within one standard error of the smallest mean error.

    >>> one_standard_error_choice({1.0: np.array([1.0, 1.2, 0.8]), math.inf: np.array([1.1, 1.3, 0.9])})
    inf
    >>> one_standard_error_choice({1.0: np.array([0.1, 0.1, 0.1]), math.inf: np.array([1.1, 1.3, 0.9])})
    1.0
    """
    means = {alpha: float(np.mean(e)) for alpha, e in errors.items()}
    best = min(means, key=means.get)
    margin = float(np.std(errors[best], ddof=1) / math.sqrt(len(errors[best]))) if len(errors[best]) > 1 else 0.0
    return max(alpha for alpha, mean in means.items() if mean <= means[best] + margin)


def fit_adapted(half: DevHalf, features: pd.DataFrame, *, prior: str, human: str = "score",
                alphas: Sequence[float] = ALPHAS, seed: int = 0,
                rule: Callable[[Mapping[float, np.ndarray]], float] = minimum_error_choice) -> AdaptedJudge:
    """Fit an adapted judge on the labelled items of a dev ``half`` (``features``: one row per item of the half,
    in its order; ``prior``: the column of the zero-shot judge it shrinks toward). A test half is refused.
    With fewer than :data:`MIN_LABELS` labelled items, or fewer than three context groups, no penalty can be
    cross-validated, and the judge is the zero-shot one. ``rule`` picks the penalty from each one's out-of-fold
    errors."""
    half = require_dev(half)
    if len(features) != len(half):
        raise ValueError(f"{len(features)} feature rows for {len(half)} items of the dev half of {half.name!r}")
    if prior not in features:
        raise KeyError(f"the prior {prior!r} is not among the features {list(features.columns)}")
    columns = (prior, *[c for c in features.columns if c != prior])
    values = features[list(columns)].to_numpy(dtype=float)
    y = half.items[human].to_numpy(dtype=float)
    labelled = np.isfinite(y)
    values, y = values[labelled], y[labelled]
    groups = (half.items["group"] if "group" in half.items else pd.Series(range(len(half)))).to_numpy()[labelled]
    alphas = tuple(sorted(set(alphas) | {math.inf}))
    center, spread = _scaling(values)
    if len(set(map(str, groups))) < 3 or len(y) < MIN_LABELS:
        alpha, errors = math.inf, {}
    else:
        errors = _cv_errors(values, y, _folds(groups, seed), alphas)
        alpha = rule(errors)
    standard = (np.where(np.isfinite(values), values, center) - center) / spread
    intercept, slope, weights = _solve(standard, y, alpha)
    return AdaptedJudge(prior, columns, int(len(y)), alpha, center, spread, weights, intercept, slope,
                        {a: float(np.mean(e)) for a, e in errors.items()})


# --------------------------------------------------------------------------- the label-budget curve

def budget_label(k: int | None) -> str:
    """How a budget is named in a table.

    >>> budget_label(0), budget_label(25), budget_label(None)
    ('0', '25', 'all')
    """
    return "all" if k is None else str(k)


def affordable(budgets: Sequence[int | None], size: int) -> list[int | None]:
    """The budgets a dev half of ``size`` items can fill: a ``k`` at or above its size is the same fit as "all".

    >>> affordable(BUDGETS, 24)
    [0, 10, None]
    """
    return [k for k in budgets if k is None or k < size]


def _draw(half: DevHalf, k: int, seed: int) -> np.ndarray:
    """Positions of ``k`` items of the half drawn without replacement by a seeded generator."""
    return np.sort(np.random.default_rng(seed).choice(len(half), size=k, replace=False))


def _subset(half: DevHalf, positions: np.ndarray) -> DevHalf:
    return DevHalf(half.name, half.items.iloc[positions].reset_index(drop=True))


def budget_predictions(dev: DevHalf, dev_features: pd.DataFrame, test_features: pd.DataFrame, *, prior: str,
                       k: int | None, draws: int = 20, seed: int = 0,
                       human: str = "score") -> tuple[np.ndarray, list[AdaptedJudge]]:
    """The test items' scores (draws x items) of adapted judges fitted on ``draws`` seeded draws of ``k`` dev
    items (one fit when ``k`` is None or covers the half; the prior itself when ``k`` is 0), and the fits."""
    dev = require_dev(dev)
    if k == 0:
        return test_features[prior].to_numpy(dtype=float)[None, :], []
    if k is None or k >= len(dev):
        fits = [fit_adapted(dev, dev_features.reset_index(drop=True), prior=prior, human=human, seed=seed)]
    else:
        fits = []
        for draw in range(draws):
            positions = _draw(dev, k, seed * 1000 + draw)
            fits.append(fit_adapted(_subset(dev, positions), dev_features.iloc[positions].reset_index(drop=True),
                                    prior=prior, human=human, seed=seed + draw))
    return np.stack([fit.score(test_features) for fit in fits]), fits


def label_budget_curve(dev: DevHalf, dev_features: pd.DataFrame, test: TestHalf, test_features: pd.DataFrame, *,
                       prior: str, budgets: Sequence[int | None] = BUDGETS, draws: int = 20, bootstrap: int = 1000,
                       seed: int = 0, human: str = "score", kind: str = "pearson") -> pd.DataFrame:
    """One row per budget ``k`` of a set: the test half's Pearson and Spearman r of the adapted judge (mean over
    the seeded draws of the ``k`` dev items), its gain over the zero-shot ``prior`` (k = 0) in the correlation
    ``kind`` (Spearman for ordinal labels) with a paired 95% interval that resamples whole context groups of the
    test half (each resample averages the same draws), the share of draws in which the rule fell back to the
    zero-shot judge, and n."""
    dev = require_dev(dev)
    if not isinstance(test, TestHalf):
        raise TypeError(f"the curve reports a test half; got {type(test).__name__}")
    y = test.items[human].to_numpy(dtype=float)
    groups = list(test.items["group"])
    baseline = test_features[prior].to_numpy(dtype=float)
    rows = []
    for k in affordable(budgets, len(dev)):
        predictions, fits = budget_predictions(dev, dev_features, test_features, prior=prior, k=k, draws=draws,
                                               seed=seed, human=human)
        pearson = float(np.mean([correlation(p, y) for p in predictions]))
        spearman = float(np.mean([correlation(p, y, kind="spearman") for p in predictions]))
        if k == 0:
            gain, low, high = 0.0, 0.0, 0.0
        else:
            difference = correlation_difference(predictions, baseline, y, bootstrap=bootstrap, seed=seed,
                                                groups=groups, kind=kind)
            gain, low, high = difference.difference, difference.low, difference.high
        rows.append({"set": test.name, "budget": budget_label(k), "k": fits[0].k if fits else 0,
                     "draws": len(predictions), "pearson": pearson, "spearman": spearman, "gain": gain,
                     "gain_low": low, "gain_high": high,
                     "fell_back": float(np.mean([f.fell_back for f in fits])) if fits else 1.0, "n": len(y)})
    return pd.DataFrame(rows)


def mean_budget_curve(sets: Mapping[str, tuple[DevHalf, pd.DataFrame, TestHalf, pd.DataFrame]], *, prior: str,
                      budgets: Sequence[int | None] = BUDGETS, draws: int = 20, bootstrap: int = 1000,
                      seed: int = 0, human: str = "score") -> pd.DataFrame:
    """The curve's mean over several sets: per budget, the mean Pearson r and the mean gain over the zero-shot
    judge with a paired interval (each set's test half resampled on its own, whole groups), and n."""
    budgets = affordable(budgets, min(len(dev) for dev, *_ in sets.values()))
    predictions = {name: {k: budget_predictions(dev, dev_f, test_f, prior=prior, k=k, draws=draws, seed=seed,
                                                human=human)[0] for k in budgets}
                   for name, (dev, dev_f, test, test_f) in sets.items()}
    rows = []
    for k in budgets:
        per_set = {}
        for name, (_, _, test, test_f) in sets.items():
            per_set[name] = (predictions[name][k], test_f[prior].to_numpy(dtype=float),
                             test.items[human].to_numpy(dtype=float), list(test.items["group"]))
        pearson = float(np.mean([np.mean([correlation(p, entry[2]) for p in entry[0]]) for entry in per_set.values()]))
        if k == 0:
            gain, low, high, n = 0.0, 0.0, 0.0, sum(len(entry[2]) for entry in per_set.values())
        else:
            difference = mean_correlation_difference(per_set, bootstrap=bootstrap, seed=seed)
            gain, low, high, n = difference.difference, difference.low, difference.high, difference.n
        rows.append({"set": "mean", "budget": budget_label(k), "pearson": pearson, "gain": gain, "gain_low": low,
                     "gain_high": high, "n": n})
    return pd.DataFrame(rows)


def smallest_paying_budget(curve: pd.DataFrame) -> str | None:
    """The smallest budget of one set's curve whose gain over the zero-shot judge has an interval above 0
    (None where no budget's does).

    >>> smallest_paying_budget(pd.DataFrame({"budget": ["0", "10", "25", "all"], "gain_low": [0.0, -0.1, 0.02, 0.1]}))
    '25'
    """
    paying = paying_budgets(curve)
    return paying[0] if paying else None


def paying_budgets(curve: pd.DataFrame) -> list[str]:
    """The budgets of one set's curve whose gain over the zero-shot judge has an interval above 0, in order
    (gains need not grow with k: a budget can pay and a larger one not).

    >>> paying_budgets(pd.DataFrame({"budget": ["0", "10", "25", "50", "all"], "gain_low": [0, -0.1, 0.02, -0.01, 0.1]}))
    ['25', 'all']
    """
    return [str(b) for b, low in zip(curve["budget"], curve["gain_low"]) if b != "0" and low > 0]


def budget_sentence(curves: pd.DataFrame, mean_curve: pd.DataFrame, full_mean: Sequence[float], *, prior: str) -> str:
    """What the label-budget curves showed: the adapted judge with every dev label against the zero-shot
    ``prior`` (``full_mean``: its mean r over the sets, low, high, n), where the rule kept the prior, every
    budget at which it falls below the prior by an interval, and the budgets at which labels pay on each set.

    >>> curves = pd.DataFrame({"set": ["a", "a", "a", "b", "b", "b"], "budget": ["0", "25", "all"] * 2,
    ...                        "k": [0, 25, 120, 0, 25, 90], "fell_back": [1, 0, 0, 1, 1, 1],
    ...                        "gain": [0, 0.05, 0.10, 0, -0.02, 0], "gain_low": [0, 0.01, 0.04, 0, -0.04, 0],
    ...                        "gain_high": [0, 0.09, 0.16, 0, -0.01, 0]})
    >>> mean = pd.DataFrame({"budget": ["0", "all"], "gain": [0, 0.055], "gain_low": [0, 0.02], "gain_high": [0, 0.09]})
    >>> print(budget_sentence(curves, mean, (0.41, 0.36, 0.46, 400), prior="DirectEval"))
    With every dev label (90 to 120 items per set), the adapted judge's mean Pearson r over the 2 test halves is 0.410 [0.360, 0.460] (n = 400): above the zero-shot DirectEval, +0.055 [+0.020, +0.090]; on b the rule kept DirectEval itself. It is below DirectEval by an interval at k = 25 on b. Labels pay (a gain whose interval is above 0; one interval per set and budget, not adjusted for their number) on a at k = 25 and all; at no budget on b.
    >>> two = pd.concat([curves, curves.assign(set=curves["set"] + "2")])
    >>> print(budget_sentence(two, mean, (0.41, 0.36, 0.46, 400), prior="DirectEval").split(". ")[1])
    It is below DirectEval by an interval at k = 25 on b and b2
    >>> flat = curves.assign(gain_low=-0.1)
    >>> print(budget_sentence(flat, mean, (0.41, 0.36, 0.46, 400), prior="DirectEval").rsplit(") ", 1)[1])
    at no budget on any set.
    """
    from evalkit.book.prose import join_names, verdict

    whole = mean_curve.set_index("budget").loc["all"]
    full = curves[curves["budget"] == "all"]
    sizes = full["k"].astype(int)
    size = f"{sizes.min():,}" if sizes.min() == sizes.max() else f"{sizes.min():,} to {sizes.max():,}"
    value, low, high, n = full_mean
    kept = list(full.loc[full["fell_back"] == 1, "set"])
    lines = [f"With every dev label ({size} items per set), the adapted judge's mean Pearson r over the "
             f"{curves['set'].nunique()} test halves is {value:.3f} [{low:.3f}, {high:.3f}] (n = {int(n):,}): "
             f"{verdict(whole['gain'], whole['gain_low'], whole['gain_high'])} the zero-shot {prior}, "
             f"{whole['gain']:+.3f} [{whole['gain_low']:+.3f}, {whole['gain_high']:+.3f}]"
             + (f"; on {join_names(kept)} the rule kept {prior} itself." if kept else ".")]
    below = curves[(curves["budget"] != "0") & (curves["gain_high"] < 0)]
    by_budget: dict[str, list[str]] = {}
    for row in below.itertuples():
        by_budget.setdefault(str(row.budget), []).append(str(row.set))
    lines.append(f"At no budget is it below {prior} by an interval." if below.empty
                 else f"It is below {prior} by an interval at "
                 + "; ".join(f"k = {budget} on {join_names(sets)}" for budget, sets in by_budget.items()) + ".")
    paying = {name: paying_budgets(curve) for name, curve in curves.groupby("set", sort=False)}
    paid = [f"on {name} at k = {join_names(budgets)}" for name, budgets in paying.items() if budgets]
    unpaid = [name for name, budgets in paying.items() if not budgets]
    where = "; ".join(paid + ([f"at no budget on {'any set' if not paid else join_names(unpaid)}"] if unpaid else []))
    lines.append(f"Labels pay (a gain whose interval is above 0; one interval per set and budget, not adjusted for "
                 f"their number) {where}.")
    return " ".join(lines)
