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
>>> close = items["score"].to_numpy() + 0.3 * (items.index.to_numpy() % 3)
>>> cards = [scored_card(name, toy, values) for name, values in
...          (("close", close), ("noise", (items.index.to_numpy() * 7919) % 13), ("copy", items["score"] * 2))]
>>> board = standings(cards, {"toy": toy}, bootstrap=200)
>>> [(s.judge, s.rank) for s in board], board[0].mean_share > 0.9 > board[1].mean_share
([('close', 1), ('noise', 2), ('copy', 0)], True)

A card whose scores are the human scores (here doubled) holds the answer key: it is flagged, not ranked
(:mod:`evalkit.judgecard.verify`).

>>> board[2].flags[0][:68]
'its scores on toy/score are a linear function of the human scores (r'
"""
from __future__ import annotations

import html
import re
import warnings
from dataclasses import asdict, dataclass, replace
from typing import Mapping, Sequence
from urllib.parse import quote

import numpy as np
import pandas as pd

from evalkit.stats.bootstrap import _pearson_rows, group_resamples, percentile_interval
from evalkit.judgecard._names import one_line
from evalkit.judgecard.card import Card, LabelRow, SetScores
from evalkit.judgecard.sets import HumanSet, noise_ceiling
from evalkit.judgecard.verify import card_flags

__all__ = ["Standing", "standings", "standings_frame", "leaderboard_markdown", "leaderboard_html", "board_sentence",
           "row_ceilings", "scored_card"]


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


def standings(cards: Sequence[Card], human_sets: Mapping[str, HumanSet], *, bootstrap: int = 1000,
              seed: int = 0, labels: Sequence[str] | None = None,
              sources: Mapping[str, str] | None = None) -> list[Standing]:
    """The board: one :class:`Standing` per card, best first (see the module docstring). ``human_sets`` are the
    sets the cards scored, by name, restricted to the half the cards report; ``labels`` ranks on those
    labels' rows only. Each card is checked against ``human_sets`` first (:mod:`evalkit.judgecard.verify`): one
    whose rows do not match its item scores, or whose scores are malformed, is refused naming
    ``sources[judge]`` (its file) and the field; one that holds the answer key is flagged and not ranked."""
    names = [card.judge for card in cards]
    if len(set(names)) < len(names):
        raise ValueError(f"two cards share a judge name ({', '.join(sorted({n for n in names if names.count(n) > 1}))}):"
                         " merge them (merge_cards) or name the judges apart")
    flags = card_flags(cards, human_sets, sources)
    ceilings = row_ceilings(human_sets, labels)
    judged = [_Rows(card, human_sets, ceilings) for card in cards]
    resamples: dict = {}
    share, interval = {}, {}
    for card, rows in zip(cards, judged):
        if rows.rows and not flags[card.judge]:
            point, draws = _share_draws([rows], rows.rows, bootstrap=bootstrap, seed=seed, resamples=resamples)
            share[card.judge], interval[card.judge] = float(point[0]), percentile_interval(draws[0])
    better = {card.judge: set() for card in cards}
    tied = {card.judge: set() for card in cards}
    for a in range(len(cards)):
        for b in range(a + 1, len(cards)):
            rows = sorted(set(judged[a].rows) & set(judged[b].rows))
            if not rows or flags[cards[a].judge] or flags[cards[b].judge]:
                continue
            _, draws = _share_draws([judged[a], judged[b]], rows, bootstrap=bootstrap, seed=seed,
                                    resamples=resamples)
            lower, upper = percentile_interval(draws[0] - draws[1])
            first, second = cards[a].judge, cards[b].judge
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
                    and row.set in human_sets and (labels is None or row.label in labels)]
        name, nan = card.judge, float("nan")
        board.append(Standing(name, 0 if flags[name] else 1 + len(better[name]), share.get(name, nan),
                              *interval.get(name, (nan, nan)), len(rows.rows),
                              float(np.mean(pearsons)) if pearsons else nan, len(pearsons), tuple(sorted(tied[name])),
                              tuple(s for s, _ in card.skipped), flags[name]))
    # A judge without a defined share (no row, or r undefined on every row it has) is listed last, unranked;
    # a flagged one after it.
    return sorted(board, key=lambda s: (bool(s.flags), s.mean_share != s.mean_share, s.rank,
                                        -np.nan_to_num(s.mean_share, nan=-np.inf), s.judge))


def _ranked(board: Sequence[Standing]) -> list[Standing]:
    """The judges the board ranks: a defined share, no flag."""
    return [s for s in board if s.mean_share == s.mean_share and not s.flags]


def standings_frame(board: Sequence[Standing]) -> pd.DataFrame:
    """The board as a table, one row per judge."""
    frame = pd.DataFrame([asdict(s) for s in board])
    frame["tied_with"] = [", ".join(t) for t in frame["tied_with"]]
    frame["sets_skipped"] = [", ".join(t) for t in frame["sets_skipped"]]
    frame["flags"] = ["; ".join(t) for t in frame["flags"]]
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
            "Flag")


def _cells(s: Standing, ranks: Sequence[int]) -> tuple[str, str, str, str, str, str]:
    """A board line's cells other than the judge, as plain text: rank (``2=`` for a tie, ``–`` unranked), share,
    rows, mean Pearson, ties, flags."""
    ranked = s.mean_share == s.mean_share and not s.flags
    rank = "–" if not ranked else f"{s.rank}=" if ranks.count(s.rank) > 1 else str(s.rank)
    share = (f"{_number(s.mean_share)} [{_number(s.share_low)}, {_number(s.share_high)}]"
             if s.mean_share == s.mean_share else
             "no row with a ceiling" if not s.ceiling_rows else "r undefined on its rows")
    return (rank, share, str(s.ceiling_rows), f"{_number(s.mean_pearson)} ({s.pearson_rows})",
            one_line(", ".join(s.tied_with)) or "none", one_line("; ".join(s.flags)) or "none")


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
        rank, share, rows, pearson, tied, flags = _cells(s, ranks)
        lines.append(f"| {rank} | {shown} | {share} | {rows} | {pearson} | {_cell(tied)} | {_cell(flags)} |")
    return "\n".join(lines)


def leaderboard_html(board: Sequence[Standing], links: Mapping[str, str] | None = None) -> str:
    """The board as an HTML table, every text escaped; a judge's name links to ``links[judge]`` when given.
    What a notebook displays: HTML passes the book's Markdown renderer and its typography untouched.

    >>> row = Standing("<b>x</b>", 1, 0.5, 0.4, 0.6, 9, 0.3, 9, (), ())
    >>> table = leaderboard_html([row], {"<b>x</b>": "#card-0"})
    >>> '<a href="#card-0">&lt;b&gt;x&lt;/b&gt;</a>' in table, table.count("<th>"), "<td>0.500 [0.400, 0.600]</td>" in table
    (True, 7, True)
    """
    links = links or {}
    ranks = [s.rank for s in _ranked(board)]
    head = "".join(f"<th>{html.escape(h)}</th>" for h in _HEADERS)
    body = []
    for s in board:
        name = html.escape(one_line(s.judge))
        shown = f'<a href="{html.escape(links[s.judge], quote=True)}">{name}</a>' if s.judge in links else name
        rank, *rest = _cells(s, ranks)
        body.append(f"<tr><td>{html.escape(rank)}</td><td>{shown}</td>"
                    + "".join(f"<td>{html.escape(cell)}</td>" for cell in rest) + "</tr>")
    return (f'<table class="leaderboard"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>')


def board_sentence(board: Sequence[Standing]) -> str:
    """What the board shows, in words computed from it: who ranks first, what ties with it, how many judges
    it is separated from, and which are not ranked. It is Markdown: every judge's name is escaped (:func:`_cell`),
    so a name is shown as written, never as HTML.

    >>> a = Standing("a", 1, 0.5, 0.4, 0.6, 9, 0.3, 9, ("b",), ())
    >>> b = Standing("b", 1, 0.45, 0.35, 0.55, 9, 0.3, 9, ("a",), ())
    >>> c = Standing("c", 3, 0.1, 0.0, 0.2, 9, 0.1, 9, (), ())
    >>> board_sentence([a, b, c])
    'a and b share the first rank (mean shares of the ceiling 0.500 [0.400, 0.600], 0.450 [0.350, 0.550]): their paired interval holds zero, so this sample does not separate them. The other judge (c) is below the first rank by a paired interval.'

    A judge tied with part of the first rank but below another judge is named with both:

    >>> a = Standing("a", 1, 0.5, 0.4, 0.6, 9, 0.3, 9, ("b", "d"), ())
    >>> d = Standing("d", 2, 0.4, 0.2, 0.6, 9, 0.2, 9, ("a",), ())
    >>> board_sentence([a, b, d, c]).split(" them. ")[1]
    '1 of the 2 other judges (c) is below the first rank by a paired interval. d is tied with a but below 1 judge by a paired interval, so it ranks 2.'
    """
    board = [replace(s, judge=_cell(s.judge), tied_with=tuple(map(_cell, s.tied_with)),
                     flags=tuple(map(_cell, s.flags))) for s in board]
    ranked = _ranked(board)
    if not ranked:
        return "No judge has a defined share of a ceiling, so nothing is ranked." + _not_ranked(board)
    first = [s for s in ranked if s.rank == 1]
    shown = ", ".join(f"{_number(s.mean_share)} [{_number(s.share_low)}, {_number(s.share_high)}]" for s in first)
    if len(first) == 1:
        lead = first[0]
        text = (f"{lead.judge} ranks first, with a mean share of the ceiling of {shown} over {lead.ceiling_rows} "
                f"rows; ")
        text += (f"it is tied with {', '.join(lead.tied_with)} (their paired intervals hold zero)."
                 if lead.tied_with else "every other judge is below it by a paired interval.")
    else:
        names = ", ".join(s.judge for s in first[:-1]) + f" and {first[-1].judge}"
        text = (f"{names} share the first rank (mean shares of the ceiling {shown}): "
                + ("their paired interval holds zero" if len(first) == 2 else "no paired interval between them "
                   "excludes zero") + ", so this sample does not separate them.")
    below = [s for s in ranked if s.rank > 1 and not set(s.tied_with) & {f.judge for f in first}]
    others = len(ranked) - len(first)
    if len(first) > 1 or first[0].tied_with:
        every = ("The" if others == 1 else "All") if len(below) == others else f"{len(below)} of the"
        text += (f" {every} {'' if others == 1 else f'{others} '}other judge{'s' if others != 1 else ''} "
                 f"({', '.join(s.judge for s in below)}) {'is' if len(below) == 1 else 'are'} below the first "
                 "rank by a paired interval." if below else "")
    leaders = {f.judge for f in first}
    for s in ranked:
        if s.rank > 1 and s not in below:
            text += (f" {s.judge} is tied with {', '.join(t for t in s.tied_with if t in leaders)} but below "
                     f"{s.rank - 1} judge{'s' if s.rank > 2 else ''} by a paired interval, so it ranks {s.rank}.")
    return text + _not_ranked(board)


def _not_ranked(board: Sequence[Standing]) -> str:
    """The board's sentence about the judges it does not rank (names already escaped)."""
    text = ""
    unranked = [s.judge for s in board if s.mean_share != s.mean_share and not s.flags]
    if unranked:
        text += f" Not ranked (no row with a defined share of the ceiling): {', '.join(unranked)}."
    for s in board:
        if s.flags:
            text += f" Not ranked, flagged: {s.judge} ({'; '.join(s.flags)})."
    return text


def scored_card(name: str, human_set: HumanSet, scores: Sequence[float], *, bootstrap: int = 0) -> Card:
    """A card of ready scores on one set (for examples and tests): its rows and its item scores."""
    from evalkit.judgecard.card import _label_row

    values = np.asarray(scores, dtype=float)
    rows: tuple[LabelRow, ...] = tuple(_label_row(human_set, label, values, [], bootstrap=bootstrap, seed=0)
                                       for label in human_set.labels)
    kept = SetScores(human_set.name, tuple(human_set.items["item_id"].astype(str)), tuple(map(float, values)))
    return Card(name, {"kind": "scores", "name": name}, "all", bootstrap, 0, rows, (), (), (), (), (kept,))
