"""Does comparing beat scoring? Chapter 4's two measurements of a judge that reads both sides: its agreement
with people against the judge it corrects (a paired difference of mean Pearson r over sets), and its
position bias (P(target wins) shown first minus shown second), each with an interval and a sentence.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from evalkit.stats import group_resamples, mean_correlation_difference, percentile_interval, summarise

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


def position_bias(matrices: Mapping[str, np.ndarray], *, groups: Mapping[str, Sequence[object]] | None = None,
                  bootstrap: int = 1000, seed: int = 0) -> dict[str, Any]:
    """A judge's position bias from its pairwise matrices (target x comparison x order, one per set): per
    target, the mean over comparisons of P(win) shown first minus shown second; then the mean over every
    target of every set with a bootstrap interval — over whole ``groups`` (one key per target, e.g. its
    context; a set's keys are kept apart from another's) when given, since the replies to one context are not
    independent, else over targets.

    >>> m = np.zeros((40, 2, 2)); m[..., 0], m[..., 1] = 0.7, 0.5
    >>> out = position_bias({"a": m}, bootstrap=100)
    >>> round(out["value"], 3), out["n"]
    (0.2, 40)
    >>> m[:20, :, 0] = 0.9  # one context's targets favour the first slot more than the other's
    >>> grouped = position_bias({"a": m}, groups={"a": [i // 20 for i in range(40)]}, bootstrap=200)
    >>> items = position_bias({"a": m}, bootstrap=200)
    >>> grouped["high"] - grouped["low"] > items["high"] - items["low"], grouped["n"], grouped["groups"]
    (True, 40, 2)
    """
    per_target = np.concatenate([np.nanmean(m[..., 0] - m[..., 1], axis=1) for m in matrices.values()])
    if groups is None:
        result = summarise(per_target, bootstrap=bootstrap, seed=seed)
        low, high = result.get("boot_low", np.nan), result.get("boot_high", np.nan)
        return {"value": result["mean"], "low": low, "high": high, "n": result["n"]}
    keys = [(name, key) for name, m in matrices.items() for key in _checked_groups(name, m, groups)]
    keep = ~np.isnan(per_target)
    values, kept = per_target[keep], [k for k, ok in zip(keys, keep) if ok]
    means = np.array([values[draw].mean() for draw in group_resamples(kept, bootstrap=bootstrap, seed=seed)])
    low, high = percentile_interval(means)
    return {"value": float(values.mean()), "low": float(low), "high": float(high), "n": int(len(values)),
            "groups": len(set(kept))}


def _checked_groups(name: str, matrix: np.ndarray, groups: Mapping[str, Sequence[object]]) -> list[object]:
    """``groups[name]`` as a list, checked to hold one key per target of ``matrix``."""
    if name not in groups:
        raise KeyError(f"position_bias: no groups for set {name!r}")
    keys = list(groups[name])
    if len(keys) != len(matrix):
        raise ValueError(f"position_bias: set {name!r} has {len(matrix)} targets but {len(keys)} group keys")
    return keys
