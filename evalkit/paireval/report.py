"""Chapter 4's held-out targets and the computations its sentences rest on: which attacks a judge resists
(:func:`attack_verdicts`), for which judges look-alikes are the harder test (:func:`harder_test`) and per-set
paired differences that may fail on a tiny subset (:func:`paired_gaps`).
The chapter writes its sentences itself, with the verdict words of :mod:`evalkit.book.prose`."""
from __future__ import annotations

from typing import Any, Mapping

from evalkit.book import prose

__all__ = ["TARGETS", "attack_verdicts", "harder_test", "paired_gaps"]

# The held-out accuracy the kit's fine-tuned judge aims for, by kind of negative.
TARGETS = {"random": 0.85, "look-alike": 0.70}


def attack_verdicts(intervals: Mapping[str, Any], *, judge: str = "The PairEval judge",
                    controls: Mapping[str, Any] | None = None) -> str:
    """Which attacks a judge resists, falls for (prefers the corrupted reply, the whole interval below 0.5)
    or cannot be told apart from chance on. ``intervals``: attack name -> proportion of cases where the
    original wins; ``controls``: the same for control folders, where the change is harmless. A judge that
    merely likes the original wording wins controls too, so "resists" needs the whole interval above 0.5
    *and* the attack's rate above every control's (the interval of the difference, Newcombe's, above 0);
    an attack above 0.5 that is not apart from a control is listed on its own.

    >>> from evalkit.stats import proportion
    >>> attack_verdicts({"dull": proportion([1] * 90 + [0] * 10), "copy": proportion([0] * 40),
    ...                  "swap": proportion([1] * 22 + [0] * 18)})
    'The PairEval judge resists dull; falls for copy (0.000 [0.000, 0.088]); is not told from chance on swap.'
    >>> attack_verdicts({"dull": proportion([1] * 90 + [0] * 10), "echo": proportion([1] * 70 + [0] * 30)},
    ...                 controls={"paraphrase": proportion([1] * 60 + [0] * 40)})
    'The PairEval judge resists dull; falls for none; is not told from chance on none; prefers the original above chance on echo but not apart from the control paraphrase.'
    >>> attack_verdicts({a: proportion([1] * 90 + [0] * 10) for a in ("dull", "copy", "swap")})
    'The PairEval judge resists dull, copy and swap; falls for none; is not told from chance on none.'
    """
    from evalkit.stats import proportion_difference

    def not_apart(v: Any) -> list[str]:  # the controls this attack's rate is not above by Newcombe's interval
        return [name for name, c in (controls or {}).items() if not proportion_difference(v, c)[1] > 0]

    resists = [name for name, v in intervals.items() if v.low > 0.5 and not not_apart(v)]
    near_controls = [name for name, v in intervals.items() if v.low > 0.5 and not_apart(v)]
    falls = [f"{name} ({v.interval})" for name, v in intervals.items() if v.high < 0.5]
    unclear = [name for name, v in intervals.items() if v.low <= 0.5 <= v.high]
    text = (f"{judge} resists {prose.join_names(resists)}; falls for {prose.join_names(falls)}; "
            f"is not told from chance on {prose.join_names(unclear)}")
    for name in near_controls:
        apart = not_apart(intervals[name])
        text += (f"; prefers the original above chance on {name} but not apart from the control"
                 f"{'s' if len(apart) > 1 else ''} {prose.join_names(apart)}")
    return text + "."


def harder_test(rates: Mapping[str, tuple[Any, Any]]) -> str:
    """Whether look-alikes are the harder test, judge by judge, by their intervals. ``rates``: a judge's name as the
    prose writes it (with "the" where it needs one) -> (its accuracy against look-alikes, against random replies),
    each with ``low`` and ``high``. A look-alike is harder for a judge only where its whole interval lies below the
    random-reply interval; where the two overlap, this sample does not show look-alikes to be harder for it.

    >>> from evalkit.stats import proportion
    >>> rate = lambda right: proportion([1] * right + [0] * (100 - right))
    >>> harder_test({"the untrained encoder": (rate(60), rate(90)), "the PairEval judge": (rate(88), rate(87)),
    ...              "DirectEval": (rate(85), rate(88))})
    "A look-alike, which shares the conversation's topic and words, was built to be the harder test; it is for the untrained encoder (its look-alike interval lies below its random-reply interval), while for the PairEval judge and DirectEval the two intervals overlap, so this sample does not show look-alikes to be harder for them."
    >>> harder_test({"the judge": (rate(95), rate(60))})
    "A look-alike, which shares the conversation's topic and words, was built to be the harder test; it is for none of the judges, while the judge does better against look-alikes (the whole look-alike interval lies above the random-reply interval)."
    """
    harder = [name for name, (alike, random) in rates.items() if alike.high < random.low]
    easier = [name for name, (alike, random) in rates.items() if alike.low > random.high]
    level = [name for name in rates if name not in harder and name not in easier]

    def verb(names: list[str], one: str, many: str) -> str:
        return one if len(names) == 1 else many

    clauses = []
    if level:
        clauses.append(f"for {prose.join_names(level)} the two intervals overlap, so this sample does not show "
                       f"look-alikes to be harder for {verb(level, 'it', 'them')}")
    if easier:
        clauses.append(f"{prose.join_names(easier)} {verb(easier, 'does', 'do')} better against look-alikes (the whole look-alike "
                       "interval lies above the random-reply interval)")
    head = ("A look-alike, which shares the conversation's topic and words, was built to be the harder test; it is for "
            + (f"{prose.join_names(harder)} ({verb(harder, 'its', 'each one' + chr(39) + 's')} look-alike interval "
               "lies below its random-reply interval)" if harder else "none of the judges"))
    return head + (", while " + " and ".join(clauses) if clauses else "") + "."


def paired_gaps(first: Mapping[str, Any], second: Mapping[str, Any], human: Mapping[str, Any], *,
                bootstrap: int = 1000, seed: int = 0, groups: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Per set, :func:`~evalkit.stats.correlation_difference` of ``first`` minus ``second`` (whole ``groups[set]``
    resampled when given); a set where it cannot be had (under 3 scored items, or every resample constant)
    maps to the reason, a string.

    >>> import numpy as np
    >>> gaps = paired_gaps({"a": [1, 2, 3, 4], "b": [1, np.nan]}, {"a": [2, 1, 4, 3], "b": [1, 2]},
    ...                    {"a": [1, 2, 3, 4], "b": [1, 2]}, bootstrap=50)
    >>> type(gaps["a"]).__name__, gaps["b"]
    ('CorrelationDifference', 'a correlation needs at least 3 scored items, got 1')
    """
    from evalkit.stats import correlation_difference

    out: dict[str, Any] = {}
    for name in first:
        try:
            out[name] = correlation_difference(first[name], second[name], human[name], bootstrap=bootstrap, seed=seed,
                                               groups=None if groups is None else list(groups[name]))
        except ValueError as error:
            out[name] = str(error)
    return out
