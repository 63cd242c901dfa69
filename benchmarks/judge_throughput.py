"""Judge throughput on the same prompts and model, measured in one run.

(a) one prompt at a time, generate a short answer, then parse it — the naive way;
(b) batched next-token label probabilities (the kit's default for yes/no and Likert judges), cold cache;
(c) (b) again with the cache warm — what a rerun or a resumed run costs.

Prints items/s and the ratios b/a and c/b.

    python benchmarks/judge_throughput.py [--items 24] [--batch-size 8] [--max-tokens 16]

Uses UPHELD items (``$EVALKIT_DATA_DIR`` or the download cache) and the default model unless told otherwise.
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from evalkit.book.benchpage import write_measurement
from evalkit.models.cache import CallCache
from evalkit.upheld.llm_judges import JUDGES, judge, judge_messages, parse_verdict
from evalkit.models import CachedBackend, TransformersBackend
from evalkit.upheld.release import load_upheld


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=24)
    parser.add_argument("--batch-size", type=int, default=None, help="default: the backend's (1 on a CPU)")
    parser.add_argument("--max-tokens", type=int, default=16, help="generation length in (a)")
    parser.add_argument("--model", default=None, help="local folder or HF id (default: SmolLM2-135M)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", help="also write the measurement here (for the book's Performance page)")
    args = parser.parse_args()

    items = load_upheld("main").items.sample(args.items, random_state=args.seed)
    spec = JUDGES["yes_no"]
    backend = TransformersBackend(args.model, batch_size=args.batch_size)
    print(f"model: {backend.name}; {args.items} UPHELD items, judge 'yes_no'")

    started = time.perf_counter()
    parsed = 0
    for history, reference, candidate in zip(items["history"], items["reference"], items["candidate"]):
        [result] = backend.generate([judge_messages(spec, history, reference, candidate)],
                                    max_tokens=args.max_tokens)
        parsed += parse_verdict(result.texts[0], spec.labels) is not None
    naive = time.perf_counter() - started

    with tempfile.TemporaryDirectory() as folder:
        cached = CachedBackend(backend, CallCache(Path(folder) / "calls.sqlite"))
        started = time.perf_counter()
        cold = judge(items, "yes_no", cached)
        batched = time.perf_counter() - started
        started = time.perf_counter()
        warm = judge(items, "yes_no", cached)
        rerun = time.perf_counter() - started
        assert warm["score"].equals(cold["score"]), "the warm cache must return the same scores"

    rows = [("(a) one at a time, generate + parse", naive), ("(b) batched label probabilities", batched),
            ("(c) (b) with a warm cache", rerun)]
    for label, seconds in rows:
        print(f"{label:40s} {seconds:8.3f} s  {args.items / seconds:10.1f} items/s")
    print(f"(a) parsed a verdict for {parsed}/{args.items} items; (b) scored {cold['status'].eq('ok').sum()}")
    print(f"ratio b/a: {naive / batched:.1f}x   ratio c/b: {batched / rerun:.0f}x")
    write_measurement(args.json, title="LLM judge: one prompt at a time vs batched label probabilities",
                      workload=f"{args.items} UPHELD items, yes/no judge, {backend.name.split(':')[1]}",
                      rows=[{"way": label, "seconds": seconds, "items/s": args.items / seconds}
                            for label, seconds in rows],
                      ratios={"(b) vs (a)": naive / batched, "(c) vs (b)": batched / rerun},
                      notes=[f"(a) parsed a verdict for {parsed} of {args.items} items"])


if __name__ == "__main__":
    main()
