"""What a leaderboard checks before it ranks a card: the card's item scores are well formed, its rows are what
those scores give on the board's own human scores, and the scores are a judgement, not the answer key.

A card is a file anyone can edit, so the board trusts nothing it could recompute:

* every ``scores`` entry holds one finite score (or NaN: not scored) per item, each item once
  (:func:`~evalkit.judgecard.card_fields.check_set_scores`) — else the card is **refused**;
* every row on a set the board holds is recomputed from the card's item scores and the set's human scores: its
  ``n``, Pearson r, Spearman rho and Kendall tau, and, where the card gives one and the set keeps ratings, its
  noise ceiling and share of it (from the ratings of the items the card scored), must be what the card says (to
  1e-9) — else the card is
  **refused**, naming the row's field, so no page of the board shows a correlation its scores do not give; rows
  on sets the board does not hold cannot be checked: they enter no column of the board, and a card page the
  board writes (:func:`~evalkit.judgecard.leaderboard.write_board_card`) names their sets without their
  figures and shows every other row as the board recomputes it (share, ceiling and intervals too);
* a card's items on a set must be the set's items on the board's half, or the kit's seeded sample of them
  (:meth:`~evalkit.judgecard.sets.HumanSet.sample` with the board's seed *and* a sample size the board accepts:
  :func:`board_sizes`), every one of them scored — else the card is **flagged**: a judge that chooses its items,
  or leaves out the ones it would get wrong, chooses its agreement (a judge that cannot answer an item gives it
  its own fallback score, as the kit's judges do), and so does a card maker free to choose the sample's size,
  who can keep, of the seeded sample's prefixes, the one that flatters the judge;
* scores that are a linear function of a set's human scores (|r| = 1 on 3 or more items: the human labels
  themselves, rescaled or not) are **flagged**: no judge agrees with the mean of several noisy people exactly,
  so such a card holds the answer key; a flagged judge is shown with its flag and not ranked (so is one whose
  share of the ceiling lies above 1: :func:`~evalkit.judgecard.leaderboard.ceiling_flags`);
* scores that agree with the item means at |r| or |rho| of ``NEAR_COPY`` (0.99) or more, or that are one
  person's ratings — one rater's, each item's rating at one position, or a rating picked per item and rescaled
  (:func:`_one_rating_copied`) — or a weighted sum of two people's ratings (:func:`_two_ratings_combined`) are
  **flagged** too: one rater reaches about 0.95 of the ceiling, below the
  other checks, and that is a copy of the labels, not a judgement.

>>> import pandas as pd
>>> from evalkit.judgecard.sets import HumanSet, noise_ceiling
>>> items = pd.DataFrame({"item_id": ["a", "b", "c", "d"], "group": [0, 0, 1, 1], "score": [1.0, 2.0, 4.0, 3.0],
...                       "response": ["x"] * 4})
>>> toy = HumanSet("toy", items, ("score",), None, "")
>>> from evalkit.judgecard.leaderboard import scored_card
>>> card_flags([scored_card("copy", toy, 2 * items["score"] + 1)], {"toy": toy})
{'copy': ('its scores on toy/score are a linear function of the human scores (r = 1.000000): the answer key, not a judgement',)}
"""
from __future__ import annotations

import math
from typing import Collection, Mapping, Sequence

import numpy as np
import pandas as pd

from evalkit.stats import correlation
from evalkit.judgecard.card import Card
from evalkit.judgecard.card_fields import check_set_scores
from evalkit.judgecard.sets import HumanSet, noise_ceiling
# The checks that scores are people's ratings copied live in rating_copies; NEAR_COPY* are part of this API too.
from evalkit.judgecard.rating_copies import NEAR_COPY, NEAR_COPY_ITEMS, _one_rating_copied  # noqa: F401

__all__ = ["card_flags", "checked_cards", "coverage_flags", "board_sizes", "reason_for", "MAX_UNSCORED",
           "SAMPLE_SIZE"]

_TOLERANCE = 1e-9  # what the same correlation, summed in another order, may differ by

_CHECKED = (("pearson", "Pearson r"), ("spearman", "Spearman rho"), ("kendall", "Kendall tau"))
"""The correlations of a row recomputed from the card's item scores: a field of
:class:`~evalkit.judgecard.card_records.LabelRow` and the name a refusal gives it."""


def card_flags(cards: Sequence[Card], human_sets: Mapping[str, HumanSet],
               sources: Mapping[str, str] | None = None, *, seed: int | None = None,
               items_per_set: int | Collection[int] | None = None) -> dict[str, tuple[str, ...]]:
    """The flags of every card by judge (empty: nothing to flag), after checking each card against
    ``human_sets`` (see the module docstring); a card's sample must be drawn with the board's ``seed`` (None:
    the card's own) and be of a size the board accepts (``items_per_set``: :func:`board_sizes`). A card whose
    scores are malformed or whose rows do not match its scores raises ``ValueError`` naming ``sources[judge]``
    (its file; else the judge) and the field."""
    sources = sources or {}
    seeds = {card.judge: card.seed if seed is None else seed for card in cards}
    sizes, unsettled = board_sizes(cards, human_sets, seeds, items_per_set)
    flags = {}
    for card in cards:
        where = sources.get(card.judge) or f"the card of {card.judge!r}"
        flags[card.judge] = _check_card(card, human_sets, where, seed=seeds[card.judge], sizes=sizes,
                                        unsettled=unsettled)
    return flags


def _sampled_size(card: Card, human_set: HumanSet, seed: int) -> int | None:
    """How many items the card's sample on ``human_set`` holds, when its items are the kit's sample drawn with
    ``seed`` and not the whole set (None otherwise)."""
    ids = set(card.set_scores(human_set.name).index)
    if ids == set(human_set.items["item_id"].astype(str)):
        return None
    drawn = set(human_set.sample(len(ids), seed=seed).items["item_id"].astype(str))
    return len(ids) if ids == drawn else None


def board_sizes(cards: Sequence[Card], human_sets: Mapping[str, HumanSet], seeds: Mapping[str, int],
                items_per_set: int | Collection[int] | None = None
                ) -> tuple[dict[str, tuple[int, ...]], dict[str, tuple[int, ...]]]:
    """The sample sizes the board accepts on each set, besides the whole half, and the sets it cannot settle.

    ``items_per_set`` is the board's: a size (what ``judge card --items-per-set`` draws with the board's seed),
    several (a page whose slow judges read a smaller sample than the others), or none (``()``: the whole half
    only, what a card draws by default). The sample's size is fixed by the board, like its seed: the seeded
    order of contexts is public, so a card maker free to choose the size can score every prefix of it and keep
    the one that flatters the judge. A card that scores every item chose nothing, so the whole half is always
    accepted.

    ``None`` (a board not told): on each set, the one size the board's sampled cards share (``seeds[judge]``:
    the seed each card's sample must be drawn with). Where they were drawn at different sizes the board cannot
    tell which was chosen for it: it accepts none of them, and the set's sizes are returned in the second
    mapping, for the flag to say so. A board that ranks cards made by others should be told its size (the
    leaderboard command always is: ``--items-per-set``, none for the whole half).

    >>> import pandas as pd
    >>> from evalkit.judgecard.sets import HumanSet
    >>> from evalkit.judgecard.leaderboard import scored_card
    >>> items = pd.DataFrame({"item_id": list("abcdefghij"), "group": list("aabbccddee"), "score": range(10),
    ...                       "response": ["x"] * 10})
    >>> toy = HumanSet("toy", items, ("score",), None, "")
    >>> four, six = (toy.sample(n, seed=0) for n in (4, 6))
    >>> cards = [scored_card(f"on {len(s.items)}", s, s.items["score"] % 3) for s in (four, six)]
    >>> board_sizes(cards, {"toy": toy}, {"on 4": 0, "on 6": 0}, 4)
    ({'toy': (4,)}, {})
    >>> board_sizes(cards, {"toy": toy}, {"on 4": 0, "on 6": 0})
    ({'toy': ()}, {'toy': (4, 6)})
    """
    if items_per_set is not None:
        given = (items_per_set,) if isinstance(items_per_set, int) else tuple(items_per_set)
        if any(isinstance(size, bool) or not isinstance(size, int) or size < 1 for size in given):
            raise ValueError(f"items_per_set must be sizes of 1 or more, not {items_per_set!r}")
        accepted = tuple(sorted(set(given)))
        return {name: accepted for name in human_sets}, {}
    sizes, unsettled = {}, {}
    for name, human_set in human_sets.items():
        drawn = {_sampled_size(card, human_set, seeds[card.judge]) for card in cards
                 if any(entry.set == name for entry in card.scores)} - {None}
        sizes[name] = tuple(sorted(drawn)) if len(drawn) <= 1 else ()
        if len(drawn) > 1:
            unsettled[name] = tuple(sorted(drawn))
    return sizes, unsettled


def reason_for(error: Exception, where: str) -> str:
    """Why a card was refused, from the ``error`` whose text begins with ``where`` (its file): the text after it.

    >>> reason_for(ValueError("cards/a/card.json, field 'rows[0]': bad"), "cards/a/card.json")
    "field 'rows[0]': bad"
    >>> reason_for(ValueError("no scores"), "x.json")
    'no scores'
    """
    text = str(error)
    if where and text.startswith(where):
        text = text[len(where):].lstrip(",:. ")
    return text or type(error).__name__


def checked_cards(cards: Sequence[Card], human_sets: Mapping[str, HumanSet],
                  sources: Mapping[str, str] | None = None) -> tuple[list[Card], list[tuple[str, str]]]:
    """The cards of ``cards`` that pass the checks of :func:`card_flags` against ``human_sets``, and the refused
    ones as (``sources[judge]``, why), so a board can rank the rest and list these.

    >>> import pandas as pd
    >>> from dataclasses import replace
    >>> from evalkit.judgecard.sets import HumanSet
    >>> from evalkit.judgecard.leaderboard import scored_card
    >>> items = pd.DataFrame({"item_id": list("abcd"), "group": [0, 0, 1, 1], "score": [1.0, 2, 4, 3],
    ...                       "response": ["x"] * 4})
    >>> toy = HumanSet("toy", items, ("score",), None, "")
    >>> good = scored_card("good", toy, [1.0, 3, 2, 4])
    >>> edited = replace(scored_card("edited", toy, [1.0, 3, 2, 4]),
    ...                  rows=(replace(good.rows[0], pearson=0.99),))
    >>> kept, refused = checked_cards([good, edited], {"toy": toy}, {"edited": "e/card.json"})
    >>> [card.judge for card in kept], refused[0][0], refused[0][1][:46]
    (['good'], 'e/card.json', "field 'rows[0]' (toy/score): Pearson r is 0.99")
    """
    sources = sources or {}
    kept, refused = [], []
    for card in cards:
        where = sources.get(card.judge) or f"the card of {card.judge!r}"
        try:
            _check_card(card, human_sets, where)
        except ValueError as error:
            refused.append((where, reason_for(error, where)))
        else:
            kept.append(card)
    return kept, refused


def _aligned(card: Card, human_set: HumanSet, label: str) -> tuple[np.ndarray, np.ndarray]:
    """The card's scores and the set's human scores of ``label`` on the set's items, both finite."""
    items = human_set.items
    scores = items["item_id"].astype(str).map(card.set_scores(human_set.name)).to_numpy(dtype=float)
    human = items[label].to_numpy(dtype=float)
    keep = ~(np.isnan(scores) | np.isnan(human))
    return scores[keep], human[keep]


def _ceiling_and_share(card: Card, human_set: HumanSet, row) -> tuple[tuple[str, float, float], ...]:
    """(name, the card's value, the board's) of a row's noise ceiling and share of it, computed as a card computes
    them: the ceiling from the set's ratings of the items the card scored. None where the set keeps no ratings of
    the row's label, or the card gives no ceiling (made where the set kept none): the board shows its own."""
    if human_set.ratings is None or row.label not in human_set.ratings.columns or row.ceiling != row.ceiling:
        return ()  # (a card made where the set kept no ratings has no ceiling: its share is the board's own)
    items = human_set.items
    scored = items["item_id"].astype(str).map(card.set_scores(human_set.name)).to_numpy(dtype=float)
    keep = ~(np.isnan(scored) | np.isnan(items[row.label].to_numpy(dtype=float)))
    rated = human_set.ratings[human_set.ratings["item_id"].isin(set(items["item_id"][keep]))]
    ceiling = noise_ceiling(rated, row.label).ceiling
    share = row.pearson / ceiling if ceiling == ceiling and ceiling > 0 else float("nan")
    return ("ceiling", row.ceiling, ceiling), ("share of the ceiling", row.share, share)


def _same(given: float, value: float) -> bool:
    """Whether a row's ``given`` correlation is the ``value`` its scores give: both undefined, or equal
    to within :data:`_TOLERANCE` (a value that is not a number is never the same).

    >>> _same(0.5, 0.5 + 1e-12), _same(float("nan"), float("nan")), _same(0.5, float("nan")), _same("0.5", 0.5)
    (True, True, False, False)
    """
    if isinstance(given, bool) or not isinstance(given, (int, float)):
        return False
    if math.isnan(given) or math.isnan(value):
        return math.isnan(given) and math.isnan(value)
    return math.isclose(given, value, rel_tol=0, abs_tol=_TOLERANCE)


MAX_UNSCORED = 0.0
"""The share of a set's items a ranked card may leave unscored: none. Any allowance lets a judge drop the items
it gets wrong, which the labels it is ranked on tell it (5%, filled with the judge's median, lifted a judge
from last to first); a judge that cannot read an answer gives the item its own fallback score."""


SAMPLE_SIZE = "sampled at a size this board does not accept"
"""How the flag of a card whose sample is drawn with the board's seed but at another size begins (see
:func:`board_sizes`)."""


def coverage_flags(card: Card, human_set: HumanSet, *, seed: int | None = None, sizes: Collection[int] = (),
                   where: str = "", unsettled: Collection[int] = ()) -> tuple[str, ...]:
    """Why the board cannot rank ``card``'s scores on ``human_set`` as they stand (empty: it can): its items are
    not the set's items nor the kit's sample of them drawn with the board's ``seed`` (None: the card's own; a
    card free to pick its seed could try seeds until a sample flatters it), or they are that sample at a size
    not among the board's ``sizes`` (none: the whole half only; :func:`board_sizes`; ``unsettled``: the sizes of
    a board's cards that made it accept none), or some are unscored (:data:`MAX_UNSCORED`). ``where``: the card
    file, named in the flag.

    >>> import pandas as pd
    >>> from evalkit.judgecard.sets import HumanSet
    >>> from evalkit.judgecard.leaderboard import scored_card
    >>> items = pd.DataFrame({"item_id": list("abcdefghij"), "group": list("aabbccddee"), "score": range(10),
    ...                       "response": ["x"] * 10})
    >>> toy = HumanSet("toy", items, ("score",), None, "")
    >>> coverage_flags(scored_card("all", toy, items["score"] % 3), toy)
    ()
    >>> picked = scored_card("picked", toy, items["score"].where(items["score"] > 2) % 3)
    >>> coverage_flags(picked, toy)[0][:72]
    'it left 3 of its 10 items on toy unscored (every item must be scored): a'
    >>> six = toy.sample(6, seed=0)
    >>> sampled = scored_card("six", six, six.items["score"] % 3)
    >>> coverage_flags(sampled, toy, seed=0, sizes=(6,))
    ()
    >>> print(coverage_flags(sampled, toy, seed=0, sizes=(4,), where="cards/six/card.json")[0])
    sampled at a size this board does not accept: the sample of cards/six/card.json on toy holds 6 items (drawn with the board's seed, 0); the board accepts the whole half (10 items) or its sample of 4 (4 items): a card maker free to choose the sample's size can keep the size that flatters the judge
    """
    seed = card.seed if seed is None else seed
    series = card.set_scores(human_set.name)
    ids, half = set(series.index), set(human_set.items["item_id"].astype(str))
    size = _sampled_size(card, human_set, seed)
    if ids != half and size is None:
        return (f"its {len(ids)} items on {human_set.name} are neither the set's {len(half)} items nor the kit's "
                f"sample of them drawn with the board's seed ({seed}): a judge that chooses its items chooses its "
                "agreement",)
    if size is not None and not any(ids == set(human_set.sample(n, seed=seed).items["item_id"].astype(str))
                                    for n in sizes):
        boards = "".join(f" or its sample of {n} ({len(human_set.sample(n, seed=seed).items)} items)"
                         for n in sorted(sizes))
        why = (f" (the board was given no sample size, and its cards on {human_set.name} are samples of "
               f"{' and '.join(map(str, unsettled))} items: it cannot tell which size was chosen for it)"
               if unsettled else "")
        return (f"{SAMPLE_SIZE}: {f'the sample of {where}' if where else 'its sample'} on {human_set.name} holds "
                f"{size} items (drawn with the board's seed, {seed}); the board accepts the whole half ({len(half)} "
                f"items){boards}{why}: a card maker free to choose the sample's size can keep the size that "
                "flatters the judge",)
    unscored = int(series.isna().sum())
    if unscored > MAX_UNSCORED * len(ids):
        return (f"it left {unscored} of its {len(ids)} items on {human_set.name} unscored (every item must be "
                "scored): a judge that leaves out items can leave out its misses",)
    return ()


def _check_card(card: Card, human_sets: Mapping[str, HumanSet], where: str, *, seed: int | None = None,
                sizes: Mapping[str, Collection[int]] | None = None,
                unsettled: Mapping[str, Collection[int]] | None = None) -> tuple[str, ...]:
    for index, entry in enumerate(card.scores):
        check_set_scores(entry, f"{where}, field 'scores[{index}]'")
    scored = {entry.set for entry in card.scores}
    for index, row in enumerate(card.rows):
        human_set = human_sets.get(row.set)
        if human_set is None or row.label not in human_set.items.columns:
            continue  # a set the board does not hold: nothing to recompute it from
        field = f"{where}, field 'rows[{index}]' ({row.set}/{row.label})"
        if not pd.api.types.is_numeric_dtype(human_set.items[row.label]):
            raise ValueError(f"{field}: {row.label!r} is a column of texts in {row.set}, no human score, so the row "
                             "cannot be checked")
        if row.set not in scored:
            raise ValueError(f"{field}: the card has no item scores on {row.set!r}, so its row cannot be checked")
        scores, human = _aligned(card, human_set, row.label)
        if len(scores) != row.n:
            raise ValueError(f"{field}: n is {row.n} on the card but its item scores give {len(scores)} items with a "
                             "human score on this half (edited, or scored on another half or version of the set)")
        for kind, name in _CHECKED:
            given, value = getattr(row, kind), correlation(scores, human, kind=kind)
            if not _same(given, value):
                raise ValueError(f"{field}: {name} is {given!r} on the card but its item scores give {value!r}: "
                                 "the card's rows do not match its scores")
        for name, given, value in _ceiling_and_share(card, human_set, row):
            if not _same(given, value):
                raise ValueError(f"{field}: {name} is {given!r} on the card but the set's ratings on its scored "
                                 f"items give {value!r}: the card's rows do not match its scores")
    flags = []
    for name in sorted(scored & set(human_sets)):
        human_set = human_sets[name]
        flags.extend(coverage_flags(card, human_set, seed=seed, sizes=(sizes or {}).get(name, ()), where=where,
                                    unsettled=(unsettled or {}).get(name, ())))
        for label in human_set.labels:
            scores, human = _aligned(card, human_set, label)
            pearson = correlation(scores, human)
            if len(scores) >= 3 and not math.isnan(pearson) and abs(pearson) >= 1 - _TOLERANCE:
                flags.append(f"its scores on {name}/{label} are a linear function of the human scores "
                             f"(r = {pearson:.6f}): the answer key, not a judgement")
                continue
            if len(scores) < NEAR_COPY_ITEMS:
                continue  # on a few items a real judge can agree perfectly by chance
            rho = correlation(scores, human, kind="spearman")
            if max(abs(pearson), abs(rho)) >= NEAR_COPY:
                flags.append(f"its scores on {name}/{label} agree with the human scores beyond any judge "
                             f"(r = {pearson:.4f}, rho = {rho:.4f}): a copy of the labels, not a judgement")
                continue
            copied = _one_rating_copied(card.set_scores(name), human_set, label)
            if copied:
                flags.append(f"its scores on {name}/{label} are {copied}: a copy of people's ratings, not a judgement")
    return tuple(flags)
