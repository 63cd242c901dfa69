"""All reference metrics over the UPHELD main set (one row per label set), evalkit vs the naive loop.

Naive: for every row, ``RougeScorer.score``, ``bert_score.score`` and an encoder call for the two texts —
as a quick script would do. evalkit: :class:`evalkit.upheld.metrics.ReferenceMetrics` with an empty cache
(unique pairs only, each text embedded once, batched). The naive loop is timed on ``--naive-rows`` rows and
its per-row time scaled to the full set (printed as an extrapolation); evalkit runs on every row. Beside it,
evalkit with two encoder passes on the same unique pairs: the sentence encoder and ``BERTScorer`` each reading
every text, where the kit pools the sentence embedding from BERTScore's token states (one pass); the two
alternate (two passes, one pass, two passes, one pass) and the largest score difference is printed.

    python benchmarks/metrics_throughput.py [--naive-rows 40]
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from evalkit.book.benchpage import write_measurement
from evalkit.models.defaults import default_encoder_path
from evalkit.upheld.metrics import ROUGE_TYPES, MetricStore, ReferenceMetrics
from evalkit.upheld.release import load_upheld


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


def two_pass_way(references, candidates, folder: str):
    """The two-pass baseline: ROUGE, then the sentence encoder over the unique texts, then BERTScorer over the
    unique pairs (sorted by length) — two passes of the encoder over every text. Returns (seconds, scores)."""
    import numpy as np
    from bert_score import BERTScorer
    from sentence_transformers import SentenceTransformer

    pairs = list(dict.fromkeys(zip(references, candidates)))
    encoder = SentenceTransformer(str(default_encoder_path()), device="cpu")
    scorer = BERTScorer(model_type=str(default_encoder_path()), num_layers=6, batch_size=64, device="cpu")
    rouge = ReferenceMetrics(store=MetricStore(Path(folder) / "rouge.sqlite"))  # its ROUGE only
    started = time.perf_counter()
    rouge._rouge(pairs)
    texts = list(dict.fromkeys(text for pair in pairs for text in pair))
    vectors = dict(zip(texts, encoder.encode(texts, batch_size=64, normalize_embeddings=True)))
    cosine = np.array([vectors[r] @ vectors[c] for r, c in pairs])
    order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
    _, _, f1 = scorer.score([pairs[i][1] for i in order], [pairs[i][0] for i in order])
    bertscore = np.empty(len(pairs))
    bertscore[order] = f1.numpy()
    return time.perf_counter() - started, dict(zip(pairs, zip(cosine, bertscore)))


def kit_way(references, candidates, folder: str, run: int):
    """:class:`ReferenceMetrics` with an empty store. Returns (seconds, scores by unique pair, pairs computed)."""
    scorer = ReferenceMetrics(store=MetricStore(Path(folder) / f"metrics-{run}.sqlite"))
    started = time.perf_counter()
    frame = scorer.score(references, candidates)
    seconds = time.perf_counter() - started
    return seconds, dict(zip(zip(references, candidates), zip(frame["embedding_cosine"], frame["bertscore_f1"]))), \
        scorer.computed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--naive-rows", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=2, help="alternations of the two-pass and the one-pass way")
    parser.add_argument("--json", help="also write the measurement here (for the book's Performance page)")
    args = parser.parse_args()
    from evalkit.models.defaults import quiet_model_loading

    quiet_model_loading()
    labels = load_upheld("main", drop_duplicate_raters=False).labels
    references, candidates = labels["reference"].tolist(), labels["candidate"].tolist()
    rows = len(references)

    naive = naive_loop(references[:args.naive_rows], candidates[:args.naive_rows])
    naive_full = naive / args.naive_rows * rows
    two_pass, kit, difference = [], [], 0.0
    with tempfile.TemporaryDirectory() as folder:
        for run in range(args.repeats):
            seconds, before = two_pass_way(references, candidates, folder)
            two_pass.append(seconds)
            seconds, now, computed = kit_way(references, candidates, folder, run)
            kit.append(seconds)
            difference = max(difference, max(abs(a - b) for pair in before for a, b in zip(before[pair], now[pair])))
    two_pass_best, kit_best = min(two_pass), min(kit)
    print(f"rows: {rows} label sets ({computed} unique pairs)")
    print(f"naive loop: {naive:.1f} s for {args.naive_rows} rows -> {naive_full / 60:.1f} min for all rows (extrapolated)")
    print(f"evalkit, two encoder passes: " + ", ".join(f"{v:.1f} s" for v in two_pass))
    print(f"evalkit, one encoder pass:   " + ", ".join(f"{v:.1f} s" for v in kit))
    print(f"ratio naive/evalkit: {naive_full / kit_best:.0f}x; two passes/one pass: {two_pass_best / kit_best:.2f}x; "
          f"largest cosine or BERTScore F1 difference {difference:.1e}")
    write_measurement(args.json, title="Reference metrics: per-row loop vs evalkit",
                      workload=f"ROUGE-1/2/L/Lsum, embedding cosine and BERTScore over the {rows} UPHELD label sets "
                               f"(best of {args.repeats} alternations of the two evalkit ways)",
                      rows=[{"way": f"naive loop (timed on {args.naive_rows} rows, scaled to all)",
                             "seconds": naive_full, "rows/s": rows / naive_full},
                            {"way": "evalkit, two encoder passes (unique pairs; sentence encoder and BERTScorer each read every text)",
                             "seconds": two_pass_best, "rows/s": rows / two_pass_best},
                            {"way": "evalkit, one encoder pass (unique pairs; BERTScore's token states also give the embedding)",
                             "seconds": kit_best, "rows/s": rows / kit_best}],
                      ratios={"evalkit vs naive loop": naive_full / kit_best,
                              "one encoder pass vs two encoder passes": two_pass_best / kit_best},
                      notes=[f"{computed} unique pairs computed; the naive time is an extrapolation",
                             f"largest difference between the two evalkit ways (cosine, BERTScore F1): {difference:.1e}"])

if __name__ == "__main__":
    main()
