"""Chapter 4's sentences, written from the run's numbers (so the prose changes when the numbers do); each
section of the chapter ends with one of them. Their verdict words come from :mod:`evalkit.book.prose`."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from evalkit.book import prose

__all__ = ["TARGETS", "training_line", "held_out_lines", "ddpp_line", "table1_lines", "gain_line", "run_spread_line",
           "adopted_line", "attack_verdicts", "paired_gaps", "position_bias_line"]

# The held-out accuracy the kit's fine-tuned judge aims for, by kind of negative.
TARGETS = {"random": 0.85, "look-alike": 0.70}


def attack_verdicts(intervals: Mapping[str, Any], *, judge: str = "PairEval",
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
    'PairEval resists dull; falls for copy (0.000 [0.000, 0.088]); is not told from chance on swap.'
    >>> attack_verdicts({"dull": proportion([1] * 90 + [0] * 10), "echo": proportion([1] * 70 + [0] * 30)},
    ...                 controls={"paraphrase": proportion([1] * 60 + [0] * 40)})
    'PairEval resists dull; falls for none; is not told from chance on none; prefers the original above chance on echo but not apart from the control paraphrase.'
    """
    from evalkit.stats import proportion_difference

    def not_apart(v: Any) -> list[str]:  # the controls this attack's rate is not above by Newcombe's interval
        return [name for name, c in (controls or {}).items() if not proportion_difference(v, c)[1] > 0]

    resists = [name for name, v in intervals.items() if v.low > 0.5 and not not_apart(v)]
    near_controls = [name for name, v in intervals.items() if v.low > 0.5 and not_apart(v)]
    falls = [f"{name} ({v.interval})" for name, v in intervals.items() if v.high < 0.5]
    unclear = [name for name, v in intervals.items() if v.low <= 0.5 <= v.high]
    text = (f"{judge} resists {_names(resists)}; falls for {_names(falls)}; "
            f"is not told from chance on {_names(unclear)}")
    for name in near_controls:
        text += (f"; prefers the original above chance on {name} but not apart from the control"
                 f"{'s' if len(not_apart(intervals[name])) > 1 else ''} {_names(not_apart(intervals[name]))}")
    return text + "."


def _gaps_text(gaps: Mapping[str, Any]) -> str:
    """Mean paired differences of r (PairEval minus each method), each with its interval and what it supports
    (computed with the sets' context groups resampled whole, as chapter 4 does).

    >>> from evalkit.stats import CorrelationDifference as D
    >>> _gaps_text({"BLEU-2": D(0.078, 0.02, 0.14, 900), "BERTScore": D(-0.02, -0.07, 0.03, 900)})
    'PairEval minus BLEU-2 +0.078 [+0.020, +0.140] (above, the interval excludes 0), minus BERTScore -0.020 [-0.070, +0.030] (inside the sampling error) (paired bootstrap over whole context groups, n = 900 items, each set resampled on its own)'
    """
    return ("PairEval minus " + ", minus ".join(
        f"{metric} {g.difference:+.3f} [{g.low:+.3f}, {g.high:+.3f}]"
        + f" ({prose.excludes(g.low, g.high)})"
        for metric, g in gaps.items())
        + f" (paired bootstrap over whole context groups, n = {next(iter(gaps.values())).n} items, each set resampled "
          "on its own)")


def _names(names: Sequence[str]) -> str:
    return ", ".join(names) if names else "none"


def training_line(run: Any, validation_pairs: int | None) -> str:
    """How the PairEval encoder judge trained (pairs, speed, its learning curve's first and last accuracy);
    empty when the run has no curve."""
    if run.curve:
        return (f"The PairEval encoder judge trained on {run.pairs} leak-free pairs in {run.seconds:.0f} s "
                f"({run.pairs_per_second:.1f} pairs/s); its validation pair accuracy went "
                f"{run.curve[0]['accuracy']:.3f} -> {run.curve[-1]['accuracy']:.3f}"
                + (f" (n = {validation_pairs} validation pairs)" if validation_pairs else "") + ".")
    return ""


def held_out_lines(accuracy: Mapping[tuple[str, str], Any], lm_name: str = "SmolLM2") -> list[str]:
    """Held-out pair accuracy by kind of negative, against :data:`TARGETS`, then the LM judges (named
    ``<lm_name> zero-shot`` and ``<lm_name> + LoRA``) on such pairs."""
    lines = []
    for kind, target in TARGETS.items():
        tuned, zero = accuracy.get(("PairEval", kind)), accuracy.get(("encoder zero-shot", kind))
        if tuned is None:
            continue
        line = (f"Held-out pairs with {kind} negatives: the fine-tuned PairEval judge is right on {tuned} — "
                f"{prose.target_verdict(tuned, target)}")
        if zero is not None:
            line += f"; the untrained encoder: {zero}"
        lines.append(line + ".")
    lm = [(name, kind, value) for (name, kind), value in accuracy.items()
          if name in (f"{lm_name} zero-shot", f"{lm_name} + LoRA")]
    if lm:
        lines.append("The LM judges on the same kind of pairs: " + "; ".join(
            f"{name}, {kind}: {value}" for name, kind, value in lm) + ".")
    return lines


def ddpp_line(ddpp: Mapping[tuple[str, str], Any]) -> str:
    """How often the real reply wins within one DailyDialog++ conversation (fine-tuned and untrained judge);
    empty when PairEval was not scored."""
    same = [(kind, ddpp[("PairEval", kind)], ddpp.get(("encoder zero-shot", kind)))
            for kind in ("look-alike", "random") if ("PairEval", kind) in ddpp]
    if not same:
        return ""
    return ("In the same DailyDialog++ conversation the real reply wins against " + "; ".join(
        f"a {kind} reply {tuned.interval}"
        + (f" (untrained {zero.interval})" if zero is not None else "") for kind, tuned, zero in same)
        + f" of the time (n = {same[0][1].n}).")


def table1_lines(table1: pd.DataFrame, reference_sets: Sequence[str], *, reference_gaps: Mapping[str, Any] | None,
                  gain: Mapping[str, Any], paper_means: Mapping[str, float] | None,
                  overall_gaps: Mapping[str, Any] | None) -> list[str]:
    """Table 1's mean Pearson r: over the sets with references (against BLEU-2 and BERTScore), then over all."""
    lines = []
    means = table1.loc[:, [f"{name} r" for name in reference_sets if f"{name} r" in table1.columns]].mean(axis=1)
    if {"PairEval", "BLEU-2", "BERTScore"} <= set(means.index) and not means.isna().any():
        above = means["PairEval"] > max(means["BLEU-2"], means["BERTScore"])
        line = (f"Mean Pearson r over the test halves of the {len(reference_sets)} sets with references: PairEval "
                f"{means['PairEval']:.3f}, BLEU-2 {means['BLEU-2']:.3f}, BERTScore {means['BERTScore']:.3f} "
                f"— PairEval is {'higher' if above else 'not higher'} than both reference-based metrics by its point "
                "estimate")
        if reference_gaps:
            line += "; " + _gaps_text(reference_gaps)
        lines.append(line + ".")
    if "PairEval" in table1.index:
        overall = {m: float(table1.loc[m, "mean r"]) for m in ("PairEval", "DirectEval", "PairEval, encoder zero-shot",
                                                               "PairEval, mpnet zero-shot") if m in table1.index}
        paper = "".join(f", {m}: {v:.3f}" for m, v in (paper_means or {}).items())
        lines.append(f"Mean Pearson r over the test halves of all {len(gain) or 'the'} sets: "
                     + ", ".join(f"{m} {v:.3f}" for m, v in overall.items())
                     + (f" (the paper's Llama-2-7B{paper[1:]})" if paper else "")
                     + (f"; {_gaps_text(overall_gaps)}" if overall_gaps else "") + ".")
    return lines


def run_spread_line(run_spread: pd.DataFrame) -> str:
    """How much r moves from run to run with one comparison example per run (Table 2's spread)."""
    spread = run_spread.groupby(level=0)["sd r"].agg(["mean", "min", "max"])
    runs = int(run_spread["runs"].min())
    return (f"With one comparison example per run ({runs} runs per set), r moves from run to run by a "
            "standard deviation of " + "; ".join(
                f"{row['mean']:.3f} ({judge}, mean over the sets; {row['min']:.3f} to {row['max']:.3f})"
                for judge, row in spread.iterrows()) + ".")


def adopted_line(adopted: str, scores: Mapping[tuple[str, str], Any], human: Mapping[str, Any],
                 sets: Sequence[str], reference_sets: Sequence[str], *, untrained: str = "PairEval, encoder zero-shot",
                 groups: Mapping[str, Sequence[object]] | None = None, bootstrap: int = 1000, seed: int = 0,
                 target: float | None = 0.40) -> str:
    """The adopted judge on the test halves in one sentence: its mean r over ``sets`` (beside ``target``, the
    kit's own target for the six-set mean — not a paper's figure) against the untrained
    encoder and, over ``reference_sets``, against BERTScore — each a mean paired difference with its interval
    (whole ``groups`` resampled per set when given: contexts that share text).

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> human = {"a": rng.normal(size=80)}
    >>> scores = {("J", "a"): human["a"] + rng.normal(size=80), ("U", "a"): rng.normal(size=80),
    ...           ("BERTScore", "a"): rng.normal(size=80)}
    >>> adopted_line("J", scores, human, ["a"], ["a"], untrained="U", bootstrap=200).split(":")[0]
    'The adopted judge, J, on the test halves'
    """
    from evalkit.stats import mean_correlation, mean_correlation_difference

    def gap(other: str, names: Sequence[str]) -> str:
        g = mean_correlation_difference({n: (scores[adopted, n], scores[other, n], human[n],
                                             *([list(groups[n])] if groups else [])) for n in names},
                                        bootstrap=bootstrap, seed=seed)
        return (f"minus {other} {g.difference:+.3f} [{g.low:+.3f}, {g.high:+.3f}] ({prose.excludes(g.low, g.high)}; "
                f"n = {g.n})")

    mean, low, high, n = mean_correlation({name: (scores[adopted, name], human[name],
                                                  *([list(groups[name])] if groups else [])) for name in sets},
                                           bootstrap=bootstrap, seed=seed)
    if target is None:
        versus = ""
    else:
        versus = f"; the kit's own target is {target:.2f}: {prose.excludes(low, high, target)}"
    parts = [f"mean Pearson r {mean:.3f} [{low:.3f}, {high:.3f}] over {len(sets)} sets (n = {n}{versus})"]
    if adopted != untrained:
        parts.append(gap(untrained, sets))
    if reference_sets and all(("BERTScore", n) in scores for n in reference_sets):
        parts.append(f"on the {len(reference_sets)} sets with references " + gap("BERTScore", reference_sets))
    return f"The adopted judge, {adopted}, on the test halves: " + "; ".join(parts) + "."


def position_bias_line(bias: Mapping[tuple[str, str], Mapping[str, Any]], set_name: str) -> str:
    """One sentence on each judge's position bias on ``set_name`` (``bias`` maps (judge, set) to
    :func:`~evalkit.paireval.comparing.position_bias`'s result): which slot it favours, or that the sample does
    not say, with the interval and n.

    >>> line = position_bias_line({("J", "s"): {"value": 0.2, "low": 0.1, "high": 0.3, "n": 24},
    ...                            ("K", "s"): {"value": -0.01, "low": -0.05, "high": 0.03, "n": 24}}, "s")
    >>> "J +0.200 [+0.100, +0.300] (favours the target shown first" in line, "K -0.010" in line
    (True, True)
    """
    parts = []
    for (judge, name), b in bias.items():
        if name != set_name:
            continue
        verdict = prose.excludes(b["low"], b["high"], above="favours the target shown first",
                                 below="favours the target shown second")
        parts.append(f"{judge} {b['value']:+.3f} [{b['low']:+.3f}, {b['high']:+.3f}] ({verdict}; n = {b['n']})")
    return (f"Position bias of the judges that read both sides, on {set_name}'s LM subset (P(target wins) shown "
            f"first minus shown second, one comparison example): " + "; ".join(parts) + ".")


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


def gain_line(label: str, gain: Mapping[str, Any]) -> str:
    """One sentence on per-set paired differences of r: where higher, and where the interval tells.

    >>> from evalkit.stats import CorrelationDifference as D
    >>> gain_line("X against Y", {"a": D(0.2, 0.05, 0.3, 50), "b": D(-0.1, -0.3, 0.1, 50)})
    'X against Y: r is higher by its point estimate on 1 of 2 sets (a +0.200 [+0.050, +0.300], n = 50; b -0.100 [-0.300, +0.100], n = 50); the paired interval shows a gain on a, a loss on none, and no difference the sample can tell on b.'
    """
    failed = {name: g for name, g in gain.items() if isinstance(g, str)}
    gain = {name: g for name, g in gain.items() if not isinstance(g, str)}
    higher = [name for name, g in gain.items() if g.difference > 0]
    clear_gain = [name for name, g in gain.items() if g.clear and g.difference > 0]
    clear_loss = [name for name, g in gain.items() if g.clear and g.difference < 0]
    unclear = [name for name, g in gain.items() if not g.clear]
    each = "; ".join(f"{name} {g.difference:+.3f} [{g.low:+.3f}, {g.high:+.3f}], n = {g.n}" for name, g in gain.items())
    return (f"{label}: r is higher by its point estimate on {len(higher)} of {len(gain)} sets ({each}); the paired "
            f"interval shows a gain "
            f"on {_names(clear_gain)}, a loss on {_names(clear_loss)}, and no difference the sample can tell on "
            f"{_names(unclear)}" + "".join(f"; not computed on {name} ({why})" for name, why in failed.items()) + ".")

