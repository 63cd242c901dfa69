"""Judge selection on people's scores (dev halves): do people's preferences on *other* sets teach the encoder
judge what synthetic pairs do not?

Question: every recipe so far trained on synthetic pairs (a real reply against a random, look-alike or copied
one), and the trained judge is barely above the untrained cosine on people's scores. The dev halves hold
people's own preferences: two replies whose mean human scores differ. Does fine-tuning the book's PairEval
judge further on them help on a set whose people it has *not* seen? The hidden sets the kit is also measured
on are such sets, so the estimate is leave-one-set-out: for each of the six Table-1 sets, a judge trained on
the pairs of the other five dev halves scores that set's dev half.

Data it may see: the *dev* halves of the six Table-1 sets (:mod:`evalkit.stats.halves`), for training and the
decision; DailyDialog validation pairs for a constraint. Each fold's training pairs are cut by text
(:func:`_human_pairs.human_preference_pairs` drops any item sharing a held-out unit) against
the scored set's own dev half and :func:`~_human_pairs.people_held_out`: every test half,
UPHELD's three sets and Topical-Chat's test files whole, and the synthetic judge data's held-out sources (DailyDialog
test and validation, DailyDialog++ test and held-out dev, the attack suite). Never a test half is scored. If
``people`` were adopted, the book's judge would train on the dev halves of the two DailyDialog Table-1 sets,
which the synthetic data hold out whole: chapter 4 would have to report those two sets' test halves as
in-domain for it.

Candidates, cheapest first (the baseline pinned here):
  1. ``scoring``: the book's PairEval judge (``BASELINE``, the book's encoder recipe when this ran);
  2. ``people``: the same judge (encoder, relevance head, scale and bias) trained further, one pass, on up to
     ``PER_SET`` = 240 pairs from each of the other five dev halves (a gap of at least 0.5 of the SD of the set's
     items left after the cut; half replies to one context and half replies to different contexts where a set
     has enough of each, else topped up with the other kind; 1,200 pairs at most), recipe ``PEOPLE`` (learning
     rate 2e-5, batch 16, no in-batch negatives — another reply in the batch may be one people liked —, as the
     book's otherwise).
Both score the dev halves as chapter 4 scores Table 1: PairEval with 3 comparison examples x 5 runs from 8
DailyDialog validation conversations, seed 13.

Rule, fixed before the run (:data:`evalkit.stats.selection.RULE`): ``people`` is adopted when its six-set mean
Pearson r on the dev halves (each set scored by the fold that did not train on it) is higher by a paired 95%
bootstrap interval excluding 0 — and (constraint) the mean over the six folds of its accuracy on DailyDialog
validation pairs with random and with look-alike negatives is not lower by more than 0.05 on either.

    EVALKIT_DATA_DIR=../shared/data .venv/bin/python experiments/human_preferences.py [--smoke]

**Result (2026-12-01, alone on two cores; 531 s for the six folds, 43-64 s of training each):** on
the dev halves (6 sets, n = 1,262 items) mean Pearson r scoring 0.296, people 0.265; people minus scoring
-0.031 [-0.054, -0.008] (did not clear it: it is *worse*, by an interval that excludes 0). Lower on every set
(scoring / people): dailydialog-grade 0.298 / 0.270, convai2-grade 0.502 / 0.427, dailydialog-zhao 0.309 /
0.294, personachat-usr 0.314 / 0.294, topicalchat-usr 0.283 / 0.270, fed 0.071 / 0.038. The folds trained on
967-1,200 pairs (361-481 of them same-context); the text cut removed 203-340 dev items per fold, most of the
two DailyDialog sets' (their contexts come from DailyDialog test, which chapter 4's held-out pairs use).
DailyDialog validation pairs (n = 400 each; mean over the folds): random 0.863 / 0.833, look-alike 0.833 /
0.778 — a drop of 0.055, past the constraint's 0.05 too. **Not adopted**: a few hundred pairs of other
people's preferences, on other sets' conversations, teach the judge those sets' tastes (the dev Pearson of a
set it did not see falls) and cost it some of what the synthetic pairs taught.
"""
from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

import _common as lab
from evalkit import paireval as pe
from _human_pairs import human_preference_pairs, people_held_out
from evalkit.paireval.recipes import EncoderRecipe, JudgeRecipe, LoraRecipe

PER_SET = 240
BASELINE = JudgeRecipe("scoring", EncoderRecipe(
    pairs=3200, batch_size=16, learning_rate=5e-5, in_batch_negatives=1.0, context_turns=1, max_tokens=64,
    freeze_embeddings=True, hard_share=0.5, validation_pairs=400, curve_points=4, second_corpus_share=0.0,
    copy_share=0.25, copy_prefix_share=0.5, direct_copy_share=0.0, head_hidden=64, warmup_share=0.1, domains=(),
    domain_share=0.0, backbone="minilm"), LoraRecipe(), seed=13)
PEOPLE = EncoderRecipe(pairs=PER_SET * 5, batch_size=16, learning_rate=2e-5, in_batch_negatives=0.0,
                       context_turns=1, max_tokens=64, freeze_embeddings=True, validation_pairs=400, curve_points=2,
                       head_hidden=64, warmup_share=0.1, backbone="minilm")
SMOKE = JudgeRecipe("scoring-smoke", EncoderRecipe(pairs=64, validation_pairs=48), LoraRecipe())


def run(*, smoke: bool = False, data_dir=None, items: int | None = None) -> dict:
    """Train one fold per set on the other sets' people's pairs, score each set's dev half with its fold and
    with the baseline, decide by the rule; the record."""
    recipe = SMOKE if smoke else BASELINE
    data, dev, pool, checks = lab.dev_setup(recipe, smoke=smoke, data_dir=data_dir, items=items)
    base_run = pe.train_judge(recipe, data=data, data_dir=data_dir)
    base = pe.EncoderJudge.from_training(base_run)
    held = [turns for conversations in people_held_out(data, data_dir=data_dir).values() for turns in conversations]
    per_set = 8 if smoke else PER_SET
    people = replace(PEOPLE, pairs=per_set * 5,
                     **({"validation_pairs": 16, "curve_points": 1, "batch_size": 8} if smoke else {}))
    n, runs = (2, 2) if smoke else (3, 5)
    scores, folds, accuracy = {}, {}, {"scoring": {}, "people": {}}
    for name, values in lab.dev_scores(base, dev, pool, smoke=smoke).items():
        scores["scoring", name] = values
    accuracy["scoring"] = lab.check_accuracy(base, checks)
    fold_accuracy = {kind: [] for kind in checks}
    started = time.time()
    for name, half in dev.items():
        others = {other: h for other, h in dev.items() if other != name}
        own = [[*map(str, c), str(r)] for c, r in zip(half.items["context"], half.items["response"])]
        made = human_preference_pairs(others, per_set=per_set, margin_sd=0.5, same_context_share=0.5, seed=13,
                                      held_out=[*held, *own])
        if len(made.pairs) < people.batch_size:
            raise ValueError(f"fold {name}: {len(made.pairs)} pairs of people's preferences (by set: "
                             f"{made.pairs['set'].value_counts().to_dict()}) is less than one batch of "
                             f"{people.batch_size}")
        fold_run = pe.encoder.train_encoder_judge(
            made.pairs, people, kind="pairwise", seed=13, model=base_run.model_dir,
            validation=pe.training_data.validation_pairs(data, people.validation_pairs, 0.5, recipe.seed))
        judge = pe.EncoderJudge.from_training(fold_run)
        scores["people", name] = pe.table1.judge_scores(half.items, judge, pool, n=n, runs=runs, seed=13)["paireval"]
        for kind, pairs in checks.items():
            fold_accuracy[kind].append(float(np.mean(pe.encoder.pair_accuracy(judge, pairs))))
        folds[name] = {"pairs": len(made.pairs), "same_context": int(made.pairs["same_context"].sum()),
                       "dropped_items": made.dropped, "seconds": fold_run.seconds, "reused": fold_run.from_cache,
                       "curve": fold_run.curve}
    accuracy["people"] = {kind: float(np.mean(values)) for kind, values in fold_accuracy.items()}
    record = lab.decide(dev, scores, accuracy, "scoring", "people", smoke=smoke,
                        question="Do people's preferences on the other sets make the judge agree better with "
                                 "people on a set it has not seen?")
    return {**record, "folds": folds, "wall_seconds": time.time() - started,
            "fold_validation_accuracy": fold_accuracy}


if __name__ == "__main__":
    lab.main(run, __doc__, show=lab.decision_lines)
