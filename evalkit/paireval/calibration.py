"""Temperature scaling of pairwise probabilities, reliability tables and the expected calibration error."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import optimize


# --------------------------------------------------------------------------- calibration

def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(np.asarray(p, dtype=float), 1e-6, 1 - 1e-6)
    return np.log(p) - np.log1p(-p)


def apply_temperature(probabilities, temperature: float) -> np.ndarray:
    """Probabilities with their log-odds divided by ``temperature`` (>1 softens, <1 sharpens).

    >>> apply_temperature([0.5, 0.9], 1.0).round(3).tolist()
    [0.5, 0.9]
    """
    return 1 / (1 + np.exp(-_logit(probabilities) / temperature))


def fit_temperature(probabilities, outcomes) -> float:
    """The temperature minimising the negative log-likelihood of binary ``outcomes`` (temperature scaling)."""
    z, y = _logit(probabilities), np.asarray(outcomes, dtype=float)
    if len(z) == 0:
        raise ValueError("temperature scaling needs at least one held-out example")

    def nll(log_t: float) -> float:
        p = np.clip(1 / (1 + np.exp(-z / math.exp(log_t))), 1e-12, 1 - 1e-12)
        return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))

    return float(math.exp(optimize.minimize_scalar(nll, bounds=(-5, 5), method="bounded").x))


def reliability_table(probabilities, outcomes, bins: int = 10) -> pd.DataFrame:
    """Equal-width confidence bins: mean predicted probability, observed frequency and count per bin."""
    p, y = np.asarray(probabilities, dtype=float), np.asarray(outcomes, dtype=float)
    index = np.minimum((p * bins).astype(int), bins - 1)
    frame = pd.DataFrame({"bin": index, "predicted": p, "observed": y})
    table = frame.groupby("bin").agg(predicted=("predicted", "mean"), observed=("observed", "mean"),
                                     n=("observed", "size")).reset_index()
    table["lower"], table["upper"] = table["bin"] / bins, (table["bin"] + 1) / bins
    return table


def expected_calibration_error(probabilities, outcomes, bins: int = 10) -> float:
    """ECE: the count-weighted mean gap between predicted probability and observed frequency per bin.

    >>> expected_calibration_error([0.9, 0.9, 0.1, 0.1], [1, 1, 0, 0])
    0.1
    """
    table = reliability_table(probabilities, outcomes, bins)
    return round(float(np.sum(table["n"] * (table["predicted"] - table["observed"]).abs()) / table["n"].sum()), 12)
