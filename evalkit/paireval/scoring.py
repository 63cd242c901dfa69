"""PairEval and DirectEval scores of any :class:`~evalkit.judges.protocol.Judge`, and the reference baselines.

    s(h, r) = mean over comparison examples (h_j, r_j) of P(r is the better reply),

each comparison asked in both orders (target shown as A, then as B) and averaged, which cancels a judge's
position bias. An LM behind the model door is a judge through :class:`~evalkit.paireval.lm_judge.LMJudge`."""
from __future__ import annotations

import re
from typing import Literal, Sequence

import numpy as np
import pandas as pd

from evalkit.data.dialogue import Texts
from evalkit.judges.protocol import Judge, Position, check_items, mean_over


# --------------------------------------------------------------------------- scoring

def pairwise_matrix(contexts: Sequence[Texts], responses: Sequence[str], comparisons: Sequence[tuple[Texts, str]],
                    judge: Judge, *, positions: Position = "both") -> np.ndarray:
    """P(target is better) for every target x comparison example x order, shape ``(targets, N, 2)``.

    Order 0 shows the target as A, order 1 as B; an order left out by ``positions`` (or an abstention)
    is NaN. Every score and ablation of the chapter is an average over parts of this array.
    """
    check_items(contexts, responses, comparisons)
    return judge.pairwise_matrix(contexts, responses, comparisons, positions=positions)


def paireval_scores(contexts: Sequence[Texts], responses: Sequence[str], comparisons: Sequence[tuple[Texts, str]],
                    judge: Judge, *, positions: Position = "both") -> np.ndarray:
    """PairEval score of each (context, response): P(better) averaged over comparisons and orders.

    ``positions``: "both" (the paper's setting), or "first"/"second" for one order only (its Table 5).
    """
    return mean_over(pairwise_matrix(contexts, responses, comparisons, judge, positions=positions), (1, 2))


def upheld_judge_features(items: pd.DataFrame, direct_judge: Judge, pairwise_judge: Judge,
                          comparisons: Sequence[tuple[Texts, str]]) -> pd.DataFrame:
    """Chapter 4's two judges as features of UPHELD-style items (``item_id``, ``history``, ``candidate``):
    ``directeval`` (P(the candidate is a good next turn)) and ``paireval`` (P(it is the better reply) against
    the ``comparisons``), indexed by item."""
    from evalkit.paireval.schema import upheld_contexts

    contexts, candidates = upheld_contexts(items["history"]), items["candidate"].astype(str).tolist()
    return pd.DataFrame({"directeval": directeval_scores(contexts, candidates, direct_judge),
                         "paireval": paireval_scores(contexts, candidates, comparisons, pairwise_judge)},
                        index=items["item_id"].to_numpy())


def compare_responses(contexts: Sequence[Texts], first: Sequence[str], second: Sequence[str],
                      judge: Judge) -> np.ndarray:
    """P(``first`` reply is better than ``second``) for the same context, both orders averaged — how
    PairEval judges an original reply against its corrupted version in one prompt."""
    return mean_over(judge.orders(contexts, first, contexts, second), (1,))


def directeval_scores(contexts: Sequence[Texts], responses: Sequence[str], judge: Judge) -> np.ndarray:
    """DirectEval: P("Yes") that each reply is a good next turn (NaN where the judge abstains): the judge's
    score of each (context, reply) item."""
    if len(contexts) != len(responses):
        raise ValueError(f"{len(contexts)} contexts but {len(responses)} responses")
    return judge.score(pd.DataFrame({"context": list(contexts), "response": list(responses)})).scores


# --------------------------------------------------------------------------- reference baseline

_WORD = re.compile(r"\w+|[^\w\s]")


def bleu2(references: Sequence[str], candidates: Sequence[str]) -> np.ndarray:
    """Sentence BLEU-2 (uniform 1- and 2-gram weights, smoothing method 1, lower-cased word tokens).

    >>> bleu2(["the cat sat"], ["the cat sat"]).round(3).tolist()
    [1.0]
    """
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    smooth = SmoothingFunction().method1
    scores = []
    for reference, candidate in zip(references, candidates):
        ref, cand = _WORD.findall(str(reference).lower()), _WORD.findall(str(candidate).lower())
        scores.append(sentence_bleu([ref], cand, weights=(0.5, 0.5), smoothing_function=smooth) if cand and ref
                      else 0.0)
    return np.array(scores)


def length_scores(responses: Sequence[str]) -> np.ndarray:
    """The length baseline: words in each reply (a judge should beat "longer is better").

    >>> length_scores(["a b c", "", "hi"]).tolist()
    [3.0, 0.0, 1.0]
    """
    return np.array([float(len(str(r).split())) for r in responses])


def score_frame(frame: pd.DataFrame, judge: Judge, *, method: Literal["paireval", "directeval"] = "paireval",
                comparisons: Sequence[tuple[Texts, str]] = ()) -> np.ndarray:
    """Scores for every row of a meta-evaluation frame (``context``, ``response``) by one method."""
    if method == "paireval":
        return paireval_scores(list(frame["context"]), list(frame["response"]), comparisons, judge)
    if method == "directeval":
        return directeval_scores(list(frame["context"]), list(frame["response"]), judge)
    raise ValueError(f"unknown method {method!r} (paireval or directeval)")


def good_and_bad_sides(frame: pd.DataFrame) -> tuple[list, list, list, list]:
    """(good contexts, good replies, bad contexts, bad replies) of a pair frame (``better`` says which slot
    holds the good side)."""
    good_first = (frame["better"] == "A").to_numpy()
    pick = lambda a, b: [x if g else y for x, y, g in zip(frame[a], frame[b], good_first)]  # noqa: E731
    return (pick("context_a", "context_b"), pick("response_a", "response_b"),
            pick("context_b", "context_a"), pick("response_b", "response_a"))


def pair_preferences(frame: pd.DataFrame, judge: Judge) -> np.ndarray:
    """P(the good side is better) for each two-conversation pair of a frame (columns of
    :func:`~evalkit.paireval.data.training_pairs`), asked in both orders and averaged (a judge's position
    bias cancels)."""
    return mean_over(judge.orders(*good_and_bad_sides(frame)), (1,))


def preference_accuracy(preferences: np.ndarray) -> np.ndarray:
    """1 where the good side won, 0 where it lost, 0.5 on a tie, NaN where the judge abstained.

    >>> preference_accuracy(np.array([0.9, 0.2, 0.5, np.nan])).tolist()
    [1.0, 0.0, 0.5, nan]
    """
    return np.where(np.isnan(preferences), np.nan, np.where(preferences > 0.5, 1.0,
                                                              np.where(preferences < 0.5, 0.0, 0.5)))
