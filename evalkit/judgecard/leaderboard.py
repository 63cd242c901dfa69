"""Judges side by side: each judge's mean share of the human noise ceiling, with an interval, and a rank that
calls ties ties.

**What is averaged.** A *row* is one set and label with a ceiling (UPHELD's three sets x content, style and
reasonable, both USR sets and FED: the sets whose ratings are kept). The ceiling of a row is computed once,
on the whole half of that set (:func:`~evalkit.judgecard.sets.noise_ceiling`), so every judge is divided by
the same number; a judge's share on a row is its Pearson r with the mean human score, on the items it
scored, over that ceiling, and its *mean share* averages its rows (``labels`` keeps only rows of those
labels, e.g. the reference-free ones). Sets without a ceiling (GRADE's two and DailyDialog-Zhao, whose files
keep means only) enter the mean Pearson column, not the ranking.

**Intervals and ties.** A judge's interval resamples whole groups (contexts) of every set it scored, the
sets independently (:func:`evalkit.stats.group_resamples`), and takes the percentile interval of the mean
share. Two judges are compared *paired*: on the rows both have and the items both scored, with the same
resamples for both, the interval of the difference of their mean shares. A judge's rank is 1 + the number of
judges whose difference from it lies above zero by that interval; two judges whose paired interval holds
zero are tied, and the table says with whom (judges of equal rank are never apart by that rule).

>>> import pandas as pd
>>> from evalkit.judgecard.sets import HumanSet
>>> ratings = pd.DataFrame([{"item_id": str(i), "rater": r, "score": float(i % 5 + (r == i % 3))}
...                         for i in range(40) for r in range(3)])
>>> items = pd.DataFrame({"item_id": [str(i) for i in range(40)], "group": [i // 2 for i in range(40)],
...                       "score": ratings.groupby("item_id", sort=False)["score"].mean().to_numpy(),
...                       "response": ["x"] * 40})
>>> toy = HumanSet("toy", items, ("score",), ratings, "")
>>> fair = items.index.to_numpy() % 5 + (items.index.to_numpy() * 7919) % 13 / 6  # a judge: truth plus its errors
>>> close = items["score"].to_numpy() + 0.2 * (items.index.to_numpy() * 5 % 4 - 1.5)  # the labels plus a little noise
>>> cards = [scored_card(name, toy, values) for name, values in
...          (("fair", fair), ("noise", (items.index.to_numpy() * 7919) % 13), ("close", close),
...           ("copy", items["score"] * 2))]
>>> board = standings(cards, {"toy": toy}, bootstrap=200)
>>> [(s.judge, s.rank) for s in board], board[0].mean_share > 0.9 > board[1].mean_share
([('fair', 1), ('noise', 2), ('close', 0), ('copy', 0)], True)

**Above the ceiling.** The ceiling is how well the mean rating can agree with the true score, so a judge whose
share lies above 1 agrees with the raters' own noise: its scores may be the labels themselves. Such a judge is
listed with its share and a flag, and not ranked (:func:`ceiling_flags` gives the rule).

>>> board[2].flags[0][:60], round(board[2].mean_share, 3)
('above the human ceiling: scores may be the labels themselves', 1.016)

A card whose scores are the human scores (here doubled) holds the answer key: it is flagged, not ranked
(:mod:`evalkit.judgecard.verify`).

>>> board[3].flags[0][:68]
'its scores on toy/score are a linear function of the human scores (r'

**At the ceiling.** A ranked judge whose mean share's 95% interval reaches 1 is as close to people as another
rater, as far as the sample can tell, which is also what scores derived from the labels look like: it keeps its
rank and carries a caution (``cautions``, :data:`AT_CEILING`), shown in the table's Flag column, the JSON and the
sentence ("fair" above, at 0.935 [0.891, 0.969], is not marked). Both checks read every row as well as the mean:
a row above the ceiling flags its line, and a row whose 95% interval (its ceiling resampled too) reaches 1
cautions it (:data:`ROW_AT_CEILING`), each naming the row's set and the card file it came from, so a row derived
from the labels is marked even where the line's mean, averaged with other rows, is not.

**Provenance.** Each line names the card it comes from (``sources``: the card's file, or the files of one
judge's cards merged on different sets when the board is told to merge: ``judge leaderboard --merge``; then
``rows_from`` and the Rows cell say which file each set came from; with a key, only cards their maker signed
merge: :mod:`evalkit.judgecard.signing`) and the fingerprint of the card's stored item scores (:func:`scores_fingerprint`), shown in the tables' last column: two
judges that print the same name are two lines told apart there, never one.
"""
from __future__ import annotations

import hashlib
import html
import json
import re
import warnings
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Iterable, Mapping, Sequence
from urllib.parse import quote

import numpy as np
import pandas as pd

from evalkit.book.prose import join_names
from evalkit.stats.bootstrap import _pearson_rows, group_resamples, percentile_interval
from evalkit.judgecard._names import one_line
from evalkit.judgecard.card import Card, LabelRow, SetScores
from evalkit.judgecard.sets import HumanSet, noise_ceiling
from evalkit.judgecard.verify import card_flags

__all__ = ["Standing", "standings", "standings_frame", "leaderboard_markdown", "leaderboard_html", "board_sentence",
           "row_ceilings", "scored_card", "scores_fingerprint", "ceiling_flags", "board_card", "write_board_card",
           "ABOVE_CEILING", "AT_CEILING", "ROW_AT_CEILING", "PARTIAL", "coverage_flag"]


@dataclass(frozen=True)
class Standing:
    """One judge's line on the board (NaN where it has no row with a ceiling)."""

    judge: str
    rank: int
    mean_share: float
    share_low: float
    share_high: float
    ceiling_rows: int
    mean_pearson: float
    pearson_rows: int
    tied_with: tuple[str, ...]
    sets_skipped: tuple[str, ...]
    flags: tuple[str, ...] = ()  # why the board does not rank it (evalkit.judgecard.verify); rank 0 then
    card: str = ""  # the card file(s) the line comes from, as the caller names them (``sources``)
    fingerprint: str = ""  # of the card's stored item scores (:func:`scores_fingerprint`)
    cautions: tuple[str, ...] = ()  # ranked, but marked: its share's interval reaches the ceiling (AT_CEILING)
    rows_from: tuple[str, ...] = ()  # which card file each of its sets on the board came from ("file: set, set")
    above: tuple[str, ...] = ()  # the judges above it by a paired interval (its rank is 1 + their number)
    # Its paired comparisons: (other judge, its mean share minus the other's on the rows and items both have,
    # that difference's 95% interval low, high), one per ranked judge it shares a row with.
    differences: tuple[tuple[str, float, float, float], ...] = ()


def row_ceilings(human_sets: Mapping[str, HumanSet], labels: Sequence[str] | None = None
                 ) -> dict[tuple[str, str], float]:
    """The ceiling of every (set, label) whose ratings are kept, on the set's items as given (only ``labels``,
    when given)."""
    ceilings = {}
    for name, human_set in human_sets.items():
        if human_set.ratings is None:
            continue
        for label in human_set.labels:
            if labels is not None and label not in labels:
                continue
            value = noise_ceiling(human_set.ratings, label).ceiling
            if value == value and value > 0:
                ceilings[name, label] = value
    return ceilings


class _Rows:
    """A judge's (set, label) rows with a ceiling, as arrays aligned with its human set, for resampling."""

    def __init__(self, card: Card, human_sets: Mapping[str, HumanSet], ceilings: Mapping[tuple[str, str], float]):
        self.scores: dict[str, pd.Series] = {entry.set: card.set_scores(entry.set) for entry in card.scores
                                             if entry.set in human_sets}
        self.rows = [(s, label) for (s, label) in ceilings if s in self.scores]
        self.human_sets, self.ceilings = human_sets, ceilings

    def aligned(self, name: str, common: set[str] | None = None) -> tuple[pd.DataFrame, np.ndarray]:
        items = self.human_sets[name].items
        ids = items["item_id"].astype(str)
        scores = ids.map(self.scores[name]).to_numpy(dtype=float)
        keep = ~np.isnan(scores) & (ids.isin(common).to_numpy() if common is not None else True)
        return items[keep].reset_index(drop=True), scores[keep]

    def ids(self, name: str) -> set[str]:
        series = self.scores[name]
        return set(series.index[series.notna()])


def _share_draws(judges: Sequence[_Rows], rows: Sequence[tuple[str, str]], *, bootstrap: int, seed: int,
                 resamples: dict) -> tuple[np.ndarray, np.ndarray]:
    """Mean share over ``rows``: the point value per judge and its ``bootstrap`` draws (judges x draws). Every
    judge is read on the items all of them scored, with one resampling of those items' groups for all (kept
    in ``resamples`` for the next call on the same items)."""
    points = np.zeros((len(judges), len(rows)))
    draws = np.zeros((len(judges), len(rows), bootstrap))
    for s in sorted({name for name, _ in rows}):
        common = set.intersection(*(j.ids(s) for j in judges))
        for k, judge in enumerate(judges):
            items, scores = judge.aligned(s, common)
            groups = tuple(items["group"].astype(str))
            if (s, groups) not in resamples:
                resamples[s, groups] = group_resamples(list(groups), bootstrap=bootstrap, seed=seed)
            for r, (name, label) in enumerate(rows):
                if name == s:
                    human, ceiling = items[label].to_numpy(dtype=float), judge.ceilings[name, label]
                    points[k, r] = _pearson_rows(scores, human) / ceiling
                    draws[k, r] = [_pearson_rows(scores[d], human[d]) / ceiling for d in resamples[s, groups]]
    # A row whose r is undefined (constant scores) drops out of the mean; a pair with no defined row gives NaN.
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(points, axis=1), np.nanmean(draws, axis=1)


def scores_fingerprint(card: Card) -> str:
    """The first 12 hex digits of the SHA-256 of the card's stored item scores (each set's name, item ids and
    scores in the card's order; NaN as null): what tells two cards apart whatever their judges are named, and
    what two cards holding the same scores share.

    >>> empty = Card("a", {}, "all", 0, 0, (), (), ())
    >>> scores_fingerprint(empty) == scores_fingerprint(replace(empty, judge="b")), len(scores_fingerprint(empty))
    (True, 12)
    """
    kept = [[entry.set, list(entry.item_ids), [None if v != v else float(v) for v in entry.scores]]
            for entry in card.scores]
    return hashlib.sha256(json.dumps(kept, separators=(",", ":")).encode("utf-8")).hexdigest()[:12]


def _rating_stats(human_set: HumanSet, label: str, ids: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per item of ``ids``: how many ratings of ``label`` it has, their mean and their sum of squared deviations
    from that mean (0, 0 and 0 for an item without ratings)."""
    values = human_set.ratings[["item_id", label]].dropna()
    values = values.assign(item_id=values["item_id"].astype(str), **{label: values[label].astype(float)})
    grouped = values.groupby("item_id")[label]
    index = pd.Index(list(ids))
    count = grouped.count().reindex(index).fillna(0).to_numpy(dtype=float)
    mean = grouped.mean().reindex(index).fillna(0).to_numpy(dtype=float)
    spread = (grouped.var(ddof=0) * grouped.count()).reindex(index).fillna(0).to_numpy(dtype=float)
    return count, mean, spread


def _resampled_ceilings(count: np.ndarray, mean: np.ndarray, spread: np.ndarray,
                        draws: Sequence[np.ndarray]) -> np.ndarray:
    """The noise ceiling, sqrt(ICC(1, k)) as :func:`~evalkit.judgecard.sets.noise_ceiling` computes it, of each
    resample of items in ``draws`` (an item drawn twice counts twice; items with fewer than two ratings are left
    out; NaN where the reliability is not positive).

    >>> ratings = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]
    >>> values = np.array(ratings, dtype=float)
    >>> count, mean = np.full(6, 4.0), values.mean(axis=1)
    >>> spread = ((values - mean[:, None]) ** 2).sum(axis=1)
    >>> round(float(_resampled_ceilings(count, mean, spread, [np.arange(6)])[0]), 2)  # sqrt(0.44)
    0.67
    """
    rated = (count >= 2).astype(float)
    ceilings = np.full(len(draws), np.nan)
    for d, draw in enumerate(draws):
        weight = np.bincount(np.asarray(draw, dtype=int), minlength=len(count)) * rated
        items, total = weight.sum(), (weight * count).sum()
        if items < 2 or total <= items:
            continue
        grand = (weight * count * mean).sum() / total
        between = (weight * count * (mean - grand) ** 2).sum() / (items - 1)
        within = (weight * spread).sum() / (total - items)
        k0 = (total - (weight * count ** 2).sum() / total) / (items - 1)
        if between + (k0 - 1) * within == 0:
            continue
        single = (between - within) / (between + (k0 - 1) * within)
        k = total / items
        reliability = k * single / (1 + (k - 1) * single)
        if reliability > 0:
            ceilings[d] = np.sqrt(reliability)
    return ceilings


CEILING_Z = 3.09
"""How many standard errors above 1 a share must lie to be flagged (one-sided 0.001: the low end of a 99.8%
interval): a flag says a judge's scores may be the labels, so it asks for more than the board's 95%. A judge that
knew the true score reaches 1 on average and is flagged on about one sample in 1000 per row tested."""


def _above_one(point: float, draws: np.ndarray, bootstrap: int) -> tuple[float, float]:
    """The interval ``point`` +- :data:`CEILING_Z` standard errors, the standard error that of the resampled
    ``draws`` (a normal interval: steadier than a far percentile of a few hundred resamples); (point, point)
    without resamples.

    >>> [round(bound, 3) for bound in _above_one(1.1, np.array([1.0, 1.2]), 2)]
    [0.663, 1.537]
    """
    kept = np.asarray(draws, dtype=float)
    kept = kept[np.isfinite(kept)]
    if not bootstrap or len(kept) < 2:
        return point, point
    error = float(np.std(kept, ddof=1)) * CEILING_Z
    return point - error, point + error


PARTIAL = "scored only some of the board's sets"
"""How a flag begins for a judge without rows on every set the board ranks on (a set it cannot read, one without
a reference for a reference metric, excepted): its share is shown, not ranked, since a judge allowed to choose its
sets could choose the ones it does best on (:func:`coverage_flag`)."""


def coverage_flag(card: Card, human_sets: Mapping[str, HumanSet], board_sets: set[str]) -> tuple[str, ...]:
    """:data:`PARTIAL` with the sets the card lacks, when it lacks any of ``board_sets`` it could read: a set
    with no reference text is left out by a reference metric, which cannot read it, and says so on its card
    (``skipped``: "needs a reference"), so only that reason for only such a set is no choice.

    >>> import pandas as pd
    >>> from evalkit.judgecard.sets import HumanSet
    >>> from evalkit.judgecard.card import Card, SetScores
    >>> sets = {n: HumanSet(n, pd.DataFrame({"item_id": ["a"], "group": [0], "score": [1.0], "response": ["x"],
    ...                                      "reference": [ref]}), ("score",), None, "") for n, ref in
    ...         (("one", "r"), ("two", "r"), ("free", None))}
    >>> card = Card("j", {}, "test", 0, 0, (), (), (), scores=(SetScores("one", ("a",), (1.0,)),),
    ...             skipped=(("free", "bleu2 needs a reference for every item"),))
    >>> coverage_flag(card, sets, {"one", "two", "free"})[0]
    "scored only some of the board's sets: 1 of 3 (not two): a judge that chooses its sets chooses its agreement"
    """
    have = {entry.set for entry in card.scores}
    no_reference = {name for name, why in card.skipped if "reference" in str(why)}
    missing = sorted(name for name in board_sets - have
                     if _readable(human_sets[name]) or name not in no_reference)
    if not missing:
        return ()
    return (f"{PARTIAL}: {len(board_sets & have)} of {len(board_sets)} (not {', '.join(missing)}): a judge that "
            "chooses its sets chooses its agreement",)


def _readable(human_set: HumanSet) -> bool:
    """Whether every judge can score ``human_set``: it has reference text (else a reference metric cannot)."""
    items = human_set.items
    return "reference" in items.columns and items["reference"].notna().any()


ABOVE_CEILING = "above the human ceiling: scores may be the labels themselves"
"""How a flag for a share above the ceiling begins (see :func:`ceiling_flags`)."""

AT_CEILING = ("at the human ceiling: as close to people as another rater; check the scores are not derived from "
              "the labels")
"""How a caution begins for a ranked judge whose mean share's 95% interval reaches 1 (its high end 1 or more): the
sample cannot tell it from a judge as good as people's own agreement, which is what labels plus noise look like.
The judge stays ranked (unlike :data:`ABOVE_CEILING`), marked in the table, the JSON and the sentence."""

ROW_AT_CEILING = ("a row at the human ceiling: one set and label's share interval reaches 1, from a small row's "
                  "wide interval or from scores derived from the labels")
"""How a caution begins for a ranked judge one of whose rows (set and label) has a share whose 95% interval
reaches 1 while the mean's does not: on a set of few contexts any judge's interval can reach 1, so the mark is
a reason to read that row, not a verdict; a row forged from the labels and merged into an honest line is marked
this way (the mean, averaged with other rows, stays under the ceiling)."""


def _at_ceiling(share: float, low: float, high: float) -> tuple[str, ...]:
    """The caution of a mean share whose interval reaches the ceiling (none otherwise).

    >>> _at_ceiling(0.999, 0.939, 1.029)[0][-61:]
    '(mean share 0.999 [0.939, 1.029]: its 95% interval reaches 1)'
    >>> _at_ceiling(0.8, 0.7, 0.9), _at_ceiling(float("nan"), float("nan"), float("nan"))
    ((), ())
    """
    if not high >= 1:
        return ()
    return (f"{AT_CEILING} (mean share {share:.3f} [{low:.3f}, {high:.3f}]: its 95% interval reaches 1)",)


def _from(files: Mapping[str, str] | None, name: str) -> str:
    """", from FILE" for a row of the set ``name`` when its card file is known (empty otherwise)."""
    return f", from {files[name]}" if files and files.get(name) else ""


def ceiling_flags(card: Card, human_sets: Mapping[str, HumanSet], ceilings: Mapping[tuple[str, str], float], *,
                  bootstrap: int, seed: int, files: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """Flags for a share of the human ceiling above 1, which no judge reaches honestly: the ceiling is how well
    the mean rating can agree with the true score, so a judge can exceed it only by agreeing with the raters'
    own noise, i.e. by holding (a noisy copy of) the labels.

    **The rule.** The board's shares divide by one ceiling per row, fixed; a test against 1 must also allow for
    that ceiling's own sampling error. So each of the card's rows (those of ``ceilings``) is resampled by whole
    groups of the items it scored, ``bootstrap`` times (seeded by ``seed``), and on every resample both the
    Pearson r and the ceiling are recomputed. A row whose share lies more than :data:`CEILING_Z` (3.09) standard
    errors of those resamples above 1 (its 99.8% interval above 1) is flagged, and so is the mean share when it
    lies that far above 1 by its resampled mean. A judge with a share just above 1 by chance (one that knew the
    true score would reach 1 on average) holds 1 in that interval and is not flagged. With no resamples
    (``bootstrap`` 0) a share (the point) above 1 is flagged. Every flagged row is named (set/label), with the
    card file its set came from (``files[set]``, when given: a merged line's rows come from several files)."""
    return _ceiling_checks(card, human_sets, ceilings, bootstrap=bootstrap, seed=seed, files=files)[0]


def _ceiling_checks(card: Card, human_sets: Mapping[str, HumanSet], ceilings: Mapping[tuple[str, str], float], *,
                    bootstrap: int, seed: int, files: Mapping[str, str] | None = None
                    ) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The flags of :func:`ceiling_flags` and the cautions of the card's rows: a row whose share's 95% percentile
    interval, over the same resamples (the ceiling resampled too, as a row's own ceiling is estimated on its
    items), reaches 1 is cautioned (:data:`ROW_AT_CEILING`), naming the row and the card file its set came from, so
    a row derived from the labels is marked even where the line's mean, averaged with other rows, is not."""
    judged = _Rows(card, human_sets, ceilings)
    points, draws, flags, cautions = [], [], [], []
    for name, label in judged.rows:
        items, scores = judged.aligned(name)
        human = items[label].to_numpy(dtype=float)
        keep = np.isfinite(human)
        items, scores, human = items[keep].reset_index(drop=True), scores[keep], human[keep]
        if len(items) < 3 or human_sets[name].ratings is None:
            continue
        point = float(_pearson_rows(scores, human)) / ceilings[name, label]
        resamples = group_resamples(list(items["group"].astype(str)), bootstrap=bootstrap, seed=seed)
        resampled = _resampled_ceilings(*_rating_stats(human_sets[name], label, items["item_id"].astype(str)),
                                        resamples)
        shares = np.array([_pearson_rows(scores[d], human[d]) for d in resamples]) / resampled
        points.append(point)
        draws.append(shares)
        near_low, near_high = percentile_interval(shares)  # none without resamples
        if near_high >= 1:
            cautions.append(f"{ROW_AT_CEILING} (on {name}/{label}{_from(files, name)}: share {point:.3f} "
                            f"[{near_low:.3f}, {near_high:.3f}] at 95%, the ceiling resampled too: its interval "
                            "reaches 1)")
        low, high = _above_one(point, shares, bootstrap)
        if low > 1:
            flags.append(f"{ABOVE_CEILING} (on {name}/{label}{_from(files, name)}: share {point:.3f} "
                         f"[{low:.3f}, {high:.3f}] at 99.8%, the ceiling resampled too)")
    if not points:
        return (), ()
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = float(np.nanmean(points))
        low, high = _above_one(mean, np.nanmean(np.stack(draws), axis=0), bootstrap)
    if low > 1:  # the mean first, then every row flagged on its own, named with its set and file
        flags = [f"{ABOVE_CEILING} (mean share {mean:.3f} [{low:.3f}, {high:.3f}] at 99.8%, the ceiling resampled "
                 "too: more agreement with the mean rating than the raters' own agreement allows)", *flags]
    return tuple(flags), tuple(cautions)


def standings(cards: Sequence[Card], human_sets: Mapping[str, HumanSet], *, bootstrap: int = 1000,
              seed: int = 0, labels: Sequence[str] | None = None,
              sources: Mapping[str, str] | None = None,
              row_sources: Mapping[str, Mapping[str, str]] | None = None,
              items_per_set: int | Sequence[int] | None = None) -> list[Standing]:
    """The board: one :class:`Standing` per card, best first (see the module docstring). ``human_sets`` are the
    sets the cards scored, by name, restricted to the half the cards report; ``labels`` ranks on those
    labels' rows only. Each card is checked against ``human_sets`` first (:mod:`evalkit.judgecard.verify`): one
    whose rows do not match its item scores, or whose scores are malformed, is refused naming
    ``sources[judge]`` (its file) and the field; one that holds the answer key, or whose share lies above the
    ceiling (:func:`ceiling_flags`), is flagged and not ranked. Each line keeps ``sources[judge]`` and the
    fingerprint of the card's item scores (:func:`scores_fingerprint`). A ranked judge whose mean share's 95%
    interval reaches 1 keeps its rank and carries a caution (:data:`AT_CEILING`, in ``cautions``). Two cards with
    one judge name are refused: name them apart, or make one judge's cards on different sets one card
    (:func:`~evalkit.judgecard.card.merge_cards`).

    The ceiling checks read every row as well as the mean: a row whose share lies above the ceiling flags the
    line, and a row whose share's 95% interval reaches 1 cautions it, each naming the row's set and the card file
    it came from (``row_sources[judge][set]``: a merged card's sets come from several files; else
    ``sources[judge]``). Each line's ``rows_from`` says which file each of its sets on the board came from.

    A sampled card's items must be the kit's sample drawn with ``seed`` at a size the board accepts:
    ``items_per_set``, one size or several (``()``: the whole half only); None, the one size the sampled cards
    on each set share (:func:`~evalkit.judgecard.verify.board_sizes`). A card sampled at another size is
    flagged (:data:`~evalkit.judgecard.verify.SAMPLE_SIZE`, naming its file, the set and both sizes), shown and
    not ranked."""
    sources = sources or {}
    files_of = {card.judge: dict(row_sources[card.judge]) if row_sources and card.judge in row_sources
                else {entry.set: sources[card.judge] for entry in card.scores} if sources.get(card.judge) else {}
                for card in cards}
    names = [card.judge for card in cards]
    if len(set(names)) < len(names):
        raise ValueError(f"two cards share a judge name ({', '.join(sorted({n for n in names if names.count(n) > 1}))}):"
                         " merge them (merge_cards) or name the judges apart")
    flags = card_flags(cards, human_sets, sources, seed=seed, items_per_set=items_per_set)
    ceilings = row_ceilings(human_sets, labels)
    board_sets = {name for name, _ in ceilings}
    for card in cards:  # partial lines keep their share, shown unranked
        flags[card.judge] = (*flags[card.judge], *coverage_flag(card, human_sets, board_sets))
    partial_only = lambda judge: all(flag.startswith(PARTIAL) for flag in flags[judge])
    every_ceiling = row_ceilings(human_sets) if labels is not None else ceilings
    judged = [_Rows(card, human_sets, ceilings) for card in cards]
    resamples: dict = {}
    share, interval, row_cautions = {}, {}, {}
    for card, rows in zip(cards, judged):
        if rows.rows and partial_only(card.judge):
            point, draws = _share_draws([rows], rows.rows, bootstrap=bootstrap, seed=seed, resamples=resamples)
            share[card.judge], interval[card.judge] = float(point[0]), percentile_interval(draws[0])
        if partial_only(card.judge):  # on every label's rows: a copy of one label is flagged on any board
            found, row_cautions[card.judge] = _ceiling_checks(
                card, human_sets, every_ceiling, bootstrap=bootstrap, seed=seed, files=files_of[card.judge])
            flags[card.judge] = (*found, *flags[card.judge])
    better = {card.judge: set() for card in cards}
    tied = {card.judge: set() for card in cards}
    differences: dict[str, list[tuple[str, float, float, float]]] = {card.judge: [] for card in cards}
    for a in range(len(cards)):
        for b in range(a + 1, len(cards)):
            rows = sorted(set(judged[a].rows) & set(judged[b].rows))
            if not rows or flags[cards[a].judge] or flags[cards[b].judge]:
                continue
            point, draws = _share_draws([judged[a], judged[b]], rows, bootstrap=bootstrap, seed=seed,
                                        resamples=resamples)
            lower, upper = percentile_interval(draws[0] - draws[1])
            first, second = cards[a].judge, cards[b].judge
            gap = float(point[0] - point[1])
            differences[first].append((second, gap, float(lower), float(upper)))
            differences[second].append((first, -gap, float(-upper), float(-lower)))
            if lower > 0:
                better[second].add(first)
            elif upper < 0:
                better[first].add(second)
            else:
                tied[first].add(second)
                tied[second].add(first)
    board = []
    for card, rows in zip(cards, judged):
        pearsons = [row.pearson for row in card.rows if row.pearson == row.pearson  # rows the board can check
                    and row.set in human_sets and row.label in human_sets[row.set].labels
                    and (labels is None or row.label in labels)]
        name, nan = card.judge, float("nan")
        board.append(Standing(name, 0 if flags[name] else 1 + len(better[name]), share.get(name, nan),
                              *interval.get(name, (nan, nan)), len(rows.rows),
                              float(np.mean(pearsons)) if pearsons else nan, len(pearsons), tuple(sorted(tied[name])),
                              tuple(s for s, _ in card.skipped), flags[name], sources.get(name, ""),
                              scores_fingerprint(card),
                              () if not partial_only(name) else (*_at_ceiling(share.get(name, nan),
                                                                   *interval.get(name, (nan, nan))),
                                                      *row_cautions.get(name, ())),
                              _rows_from(card, human_sets, files_of[name]),
                              () if flags[name] else tuple(sorted(better[name])),
                              tuple(sorted(differences[name]))))
    # A judge without a defined share (no row, or r undefined on every row it has) is listed last, unranked;
    # a flagged one after it.
    return sorted(board, key=lambda s: (bool(s.flags), s.mean_share != s.mean_share, s.rank,
                                        -np.nan_to_num(s.mean_share, nan=-np.inf), s.judge))


def _rows_from(card: Card, human_sets: Mapping[str, HumanSet], files: Mapping[str, str]) -> tuple[str, ...]:
    """Which card file each of the card's sets on the board came from, one "file: set, set" per file (a merged
    line names several files).

    >>> card = Card("j", {}, "all", 0, 0, (), (), (), scores=(SetScores("a", (), ()), SetScores("b", (), ())))
    >>> _rows_from(card, {"a": None, "b": None}, {"a": "x/card.json", "b": "y/card.json"})
    ('x/card.json: a', 'y/card.json: b')
    """
    by_file: dict[str, list[str]] = {}
    for entry in card.scores:
        if entry.set in human_sets and files.get(entry.set):
            by_file.setdefault(files[entry.set], []).append(entry.set)
    return tuple(f"{file}: {', '.join(sets)}" for file, sets in by_file.items())


def _ranked(board: Sequence[Standing]) -> list[Standing]:
    """The judges the board ranks: a defined share, no flag."""
    return [s for s in board if s.mean_share == s.mean_share and not s.flags]


def standings_frame(board: Sequence[Standing]) -> pd.DataFrame:
    """The board as a table, one row per judge."""
    frame = pd.DataFrame([asdict(s) for s in board])
    frame["tied_with"] = [", ".join(t) for t in frame["tied_with"]]
    frame["sets_skipped"] = [", ".join(t) for t in frame["sets_skipped"]]
    frame["flags"] = ["; ".join(t) for t in frame["flags"]]
    frame["cautions"] = ["; ".join(t) for t in frame["cautions"]]
    frame["rows_from"] = ["; ".join(t) for t in frame["rows_from"]]
    frame["above"] = [", ".join(t) for t in frame["above"]]
    frame["differences"] = ["; ".join(f"{other}: {gap:+.3f} [{low:+.3f}, {high:+.3f}]"
                                      for other, gap, low, high in t) for t in frame["differences"]]
    return frame


def _cell(text: str) -> str:
    """Text for Markdown (a table cell, a sentence): on one line (:func:`~evalkit.judgecard._names.one_line`), HTML
    escaped, and the characters Markdown reads as markup escaped, so a judge's name is shown as written and never
    becomes HTML, a link, emphasis, a second table row, or a list or code fence at the start of a sentence.

    >>> print(_cell("<img src=x onerror=alert(1)> *a*|b"))
    &lt;img src=x onerror=alert(1)&gt; \\*a\\*\\|b
    >>> print(_cell("a\\nb|c"), _cell("- x"), _cell("1. x"), _cell("~~~ x"))
    a b\\|c \\- x 1\\. x \\~~~ x
    """
    text = "".join(f"\\{c}" if c in "\\`*_[]#!|" else c for c in html.escape(one_line(text).strip(), quote=False))
    if text[:1] in ("-", "+", "~", "="):  # a list item, a code fence or a heading's underline at a line's start
        return "\\" + text
    return re.sub(r"^(\d+)([.)])", r"\1\\\2", text)  # an ordered list's number


def _number(value: float) -> str:
    return "–" if value != value else f"{value:.3f}"


_HEADERS = ("Rank", "Judge", "Mean share of ceiling [95% interval]", "Rows", "Mean Pearson r (its rows)", "Tied with",
            "Flag", "Card (file; item scores' fingerprint)")


def _card_cell(s: Standing) -> str:
    """Where a board line comes from: its card file(s), when the board was told, and the fingerprint of the
    card's item scores, so two judges that print the same name are told apart.

    >>> _card_cell(Standing("a", 1, 0.5, 0.4, 0.6, 9, 0.3, 9, (), (), (), "cards/a/card.json", "0123456789ab"))
    'cards/a/card.json; scores 0123456789ab'
    """
    shown = f"scores {s.fingerprint}" if s.fingerprint else "scores –"
    return f"{one_line(s.card)}; {shown}" if s.card else shown


def _cells(s: Standing, ranks: Sequence[int]) -> tuple[str, str, str, str, str, str, str]:
    """A board line's cells other than the judge, as plain text: rank (``2=`` for a tie, ``–`` unranked), share,
    rows (with the file each set came from, on a line from several files), mean Pearson, ties, flags (what keeps
    it unranked) and cautions (of a ranked line), card."""
    ranked = s.mean_share == s.mean_share and not s.flags
    rank = "–" if not ranked else f"{s.rank}=" if ranks.count(s.rank) > 1 else str(s.rank)
    share = (f"{_number(s.mean_share)} [{_number(s.share_low)}, {_number(s.share_high)}]"
             if s.mean_share == s.mean_share else
             "no row with a ceiling" if not s.ceiling_rows else "r undefined on its rows")
    rows = str(s.ceiling_rows) + (f" (from {'; '.join(s.rows_from)})" if len(s.rows_from) > 1 else "")
    return (rank, share, one_line(rows), f"{_number(s.mean_pearson)} ({s.pearson_rows})",
            one_line(", ".join(s.tied_with)) or "none", one_line("; ".join((*s.flags, *s.cautions))) or "none",
            _card_cell(s))


def leaderboard_markdown(board: Sequence[Standing], links: Mapping[str, str] | None = None) -> str:
    """The board as a Markdown table (a file's, e.g. ``leaderboard.md``); a judge's name links to
    ``links[judge]`` when given (text escaped). A page that renders Markdown output as CommonMark (the book's
    notebooks) shows no table: use :func:`leaderboard_html` there."""
    links = links or {}
    ranks = [s.rank for s in _ranked(board)]
    lines = ["| " + " | ".join(_HEADERS) + " |", "|" + "---|" * len(_HEADERS)]
    for s in board:
        name = _cell(s.judge)
        shown = f"[{name}]({quote(links[s.judge], safe='/#:.-_~%')})" if s.judge in links else name
        rank, share, rows, pearson, tied, flags, card = _cells(s, ranks)
        lines.append(f"| {rank} | {shown} | {share} | {_cell(rows)} | {pearson} | {_cell(tied)} | {_cell(flags)} "
                     f"| {_cell(card)} |")
    return "\n".join(lines)


_COMPACT_HEADERS = ("Rank", "Judge", "Mean share of the ceiling [95% interval]", "Rows", "Mean Pearson r (its rows)",
                    "Tied with", "Mark")


def _mark(text: str) -> str:
    """A flag's or caution's short form: its words before the colon ("at the human ceiling")."""
    return text.split(":", 1)[0]


def leaderboard_html(board: Sequence[Standing], links: Mapping[str, str] | None = None, *,
                     names: Mapping[str, str] | None = None, compact: bool = False) -> str:
    """The board as an HTML table, every text escaped; a judge's name links to ``links[judge]`` when given and
    is shown as ``names[judge]`` when given (a glossary's name). What a notebook displays: HTML passes the
    book's Markdown renderer and its typography untouched. ``compact``: seven columns for a page — flags and
    cautions by their short form in one Mark column, no card column (its file and fingerprint stay in the
    board's files).

    >>> row = Standing("<b>x</b>", 1, 0.5, 0.4, 0.6, 9, 0.3, 9, (), ())
    >>> table = leaderboard_html([row], {"<b>x</b>": "#card-0"})
    >>> '<a href="#card-0">&lt;b&gt;x&lt;/b&gt;</a>' in table, table.count("<th>"), "<td>0.500 [0.400, 0.600]</td>" in table
    (True, 8, True)
    >>> flagged = Standing("y", 0, 1.2, 1.1, 1.3, 9, 0.9, 9, (), (), flags=("above the human ceiling: 1.2 on fed",))
    >>> table = leaderboard_html([row, flagged], names={"y": "judge Y"}, compact=True)
    >>> table.count("<th>"), "<td>judge Y</td>" in table, "<td>not ranked: above the human ceiling</td>" in table
    (7, True, True)
    """
    links, names = links or {}, names or {}
    ranks = [s.rank for s in _ranked(board)]
    head = "".join(f"<th>{html.escape(h)}</th>" for h in (_COMPACT_HEADERS if compact else _HEADERS))
    body = []
    for s in board:
        name = html.escape(one_line(names.get(s.judge, s.judge)))
        shown = f'<a href="{html.escape(links[s.judge], quote=True)}">{name}</a>' if s.judge in links else name
        rank, share, rows, pearson, tied, flags, card = _cells(s, ranks)
        if compact:
            marks = "; ".join(sorted({_mark(t) for t in (*s.flags, *s.cautions)}))
            rest = [share, str(s.ceiling_rows), pearson,
                    one_line(", ".join(names.get(t, t) for t in s.tied_with)) or "none",
                    ("not ranked: " if s.flags else "") + marks if marks else "none"]
        else:
            rest = [share, rows, pearson, tied, flags, card]
        body.append(f"<tr><td>{html.escape(rank)}</td><td>{shown}</td>"
                    + "".join(f"<td>{html.escape(one_line(cell))}</td>" for cell in rest) + "</tr>")
    return (f'<table class="leaderboard"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>')


def board_sentence(board: Sequence[Standing], *, names: Mapping[str, str] | None = None,
                   short: bool = False) -> str:
    """What the board shows, in words computed from it: who ranks first, what ties with it, how many judges
    it is separated from, and which are not ranked. It is Markdown: every judge's name is escaped (:func:`_cell`),
    so a name is shown as written, never as HTML. ``names``: the name shown for a judge (a glossary's);
    ``short``: flags and cautions by their short form (:func:`_mark`), for a page whose table has them.

    >>> a = Standing("a", 1, 0.5, 0.4, 0.6, 9, 0.3, 9, ("b",), ())
    >>> b = Standing("b", 1, 0.45, 0.35, 0.55, 9, 0.3, 9, ("a",), ())
    >>> c = Standing("c", 3, 0.1, 0.0, 0.2, 9, 0.1, 9, (), ())
    >>> board_sentence([a, b, c])
    'a and b share the first rank (mean shares of the ceiling 0.500 [0.400, 0.600], 0.450 [0.350, 0.550]): their paired interval holds zero, so this sample does not separate them. The other judge (c) is below every judge of the first rank by a paired interval.'

    A judge tied with part of the first rank but below another judge is named with both:

    >>> a = Standing("a", 1, 0.5, 0.4, 0.6, 9, 0.3, 9, ("b", "d"), ())
    >>> d = Standing("d", 2, 0.4, 0.2, 0.6, 9, 0.2, 9, ("a",), (), above=("b",))
    >>> board_sentence([a, b, d, c]).split(" them. ")[1]
    '1 of the 2 other judges (c) is below every judge of the first rank by a paired interval. d is tied with a but below b by a paired interval, so it ranks 2.'

The judges above are counted when the board does not say who they are (or when they are more than
:data:`FEW_NAMED`):

    >>> board_sentence([a, b, replace(d, above=()), c]).split(" interval. ")[1]
    'd is tied with a but below 1 judge by a paired interval, so it ranks 2.'

Judges tied with the same leaders at the same rank share one sentence:

    >>> a = Standing("a", 1, 0.5, 0.4, 0.6, 9, 0.3, 9, ("b", "d", "g"), ())
    >>> g = Standing("g", 2, 0.4, 0.2, 0.6, 9, 0.2, 9, ("a",), (), above=("b",))
    >>> board_sentence([a, b, d, g, c]).split(" them. ")[1]
    '1 of the 3 other judges (c) is below every judge of the first rank by a paired interval. d and g are tied with a but below b by a paired interval, so they rank 2.'

Judges flagged alike are named together:

    >>> x = Standing("x", 0, 0.2, 0.1, 0.3, 3, 0.2, 3, (), (), flags=("scored only some of the board's sets",))
    >>> board_sentence([a, b, replace(x, judge="y"), x]).split(" them. ")[1]
    "Not ranked, flagged: y and x (scored only some of the board's sets)."

Two judges on different sets are never compared: both rank first, and the sentence says they are not compared.

    >>> e = Standing("e", 1, 0.3, 0.2, 0.4, 1, 0.3, 1, (), ())
    >>> board_sentence([e])
    'e is the only judge ranked, with a mean share of the ceiling of 0.300 [0.200, 0.400] over 1 row.'
    >>> f = Standing("f", 1, 0.999, 0.939, 1.029, 1, 0.9, 1, (), (), cautions=(AT_CEILING,))
    >>> print(board_sentence([f, e]))  # doctest: +ELLIPSIS
    f and e share the first rank (...): no judge is above any of them by a paired interval, but f and e share no row, so they are not compared with each other. Ranked, but marked: f (at the human ceiling: ...).

With the glossary's names and short marks, as a page shows them:

    >>> print(board_sentence([f, e], names={"f": "untrained f"}, short=True))  # doctest: +ELLIPSIS
    Untrained f and e share the first rank (... Ranked, but marked: untrained f (at the human ceiling).
    """
    label = lambda judge: _cell((names or {}).get(judge, judge))  # noqa: E731
    mark = lambda text: _cell(_mark(text) if short else text)  # noqa: E731
    board = [replace(s, judge=label(s.judge), tied_with=tuple(map(label, s.tied_with)),
                     above=tuple(map(label, s.above)),
                     flags=tuple(dict.fromkeys(map(mark, s.flags))),
                     cautions=tuple(dict.fromkeys(map(mark, s.cautions)))) for s in board]
    text = _board_text(board)
    # A glossary's names may start in lower case ("untrained encoder"): a sentence still starts with a capital.
    return re.sub(r"(^|\. )([a-z])", lambda m: m[1] + m[2].upper(), text) if names else text


FEW_NAMED = 3  # the board sentence names the judges above a tied group when at most this many, else counts them


def _board_text(board: Sequence[Standing]) -> str:
    """:func:`board_sentence` of a board whose names, flags and cautions are already as shown."""
    ranked = _ranked(board)
    if not ranked:
        return "No judge has a defined share of a ceiling, so nothing is ranked." + _not_ranked(board)
    first = [s for s in ranked if s.rank == 1]
    shown = ", ".join(f"{_number(s.mean_share)} [{_number(s.share_low)}, {_number(s.share_high)}]" for s in first)
    if len(first) == 1:
        lead = first[0]
        rows = f"{lead.ceiling_rows} row{'' if lead.ceiling_rows == 1 else 's'}"
        if len(ranked) == 1:
            text = f"{lead.judge} is the only judge ranked, with a mean share of the ceiling of {shown} over {rows}."
        else:
            text = f"{lead.judge} ranks first, with a mean share of the ceiling of {shown} over {rows}; "
            text += (f"it is tied with {join_names(lead.tied_with)} (their paired intervals hold zero)."
                     if lead.tied_with else "every other judge is below it by a paired interval.")
    else:
        names = ", ".join(s.judge for s in first[:-1]) + f" and {first[-1].judge}"
        apart = [f"{a.judge} and {b.judge}" for k, a in enumerate(first) for b in first[k + 1:]
                 if b.judge not in a.tied_with]  # no row in common: never compared
        if not apart:
            text = (f"{names} share the first rank (mean shares of the ceiling {shown}): "
                    + ("their paired interval holds zero" if len(first) == 2 else "no paired interval between them "
                       "excludes zero") + ", so this sample does not separate them.")
        else:
            text = (f"{names} share the first rank (mean shares of the ceiling {shown}): no judge is above any of "
                    f"them by a paired interval, but {'; '.join(apart)} share no row, so they are not compared "
                    "with each other.")
    below = [s for s in ranked if s.rank > 1 and not set(s.tied_with) & {f.judge for f in first}]
    others = len(ranked) - len(first)
    if len(first) > 1 or first[0].tied_with:
        every = ("The" if others == 1 else "All") if len(below) == others else f"{len(below)} of the"
        text += (f" {every} {'' if others == 1 else f'{others} '}other judge{'s' if others != 1 else ''} "
                 f"({join_names([s.judge for s in below])}) {'is' if len(below) == 1 else 'are'} below every "
                 "judge of the first rank by a paired interval." if below else "")
    leaders = {f.judge for f in first}
    # Judges tied with the same leaders at the same rank are one sentence: a board of many look-alike judges
    # then reads as a few groups, not one sentence per judge.
    # The judges above a group are named when they are few (and known: a board read back from a file may not
    # say), else counted.
    groups: dict[tuple[tuple[str, ...], int, tuple[str, ...]], list[str]] = {}
    for s in ranked:
        if s.rank > 1 and s not in below:
            above = s.above if len(s.above) == s.rank - 1 <= FEW_NAMED else ()
            groups.setdefault((tuple(t for t in s.tied_with if t in leaders), s.rank, above), []).append(s.judge)
    for (tied, rank, above), judges in groups.items():
        one = len(judges) == 1
        over = join_names(above) if above else f"{rank - 1} judge{'s' if rank > 2 else ''}"
        text += (f" {join_names(judges)} {'is' if one else 'are'} tied with {join_names(tied)} but below "
                 f"{over} by a paired interval, so {'it ranks' if one else 'they rank'} {rank}.")
    return text + _not_ranked(board)


def _not_ranked(board: Sequence[Standing]) -> str:
    """The board's sentence about ranked judges with a caution and the judges it does not rank (names already
    escaped)."""
    text = _named_alike("Ranked, but marked", ((s.cautions, s.judge) for s in _ranked(board) if s.cautions))
    unranked = [s.judge for s in board if s.mean_share != s.mean_share and not s.flags]
    if unranked:
        text += f" Not ranked (no row with a defined share of the ceiling): {join_names(unranked)}."
    return text + _named_alike("Not ranked, flagged", ((s.flags, s.judge) for s in board if s.flags))


def _named_alike(head: str, marked: Iterable[tuple[tuple[str, ...], str]]) -> str:
    """One sentence per set of marks (cautions or flags), naming together the judges that carry it.

    >>> _named_alike("Not ranked, flagged", [(("few sets",), "y"), (("few sets",), "x"), (("copy",), "z")])
    ' Not ranked, flagged: y and x (few sets). Not ranked, flagged: z (copy).'
    """
    groups: dict[tuple[str, ...], list[str]] = {}
    for marks, judge in marked:
        groups.setdefault(marks, []).append(judge)
    return "".join(f" {head}: {join_names(judges)} ({'; '.join(marks)})." for marks, judges in groups.items())


def board_card(card: Card, human_sets: Mapping[str, HumanSet], *, bootstrap: int, seed: int
               ) -> tuple[Card, tuple[str, ...]]:
    """The card as a leaderboard's page shows it, and the sets whose rows it cannot check. On every set of
    ``human_sets`` the card has item scores on, its rows are recomputed from those scores and the set's human
    scores, every field (n, the three correlations with ``bootstrap`` resampled intervals seeded by ``seed``, the
    ceiling, the share, the length panel); the card's own rows are not read. Its rows on other sets are dropped
    and their sets returned; its slot, self-consistency, cost and label-budget rows, which item scores cannot
    give, are dropped. Its spec, notes and reasons for sets not scored stay: text the page labels as the card's.

    >>> from evalkit.judgecard.sets import HumanSet
    >>> items = pd.DataFrame({"item_id": list("abcdef"), "group": [0, 0, 1, 1, 2, 2], "score": [1.0, 2, 4, 3, 5, 6],
    ...                       "response": ["x"] * 6, "context": [["c"]] * 6})
    >>> toy = HumanSet("toy", items, ("score",), None, "")
    >>> card = scored_card("j", toy, [1.0, 3, 2, 4, 6, 5])
    >>> forged = replace(card, rows=(replace(card.rows[0], pearson=0.99, share=1.5),
    ...                              replace(card.rows[0], set="elsewhere", pearson=0.99)))
    >>> shown, unchecked = board_card(forged, {"toy": toy}, bootstrap=0, seed=0)
    >>> [(r.set, round(r.pearson, 3), r.share) for r in shown.rows], unchecked
    ([('toy', 0.771, nan)], ('elsewhere',))
    """
    from evalkit.judgecard.card import _label_row
    from evalkit.judgecard.checks import same_context_pairs

    rows = []
    for entry in card.scores:
        human_set = human_sets.get(entry.set)
        if human_set is None:
            continue
        items = human_set.items
        pairs = same_context_pairs(list(items["context"])) if "context" in items.columns else []
        scores = card.scores_on(human_set)
        rows.extend(_label_row(human_set, label, scores, pairs, bootstrap=bootstrap, seed=seed)
                    for label in human_set.labels)
    shown = {row.set for row in rows}
    unchecked = tuple(dict.fromkeys(row.set for row in card.rows if row.set not in shown))
    return replace(card, rows=tuple(rows), bootstrap=bootstrap, seed=seed, slots=(), costs=(), consistency=(),
                   curves=()), unchecked


def write_board_card(card: Card, human_sets: Mapping[str, HumanSet], out: str | Path, *, bootstrap: int,
                     seed: int) -> Path:
    """The page a leaderboard links to for ``card``: ``card.html`` in the folder ``out`` (created), showing only
    what :func:`board_card` recomputes, the sets it could not check named, the card's text labelled as the
    card's (:func:`~evalkit.judgecard.render.card_html` with ``unchecked``)."""
    from evalkit.judgecard.render import card_html

    shown, unchecked = board_card(card, human_sets, bootstrap=bootstrap, seed=seed)
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    page = folder / "card.html"
    page.write_text(card_html(shown, unchecked=unchecked), encoding="utf-8")
    return page


def scored_card(name: str, human_set: HumanSet, scores: Sequence[float], *, bootstrap: int = 0) -> Card:
    """A card of ready scores on one set (for examples and tests): its rows and its item scores."""
    from evalkit.judgecard.card import _label_row

    values = np.asarray(scores, dtype=float)
    rows: tuple[LabelRow, ...] = tuple(_label_row(human_set, label, values, [], bootstrap=bootstrap, seed=0)
                                       for label in human_set.labels)
    kept = SetScores(human_set.name, tuple(human_set.items["item_id"].astype(str)), tuple(map(float, values)))
    return Card(name, {"kind": "scores", "name": name}, "all", bootstrap, 0, rows, (), (), (), (), (kept,))
