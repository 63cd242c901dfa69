"""Sentences that state a chapter's results, computed from the run's numbers.

A chapter prints these instead of typing its findings, so a sentence changes when the numbers do (a rerun
on other data or models cannot leave a stale claim behind). Each function takes the tables the chapter
already built and says only what they show, with n and intervals where the table has them. Chapter 5's
sentences live in :mod:`evalkit.book.findings_userproxy` and are imported here: every chapter takes its from this
module.
"""
from __future__ import annotations

from itertools import combinations
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from evalkit.upheld.release_format import DISPLAY_NAMES

__all__ = ["label_profile", "reliability_ranking", "versus_paper", "closest_protocol", "ceiling_sentence",
           "agreement_trend", "labelled"]


def _name(dataset: str) -> str:
    return DISPLAY_NAMES.get(dataset, dataset)


def label_profile(labels: pd.DataFrame, *, dataset: str, low_content: int = 2) -> str:
    """How a set's ratings split between content and reasonableness (one row per rating, columns ``content``
    and ``reasonable``; blanks left out and counted by n).

    >>> labels = pd.DataFrame({"content": [1, 1, 2, 5, None], "reasonable": [5, 5, 5, 1, 5]})
    >>> label_profile(labels, dataset="topical_chat")
    'Topical-Chat: 3 of 4 content ratings (75%) are 2 or lower — little of the reference said — while 4 of 5 reasonableness ratings (80%) are 5.'
    """
    content = pd.to_numeric(labels["content"], errors="coerce").dropna()
    reasonable = pd.to_numeric(labels["reasonable"], errors="coerce").dropna()
    low, sensible = int((content <= low_content).sum()), int((reasonable == 5).sum())
    return (f"{_name(dataset)}: {low} of {len(content)} content ratings ({100 * low / len(content):.0f}%) are "
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


def versus_paper(ours: pd.Series, paper: pd.Series, *, dataset: str, what: str = "reference metrics") -> str:
    """How our correlations compare with the paper's, metric by metric, on one dataset.

    >>> ours = pd.Series({"rouge1": 0.60, "rougeL": 0.55, "bertscore_f1": 0.30})
    >>> paper = pd.Series({"rouge1": 0.34, "rougeL": 0.32, "bertscore_f1": 0.40})
    >>> versus_paper(ours, paper, dataset="upheld")
    "On UPHELD our reference metrics correlate higher than the paper's for 2 of 3 metrics (difference +0.13 on average, from -0.10 to +0.26)."
    """
    both = pd.DataFrame({"ours": ours, "paper": paper}).dropna()
    if both.empty:
        return f"No {what} on {_name(dataset)} can be compared with the paper."
    difference = both["ours"] - both["paper"]
    higher = int((difference > 0).sum())
    direction = "higher" if higher * 2 >= len(both) else "lower"
    count = higher if direction == "higher" else len(both) - higher
    return (f"On {_name(dataset)} our {what} correlate {direction} than the paper's for {count} of {len(both)} "
            f"metrics (difference {difference.mean():+.2f} on average, from {difference.min():+.2f} to "
            f"{difference.max():+.2f}).")


def closest_protocol(values: pd.Series, paper: float, *, what: str = "embedding cosine", tie: float = 0.03) -> str:
    """Which evaluation protocol gives the value nearest the paper's; protocols whose distance from it differs
    by less than ``tie`` (about a correlation's sampling error at the chapter's sizes) are equally near.

    >>> values = pd.Series({"item means, all sources": 0.81, "single annotations, all sources": 0.62})
    >>> closest_protocol(values, 0.58)
    "The paper's 0.58 for embedding cosine is nearest to our single annotations, all sources protocol (0.62); the others give: item means, all sources 0.81."
    >>> closest_protocol(pd.Series({"a": 0.64, "b": 0.52, "c": 0.79}), 0.58)
    "The paper's 0.58 for embedding cosine is about equally near to our b (0.52) and a (0.64) protocols (0.06 and 0.06 away; distances that differ by less than 0.03 count as equal); the others give: c 0.79."
    """
    distance = (values - paper).abs()
    best = str(distance.idxmin())
    tied = [str(k) for k, d in distance.items() if k != best and d - distance[best] < tie]
    others = "; ".join(f"{k} {v:.2f}" for k, v in values.items() if k != best)
    if tied:
        near = [best, *tied]
        nearest = " and ".join(f"{k} ({values[k]:.2f})" for k in near)
        away = " and ".join(f"{distance[k]:.2f}" for k in near)
        return (f"The paper's {paper:.2f} for {what} is about equally near to our {nearest} protocols ({away} away; "
                f"distances that differ by less than {tie:.2f} count as equal); the others give: "
                f"{'; '.join(f'{k} {v:.2f}' for k, v in values.items() if k not in near)}.")
    return (f"The paper's {paper:.2f} for {what} is nearest to our {best} protocol ({values[best]:.2f}); "
            f"the others give: {others}.")


def ceiling_sentence(gap: pd.DataFrame, *, train: str = "upheld") -> str:
    """The chosen metric and ensemble as shares of each dataset's human ceiling (a table from
    :func:`evalkit.upheld.paper_tables.ceiling_gap`).

    >>> gap = pd.DataFrame({"metric": ["rougeL"] * 2, "metric r": [0.7, 0.3], "ensemble": ["svm"] * 2,
    ...                     "ensemble r": [0.75, 0.35], "ensemble low": [np.nan, 0.2], "ensemble high": [np.nan, 0.5],
    ...                     "human ceiling": [0.8, 0.7]}, index=["upheld", "llm_arena"])
    >>> print(ceiling_sentence(gap))
    Chosen on UPHELD's grouped folds: the metric rougeL and the svm ensemble. As shares of each dataset's human ceiling: UPHELD metric 88%, ensemble 94% (ceiling 0.80); LLM-Arena metric 43%, ensemble 50% [29%, 71%] (ceiling 0.70).
    """
    parts = []
    for dataset, row in gap.iterrows():
        ceiling = float(row["human ceiling"])
        interval = ""
        if dataset != train and np.isfinite(row.get("ensemble low", np.nan)):
            interval = f" [{100 * row['ensemble low'] / ceiling:.0f}%, {100 * row['ensemble high'] / ceiling:.0f}%]"
        single = ""
        if dataset != train and np.isfinite(row.get("metric low", np.nan)):
            single = f" [{100 * row['metric low'] / ceiling:.0f}%, {100 * row['metric high'] / ceiling:.0f}%]"
        parts.append(f"{_name(str(dataset))} metric {100 * row['metric r'] / ceiling:.0f}%{single}, ensemble "
                     f"{100 * row['ensemble r'] / ceiling:.0f}%{interval} (ceiling {ceiling:.2f})")
    first = gap.iloc[0]
    return (f"Chosen on {_name(train)}'s grouped folds: the metric {first['metric']} and the {first['ensemble']} "
            f"ensemble. As shares of each dataset's human ceiling: " + "; ".join(parts) + ".")


def agreement_trend(table: pd.DataFrame, columns: Sequence[str],
                    levels: Sequence[str] = ("all", "plurality", "majority", "perfect")) -> str:
    """Whether correlations rise as the items are restricted to higher annotator agreement (a table from
    :func:`evalkit.upheld.paper_tables.by_agreement_level`).

    >>> table = pd.DataFrame({"all": [0.5, 0.4], "plurality": [0.55, 0.38], "majority": [0.6, 0.45],
    ...                       "perfect": [0.7, 0.35], "items (all/plurality/majority/perfect)": ["90/80/60/20"] * 2},
    ...                      index=["a", "b"])
    >>> agreement_trend(table, ["a", "b"])
    'From all items (n = 90) to those with perfect agreement (n = 20), r rises for 1 of 2 scores; the change from the first level to the last ranges from -0.05 to +0.20 (no interval is computed for these changes, first to last or between levels).'
    """
    part = table.loc[list(columns), list(levels)].astype(float).dropna()
    change = part[levels[-1]] - part[levels[0]]
    sizes = str(table.loc[part.index[0], "items (all/plurality/majority/perfect)"]).split("/")
    return (f"From all items (n = {sizes[0]}) to those with perfect agreement (n = {sizes[-1]}), r rises for "
            f"{int((change > 0).sum())} of {len(part)} scores; the change from the first level to the last ranges "
            f"from {change.min():+.2f} to {change.max():+.2f} (no interval is computed for these changes, first to "
            "last or between levels).")


def labelled(values: Mapping[str, float], digits: int = 3) -> str:
    """``name value`` pairs for a sentence.

    >>> labelled({"upheld": 0.91234, "llm_arena": 0.5})
    'UPHELD 0.912, LLM-Arena 0.500'
    """
    return ", ".join(f"{_name(k)} {v:.{digits}f}" for k, v in values.items())


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


#: An interval of r wider than this cannot show a gain of a plausible size, so a sentence says so.
TOO_WIDE = 0.4


def feature_group_gains(table: pd.DataFrame, *, label: str = "content", base: str = "metrics",
                        train: str = "upheld", checks: Sequence[str] = ("llm_arena", "topical_chat")) -> list[str]:
    """Chapter 3: what each added group of features does to the linear ensemble, against the ``base`` row of
    :func:`evalkit.upheld.ensemble.feature_group_table`. A gain counts on ``train`` only when the difference of the
    grouped-CV means exceeds the larger fold sd, and on a check set only when the row's interval lies wholly
    above the base row's.

    >>> rows = pd.DataFrame({"upheld grouped cv": [0.85, 0.86], "upheld grouped cv sd": [0.03, 0.03],
    ...                      "judged upheld items": [150, 150], "arena transfer": [0.70, 0.69],
    ...                      "arena low": [0.54, 0.53], "arena high": [0.82, 0.81], "arena n": [50, 50]},
    ...                     index=pd.MultiIndex.from_tuples([("content", "metrics"), ("content", "metrics + judges")]))
    >>> feature_group_gains(rows, checks=["arena"])[0]
    "Adding judges to the metrics (content): upheld grouped CV 0.860 vs 0.850 (+0.010, fold sd 0.030; n = 150) — no gain beyond the folds' spread; arena 0.690 [0.530, 0.810] vs 0.700 [0.540, 0.820] (n = 50) — no gain the interval shows."
    """
    rows = table.xs(label, level=0)
    reference = rows.loc[base]
    lines = []
    for name, row in rows.drop(index=base).iterrows():
        difference = row[f"{train} grouped cv"] - reference[f"{train} grouped cv"]
        spread = max(row[f"{train} grouped cv sd"], reference[f"{train} grouped cv sd"])
        parts = [f"{train} grouped CV {row[f'{train} grouped cv']:.3f} vs {reference[f'{train} grouped cv']:.3f} "
                 f"({difference:+.3f}, fold sd {spread:.3f}; n = {int(row[f'judged {train} items'])}) — "
                 + ("a gain beyond the folds' spread" if difference > spread else "no gain beyond the folds' spread")]
        for check in checks:
            clear = row[f"{check} low"] > reference[f"{check} high"]
            wide = reference[f"{check} high"] - reference[f"{check} low"] > TOO_WIDE
            verdict = ("a gain the intervals show" if clear else
                       f"too few items to test a gain (the base row's interval spans more than {TOO_WIDE})" if wide
                       else "no gain the interval shows")
            parts.append(f"{check} {row[f'{check} transfer']:.3f} [{row[f'{check} low']:.3f}, {row[f'{check} high']:.3f}] "
                         f"vs {reference[f'{check} transfer']:.3f} [{reference[f'{check} low']:.3f}, "
                         f"{reference[f'{check} high']:.3f}] (n = {int(row[f'{check} n'])}) — " + verdict)
        added = name[len(base) + 3:] if name.startswith(f"{base} + ") else name
        lines.append(f"Adding {added} to the {base} ({label}): " + "; ".join(parts) + ".")
    return lines
