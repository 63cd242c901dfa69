"""Chapter 2's exercises: the split-half ceiling against the number of splits, and ordinal against interval
alpha.

Expected values are recomputed from the chapter's ``labels`` with :mod:`evalkit.upheld.agreement`.
"""
from __future__ import annotations

from evalkit.course.core import Exercise, Work, Wrong, choice, close, keyed, number

CHAPTER = "02_agreement"
SPLITS = (10, 50, 200)
#: A ceiling's tolerance. Seed to seed its sd is under 0.001 at 10 splits on the main set's content label;
#: another correct split-half scheme (split annotators instead of ratings, odd-even) moves it by less than
#: 0.01, while a wrong label (style: 0.91), the uncorrected half correlation or the reliability without its
#: square root (0.92) all miss by more.
CEILING_TOLERANCE = 0.01
ALPHA_TOLERANCE = 1e-3  # Krippendorff's alpha by another library or another coincidence matrix: within 1e-6


def _ceiling(work: Work, splits: int) -> float:
    from evalkit.upheld import agreement

    labels = work.chapter("labels")["main"]
    seed = work.setting("seed", 0)
    return work.memo(("ceiling", splits), lambda: agreement.split_half_reliability(
        labels, "content", repeats=splits, seed=seed)["ceiling"])


def _given_ceilings(work: Work) -> dict:
    given = keyed(work["half_ceilings"], "half_ceilings", SPLITS, what="one ceiling per number of splits")
    return {splits: number(value, f"half_ceilings[{splits}]", low=0, high=1, what="a ceiling (a correlation)")
            for splits, value in given.items()}


def _half_form(work: Work) -> None:
    _given_ceilings(work)


def _message(splits: int) -> str:
    return (f"`half_ceilings[{splits}]` is not the split-half ceiling of the main set's content label with "
            f"{splits} random splits (the square root of the Spearman-Brown corrected half correlation)")


def _half_200(work: Work) -> None:
    close(_given_ceilings(work)[200], _ceiling(work, 200), tolerance=CEILING_TOLERANCE, message=_message(200))


def _half_all(work: Work) -> None:
    for splits, value in _given_ceilings(work).items():
        close(value, _ceiling(work, splits), tolerance=CEILING_TOLERANCE, message=_message(splits))


def _gaps_expected(work: Work) -> dict:
    from evalkit.upheld import agreement
    from evalkit.upheld.release import LABEL_NAMES

    labels = work.chapter("labels")
    return work.memo("gaps", lambda: {(subset, name): abs(agreement.alpha(labels[subset], name, "ordinal")
                                                          - agreement.alpha(labels[subset], name, "interval"))
                                      for subset in labels for name in LABEL_NAMES})


def _given_gaps(work: Work, keys) -> dict:
    given = keyed(work["alpha_gaps"], "alpha_gaps", keys, what="the gap between ordinal and interval alpha")
    return {key: abs(number(value, f"alpha_gaps[{key!r}]", low=-2, high=2, what="a difference of two alphas"))
            for key, value in given.items()}


def _alpha_gaps(work: Work) -> None:
    expected = _gaps_expected(work)
    for key, gap in _given_gaps(work, list(expected)).items():
        close(gap, expected[key], tolerance=ALPHA_TOLERANCE,
              message=f"`alpha_gaps[{key!r}]` is not the difference between that label's ordinal and interval "
                      "Krippendorff's alpha")


def _widest_form(work: Work) -> None:
    keys = [(subset, name) for subset in work.chapter("labels") for name in ("content", "style", "reasonable")]
    choice(work["widest_gap"], "widest_gap", keys, what="a (subset, label) pair")


def _widest_gap(work: Work) -> None:
    expected = _gaps_expected(work)
    given = choice(work["widest_gap"], "widest_gap", list(expected), what="a (subset, label) pair")
    if expected[given] < max(expected.values()) - ALPHA_TOLERANCE:
        raise Wrong("`widest_gap` is not the (subset, label) whose ordinal and interval alphas differ most")


EXERCISES = (
    Exercise("ch2-half", CHAPTER, ("half_ceilings",), public=(_half_form, _half_200), hidden=(_half_all,),
             asks="half_ceilings: {10: ceiling, 50: ceiling, 200: ceiling} for the main set's content label"),
    Exercise("ch2-alpha", CHAPTER, ("alpha_gaps", "widest_gap"), public=(_alpha_gaps, _widest_form),
             hidden=(_widest_gap,),
             asks="alpha_gaps: |ordinal - interval alpha| per (subset, label); widest_gap: the (subset, label) "
                  "where it is largest"),
)
