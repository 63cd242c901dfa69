"""One protocol for every pairwise dialogue judge, and the helpers every implementation shares.

A :class:`Judge` answers three questions about (conversation, reply) items:

* ``direct`` — P(the reply is a good next turn), one item at a time (DirectEval);
* ``orders`` — for two sides, P(the first side is the better one) asked with it shown first (column 0) and
  shown second (column 1): the two columns differ exactly by the judge's position bias;
* ``pairwise_matrix`` — every target against every comparison example in both orders, the array every
  PairEval score and ablation averages (:mod:`evalkit.paireval.scoring`, :mod:`evalkit.paireval.analysis`).

The kit's encoder judges (:class:`~evalkit.paireval.encoder.EncoderJudge`,
:class:`~evalkit.paireval.reader.ComparativeReader`) implement it directly;
:class:`~evalkit.paireval.lm_judge.LMJudge` asks any backend of the model door with chapter 4's prompts. Scoring code never asks what kind of judge it holds.
"""
from __future__ import annotations

from typing import Literal, Protocol, Sequence, runtime_checkable

import numpy as np

from evalkit.data.dialogue import Texts

__all__ = ["Judge", "Position", "keep_positions", "mean_over", "check_items", "cross_sides"]

Position = Literal["both", "first", "second"]


@runtime_checkable
class Judge(Protocol):
    """What chapter 4's scoring asks of a judge (see the module)."""

    name: str

    def direct(self, contexts: Sequence[Texts], responses: Sequence[str]) -> np.ndarray:
        """P(good reply) per item; NaN where the judge abstained."""

    def orders(self, first_contexts: Sequence[Texts], first_replies: Sequence[str],
               second_contexts: Sequence[Texts], second_replies: Sequence[str]) -> np.ndarray:
        """P(the first side is better), shape (n, 2): shown as A (column 0), shown as B (column 1)."""

    def pairwise_matrix(self, contexts: Sequence[Texts], responses: Sequence[str],
                        comparisons: Sequence[tuple[Texts, str]], *, positions: Position = "both") -> np.ndarray:
        """P(target is better), shape (targets, comparisons, 2): order 0 shows the target as A."""


def mean_over(matrix: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """The mean over ``axes`` ignoring NaN (abstentions, left-out orders); NaN where nothing is left.

    >>> mean_over(np.array([[0.2, np.nan], [np.nan, np.nan]]), (1,)).tolist()
    [0.2, nan]
    """
    counts = np.sum(~np.isnan(matrix), axis=axes)
    totals = np.nansum(matrix, axis=axes)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, totals / np.maximum(counts, 1), np.nan)


def keep_positions(matrix: np.ndarray, positions: Position) -> np.ndarray:
    """A pairwise matrix with the order ``positions`` leaves out set to NaN (a copy; "both" keeps it as is).

    >>> keep_positions(np.ones((1, 1, 2)), "first").tolist()
    [[[1.0, nan]]]
    """
    if positions == "both":
        return matrix
    kept = np.array(matrix, dtype=float, copy=True)
    kept[..., 1 if positions == "first" else 0] = np.nan
    return kept


def check_items(contexts: Sequence[Texts], responses: Sequence[str], comparisons: Sequence[tuple[Texts, str]]) -> None:
    """The checks every pairwise matrix makes first: one context per response, one comparison at least."""
    if len(contexts) != len(responses):
        raise ValueError(f"{len(contexts)} contexts but {len(responses)} responses")
    if not comparisons:
        raise ValueError("PairEval needs at least one comparison example")


def cross_sides(contexts: Sequence[Texts], responses: Sequence[str], comparisons: Sequence[tuple[Texts, str]]):
    """Every (target, comparison) as four side lists (first contexts, first replies, second contexts, second
    replies): the first side is the target, row-major over targets."""
    check_items(contexts, responses, comparisons)
    first_c = [c for c in contexts for _ in comparisons]
    first_r = [r for r in responses for _ in comparisons]
    second_c = [c for _ in contexts for c, _ in comparisons]
    second_r = [r for _ in contexts for _, r in comparisons]
    return first_c, first_r, second_c, second_r
