"""The chapter's experiments as averages over the pairwise matrix: runs with different comparison examples,
positions, the exhaustive variant, accuracies, and the paper's figures to set beside ours."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from evalkit.stats import correlation_with_humans
from evalkit.judges.protocol import Judge, Position, keep_positions, mean_over
from evalkit.paireval.scoring import pairwise_matrix
from evalkit.data.dialogue import Texts



# --------------------------------------------------------------------------- the chapter's experiments

def comparison_runs(matrix: np.ndarray, n: int, runs: int, *, seed: int = 0,
                    positions: Position = "both") -> list[np.ndarray]:
    """Scores from ``runs`` random draws of ``n`` comparison examples (columns) of a pairwise matrix — how
    the paper averages "five runs with different comparison examples". With ``n`` = 1 and ``runs`` equal to
    the number of columns, each column is used once.

    >>> m = np.array([[[0.9, 0.7], [0.5, 0.5]], [[0.1, 0.3], [0.5, 0.5]]])
    >>> [s.round(2).tolist() for s in comparison_runs(m, 1, 2)]
    [[0.8, 0.2], [0.5, 0.5]]
    """
    columns = matrix.shape[1]
    if not 1 <= n <= columns:
        raise ValueError(f"cannot draw {n} comparison examples from {columns}")
    rng = np.random.default_rng(seed)
    chosen = ([[j] for j in range(columns)][:runs] if n == 1 and runs <= columns
              else [sorted(rng.choice(columns, size=n, replace=False)) for _ in range(runs)])
    view = keep_positions(matrix, positions)
    return [mean_over(view[:, list(c), :], (1, 2)) for c in chosen]


def exhaustive_matrix(contexts: Sequence[Texts], responses: Sequence[str], judge: Judge) -> np.ndarray:
    """Every item against every other item of the same set, both orders (the paper's O(M²) variant);
    the diagonal (an item against itself) is NaN."""
    items = list(zip(contexts, responses))
    matrix = pairwise_matrix(contexts, responses, items, judge)
    for i in range(len(items)):
        matrix[i, i, :] = np.nan
    return matrix


def correlations(scores, human) -> dict[str, float]:
    """Pearson r and Spearman rho (with p-values and n) of scores against human judgements, NaNs dropped."""
    return correlation_with_humans(scores, human, bootstrap=0).as_dict()


def ranking_accuracy(better, worse) -> float:
    """Share of cases where the first score beats the second (ties count half; NaN pairs are left out);
    ``worse`` may be one number, e.g. 0.5 for a probability of winning.

    >>> ranking_accuracy([0.9, 0.2, 0.5], [0.1, 0.4, 0.5])
    0.5
    >>> ranking_accuracy([0.9, 0.2], 0.5)
    0.5
    """
    a = np.asarray(better, dtype=float)
    b = np.broadcast_to(np.asarray(worse, dtype=float), a.shape)
    keep = ~(np.isnan(a) | np.isnan(b))
    if not keep.any():
        return float("nan")
    return float(np.mean((a[keep] > b[keep]) + 0.5 * (a[keep] == b[keep])))


def enriched_sample(items: pd.DataFrame, n: int, *, column: str = "score", top: float | None = None,
                    seed: int = 0) -> pd.DataFrame:
    """``n`` items, half from below the top score and half at it — for a set whose scores pile up at the
    ceiling (a uniform sample would hold almost nothing to correlate with). Say so wherever it is used."""
    top = items[column].max() if top is None else top
    low, high = items[items[column] < top], items[items[column] >= top]
    k = min(len(low), n // 2)
    picked = pd.concat([low.sample(k, random_state=seed), high.sample(min(len(high), n - k), random_state=seed)])
    return picked.sort_index()


def summarise_runs(runs: Sequence[np.ndarray], human) -> dict[str, float]:
    """Mean and standard deviation of Pearson r and Spearman rho over several score vectors (runs with
    different comparison examples) against the same human scores."""
    values = [correlations(scores, human) for scores in runs]
    pearson = np.array([v["pearson"] for v in values])
    spearman = np.array([v["spearman"] for v in values])
    return {"pearson": float(pearson.mean()), "pearson_sd": float(pearson.std(ddof=1)) if len(runs) > 1 else 0.0,
            "spearman": float(spearman.mean()),
            "spearman_sd": float(spearman.std(ddof=1)) if len(runs) > 1 else 0.0,
            "runs": len(runs), "n": values[0]["n"]}


def accuracy_by_group(frame: pd.DataFrame, group: str, pairs: dict[str, tuple[str, str]]) -> pd.DataFrame:
    """Per group, the share of rows where column ``better`` beats column ``worse``, for each named pair.

    >>> f = pd.DataFrame({"g": ["x", "x", "y"], "a": [0.9, 0.1, 0.7], "b": [0.2, 0.3, 0.6]})
    >>> accuracy_by_group(f, "g", {"m": ("a", "b")})["m"].tolist()
    [0.5, 1.0]
    """
    table = {name: frame.groupby(group).apply(lambda part, b=better, w=worse: ranking_accuracy(part[b], part[w]),
                                              include_groups=False)
             for name, (better, worse) in pairs.items()}
    out = pd.DataFrame(table)
    out["cases"] = frame.groupby(group).size()
    return out


# The paper's figures the notebook sets beside ours (Park et al. 2024; Pearson r / Spearman rho x 100 on
# TopicalChat-USR, the set closest to ours; Table 7 accuracies in %). Their judge: Llama-2-7B-chat.
_TABLE1_SETS = ("dailydialog-grade", "dailydialog-zhao", "convai2-grade", "personachat-usr", "topicalchat-usr", "fed")


def _table1_row(*values: float | None) -> dict[str, tuple[float, float] | None]:
    pairs = [None if values[i] is None else (values[i], values[i + 1]) for i in range(0, 12, 2)]
    return dict(zip(_TABLE1_SETS, pairs))


PAPER = {
    # Table 1 of the PairEval paper (r, rho in %, Llama-2-7B judges; BERTScore with RoBERTa-large). The paper
    # trains a second judge on ConvAI2 for the two ConvAI2 sets; '-' (no reference) is None.
    "table1": {
        "BLEU-2": _table1_row(14.6, 10.3, 35.5, 20.6, 5.41, 9.64, 32.3, 31.5, 45.9, 46.2, None, None),
        "BERTScore": _table1_row(12.9, 9.9, 36.4, 29.4, 26.0, 27.7, 33.3, 28.3, 46.9, 46.2, None, None),
        "DirectEval": _table1_row(38.6, 45.1, 62.4, 70.0, 55.5, 56.2, 58.3, 75.0, 39.8, 73.9, 44.4, 50.4),
        "PairEval": _table1_row(47.8, 55.8, 62.9, 70.7, 51.1, 56.6, 66.5, 71.1, 70.8, 72.2, 51.9, 52.0),
    },
    "table1_topicalchat": {"BLEU-2": (45.9, 46.2), "BERTScore": (46.9, 46.2), "DirectEval": (39.8, 73.9),
                           "PairEval": (70.8, 72.2)},
    "table2_topicalchat": {"zero-shot": (42.6, 2.8), "fine-tuned": (71.9, 0.5)},
    "table3_topicalchat": {("Random", 1): (64.5, 72.1), ("Random", 2): (69.9, 72.3), ("Random", 3): (70.8, 72.2),
                           ("Test", 1): (60.1, 72.1), ("Test", 2): (70.1, 72.7), ("Test", 3): (69.9, 72.8)},
    "table4": {("zero-shot", "DailyDialog-GRADE"): (16.6, 17.3), ("fine-tuned", "DailyDialog-GRADE"): (55.8, 56.4),
               ("zero-shot", "ConvAI2-USR"): (30.1, 29.8), ("fine-tuned", "ConvAI2-USR"): (70.0, 71.9)},
    "table5_topicalchat": {("zero-shot", "first"): (33.0, 35.5), ("zero-shot", "second"): (35.4, 40.0),
                           ("zero-shot", "both"): (39.8, 42.2), ("fine-tuned", "first"): (57.7, 73.2),
                           ("fine-tuned", "second"): (62.6, 70.6), ("fine-tuned", "both"): (64.5, 72.1)},
    "table6_topicalchat": {("Random", False): (69.0, 69.9), ("Random", True): (68.9, 72.4),
                           ("Test", False): (70.9, 72.5), ("Test", True): (71.1, 71.8)},
    "table7": {"DirectEval": {"entailment": 93.9, "pronoun": 95.7, "ner": 94.9, "speaker_sensitiveness": 79.0,
                              "contradiction": 95.5, "repetitiveness": 71.9, "diversity": 79.9,
                              "bad_paraphrase": 91.9, "entrainment": 82.1, "dullness": 97.5},
               "PairEval": {"entailment": 92.3, "pronoun": 98.6, "ner": 94.9, "speaker_sensitiveness": 95.6,
                            "contradiction": 96.4, "repetitiveness": 98.4, "diversity": 97.0,
                            "bad_paraphrase": 95.1, "entrainment": 96.2, "dullness": 97.1}},
}
