"""What a judge card spends its time on, the kit's way against the previous way, in one run.

1. **Grouped intervals** (:func:`evalkit.stats.grouped_correlation_intervals`: Pearson, Spearman and Kendall
   over resamples of whole contexts). Previous way: one resample at a time, written out, through scipy. The
   kit's way: every resample at once, as item weights (how often each item was drawn), with weighted
   correlations and mid-ranks; Kendall's tau-b as a weighted sum over item pairs. Workload: ``--items`` items in
   contexts of three replies, a five-point human label (ties), ``--bootstrap`` resamples. "Same" is the largest
   difference of the six interval bounds.
2. **Encoder embeddings** (:class:`evalkit.paireval.EncoderJudge`, the untrained MiniLM judge's relevance on
   ``--texts`` items of the six Table-1 sets). Previous way: batches of 64 in the items' order. The kit's way:
   batches of similar length (less padding); and a second judge of the same model reading the vectors back
   from the metric store (what chapter 6's cards do with texts chapter 4 embedded). "Same" is the largest
   difference of the relevance scores.

    python benchmarks/card_costs.py [--items 800] [--bootstrap 500] [--texts 1200]
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy import stats


def intervals_one_at_a_time(x, y, groups, *, bootstrap: int, seed: int) -> dict[str, tuple[float, float]]:
    """The plain way, kept as the baseline this benchmark measures against: each resample written out and handed
    to scipy, one correlation at a time."""
    from evalkit.stats import group_resamples

    values = {"pearson": [], "spearman": [], "kendall": []}
    for draw in group_resamples(groups, bootstrap=bootstrap, seed=seed):
        a, b = x[draw], y[draw]
        if len(a) < 3 or np.ptp(a) == 0 or np.ptp(b) == 0:
            continue
        values["pearson"].append(stats.pearsonr(a, b)[0])
        values["spearman"].append(stats.spearmanr(a, b)[0])
        values["kendall"].append(stats.kendalltau(a, b)[0])
    return {name: (float(np.percentile(v, 2.5)), float(np.percentile(v, 97.5))) for name, v in values.items()}


def interval_rows(items: int, bootstrap: int) -> tuple[list[dict], dict[str, float]]:
    from evalkit.stats import grouped_correlation_intervals

    rng = np.random.default_rng(0)
    human = rng.integers(1, 6, size=items).astype(float)
    metric = human + rng.normal(scale=2.0, size=items)
    groups = np.arange(items) // 3
    timings, bounds = {}, {}
    for way, function in (("one resample at a time (scipy)", intervals_one_at_a_time),
                          ("all resamples at once (weights)", grouped_correlation_intervals)):
        started = time.perf_counter()
        bounds[way] = function(metric, human, groups, bootstrap=bootstrap, seed=3)
        timings[way] = time.perf_counter() - started
    old, new = bounds.values()
    difference = max(abs(a - b) for name in old for a, b in zip(old[name], new[name]))
    rows = [{"way": f"grouped intervals: {way}", "seconds": spent} for way, spent in timings.items()]
    rows[-1]["largest difference of the bounds"] = difference
    first, second = timings.values()
    return rows, {"intervals: at once vs one at a time": first / second}


def embedding_rows(count: int) -> tuple[list[dict], dict[str, float]]:
    import torch

    from evalkit.encoders import mean_pooled
    from evalkit.upheld.metrics import MetricStore
    from evalkit.paireval.encoder import EncoderJudge, context_text
    from encoder_inference import load_items  # a sibling script: run as a script, its folder is on sys.path

    contexts, replies = load_items(count)
    judge = EncoderJudge(store=None)
    texts = list(dict.fromkeys([context_text(c, judge.turns) for c in contexts] + [r.strip() for r in replies]))

    def in_given_order() -> np.ndarray:
        memo = {}
        for start in range(0, len(texts), judge.batch_size):
            chunk = texts[start:start + judge.batch_size]
            with torch.no_grad():
                memo.update(zip(chunk, mean_pooled(judge.model, judge.tokenizer, chunk, judge.max_tokens).numpy()))
        judge._memo = memo  # the previous way's embeddings, scored by the same relevance
        return judge.relevance(contexts, replies)

    def length_sorted() -> np.ndarray:
        judge.forget()
        return judge.relevance(contexts, replies)

    timings, scores = {}, {}
    with tempfile.TemporaryDirectory() as folder:
        store = MetricStore(Path(folder) / "metrics.sqlite")
        EncoderJudge(store=store).relevance(contexts, replies)  # fills the store (not timed)
        reader = EncoderJudge(store=store)

        def from_store() -> np.ndarray:
            reader.forget()
            return reader.relevance(contexts, replies)

        ways = {"batches in the items' order": in_given_order, "batches of similar length": length_sorted,
                "read back from the metric store": from_store}
        for _ in range(2):  # interleaved; the faster of two runs
            for way, function in ways.items():
                started = time.perf_counter()
                scores[way] = function()
                spent = time.perf_counter() - started
                timings[way] = min(spent, timings.get(way, spent))
    reference = scores["batches in the items' order"]
    rows = [{"way": f"embeddings: {way}", "seconds": spent, "texts/s": len(texts) / spent,
             "largest difference from the items' order": float(np.max(np.abs(scores[way] - reference)))}
            for way, spent in timings.items()]
    base = timings["batches in the items' order"]
    return rows, {"embeddings: similar lengths vs items' order": base / timings["batches of similar length"],
                  "embeddings: store vs items' order": base / timings["read back from the metric store"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=800)
    parser.add_argument("--bootstrap", type=int, default=500)
    parser.add_argument("--texts", type=int, default=1200)
    parser.add_argument("--json", help="also write the measurement here (for the book's Performance page)")
    args = parser.parse_args()
    from evalkit.book.benchpage import write_measurement
    from evalkit.models.defaults import quiet_model_loading

    quiet_model_loading()
    rows, ratios = interval_rows(args.items, args.bootstrap)
    more_rows, more_ratios = embedding_rows(args.texts)
    rows, ratios = rows + more_rows, {**ratios, **more_ratios}
    for row in rows:
        print(f"{row['way']}: {row['seconds']:.2f} s")
    write_measurement(args.json, title="Judge card costs: grouped intervals and encoder embeddings",
                      workload=f"intervals of {args.items} items in contexts of 3, {args.bootstrap} resamples; "
                               f"the untrained MiniLM judge's relevance on {args.texts} Table-1 items",
                      rows=rows, ratios=ratios,
                      notes=["each embedding way the faster of two interleaved runs; the store is a fresh SQLite "
                             "file filled by another judge of the same model before the timed runs"])


if __name__ == "__main__":
    main()
