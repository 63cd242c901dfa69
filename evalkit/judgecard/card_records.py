"""The records a judge's report card holds per set: a label's agreement with people (:class:`LabelRow`), the
judge's cost (:class:`SetCost`) and its item scores (:class:`SetScores`)."""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LabelRow", "SetCost", "SetScores"]


_KEPT_EXAMPLES = 20


@dataclass(frozen=True)
class LabelRow:
    """One set and label of a card (see :mod:`evalkit.judgecard.card`); NaN where a value does not exist."""

    set: str
    label: str
    n: int
    groups: int
    missing: int
    pearson: float
    pearson_low: float
    pearson_high: float
    spearman: float
    spearman_low: float
    spearman_high: float
    kendall: float
    kendall_low: float
    kendall_high: float
    ceiling: float
    one_person: float
    ceiling_note: str
    share: float
    at_ceiling: bool
    length_partial: float
    length_partial_low: float
    length_partial_high: float
    shorter_preferred_pairs: int
    prefers_longer: float
    prefers_longer_low: float
    prefers_longer_high: float
    length_bias: bool


@dataclass(frozen=True)
class SetCost:
    """What one set cost — scoring it and the slot probe: model-door calls, cache hits, tokens, wall-clock and
    model seconds, money (None without a price); ``abstained`` items with up to 20 ``examples`` of (item, raw
    text)."""

    set: str
    items: int
    seconds: float
    calls: int
    cache_hits: int
    prompt_tokens: int
    completion_tokens: int
    model_seconds: float
    money: float | None
    abstained: int
    examples: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class SetScores:
    """The judge's score of every item of one set it scored (NaN: not scored)."""

    set: str
    item_ids: tuple[str, ...]
    scores: tuple[float, ...]
