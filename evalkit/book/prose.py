"""The book's words for numbers with intervals, in one place, and the chapters' shorter closing lines.

The verdict rules: :func:`verdict` (a difference above, below or not distinguishable from 0),
:func:`side`, :func:`excludes` and :func:`interval_sides` (an interval below, above or including a
value), :func:`target_verdict`
(a proportion against a target). Every chapter's sentence that calls something a difference uses one of them,
so a gain inside the sampling error is never called a gain. The helpers :func:`with_interval`,
:func:`join_names` and :func:`count_span` write numbers and names the same way on every page. Every number in a
sentence comes from the tables the chapter built in the same run (never typed in), so a rerun on other data,
models or sizes cannot leave a stale claim behind.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import pandas as pd

__all__ = ["verdict", "side", "excludes", "interval_sides", "target_verdict", "with_interval", "p_value", "table_cells", "join_names", "count_span",
           "multiplicity_line"]


MISSING = "–"
"""How a page writes a value that does not exist (an interval, a p-value, a table cell)."""


def verdict(difference: float, low: float, high: float) -> str:
    """How a difference with its interval compares, in words: ``above`` or ``below`` only when the interval
    excludes 0, else ``not distinguishable from`` (a gain inside the sampling error is not a gain).

    >>> verdict(0.05, 0.01, 0.09), verdict(-0.02, -0.05, -0.01), verdict(0.03, -0.01, 0.07)
    ('above', 'below', 'not distinguishable from')
    """
    if low > 0:
        return "above"
    if high < 0:
        return "below"
    return "not distinguishable from"


def side(low: float, high: float, value: float) -> str:
    """Where an interval lies against ``value``: ``below``, ``above`` or ``includes``.

    >>> side(0.1, 0.3, 0.5), side(0.6, 0.9, 0.5), side(0.4, 0.6, 0.5)
    ('below', 'above', 'includes')
    """
    return "below" if high < value else "above" if low > value else "includes"


def excludes(low: float, high: float, value: float = 0.0, *, above: str = "above", below: str = "below") -> str:
    """An interval's verdict against ``value`` as a phrase: on one side only when the interval excludes it.

    >>> excludes(0.01, 0.09), excludes(-0.3, -0.1), excludes(-0.1, 0.2)
    ('above, the interval excludes 0', 'below, the interval excludes 0', 'inside the sampling error')
    >>> excludes(0.0, 2.0)
    'inside the sampling error, the interval ends at 0'
    >>> excludes(0.1, 0.3, above="favours the first slot")
    'favours the first slot, the interval excludes 0'
    """
    where = side(low, high, value)
    if where == "includes" and value in (low, high):
        return f"inside the sampling error, the interval ends at {value:g}"
    if where == "includes":
        return "inside the sampling error"
    return f"{above if where == 'above' else below}, the interval excludes {value:g}"


def interval_sides(frame: pd.DataFrame, *, value: float, low: str = "low", high: str = "high") -> dict[str, list[str]]:
    """Which rows' intervals lie wholly below ``value``, wholly above it, or include it.

    >>> frame = pd.DataFrame({"low": [-2, 0.5, -1], "high": [-1, 2, 1]}, index=["a", "b", "c"])
    >>> interval_sides(frame, value=0)
    {'below': ['a'], 'above': ['b'], 'includes': ['c']}
    """
    sides: dict[str, list[str]] = {"below": [], "above": [], "includes": []}
    for name, row in frame.iterrows():
        sides[side(row[low], row[high], value)].append(str(name))
    return sides


def target_verdict(value: Any, target: float) -> str:
    """How a proportion with an interval stands against a target: met or missed only when the whole interval
    is on one side, else said to be at or below the target by its point estimate, unsettled.

    >>> from evalkit.stats import proportion
    >>> target_verdict(proportion([1] * 95 + [0] * 5), 0.85)
    'meets the 0.85 target, the whole interval above it'
    >>> target_verdict(proportion([1] * 86 + [0] * 14), 0.85)
    'above the 0.85 target by its point estimate; the interval reaches below it, so the sample does not settle it'
    >>> target_verdict(proportion([1] * 60 + [0] * 40), 0.85)
    'misses the 0.85 target, the whole interval below it'
    """
    if value.low >= target:
        return f"meets the {target:.2f} target, the whole interval above it"
    if value.high < target:
        return f"misses the {target:.2f} target, the whole interval below it"
    side = "above" if value.value >= target else "below"
    return (f"{side} the {target:.2f} target by its point estimate; the interval reaches "
            f"{'below' if side == 'above' else 'above'} it, so the sample does not settle it")


def with_interval(value: float, low: float, high: float, *, digits: int = 3, signed: bool = False) -> str:
    """A value and its interval as one table cell: ``0.288 [0.237, 0.338]`` (``signed``: ``+0.012 [...]``); a
    missing value is ``–`` and a value without an interval stands alone.

    >>> with_interval(0.2881, 0.2374, 0.3382), with_interval(0.012, -0.02, 0.05, signed=True)
    ('0.288 [0.237, 0.338]', '+0.012 [-0.020, +0.050]')
    >>> with_interval(float("nan"), 0.1, 0.2), with_interval(0.5, float("nan"), float("nan"))
    ('–', '0.500')
    """
    form = f"{{:+.{digits}f}}" if signed else f"{{:.{digits}f}}"
    if value is None or pd.isna(value):
        return MISSING
    if low is None or high is None or pd.isna(low) or pd.isna(high):
        return form.format(value)
    return f"{form.format(value)} [{_bound(low, digits, signed)}, {_bound(high, digits, signed)}]"


def _bound(bound: float, digits: int, signed: bool) -> str:
    """An interval's bound at ``digits`` decimals, or with as many more (up to three) as it takes not to print a
    nonzero bound as 0: whether an interval excludes 0 must be readable from the page, so ``[-0.002, -0.000]``
    is written ``[-0.002, -0.0004]``; a bound nearer 0 than that is written as its sign and a limit.

    >>> _bound(-0.0004, 3, False), _bound(0.0, 3, True), _bound(0.1234, 2, False)
    ('-0.0004', '+0.000', '0.12')
    >>> _bound(1e-9, 3, True), _bound(1e-9, 3, False), _bound(-1e-9, 3, False)
    ('+<0.000001', '<0.000001', '-<0.000001')
    """
    for places in range(digits, digits + 4):
        text = f"{bound:+.{places}f}" if signed else f"{bound:.{places}f}"
        if bound == 0 or float(text) != 0:
            return text
    sign = "-" if bound < 0 else "+" if signed else ""
    return f"{sign}<{10.0 ** -(digits + 3):.{digits + 3}f}"


def p_value(p: float) -> str:
    """A p-value as a page writes it: three decimals, or "< 0.001" below that (never "0.000"); a missing one "–".

    >>> p_value(0.0421), p_value(0.00002), p_value(float("nan"))
    ('0.042', '< 0.001', '–')
    """
    if p is None or pd.isna(p):
        return MISSING
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def table_cells(frame: pd.DataFrame, *, form: str = "{:.3f}", missing: str = MISSING) -> pd.DataFrame:
    """``frame`` as a page shows it: each real number written with ``form``, integers as they are and a
    missing value (a metric with no reference on a set, a figure a paper did not give) as ``missing``, the
    dash :func:`with_interval` writes, never ``NaN``.

    >>> frame = pd.DataFrame({"r": [0.2881, float("nan")], "n": [150, 24]}, index=["encoder", "BLEU-2"])
    >>> table_cells(frame)
                 r    n
    encoder  0.288  150
    BLEU-2       –   24
    >>> table_cells(pd.DataFrame({"p": [0.00012, None]}), form="{:.1e}")["p"].tolist()
    ['1.2e-04', '–']
    """
    def cell(value: Any) -> Any:
        if value is None or (not isinstance(value, str) and pd.isna(value)):
            return missing
        return form.format(value) if isinstance(value, float) else value

    return frame.map(cell)


def join_names(names: Sequence[str], *, empty: str = "none") -> str:
    """Names as a phrase: ``a``, ``a and b``, ``a, b and c`` (``empty`` when there are none).

    >>> join_names([]), join_names(["fed"]), join_names(["fed", "convai2-grade", "dailydialog-zhao"])
    ('none', 'fed', 'fed, convai2-grade and dailydialog-zhao')
    """
    names = [str(name) for name in names]
    if not names:
        return empty
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def count_span(counts: Mapping[str, int], *, unit: str = "items", per: str = "set") -> str:
    """How many ``unit`` each group holds, as one phrase with the total.

    >>> count_span({"fed": 24, "convai2-grade": 24})
    '24 items per set (48 in all)'
    >>> count_span({"fed": 187, "convai2-grade": 300, "dailydialog-zhao": 1050}, unit="test items")
    '187 to 1,050 test items per set (1,537 in all)'
    """
    values = [int(value) for value in counts.values()]
    low, high, total = min(values), max(values), sum(values)
    size = f"{low:,}" if low == high else f"{low:,} to {high:,}"
    return f"{size} {unit} per {per} ({total:,} in all)"


def multiplicity_line(consistency: pd.DataFrame, *, contexts: int, measure: str = "same content (cosine)",
                      paper: str = "paper (same content)") -> str:
    """Chapter 3's multiplicity experiment in one sentence: per set, the share of context pairs whose two
    sampled continuations say the same thing (``measure``), beside the paper's share (``paper``).

    >>> table = pd.DataFrame({"same content (cosine)": [0.5, 0.25], "paper (same content)": [0.93, 0.74]},
    ...                      index=["UPHELD first turn", "Topical-Chat (open-ended)"])
    >>> multiplicity_line(table, contexts=12)
    'Two sampled continuations said the same thing (by the measure "same content (cosine)") on 6 of 12 UPHELD first turn contexts (0.50) and 3 of 12 Topical-Chat (open-ended) contexts (0.25). The paper reports 0.93 and 0.74.'
    """
    shares = [f"{round(row[measure] * contexts)} of {contexts} {name} contexts ({row[measure]:.2f})"
              for name, row in consistency.iterrows()]
    papers = [f"{row[paper]:.2f}" for _, row in consistency.iterrows() if pd.notna(row.get(paper))]
    return (f'Two sampled continuations said the same thing (by the measure "{measure}") on {join_names(shares)}.'
            + (f" The paper reports {join_names(papers)}." if papers else ""))
