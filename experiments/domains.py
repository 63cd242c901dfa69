"""Recipe selection on people's scores (dev halves): does training on four more dialogue domains help?

Question: the book's judge trains on DailyDialog only, and gains over the untrained encoder only on the two
DailyDialog sets. Does a mix — half the training pairs from the leak-cut PersonaChat, Commonsense-Dialogues,
Topical-Chat and chitchat corpora (:mod:`evalkit.paireval.corpora`), a quarter of each — agree better with
people on the persona, knowledge and open-chat sets?

Data it may see: the *dev* halves of the six Table-1 sets (:mod:`evalkit.stats.halves`) for the decision; DailyDialog
validation pairs for a constraint. Never a test half (``choose_on_dev`` refuses one).

Candidates, cheapest first (the baseline pinned here, not read from ``RECIPES["book"]`` at run time, so a later
adoption cannot turn this into a comparison of a recipe with itself):
  1. ``dailydialog``: the book recipe as of this script (DailyDialog, a quarter copy negatives, head 64);
  2. ``mixed``: the same with ``domains = DOMAINS`` and ``domain_share = 0.5``.
Both score the dev halves as chapter 4 scores Table 1: PairEval with 3 comparison examples x 5 runs from 8
DailyDialog validation conversations, seed 13.

Rule, fixed before the run (:data:`evalkit.stats.selection.RULE`): ``mixed`` is adopted when its six-set mean
Pearson r on the dev halves is higher by a paired 95% bootstrap interval excluding 0 — and (constraint) its
accuracy on DailyDialog validation pairs with random and with look-alike negatives is not lower by more than
0.05 on either.

    EVALKIT_DATA_DIR=../shared/data .venv/bin/python experiments/domains.py [--smoke]

**Result (2026-12-01; training ran beside other processes, so its seconds are not a measurement):**
on the dev halves (6 sets, n = 1,262 items) mean Pearson r dailydialog 0.296, mixed 0.289; mixed minus
dailydialog -0.007 [-0.024, +0.009] (did not clear it). Per set, dailydialog / mixed: dailydialog-grade 0.298 /
0.293 (n = 148), convai2-grade 0.502 / 0.518 (315), dailydialog-zhao 0.309 / 0.275 (351), personachat-usr 0.314 /
0.297 (115), topicalchat-usr 0.283 / 0.287 (144), fed 0.071 / 0.063 (189). DailyDialog validation pairs
(n = 400 each): random 0.863 / 0.855, look-alike 0.833 / 0.803. **Not adopted**: random negatives from the same
domain teach the encoder nothing its pre-training on conversational pairs did not; the judge stays DailyDialog.
"""
from __future__ import annotations

from dataclasses import replace

import _common as lab
from evalkit.paireval.corpora import DOMAINS
from evalkit.paireval.recipes import EncoderRecipe, JudgeRecipe, LoraRecipe

BASELINE = JudgeRecipe("dailydialog", EncoderRecipe(
    pairs=3200, batch_size=16, learning_rate=5e-5, in_batch_negatives=1.0, context_turns=1, max_tokens=64,
    freeze_embeddings=True, hard_share=0.5, validation_pairs=400, curve_points=4, second_corpus_share=0.0,
    copy_share=0.25, copy_prefix_share=0.5, direct_copy_share=0.0, head_hidden=64, warmup_share=0.1, domains=(),
    domain_share=0.0, backbone="minilm"), LoraRecipe(), seed=13)
SMOKE = JudgeRecipe("dailydialog-smoke", EncoderRecipe(pairs=64, validation_pairs=48), LoraRecipe())


def candidates(baseline: JudgeRecipe) -> dict[str, JudgeRecipe]:
    """The two recipes compared, the baseline first."""
    mixed = replace(baseline, name=baseline.name.replace("dailydialog", "mixed"),
                    encoder=replace(baseline.encoder, domains=DOMAINS, domain_share=0.5))
    return {"dailydialog": baseline, "mixed": mixed}


def run(*, smoke: bool = False, data_dir=None, items: int | None = None) -> dict:
    """Train both candidates, score the dev halves, decide by the rule; the record of the run."""
    return lab.compare_recipes(candidates(SMOKE if smoke else BASELINE), smoke=smoke, data_dir=data_dir, items=items,
                               question="Does training on four more dialogue domains help?")


if __name__ == "__main__":
    lab.main(run, __doc__, show=lab.decision_lines)
