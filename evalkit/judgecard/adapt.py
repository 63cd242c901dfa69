"""A card's judge adapted to each set with the set's own dev labels (``evalkit judge card --adapt K|all``).

The judge scores both halves of a set; an adapted judge (:mod:`evalkit.judges.adapted`: a ridge over the judge's score
and the reply's text features, shrunk toward the judge itself) is fitted on ``k`` items of the *dev* half — a
seeded draw, or every item — and the card reports its scores on the *test* half. The fit follows the set's first
label (``score``; ``content`` on UPHELD's sets), and the card's rows for every label read the same scores, so a
leaderboard can recompute them. The set's label-budget curve (every budget up to ``k``) goes on the card.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from evalkit.judges.adapted import BUDGETS, _draw, _subset, budget_label, fit_adapted, label_budget_curve, text_features
from evalkit.stats.halves import DevHalf, TestHalf
from evalkit.judgecard.sets import HumanSet

__all__ = ["Adaptation", "parse_budget", "adapted_name", "budgets_up_to", "adapt_set"]

PRIOR = "judge"


@dataclass(frozen=True)
class Adaptation:
    """What adapting a card's judge to one set gave: the test items' scores, the curve's rows and the fit's
    label budget ``k`` (the dev items it read) and penalty."""

    scores: np.ndarray
    curve: tuple[dict, ...]
    k: int
    alpha: float


def parse_budget(text: str) -> int | None:
    """``--adapt``'s value: a label budget of 10 or more, or ``all`` (None: every dev item).

    >>> parse_budget("all"), parse_budget("50")
    (None, 50)
    >>> parse_budget("3")
    Traceback (most recent call last):
    ...
    ValueError: --adapt takes a number of dev labels of 10 or more, or all; not '3'
    """
    if str(text).strip().lower() == "all":
        return None
    try:
        k = int(str(text))
    except ValueError:
        k = -1
    if k < 10:
        raise ValueError(f"--adapt takes a number of dev labels of 10 or more, or all; not {text!r}")
    return k


def adapted_name(judge: str, k: int | None) -> str:
    """The adapted judge's name on a card and a board: the judge's, with its label budget (no comma, so a list
    of names reads as one name each).

    >>> adapted_name("encoder", None), adapted_name("bleu2", 50)
    ('encoder + all dev labels', 'bleu2 + 50 dev labels')
    """
    return f"{judge} + {budget_label(k)} dev labels"


def budgets_up_to(k: int | None) -> list[int | None]:
    """The curve's budgets a card with budget ``k`` shows: 0, every standard budget below ``k``, and ``k``.

    >>> budgets_up_to(50), budgets_up_to(30), budgets_up_to(None)
    ([0, 10, 25, 50], [0, 10, 25, 30], [0, 10, 25, 50, 100, None])
    """
    if k is None:
        return list(BUDGETS)
    return [b for b in BUDGETS if b is not None and b < k] + [k]


def _features(items: pd.DataFrame, scores: np.ndarray) -> pd.DataFrame:
    frame = items.assign(context=[list(c) if not isinstance(c, str) else [c] for c in items["context"]])
    return pd.concat([pd.DataFrame({PRIOR: np.asarray(scores, dtype=float)}),
                      text_features(frame).reset_index(drop=True)], axis=1)


def adapt_set(dev: HumanSet, dev_scores: Sequence[float], test: HumanSet, test_scores: Sequence[float], *,
              k: int | None, draws: int = 20, bootstrap: int = 1000, seed: int = 0) -> Adaptation:
    """Fit the adapted judge on ``k`` dev items of a set (all when None or more than the half holds) and score
    its test items; the curve compares every budget up to ``k`` with the judge itself on the test half."""
    label = dev.labels[0]
    dev_items = dev.items.reset_index(drop=True).rename(columns={label: "score"})
    test_items = test.items.reset_index(drop=True).rename(columns={label: "score"})
    known = dev_items["score"].notna() & np.isfinite(np.asarray(dev_scores, dtype=float))
    dev_half = DevHalf(dev.name, dev_items[known].reset_index(drop=True))
    dev_features = _features(dev_items, dev_scores)[known.to_numpy()].reset_index(drop=True)
    test_features = _features(test_items, test_scores)
    if k is not None and k < len(dev_half):
        positions = _draw(dev_half, k, seed)
        fit = fit_adapted(_subset(dev_half, positions), dev_features.iloc[positions].reset_index(drop=True),
                          prior=PRIOR, seed=seed)
    else:
        fit = fit_adapted(dev_half, dev_features, prior=PRIOR, seed=seed)
    scored = np.isfinite(test_features[PRIOR].to_numpy()) & test_items["score"].notna().to_numpy()
    curve: tuple[dict, ...] = ()
    if scored.sum() >= 3 and len(dev_half) >= 3:
        test_half = TestHalf(test.name, test_items[scored].reset_index(drop=True), kind="test")
        table = label_budget_curve(dev_half, dev_features, test_half, test_features[scored].reset_index(drop=True),
                                   prior=PRIOR, budgets=budgets_up_to(k), draws=draws, bootstrap=bootstrap,
                                   seed=seed)
        curve = tuple(table.assign(label=label).to_dict(orient="records"))
    return Adaptation(fit.score(test_features), curve, fit.k, fit.alpha)
