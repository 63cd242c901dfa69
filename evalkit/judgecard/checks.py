"""The checks a card runs on a judge beside its agreement with people, on the same items: the length panel,
the slots (first-slot win rate and flip rate of a judge with slots) and self-consistency over a score's draws
(see :mod:`evalkit.judgecard.card` for what each reports and flags). The card module re-exports the rows."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd

from evalkit.stats import correlation, group_resamples, partial_correlation, percentile_interval, proportion
from evalkit.judgecard.judges import slot_wins
from evalkit.judges.protocol import Judge
from evalkit.judgecard.sets import HumanSet

__all__ = ["SlotRow", "ConsistencyRow", "same_context_pairs"]


@dataclass(frozen=True)
class SlotRow:
    """Position checks of a judge with slots on one set's same-context pairs."""

    set: str
    pairs: int
    first_slot: float
    first_slot_low: float
    first_slot_high: float
    flip: float
    flip_low: float
    flip_high: float


@dataclass(frozen=True)
class ConsistencyRow:
    """How a judge agrees with itself over its independent draws on one set (see the module docstring)."""

    set: str
    draws: int
    source: str
    n: int
    item_sd: float
    between_draws: float
    label: str
    pearson_min: float
    pearson_max: float


# --------------------------------------------------------------------------- pairs of replies to one context

def same_context_pairs(contexts: Sequence[Sequence[str]]) -> list[tuple[int, int]]:
    """Every (i, j), i < j, of items with the same context.

    >>> same_context_pairs([["a"], ["b"], ["a"], ["a"]])
    [(0, 2), (0, 3), (2, 3)]
    """
    by_context: dict[tuple[str, ...], list[int]] = {}
    for index, context in enumerate(contexts):
        by_context.setdefault(tuple(context), []).append(index)
    return sorted((members[a], members[b]) for members in by_context.values()
                  for a in range(len(members)) for b in range(a + 1, len(members)))


def _outcome(first: float, second: float) -> float:
    """1 when ``first`` is higher, 0.5 on a tie, 0 when lower, NaN when either is missing."""
    if first != first or second != second:
        return float("nan")
    return 1.0 if first > second else 0.5 if first == second else 0.0


def _length_panel(scores, lengths, human, groups, pairs, *, bootstrap: int, seed: int) -> dict[str, Any]:
    partial = partial_correlation(scores, lengths, human)
    draws = [partial_correlation(scores[d], lengths[d], human[d])
             for d in group_resamples(groups, bootstrap=bootstrap, seed=seed)] if bootstrap else []
    low, high = percentile_interval(draws)
    outcomes = []
    for i, j in pairs:
        if lengths[i] == lengths[j] or human[i] != human[i] or human[j] != human[j]:
            continue
        shorter, longer = (i, j) if lengths[i] < lengths[j] else (j, i)
        if human[shorter] > human[longer]:
            outcomes.append(_outcome(scores[longer], scores[shorter]))
    preference = proportion(outcomes)
    return {"length_partial": partial, "length_partial_low": float(low), "length_partial_high": float(high),
            "shorter_preferred_pairs": preference.n, "prefers_longer": preference.value,
            "prefers_longer_low": preference.low, "prefers_longer_high": preference.high,
            "length_bias": bool(low > 0 or preference.low > 0.5)}


def _consistency_row(human_set: HumanSet, draws: Sequence[np.ndarray], source: str) -> ConsistencyRow:
    """:class:`ConsistencyRow` of ``draws`` (each an array of scores aligned with the set's items), on the items
    every draw scored and people labelled (so each draw alone is read on the same items)."""
    stacked = np.stack([np.asarray(d, dtype=float) for d in draws])
    label = human_set.labels[0]
    human = human_set.items[label].to_numpy(dtype=float)
    keep = ~(np.isnan(stacked).any(axis=0) | np.isnan(human))
    stacked, human = stacked[:, keep], human[keep]
    nan = float("nan")
    if keep.sum() < 3:
        return ConsistencyRow(human_set.name, len(stacked), source, int(keep.sum()), nan, nan, label, nan, nan)
    between = [correlation(stacked[a], stacked[b]) for a in range(len(stacked)) for b in range(a + 1, len(stacked))]
    per_draw = [correlation(draw, human) for draw in stacked]
    between, per_draw = [b for b in between if b == b], [p for p in per_draw if p == p]
    return ConsistencyRow(human_set.name, len(stacked), source, int(keep.sum()),
                          float(np.mean(np.std(stacked, axis=0, ddof=1))),
                          float(np.mean(between)) if between else nan, label,
                          float(min(per_draw)) if per_draw else nan, float(max(per_draw)) if per_draw else nan)


def _slot_row(name: str, judge: Judge, items: pd.DataFrame, pairs, *, max_pairs: int, seed: int) -> SlotRow | None:
    if not pairs:
        return None
    if len(pairs) > max_pairs:
        chosen = np.random.default_rng(seed).choice(len(pairs), size=max_pairs, replace=False)
        pairs = [pairs[i] for i in sorted(chosen)]
    contexts, replies = list(items["context"]), items["response"].astype(str).tolist()
    shared = [contexts[i] for i, _ in pairs]  # both replies answer the same context
    first_wins = judge.orders(shared, [replies[i] for i, _ in pairs], shared, [replies[j] for _, j in pairs])
    if first_wins is None:
        return None
    verdicts = slot_wins(np.asarray(first_wins, dtype=float).reshape(len(pairs), 2))
    first = proportion([_outcome(v, 0.5) for v in verdicts.ravel()])
    flips = []
    for v0, v1 in verdicts:
        if v0 != v0 or v1 != v1:
            flips.append(float("nan"))
        else:
            flips.append(float(np.sign(v0 - 0.5) == np.sign(v1 - 0.5) != 0))
    flip = proportion(flips)
    return SlotRow(name, len(pairs), first.value, first.low, first.high, flip.value, flip.low, flip.high)
