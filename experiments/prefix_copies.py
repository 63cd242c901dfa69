"""Recipe selection, on validation data only: more copy negatives in the prefix form.

Why: ``weight_interpolation.py`` split ``copy_and_context.py``'s copy check by form. The book judge (an eighth of its pairs
are copy negatives, half of them each form) rejects a reply that *is* the previous turn (``parrot``) on 0.875
of 400 validation checks but one that puts the previous turn in front of the real reply (``prefix``, the form
of Khalid & Lee's Speaker Sensitiveness attack) on only 0.168. The prefix form got 1/16 of the training pairs.

Baseline, pinned (:data:`BASELINE`): the book recipe *before* this experiment — ``copy_share =
0.125``, half of each form, ``head_hidden = 64`` (the book adopted ``copy25`` afterwards, so the baseline is not
read from ``RECIPES["book"]``: that would compare the adopted variant with itself).

Variants (fixed before running; everything else is the baseline):
- ``copy25``: ``copy_share = 0.25``, half of each form (prefix 1/8 of the pairs, parrot 1/8);
- ``prefix``: ``copy_share = 0.25``, ``copy_prefix_share = 0.75`` (prefix 3/16, parrot 1/16 as in the book).

Data it may see: the checks of ``weight_interpolation.py`` (:func:`_common.validation_checks`; data no judge
trains on; the Table-1 sets and the attack suite are never scored here). Decision rule, fixed before running
(paired bootstrap, 95%, n = 400 per check): a variant passes if its prefix-form copy-check accuracy is higher
than the book judge's with the interval above 0 and no other check is lower with the interval entirely below
0. If both pass, the book takes the one with the higher prefix-form accuracy.

    EVALKIT_DATA_DIR=../shared/data .venv/bin/python experiments/prefix_copies.py [--smoke]

**Result (2026-12-01, alone on two cores; n = 400 per check; book / copy25 / prefix):** DailyDialog random
0.858 / 0.862 / 0.870; look-alike 0.840 / 0.832 / 0.832; copy check, prefix form 0.168 / 0.410 / 0.285; parrot
form 0.875 / 0.998 / 0.980; Topical-Chat selection 0.810 / 0.792 / 0.792. Paired, copy25 - book: prefix
+0.242 [+0.203, +0.285], parrot +0.122 [+0.092, +0.155], random +0.005 [-0.018, +0.028], look-alike -0.007
[-0.035, +0.018], Topical-Chat -0.018 [-0.043, +0.005]; prefix - book: prefix +0.117 [+0.087, +0.152], parrot
+0.105 [+0.077, +0.135], random +0.013 [-0.007, +0.033], look-alike -0.007 [-0.033, +0.018], Topical-Chat
-0.018 [-0.040, +0.003]. Both pass; **copy25 adopted** (higher prefix-form accuracy): ``EncoderRecipe.copy_share
= 0.25``. Weighting the prefix form did less than more copies of both forms. Training took 368 s / 363 s here
vs the book judge's 254 s recorded by ``copy_and_context.py`` (8.7 vs 12.6 pairs/s; this machine ran slower today, and a
prefix copy is a longer text) — chapter 4's cold book run is the measurement of record.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

import _common as lab
from evalkit.paireval.recipes import EncoderRecipe, JudgeRecipe, LoraRecipe

BASELINE = JudgeRecipe("book-copy-eighth", EncoderRecipe(
    pairs=3200, batch_size=16, learning_rate=5e-5, in_batch_negatives=1.0, context_turns=1, max_tokens=64,
    freeze_embeddings=True, hard_share=0.5, validation_pairs=400, warmup_share=0.1, second_corpus_share=0.0,
    copy_share=0.125, copy_prefix_share=0.5, direct_copy_share=0.0, head_hidden=64), LoraRecipe(), seed=13)

PREFIX = "copy check, prefix form"


def candidates(baseline: JudgeRecipe) -> dict[str, JudgeRecipe]:
    """The baseline and the two variants."""
    def variant(name: str, **changes: Any) -> JudgeRecipe:
        return replace(baseline, name=f"{baseline.name}+{name}", encoder=replace(baseline.encoder, **changes))

    return {"book": baseline, "copy25": variant("copy25", copy_share=0.25),
            "prefix": variant("prefix", copy_share=0.25, copy_prefix_share=0.75)}


def run(*, smoke: bool = False, data_dir=None) -> dict:
    """Train the three, score the checks, apply the rule; the record."""
    baseline = lab.at_size(BASELINE, smoke)
    seed = baseline.seed
    data, corpus = lab.judge_data(seed, data_dir), lab.second_corpus(seed, data_dir)
    checks = lab.validation_checks(data, corpus, seed, lab.check_size(smoke))
    recipes = candidates(baseline)
    judges, timing = {}, {}
    for name, recipe in recipes.items():
        judges[name], timing[name] = lab.train(recipe, data, data_dir=data_dir)
    correct = lab.score(judges, checks)
    fails = {}
    for name in ("copy25", "prefix"):
        gaps = {check: lab.paired(correct[name, check], correct["book", check]) for check in checks}
        fails[name] = ([PREFIX] if gaps[PREFIX]["low"] <= 0 else []) + [
            check for check in checks if check != PREFIX and gaps[check]["high"] < 0]
    passing = {name: float(correct[name, PREFIX].mean()) for name, failed in fails.items() if not failed}
    adopted = [max(passing, key=passing.get)] if passing else []
    return lab.record("prefix_copies", __doc__, smoke=smoke, baseline="book", recipes=recipes, correct=correct,
                      adopted=adopted, fails=fails, timing=timing)


if __name__ == "__main__":
    lab.main(run, __doc__)
