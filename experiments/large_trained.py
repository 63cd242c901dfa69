"""Backbone selection on people's scores (dev halves): is the larger encoder worth training as the judge?

Question: untrained, all-mpnet-base-v2 (110M) tied the book's fine-tuned MiniLM PairEval judge on the dev
halves (``large_encoder.py``, chapter 4's choice). Trained with the book's pairwise recipe on 1,600 pairs
(``RECIPES["large"]``: half the book's pairs, for time), does it agree better with people than the book's
MiniLM judge trained on 3,200?

Data it may see: the *dev* halves of the six Table-1 sets (:mod:`evalkit.stats.halves`) for the decision; DailyDialog
validation pairs for a constraint. Never a test half (``choose_on_dev`` refuses one).

Candidates, cheapest first (the baseline pinned here, not read from the book's recipe at run time):
  1. ``minilm``: the book recipe as of this script (DailyDialog, a quarter copy negatives, head 64, 3,200 pairs);
  2. ``mpnet``: the same on ``backbone = "mpnet"`` with 1,600 pairs (the named recipe ``large``).
Both score the dev halves as chapter 4 scores Table 1: PairEval with 3 comparison examples x 5 runs from 8
DailyDialog validation conversations, seed 13.

Rule, fixed before the run (:data:`evalkit.stats.selection.RULE`): ``mpnet`` is preferred when its six-set mean
Pearson r on the dev halves is higher by a paired 95% bootstrap interval excluding 0 — and (constraint) its
accuracy on DailyDialog validation pairs with random and with look-alike negatives is not lower by more than
0.05 on either. Whether the book then trains it also depends on its measured seconds against the book's time
budget (~19 minutes on two cores; the book has ~3 minutes to spare).

    EVALKIT_DATA_DIR=../shared/data .venv/bin/python experiments/large_trained.py [--smoke]

**Result (2026-12-02, alone on two cores):** on the dev halves (6 sets, n = 1,262 items) mean Pearson r
minilm 0.296, mpnet 0.320; mpnet minus minilm +0.023 [-0.017, +0.062] (did not clear it). Per set, minilm / mpnet:
dailydialog-grade 0.298 / 0.261, convai2-grade 0.502 / 0.557, dailydialog-zhao 0.309 / 0.340, personachat-usr
0.314 / 0.321, topicalchat-usr 0.283 / 0.297, fed 0.071 / 0.143. DailyDialog validation pairs (n = 400 each):
random 0.863 / 0.905, look-alike 0.833 / 0.848. mpnet training 794 s (1,096 s wall with scoring). **Not adopted**.
"""
from __future__ import annotations

from dataclasses import replace

import _common as lab
from evalkit.paireval.recipes import EncoderRecipe, JudgeRecipe, LoraRecipe

BASELINE = JudgeRecipe("minilm", EncoderRecipe(
    pairs=3200, batch_size=16, learning_rate=5e-5, in_batch_negatives=1.0, context_turns=1, max_tokens=64,
    freeze_embeddings=True, hard_share=0.5, validation_pairs=400, curve_points=4, second_corpus_share=0.0,
    copy_share=0.25, copy_prefix_share=0.5, direct_copy_share=0.0, head_hidden=64, warmup_share=0.1, domains=(),
    domain_share=0.0, backbone="minilm"), LoraRecipe(), seed=13)
SMOKE = JudgeRecipe("minilm-smoke", EncoderRecipe(pairs=32, validation_pairs=16), LoraRecipe())


def candidates(baseline: JudgeRecipe) -> dict[str, JudgeRecipe]:
    """The two recipes compared, the baseline first: the larger backbone on half the pairs.

    >>> {name: (r.encoder.backbone, r.encoder.pairs) for name, r in candidates(BASELINE).items()}
    {'minilm': ('minilm', 3200), 'mpnet': ('mpnet', 1600)}
    """
    large = replace(baseline, name=baseline.name.replace("minilm", "mpnet"),
                    encoder=replace(baseline.encoder, backbone="mpnet", pairs=max(16, baseline.encoder.pairs // 2)))
    return {"minilm": baseline, "mpnet": large}


def run(*, smoke: bool = False, data_dir=None, items: int | None = None) -> dict:
    """Train both candidates (cached), score the dev halves, decide by the rule; the record of the run."""
    return lab.compare_recipes(candidates(SMOKE if smoke else BASELINE), smoke=smoke, data_dir=data_dir, items=items,
                               question="Is the larger encoder worth training as the judge?")


if __name__ == "__main__":
    lab.main(run, __doc__, show=lab.decision_lines)
