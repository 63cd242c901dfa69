"""Chapter 0's exercises: position bias in the pairwise probe, and the raw mass on the labels.

Both read the chapter's own probe tables (``position``, ``pairs``, ``probe``): the model's answers cannot be
recomputed without the model, and the chapter already holds them.
"""
from __future__ import annotations

import numpy as np

from evalkit.course.core import Exercise, Work, Wrong, close, number, pair, whole

CHAPTER = "00_models_and_backends"
TOLERANCE = 1e-3  # probabilities: any order of summation, or re-asking the model (KV reuse: ~1e-6) is within it


def _flip_parts(work: Work) -> tuple[np.ndarray, np.ndarray]:
    position, pairs = work.chapter("position"), work.chapter("pairs")
    p_a = position["P(A)"].to_numpy(dtype=float)
    return p_a[:len(pairs)], p_a[len(pairs):]


def _flip_form(work: Work) -> None:
    whole(work["kept_reply"], "kept_reply", low=0, high=len(work.chapter("pairs")),
          what="the number of pairwise questions whose preferred reply survived the swap")
    number(work["share_on_a"], "share_on_a", low=0, high=1, what="a probability (the mean P(A))")


def _share_on_a(work: Work) -> None:
    first, swapped = _flip_parts(work)
    expected = float(np.concatenate([first, swapped]).mean())
    close(float(work["share_on_a"]), expected, tolerance=TOLERANCE,
          message="`share_on_a` is not the mean of P(A) over all six prompts (both orders) in `position`")


def _kept_reply(work: Work) -> None:
    first, swapped = _flip_parts(work)
    expected = int(((first > 0.5) == (swapped < 0.5)).sum())
    if int(round(float(work["kept_reply"]))) != expected:
        raise Wrong("`kept_reply` does not count the questions whose preferred *reply* (not letter) is the same in "
                    "both orders")


def _mass_form(work: Work) -> None:
    median = number(work["mass_median"], "mass_median", low=0, high=1, what="a probability (the median raw mass)")
    low, high = pair(work["mass_range"], "mass_range", what="the smallest and largest raw mass", low=0, high=1)
    if not low <= median <= high:
        raise Wrong("`mass_median` should lie within `mass_range` (a median lies between the smallest and the "
                    "largest value)")


def _mass_median(work: Work) -> None:
    expected = float(work.chapter("probe")["mass on Yes/No"].median())
    close(float(work["mass_median"]), expected, tolerance=TOLERANCE,
          message="`mass_median` is not the median raw probability on 'Yes' or 'No' over the eight statements "
                  "(the label mass before normalising, the probe's `mass on Yes/No`)")


def _mass_range(work: Work) -> None:
    mass = work.chapter("probe")["mass on Yes/No"]
    low, high = pair(work["mass_range"], "mass_range", what="the smallest and largest raw mass", low=0, high=1)
    close(low, float(mass.min()), tolerance=TOLERANCE, message="the first value of `mass_range` is not the "
          "smallest raw label mass over the eight statements")
    close(high, float(mass.max()), tolerance=TOLERANCE, message="the second value of `mass_range` is not the "
          "largest raw label mass over the eight statements")


EXERCISES = (
    Exercise("ch0-flip", CHAPTER, ("kept_reply", "share_on_a"), public=(_flip_form, _share_on_a),
             hidden=(_kept_reply,),
             asks="kept_reply: how many of the three questions kept their preferred reply after the swap; "
                  "share_on_a: the mean P(A) over all six prompts"),
    Exercise("ch0-mass", CHAPTER, ("mass_median", "mass_range"), public=(_mass_form, _mass_median),
             hidden=(_mass_range,),
             asks="mass_median: the median raw probability on 'Yes' or 'No' in the true/false probe; "
                  "mass_range: (smallest, largest)"),
)
