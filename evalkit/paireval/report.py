"""Chapter 4's findings, written from the run's numbers (so the prose changes when the numbers do)."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

__all__ = ["adopted_line", "TARGETS", "attack_verdicts", "chapter4_summary", "paired_gaps", "position_bias_line",
           "target_verdict"]

# The held-out accuracy the kit's fine-tuned judge aims for, by kind of negative.
TARGETS = {"random": 0.85, "look-alike": 0.70}


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
    'PairEval minus BLEU-2 +0.078 [+0.020, +0.140] (a difference the sample supports), minus BERTScore -0.020 [-0.070, +0.030] (inside the sampling error) (paired bootstrap over whole context groups, n = 900 items, each set resampled on its own)'
    """
    return ("PairEval minus " + ", minus ".join(
        f"{metric} {g.difference:+.3f} [{g.low:+.3f}, {g.high:+.3f}]"
        + (" (a difference the sample supports)" if g.clear else " (inside the sampling error)")
        for metric, g in gaps.items())
        + f" (paired bootstrap over whole context groups, n = {next(iter(gaps.values())).n} items, each set resampled "
          "on its own)")


def _names(names: Sequence[str]) -> str:
    return ", ".join(names) if names else "none"


def chapter4_summary(*, accuracy: Mapping[tuple[str, str], Any], ddpp: Mapping[tuple[str, str], Any],
                     table1: pd.DataFrame, gain: Mapping[str, Any], reference_sets: Sequence[str],
                     training: Mapping[str, Any], reference_gaps: Mapping[str, Any] | None = None,
                     paper_means: Mapping[str, float] | None = None,
                     lm_gap: Mapping[str, Any] | None = None,
                     overall_gaps: Mapping[str, Any] | None = None,
                     hard_negative_gain: Mapping[str, Any] | None = None,
                     run_spread: pd.DataFrame | None = None,
                     validation_pairs: int | None = None, lm_name: str = "SmolLM2") -> list[str]:
    """The chapter's findings as sentences. ``accuracy``/``ddpp``: (judge, negative kind) -> proportion;
    ``table1``: :func:`~evalkit.paireval.table1.table1_view`; ``gain``: set -> paired difference of r
    (fine-tuned minus zero-shot encoder); ``training``: judge name -> training run; ``reference_gaps``:
    metric -> :func:`~evalkit.stats.mean_correlation_difference` of PairEval minus that metric over the
    reference sets; ``paper_means``: the paper's mean r over all six sets, by method; ``lm_gap``: set -> paired
    difference of r, encoder PairEval minus the zero-shot LM judge, on the LM subset; ``overall_gaps``: method ->
    mean paired difference of r, PairEval minus that method, over all the sets; ``hard_negative_gain``: set ->
    paired difference of r, trained with hard negatives minus random ones only (Table 6); ``run_spread``:
    Table 2's frame (columns ``mean r``, ``sd r``, ``runs``; index (judge, set)); ``validation_pairs``: how many
    validation pairs the learning curve is measured on."""
    lines = _training_lines(training["PairEval"], validation_pairs) + _held_out_lines(accuracy, lm_name)
    lines += _ddpp_lines(ddpp)
    lines += _table1_lines(table1, reference_sets, reference_gaps=reference_gaps, gain=gain, paper_means=paper_means,
                           overall_gaps=overall_gaps)
    lines.append(_gain_line("Fine-tuning against the untrained encoder", gain))
    if run_spread is not None and len(run_spread):
        lines.append(_run_spread_line(run_spread))
    if hard_negative_gain:
        lines.append(_gain_line("Training with DailyDialog++ hard negatives against random negatives only",
                                hard_negative_gain))
    if lm_gap:
        n = min((g.n for g in lm_gap.values() if not isinstance(g, str)), default=0)
        lines.append(_gain_line(f"The fine-tuned encoder PairEval against the zero-shot {lm_name} judge (the LM subset, "
                                f"n = {n} items per set)", lm_gap))
    return lines


def _training_lines(run: Any, validation_pairs: int | None) -> list[str]:
    """How the PairEval encoder judge trained (pairs, speed, its learning curve's first and last accuracy);
    none when the run has no curve."""
    lines = []
    if run.curve:
        lines.append(f"The PairEval encoder judge trained on {run.pairs} leak-free pairs in {run.seconds:.0f} s "
                     f"({run.pairs_per_second:.1f} pairs/s); its validation pair accuracy went "
                     f"{run.curve[0]['accuracy']:.3f} -> {run.curve[-1]['accuracy']:.3f}"
                     + (f" (n = {validation_pairs} validation pairs)" if validation_pairs else "") + ".")
    return lines


def _held_out_lines(accuracy: Mapping[tuple[str, str], Any], lm_name: str = "SmolLM2") -> list[str]:
    """Held-out pair accuracy by kind of negative, against :data:`TARGETS`, then the LM judges (named
    ``<lm_name> zero-shot`` and ``<lm_name> + LoRA``) on such pairs."""
    lines = []
    for kind, target in TARGETS.items():
        tuned, zero = accuracy.get(("PairEval", kind)), accuracy.get(("encoder zero-shot", kind))
        if tuned is None:
            continue
        line = (f"Held-out pairs with {kind} negatives: the fine-tuned PairEval judge is right on {tuned} — "
                f"{target_verdict(tuned, target)}")
        if zero is not None:
            line += f"; the untrained encoder: {zero}"
        lines.append(line + ".")
    lm = [(name, kind, value) for (name, kind), value in accuracy.items()
          if name in (f"{lm_name} zero-shot", f"{lm_name} + LoRA")]
    if lm:
        lines.append("The LM judges on the same kind of pairs: " + "; ".join(
            f"{name}, {kind}: {value}" for name, kind, value in lm) + ".")
    return lines


def _ddpp_lines(ddpp: Mapping[tuple[str, str], Any]) -> list[str]:
    """How often the real reply wins within one DailyDialog++ conversation (fine-tuned and untrained judge)."""
    lines = []
    same = [(kind, ddpp[("PairEval", kind)], ddpp.get(("encoder zero-shot", kind)))
            for kind in ("look-alike", "random") if ("PairEval", kind) in ddpp]
    if same:
        lines.append("In the same DailyDialog++ conversation the real reply wins against " + "; ".join(
            f"a {kind} reply {tuned.interval}"
            + (f" (untrained {zero.interval})" if zero is not None else "") for kind, tuned, zero in same)
            + f" of the time (n = {same[0][1].n}).")
    return lines


def _table1_lines(table1: pd.DataFrame, reference_sets: Sequence[str], *, reference_gaps: Mapping[str, Any] | None,
                  gain: Mapping[str, Any], paper_means: Mapping[str, float] | None,
                  overall_gaps: Mapping[str, Any] | None) -> list[str]:
    """Table 1's mean Pearson r: over the sets with references (against BLEU-2 and BERTScore), then over all."""
    lines = []
    means = table1.loc[:, [f"{name} r" for name in reference_sets if f"{name} r" in table1.columns]].mean(axis=1)
    if {"PairEval", "BLEU-2", "BERTScore"} <= set(means.index) and not means.isna().any():
        above = means["PairEval"] > max(means["BLEU-2"], means["BERTScore"])
        line = (f"Mean Pearson r over the test halves of the {len(reference_sets)} sets with references: PairEval "
                f"{means['PairEval']:.3f}, BLEU-2 {means['BLEU-2']:.3f}, BERTScore {means['BERTScore']:.3f} "
                f"— PairEval is {'above' if above else 'not above'} both reference-based metrics")
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


def _run_spread_line(run_spread: pd.DataFrame) -> str:
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
        verdict = "above, the interval excludes 0" if g.low > 0 else (
            "below, the interval excludes 0" if g.high < 0 else "inside the sampling error")
        return f"minus {other} {g.difference:+.3f} [{g.low:+.3f}, {g.high:+.3f}] ({verdict}; n = {g.n})"

    mean, low, high, n = mean_correlation({name: (scores[adopted, name], human[name],
                                                  *([list(groups[name])] if groups else [])) for name in sets},
                                           bootstrap=bootstrap, seed=seed)
    if target is None:
        versus = ""
    else:
        where = ("above it, the interval excludes it" if low > target else
                 "below it, the interval excludes it" if high < target else "the interval reaches it")
        versus = f"; the kit's own target is {target:.2f}: {where}"
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
        verdict = ("favours the target shown first, the interval excludes 0" if b["low"] > 0 else
                   "favours the target shown second, the interval excludes 0" if b["high"] < 0 else
                   "inside the sampling error")
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


def _gain_line(label: str, gain: Mapping[str, Any]) -> str:
    """One sentence on per-set paired differences of r: where higher, and where the interval tells.

    >>> from evalkit.stats import CorrelationDifference as D
    >>> _gain_line("X against Y", {"a": D(0.2, 0.05, 0.3, 50), "b": D(-0.1, -0.3, 0.1, 50)})
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

