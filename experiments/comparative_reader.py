"""Judge selection on people's scores (dev halves): does a judge that reads both sides beat the one that scores
each side alone?

Question: the book's PairEval judge compares two conversations through a difference of two pointwise scores,
so comparing adds nothing to scoring. The comparative reader (:mod:`evalkit.paireval.reader`) keeps that
comparison as its base and adds a head that attends from each side's tokens to the other's, trained on the
same leak-cut pairs in both orders. Does it agree better with people?

Data it may see: the *dev* halves of the six Table-1 sets (:mod:`evalkit.stats.halves`) for the decision; DailyDialog
validation pairs for a constraint. Never a test half (``choose_on_dev`` refuses one).

Candidates, cheapest first (the baseline pinned here):
  1. ``scoring``: the book's PairEval judge (``BASELINE``, the book's encoder recipe when this ran);
  2. ``reading``: the comparative reader over it (``READER``: width 64, hidden 64, 48 tokens a side, 2 epochs,
     batch 32, learning rate 1e-3).
Both score the dev halves as chapter 4 scores Table 1: PairEval with 3 comparison examples x 5 runs from 8
DailyDialog validation conversations, seed 13.

Rule, fixed before the run (:data:`evalkit.stats.selection.RULE`): ``reading`` is adopted when its six-set mean
Pearson r on the dev halves is higher by a paired 95% bootstrap interval excluding 0 — and (constraint) its
accuracy on DailyDialog validation pairs with random and with look-alike negatives is not lower by more than
0.05 on either. Its position bias (mean P(target wins) shown first minus shown second over the dev items'
pairwise matrices) is reported either way.

    EVALKIT_DATA_DIR=../shared/data .venv/bin/python experiments/comparative_reader.py [--smoke]

**Result (2026-12-01; run beside other processes, so its seconds are not a measurement):** on the
dev halves (6 sets, n = 1,262 items) mean Pearson r scoring 0.296, reading 0.288; reading minus scoring -0.008
[-0.028, +0.013] (did not clear it). DailyDialog validation pairs (n = 400 each): random 0.863 / 0.807 (a drop
of 0.055, past the constraint's 0.05), look-alike 0.833 / 0.820. The reader's validation accuracy fell while
it trained (0.840 at the start, where it equals the scoring judge, to 0.818 after 12,800 ordered pairs): the
head learns the training pairs' tells, not what generalises. Position bias on the dev items: +0.019 (P(target
wins) shown first minus shown second). **Not adopted**: at this size, and trained on synthetic pairs, reading
both sides adds nothing that scoring lacks; chapter 4 keeps it as a candidate and reports the comparison on
the test halves.
"""
from __future__ import annotations

import time

import numpy as np

import _common as lab
from evalkit import paireval as pe
from evalkit.paireval.recipes import EncoderRecipe, JudgeRecipe, LoraRecipe, ReaderRecipe
from evalkit.paireval.reader import ComparativeReader, train_comparative_reader
from evalkit.paireval.training_data import recipe_pairs

READER = ReaderRecipe(width=64, hidden=64, max_tokens=48, epochs=2, batch_size=32, learning_rate=1e-3,
                      warmup_share=0.1, curve_points=4)
BASELINE = JudgeRecipe("scoring", EncoderRecipe(
    pairs=3200, batch_size=16, learning_rate=5e-5, in_batch_negatives=1.0, context_turns=1, max_tokens=64,
    freeze_embeddings=True, hard_share=0.5, validation_pairs=400, curve_points=4, second_corpus_share=0.0,
    copy_share=0.25, copy_prefix_share=0.5, direct_copy_share=0.0, head_hidden=64, warmup_share=0.1, domains=(),
    domain_share=0.0, backbone="minilm"), LoraRecipe(), seed=13, reader=READER)
SMOKE = JudgeRecipe("scoring-smoke", EncoderRecipe(pairs=64, validation_pairs=48), LoraRecipe(),
                    reader=ReaderRecipe(epochs=1, batch_size=16, curve_points=2))


def position_bias(matrices: list[np.ndarray]) -> float:
    """Mean P(target wins) shown first minus shown second, over every cell of the matrices."""
    return float(np.mean([np.nanmean(m[..., 0] - m[..., 1]) for m in matrices]))


def run(*, smoke: bool = False, data_dir=None, items: int | None = None) -> dict:
    """Train the reader over the baseline judge, score the dev halves, decide by the rule; the record."""
    recipe = SMOKE if smoke else BASELINE
    data, dev, pool, checks = lab.dev_setup(recipe, smoke=smoke, data_dir=data_dir, items=items)
    base_run = pe.train_judge(recipe, data=data, data_dir=data_dir)
    base = pe.EncoderJudge.from_training(base_run)
    started = time.time()
    reader_run = train_comparative_reader(
        recipe_pairs(recipe, data, hard_share=recipe.encoder.hard_share, data_dir=data_dir), base, recipe.reader,
        base_key=base_run.key, validation=pe.training_data.validation_pairs(data, recipe.encoder.validation_pairs,
                                                              recipe.encoder.hard_share, recipe.seed),
        seed=recipe.seed)
    judges = {"scoring": base, "reading": ComparativeReader.from_training(reader_run, base)}
    timing = {"reader_training_seconds": reader_run.seconds, "reused": reader_run.from_cache,
              "wall_seconds": time.time() - started}
    scores, constraint, matrices = {}, {}, {"reading": []}
    for label, judge in judges.items():
        for name, half in dev.items():
            result = pe.table1.judge_scores(half.items, judge, pool, n=2 if smoke else 3, runs=2 if smoke else 5, seed=13)
            scores[label, name] = result["paireval"]
            if label == "reading":
                matrices["reading"].append(result["matrix"])
        constraint[label] = lab.check_accuracy(judge, checks)
    record = lab.decide(dev, scores, constraint, "scoring", "reading", smoke=smoke,
                        question="Does a judge that reads both sides beat one that scores each side alone?")
    return {**record, "timing": timing, "position_bias": position_bias(matrices["reading"]), "curve": reader_run.curve}


if __name__ == "__main__":
    lab.main(run, __doc__, show=lab.decision_lines)
