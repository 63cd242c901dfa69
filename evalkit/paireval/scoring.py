"""PairEval and DirectEval scores through the model door, and the BLEU-2 reference baseline.

    s(h, r) = mean over comparison examples (h_j, r_j) of P(r is the better reply),

each comparison asked in both orders (target shown as A, then as B) and averaged, which cancels a judge's
position bias."""
from __future__ import annotations

import re
from typing import Literal, Sequence

import numpy as np
import pandas as pd

from ..models import Backend, warn_if_parsed
from .prompts import PROMPT_LIMITS, PromptLimits, direct_messages, pair_messages
from ..dialogue import Texts

Position = Literal["both", "first", "second"]


# --------------------------------------------------------------------------- scoring

def _is_encoder(judge: object) -> bool:
    """An :class:`~evalkit.paireval.encoder.EncoderJudge` scores without prompts; an LM goes through the
    model door's ``label_probs``. Every scoring function below accepts either."""
    return hasattr(judge, "relevance") and not hasattr(judge, "label_probs")


def pairwise_matrix(contexts: Sequence[Texts], responses: Sequence[str], comparisons: Sequence[tuple[Texts, str]],
                    backend: Backend, *, positions: Position = "both",
                    limits: PromptLimits = PROMPT_LIMITS) -> np.ndarray:
    """P(target is better) for every target x comparison example x order, shape ``(targets, N, 2)``.

    Order 0 shows the target as A, order 1 as B; an order left out by ``positions`` (or an abstention)
    is NaN. Every score and ablation of the chapter is an average over parts of this array, and all its
    prompts go to the backend in one batched label-probability request.
    """
    if len(contexts) != len(responses):
        raise ValueError(f"{len(contexts)} contexts but {len(responses)} responses")
    if not comparisons:
        raise ValueError("PairEval needs at least one comparison example")
    if _is_encoder(backend):
        return backend.pairwise_matrix(contexts, responses, comparisons, positions=positions)
    prompts, slots = [], []
    for target, (context, response) in enumerate(zip(contexts, responses)):
        for j, (other_context, other_response) in enumerate(comparisons):
            if positions in ("both", "first"):
                prompts.append(pair_messages(context, response, other_context, other_response, limits=limits))
                slots.append((target, j, 0))
            if positions in ("both", "second"):
                prompts.append(pair_messages(other_context, other_response, context, response, limits=limits))
                slots.append((target, j, 1))
    matrix = np.full((len(contexts), len(comparisons), 2), np.nan)
    results = backend.label_probs(prompts, ["A", "B"])
    warn_if_parsed(results, "PairEval")
    for (target, j, order), result in zip(slots, results):
        if result.probs is not None:  # an abstention stays NaN rather than a guess
            matrix[target, j, order] = result.probs["A" if order == 0 else "B"]
    return matrix


def _mean_over(matrix: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    counts = np.sum(~np.isnan(matrix), axis=axes)
    totals = np.nansum(matrix, axis=axes)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, totals / np.maximum(counts, 1), np.nan)


def paireval_scores(contexts: Sequence[Texts], responses: Sequence[str], comparisons: Sequence[tuple[Texts, str]],
                    backend: Backend, *, positions: Position = "both",
                    limits: PromptLimits = PROMPT_LIMITS) -> np.ndarray:
    """PairEval score of each (context, response): P(better) averaged over comparisons and orders.

    ``positions``: "both" (the paper's setting), or "first"/"second" for one order only (its Table 5).
    """
    matrix = pairwise_matrix(contexts, responses, comparisons, backend, positions=positions, limits=limits)
    return _mean_over(matrix, (1, 2))


def upheld_judge_features(items: pd.DataFrame, direct_judge: Backend, pairwise_judge: Backend,
                          comparisons: Sequence[tuple[Texts, str]]) -> pd.DataFrame:
    """Chapter 4's two judges as features of UPHELD-style items (``item_id``, ``history``, ``candidate``):
    ``directeval`` (P(the candidate is a good next turn)) and ``paireval`` (P(it is the better reply) against
    the ``comparisons``), indexed by item."""
    from .schema import upheld_contexts

    contexts, candidates = upheld_contexts(items["history"]), items["candidate"].astype(str).tolist()
    return pd.DataFrame({"directeval": directeval_scores(contexts, candidates, direct_judge),
                         "paireval": paireval_scores(contexts, candidates, comparisons, pairwise_judge)},
                        index=items["item_id"].to_numpy())


def compare_responses(contexts: Sequence[Texts], first: Sequence[str], second: Sequence[str], backend: Backend, *,
                      limits: PromptLimits = PROMPT_LIMITS) -> np.ndarray:
    """P(``first`` reply is better than ``second``) for the same context, both orders averaged — how
    PairEval judges an original reply against its corrupted version in one prompt."""
    if _is_encoder(backend):
        return backend.compare(contexts, first, second)
    return _both_orders(contexts, first, contexts, second, backend, limits)


def _both_orders(first_contexts: Sequence[Texts], first_replies: Sequence[str], second_contexts: Sequence[Texts],
                 second_replies: Sequence[str], backend: Backend, limits: PromptLimits) -> np.ndarray:
    """P(the first side is better), asked of an LM judge in both orders and averaged (its position bias
    cancels); NaN where it abstained both times."""
    prompts = []
    for sides in zip(first_contexts, first_replies, second_contexts, second_replies):
        prompts.append(pair_messages(*sides, limits=limits))
        prompts.append(pair_messages(sides[2], sides[3], sides[0], sides[1], limits=limits))
    results = backend.label_probs(prompts, ["A", "B"])
    warn_if_parsed(results, "PairEval")
    values = np.full((len(first_replies), 2), np.nan)
    for index, result in enumerate(results):
        if result.probs is not None:
            values[index // 2, index % 2] = result.probs["A" if index % 2 == 0 else "B"]
    return _mean_over(values, (1,))


def directeval_scores(contexts: Sequence[Texts], responses: Sequence[str], backend: Backend, *,
                      limits: PromptLimits = PROMPT_LIMITS) -> np.ndarray:
    """DirectEval: P("Yes") that each reply is a good next turn (NaN where the judge abstains)."""
    if _is_encoder(backend):
        return backend.direct(contexts, responses)
    results = backend.label_probs([direct_messages(c, r, limits=limits) for c, r in zip(contexts, responses)],
                                  ["Yes", "No"])
    warn_if_parsed(results, "DirectEval")
    return np.array([r.probs["Yes"] if r.probs is not None else np.nan for r in results])


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


def score_frame(frame: pd.DataFrame, backend: Backend, *, method: Literal["paireval", "directeval"] = "paireval",
                comparisons: Sequence[tuple[Texts, str]] = (), limits: PromptLimits = PROMPT_LIMITS) -> np.ndarray:
    """Scores for every row of a meta-evaluation frame (``context``, ``response``) by one method."""
    if method == "paireval":
        return paireval_scores(list(frame["context"]), list(frame["response"]), comparisons, backend, limits=limits)
    if method == "directeval":
        return directeval_scores(list(frame["context"]), list(frame["response"]), backend, limits=limits)
    raise ValueError(f"unknown method {method!r} (paireval or directeval)")


def good_and_bad_sides(frame: pd.DataFrame) -> tuple[list, list, list, list]:
    """(good contexts, good replies, bad contexts, bad replies) of a pair frame (``better`` says which slot
    holds the good side)."""
    good_first = (frame["better"] == "A").to_numpy()
    pick = lambda a, b: [x if g else y for x, y, g in zip(frame[a], frame[b], good_first)]  # noqa: E731
    return (pick("context_a", "context_b"), pick("response_a", "response_b"),
            pick("context_b", "context_a"), pick("response_b", "response_a"))


def pair_preferences(frame: pd.DataFrame, judge: Backend, *, limits: PromptLimits = PROMPT_LIMITS) -> np.ndarray:
    """P(the good side is better) for each two-conversation pair of a frame (columns of
    :func:`~evalkit.paireval.data.training_pairs`): an LM judge is asked in both orders and the two answers
    averaged (its position bias cancels); the encoder judge has none to cancel."""
    good_contexts, good_replies, bad_contexts, bad_replies = good_and_bad_sides(frame)
    if _is_encoder(judge):
        return judge.prefer(judge.relevance(good_contexts, good_replies), judge.relevance(bad_contexts, bad_replies))
    return _both_orders(good_contexts, good_replies, bad_contexts, bad_replies, judge, limits)


def preference_accuracy(preferences: np.ndarray) -> np.ndarray:
    """1 where the good side won, 0 where it lost, 0.5 on a tie, NaN where the judge abstained.

    >>> preference_accuracy(np.array([0.9, 0.2, 0.5, np.nan])).tolist()
    [1.0, 0.0, 0.5, nan]
    """
    return np.where(np.isnan(preferences), np.nan, np.where(preferences > 0.5, 1.0,
                                                              np.where(preferences < 0.5, 0.0, 0.5)))
