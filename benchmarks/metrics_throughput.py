"""All reference metrics over the UPHELD main set (one row per label set), evalkit vs the naive loop.

Naive: for every row, ``RougeScorer.score``, ``bert_score.score`` and an encoder call for the two texts —
as a quick script would do. evalkit: :class:`evalkit.metrics.ReferenceMetrics` with an empty cache
(unique pairs only, each text embedded once, batched). The naive loop is timed on ``--naive-rows`` rows and
its per-row time scaled to the full set (printed as an extrapolation); evalkit runs on every row.

    python benchmarks/metrics_throughput.py [--naive-rows 40]
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from evalkit.benchpage import write_measurement
from evalkit.defaults import default_encoder_path
from evalkit.metrics import ROUGE_TYPES, MetricStore, ReferenceMetrics
from evalkit.upheld import load_upheld


def naive_loop(references, candidates) -> float:
    import bert_score
    from rouge_score import rouge_scorer
    from sentence_transformers import SentenceTransformer

    encoder_path = str(default_encoder_path())
    encoder = SentenceTransformer(encoder_path, device="cpu")
    started = time.perf_counter()
    for reference, candidate in zip(references, candidates):
        rouge_scorer.RougeScorer(list(ROUGE_TYPES), use_stemmer=True).score(reference, candidate)
        bert_score.score([candidate], [reference], model_type=encoder_path, num_layers=6)
        encoder.encode([reference, candidate], normalize_embeddings=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--naive-rows", type=int, default=40)
    parser.add_argument("--json", help="also write the measurement here (for the book's Performance page)")
    args = parser.parse_args()
    from evalkit.defaults import quiet_model_loading

    quiet_model_loading()
    labels = load_upheld("main", drop_duplicate_raters=False).labels
    references, candidates = labels["reference"].tolist(), labels["candidate"].tolist()
    rows = len(references)

    naive = naive_loop(references[:args.naive_rows], candidates[:args.naive_rows])
    naive_full = naive / args.naive_rows * rows
    with tempfile.TemporaryDirectory() as folder:
        scorer = ReferenceMetrics(store=MetricStore(Path(folder) / "metrics.sqlite"))
        started = time.perf_counter()
        scorer.score(references, candidates)
        kit = time.perf_counter() - started
    print(f"rows: {rows} label sets ({scorer.computed} unique pairs)")
    print(f"naive loop: {naive:.1f} s for {args.naive_rows} rows -> {naive_full / 60:.1f} min for all rows (extrapolated)")
    print(f"evalkit:    {kit:.1f} s for all rows ({rows / kit:.0f} rows/s)")
    print(f"ratio naive/evalkit: {naive_full / kit:.0f}x")
    write_measurement(args.json, title="Reference metrics: per-row loop vs evalkit",
                      workload=f"ROUGE-1/2/L/Lsum, embedding cosine and BERTScore over the {rows} UPHELD label sets",
                      rows=[{"way": f"naive loop (timed on {args.naive_rows} rows, scaled to all)",
                             "seconds": naive_full, "rows/s": rows / naive_full},
                            {"way": "evalkit (unique pairs, each text embedded once, batched)", "seconds": kit,
                             "rows/s": rows / kit}],
                      ratios={"evalkit vs naive loop": naive_full / kit},
                      notes=[f"{scorer.computed} unique pairs computed; the naive time is an extrapolation"])


if __name__ == "__main__":
    main()
