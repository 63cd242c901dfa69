"""A job's report: scores per unit, rank stability over seeds, judge sensitivity, telemetry; as JSON-able
data and as a self-contained HTML page."""
from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalkit.book.results import json_ready
from evalkit.userproxy.evaluate import JUDGE_METRICS
from evalkit.userproxy.runstore import RunStore

__all__ = ["scores", "kendalls_w", "kendalls_w_p", "leader_gap", "rank_stability", "judge_sensitivity", "report", "write_html"]


def scores(store: RunStore, run_id: str) -> pd.DataFrame:
    """One row per finished metric unit: proxy, dataset, metric, judge, seed and its summary (mean, sd, n,
    missing, t and bootstrap intervals; HH, PP and calibrated for judge metrics)."""
    units = store.units(run_id)
    done = units[(units["kind"] == "metric") & (units["status"] == "done")]
    rows = [{**{k: row[k] for k in ("proxy", "dataset", "metric", "judge", "seed")}, **row["summary"]}
            for _, row in done.iterrows()]
    return pd.DataFrame(rows)


def kendalls_w(rankings: np.ndarray) -> float:
    """Kendall's coefficient of concordance W of ``rankings`` (one row per rater — here a seed — ranking the
    same items 1..n): 1 when every rater gives the same order, near 0 when they share none.

    >>> kendalls_w(np.array([[1, 2, 3], [1, 2, 3]]))
    1.0
    >>> kendalls_w(np.array([[1, 2, 3], [3, 2, 1]]))
    0.0
    """
    m, n = rankings.shape
    if n < 2 or m < 1:
        return float("nan")
    totals = rankings.sum(axis=0)
    s = float(((totals - totals.mean()) ** 2).sum())
    return 12 * s / (m ** 2 * (n ** 3 - n))


def kendalls_w_p(rankings: np.ndarray, *, draws: int = 20000, seed: int = 0) -> float:
    """P(W >= the observed W) if every rater ordered the items at random (rows shuffled independently): exact
    by enumerating the raters' orders when there are at most ``draws`` combinations, else a permutation
    estimate from ``draws`` random ones. (Friedman's chi-square approximation is poor for a few raters.)

    >>> round(kendalls_w_p(np.array([[1, 2, 3], [1, 2, 3], [1, 2, 3]])), 4)  # 6 of 216 orders agree fully
    0.0278
    >>> kendalls_w_p(np.array([[1, 2, 3], [3, 2, 1]]))
    1.0
    """
    from itertools import permutations, product

    m, n = rankings.shape
    observed = kendalls_w(rankings) - 1e-12
    orders = [np.array(p) for p in permutations(range(n))]
    # the first rater's order can be fixed: W depends only on the others' orders relative to it
    if len(orders) ** (m - 1) <= draws:
        values = [kendalls_w(np.vstack([rankings[0]] + [rankings[i][order] for i, order in enumerate(combo, 1)]))
                  for combo in product(orders, repeat=m - 1)]
    else:
        rng = np.random.default_rng(seed)
        values = [kendalls_w(np.vstack([rankings[0]] + [rng.permutation(rankings[i]) for i in range(1, m)]))
                  for _ in range(draws)]
    return float(np.mean(np.asarray(values) >= observed))


def leader_gap(wide: pd.DataFrame, *, level: float = 0.95) -> dict[str, Any]:
    """The proxy with the highest mean over seeds against the runner-up: the mean per-seed difference with a
    Student-t interval over seeds (each seed is one draw of episodes, so the seeds are the sample).

    >>> wide = pd.DataFrame({"a": [0.5, 0.6, 0.55], "b": [0.4, 0.45, 0.5]})
    >>> gap = leader_gap(wide)
    >>> gap["leader"], gap["runner_up"], round(gap["difference"], 3), gap["seeds"]
    ('a', 'b', 0.1, 3)
    """
    from evalkit.stats import summarise

    means = wide.mean().sort_values(ascending=False)
    leader, runner_up = str(means.index[0]), str(means.index[1])
    gap = summarise((wide[leader] - wide[runner_up]).to_numpy(dtype=float), level=level)
    return {"leader": leader, "runner_up": runner_up, "difference": gap["mean"], "low": gap["t_low"],
            "high": gap["t_high"], "seeds": gap["n"]}


def _better_is_higher(metric: str) -> bool:
    return metric in JUDGE_METRICS  # lexical z-scores: closest to 0 is best


def rank_stability(table: pd.DataFrame) -> pd.DataFrame:
    """Per dataset, metric and judge with at least two proxies and two seeds: the proxies' order in each
    seed (judge metrics: higher mean first; lexical: |z| closest to 0 first), Kendall's W across seeds,
    whether the order is identical in every seed with its permutation p (:func:`kendalls_w_p`), the leader's
    per-seed lead over the runner-up with a t-interval (:func:`leader_gap`, on the ranking key: for lexical
    metrics minus |z|), and each proxy's mean ± sd over seeds."""
    out = []
    if table.empty:
        return pd.DataFrame()
    for (dataset, metric, judge), group in table.groupby(["dataset", "metric", "judge"]):
        wide = group.pivot_table(index="seed", columns="proxy", values="mean")
        if wide.shape[0] < 2 or wide.shape[1] < 2:
            continue
        key = wide if _better_is_higher(metric) else -wide.abs()
        ranks = key.rank(axis=1, ascending=False, method="average")
        orders = [" > ".join(row.sort_values(ascending=False).index) for _, row in key.iterrows()]
        gap = leader_gap(key)
        out.append({"dataset": dataset, "metric": metric, "judge": judge, "seeds": wide.shape[0],
                    "proxies": wide.shape[1], "kendalls_w": kendalls_w(ranks.to_numpy()),
                    "kendalls_w_p": kendalls_w_p(ranks.to_numpy()),
                    **{f"leader {k}": v for k, v in gap.items()},
                    "same_order_every_seed": len(set(orders)) == 1, "orders": orders,
                    **{f"{p} mean": wide[p].mean() for p in wide.columns},
                    **{f"{p} sd over seeds": wide[p].std(ddof=1) for p in wide.columns}})
    return pd.DataFrame(out)


def judge_sensitivity(table: pd.DataFrame) -> pd.DataFrame:
    """Judge metrics with one column per judge (means over seeds), and the spread between judges."""
    judged = table[table["metric"].isin(JUDGE_METRICS)] if not table.empty else table
    if judged.empty or judged["judge"].nunique() < 2:
        return pd.DataFrame()
    wide = judged.pivot_table(index=["proxy", "dataset", "metric"], columns="judge", values="mean")
    wide["spread"] = wide.max(axis=1) - wide.min(axis=1)
    return wide


def report(store_path: str | Path, run_id: str | None = None) -> dict[str, Any]:
    """The run's report as plain JSON-able data: run, units (status, seconds), scores, judge sensitivity,
    rank stability and telemetry per role. ``run_id`` defaults to the store's latest run; a run id the store
    does not hold (the job file was edited since its run) raises ``ValueError`` listing the stored runs."""
    if not Path(store_path).is_file():  # a report only reads: it must not create an empty store
        raise FileNotFoundError(f"{store_path}: no run store there (run the job first)")
    store = RunStore(store_path)
    try:
        runs = store.runs()
        if runs.empty:
            raise ValueError(f"{store_path}: no runs stored")
        if run_id is not None and run_id not in set(runs["run_id"]):
            raise ValueError(f"{store_path}: no run {run_id} stored — the job file differs from the one the "
                             f"stored run(s) used (an edited job is a new run). Stored runs: "
                             f"{', '.join(map(str, runs['run_id']))}; run the edited job first, or report a "
                             "stored run by its id")
        run_id = run_id or str(runs["run_id"].iloc[-1])
        units = store.units(run_id)
        table = scores(store, run_id)
        telemetry = store.telemetry(run_id)
        by_role = (telemetry.groupby("role")[["calls", "cache_hits", "prompt_tokens", "completion_tokens",
                                              "model_seconds"]].sum().reset_index()
                   if not telemetry.empty else telemetry)
        run = runs[runs["run_id"] == run_id].iloc[0].to_dict()
        return json_ready({
            "run": {**run, "config": store.run_config(run_id), "store": str(store_path),
                    "units": len(units), "done": int((units["status"] == "done").sum()),
                    "failed": units.loc[units["status"] == "failed", ["unit_id", "error"]].to_dict("records"),
                    "seconds": float(units["seconds"].sum())},
            "units": units.drop(columns=["summary"]).to_dict("records"),
            "scores": table.to_dict("records"),
            "judge_sensitivity": judge_sensitivity(table).reset_index().to_dict("records"),
            "rank_stability": rank_stability(table).to_dict("records"),
            "telemetry": by_role.to_dict("records"),
        })
    finally:
        store.close()


_CSS = ("body{font-family:system-ui,sans-serif;margin:2em;max-width:80em}table{border-collapse:collapse;"
        "font-size:.85em;margin-bottom:1.5em}td,th{border:1px solid #ccc;padding:.25em .5em;text-align:right}"
        "th{background:#f3f3f3}caption{text-align:left;font-weight:bold;padding:.3em 0}")


def write_html(data: dict[str, Any], path: str | Path) -> Path:
    """A self-contained HTML page of :func:`report`'s data (tables only, no scripts, no network)."""
    run = data["run"]
    parts = [f"<!doctype html><meta charset='utf-8'><title>{html.escape(run['run_id'])}</title><style>{_CSS}</style>",
             f"<h1>User-proxy run {html.escape(run['run_id'])}</h1>",
             f"<p>{run['done']} of {run['units']} units done, {len(run['failed'])} failed; "
             f"{run['seconds']:.1f} s of unit time; store <code>{html.escape(run['store'])}</code>.</p>"]
    for title, key in (("Scores (mean with 95% t-interval; HH/PP controls; calibrated)", "scores"),
                       ("Judge sensitivity", "judge_sensitivity"), ("Rank stability over seeds", "rank_stability"),
                       ("Telemetry per role", "telemetry"), ("Units", "units")):
        frame = pd.DataFrame(data[key])
        if frame.empty:
            continue
        parts.append(f"<h2>{html.escape(title)}</h2>")
        parts.append(frame.to_html(index=False, float_format=lambda x: f"{x:.3f}", na_rep="–", border=0))
    parts.append(f"<h2>Configuration</h2><pre>{html.escape(json.dumps(run['config'], indent=2))}</pre>")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(parts))
    return path
