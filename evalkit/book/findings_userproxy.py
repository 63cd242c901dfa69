"""Chapter 5's sentences — the user proxy's results, computed from the run's tables; each section of the
chapter ends with one of them.

Each function takes the tables the chapter already built and says only what they show; an interval decides
what is called a difference.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from evalkit.book import prose
from evalkit.upheld.release_format import DISPLAY_NAMES

__all__ = ["interval_sides", "diversity_line", "realism_line", "judges_line", "goal_levels_line", "assistant_line",
           "agreement_line", "lexical_mode_shifts", "trained_realism", "adopted_realism"]


def _span(values: pd.Series) -> str:
    low, high = int(values.min()), int(values.max())
    return str(low) if low == high else f"{low}-{high}"


def diversity_line(lexical: pd.DataFrame) -> str:
    """Where the proxy's MATTR z-score intervals lie with respect to 0 (the real users), over the datasets."""
    mattr = lexical.xs("mattr", level="metric")
    sides = prose.interval_sides(mattr, value=0.0)
    return (f"The proxy's MATTR z-score interval lies below 0 (less varied than the real users) "
            f"on {len(sides['below'])} of {len(mattr)} datasets, above 0 on {len(sides['above'])}, and includes 0 "
            f"on {len(sides['includes'])} (n = {_span(mattr['n'])} episodes per set).")


def realism_line(realism: pd.DataFrame) -> str:
    """The default judge's GTEval range and PI win rates, with the real-vs-real control where it was run."""
    pi = realism.xs("pi", level="metric")
    gt = realism.xs("gteval", level="metric")
    pi_sides = prose.interval_sides(pi, value=0.5, low="t_low", high="t_high")
    line = (f"GTEval means run from {gt['mean'].min():.2f} to {gt['mean'].max():.2f}; "
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


def judges_line(sensitivity: pd.DataFrame, realism: pd.DataFrame) -> str:
    """How far the two judges differ on the same rollouts, against the default judge's own interval."""
    halves = (realism["t_high"] - realism["t_low"]) / 2
    own = [halves.get((dataset, metric), np.nan) for _, dataset, metric in sensitivity.index]
    spreads = sensitivity["spread"].to_numpy(dtype=float)
    known = np.isfinite(own)
    inside = int((spreads[known] < np.asarray(own)[known]).sum())
    return (f"The two judges differ by up to {sensitivity['spread'].max():.2f} on the same rollouts "
            f"(median {sensitivity['spread'].median():.2f}); {inside} of {int(known.sum())} of these spreads are "
            "smaller than the half-width of the default judge's own interval on the same set and metric "
            "(differences that size are within one judge's sampling error).")


def goal_levels_line(stability: pd.DataFrame, ablation: pd.DataFrame, *, seeds: int,
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
    lead = f"the highest mean GTEval: `{ablation['gteval'].idxmax()}`"
    if not gt_row.empty and "leader difference" in gt_row.columns:
        row = gt_row.iloc[0]
        told = row["leader low"] > 0
        lead = (f"the highest mean GTEval: `{row['leader leader']}`, ahead of `{row['leader runner_up']}` by "
                f"{row['leader difference']:+.2f} [{row['leader low']:+.2f}, {row['leader high']:+.2f}] per seed "
                f"(t-interval over {int(row['leader seeds'])} seeds) — "
                + ("a lead the seeds support" if told else "not a lead these seeds can tell from chance"))
    size = f", at least {episodes_per_seed} scored episodes per proxy and seed" if episodes_per_seed else ""
    few = (" With fewer than three seeds no order can be told from chance (the smallest p Kendall's W can reach is "
           "too large), so the order is not tested here." if seeds < 3 else "")
    return (f"Over {seeds} seeds{size}: {lead}{spread}; Kendall's W of the proxies' order across "
            f"seeds: {w} (1 = the same order every seed; p: how often orders drawn at random agree as well, "
            f"exact).{few}")


def assistant_line(row: pd.Series) -> str:
    """GTEval of the guided and the unguided assistant (``row``: the ``gteval`` row of the assistant table)."""
    difference = row["unguided"] - row["guided"]
    half = float(np.hypot(row["guided high"] - row["guided"], row["unguided high"] - row["unguided"]))
    verdict = prose.verdict(difference, difference - half, difference + half)
    size = lambda side: f", n = {int(row[f'{side} n'])}" if f"{side} n" in row.index else ""  # noqa: E731
    return (f"GTEval guided {row['guided']:.2f} [{row['guided low']:.2f}, "
            f"{row['guided high']:.2f}{size('guided')}] vs unguided {row['unguided']:.2f} "
            f"[{row['unguided low']:.2f}, {row['unguided high']:.2f}{size('unguided')}]: unguided minus guided {difference:+.2f} "
            f"[{difference - half:+.2f}, {difference + half:+.2f}]: the unguided assistant's score is {verdict} the guided one's (the two runs treated as "
            "independent samples; scores that move together on shared conversations would give a narrower "
            "paired interval).")


def agreement_line(agreement: pd.DataFrame, baselines: Sequence[str]) -> str:
    """Spearman of our judges, the baselines and the published judge with the human labels."""
    ours = agreement.loc[[k for k in agreement.index
                          if "published" not in k and k.split(", ", 1)[-1] not in set(baselines)]]
    theirs = agreement.loc[[k for k in agreement.index if "published" in k]]
    best = ours["spearman"].astype(float).idxmax()
    shown = lambda key: (f"{key} {agreement.loc[key, 'spearman']:.2f} [{agreement.loc[key, 'spearman_low']:.2f}, "  # noqa: E731
                         f"{agreement.loc[key, 'spearman_high']:.2f}]")
    base = [k for k in agreement.index if k.split(", ", 1)[-1] in set(baselines)]
    return (f"Spearman with MirrorBench's human labels (n = {int(ours['n'].min())}): "
            f"our judges {ours['spearman'].min():.2f} to {ours['spearman'].max():.2f} (highest point estimate: "
            f"{shown(best)}); "
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
            sides = [prose.side(part.at[(dataset, m), "low"], part.at[(dataset, m), "high"], 0.0) for m in (base, other)]
            if np.isfinite([part.at[(dataset, m), c] for m in (base, other) for c in ("low", "high")]).all() \
                    and sides[0] != sides[1]:
                changed.append(f"{DISPLAY_NAMES.get(dataset, dataset)} ({sides[0]} -> {sides[1]})")
        if shift.empty:
            lines.append(f"{metric}: no set has a human mean in both modes.")
            continue
        moved = (f"{metric}: measured the {other} way, the human mean moves by {shift.mean():+.3f} on average over "
                 f"{len(shift)} sets ({shift.min():+.3f} to {shift.max():+.3f})")
        verdict = (f"the proxy's z interval changes its side of 0 on {', '.join(changed)}" if changed else
                   "the proxy's z interval keeps its side of 0 on every set where both modes give one")
        lines.append(f"{moved}; {verdict}.")
    return lines


def _against_target(row: pd.Series, target: float) -> str:
    """Whether ``row``'s Spearman meets ``target``, and by how much it is off when it does not."""
    gap = row["spearman"] - target
    if row["spearman_low"] >= target:
        return f"target {target} met (the whole interval above it)"
    if row["spearman_high"] < target:
        return f"target {target} not met, {-gap:.2f} short (the whole interval below it)"
    side = "above" if gap >= 0 else "below"
    return f"{abs(gap):.2f} {side} the {target} target by its point estimate; the interval does not settle it"


def _closest_challenger(decision: Any) -> str:
    """The dev-half challenger that came nearest to replacing the judge a decision kept, with its interval."""
    if not decision.challenges:
        return ""
    name, gap = max(decision.challenges.items(),  # an interval that could not be computed (NaN) comes last
                    key=lambda item: item[1].low if np.isfinite(item[1].low) else -np.inf)
    return (f"; the closest, {name}, {gap.difference:+.3f} [{gap.low:+.3f}, {gap.high:+.3f}] against "
            f"{decision.faced[name]}")


def _spearman_line(metric: str, row: pd.Series, differences: pd.DataFrame, *, target: float, where: str,
                   lead: str = "") -> str:
    """``<metric><where>: <lead>Spearman s [l, h] (n = ..), <target verdict>; against <other> d [l, h] (..).``"""
    parts = []
    if metric in differences.index.get_level_values("metric"):
        for other, d in differences.xs(metric, level="metric").iterrows():
            gap = "higher" if d["low"] > 0 else "lower" if d["high"] < 0 else "no difference shown"
            parts.append(f"against {other} {d['difference']:+.2f} [{d['low']:+.2f}, {d['high']:+.2f}] ({gap})")
    return (f"{metric}{where}: {lead}Spearman {row['spearman']:.2f} [{row['spearman_low']:.2f}, "
            f"{row['spearman_high']:.2f}] (n = {int(row['n'])}), {_against_target(row, target)}"
            + ("; " + "; ".join(parts) if parts else "") + ".")


def trained_realism(agreement: pd.DataFrame, heldout: Any, differences: pd.DataFrame, *, trained: str,
                    target: float = 0.4, where: str = "") -> list[str]:
    """Chapter 5's trained realism judge in sentences: held-out accuracy (a :class:`~evalkit.stats.Proportion`),
    its Spearman with the human labels per metric against ``target`` (rows "<metric>, <judge>" of
    :func:`evalkit.userproxy.human_labels.human_label_agreement`), and its paired difference from each other judge
    (:func:`evalkit.userproxy.human_labels.human_label_differences`): a difference counts only when its interval
    excludes 0. ``where`` names the items (e.g. " on the test half").

    >>> from evalkit.stats import proportion
    >>> table = pd.DataFrame({"spearman": [0.45], "spearman_low": [0.28], "spearman_high": [0.60], "n": [100]},
    ...                      index=["GTEval, enc"])
    >>> diffs = pd.DataFrame({"metric": ["GTEval", "GTEval"], "other": ["length", "lm"], "difference": [0.05, 0.4],
    ...                       "low": [-0.1, 0.2], "high": [0.2, 0.6], "n": [100, 100]}).set_index(["metric", "other"])
    >>> print(*trained_realism(table, proportion([True] * 54 + [False] * 6), diffs, trained="enc"), sep="\\n")
    The trained realism judge tells the real user from the proxy in 0.90 [0.80, 0.95] of held-out conversations (n = 60).
    GTEval: Spearman 0.45 [0.28, 0.60] (n = 100), 0.05 above the 0.4 target by its point estimate; the interval does not settle it; against length +0.05 [-0.10, +0.20] (no difference shown); against lm +0.40 [+0.20, +0.60] (higher).
    """
    lines = [f"The trained realism judge tells the real user from the proxy in {heldout.value:.2f} "
             f"[{heldout.low:.2f}, {heldout.high:.2f}] of held-out conversations (n = {heldout.n})."]
    for metric in dict.fromkeys(k.split(",")[0] for k in agreement.index):
        key = f"{metric}, {trained}"
        if key in agreement.index:
            lines.append(_spearman_line(metric, agreement.loc[key], differences, target=target, where=where))
    return lines


def adopted_realism(decisions: dict[str, Any], agreement: pd.DataFrame, differences: dict[str, pd.DataFrame], *,
                    target: float = 0.4, where: str = " on the test half") -> list[str]:
    """Per metric, the realism judge the dev half chose (``decisions``: metric -> an
    :class:`evalkit.stats.selection.Decision`, e.g. :func:`evalkit.userproxy.human_labels.choose_realism_judges`) and
    how it does on the test half: its Spearman against ``target`` (rows "<metric>, <judge>" of ``agreement``)
    and its paired difference from the incumbent it had to beat (``differences``: metric -> rows of
    :func:`~evalkit.userproxy.human_labels.human_label_differences`; none when the incumbent held its place).

    >>> from evalkit.stats.bootstrap import CorrelationDifference
    >>> from evalkit.stats.selection import Decision
    >>> chosen = Decision("?", ("length", "rouge"), pd.DataFrame({"candidate": ["length", "rouge"], "set": ["g", "g"],
    ...                   "pearson": [0.4, 0.5], "n": [46, 46]}), {"rouge": CorrelationDifference(0.1, -0.2, 0.4, 46)},
    ...                   {"rouge": "length"}, "length", sets=("g",), kind="spearman")
    >>> table = pd.DataFrame({"spearman": [0.6], "spearman_low": [0.4], "spearman_high": [0.75], "n": [54]},
    ...                      index=["GTEval, length"])
    >>> print(*adopted_realism({"gteval": chosen}, table, {}), sep="\\n")
    GTEval on the test half: the dev half kept the first candidate, length (no later one beat it there by an interval that excludes 0; the closest, rouge, +0.100 [-0.200, +0.400] against length): Spearman 0.60 [0.40, 0.75] (n = 54), target 0.4 met (the whole interval above it).
    """
    names = {"gteval": "GTEval", "pi": "PI"}
    lines = []
    for metric, decision in decisions.items():
        label, choice, incumbent = names.get(metric, metric), decision.choice, decision.candidates[0]
        lead = (f"the dev half kept the first candidate, {choice} (no later one beat it there by an interval that "
                f"excludes 0{_closest_challenger(decision)}): "
                if choice == incumbent else f"the dev half chose {choice} over {decision.faced[choice]}: ")
        rows = differences.get(metric, pd.DataFrame(columns=["metric", "other"]).set_index(["metric", "other"]))
        lines.append(_spearman_line(label, agreement.loc[f"{label}, {choice}"], rows, target=target, where=where,
                                    lead=lead))
    return lines
