"""Does comparing beat scoring? Chapter 4's two measurements of a judge that reads both sides: its agreement
with people against the judge it corrects (a paired difference of mean Pearson r over sets), and its
position bias (P(target wins) shown first minus shown second), each with an interval and a sentence.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from ..stats import mean_correlation_difference, summarise

__all__ = ["comparison_vs_pointwise", "position_bias"]


def _verdict(low: float, high: float) -> str:
    return ("above, the interval excludes 0" if low > 0 else
            "below, the interval excludes 0" if high < 0 else "inside the sampling error")


def comparison_vs_pointwise(scores: Mapping[tuple[str, str], Any], human: Mapping[str, Any], sets: Sequence[str], *,
                            reading: str, scoring: str, groups: Mapping[str, Sequence[object]] | None = None,
                            bootstrap: int = 1000, seed: int = 0) -> dict[str, Any]:
    """Mean Pearson r of the judge that reads both sides (``reading``) minus that of the judge that scores each
    side alone (``scoring``) over ``sets``, with a paired bootstrap interval (whole ``groups`` resampled), and
    the sentence that says it.

    >>> rng = np.random.default_rng(0)
    >>> human = {"a": rng.normal(size=120)}
    >>> scores = {("R", "a"): human["a"] + rng.normal(size=120), ("S", "a"): human["a"] + 3 * rng.normal(size=120)}
    >>> out = comparison_vs_pointwise(scores, human, ["a"], reading="R", scoring="S", bootstrap=200)
    >>> out["difference"] > 0, out["low"] > 0, out["sentence"].startswith("Comparing against scoring")
    (True, True, True)
    """
    result = mean_correlation_difference(
        {n: (scores[reading, n], scores[scoring, n], human[n], *([list(groups[n])] if groups else []))
         for n in sets}, bootstrap=bootstrap, seed=seed)
    sentence = (f"Comparing against scoring on the test halves: {reading} minus {scoring}, mean Pearson r over "
                f"{len(sets)} sets, {result.difference:+.3f} [{result.low:+.3f}, {result.high:+.3f}] "
                f"({_verdict(result.low, result.high)}; n = {result.n}).")
    return {"reading": reading, "scoring": scoring, "difference": result.difference, "low": result.low,
            "high": result.high, "n": result.n, "sentence": sentence}


def position_bias(matrices: Mapping[str, np.ndarray], *, bootstrap: int = 1000, seed: int = 0) -> dict[str, Any]:
    """A judge's position bias from its pairwise matrices (target x comparison x order, one per set): per
    target, the mean over comparisons of P(win) shown first minus shown second; then the mean over every
    target of every set with a bootstrap interval over targets.

    >>> m = np.zeros((40, 2, 2)); m[..., 0], m[..., 1] = 0.7, 0.5
    >>> out = position_bias({"a": m}, bootstrap=100)
    >>> round(out["value"], 3), out["n"]
    (0.2, 40)
    """
    per_target = np.concatenate([np.nanmean(m[..., 0] - m[..., 1], axis=1) for m in matrices.values()])
    result = summarise(per_target, bootstrap=bootstrap, seed=seed)
    low, high = result.get("boot_low", np.nan), result.get("boot_high", np.nan)
    return {"value": result["mean"], "low": low, "high": high, "n": result["n"]}
