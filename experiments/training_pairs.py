"""Training size chosen on people's scores (dev halves): do the book's judges need 3,200 training pairs?

Question: the book trains three MiniLM encoder judges from a cold cache (PairEval and DirectEval in chapter 3,
the random-negatives ablation in chapter 4), each on ``EncoderRecipe.pairs = 3,200`` pairs — a size chosen in
session 5 on *synthetic* validation pairs (look-alike negatives: +0.035 [0.013, 0.058] for 3,200 over 1,600),
never on people's scores. Training is the largest single cost of the cold book, which is at or over its time
budget. Does halving the pairs lose anything people can see?

Data it may see: the *dev* halves of the six Table-1 sets (:mod:`evalkit.halves`) for the decision; DailyDialog
validation pairs for a constraint. Never a test half (``choose_on_dev`` refuses one).

Candidates, cheapest first (the rule's order: ties keep the cheaper one), for both kinds of judge:
  1. ``pairs1600``: the book recipe as of this script with ``pairs = 1600`` (its own full schedule);
  2. ``pairs3200``: the book recipe as of this script, pinned below (3,200 pairs).
PairEval judges (``kind = "pairwise"``) score the dev halves as chapter 4 scores Table 1 (3 comparison examples
x 5 runs from 8 DailyDialog validation conversations, seed 13); DirectEval judges (``kind = "direct"``) score
each item on its own, as chapter 4 does.

Rule, fixed before the run (:data:`evalkit.selection.RULE`, cheapest first): for each kind, ``pairs3200``
replaces ``pairs1600`` only when its six-set mean Pearson r on the dev halves is higher by a paired 95% bootstrap
interval excluding 0. The recipe takes 1,600 pairs only when 3,200 clears neither kind **and** (constraint) the
1,600-pair PairEval judge's accuracy on DailyDialog validation pairs with random and with look-alike negatives
is not lower than the 3,200-pair judge's by more than 0.05 on either; otherwise it keeps 3,200.

    EVALKIT_DATA_DIR=../shared/data .venv/bin/python experiments/training_pairs.py [--smoke]

**Result (session 17, 2026-12-03, alone on two cores, AMD EPYC):** on the dev halves (6 sets, n = 1,262 items),
mean Pearson r 1,600 / 3,200 pairs: PairEval 0.278 / 0.296, 3,200 minus 1,600 +0.019 [-0.010, +0.045] (did not
clear it); DirectEval 0.295 / 0.285, -0.010 [-0.035, +0.012]. Per set, PairEval: dailydialog-grade 0.269 / 0.298,
convai2-grade 0.497 / 0.502, dailydialog-zhao 0.266 / 0.309, personachat-usr 0.336 / 0.314, topicalchat-usr
0.187 / 0.283, fed 0.110 / 0.071; DirectEval: 0.209 / 0.173, 0.480 / 0.484, 0.322 / 0.327, 0.366 / 0.347,
0.317 / 0.309, 0.075 / 0.070. The 1,600-pair PairEval judge's DailyDialog validation accuracy (n = 400 each):
random 0.8275 vs 0.86 (drop 0.0325), look-alike 0.81 vs 0.8325 (drop 0.0225), inside the 0.05 constraint.
Training 145 s (PairEval) and 140 s (DirectEval) for 1,600 pairs against 280 s and 264 s for 3,200 (the cold
book's, same machine). **Adopted: 1,600 pairs** (``EncoderRecipe.pairs``). PairEval's point estimate is lower
by 0.019 (topicalchat-usr most): the rule counts that as inside the sampling error, and the chapters report the
adopted judge's test halves as they are.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

import _common as lab
from evalkit.paireval.recipes import EncoderRecipe, JudgeRecipe, LoraRecipe
from evalkit.selection import choose_on_dev

BASELINE = JudgeRecipe("pairs3200", EncoderRecipe(
    pairs=3200, batch_size=16, learning_rate=5e-5, in_batch_negatives=1.0, context_turns=1, max_tokens=64,
    freeze_embeddings=True, hard_share=0.5, validation_pairs=400, curve_points=4, second_corpus_share=0.0,
    copy_share=0.25, copy_prefix_share=0.5, direct_copy_share=0.0, head_hidden=64, warmup_share=0.1, domains=(),
    domain_share=0.0, backbone="minilm"), LoraRecipe(), seed=13)
SMOKE = JudgeRecipe("pairs3200-smoke", EncoderRecipe(pairs=32, validation_pairs=16), LoraRecipe())
KINDS = ("pairwise", "direct")


def candidates(baseline: JudgeRecipe) -> dict[str, JudgeRecipe]:
    """The two sizes compared, cheapest first: half the baseline's pairs, then the baseline.

    >>> {name: r.encoder.pairs for name, r in candidates(BASELINE).items()}
    {'pairs1600': 1600, 'pairs3200': 3200}
    """
    half = replace(baseline, name=baseline.name.replace("3200", "1600"),
                   encoder=replace(baseline.encoder, pairs=max(16, baseline.encoder.pairs // 2)))
    return {"pairs1600": half, "pairs3200": baseline}


def adopted_size(choices: dict[str, str], drops: dict[str, float]) -> str:
    """The rule's verdict: the cheaper size when the larger cleared neither kind and the cheaper judge's
    validation accuracy drops by no more than 0.05 on any check; otherwise the larger.

    >>> adopted_size({"pairwise": "pairs1600", "direct": "pairs1600"}, {"random": 0.01, "look-alike": 0.04})
    'pairs1600'
    >>> adopted_size({"pairwise": "pairs1600", "direct": "pairs3200"}, {"random": 0.0, "look-alike": 0.0})
    'pairs3200'
    >>> adopted_size({"pairwise": "pairs1600", "direct": "pairs1600"}, {"random": 0.0, "look-alike": 0.06})
    'pairs3200'
    """
    if all(choice == "pairs1600" for choice in choices.values()) and max(drops.values()) <= 0.05:
        return "pairs1600"
    return "pairs3200"


def run(*, smoke: bool = False, data_dir=None, items: int | None = None) -> dict[str, Any]:
    """Train both sizes of both kinds (cached), score the dev halves, decide by the rule; the record."""
    recipes = candidates(SMOKE if smoke else BASELINE)
    data, dev, pool, checks = lab.dev_setup(recipes["pairs3200"], smoke=smoke, data_dir=data_dir, items=items)
    scores, timing, accuracy = {}, {}, {}
    for kind in KINDS:  # the constraint is the PairEval judge's: the direct judges are not checked on pairs
        scores[kind], constraint, seconds = lab.train_and_score(recipes, data, dev, pool,
                                                                checks if kind == "pairwise" else {},
                                                                smoke=smoke, data_dir=data_dir, kind=kind)
        accuracy.update(constraint)
        timing.update({f"{label} {kind}": value for label, value in seconds.items()})
    decisions = {kind: choose_on_dev(dev, scores[kind], list(recipes), bootstrap=200 if smoke else 1000, seed=13,
                                     question=f"Do {kind} judges need 3,200 training pairs?") for kind in KINDS}
    drops = lab.accuracy_drop(accuracy, "pairs3200", "pairs1600")
    adopted = adopted_size({kind: decision.choice for kind, decision in decisions.items()}, drops)
    return {"decision": decisions["pairwise"].as_record(), "direct_decision": decisions["direct"].as_record(),
            "sentence": " ".join(decision.sentence() for decision in decisions.values()),
            "validation_accuracy": accuracy, "validation_drop": drops, "adopted": adopted,
            "dev_items": {name: len(half) for name, half in dev.items()}, "timing": timing}


if __name__ == "__main__":
    lab.main(run, __doc__, show=lab.decision_lines)
