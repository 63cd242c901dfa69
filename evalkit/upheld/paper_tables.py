"""Chapter 3 — tables in the UPHELD paper's layout, our numbers beside the paper's.

The ``PAPER_*`` constants quote the paper (Tables 3, 4, 10: correlation with humans per metric and dataset;
5-fold CV means). Everything else here is computed from the data passed in.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd

from evalkit.upheld.agreement import LEVELS
from evalkit.upheld.correlation import correlation, fold_correlations

__all__ = ["PAPER_CONTENT", "PAPER_STYLE", "PAPER_REASONABLE", "PAPER_TABLES", "metric_table",
           "by_agreement_level", "judge_accuracy_by_bin", "stratified_sample", "table_with_paper", "ceiling_gap"]

_ROWS = ["embedding_cosine", "bertscore_precision", "bertscore_recall", "bertscore_f1", "rouge1", "rouge2", "rougeL",
         "rougeLsum", "judge_yes_no", "judge_yes_no_explain", "judge_likert", "judge_likert_explain", "linear", "svm",
         "random_forest"]


def _paper(values: list[tuple[float, float, float]]) -> pd.DataFrame:
    return pd.DataFrame(values, index=_ROWS, columns=["upheld", "llm_arena", "topical_chat"])


#: Table 3 (content), Table 4 (style), Table 10 (reasonableness) of the paper.
PAPER_CONTENT = _paper([(0.58, 0.41, 0.40), (0.36, 0.39, 0.32), (0.40, 0.42, 0.40), (0.40, 0.45, 0.42),
                        (0.34, 0.49, 0.33), (0.24, 0.43, 0.24), (0.32, 0.41, 0.34), (0.31, 0.50, 0.34),
                        (0.40, 0.32, 0.57), (0.23, 0.32, 0.29), (0.26, 0.41, 0.39), (0.28, 0.41, 0.34),
                        (0.59, 0.50, 0.58), (0.55, 0.49, 0.54), (0.63, 0.23, 0.32)])
PAPER_STYLE = _paper([(0.41, 0.42, 0.29), (0.37, 0.39, 0.36), (0.36, 0.50, 0.27), (0.41, 0.49, 0.35),
                      (0.32, 0.51, 0.31), (0.20, 0.43, 0.16), (0.29, 0.48, 0.30), (0.29, 0.48, 0.30),
                      (0.35, 0.08, 0.36), (0.15, 0.08, 0.24), (0.24, 0.07, 0.22), (0.20, 0.05, 0.20),
                      (0.50, 0.28, 0.32), (0.49, 0.54, 0.55), (0.61, 0.04, 0.22)])
PAPER_REASONABLE = _paper([(0.01, 0.28, 0.01), (0.17, 0.15, 0.13), (0.07, 0.15, 0.04), (0.14, 0.19, 0.10),
                           (0.12, 0.31, 0.06), (0.11, 0.24, 0.04), (0.12, 0.18, 0.07), (0.11, 0.28, 0.06),
                           (0.13, 0.16, 0.09), (0.06, 0.16, 0.00), (0.03, 0.26, 0.00), (0.00, 0.26, 0.00),
                           (0.16, -0.16, 0.01), (0.01, 0.20, 0.03), (0.52, 0.18, 0.04)])
PAPER_TABLES: dict[str, pd.DataFrame] = {"content": PAPER_CONTENT, "style": PAPER_STYLE,
                                         "reasonable": PAPER_REASONABLE}


def stratified_sample(items: pd.DataFrame, n: int | None, *, by: str = "model", seed: int = 0) -> pd.DataFrame:
    """``n`` items spread evenly over the groups of ``by`` (all items when ``n`` is None or large enough).

    >>> frame = pd.DataFrame({"model": list("aaaabb"), "x": range(6)})
    >>> stratified_sample(frame, 4, seed=1)["model"].value_counts().to_dict()
    {'a': 2, 'b': 2}
    """
    if n is None or n >= len(items):
        return items
    rng = np.random.default_rng(seed)
    groups = items.groupby(by).groups
    per_group = max(1, n // len(groups))
    chosen = [label for members in groups.values()
              for label in rng.choice(np.asarray(members), size=min(len(members), per_group), replace=False)]
    return items.loc[sorted(chosen)]


def metric_table(frames: Mapping[str, pd.DataFrame], columns: list[str], *, n_splits: int = 5, seed: int = 0,
                 grouped: bool = False) -> pd.DataFrame:
    """Rows: score columns; columns: ``<dataset>`` (fold mean) and ``<dataset> sd``, as in Tables 3, 4, 10."""
    table = {}
    for dataset, frame in frames.items():
        means, sds = {}, {}
        for column in columns:
            if column not in frame or frame[column].notna().sum() < 3 * n_splits:
                continue
            data = frame.dropna(subset=[column]).reset_index(drop=True)
            means[column], sds[column] = fold_correlations(data, column, n_splits=n_splits, grouped=grouped, seed=seed)
        table[dataset], table[f"{dataset} sd"] = pd.Series(means), pd.Series(sds)
    return pd.DataFrame(table).reindex(columns)


def by_agreement_level(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """Correlation of each score column on all items and on the items reaching each agreement level
    (cumulative, as in the paper's Table 9), with the relative change from the previous level (column
    "Δ% X vs Y"; NaN where the previous r is below 0.1 in size: a share of almost nothing says nothing) and, per
    row, the items that column scored at each level (a judge scores a sample only)."""
    subsets = {"all": frame}
    for position, level in enumerate(reversed(LEVELS)):  # plurality, majority, perfect
        kept = LEVELS[:len(LEVELS) - position]
        subsets[level] = frame[frame["agreement_bin"].isin(kept)]
    table = pd.DataFrame({name: {column: correlation(part[column], part["target"]) for column in columns}
                          for name, part in subsets.items()})
    names = list(subsets)
    for previous, current in zip(names, names[1:]):
        base = table[previous].where(table[previous].abs() >= 0.1)
        table[f"Δ% {current} vs {previous}"] = 100 * (table[current] - table[previous]) / base.abs()
    table["items (all/plurality/majority/perfect)"] = [
        "/".join(str(int(part[column].notna().sum())) for part in subsets.values()) for column in columns]
    return table


def judge_accuracy_by_bin(frame: pd.DataFrame, labels: pd.DataFrame, label: str,
                          judges: Mapping[str, str]) -> pd.DataFrame:
    """The paper's Table 5: per agreement bin, how often the humans and each judge give the winning score.

    ``Human`` is the mean share of an item's annotators who gave its most frequent score. A Likert judge
    (``kind="likert"``) is right when its rounded score equals that score; a yes/no judge (``kind="binary"``)
    when its "yes" (P(Yes) > 0.5) goes with a winning score of 4 or 5, or its "no" with 1 to 3 (it gives no
    score of its own). The bins do not nest: an item is in one of plurality-not-majority (``"plurality"``),
    majority-not-perfect (``"majority"``) or ``"perfect"``. ``judges`` maps column → kind.
    """
    ratings = labels.dropna(subset=[label]).groupby("item_id")[label]
    winner = ratings.agg(lambda v: v.mode().iloc[0] if len(v.mode()) == 1 else np.nan)
    human = ratings.agg(lambda v: (v == v.mode().iloc[0]).mean() if len(v.mode()) == 1 else np.nan)
    data = frame.assign(winner=frame["item_id"].map(winner), human=frame["item_id"].map(human))
    rows = {}
    for level in ("plurality", "majority", "perfect"):
        part = data[(data["agreement_bin"] == level) & data["winner"].notna()]
        row = {"items": len(part), "Human": part["human"].mean()}
        for column, kind in judges.items():
            judged = part.dropna(subset=[column])
            if kind == "likert":
                hit = judged[column].round() == judged["winner"]
            else:
                hit = (judged[column] > 0.5) == (judged["winner"] >= 4)
            row[column] = hit.mean() if len(judged) else np.nan
            row[f"{column} n"] = len(judged)
        rows[level] = row
    return pd.DataFrame(rows).T


def table_with_paper(frames: Mapping[str, pd.DataFrame], columns: list[str], paper: pd.DataFrame, *,
                     n_splits: int = 5, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """One label's Table 3/4/10: (plain-fold table, grouped-fold table, the view that prints ``mean ± sd``
    for both fold schemes beside the paper's value, per dataset)."""
    ours = metric_table(frames, columns, n_splits=n_splits, seed=seed)
    grouped = metric_table(frames, columns, n_splits=n_splits, seed=seed, grouped=True)
    view = pd.DataFrame(index=columns)
    for name in frames:
        for title, table in ((name, ours), (f"{name} grouped", grouped)):
            view[title] = table[name].round(2).astype(str) + " ± " + table[f"{name} sd"].round(3).astype(str)
        view[f"{name} (paper)"] = paper[name].reindex(columns) if name in paper else np.nan
    return ours, grouped, view


def ceiling_gap(grouped: pd.DataFrame, ensembles: pd.DataFrame, ceilings: Mapping[str, float], metrics: list[str], *,
                label: str = "content", train: str = "upheld", frames: Mapping[str, pd.DataFrame] | None = None,
                bootstrap: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Per dataset: the best single metric and the best ensemble — both chosen on ``train``'s grouped folds
    alone — and the human ceiling. ``grouped`` is :func:`metric_table` with grouped folds, ``ensembles``
    :func:`~evalkit.upheld.ensemble.ensemble_table`. On ``train`` the ensemble's value is its grouped-fold CV mean
    (``sd`` over folds); on a check set its transfer r with a bootstrap interval. With ``frames`` (dataset ->
    items with the metric and ``target``), the metric on a check set is likewise its r over all the set's items
    with a bootstrap interval (``metric low``/``metric high``) — nothing is fitted for it, so no folds are
    needed there."""
    metric = str(grouped.loc[metrics, train].idxmax())
    ensemble = str(ensembles.loc[label][f"{train} grouped cv"].idxmax())
    chosen = ensembles.loc[(label, ensemble)]
    rows = {}
    for dataset, ceiling in ceilings.items():
        on_train = dataset == train
        single = {"metric r": grouped.loc[metric, dataset], "metric sd": grouped.loc[metric, f"{dataset} sd"],
                  "metric low": np.nan, "metric high": np.nan}
        if frames is not None and not on_train:
            from evalkit.stats import correlation_with_humans

            result = correlation_with_humans(frames[dataset][metric], frames[dataset]["target"],
                                             bootstrap=bootstrap, seed=seed)
            single = {"metric r": result.pearson, "metric sd": np.nan, "metric low": result.pearson_low,
                      "metric high": result.pearson_high}
        rows[dataset] = {
            "metric": metric, **single,
            "ensemble": ensemble,
            "ensemble r": chosen[f"{train} grouped cv"] if on_train else chosen[f"{dataset} transfer"],
            "ensemble low": np.nan if on_train else chosen[f"{dataset} low"],
            "ensemble high": np.nan if on_train else chosen[f"{dataset} high"],
            "ensemble sd": chosen[f"{train} grouped cv sd"] if on_train else np.nan,
            "human ceiling": ceiling}
    return pd.DataFrame(rows).T
