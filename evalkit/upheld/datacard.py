"""Chapter 1 — describing UPHELD: the data card, length and label statistics, examples, Figure 1.

Every number these functions return is computed from the loaded tables; the only constants are the
figures the paper *reports*, kept in :data:`PAPER_REPORTED` so the book can set them side by side.
"""
from __future__ import annotations

import html
from typing import Mapping

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from evalkit.upheld.release import CALIBRATION_SOURCES, LABEL_NAMES, LABELS, UpheldData, aggregate_scores

__all__ = ["PAPER_REPORTED", "data_card", "length_statistics", "label_distribution", "paper_reading_checks",
           "plot_aggregate_scores", "plot_label_distribution", "examples_table", "dialogue_html"]

#: What the UPHELD paper (§3.1.1, §3.1.3) says the dataset holds — quoted for comparison only, each figure on
#: the card's row of the same unit. The paper's "set of labels" is one judged candidate with its five
#: annotators (30,715 sets, 153,578 labels: about five per set), so it counts what the card calls an item, and the
#: paper's "label" is one annotator's judgement of one item, what the card calls a label set.
PAPER_REPORTED: dict[str, object] = {
    "conversations": 800,
    "turns": 9203,
    "items (turn x candidate)": 30715,
    "label sets": 153578,
    "candidate sources": 12,  # 10 LLMs + rephrased reference + random utterance
    "annotators per item (median)": 5,
    "mean history length (chars)": 560,
    "mean judged-turn length (chars)": 245,
    "split column": "Figure 1 on a 756-item subset (the paper's 'label sets'); metrics on a 20% held-out set",
}

#: The base models the paper compares its fine-tuned uma-V0.5 with.
BASE_MODELS = ("gpt3_5", "gpt4", "llama3.1-70b-base")


def _history_chars(history: list[tuple[str, str]]) -> int:
    return sum(len(text) for _, text in history)


def data_card(data: Mapping[str, UpheldData]) -> pd.DataFrame:
    """One column per loaded subset (plus the paper's figures): what the release really contains."""
    columns = {}
    for name, subset in data.items():
        labels, items, report = subset.labels, subset.items, subset.report
        columns[name] = {
            "conversations": labels["conversation_id"].nunique(),
            "turns": labels["turn_id"].nunique(),
            "items (turn x candidate)": len(items),
            "label sets": report.rows_read,
            "labels": report.rows_read * len(LABEL_NAMES),
            "label sets after cleaning": len(labels),
            "candidate sources": labels["model"].nunique(),
            "annotator files": len(report.files),
            "duplicate annotator files": sum(len(group) - 1 for group in report.duplicate_raters),
            "annotators per item (median)": float(items["n_annotators"].median()),
            # per turn, taken from the length table (a turn with more candidates is not longer)
            "mean history length (chars)": float(length_statistics(items).at["history length (chars)", "mean"]),
            "mean judged-turn length (chars)": round(float(items["candidate"].str.len().mean()), 1),
            "split column": "none",
        }
    card = pd.DataFrame(columns)
    card["paper (main set)"] = pd.Series(PAPER_REPORTED)
    return card.astype(object).where(card.notna(), "—")


def length_statistics(items: pd.DataFrame) -> pd.DataFrame:
    """Mean / median / max of dialogue and text lengths, per item (characters and words)."""
    per_turn = items.drop_duplicates("turn_id")
    measures = {
        "turns per conversation": per_turn.groupby("conversation_id")["turn_id"].nunique(),
        "history length (utterances)": per_turn["turn"],
        "history length (chars)": per_turn["history"].map(_history_chars),
        "reference length (chars)": per_turn["reference"].str.len(),
        "reference length (words)": per_turn["reference"].str.split().str.len(),
        "candidate length (chars)": items["candidate"].str.len(),
        "candidate length (words)": items["candidate"].str.split().str.len(),
    }
    return pd.DataFrame({name: {"mean": values.mean(), "median": values.median(), "max": values.max(),
                                "n": values.count()} for name, values in measures.items()}).T.round(1)


def label_distribution(labels: pd.DataFrame, by: str | None = None) -> pd.DataFrame:
    """Count of every label value (rows: label and value; columns: ``by`` groups or 'all'), blanks counted."""
    frames = []
    for name, spec in LABELS.items():
        values = labels[name].astype("Float64")
        groups = labels[by] if by else pd.Series("all", index=labels.index)
        table = pd.crosstab(values.fillna(-1).astype(int), groups.rename(by or "subset"))
        table = table.reindex([*spec.scale, -1], fill_value=0)
        table.index = pd.MultiIndex.from_product([[name], [*map(str, spec.scale), "blank"]],
                                                 names=["label", "value"])
        frames.append(table)
    return pd.concat(frames)


def paper_reading_checks(labels: pd.DataFrame) -> pd.DataFrame:
    """Test the paper's reading of Figure 1 on the release: each claim, the measured value, and whether it holds."""
    scores = aggregate_scores(labels).set_index("model")
    present = [m for m in BASE_MODELS if m in scores.index]
    rows = []
    if "gpt4_rephrase" in scores.index and "random" in scores.index:
        for name in LABEL_NAMES:
            top, bottom = scores[name].idxmax(), scores[name].idxmin()
            rows.append((f"{name}: the rephrased reference scores highest", top, top == "gpt4_rephrase"))
            rows.append((f"{name}: the random utterance scores lowest", bottom, bottom == "random"))
    if "uma-V0.5" in scores.index and present:
        base = scores.loc[present].mean()
        for name in ("content", "style"):
            gain = scores.loc["uma-V0.5", name] / base[name] - 1
            rows.append((f"{name}: fine-tuned uma-V0.5 at least 30% above the base models' mean "
                          "(the paper: about 40%)", f"{gain:+.0%}", bool(gain >= 0.3)))
        real = scores.loc[~scores.index.isin(CALIBRATION_SOURCES), "reasonable"]
        spread = real.max() - real.min()
        rows.append(("reasonable: nearly flat across the real models (spread < 0.1)", f"{spread:.3f}",
                     bool(spread < 0.1)))
    return pd.DataFrame(rows, columns=["claim in the paper", "measured here", "holds"])


def plot_aggregate_scores(labels: pd.DataFrame, ax: plt.Axes | None = None) -> plt.Figure:
    """Grouped bars of the aggregate score (share of the perfect score) per model and label."""
    scores = aggregate_scores(labels).set_index("model")
    order = scores["content"].sort_values().index
    scores = scores.loc[order]
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 4))
    width = 0.8 / len(LABEL_NAMES)
    positions = np.arange(len(scores))
    for offset, name in enumerate(LABEL_NAMES):
        ax.bar(positions + offset * width - 0.4 + width / 2, scores[name], width, label=name)
    ax.set_xticks(positions, order, rotation=20, ha="right")
    ax.set_ylim(0, 1)
    ax.set_ylabel("sum of scores / sum of maxima")
    ax.set_title("Aggregate human score per candidate source (UPHELD release)")
    ax.legend(loc="upper left")
    ax.figure.tight_layout()
    return ax.figure


def plot_label_distribution(labels: pd.DataFrame, by: str = "model") -> plt.Figure:
    """One panel per label: share of each value within each group.

    Each score has one colour in every panel (1 red through 3 yellow to 5 green), so a colour means the same
    score whether a label's scale is 1-5, 1/3/5 or 1/5.

    >>> labels = pd.DataFrame({"model": ["a", "b"], "content": [5, 1], "style": [5, 3], "reasonable": [5, 1]})
    >>> fig = plot_label_distribution(labels)
    >>> colours = {(ax.get_title(), text): handle.patches[0].get_facecolor()
    ...            for ax in fig.axes for handle, text in zip(*ax.get_legend_handles_labels())}
    >>> colours["content", "5"] == colours["style", "5"] == colours["reasonable", "5"]
    True
    >>> colours["content", "1"] == colours["reasonable", "1"] != colours["reasonable", "5"]
    True
    >>> plt.close(fig)
    """
    lowest, highest = min(min(spec.scale) for spec in LABELS.values()), max(max(spec.scale) for spec in LABELS.values())
    colour_of = {value: plt.get_cmap("RdYlGn")(0.1 + 0.8 * (value - lowest) / (highest - lowest))
                 for value in range(lowest, highest + 1)}
    fig, axes = plt.subplots(1, len(LABEL_NAMES), figsize=(12, 3.6), sharey=True)
    for ax, (name, spec) in zip(axes, LABELS.items()):
        shares = pd.crosstab(labels[by], labels[name].astype("Float64"), normalize="index")
        shares = shares.reindex(columns=[float(v) for v in spec.scale], fill_value=0)
        bottom = np.zeros(len(shares))
        for value in shares.columns:
            ax.barh(shares.index, shares[value], left=bottom, label=str(int(value)), color=colour_of[int(value)])
            bottom += shares[value].to_numpy()
        ax.set_title(name)
        ax.set_xlabel("share of annotations")
        ax.legend(title="score", fontsize=7, loc="lower right")
    fig.tight_layout()
    return fig


def dialogue_html(history: list[tuple[str, str]], last: int = 3) -> str:
    """The last ``last`` turns as escaped HTML lines ('…' marks omitted earlier turns).

    >>> dialogue_html([("user", "<b>hi</b>"), ("assistant", "ok")], last=1)
    '…<br><b>assistant:</b> ok'
    """
    shown = [f"<b>{html.escape(speaker)}:</b> {html.escape(text)}" for speaker, text in history[-last:]]
    prefix = ["…"] if len(history) > last else []
    return "<br>".join(prefix + shown)


def examples_table(items: pd.DataFrame, n: int, seed: int, last_turns: int = 3) -> str:
    """HTML table of ``n`` random items (one per model where possible), all dialogue text escaped."""
    rng = np.random.default_rng(seed)
    models = items["model"].unique()
    chosen = []
    for index in range(n):
        pool = items[items["model"] == models[index % len(models)]]
        chosen.append(pool.index[rng.integers(len(pool))])
    rows = []
    for _, item in items.loc[chosen].iterrows():
        scores = " / ".join(f"{item[f'{name}_mean']:.1f}" for name in LABEL_NAMES)
        rows.append("<tr>" + "".join(f"<td>{cell}</td>" for cell in (
            html.escape(item["item_id"]), dialogue_html(item["history"], last_turns),
            html.escape(item["reference"]), html.escape(item["candidate"]), scores)) + "</tr>")
    header = "".join(f"<th>{title}</th>" for title in (
        "item", "history (last turns)", "reference (Option A)", "candidate (Option B)",
        "mean content / style / reasonable"))
    return (f'<table class="evalkit-examples"><thead><tr>{header}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>")
