"""A leaderboard written out: a Markdown table (:func:`leaderboard_markdown`), an HTML table for the book's pages
(:func:`leaderboard_html`) and the sentence that reads it (:func:`board_sentence`), every judge's name and card
text escaped."""
from __future__ import annotations

import html
import re
from dataclasses import replace
from typing import Iterable, Mapping, Sequence
from urllib.parse import quote

from evalkit.book.prose import join_names
from evalkit.judgecard._names import one_line
from evalkit.judgecard.ceiling_checks import AT_CEILING  # noqa: F401 (board_sentence's example)
from evalkit.judgecard.standing import Standing, _ranked
from evalkit.models.redaction import redact


__all__ = ["leaderboard_markdown", "leaderboard_html", "board_sentence", "FEW_NAMED"]


def _cell(text: str) -> str:
    """Text for Markdown (a table cell, a sentence): on one line (:func:`~evalkit.judgecard._names.one_line`), HTML
    escaped, and the characters Markdown reads as markup escaped, so a judge's name is shown as written and never
    becomes HTML, a link, emphasis, a second table row, or a list or code fence at the start of a sentence; a key
    of a known shape in it is masked first (escaped, ``hf\\_...`` no longer reads as one).

    >>> print(_cell("<img src=x onerror=alert(1)> *a*|b"), _cell("judge hf_AbCdEfGhIjKlMnOpQrStUvWxYz12"))
    &lt;img src=x onerror=alert(1)&gt; \\*a\\*\\|b judge hf\\_\\*\\*\\*
    >>> print(_cell("a\\nb|c"), _cell("- x"), _cell("1. x"), _cell("~~~ x"))
    a b\\|c \\- x 1\\. x \\~~~ x
    """
    text = "".join(f"\\{c}" if c in "\\`*_[]#!|" else c
                   for c in html.escape(one_line(redact(text)).strip(), quote=False))
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
