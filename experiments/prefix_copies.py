"""Recipe selection, on validation data only: more copy negatives in the prefix form.

Why: ``weight_interpolation.py`` split session 8's copy check by form. The book judge (an eighth of its pairs
are copy negatives, half of them each form) rejects a reply that *is* the previous turn (``parrot``) on 0.875
of 400 validation checks but one that puts the previous turn in front of the real reply (``prefix``, the form
of Khalid & Lee's Speaker Sensitiveness attack) on only 0.168. The prefix form got 1/16 of the training pairs.

Variants (fixed before running; everything else is the book recipe):
- ``copy25``: ``copy_share = 0.25``, half of each form (prefix 1/8 of the pairs, parrot 1/8);
- ``prefix``: ``copy_share = 0.25``, ``copy_prefix_share = 0.75`` (prefix 3/16, parrot 1/16 as in the book).

Checks as in ``weight_interpolation.py`` (data no judge trains on; the Table-1 sets and the attack suite are
never scored here). Decision rule, fixed before running (paired bootstrap, 95%, n = 400 per check): a variant
passes if its prefix-form copy-check accuracy is higher than the book judge's with the interval above 0 and no
other check is lower with the interval entirely below 0. If both pass, the book takes the one with the higher
prefix-form accuracy.

    EVALKIT_DATA_DIR=../shared/data .venv/bin/python experiments/prefix_copies.py

**Result (session 9, alone on two cores; n = 400 per check; book / copy25 / prefix):** DailyDialog random
0.858 / 0.862 / 0.870; look-alike 0.840 / 0.832 / 0.832; copy check, prefix form 0.168 / 0.410 / 0.285; parrot
form 0.875 / 0.998 / 0.980; Topical-Chat selection 0.810 / 0.792 / 0.792. Paired, copy25 - book: prefix
+0.242 [+0.203, +0.285], parrot +0.122 [+0.092, +0.155], random +0.005 [-0.018, +0.028], look-alike -0.007
[-0.035, +0.018], Topical-Chat -0.018 [-0.043, +0.005]; prefix - book: prefix +0.117 [+0.087, +0.152], parrot
+0.105 [+0.077, +0.135], random +0.013 [-0.007, +0.033], look-alike -0.007 [-0.033, +0.018], Topical-Chat
-0.018 [-0.040, +0.003]. Both pass; **copy25 adopted** (higher prefix-form accuracy): ``EncoderRecipe.copy_share
= 0.25``. Weighting the prefix form did less than more copies of both forms. Training took 368 s / 363 s here
vs the book judge's 254 s recorded in session 8 (8.7 vs 12.6 pairs/s; this machine ran slower today, and a
prefix copy is a longer text) — chapter 4's cold book run is the measurement of record.
"""
import time
from dataclasses import replace

import pandas as pd

from evalkit import paireval as pe
from evalkit.paireval import recipes as R
from weight_interpolation import paired, validation_checks


def main() -> None:
    recipe = pe.RECIPES["book"]
    seed = recipe.seed
    data = R.judge_data(seed=seed)
    corpus = R.second_corpus(seed=seed)
    checks = validation_checks(data, corpus, seed)
    variants = {"book": recipe.encoder, "copy25": replace(recipe.encoder, copy_share=0.25),
                "prefix": replace(recipe.encoder, copy_share=0.25, copy_prefix_share=0.75)}
    judges = {}
    for name, settings in variants.items():
        started = time.time()
        run = pe.train_judge(replace(recipe, encoder=settings), data=data)
        print(f"{name}: {'cached' if run.from_cache else 'trained'} in {time.time() - started:.0f} s "
              f"({run.seconds:.0f} s training, {run.pairs_per_second:.1f} pairs/s)", flush=True)
        judges[name] = pe.EncoderJudge.from_training(run)
    correct = {(name, check): pe.pair_accuracy(judge, frame) for name, judge in judges.items()
               for check, frame in checks.items()}
    print(pd.DataFrame({name: {check: correct[(name, check)].mean() for check in checks} for name in judges}).T
          .round(3).to_string())
    passing = {}
    for name in ("copy25", "prefix"):
        ok = True
        for check in checks:
            difference, low, high = paired(correct[(name, check)], correct[("book", check)])
            fails = low <= 0 if check == "copy check, prefix form" else high < 0
            ok &= not fails
            print(f"{name} - book, {check}: {difference:+.3f} [{low:+.3f}, {high:+.3f}]"
                  f"{'  <- fails the rule' if fails else ''}")
        if ok:
            passing[name] = correct[(name, "copy check, prefix form")].mean()
    print("passing:", passing, "-> adopt:", max(passing, key=passing.get) if passing else None)


if __name__ == "__main__":
    main()
