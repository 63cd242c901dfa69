"""Encoder inference: torch fp32 against torch's dynamic int8 (every Linear layer quantized, activations
quantized on the fly), for the default MiniLM and the larger all-mpnet-base-v2, on the same items in one run.

Workload: ``--items`` (history, reply) items of the six Table-1 sets, in a fixed order; a judge's relevance =
the cosine of the last turn's and the reply's mean-pooled embeddings (chapter 4's untrained judge). Each way is
timed twice, interleaved (fp32, int8, fp32, int8; every run from an empty embedding memo), and the faster of
its two runs is reported. "Keeps the scores" is read off the largest absolute difference of the relevance
scores from fp32's and their Pearson and Spearman correlation with fp32's.

sentence-transformers' own ONNX and OpenVINO backends are not measured: both need ``optimum-onnx``, whose
releases up to 0.1.0 require transformers < 4.58, and the kit runs transformers 5.24 (pip's resolver refuses
the pair; checked 2026-12-01).

    python benchmarks/encoder_inference.py [--items 600]
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import stats


KEEPS_DIFFERENCE, KEEPS_PEARSON = 0.01, 0.999  # fixed before the run: what "keeps the scores" means


def load_items(count: int) -> tuple[list[list[str]], list[str]]:
    """``count`` items spread evenly over the six Table-1 sets (their contexts and replies)."""
    from evalkit.paireval.metaeval import load_meta_eval_set, meta_eval_set_names

    names = meta_eval_set_names()
    contexts, replies = [], []
    for name in names:
        items = load_meta_eval_set(name).items.head(count // len(names))
        contexts += [list(c) for c in items["context"]]
        replies += items["response"].astype(str).tolist()
    return contexts, replies


def judge_of(path, way: str):
    """The untrained encoder judge of ``path`` in fp32 or with dynamic int8 Linear layers."""
    import torch

    from evalkit.encoders import load_encoder
    from evalkit.paireval.encoder import EncoderJudge

    tokenizer, model = load_encoder(path)
    model = model.eval()
    if way == "int8":
        model = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
    return EncoderJudge(path, modules=(tokenizer, model, None))


def timed(judge, contexts, replies) -> tuple[float, np.ndarray]:
    judge.forget()
    started = time.perf_counter()
    scores = judge.relevance(contexts, replies)
    return time.perf_counter() - started, scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=600)
    parser.add_argument("--json", help="also write the measurement here (for the book's Performance page)")
    args = parser.parse_args()
    import torch

    from evalkit.book.benchpage import write_measurement
    from evalkit.models.defaults import quiet_model_loading
    from evalkit.encoders import backbone_path

    quiet_model_loading()
    contexts, replies = load_items(args.items)
    rows, ratios, notes = [], {}, []
    for backbone in ("minilm", "mpnet"):
        try:
            path = backbone_path(backbone)
        except (FileNotFoundError, RuntimeError) as missing:  # mpnet needs `make models`
            notes.append(f"{backbone} not measured: {missing}")
            continue
        judges = {way: judge_of(path, way) for way in ("fp32", "int8")}
        seconds = {way: [] for way in judges}
        scores = {}
        for _ in range(2):
            for way, judge in judges.items():
                spent, scores[way] = timed(judge, contexts, replies)
                seconds[way].append(spent)
        best = {way: min(values) for way, values in seconds.items()}
        difference = float(np.max(np.abs(scores["int8"] - scores["fp32"])))
        for way in judges:
            row = {"way": f"{backbone} {way}", "seconds": best[way], "items/s": len(replies) / best[way]}
            if way == "int8":
                row.update({"largest difference from fp32": difference,
                            "Pearson with fp32": float(stats.pearsonr(scores["int8"], scores["fp32"])[0]),
                            "Spearman with fp32": float(stats.spearmanr(scores["int8"], scores["fp32"])[0])})
            rows.append(row)
        ratios[f"{backbone}: int8 vs fp32"] = best["fp32"] / best["int8"]
        kept = difference < KEEPS_DIFFERENCE and rows[-1]["Pearson with fp32"] >= KEEPS_PEARSON
        notes.append(f"{backbone}: int8 {'keeps' if kept else 'does not keep'} the scores (largest difference "
                     f"{difference:.3f}, Pearson with fp32 {rows[-1]['Pearson with fp32']:.3f}; kept means < "
                     f"{KEEPS_DIFFERENCE} and >= {KEEPS_PEARSON}): "
                     f"{'it could replace fp32' if kept else 'the kit scores in fp32'}")
        print(f"{backbone}: fp32 {best['fp32']:.1f} s, int8 {best['int8']:.1f} s, largest difference {difference:.4f}")
    notes.append(f"torch {torch.__version__}, {torch.get_num_threads()} threads; each way the faster of two "
                 "interleaved runs, embeddings recomputed each run")
    notes.append("sentence-transformers' ONNX/OpenVINO backends need optimum-onnx (transformers < 4.58): not "
                 "installable beside the kit's transformers 5.24")
    write_measurement(args.json, title="Encoder inference: torch fp32 vs dynamic int8",
                      workload=f"relevance (cosine of last turn and reply) of {len(replies)} items of the six "
                               "Table-1 sets, untrained encoders",
                      rows=rows, ratios=ratios, notes=notes)


if __name__ == "__main__":
    main()
