"""Recipe selection, on validation data only: how many copy negatives DirectEval (the pointwise judge) trains on.

Why: ``prefix_copies.py`` raised the recipe's ``copy_share`` from an eighth to a quarter by checks on the
*pairwise* judge only; DirectEval shares the recipe and was not checked. In the first book run with a quarter
(2026-12-01) DirectEval's own learning curve — accuracy on the recipe's validation pairs, recorded while it
trains — went *down*, 0.802 before training to 0.715 after 3,200 pairs, while the pairwise judge's went up
(0.802 -> 0.840). A pointwise judge trained to say "no" to a reply that repeats its context learns to score
closeness to the context down, which is most of what a relevance score ranks by; a pairwise judge sees the copy
beside a real reply and can learn the difference. (That run's test figures were seen before this experiment
was written; the choice below uses validation pairs only.)

Baseline, pinned (:data:`BASELINE`): the book recipe after ``prefix_copies.py`` — ``copy_share =
0.25``, ``head_hidden = 64`` — with DirectEval on the same quarter of copy negatives, as it then trained
(``direct_copy_share = 0.25``; the field was added by this experiment's decision).

Variants: DirectEval with ``direct_copy_share`` 0, 0.125 (the book's before ``prefix_copies.py``) and 0.25 (the baseline); everything
else the baseline. Data it may see: DailyDialog validation pairs with random and look-alike negatives (n = 400
each; the two halves of the learning curve's pairs) and the two copy-check forms (:func:`_common.copy_check`).

Decision rule, fixed before running: DirectEval takes the copy share with the highest mean accuracy over the
random and look-alike checks; where two are within 0.01 of each other, the larger share (it resists copying
better, the attack checks say how much). The pairwise judge keeps 0.25 (its own rule).

    EVALKIT_DATA_DIR=../shared/data .venv/bin/python experiments/direct_copies.py [--smoke]

**Result (2026-12-01, alone on two cores; n = 400 per check; copy share 0 / 0.125 / 0.25):** random 0.825 /
0.782 / 0.618; look-alike 0.848 / 0.805 / 0.730 (means 0.836 / 0.794 / 0.674); copy prefix 0.000 / 0.000 /
0.108; parrot 0.000 / 0.000 / 0.000. Learning curves (validation accuracy before -> after 3,200 pairs): 0.802
-> 0.858 / 0.823 / 0.715. **Chosen: 0** (``EncoderRecipe.direct_copy_share = 0``). Copy negatives do not even
teach the pointwise judge to reject copies; they only cost it the ranking.
"""
from __future__ import annotations

from dataclasses import replace

import _common as lab
from evalkit.paireval.recipes import EncoderRecipe, JudgeRecipe, LoraRecipe

BASELINE = JudgeRecipe("book-copy-quarter-direct", EncoderRecipe(
    pairs=3200, batch_size=16, learning_rate=5e-5, in_batch_negatives=1.0, context_turns=1, max_tokens=64,
    freeze_embeddings=True, hard_share=0.5, validation_pairs=400, warmup_share=0.1, second_corpus_share=0.0,
    copy_share=0.25, copy_prefix_share=0.5, direct_copy_share=0.25, head_hidden=64), LoraRecipe(), seed=13)

SHARES = (0.0, 0.125, 0.25)
RANKING = ("DailyDialog validation, random", "DailyDialog validation, look-alike")


def candidates(baseline: JudgeRecipe) -> dict[str, JudgeRecipe]:
    """DirectEval at each copy share, by the share's name; the baseline's share is one of them."""
    return {f"{share:g}": baseline if share == baseline.encoder.direct_copy_share else replace(
        baseline, name=f"{baseline.name}@{share:g}", encoder=replace(baseline.encoder, direct_copy_share=share))
        for share in SHARES}


def choose(means: dict[float, float]) -> float:
    """The rule: the largest share whose mean is within 0.01 of the best.

    >>> choose({0.0: 0.836, 0.125: 0.794, 0.25: 0.674}), choose({0.0: 0.80, 0.125: 0.805, 0.25: 0.70})
    (0.0, 0.125)
    """
    return max(share for share, mean in means.items() if mean >= max(means.values()) - 0.01)


def run(*, smoke: bool = False, data_dir=None) -> dict:
    """Train DirectEval at each share, score the checks, apply the rule; the record."""
    baseline = lab.at_size(BASELINE, smoke)
    seed = baseline.seed
    data = lab.judge_data(seed, data_dir)
    checks = lab.validation_checks(data, None, seed, lab.check_size(smoke))
    recipes = candidates(baseline)
    judges, timing = {}, {}
    for name, recipe in recipes.items():
        judges[name], timing[name] = lab.train(recipe, data, kind="direct", data_dir=data_dir)
    correct = lab.score(judges, checks)
    means = {share: float(sum(correct[f"{share:g}", check].mean() for check in RANKING) / len(RANKING))
             for share in SHARES}
    return lab.record("direct_copies", __doc__, smoke=smoke, baseline=f"{baseline.encoder.direct_copy_share:g}",
                      recipes=recipes, correct=correct, adopted=[f"{choose(means):g}"],
                      ranking_means={f"{share:g}": mean for share, mean in means.items()}, timing=timing)


if __name__ == "__main__":
    lab.main(run, __doc__)
