"""Recipe selection, on validation data only: does a second training corpus (Topical-Chat's validation files,
leak-cut by ``evalkit.paireval.training_data.second_corpus``) make the encoder judge better?

Compares, at the book recipe's size and settings, the judge trained on DailyDialog alone (the book's) with one
trained on half DailyDialog pairs and half Topical-Chat pairs (``second_corpus_share = 0.5``).

Baseline, pinned (:data:`BASELINE`): the book recipe when this ran — no copy negatives, no
relevance head (``copy_share = 0``, ``head_hidden = 0``), every other field as the book's then.

Data it may see: DailyDialog validation pairs (random and look-alike negatives) and pairs from Topical-Chat's
selection part. The six Table-1 sets are only cut out of training here, never scored. Decision rule, fixed
before running: adopt the mix if its Topical-Chat accuracy is higher with a paired interval above 0 and its
DailyDialog look-alike accuracy is not lower with an interval below 0.

    EVALKIT_DATA_DIR=../shared/data .venv/bin/python experiments/second_corpus.py [--smoke]

**Result (2026-11-30, alone, n = 400 pairs each; copied from docs/DEVELOPMENT.md at c813c6c):** DailyDialog
random 0.860 vs 0.860 (+0.000 [-0.025, +0.025]); DailyDialog look-alike 0.855 (book) vs 0.832 (mix), -0.022
[-0.045, +0.000]; Topical-Chat selection pairs 0.808 vs 0.818, +0.010 [-0.015, +0.035] (the untrained
encoder: 0.808). **Not adopted**: the mix does not learn Topical-Chat's pairs better than DailyDialog alone and
loses some of the look-alike skill (half the hard negatives). Training ran at 10.3 pairs/s (Topical-Chat turns
are longer) vs 11.4.
"""
from __future__ import annotations

from dataclasses import replace

import _common as lab
from evalkit.paireval.recipes import EncoderRecipe, JudgeRecipe, LoraRecipe

BASELINE = JudgeRecipe("book-no-copies", EncoderRecipe(
    pairs=3200, batch_size=16, learning_rate=5e-5, in_batch_negatives=1.0, context_turns=1, max_tokens=64,
    freeze_embeddings=True, hard_share=0.5, validation_pairs=400, warmup_share=0.1, second_corpus_share=0.0,
    copy_share=0.0, copy_prefix_share=0.5, direct_copy_share=0.0, head_hidden=0), LoraRecipe(), seed=13)

TOPICAL, LOOK_ALIKE = "Topical-Chat selection, random", "DailyDialog validation, look-alike"


def candidates(baseline: JudgeRecipe) -> dict[str, JudgeRecipe]:
    """DailyDialog alone (the baseline) and the half-and-half mix."""
    mix = replace(baseline, name=f"{baseline.name}+topical-chat",
                  encoder=replace(baseline.encoder, second_corpus_share=0.5))
    return {"DailyDialog (book)": baseline, "DailyDialog + Topical-Chat": mix}


def run(*, smoke: bool = False, data_dir=None) -> dict:
    """Train both, score the checks, apply the rule; the record."""
    baseline = lab.at_size(BASELINE, smoke)
    seed = baseline.seed
    data, corpus = lab.judge_data(seed, data_dir), lab.second_corpus(seed, data_dir)
    checks = lab.validation_checks(data, corpus, seed, lab.check_size(smoke), copy_forms=())
    recipes = candidates(baseline)
    judges, timing = {"zero-shot": lab.zero_shot()}, {}
    for name, recipe in recipes.items():
        judges[name], timing[name] = lab.train(recipe, data, data_dir=data_dir)
    correct = lab.score(judges, checks)
    topical = lab.paired(correct["DailyDialog + Topical-Chat", TOPICAL], correct["DailyDialog (book)", TOPICAL])
    look_alike = lab.paired(correct["DailyDialog + Topical-Chat", LOOK_ALIKE],
                            correct["DailyDialog (book)", LOOK_ALIKE])
    fails = [check for check, failed in ((TOPICAL, topical["low"] <= 0), (LOOK_ALIKE, look_alike["high"] < 0))
             if failed]
    return lab.record("second_corpus", __doc__, smoke=smoke, baseline="DailyDialog (book)", recipes=recipes,
                      correct=correct, adopted=[] if fails else ["DailyDialog + Topical-Chat"],
                      fails={"DailyDialog + Topical-Chat": fails}, timing=timing,
                      corpus={"train": len(corpus.train), "selection": len(corpus.selection)})


if __name__ == "__main__":
    lab.main(run, __doc__)
