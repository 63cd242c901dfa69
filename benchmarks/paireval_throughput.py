"""PairEval throughput on the same data and model, measured in one run.

Scoring — PairEval scores of M items against N comparison examples, both orders (2·M·N prompts):
  (a) one pair at a time: one label-probability call per prompt, each prompt computed whole — the naive way;
  (b) one batched call (the kit's way): prompts ordered so that those opening alike follow each other and
      reuse the key/value cache of their shared prefix (the comparison conversation, or the target);
  (c) (b) through the call cache, warm — what a rerun or a resumed run costs.
Training — LoRA steps on the same pairs: (d) one pair per step, (e) ``--batch-size`` pairs per step (the
previous book judge's settings); then the kit's judge recipe (``RECIPES["book"]``, the MiniLM encoder trained
pairwise) on ``--encoder-pairs`` pairs of the same data: (f) every weight trained, (g) with the word
embeddings frozen as the recipe does.

Prints prompts/s (scoring), pairs/s (training) and the ratios b/a, c/b, e/d and g/e.

    python benchmarks/paireval_throughput.py [--items 12] [--comparisons 3] [--steps 4] [--batch-size 4]
                                             [--encoder-pairs 320]

Uses UPHELD items and DailyDialog (``$EVALKIT_DATA_DIR`` or the download cache) and the default model.
"""
from __future__ import annotations

from dataclasses import replace

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from evalkit.book.benchpage import write_measurement
from evalkit.models.cache import CallCache
from evalkit.models import CachedBackend, TransformersBackend
from evalkit.paireval import RECIPES, LMJudge, pairwise_matrix, train_encoder_judge
from evalkit.paireval.data import corpus_comparisons, training_corpus, training_pairs
from evalkit.paireval.prompts import pair_messages
from evalkit.paireval.training import train_lora
from evalkit.paireval.schema import upheld_meta_eval


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=12)
    parser.add_argument("--comparisons", type=int, default=3)
    parser.add_argument("--steps", type=int, default=4, help="training steps in (e); (d) runs steps x batch")
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--encoder-pairs", type=int, default=320, help="pairs for (f) and (g)")
    parser.add_argument("--model", default=None, help="local folder or HF id (default: SmolLM2-135M)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", help="also write the measurement here (for the book's Performance page)")
    args = parser.parse_args()

    items = upheld_meta_eval("main").sample(args.items, random_state=args.seed)
    _, validation = training_corpus("validation")
    comparisons = corpus_comparisons(validation, args.comparisons, seed=args.seed)
    contexts, responses = list(items["context"]), list(items["response"])
    prompts = 2 * args.items * args.comparisons
    print(f"{args.items} UPHELD items x {args.comparisons} comparison examples x 2 orders = {prompts} prompts")

    whole = TransformersBackend(args.model, share_prefixes=False)

    class OneAtATime:
        name = whole.name

        def label_probs(self, batch, labels):
            return [whole.label_probs([prompt], labels)[0] for prompt in batch]

    started = time.perf_counter()
    naive = pairwise_matrix(contexts, responses, comparisons, LMJudge(OneAtATime()))
    one_at_a_time = time.perf_counter() - started

    shared = TransformersBackend(args.model)
    with tempfile.TemporaryDirectory() as folder:
        cached = CachedBackend(shared, CallCache(Path(folder) / "calls.sqlite"))
        started = time.perf_counter()
        batched = pairwise_matrix(contexts, responses, comparisons, LMJudge(cached))
        kit = time.perf_counter() - started
        started = time.perf_counter()
        again = pairwise_matrix(contexts, responses, comparisons, LMJudge(cached))
        rerun = time.perf_counter() - started
    difference = float(np.nanmax(np.abs(naive - batched)))
    assert difference < 1e-4 and np.array_equal(again, batched, equal_nan=True), "all three must agree"

    _, train = training_corpus("train")
    pairs = training_pairs(train, args.steps * args.batch_size, seed=args.seed)
    messages = [pair_messages(r.context_a, r.response_a, r.context_b, r.response_b) for r in pairs.itertuples()]
    with tempfile.TemporaryDirectory() as folder:
        single = train_lora(messages, list(pairs["better"]), steps=args.steps * args.batch_size, batch_size=1,
                            model=args.model, output_dir=Path(folder) / "one", reuse=False)
        grouped = train_lora(messages, list(pairs["better"]), steps=args.steps, batch_size=args.batch_size,
                             model=args.model, output_dir=Path(folder) / "batch", reuse=False)
    single_rate, batch_rate = 1 / single.seconds_per_step, args.batch_size / grouped.seconds_per_step
    recipe = RECIPES["book"].encoder
    encoder_pairs = training_pairs(train, args.encoder_pairs, seed=args.seed)
    encoder_rates = {}
    for frozen in (False, True):
        with tempfile.TemporaryDirectory() as folder:
            run = train_encoder_judge(encoder_pairs, replace(recipe, freeze_embeddings=frozen), output_dir=folder,
                                      reuse=False)
        encoder_rates[frozen] = run.pairs_per_second

    rows = [("(a) scoring, one pair at a time", one_at_a_time), ("(b) scoring, batched + shared prefixes", kit),
            ("(c) (b) with a warm cache", rerun)]
    for label, seconds in rows:
        print(f"{label:42s} {seconds:8.3f} s  {prompts / seconds:10.1f} prompts/s")
    print(f"{'(d) training, 1 pair per step':42s} {single.seconds_per_step:8.3f} s/step {single_rate:8.2f} pairs/s")
    print(f"{f'(e) training, {args.batch_size} pairs per step':42s} {grouped.seconds_per_step:8.3f} s/step "
          f"{batch_rate:8.2f} pairs/s")
    print(f"{'(f) encoder judge, all weights trained':42s} {encoder_rates[False]:8.2f} pairs/s")
    print(f"{'(g) encoder judge, embeddings frozen':42s} {encoder_rates[True]:8.2f} pairs/s")
    print(f"largest probability difference (a) vs (b): {difference:.1e}")
    print(f"ratio b/a: {one_at_a_time / kit:.2f}x   ratio c/b: {kit / rerun:.0f}x   ratio e/d: "
          f"{batch_rate / single_rate:.2f}x   ratio g/e: {encoder_rates[True] / batch_rate:.1f}x")
    write_measurement(
        args.json, title="PairEval: scoring and LoRA training throughput",
        workload=f"{args.items} UPHELD items x {args.comparisons} comparison examples x 2 orders = {prompts} prompts; "
                 f"LoRA training on {args.steps * args.batch_size} DailyDialog pairs",
        rows=[{"way": label, "seconds": seconds, "prompts/s": prompts / seconds} for label, seconds in rows]
        + [{"way": "(d) training, 1 pair per step", "seconds": single.seconds_per_step, "pairs/s": single_rate},
           {"way": f"(e) training, {args.batch_size} pairs per step", "seconds": grouped.seconds_per_step,
            "pairs/s": batch_rate},
           {"way": "(f) encoder judge, all weights trained", "seconds": 1 / encoder_rates[False],
            "pairs/s": encoder_rates[False]},
           {"way": "(g) encoder judge, embeddings frozen (the recipe)", "seconds": 1 / encoder_rates[True],
            "pairs/s": encoder_rates[True]}],
        ratios={"(b) vs (a)": one_at_a_time / kit, "(c) vs (b)": kit / rerun, "(e) vs (d)": batch_rate / single_rate,
                "(g) vs (e)": encoder_rates[True] / batch_rate},
        notes=[f"largest probability difference (a) vs (b): {difference:.1e}",
               "training rows (d)-(e) give seconds per step, (f)-(g) seconds per pair",
               f"(f)-(g): {args.encoder_pairs} pairs, batch {recipe.batch_size}, one pass"])


if __name__ == "__main__":
    main()
