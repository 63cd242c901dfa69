"""Chapter 4's exercises: no position bias by construction, the held-out pairs an interval needs, ranks kept
by the pairwise score, and an adapted judge fitted on fifty of a set's dev labels.

``ch4-size`` needs no data (its expected value comes from :func:`evalkit.stats.proportion`); the other two
recompute the fine-tuned judge's scores from the notebook's ``tuned``, ``heldout``, ``items`` and ``scores``
(the tests exercise them with a small stand-in judge).
"""
from __future__ import annotations

import numpy as np

from evalkit.course.core import Exercise, Work, Wrong, close, number, series, whole

CHAPTER = "04_pairwise_judge"
PAIRS = 20  # the first twenty pairs of heldout["random"]
ACCURACY, HALF_WIDTH = 0.85, 0.03
#: ``pairs_needed`` may overshoot the smallest n by less than the chapter's step of 20 pairs (a search on a
#: grid of 1, 10 or 20 pairs is a correct method; one of 100 is too coarse to answer the question).
SIZE_WINDOW = 20
PROBABILITY_TOLERANCE = 1e-4  # the encoder's float32 embeddings, batched differently, agree to ~1e-6
RANK_TOLERANCE = 1e-3


def _probabilities(work: Work) -> tuple[list[float], list[float]]:
    what = "probabilities, one per held-out pair"
    return (series(work["p_ab"], "p_ab", PAIRS, what=what, low=0, high=1),
            series(work["p_ba"], "p_ba", PAIRS, what=what, low=0, high=1))


def _order_sums(work: Work) -> None:
    p_ab, p_ba = _probabilities(work)
    off = [i for i, (a, b) in enumerate(zip(p_ab, p_ba)) if abs(a + b - 1) > 1e-6]
    if off:
        raise Wrong(f"`p_ab[i] + p_ba[i]` should be 1 on every pair; it is not on {len(off)} of {PAIRS} (first: "
                    f"pair {off[0]}): P(B beats A) is the judge asked with the two sides swapped")


def _order_values(work: Work) -> None:
    pairs = work.chapter("heldout")["random"].iloc[:PAIRS]
    judge = work.chapter("tuned")["PairEval"]
    relevance_a = judge.relevance(list(pairs["context_a"]), list(pairs["response_a"]))
    relevance_b = judge.relevance(list(pairs["context_b"]), list(pairs["response_b"]))
    expected = np.asarray(judge.prefer(relevance_a, relevance_b), dtype=float)
    p_ab, _ = _probabilities(work)
    if not np.allclose(p_ab, expected, atol=PROBABILITY_TOLERANCE, rtol=0):
        raise Wrong("`p_ab` is not the fine-tuned PairEval judge's P(A beats B) on the first twenty pairs of "
                    "`heldout['random']`")


def _half_width(n: int) -> float:
    from evalkit.stats import proportion

    right = round(ACCURACY * n)
    interval = proportion([True] * right + [False] * (n - right))
    return (interval.high - interval.low) / 2


def _size_bound(work: Work) -> None:
    n = whole(work["pairs_needed"], "pairs_needed", low=1, high=100_000, what="a number of held-out pairs")
    if not _half_width(n) < HALF_WIDTH:
        raise Wrong("at `pairs_needed` pairs the Wilson interval around an accuracy of 0.85 is still wider than "
                    "±0.03: more pairs are needed")


def _size_smallest(work: Work) -> None:
    n = whole(work["pairs_needed"], "pairs_needed", low=1, high=100_000, what="a number of held-out pairs")
    smallest = next(size for size in range(1, 100_001) if _half_width(size) < HALF_WIDTH)
    if n >= smallest + SIZE_WINDOW:
        raise Wrong("`pairs_needed` is more pairs than it takes: a smaller number already gives an interval "
                    "narrower than ±0.03 (search in steps of 20 pairs or finer)")


def _rank_form(work: Work) -> None:
    rho = number(work["rank_rho"], "rank_rho", low=-1, high=1, what="a Spearman correlation")
    if rho < 1 - RANK_TOLERANCE:
        raise Wrong("`rank_rho` says the two scores rank the items differently: the PairEval score and the "
                    "relevance score f(h, r) of the same judge should rank one set's items identically")


def _rank_value(work: Work) -> None:
    from scipy import stats

    first = work.chapter("SET_ORDER")[0]
    frame = work.chapter("items")[first]
    relevance = work.chapter("tuned")["PairEval"].relevance(list(frame["context"]), list(frame["response"]))
    expected = float(stats.spearmanr(work.chapter("scores")["PairEval", first], relevance).statistic)
    close(number(work["rank_rho"], "rank_rho", low=-1, high=1), expected, tolerance=RANK_TOLERANCE,
          message="`rank_rho` is not Spearman's rho between the PairEval scores and the relevance scores on the "
                  "first set of `SET_ORDER`")


BUDGET = 50  # the first fifty dev items of the first set
BUDGET_TOLERANCE = 1e-6


def _budget_form(work: Work) -> None:
    number(work["budget_r"], "budget_r", low=-1, high=1, what="a Pearson correlation")


def _budget_value(work: Work) -> None:
    from evalkit.judges.adapted import fit_adapted
    from evalkit.stats.halves import DevHalf
    from evalkit.stats import correlation

    name = work.chapter("SET_ORDER")[0]
    dev_half, dev_features, test_half, test_features = work.chapter("adapt_sets")[name]
    first = DevHalf(name, dev_half.items.iloc[:BUDGET].reset_index(drop=True))
    fit = fit_adapted(first, dev_features.iloc[:BUDGET].reset_index(drop=True), prior=work.chapter("adopted"),
                      seed=work.chapter("seed"))
    expected = correlation(fit.score(test_features), test_half.items["score"])
    close(number(work["budget_r"], "budget_r", low=-1, high=1), expected, tolerance=BUDGET_TOLERANCE,
          message="`budget_r` is not Pearson's r, on the test half of the first set, of an adapted judge fitted on "
                  "the first fifty items of its dev half with the adopted judge as its prior and the chapter's seed")


EXERCISES = (
    Exercise("ch4-order", CHAPTER, ("p_ab", "p_ba"), public=(_order_sums,), hidden=(_order_values,),
             asks="p_ab, p_ba: P(A beats B) and P(B beats A) on the first twenty pairs of heldout['random']"),
    Exercise("ch4-size", CHAPTER, ("pairs_needed",), public=(_size_bound,), hidden=(_size_smallest,),
             asks="pairs_needed: the fewest held-out pairs for a Wilson half-width under 0.03 at accuracy 0.85"),
    Exercise("ch4-rank", CHAPTER, ("rank_rho",), public=(_rank_form,), hidden=(_rank_value,),
             asks="rank_rho: Spearman's rho between the PairEval score and the relevance score on one set"),
    Exercise("ch4-budget", CHAPTER, ("budget_r",), public=(_budget_form,), hidden=(_budget_value,),
             asks="budget_r: test-half Pearson r of an adapted judge fitted on the first 50 dev items of one set"),
)
