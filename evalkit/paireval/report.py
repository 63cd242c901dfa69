"""Chapter 4's findings, written from the run's numbers (so the prose changes when the numbers do)."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import pandas as pd

__all__ = ["TARGETS", "chapter4_summary", "target_verdict"]

# The held-out accuracy the kit's fine-tuned judge aims for, by kind of negative.
TARGETS = {"random": 0.85, "look-alike": 0.70}


def target_verdict(value: Any, target: float) -> str:
    """How a proportion with an interval stands against a target.

    >>> from evalkit.stats import proportion
    >>> target_verdict(proportion([1] * 95 + [0] * 5), 0.85)
    'meets the 0.85 target, the whole interval above it'
    >>> target_verdict(proportion([1] * 86 + [0] * 14), 0.85)
    'meets the 0.85 target, though the interval reaches below it'
    >>> target_verdict(proportion([1] * 60 + [0] * 40), 0.85)
    'misses the 0.85 target, the whole interval below it'
    """
    if value.value < target:
        return f"misses the {target:.2f} target" + (", the whole interval below it" if value.high < target else "")
    return f"meets the {target:.2f} target" + (", the whole interval above it" if value.low >= target
                                               else ", though the interval reaches below it")


def _names(names: Sequence[str]) -> str:
    return ", ".join(names) if names else "none"


def chapter4_summary(*, accuracy: Mapping[tuple[str, str], Any], ddpp: Mapping[tuple[str, str], Any],
                     table1: pd.DataFrame, gain: Mapping[str, Any], reference_sets: Sequence[str],
                     training: Mapping[str, Any]) -> list[str]:
    """The chapter's findings as sentences. ``accuracy``/``ddpp``: (judge, negative kind) -> proportion;
    ``table1``: :func:`~evalkit.paireval.table1.table1_view`; ``gain``: set -> paired difference of r
    (fine-tuned minus zero-shot encoder); ``training``: judge name -> training run."""
    run = training["PairEval"]
    lines = []
    if run.curve:
        lines.append(f"The PairEval encoder judge trained on {run.pairs} leak-free pairs in {run.seconds:.0f} s "
                     f"({run.pairs_per_second:.1f} pairs/s); its validation pair accuracy went "
                     f"{run.curve[0]['accuracy']:.3f} -> {run.curve[-1]['accuracy']:.3f}.")
    for kind, target in TARGETS.items():
        tuned, zero = accuracy.get(("PairEval", kind)), accuracy.get(("encoder zero-shot", kind))
        if tuned is None:
            continue
        line = (f"Held-out pairs with {kind} negatives: the fine-tuned judge is right on {tuned} — "
                f"{target_verdict(tuned, target)}")
        if zero is not None:
            line += f"; the untrained encoder: {zero}"
        lines.append(line + ".")
    lm = [(name, kind, value) for (name, kind), value in accuracy.items() if name.startswith("SmolLM2")]
    if lm:
        lines.append("The LM judges on the same kind of pairs: " + "; ".join(
            f"{name}, {kind}: {value}" for name, kind, value in lm) + ".")
    same = [(kind, ddpp[("PairEval", kind)], ddpp.get(("encoder zero-shot", kind)))
            for kind in ("look-alike", "random") if ("PairEval", kind) in ddpp]
    if same:
        lines.append("In the same DailyDialog++ conversation the real reply wins against " + "; ".join(
            f"a {kind} reply {tuned.value:.3f} [{tuned.low:.3f}, {tuned.high:.3f}]"
            + (f" (untrained {zero.value:.3f})" if zero is not None else "") for kind, tuned, zero in same)
            + f" of the time (n = {same[0][1].n}).")
    means = table1.loc[:, [f"{name} r" for name in reference_sets if f"{name} r" in table1.columns]].mean(axis=1)
    if {"PairEval", "BLEU-2", "BERTScore"} <= set(means.index) and not means.isna().any():
        above = means["PairEval"] > max(means["BLEU-2"], means["BERTScore"])
        lines.append(f"Mean Pearson r over the {len(reference_sets)} sets with references: PairEval "
                     f"{means['PairEval']:.3f}, BLEU-2 {means['BLEU-2']:.3f}, BERTScore {means['BERTScore']:.3f} "
                     f"— PairEval is {'above' if above else 'not above'} both reference-based metrics.")
    if "PairEval" in table1.index:
        overall = {m: float(table1.loc[m, "mean r"]) for m in ("PairEval", "DirectEval", "PairEval, encoder zero-shot")
                   if m in table1.index}
        lines.append("Mean Pearson r over all six sets: " + ", ".join(f"{m} {v:.3f}" for m, v in overall.items())
                     + " (the paper's Llama-2-7B PairEval: 0.585, DirectEval: 0.498).")
    higher = [name for name, g in gain.items() if g.difference > 0]
    clear_gain = [name for name, g in gain.items() if g.clear and g.difference > 0]
    clear_loss = [name for name, g in gain.items() if g.clear and g.difference < 0]
    unclear = [name for name, g in gain.items() if not g.clear]
    lines.append(f"Fine-tuning against the untrained encoder: r is higher on {len(higher)} of {len(gain)} sets; "
                 f"the paired interval shows a gain on {_names(clear_gain)}, a loss on {_names(clear_loss)}, and "
                 f"no difference the sample can tell on {_names(unclear)}.")
    return lines

