"""The one protocol every judge of the kit answers, and the helpers its implementations share.

A judge is anything that scores (conversation, reply) items — a metric, an encoder, the comparative reader, an
LM behind the model door, a file of scores — and, where it can, compares two replies. A :class:`Judge` has a
``name`` and answers four questions:

* ``score(items)`` — one score per item (a :class:`Scored`; NaN where it abstains). ``items`` is a frame with
  ``context`` (turn texts) and ``response``, and, where a set has them, ``item_id``, ``history`` ((speaker,
  text) pairs), ``reference`` (None where there is none) and ``dataset``;
* ``orders(first_contexts, first_replies, second_contexts, second_replies)`` — P(the first side is the better
  one) asked with it shown first (column 0) and shown second (column 1): the two columns differ exactly by the
  judge's position bias; None for a judge that scores one reply at a time;
* ``pairwise_matrix(contexts, responses, comparisons)`` — every target against every comparison example in both
  orders, the array every PairEval score and ablation averages (:mod:`evalkit.paireval.scoring`,
  :mod:`evalkit.paireval.analysis`); None where the judge cannot compare;
* ``calls()`` — the model door's call records so far (none for a metric or an encoder).

The encoder judges (:class:`~evalkit.paireval.encoder.EncoderJudge`,
:class:`~evalkit.paireval.reader.ComparativeReader`) and :class:`~evalkit.paireval.lm_judge.LMJudge` (any
backend with chapter 4's prompts) compare; the report card's metrics, prompt judges and score files
(:mod:`evalkit.judgecard.judges`) score one reply at a time (:class:`OneReplyAtATime`). Chapter 4's tables and
the report card call the same methods and never ask what kind of judge they hold.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol, Sequence, runtime_checkable

import numpy as np
import pandas as pd

from evalkit.data.dialogue import Texts

__all__ = ["Judge", "Scored", "CannotScore", "OneReplyAtATime", "ScoresByDirect", "Position", "keep_positions",
           "mean_over", "check_items", "cross_sides"]

Position = Literal["both", "first", "second"]


class CannotScore(ValueError):
    """A judge that cannot score a set at all (a reference metric on a set without references): a report says
    why instead of failing."""


@dataclass(frozen=True)
class Scored:
    """A judge's scores on a set's items (NaN: an abstention) and, where it produced text, what it said.
    ``draws``: when the score averages independent draws (PairEval's runs, each with its own comparison
    examples; several score columns of a file), each draw's scores, and ``draws_from`` what a draw is."""

    scores: np.ndarray
    raw: tuple[str | None, ...] = ()
    draws: tuple[np.ndarray, ...] = ()
    draws_from: str = ""


@runtime_checkable
class Judge(Protocol):
    """What every judge answers (see the module)."""

    name: str

    def score(self, items: pd.DataFrame) -> Scored:
        """One score per item; NaN where the judge abstained."""

    def orders(self, first_contexts: Sequence[Texts], first_replies: Sequence[str],
               second_contexts: Sequence[Texts], second_replies: Sequence[str]) -> np.ndarray | None:
        """P(the first side is better), shape (n, 2): shown as A (column 0), shown as B (column 1); None for a
        judge that scores one reply at a time."""

    def pairwise_matrix(self, contexts: Sequence[Texts], responses: Sequence[str],
                        comparisons: Sequence[tuple[Texts, str]], *,
                        positions: Position = "both") -> np.ndarray | None:
        """P(target is better), shape (targets, comparisons, 2): order 0 shows the target as A; None for a judge
        that scores one reply at a time."""

    def calls(self) -> list:
        """The model door's call records so far (empty without one)."""


class OneReplyAtATime:
    """The comparing half of :class:`Judge` for a judge that scores one reply at a time: it has no slots."""

    def orders(self, first_contexts, first_replies, second_contexts, second_replies) -> None:
        return None

    def pairwise_matrix(self, contexts, responses, comparisons, *, positions: Position = "both") -> None:
        return None

    def calls(self) -> list:
        return []


class ScoresByDirect:
    """The scoring half of :class:`Judge` for a judge that compares: ``score`` is its DirectEval probability,
    ``direct(contexts, responses)``, of each item's reply; an encoder makes no call through the model door."""

    def direct(self, contexts: Sequence[Texts], responses: Sequence[str]) -> np.ndarray:
        raise NotImplementedError

    def score(self, items: pd.DataFrame) -> Scored:
        return Scored(np.asarray(self.direct(list(items["context"]), list(items["response"])), dtype=float))

    def calls(self) -> list:
        return []


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
