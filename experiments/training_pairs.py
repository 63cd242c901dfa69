"""Training size chosen on people's scores (dev halves): do the book's judges need all their training pairs?

Question: the book trains MiniLM encoder judges from a cold cache (PairEval and DirectEval in chapter 3; when
both questions were asked also the random-negatives ablation in chapter 4, now opt-in), each on
``EncoderRecipe.pairs`` pairs. Training is the largest
single cost of the cold book, which is at or over its time budget. Does halving the pairs lose anything people
can see? Asked twice: first of 3,200 pairs (:data:`PAIRS3200_BASELINE`, the size chosen earlier
on *synthetic* validation pairs), then of the 1,600 adopted by the first answer (:data:`BASELINE`).

Data it may see: the *dev* halves of the six Table-1 sets (:mod:`evalkit.stats.halves`) for the decision; DailyDialog
validation pairs for a constraint. Never a test half (``choose_on_dev`` refuses one).

Candidates, cheapest first (the rule's order: ties keep the cheaper one), for both kinds of judge:
  1. the baseline recipe with half its pairs (its own full schedule), named ``pairs<N/2>``;
  2. the baseline recipe as pinned below, named ``pairs<N>``.
PairEval judges (``kind = "pairwise"``) score the dev halves as chapter 4 scores Table 1 (3 comparison examples
x 5 runs from 8 DailyDialog validation conversations, seed 13); DirectEval judges (``kind = "direct"``) score
each item on its own, as chapter 4 does.

Rule, fixed before the run (:data:`evalkit.stats.selection.RULE`, cheapest first): for each kind, the larger size
replaces the smaller only when its six-set mean Pearson r on the dev halves is higher by a paired 95% bootstrap
interval excluding 0. The recipe takes the smaller size only when the larger clears neither kind **and**
(constraint) the smaller PairEval judge's accuracy on DailyDialog validation pairs with random and with
look-alike negatives is not lower than the larger judge's by more than 0.05 on either; otherwise it keeps the
larger.

    EVALKIT_DATA_DIR=../shared/data .venv/bin/python experiments/training_pairs.py [--smoke]

**Result (2026-12-03, 3,200 against 1,600; alone on two cores, AMD EPYC):** on the dev halves
(6 sets, n = 1,262 items), mean Pearson r 1,600 / 3,200 pairs: PairEval 0.278 / 0.296, 3,200 minus 1,600 +0.019 [-0.010, +0.045] (did not
clear it); DirectEval 0.295 / 0.285, -0.010 [-0.035, +0.012]. Per set, PairEval: dailydialog-grade 0.269 / 0.298,
convai2-grade 0.497 / 0.502, dailydialog-zhao 0.266 / 0.309, personachat-usr 0.336 / 0.314, topicalchat-usr
0.187 / 0.283, fed 0.110 / 0.071; DirectEval: 0.209 / 0.173, 0.480 / 0.484, 0.322 / 0.327, 0.366 / 0.347,
0.317 / 0.309, 0.075 / 0.070. The 1,600-pair PairEval judge's DailyDialog validation accuracy (n = 400 each):
random 0.8275 vs 0.86 (drop 0.0325), look-alike 0.81 vs 0.8325 (drop 0.0225), inside the 0.05 constraint.
Training 145 s (PairEval) and 140 s (DirectEval) for 1,600 pairs against 280 s and 264 s for 3,200 (the cold
book's, same machine). **Adopted: 1,600 pairs** (``EncoderRecipe.pairs``). PairEval's point estimate is lower
by 0.019 (topicalchat-usr most): the rule counts that as inside the sampling error, and the chapters report the
adopted judge's test halves as they are.

**Result (2026-12-04, 1,600 against 800; alone on two cores, AMD EPYC; the 1,600-pair judges
reused from the cold book's cache):** on the dev halves (6 sets, n = 1,262 items), mean Pearson r 800 / 1,600
pairs: PairEval 0.256 / 0.278, 1,600 minus 800 +0.022 [+0.006, +0.037] (replaced it); DirectEval 0.262 / 0.295,
+0.033 [+0.013, +0.052] (replaced it). Per set, PairEval: dailydialog-grade 0.203 / 0.269, convai2-grade
0.493 / 0.497, dailydialog-zhao 0.234 / 0.266, personachat-usr 0.300 / 0.336, topicalchat-usr 0.199 / 0.187,
fed 0.107 / 0.110; DirectEval: 0.130 / 0.209, 0.455 / 0.480, 0.255 / 0.322, 0.349 / 0.366, 0.303 / 0.317,
0.078 / 0.075. The 800-pair PairEval judge's DailyDialog validation accuracy (n = 400 each): random 0.7925 vs
0.8275, look-alike 0.8225 vs 0.81. Training 92 s (PairEval) and 90 s (DirectEval) for 800 pairs against 179 s
and 177 s for 1,600 (the cold book's at c5582f1, same machine). **Kept: 1,600 pairs**: halving the pairs
again would have saved ~3 minutes of the cold book (its two judges; ~4.5 with the ablation judge of
``params/extended.yml``), but both judges lose agreement with people by intervals that exclude 0, so the book
pays for the training. ``run(baseline=PAIRS3200_BASELINE)`` asks the first question again.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

import _common as lab
from evalkit.paireval.recipes import EncoderRecipe, JudgeRecipe, LoraRecipe
from evalkit.stats.selection import choose_on_dev

BASELINE = JudgeRecipe("pairs1600", EncoderRecipe(
    pairs=1600, batch_size=16, learning_rate=5e-5, in_batch_negatives=1.0, context_turns=1, max_tokens=64,
    freeze_embeddings=True, hard_share=0.5, validation_pairs=400, curve_points=4, second_corpus_share=0.0,
    copy_share=0.25, copy_prefix_share=0.5, direct_copy_share=0.0, head_hidden=64, warmup_share=0.1, domains=(),
    domain_share=0.0, backbone="minilm"), LoraRecipe(), seed=13)
"""The book recipe at 1,600 pairs (the second question: 800 against 1,600)."""
PAIRS3200_BASELINE = replace(BASELINE, name="pairs3200", encoder=replace(BASELINE.encoder, pairs=3200))
"""The book recipe at 3,200 pairs (the first question: 1,600 against 3,200); only ``pairs`` differs."""
SMOKE = JudgeRecipe("pairs32-smoke", EncoderRecipe(pairs=32, validation_pairs=16), LoraRecipe())
KINDS = ("pairwise", "direct")


def candidates(baseline: JudgeRecipe) -> dict[str, JudgeRecipe]:
    """The two sizes compared, cheapest first: half the baseline's pairs, then the baseline; each named by its
    number of pairs.

    >>> {name: r.encoder.pairs for name, r in candidates(BASELINE).items()}
    {'pairs800': 800, 'pairs1600': 1600}
    >>> list(candidates(PAIRS3200_BASELINE))
    ['pairs1600', 'pairs3200']
    """
    pairs = max(16, baseline.encoder.pairs // 2)
    half = replace(baseline, name=f"pairs{pairs}", encoder=replace(baseline.encoder, pairs=pairs))
    return {half.name: half, f"pairs{baseline.encoder.pairs}": baseline}


def adopted_size(choices: dict[str, str], drops: dict[str, float], smaller: str, larger: str) -> str:
    """The rule's verdict: the ``smaller`` size when the ``larger`` cleared neither kind and the smaller judge's
    validation accuracy drops by no more than 0.05 on any check; otherwise the larger.

    >>> adopted_size({"pairwise": "pairs800", "direct": "pairs800"}, {"random": 0.01, "look-alike": 0.04},
    ...              "pairs800", "pairs1600")
    'pairs800'
    >>> adopted_size({"pairwise": "pairs800", "direct": "pairs1600"}, {"random": 0.0, "look-alike": 0.0},
    ...              "pairs800", "pairs1600")
    'pairs1600'
    >>> adopted_size({"pairwise": "pairs800", "direct": "pairs800"}, {"random": 0.0, "look-alike": 0.06},
    ...              "pairs800", "pairs1600")
    'pairs1600'
    """
    if all(choice == smaller for choice in choices.values()) and max(drops.values()) <= 0.05:
        return smaller
    return larger


def run(*, smoke: bool = False, data_dir=None, items: int | None = None,
        baseline: JudgeRecipe = BASELINE) -> dict[str, Any]:
    """Train both sizes of both kinds (cached), score the dev halves, decide by the rule; the record."""
    recipes = candidates(SMOKE if smoke else baseline)
    smaller, larger = list(recipes)
    data, dev, pool, checks = lab.dev_setup(recipes[larger], smoke=smoke, data_dir=data_dir, items=items)
    scores, timing, accuracy = {}, {}, {}
    for kind in KINDS:  # the constraint is the PairEval judge's: the direct judges are not checked on pairs
        scores[kind], constraint, seconds = lab.train_and_score(recipes, data, dev, pool,
                                                                checks if kind == "pairwise" else {},
                                                                smoke=smoke, data_dir=data_dir, kind=kind)
        accuracy.update(constraint)
        timing.update({f"{label} {kind}": value for label, value in seconds.items()})
    size = recipes[larger].encoder.pairs
    decisions = {kind: choose_on_dev(dev, scores[kind], list(recipes), bootstrap=200 if smoke else 1000, seed=13,
                                     question=f"Do {kind} judges need {size:,} training pairs?") for kind in KINDS}
    drops = lab.accuracy_drop(accuracy, larger, smaller)
    adopted = adopted_size({kind: decision.choice for kind, decision in decisions.items()}, drops, smaller, larger)
    return {"decision": decisions["pairwise"].as_record(), "direct_decision": decisions["direct"].as_record(),
            "sentence": " ".join(decision.sentence() for decision in decisions.values()),
            "validation_accuracy": accuracy, "validation_drop": drops, "adopted": adopted,
            "dev_items": {name: len(half) for name, half in dev.items()}, "timing": timing}


if __name__ == "__main__":
    lab.main(run, __doc__, show=lab.decision_lines)
