"""A card as one self-contained HTML page: per set and label a bar of Pearson r with its interval's whisker, the
ceiling (red tick) and one person's agreement (grey tick) in inline SVG; the length and slot panels; the cost
table. Every text that comes from data or a spec is escaped, and the judge's name is shown on one line. The page
of a card as recorded says its figures are the card's own; the page a leaderboard writes shows only the rows it
recomputed from the card's item scores (:func:`card_fragment`, ``unchecked``).

>>> "<script>" in card_html(_empty("<script>alert(1)</script>"))
False
>>> "<h1>Judge card: a b &lt;script&gt;</h1>" in card_html(_empty("a\\nb <script>"))
True
"""
from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Sequence

from evalkit.judgecard._names import one_line, visible
from evalkit.judgecard.card import Card

__all__ = ["card_html", "card_fragment", "write_card"]

_WIDTH, _ROW, _LEFT = 360, 22, 230


def _fmt(value, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "&ndash;"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return html.escape(visible(str(value)))


def _text(text) -> str:
    """A card's text (a note, a set's name, a reason) as a page shows it: HTML escaped, its invisible format
    characters written as escapes (:func:`~evalkit.judgecard._names.visible`)."""
    return html.escape(visible(str(text)))


def _x(r: float) -> float:
    return _LEFT + (r + 1) / 2 * _WIDTH


def _bars(card: Card) -> str:
    rows = card.rows
    height = _ROW * len(rows) + 30
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{_LEFT + _WIDTH + 20}" height="{height}" '
             'role="img" aria-label="Pearson r per set and label">']
    for tick in (-1, -0.5, 0, 0.5, 1):
        parts.append(f'<line x1="{_x(tick):.1f}" y1="0" x2="{_x(tick):.1f}" y2="{height - 20}" stroke="#ddd"/>'
                     f'<text x="{_x(tick):.1f}" y="{height - 6}" font-size="10" text-anchor="middle">{tick:g}</text>')
    for index, row in enumerate(rows):
        y = index * _ROW + 4
        middle = y + _ROW / 2 - 2
        parts.append(f'<text x="{_LEFT - 6}" y="{middle + 4:.1f}" font-size="11" text-anchor="end">'
                     f'{_text(row.set)} / {_text(row.label)}</text>')
        if row.pearson == row.pearson:
            left, right = sorted((_x(0), _x(row.pearson)))
            parts.append(f'<rect x="{left:.1f}" y="{y + 3}" width="{right - left:.1f}" height="{_ROW - 10}" '
                         f'fill="#4a7ab5"><title>r = {row.pearson:.3f}</title></rect>')
        if row.pearson_low == row.pearson_low:
            parts.append(f'<line x1="{_x(row.pearson_low):.1f}" y1="{middle:.1f}" x2="{_x(row.pearson_high):.1f}" '
                         f'y2="{middle:.1f}" stroke="#222" stroke-width="1.5"/>')
        for value, colour, what in ((row.ceiling, "#c0392b", "ceiling"), (row.one_person, "#888", "one person")):
            if value == value:
                parts.append(f'<line x1="{_x(value):.1f}" y1="{y}" x2="{_x(value):.1f}" y2="{y + _ROW - 4}" '
                             f'stroke="{colour}" stroke-width="2.5"><title>{what} {value:.3f}</title></line>')
    parts.append("</svg>")
    return "".join(parts)


def _table(headers: list[str], rows: list[list]) -> str:
    head = "".join(f"<th>{_text(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{_fmt(v)}</td>" for v in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


_STYLE = ("body{font-family:sans-serif;max-width:70em;margin:2em auto}table{border-collapse:collapse;margin:1em 0}"
          "td,th{border:1px solid #ccc;padding:2px 6px;font-size:13px}code{white-space:pre-wrap}")


def card_html(card: Card, *, unchecked: Sequence[str] | None = None) -> str:
    """The card as an HTML page (no external resources); ``unchecked`` as in :func:`card_fragment`."""
    name = html.escape(one_line(card.judge))
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>Judge card: '
            f"{name}</title>\n<style>{_STYLE}</style></head><body>\n"
            f"<h1>Judge card: {name}</h1>\n{card_fragment(card, unchecked=unchecked)}</body></html>\n")


def _notes(card: Card) -> tuple[str, str]:
    """The card's free text (notes, and why sets were not scored), escaped, in lists."""
    notes = "".join(f"<li>{_text(note)}</li>" for note in card.notes)
    skipped = "".join(f"<li>{_text(name)}: {_text(why)}</li>" for name, why in card.skipped)
    return notes or "<li>none</li>", skipped or "<li>none</li>"


def card_fragment(card: Card, *, heading: int = 2, unchecked: Sequence[str] | None = None) -> str:
    """The card's body without page or title, to place in another page (the book's leaderboard); its
    section headings are ``<h{heading}>``.

    ``unchecked`` None: the card as it records itself, every figure its own (the page of ``judge card``). A
    tuple: a page a leaderboard writes of a card whose rows it has recomputed from the card's item scores and the
    sets' human scores (:func:`~evalkit.judgecard.leaderboard.board_card`): only those rows are shown, labelled
    recomputed; the sets in ``unchecked`` (rows the board could not check) are named, their figures not shown;
    the slot, self-consistency, cost and label-budget tables, which item scores cannot give, are left out; the
    spec, notes and reasons are shown escaped and labelled as the card's own text.

    >>> from evalkit.judgecard.card import Card
    >>> page = card_fragment(Card("j", {}, "test", 0, 0, (), (), (), (), ("<b>best judge</b>",)), unchecked=("x",))
    >>> "&lt;b&gt;best judge&lt;/b&gt;" in page, "written by the card's author" in page, "x</li>" in page
    (True, True, True)
    """
    h = f"h{heading}"
    summary = card.summary()
    agreement = _table(["set", "label", "n", "groups", "Pearson", "95% interval", "Spearman", "Kendall", "ceiling",
                        "share", "one person", "ceiling from"],
                       [[r.set, r.label, r.n, r.groups, r.pearson, f"[{_fmt(r.pearson_low)}, {_fmt(r.pearson_high)}]",
                         r.spearman, r.kendall, r.ceiling, r.share, r.one_person, r.ceiling_note] for r in card.rows])
    length = _table(["set", "label", "partial r (length | human)", "95% interval", "pairs where people prefer the "
                     "shorter", "judge prefers the longer", "flag"],
                    [[r.set, r.label, r.length_partial,
                      f"[{_fmt(r.length_partial_low)}, {_fmt(r.length_partial_high)}]", r.shorter_preferred_pairs,
                      r.prefers_longer, "length bias" if r.length_bias else ""]
                     for r in card.rows])
    notes, skipped = _notes(card)
    spec = _text(json.dumps(card.spec, ensure_ascii=False))
    share = _fmt(summary["mean_share"])
    if unchecked is not None:
        left_out = "".join(f"<li>{_text(name)}</li>" for name in unchecked)
        return f"""<p><b>Recomputed by the leaderboard.</b> Every figure on this page is computed by the board from the
card's item scores and the sets' human scores (half <b>{_text(card.half)}</b>, {card.bootstrap} bootstrap
resamples of item groups, seed {card.seed}), not read from the card. Mean Pearson r {_fmt(summary["mean_pearson"])};
mean share of the human ceiling {share} (over {summary["rows_with_ceiling"]} rows with one).</p>
<p>The judge as the card records it (not checked): <code>{spec}</code></p>
<{h}>Agreement with people (recomputed)</{h}>
<p>Bars: Pearson r; whisker: its 95% interval; red tick: the human noise ceiling; grey tick: one person against the
others.</p>
{_bars(card)}
{agreement}
<{h}>Length (recomputed)</{h}>{length}
<{h}>Rows not shown: sets the board does not hold</{h}>
<p>The card has rows on these sets; the board holds no human scores to check them against, so their figures are
not shown.</p><ul>{left_out or "<li>none</li>"}</ul>
<p>Not shown either: the card's slot, self-consistency, cost, abstention and label-budget tables, which its item
scores cannot give (its card.json holds them, unchecked).</p>
<{h}>Sets not scored (the card's own reasons, as written)</{h}><ul>{skipped}</ul>
<{h}>Notes (written by the card's author, not checked)</{h}><ul>{notes}</ul>
"""
    slots = (_table(["set", "pairs", "first-slot wins", "95% interval", "flip rate", "95% interval"],
                    [[s.set, s.pairs, s.first_slot, f"[{_fmt(s.first_slot_low)}, {_fmt(s.first_slot_high)}]", s.flip,
                      f"[{_fmt(s.flip_low)}, {_fmt(s.flip_high)}]"] for s in card.slots])
             if card.slots else "<p>This judge scores one reply at a time: it has no slots to be biased by.</p>")
    consistency = (_table(["set", "draws", "a draw is", "n", "item score SD across draws", "mean r between draws",
                           "label", "r with people, one draw: min", "max"],
                          [[c.set, c.draws, c.source, c.n, c.item_sd, c.between_draws, c.label, c.pearson_min,
                            c.pearson_max] for c in card.consistency])
                   if card.consistency else "<p>The judge gave one draw per set: no self-consistency to measure.</p>")
    curves = (_table(["set", "label", "dev labels k", "draws", "Pearson (test, mean over draws)",
                      "gain over k = 0 [95% interval]", "share of draws that kept the judge"],
                     [[c.get("set"), c.get("label"), c.get("budget"), c.get("draws"), c.get("pearson"),
                       f"{_fmt(c.get('gain'))} [{_fmt(c.get('gain_low'))}, {_fmt(c.get('gain_high'))}]",
                       c.get("fell_back")]
                      for c in card.curves])
              if card.curves else "")
    cost = _table(["set", "items", "seconds", "calls", "cache hits", "prompt tokens", "completion tokens", "money",
                   "abstained"],
                  [[c.set, c.items, c.seconds, c.calls, c.cache_hits, c.prompt_tokens, c.completion_tokens, c.money,
                    c.abstained] for c in card.costs])
    abstentions = "".join(f"<li>{_text(c.set)}, {_text(item)}: <code>{_text(text)}</code></li>"
                          for c in card.costs for item, text in c.examples)
    return f"""<p>Every figure on this page is as the card records it (its card.json). A leaderboard ranks on what it
recomputes from the card's item scores and the sets' human scores, not on these.</p>
<p>Half: <b>{_text(card.half)}</b>; {card.bootstrap} bootstrap resamples of item groups (contexts),
seed {card.seed}.
Mean Pearson r {_fmt(summary["mean_pearson"])}; mean share of the human ceiling {share}
(over {summary["rows_with_ceiling"]} rows with one).</p>
<p>Spec: <code>{spec}</code></p>
<{h}>Agreement with people</{h}>
<p>Bars: Pearson r; whisker: its 95% interval; red tick: the human noise ceiling; grey tick: one person against the
others.</p>
{_bars(card)}
{agreement}
{f"<{h}>Label budget</{h}><p>The judge adapted to each set with k of its dev labels (the mean over seeded draws of k items), on the test half; k = 0 is the judge itself. The gain's interval resamples whole context groups.</p>{curves}" if curves else ""}
<{h}>Length</{h}>{length}
<{h}>Slots</{h}>{slots}
<{h}>Self-consistency</{h}>{consistency}
<{h}>Cost</{h}>{cost}
<{h}>Abstentions</{h}><ul>{abstentions or "<li>none</li>"}</ul>
<{h}>Sets not scored</{h}><ul>{skipped}</ul>
<{h}>Notes (the card's own text, as written)</{h}><ul>{notes}</ul>
"""


def write_card(card: Card, out: str | Path, *, key: bytes | None = None) -> tuple[Path, Path]:
    """``card.json`` and ``card.html`` in the folder ``out`` (created); with ``key``, ``card.json`` carries
    its signature (:mod:`evalkit.judgecard.signing`)."""
    import json

    from evalkit.judgecard.signing import SIGNATURE_FIELD, sign

    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    record, page = folder / "card.json", folder / "card.html"
    content = card.record()
    if key is not None:
        content[SIGNATURE_FIELD] = sign(content, key)
    record.write_text(json.dumps(content, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    page.write_text(card_html(card), encoding="utf-8")
    return record, page


def _empty(name: str) -> Card:
    return Card(name, {"kind": "python", "name": name}, "test", 0, 0, (), (), (), ((name, name),))
