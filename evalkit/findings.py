"""Sentences that state a chapter's results, computed from the run's numbers.

A chapter prints these instead of typing its findings, so a sentence changes when the numbers do (a rerun
on other data or models cannot leave a stale claim behind). Each function takes the tables the chapter
already built and says only what they show, with n and intervals where the table has them.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

__all__ = ["label_profile", "reliability_ranking", "versus_paper", "closest_protocol", "ceiling_sentence",
           "agreement_trend", "labelled", "interval_sides", "userproxy_summary", "lexical_mode_shifts",
           "trained_realism"]

_NAMES = {"upheld": "UPHELD", "llm_arena": "LLM-Arena", "topical_chat": "Topical-Chat"}


def _name(dataset: str) -> str:
    return _NAMES.get(dataset, dataset)


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
    under ``chance_alpha``), from :func:`evalkit.agreement.agreement_summary`.

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


def closest_protocol(values: pd.Series, paper: float, *, what: str = "embedding cosine", tie: float = 0.01) -> str:
    """Which evaluation protocol gives the value nearest the paper's.

    >>> values = pd.Series({"item means, all sources": 0.81, "single annotations, all sources": 0.62})
    >>> closest_protocol(values, 0.58)
    "The paper's 0.58 for embedding cosine is nearest to our single annotations, all sources protocol (0.62); the others give: item means, all sources 0.81."
    >>> closest_protocol(pd.Series({"a": 0.64, "b": 0.52, "c": 0.79}), 0.58)
    "The paper's 0.58 for embedding cosine is about equally near (within 0.01) to our b (0.52) and a (0.64) protocols; the others give: c 0.79."
    """
    distance = (values - paper).abs()
    best = str(distance.idxmin())
    tied = [str(k) for k, d in distance.items() if k != best and d - distance[best] < tie]
    others = "; ".join(f"{k} {v:.2f}" for k, v in values.items() if k != best)
    if tied:
        nearest = " and ".join(f"{k} ({values[k]:.2f})" for k in [best, *tied])
        return (f"The paper's {paper:.2f} for {what} is about equally near (within {tie:.2f}) to our {nearest} "
                f"protocols; the others give: {'; '.join(f'{k} {v:.2f}' for k, v in values.items() if k not in [best, *tied])}.")
    return (f"The paper's {paper:.2f} for {what} is nearest to our {best} protocol ({values[best]:.2f}); "
            f"the others give: {others}.")


def ceiling_sentence(gap: pd.DataFrame, *, train: str = "upheld") -> str:
    """The chosen metric and ensemble as shares of each dataset's human ceiling (a table from
    :func:`evalkit.paper_tables.ceiling_gap`).

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
    :func:`evalkit.paper_tables.by_agreement_level`).

    >>> table = pd.DataFrame({"all": [0.5, 0.4], "plurality": [0.55, 0.38], "majority": [0.6, 0.45],
    ...                       "perfect": [0.7, 0.35], "items (all/plurality/majority/perfect)": ["90/80/60/20"] * 2},
    ...                      index=["a", "b"])
    >>> agreement_trend(table, ["a", "b"])
    'From all items (n = 90) to those with perfect agreement (n = 20), r rises for 1 of 2 scores (at every step for 1); the change ranges from -0.05 to +0.20.'
    """
    part = table.loc[list(columns), list(levels)].astype(float).dropna()
    change = part[levels[-1]] - part[levels[0]]
    steps = (part.diff(axis=1).iloc[:, 1:] > 0).all(axis=1)
    sizes = str(table["items (all/plurality/majority/perfect)"].iloc[0]).split("/")
    return (f"From all items (n = {sizes[0]}) to those with perfect agreement (n = {sizes[-1]}), r rises for "
            f"{int((change > 0).sum())} of {len(part)} scores (at every step for {int(steps.sum())}); the change "
            f"ranges from {change.min():+.2f} to {change.max():+.2f}.")


def labelled(values: Mapping[str, float], digits: int = 3) -> str:
    """``name value`` pairs for a sentence.

    >>> labelled({"upheld": 0.91234, "llm_arena": 0.5})
    'UPHELD 0.912, LLM-Arena 0.500'
    """
    return ", ".join(f"{_name(k)} {v:.{digits}f}" for k, v in values.items())


# --------------------------------------------------------------------------- chapter 5

def _side_of(low: float, high: float, value: float) -> str:
    return "below" if high < value else "above" if low > value else "includes"


def interval_sides(frame: pd.DataFrame, *, value: float, low: str = "low", high: str = "high") -> dict[str, list[str]]:
    """Which rows' intervals lie wholly below ``value``, wholly above it, or include it.

    >>> frame = pd.DataFrame({"low": [-2, 0.5, -1], "high": [-1, 2, 1]}, index=["a", "b", "c"])
    >>> interval_sides(frame, value=0)
    {'below': ['a'], 'above': ['b'], 'includes': ['c']}
    """
    sides: dict[str, list[str]] = {"below": [], "above": [], "includes": []}
    for name, row in frame.iterrows():
        sides[_side_of(row[low], row[high], value)].append(str(name))
    return sides


def _span(values: pd.Series) -> str:
    low, high = int(values.min()), int(values.max())
    return str(low) if low == high else f"{low}-{high}"


def userproxy_summary(lexical: pd.DataFrame, realism: pd.DataFrame, agreement: pd.DataFrame, *,
                      sensitivity: pd.DataFrame | None = None, stability: pd.DataFrame | None = None,
                      ablation: pd.DataFrame | None = None, assistant: pd.DataFrame | None = None,
                      seeds: int = 1, baselines: Sequence[str] = (),
                      episodes_per_seed: int | None = None) -> list[str]:
    """Chapter 5's findings, one line each, every one computed from the tables (intervals decide what is
    called a difference). ``lexical``/``realism`` are indexed by (dataset, metric) with ``z``/``low``/``high``
    and ``mean``/``t_low``/``t_high``/``n``; ``agreement`` is :func:`evalkit.userproxy.realism.human_label_agreement`;
    ``assistant`` has ``guided``/``unguided`` means with ``low``/``high`` (and, when known, ``n``) columns per
    side; ``baselines`` names rows of ``agreement`` (by judge) that are not judges, left out of the judges' range;
    ``episodes_per_seed``: the fewest scored episodes of any proxy, seed and metric in the goal-level job."""
    lines = [_diversity_line(lexical), _realism_line(realism)]
    if sensitivity is not None and not sensitivity.empty:
        lines.append(_judges_line(sensitivity, realism))
    if stability is not None and not stability.empty and ablation is not None:
        lines.append(_goal_levels_line(stability, ablation, seeds=seeds, episodes_per_seed=episodes_per_seed))
    if assistant is not None and "gteval" in assistant.index:
        lines.append(_assistant_line(assistant.loc["gteval"]))
    lines.append(_agreement_line(agreement, baselines))
    return lines


def _diversity_line(lexical: pd.DataFrame) -> str:
    """Where the proxy's MATTR z-score intervals lie with respect to 0 (the real users), over the datasets."""
    mattr = lexical.xs("mattr", level="metric")
    sides = interval_sides(mattr, value=0.0)
    return (f"**Diversity.** The proxy's MATTR z-score interval lies below 0 (less varied than the real users) "
            f"on {len(sides['below'])} of {len(mattr)} datasets, above 0 on {len(sides['above'])}, and includes 0 "
            f"on {len(sides['includes'])} (n = {_span(mattr['n'])} episodes per set).")


def _realism_line(realism: pd.DataFrame) -> str:
    """The default judge's GTEval range and PI win rates, with the real-vs-real control where it was run."""
    pi = realism.xs("pi", level="metric")
    gt = realism.xs("gteval", level="metric")
    pi_sides = interval_sides(pi, value=0.5, low="t_low", high="t_high")
    line = (f"**Realism (default judge).** GTEval means run from {gt['mean'].min():.2f} to {gt['mean'].max():.2f}; "
            f"in PI the interval of the proxy's win rate excludes 0.5 on {len(pi['mean']) - len(pi_sides['includes'])} "
            f"of {len(pi)} datasets")
    if "HH" in pi.columns and pi["HH"].notna().any():
        control = pi.dropna(subset=["HH"])
        apart = int(((control["HH"] < control["t_low"]) | (control["HH"] > control["t_high"])).sum())
        line += (f"; the same judge gives real-vs-real control pairs {control['HH'].min():.2f} to "
                 f"{control['HH'].max():.2f} (0.5: a judge that cannot tell two people apart, or that always "
                 f"names one slot), and the proxy's interval "
                 f"excludes its control on {apart} of {len(control)}")
    return line + "."


def _judges_line(sensitivity: pd.DataFrame, realism: pd.DataFrame) -> str:
    """How far the two judges differ on the same rollouts, against the default judge's own interval."""
    halves = (realism["t_high"] - realism["t_low"]) / 2
    own = [halves.get((dataset, metric), np.nan) for _, dataset, metric in sensitivity.index]
    spreads = sensitivity["spread"].to_numpy(dtype=float)
    known = np.isfinite(own)
    inside = int((spreads[known] < np.asarray(own)[known]).sum())
    return (f"**Judges.** The two judges differ by up to {sensitivity['spread'].max():.2f} on the same rollouts "
            f"(median {sensitivity['spread'].median():.2f}); {inside} of {int(known.sum())} of these spreads are "
            "smaller than the half-width of the default judge's own interval on the same set and metric "
            "(differences that size are within one judge's sampling error).")


def _goal_levels_line(stability: pd.DataFrame, ablation: pd.DataFrame, *, seeds: int,
                      episodes_per_seed: int | None) -> str:
    """The goal levels' leader over seeds (with its per-seed interval when known) and Kendall's W of the
    proxies' order."""
    w = ", ".join(f"{row['metric']} {row['kendalls_w']:.2f}" for _, row in stability.iterrows())
    gt_row = stability[stability["metric"] == "gteval"]
    spread = ""
    if not gt_row.empty:
        row = gt_row.iloc[0]
        proxies = [c[:-len(" mean")] for c in row.index if c.endswith(" mean")]
        spread = " (GTEval mean ± sd over seeds: " + "; ".join(
            f"{p} {row[f'{p} mean']:.2f} ± {row[f'{p} sd over seeds']:.2f}" for p in proxies) + ")"
    if "kendalls_w_p" in stability.columns:
        w = ", ".join(f"{row['metric']} {row['kendalls_w']:.2f} (p = {row['kendalls_w_p']:.2f})"
                      for _, row in stability.iterrows())
    lead = f"Highest mean GTEval: `{ablation['gteval'].idxmax()}`"
    if not gt_row.empty and "leader difference" in gt_row.columns:
        row = gt_row.iloc[0]
        told = row["leader low"] > 0
        lead = (f"Highest mean GTEval: `{row['leader leader']}`, ahead of `{row['leader runner_up']}` by "
                f"{row['leader difference']:+.2f} [{row['leader low']:+.2f}, {row['leader high']:+.2f}] per seed "
                f"(t-interval over {int(row['leader seeds'])} seeds) — "
                + ("a lead the seeds support" if told else "not a lead these seeds can tell from chance"))
    size = f", at least {episodes_per_seed} scored episodes per proxy and seed" if episodes_per_seed else ""
    return (f"**Goal levels over {seeds} seeds{size}.** {lead}{spread}; Kendall's W of the proxies' order across "
            f"seeds: {w} (1 = the same order every seed; p: how often orders drawn at random agree as well, "
            "exact).")


def _assistant_line(row: pd.Series) -> str:
    """GTEval of the guided and the unguided assistant (``row``: the ``gteval`` row of the assistant table)."""
    difference = row["unguided"] - row["guided"]
    half = float(np.hypot(row["guided high"] - row["guided"], row["unguided high"] - row["unguided"]))
    verdict = "a difference" if abs(difference) > half else "no difference the sample can tell"
    size = lambda side: f", n = {int(row[f'{side} n'])}" if f"{side} n" in row.index else ""  # noqa: E731
    return (f"**Assistant.** GTEval guided {row['guided']:.2f} [{row['guided low']:.2f}, "
            f"{row['guided high']:.2f}{size('guided')}] vs unguided {row['unguided']:.2f} "
            f"[{row['unguided low']:.2f}, {row['unguided high']:.2f}{size('unguided')}]: unguided minus guided {difference:+.2f} "
            f"[{difference - half:+.2f}, {difference + half:+.2f}] — {verdict} (the two runs treated as "
            "independent samples; scores that move together on shared conversations would give a narrower "
            "paired interval).")


def _agreement_line(agreement: pd.DataFrame, baselines: Sequence[str]) -> str:
    """Spearman of our judges, the baselines and the published judge with the human labels."""
    ours = agreement.loc[[k for k in agreement.index
                          if "published" not in k and k.split(", ", 1)[-1] not in set(baselines)]]
    theirs = agreement.loc[[k for k in agreement.index if "published" in k]]
    best = ours["spearman"].astype(float).idxmax()
    shown = lambda key: (f"{key} {agreement.loc[key, 'spearman']:.2f} [{agreement.loc[key, 'spearman_low']:.2f}, "  # noqa: E731
                         f"{agreement.loc[key, 'spearman_high']:.2f}]")
    base = [k for k in agreement.index if k.split(", ", 1)[-1] in set(baselines)]
    return (f"**Agreement with people.** Spearman with MirrorBench's human labels (n = {int(ours['n'].min())}): "
            f"our judges {ours['spearman'].min():.2f} to {ours['spearman'].max():.2f} (best: {shown(best)}); "
            + (f"baselines: {'; '.join(shown(k) for k in base)}; " if base else "")
            + f"the published judge on the same items: {'; '.join(shown(k) for k in theirs.index)}.")


def lexical_mode_shifts(table: pd.DataFrame, *, base: str = "kit", other: str = "mirrorbench") -> list[str]:
    """Per lexical metric, how far measuring ``other``'s way moves the human mean from ``base``'s, and
    whether the proxy's z interval changes its side of 0 (a table from ``lexical_mode_table``, indexed by
    dataset, metric and mode).

    >>> rows = [("a", "mattr", "kit", 0.70, -1.0, -0.5), ("a", "mattr", "mirrorbench", 0.74, -0.4, 0.3),
    ...         ("b", "mattr", "kit", 0.80, 0.1, 0.9), ("b", "mattr", "mirrorbench", 0.82, 0.2, 1.0)]
    >>> table = pd.DataFrame(rows, columns=["dataset", "metric", "mode", "human value", "low", "high"])
    >>> lexical_mode_shifts(table.set_index(["dataset", "metric", "mode"]))[0]
    "mattr: measured the mirrorbench way, the human mean moves by +0.030 on average over 2 sets (+0.020 to +0.040); the proxy's z interval changes its side of 0 on a (below -> includes)."
    """
    lines = []
    for metric in table.index.get_level_values("metric").unique():
        part = table.xs(metric, level="metric")
        human = part["human value"].unstack("mode")
        shift = (human[other] - human[base]).dropna()
        changed = []
        for dataset in part.index.get_level_values("dataset").unique():
            sides = [_side_of(part.at[(dataset, m), "low"], part.at[(dataset, m), "high"], 0.0) for m in (base, other)]
            if np.isfinite([part.at[(dataset, m), c] for m in (base, other) for c in ("low", "high")]).all() \
                    and sides[0] != sides[1]:
                changed.append(f"{_name(dataset)} ({sides[0]} -> {sides[1]})")
        if shift.empty:
            lines.append(f"{metric}: no set has a human mean in both modes.")
            continue
        moved = (f"{metric}: measured the {other} way, the human mean moves by {shift.mean():+.3f} on average over "
                 f"{len(shift)} sets ({shift.min():+.3f} to {shift.max():+.3f})")
        verdict = (f"the proxy's z interval changes its side of 0 on {', '.join(changed)}" if changed else
                   "the proxy's z interval keeps its side of 0 on every set where both modes give one")
        lines.append(f"{moved}; {verdict}.")
    return lines


def trained_realism(agreement: pd.DataFrame, heldout: Any, differences: pd.DataFrame, *, trained: str,
                    target: float = 0.4, where: str = "") -> list[str]:
    """Chapter 5's trained realism judge in sentences: held-out accuracy (a :class:`~evalkit.stats.Proportion`),
    its Spearman with the human labels per metric against ``target`` (rows "<metric>, <judge>" of
    :func:`evalkit.userproxy.realism.human_label_agreement`), and its paired difference from each other judge
    (:func:`evalkit.userproxy.realism.human_label_differences`): a difference counts only when its interval
    excludes 0. ``where`` names the items (e.g. " on the test half").

    >>> from evalkit.stats import proportion
    >>> table = pd.DataFrame({"spearman": [0.45], "spearman_low": [0.28], "spearman_high": [0.60], "n": [100]},
    ...                      index=["GTEval, enc"])
    >>> diffs = pd.DataFrame({"metric": ["GTEval", "GTEval"], "other": ["length", "lm"], "difference": [0.05, 0.4],
    ...                       "low": [-0.1, 0.2], "high": [0.2, 0.6], "n": [100, 100]}).set_index(["metric", "other"])
    >>> print(*trained_realism(table, proportion([True] * 54 + [False] * 6), diffs, trained="enc"), sep="\\n")
    The trained realism judge tells the real user from the proxy in 0.90 [0.80, 0.95] of held-out conversations (n = 60).
    GTEval: Spearman 0.45 [0.28, 0.60] (n = 100), above the 0.4 target by its point estimate; the interval does not settle it; against length +0.05 [-0.10, +0.20] (no difference shown); against lm +0.40 [+0.20, +0.60] (higher).
    """
    lines = [f"The trained realism judge tells the real user from the proxy in {heldout.value:.2f} "
             f"[{heldout.low:.2f}, {heldout.high:.2f}] of held-out conversations (n = {heldout.n})."]
    for metric in dict.fromkeys(k.split(",")[0] for k in agreement.index):
        key = f"{metric}, {trained}"
        if key not in agreement.index:
            continue
        row = agreement.loc[key]
        if row["spearman_low"] >= target:
            verdict = f"target {target} met (the whole interval above it)"
        elif row["spearman_high"] < target:
            verdict = f"target {target} not met (the whole interval below it)"
        else:
            side = "above" if row["spearman"] >= target else "below"
            verdict = f"{side} the {target} target by its point estimate; the interval does not settle it"
        parts = []
        if metric in differences.index.get_level_values("metric"):
            for other, d in differences.xs(metric, level="metric").iterrows():
                gap = "higher" if d["low"] > 0 else "lower" if d["high"] < 0 else "no difference shown"
                parts.append(f"against {other} {d['difference']:+.2f} [{d['low']:+.2f}, {d['high']:+.2f}] ({gap})")
        lines.append(f"{metric}{where}: Spearman {row['spearman']:.2f} [{row['spearman_low']:.2f}, {row['spearman_high']:.2f}] "
                     f"(n = {int(row['n'])}), {verdict}"
                     + ("; " + "; ".join(parts) if parts else "") + ".")
    return lines


def calibration_agreement(tables: Mapping[str, pd.DataFrame], calibration: Sequence[str]) -> list[str]:
    """Per label, whether annotators agree more on the calibration sources than on the real models: each
    calibration source's kappa with its interval, the models' range, and how many model intervals it clears
    (tables from :func:`evalkit.agreement.kappa_by_group_interval`, by label).

    >>> t = pd.DataFrame({"kappa": [0.3, 0.1, 0.2, 0.18], "low": [0.25, 0.05, 0.15, 0.12],
    ...                   "high": [0.35, 0.11, 0.24, 0.22], "items": [50] * 4}, index=["random", "para", "m1", "m2"])
    >>> calibration_agreement({"content": t}, ["random", "para"])[0]
    "content: random 0.30 [0.25, 0.35] (n = 50 items) lies above 2 and below 0 of the 2 real models' intervals; para 0.10 [0.05, 0.11] (n = 50 items) lies above 0 and below 2 of the 2 real models' intervals; the real models 0.18 to 0.20."
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
        lines.append(f"{label}: {'; '.join(parts)}; the real models {models['kappa'].min():.2f} to "
                     f"{models['kappa'].max():.2f}.")
    return lines


def feature_group_gains(table: pd.DataFrame, *, label: str = "content", base: str = "metrics",
                        train: str = "upheld", checks: Sequence[str] = ("llm_arena", "topical_chat")) -> list[str]:
    """Chapter 3: what each added group of features does to the linear ensemble, against the ``base`` row of
    :func:`evalkit.ensemble.feature_group_table`. A gain counts on ``train`` only when the difference of the
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
            parts.append(f"{check} {row[f'{check} transfer']:.3f} [{row[f'{check} low']:.3f}, {row[f'{check} high']:.3f}] "
                         f"vs {reference[f'{check} transfer']:.3f} [{reference[f'{check} low']:.3f}, "
                         f"{reference[f'{check} high']:.3f}] (n = {int(row[f'{check} n'])}) — "
                         + ("a gain the intervals show" if clear else "no gain the interval shows"))
        added = name[len(base) + 3:] if name.startswith(f"{base} + ") else name
        lines.append(f"Adding {added} to the {base} ({label}): " + "; ".join(parts) + ".")
    return lines
