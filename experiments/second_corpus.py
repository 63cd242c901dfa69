"""Recipe selection, on validation data only: does a second training corpus (Topical-Chat's validation files,
leak-cut by ``evalkit.paireval.recipes.second_corpus``) make the encoder judge better?

Compares, at the book recipe's size and settings, the judge trained on DailyDialog alone (the book's) with one
trained on half DailyDialog pairs and half Topical-Chat pairs, on DailyDialog validation pairs (random and
look-alike negatives) and on pairs from Topical-Chat's selection part. The six Table-1 sets are only cut out of
training here, never scored. Decision rule, fixed before running: adopt the mix if its Topical-Chat accuracy is
higher with a paired interval above 0 and its DailyDialog look-alike accuracy is not lower with an interval
below 0.

    EVALKIT_DATA_DIR=../shared/data .venv/bin/python experiments/second_corpus.py
"""
import time
from dataclasses import replace

import numpy as np
import pandas as pd

from evalkit import paireval as pe
from evalkit.paireval import recipes as R
from evalkit.paireval.data import training_pairs


def main() -> None:
    recipe = pe.RECIPES["book"]
    # the book recipe as it was when this ran (session 7: no copy negatives, no relevance head)
    recipe = replace(recipe, encoder=replace(recipe.encoder, copy_share=0.0, head_hidden=0))
    enc, seed = recipe.encoder, recipe.seed
    data = R.judge_data(seed=seed)
    corpus = R.second_corpus(seed=seed)
    print(f"Topical-Chat: {len(corpus.train)} training, {len(corpus.selection)} selection conversations")
    checks = {"DailyDialog validation, random": R.validation_pairs(data, 400, 0.0, seed),
              "DailyDialog validation, look-alike": R.validation_pairs(data, 400, 1.0, seed),
              "Topical-Chat selection, random": training_pairs(corpus.selection, 400, seed=seed + 1)}
    curve = R.validation_pairs(data, enc.validation_pairs, enc.hard_share, seed)

    def fit(pairs: pd.DataFrame, label: str) -> pe.EncoderJudge:
        started = time.time()
        run = pe.train_encoder_judge(pairs, replace(enc, head_hidden=0), validation=curve,
                                     seed=seed)
        print(f"{label}: {'cached' if run.from_cache else 'trained'} in {time.time() - started:.0f} s "
              f"({run.seconds:.0f} s training, {run.pairs_per_second:.1f} pairs/s); curve {run.curve}")
        return pe.EncoderJudge.from_training(run)

    mix = replace(recipe, encoder=replace(enc, second_corpus_share=0.5))
    mixed = R.recipe_pairs(mix, data, hard_share=enc.hard_share)
    judges = {"zero-shot": pe.EncoderJudge(),
              "DailyDialog (book)": fit(R.recipe_pairs(recipe, data, hard_share=enc.hard_share), "DailyDialog"),
              "DailyDialog + Topical-Chat": fit(mixed, "DailyDialog + Topical-Chat")}
    correct = {(name, check): pe.pair_accuracy(judge, frame) for name, judge in judges.items()
               for check, frame in checks.items()}
    print(pd.DataFrame({name: {check: correct[(name, check)].mean() for check in checks} for name in judges}).T
          .round(3).to_string())
    rng = np.random.default_rng(0)
    for check in checks:
        difference = correct[("DailyDialog + Topical-Chat", check)] - correct[("DailyDialog (book)", check)]
        boots = difference[rng.integers(0, len(difference), (2000, len(difference)))].mean(axis=1)
        low, high = np.percentile(boots, [2.5, 97.5])
        print(f"{check}: mix - book {difference.mean():+.3f} [{low:+.3f}, {high:+.3f}] (n = {len(difference)})")


if __name__ == "__main__":
    main()
