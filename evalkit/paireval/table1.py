"""PairEval's Table 1 on the six meta-evaluation sets: every method's scores, their correlation with the
human scores (with p-values, n and bootstrap intervals), and the paper's figures beside them."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from evalkit.stats import correlation_with_humans
from evalkit.paireval.analysis import PAPER, comparison_runs
from evalkit.judges.protocol import Judge
from evalkit.paireval.scoring import bleu2, directeval_scores, length_scores, pairwise_matrix

__all__ = ["sample_items", "baseline_scores", "judge_scores", "ENCODER_METHODS", "encoder_methods",
           "encoder_method_scores",
           "correlation_rows", "table1_view", "paper_table1", "PUBLISHED_METRICS", "published_metrics",
           "adaptation_features"]


def sample_items(frame: pd.DataFrame, n: int | None, *, seed: int) -> pd.DataFrame:
    """``n`` items of a set drawn without replacement (all items when ``n`` is None or not smaller)."""
    if n is None or n >= len(frame):
        return frame
    return frame.sample(n=n, random_state=seed).sort_index()


def baseline_scores(frame: pd.DataFrame, *, reference_metrics: Any | None = None) -> dict[str, np.ndarray]:
    """The length baseline for every set; BLEU-2 and BERTScore (``reference_metrics``, an
    :class:`evalkit.upheld.metrics.ReferenceMetrics`) where every item has a reference."""
    scores = {"Length": length_scores(frame["response"])}
    if frame["reference"].notna().all():
        scores["BLEU-2"] = bleu2(frame["reference"], frame["response"])
        if reference_metrics is not None:
            bert = reference_metrics.score(frame["reference"].tolist(), frame["response"].tolist())
            scores["BERTScore"] = bert["bertscore_f1"].to_numpy()
    return scores


def judge_scores(frame: pd.DataFrame, judge: Judge, pool: Sequence[tuple[Sequence[str], str]], *, n: int, runs: int,
                 seed: int, direct: bool = True) -> dict[str, Any]:
    """A judge's PairEval scores (``n`` comparison examples per run from ``pool``, ``runs`` runs, averaged, and
    each run's) and DirectEval scores on a set (``direct=False``: none — for an LM judge they cost a call per
    item), plus the pairwise array the ablations reuse."""
    contexts, responses = list(frame["context"]), list(frame["response"])
    matrix = pairwise_matrix(contexts, responses, pool, judge)
    run_scores = comparison_runs(matrix, n, runs, seed=seed)
    return {"paireval": np.nanmean(np.stack(run_scores), axis=0), "runs": run_scores, "matrix": matrix,
            "directeval": directeval_scores(contexts, responses, judge) if direct else None}


ENCODER_METHODS = ("PairEval, encoder zero-shot", "DirectEval", "PairEval", "PairEval, comparative reader",
                   "PairEval, mpnet zero-shot")
"""The encoder judges a chapter chooses between, cheapest first: the untrained MiniLM leads, then the two
judges fine-tuned from it, the comparative reader over the PairEval judge (:mod:`.reader`: one more small head
per pair), then the untrained all-mpnet-base-v2 (about 7x MiniLM's inference time on two cores, measured 6.9-7.4x)."""


def encoder_methods(*, large: bool) -> list[str]:
    """The :data:`ENCODER_METHODS` a run scores, in their order: the mpnet judge only when ``large`` (it needs
    ``make models`` and costs about seven MiniLM passes).

    >>> encoder_methods(large=False)[-1], len(encoder_methods(large=True))
    ('PairEval, comparative reader', 5)
    """
    return [m for m in ENCODER_METHODS if large or m != "PairEval, mpnet zero-shot"]


def encoder_method_scores(frame: pd.DataFrame, *, zero_shot: Any, paireval: Any, directeval: Any,
                          pool: Sequence[tuple[Sequence[str], str]], n: int, runs: int, seed: int,
                          large: Any | None = None, reader: Any | None = None
                          ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The :data:`ENCODER_METHODS`' scores on a set's items (the untrained encoders, the fine-tuned PairEval
    judge and the comparative reader scored by comparison, DirectEval pointwise; the mpnet judge only when
    ``large`` is given, the reader only when ``reader`` is), and the pairwise arrays the ablations and the
    position bias reuse (keyed ``encoder zero-shot``, ``PairEval`` and ``reader``). The dev and the test halves
    are scored alike."""
    scores, matrices = {}, {}
    judges = [("PairEval, encoder zero-shot", "encoder zero-shot", zero_shot), ("PairEval", "PairEval", paireval)]
    if reader is not None:
        judges.append(("PairEval, comparative reader", "reader", reader))
    for method, key, judge in judges:
        result = judge_scores(frame, judge, pool, n=n, runs=runs, seed=seed)
        scores[method], matrices[key] = result["paireval"], result["matrix"]
    scores["DirectEval"] = directeval_scores(list(frame["context"]), list(frame["response"]), directeval)
    if large is not None:
        scores["PairEval, mpnet zero-shot"] = judge_scores(frame, large, pool, n=n, runs=runs, seed=seed)["paireval"]
    return scores, matrices


def correlation_rows(human: Mapping[str, np.ndarray], scores: Mapping[tuple[str, str], np.ndarray], *,
                     bootstrap: int = 1000, seed: int = 0) -> pd.DataFrame:
    """One row per (method, set): Pearson and Spearman with p-values, bootstrap intervals and n.

    ``human`` maps a set to its human scores; ``scores`` maps (method, set) to the method's scores on the
    same items, in the same order.
    """
    rows = []
    for (method, name), values in scores.items():
        result = correlation_with_humans(values, human[name], bootstrap=bootstrap, seed=seed)
        rows.append({"method": method, "set": name, **result.as_dict()})
    return pd.DataFrame(rows)


def table1_view(rows: pd.DataFrame, order: Sequence[str], methods: Sequence[str] | None = None) -> pd.DataFrame:
    """Table 1's layout: a row per method, ``r`` and ``rho`` per set (in ``order``), and the means over the
    sets the method was computed on. Values are correlations (not %)."""
    wide = rows.pivot(index="method", columns="set", values=["pearson", "spearman"])
    columns = {}
    for name in order:
        if ("pearson", name) in wide.columns:
            columns[f"{name} r"] = wide["pearson", name]
            columns[f"{name} rho"] = wide["spearman", name]
    view = pd.DataFrame(columns)
    view["mean r"] = wide["pearson"].mean(axis=1)
    view["mean rho"] = wide["spearman"].mean(axis=1)
    view["sets"] = wide["pearson"].notna().sum(axis=1)
    return view.loc[[m for m in (methods or view.index) if m in view.index]]


def paper_table1(order: Sequence[str]) -> pd.DataFrame:
    """The paper's Table 1 figures (as correlations) for the methods it shares with the kit."""
    rows = {}
    for method, by_set in PAPER["table1"].items():
        row = {}
        for name in order:
            value = by_set.get(name)
            row[f"{name} r"], row[f"{name} rho"] = (np.nan, np.nan) if value is None else (value[0] / 100,
                                                                                            value[1] / 100)
        rows[f"{method} (paper)"] = row
    return pd.DataFrame(rows).T


PUBLISHED_METRICS = {
    "GRADE": {"convai2-grade": 0.566, "dailydialog-grade": 0.278, "personachat-usr": 0.358, "topicalchat-usr": 0.200},
    "USR": {"convai2-grade": 0.501, "dailydialog-grade": 0.057, "personachat-usr": 0.440, "topicalchat-usr": 0.412},
    "PONE": {"convai2-grade": 0.362, "dailydialog-grade": 0.163, "personachat-usr": 0.373, "topicalchat-usr": 0.271},
    "BERT-RUBER": {"convai2-grade": 0.309, "dailydialog-grade": 0.134, "personachat-usr": 0.266,
                   "topicalchat-usr": 0.342},
    "MAUDE": {"convai2-grade": 0.351, "dailydialog-grade": -0.036, "personachat-usr": 0.345,
              "topicalchat-usr": 0.044},
}
"""Turn-level Pearson r of published encoder-sized dialogue metrics on four of the six sets, every item, as
re-run by Yeh et al. 2021 (repository ``exe1023/DialEvalMetrics``, README "Results": the USR and GRADE data
tables). Their 0.057 (USR on dailydialog-grade), -0.036 and 0.044 (MAUDE) are marked there as not significant."""


def published_metrics(order: Sequence[str]) -> pd.DataFrame:
    """:data:`PUBLISHED_METRICS` as rows beside Table 1 (NaN on the sets they were not run on), with the mean
    over the four sets they share.

    >>> float(published_metrics(["fed", "convai2-grade"]).loc["GRADE (Yeh et al. 2021)", "convai2-grade r"])
    0.566
    """
    rows = {f"{metric} (Yeh et al. 2021)": {f"{name} r": by_set.get(name, np.nan) for name in order}
            for metric, by_set in PUBLISHED_METRICS.items()}
    view = pd.DataFrame(rows).T
    view["mean r (4 sets)"] = [float(np.mean(list(by_set.values()))) for by_set in PUBLISHED_METRICS.values()]
    return view


def adaptation_features(frame: pd.DataFrame, method_scores: Mapping[str, Sequence[float]],
                        judges: Mapping[str, Any]) -> pd.DataFrame:
    """What an adapted judge (:mod:`evalkit.judges.adapted`) weighs on a set's items: the Table-1 methods' scores,
    each of ``judges``' relevance ``f(h, r)`` (an encoder judge reading more turns, say) and the text features,
    one row per item in the frame's order. The same function of each item's own texts on either half."""
    from evalkit.judges.adapted import text_features  # evalkit.judges.adapted imports the halves, which import this package

    table = pd.DataFrame({method: np.asarray(values, dtype=float) for method, values in method_scores.items()})
    contexts, responses = list(frame["context"]), list(frame["response"])
    for name, judge in judges.items():
        table[name] = judge.relevance(contexts, responses)
    return pd.concat([table, text_features(frame).reset_index(drop=True)], axis=1)
