"""The leaderboard page's exercises: a share of the ceiling by hand, and whether two judges tie.

Both recompute their expected values from the notebook's ``human_sets`` and ``cards`` (the half the page
ranks), so they hold at any size; the tests exercise them with hand-made sets.
"""
from __future__ import annotations

import numpy as np

from evalkit.course.core import Exercise, Work, Wrong, close, number

CHAPTER = "06_judge_leaderboard"
SET, LABEL = "upheld-main", "content"
CEILING_TOLERANCE = 0.005  # ICC(1, k) by another library or by hand agrees to far better than this
SHARE_TOLERANCE = 0.005
DIFFERENCE_TOLERANCE = 1e-6  # a difference of two Pearson r on the same items is exact
BOUND_TOLERANCE = 0.03      # two bootstraps of a thousand resamples (any seed) agree on a bound to ~0.01


def tie_pair(cards) -> tuple[str, str]:
    """The two judges the tie exercise compares: the untrained encoder and the trained PairEval judge."""
    trained = [name for name in cards if str(name).startswith("paireval:")]
    if "encoder" not in cards or not trained:
        raise Wrong("the exercise compares `encoder` with a `paireval:<recipe>` judge: keep both in `judges`")
    return "encoder", trained[0]


def aligned(work: Work, judge: str):
    """The judge's scores and the human scores and groups of ``SET``'s items it scored, in the set's order."""
    human_set = work.chapter("human_sets")[SET]
    card = work.chapter("cards")[judge]
    try:
        scores = card.scores_on(human_set)
    except KeyError:
        raise Wrong(f"`{judge}` has no scores on {SET}") from None
    items = human_set.items
    return scores, items[LABEL].to_numpy(dtype=float), items["group"].astype(str).to_numpy()


def _ceiling(work: Work) -> float:
    from evalkit.judgecard.sets import noise_ceiling

    return noise_ceiling(work.chapter("human_sets")[SET].ratings, LABEL).ceiling


def _share_ranges(work: Work) -> None:
    ceiling = number(work["ceiling_by_hand"], "ceiling_by_hand", what="a correlation ceiling")
    if not 0 < ceiling <= 1:
        raise Wrong("`ceiling_by_hand` should lie in (0, 1]: it is the square root of a reliability")
    share = number(work["share_by_hand"], "share_by_hand", what="a share of the ceiling")
    if abs(share * ceiling) > 1 + 1e-9:
        raise Wrong("`share_by_hand` times `ceiling_by_hand` should be the judge's Pearson r, which lies in [-1, 1]")


def _share_values(work: Work) -> None:
    expected = _ceiling(work)
    close(number(work["ceiling_by_hand"], "ceiling_by_hand"), expected, tolerance=CEILING_TOLERANCE,
          message=f"`ceiling_by_hand` is not sqrt(ICC(1, k)) of the {LABEL} ratings on {SET}'s half (ICC(1, k): "
                  "one-way ANOVA, (MS between - MS within) / MS between)")
    scores, human, _ = aligned(work, "length")
    keep = ~(np.isnan(scores) | np.isnan(human))
    r = float(np.corrcoef(scores[keep], human[keep])[0, 1])
    close(number(work["share_by_hand"], "share_by_hand"), r / expected, tolerance=SHARE_TOLERANCE,
          message=f"`share_by_hand` is not the length judge's Pearson r with the mean {LABEL} score on {SET}, "
                  "divided by the ceiling")


def _tie_form(work: Work) -> None:
    low, high = (number(work[name], name, low=-2, high=2, what="a bound of a difference of r")
                 for name in ("low", "high"))
    difference = number(work["difference"], "difference", low=-2, high=2, what="a difference of r")
    if not low <= difference <= high:
        raise Wrong("`difference` should lie between `low` and `high`: a percentile interval holds its estimate "
                    "unless the bootstrap is very skewed; check which judge you subtracted from which")
    if not isinstance(work["tied"], (bool, np.bool_)):
        raise Wrong("`tied` should be True or False")
    if bool(work["tied"]) != (low <= 0 <= high):
        raise Wrong("`tied` should say whether your interval holds zero")


def _tie_values(work: Work) -> None:
    from evalkit.stats import correlation_difference

    first, second = tie_pair(work.chapter("cards"))
    a, human, groups = aligned(work, first)
    b, _, _ = aligned(work, second)
    expected = correlation_difference(b, a, human, groups=list(groups), bootstrap=1000, seed=0)
    close(number(work["difference"], "difference"), expected.difference, tolerance=DIFFERENCE_TOLERANCE,
          message=f"`difference` is not r({second}) - r({first}) on {SET}'s {LABEL} items both scored")
    for name, bound in (("low", expected.low), ("high", expected.high)):
        close(number(work[name], name), bound, tolerance=BOUND_TOLERANCE,
              message=f"`{name}` is not a bound of a 95% paired bootstrap interval that resamples whole contexts "
                      "(the `group` column): resampling single replies gives an interval too narrow")


EXERCISES = (
    Exercise("ch6-share", CHAPTER, ("ceiling_by_hand", "share_by_hand"), public=(_share_ranges,),
             hidden=(_share_values,),
             asks="ceiling_by_hand, share_by_hand: upheld-main's content ceiling and the length judge's share of it"),
    Exercise("ch6-tie", CHAPTER, ("difference", "low", "high", "tied"), public=(_tie_form,), hidden=(_tie_values,),
             asks="difference, low, high, tied: r(paireval) - r(encoder) on upheld-main content, its paired "
                  "interval over contexts, and whether it holds zero"),
)
