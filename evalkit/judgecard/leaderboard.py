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
listed with its share and a flag, and not ranked (:func:`~evalkit.judgecard.ceiling_checks.ceiling_flags`
gives the rule).

>>> board[2].flags[0][:60], round(board[2].mean_share, 3)
('above the human ceiling: scores may be the labels themselves', 1.016)

A card whose scores are the human scores (here doubled) holds the answer key: it is flagged, not ranked
(:mod:`evalkit.judgecard.verify`).

>>> board[3].flags[0][:68]
'its scores on toy/score are a linear function of the human scores (r'

**At the ceiling.** A ranked judge whose mean share's 95% interval reaches 1 is as close to people as another
rater, as far as the sample can tell, which is also what scores derived from the labels look like: it keeps its
rank and carries a caution (``cautions``,
:data:`~evalkit.judgecard.ceiling_checks.AT_CEILING`), shown in the table's Flag column, the JSON and the
sentence ("fair" above, at 0.935 [0.891, 0.969], is not marked). Both checks read every row as well as the mean:
a row above the ceiling flags its line, and a row whose 95% interval (its ceiling resampled too) reaches 1
cautions it
(:data:`~evalkit.judgecard.ceiling_checks.ROW_AT_CEILING`), each naming the row's set and the card file it came from, so a row derived
from the labels is marked even where the line's mean, averaged with other rows, is not.

**Provenance.** Each line names the card it comes from (``sources``: the card's file, or the files of one
judge's cards merged on different sets when the board is told to merge: ``judge leaderboard --merge``; then
``rows_from`` and the Rows cell say which file each set came from; with a key, only cards their maker signed
merge: :mod:`evalkit.judgecard.signing`) and the fingerprint of the card's stored item scores (:func:`scores_fingerprint`), shown in the tables' last column: two
judges that print the same name are two lines told apart there, never one.
"""
from __future__ import annotations

import hashlib
import json
import warnings
from dataclasses import asdict, replace
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from evalkit.stats.bootstrap import _pearson_rows, group_resamples, percentile_interval
from evalkit.judgecard.card import Card
from evalkit.judgecard.card_records import LabelRow, SetScores
from evalkit.judgecard.sets import HumanSet
from evalkit.judgecard.verify import card_flags
from evalkit.judgecard.standing import Standing, _Rows, row_ceilings
from evalkit.judgecard.ceiling_checks import _at_ceiling, _ceiling_checks

__all__ = ["standings", "standings_frame", "scored_card", "scores_fingerprint", "board_card", "write_board_card",
           "PARTIAL", "coverage_flag"]


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
    ceiling (:func:`~evalkit.judgecard.ceiling_checks.ceiling_flags`), is flagged and not ranked. Each line keeps ``sources[judge]`` and the
    fingerprint of the card's item scores (:func:`scores_fingerprint`). A ranked judge whose mean share's 95%
    interval reaches 1 keeps its rank and carries a caution (:data:`~evalkit.judgecard.ceiling_checks.AT_CEILING`, in ``cautions``). Two cards with
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
    defined = lambda judge: share.get(judge, float("nan")) == share.get(judge, float("nan"))
    better = {card.judge: set() for card in cards}
    tied = {card.judge: set() for card in cards}
    differences: dict[str, list[tuple[str, float, float, float]]] = {card.judge: [] for card in cards}
    for a in range(len(cards)):
        for b in range(a + 1, len(cards)):
            rows = sorted(set(judged[a].rows) & set(judged[b].rows))
            if not rows or flags[cards[a].judge] or flags[cards[b].judge] \
                    or not all(defined(cards[c].judge) for c in (a, b)):  # no share, no rank: tied with none
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
        rank = 0 if flags[name] or not defined(name) else 1 + len(better[name])
        board.append(Standing(name, rank, share.get(name, nan),
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
