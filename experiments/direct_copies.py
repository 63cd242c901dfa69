"""Recipe selection, on validation data only: how many copy negatives DirectEval (the pointwise judge) trains on.

Why: ``prefix_copies.py`` raised the recipe's ``copy_share`` from an eighth to a quarter by checks on the
*pairwise* judge only; DirectEval shares the recipe and was not checked. In the first book run with a quarter
(session 9) DirectEval's own learning curve — accuracy on the recipe's validation pairs, recorded while it
trains — went *down*, 0.802 before training to 0.715 after 3,200 pairs, while the pairwise judge's went up
(0.802 -> 0.840). A pointwise judge trained to say "no" to a reply that repeats its context learns to score
closeness to the context down, which is most of what a relevance score ranks by; a pairwise judge sees the copy
beside a real reply and can learn the difference. (That run's test figures were seen before this experiment
was written; the choice below uses validation pairs only.)

Variants: DirectEval with ``copy_share`` 0, 0.125 (session 8's book) and 0.25 (the recipe now); everything else
the book recipe. Checks: DailyDialog validation pairs with random and look-alike negatives (n = 400 each; the
two halves of the learning curve's pairs) and the two copy-check forms (``weight_interpolation.copy_check``).

Decision rule, fixed before running: DirectEval takes the copy share with the highest mean accuracy over the
random and look-alike checks; where two are within 0.01 of each other, the larger share (it resists copying
better, the attack checks say how much). The pairwise judge keeps 0.25 (its own rule).

    EVALKIT_DATA_DIR=../shared/data .venv/bin/python experiments/direct_copies.py

**Result (session 9, alone on two cores; n = 400 per check; copy share 0 / 0.125 / 0.25):** random 0.825 /
0.782 / 0.618; look-alike 0.848 / 0.805 / 0.730 (means 0.836 / 0.794 / 0.674); copy prefix 0.000 / 0.000 /
0.108; parrot 0.000 / 0.000 / 0.000. Learning curves (validation accuracy before -> after 3,200 pairs): 0.802
-> 0.858 / 0.823 / 0.715. **Chosen: 0** (``EncoderRecipe.direct_copy_share = 0``). Copy negatives do not even
teach the pointwise judge to reject copies; they only cost it the ranking.
"""
import time
from dataclasses import replace

import pandas as pd

from evalkit import paireval as pe
from evalkit.paireval import recipes as R
from weight_interpolation import copy_check

SHARES = (0.0, 0.125, 0.25)


def main() -> None:
    recipe = pe.RECIPES["book"]
    seed = recipe.seed
    data = R.judge_data(seed=seed)
    checks = {"random": R.validation_pairs(data, 400, 0.0, seed),
              "look-alike": R.validation_pairs(data, 400, 1.0, seed),
              "copy, prefix": copy_check(data.validation, 400, seed + 2, "prefix"),
              "copy, parrot": copy_check(data.validation, 400, seed + 3, "parrot")}
    rows = {}
    for share in SHARES:
        started = time.time()
        run = pe.train_judge(replace(recipe, encoder=replace(recipe.encoder, direct_copy_share=share)), kind="direct",
                             data=data)
        print(f"DirectEval, copy share {share}: {'cached' if run.from_cache else 'trained'} in "
              f"{time.time() - started:.0f} s; curve {[round(p['accuracy'], 3) for p in run.curve]}", flush=True)
        judge = pe.EncoderJudge.from_training(run)
        rows[share] = {check: float(pe.pair_accuracy(judge, frame).mean()) for check, frame in checks.items()}
    table = pd.DataFrame(rows).T
    table["mean of random and look-alike"] = table[["random", "look-alike"]].mean(axis=1)
    print(table.round(3).to_string())
    score = table["mean of random and look-alike"]
    best = max(s for s in SHARES if score[s] >= score.max() - 0.01)
    print("DirectEval copy share chosen:", best)


if __name__ == "__main__":
    main()
