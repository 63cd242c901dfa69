"""Sentences that state chapters 1 to 3's results, computed from the run's numbers.

A chapter prints these instead of typing its findings, so a sentence changes when the numbers do. Each function
takes a table the chapter already built and says only what it shows, with n and intervals where the table has
them, and names each metric or judge by the page's name (:mod:`evalkit.book.names`). The other chapters write
their sentences as short f-strings over :mod:`evalkit.book.prose`'s verdict words.
"""
from __future__ import annotations

from itertools import combinations
from typing import Mapping, Sequence

import pandas as pd

from evalkit.book.names import display_name
from evalkit.stats.selection import Decision
from evalkit.upheld.release_format import set_label

__all__ = ["label_profile", "reliability_ranking", "calibration_agreement", "dev_choice"]


def label_profile(labels: pd.DataFrame, *, dataset: str, low_content: int = 2) -> str:
    """How a set's ratings split between content and reasonableness (one row per rating, columns ``content``
    and ``reasonable``; blanks left out and counted by n).

    >>> labels = pd.DataFrame({"content": [1, 1, 2, 5, None], "reasonable": [5, 5, 5, 1, 5]})
    >>> label_profile(labels, dataset="topical_chat")
    'upheld-topical_chat: 3 of 4 content ratings (75%) are 2 or lower — little of the reference said — while 4 of 5 reasonableness ratings (80%) are 5.'
    """
    content = pd.to_numeric(labels["content"], errors="coerce").dropna()
    reasonable = pd.to_numeric(labels["reasonable"], errors="coerce").dropna()
    low, sensible = int((content <= low_content).sum()), int((reasonable == 5).sum())
    return (f"{set_label(dataset)}: {low} of {len(content)} content ratings ({100 * low / len(content):.0f}%) are "
            f"{low_content} or lower — little of the reference said — while {sensible} of {len(reasonable)} "
            f"reasonableness ratings ({100 * sensible / len(reasonable):.0f}%) are 5.")


def reliability_ranking(summary: pd.DataFrame, *, column: str = "ceiling vs item means (r)",
                        chance_alpha: float = 0.2) -> str:
    """Which (subset, label) targets are most and least reliable, and which barely beat chance (ordinal alpha
    under ``chance_alpha``), from :func:`evalkit.upheld.agreement.agreement_summary`.

    >>> summary = pd.DataFrame({"ceiling vs item means (r)": [0.9, 0.6, 0.5], "alpha (ordinal)": [0.5, 0.3, 0.1]},
    ...                        index=pd.MultiIndex.from_tuples([("main", "content"), ("main", "style"),
    ...                                                         ("llm_arena", "style")]))
    >>> reliability_ranking(summary)
    'Most reliable target: main/content (ceiling 0.90, ordinal alpha 0.50); least: llm_arena/style (ceiling 0.50, ordinal alpha 0.10). Ordinal alpha is under 0.2 for 1 of 3 targets: llm_arena/style.'
    """
    order = summary[column].sort_values(ascending=False)
    best, worst = order.index[0], order.index[-1]
    weak = [f"{s}/{l}" for (s, l), value in summary["alpha (ordinal)"].items() if value < chance_alpha]

    def describe(key) -> str:
        return (f"{key[0]}/{key[1]} (ceiling {summary.loc[key, column]:.2f}, "
                f"ordinal alpha {summary.loc[key, 'alpha (ordinal)']:.2f})")

    return (f"Most reliable target: {describe(best)}; least: {describe(worst)}. Ordinal alpha is under "
            f"{chance_alpha} for {len(weak)} of {len(summary)} targets" + (f": {', '.join(weak)}." if weak else "."))


def calibration_agreement(tables: Mapping[str, pd.DataFrame], calibration: Sequence[str]) -> list[str]:
    """Per label, whether annotators agree more on the calibration sources than on the real models: each
    calibration source's kappa with its interval, the models' range, how many model intervals it clears, and
    how many pairs of real models have intervals that do not overlap (tables from :func:`evalkit.upheld.agreement.kappa_by_group_interval`, by label).

    >>> t = pd.DataFrame({"kappa": [0.3, 0.1, 0.2, 0.18], "low": [0.25, 0.05, 0.15, 0.12],
    ...                   "high": [0.35, 0.11, 0.24, 0.22], "items": [50] * 4}, index=["random", "para", "m1", "m2"])
    >>> calibration_agreement({"content": t}, ["random", "para"])[0]
    "content: random 0.30 [0.25, 0.35] (n = 50 items) lies above 2 and below 0 of the 2 real models' intervals; para 0.10 [0.05, 0.11] (n = 50 items) lies above 0 and below 2 of the 2 real models' intervals; the real models 0.18 to 0.20, 0 of their 1 pair with intervals apart."
    >>> t.loc["m2", ["kappa", "low", "high"]] = [0.1, 0.06, 0.12]
    >>> calibration_agreement({"content": t}, ["random", "para"])[0].split("; ")[-1]
    'the real models 0.10 to 0.20, 1 of their 1 pair with intervals apart (m1 > m2).'
    """
    lines = []
    for label, table in tables.items():
        models = table.drop(index=[c for c in calibration if c in table.index])
        parts = []
        for source in calibration:
            if source not in table.index:
                continue
            row = table.loc[source]
            above = int((row["low"] > models["high"]).sum())
            below = int((row["high"] < models["low"]).sum())
            verdict = f"lies above {above} and below {below} of the {len(models)} real models' intervals"
            parts.append(f"{source} {row['kappa']:.2f} [{row['low']:.2f}, {row['high']:.2f}] "
                         f"(n = {int(row['items'])} items) {verdict}")
        # Whether the real models are agreed on "about equally" (the paper's reading): pairs whose intervals
        # do not overlap, a conservative test of a difference.
        pairs = list(combinations(models.index, 2))
        apart = [f"{high} > {low}" for a, b in pairs for high, low in ((a, b), (b, a))
                 if models.loc[high, "low"] > models.loc[low, "high"]]
        lines.append(f"{label}: {'; '.join(parts)}; the real models {models['kappa'].min():.2f} to "
                     f"{models['kappa'].max():.2f}, {len(apart)} of their {len(pairs)} pair{'s' if len(pairs) != 1 else ''}"
                     f" with intervals apart" + (f" ({', '.join(apart)})." if apart else "."))
    return lines


def dev_choice(decision: Decision) -> str:
    """A choice made on dev halves (:func:`evalkit.stats.selection.choose_on_dev`) in the decision's own words,
    each candidate named as the page names it; the decision itself keeps the code labels its results file
    records.

    >>> import numpy as np
    >>> from evalkit.stats.halves import DevHalf
    >>> from evalkit.stats.selection import choose_on_dev
    >>> human = np.random.default_rng(0).normal(size=120)
    >>> dev = {"s": DevHalf("s", pd.DataFrame({"item_id": [f"s:{i}" for i in range(120)], "score": human}))}
    >>> scores = {("rouge1", "s"): human + 3 * np.random.default_rng(1).normal(size=120),
    ...           ("bertscore_f1", "s"): human + 0.1 * np.random.default_rng(2).normal(size=120)}
    >>> decision = choose_on_dev(dev, scores, ["rouge1", "bertscore_f1"], question="Which metric?", bootstrap=200)
    >>> decision.choice, dev_choice(decision).split("Adopted: ")[1]
    ('bertscore_f1', 'BERTScore F1.')
    >>> "rouge1" in dev_choice(decision), dev_choice(decision).count("ROUGE-1")
    (False, 2)
    """
    return decision.sentence({name: display_name(name) for name in decision.candidates})
