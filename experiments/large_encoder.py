"""Backbone selection on people's scores (dev halves): is the larger offline encoder worth its time untrained?

Question: all-mpnet-base-v2 (110M, ``make models``) against the default all-MiniLM-L6-v2 (22M), both
*untrained*, as the PairEval judge of chapter 4 (the cosine of the last context turn and the reply, compared
with 3 comparison examples x 5 runs from 8 DailyDialog validation conversations, seed 13). Over *every* item the
larger one is higher on all six sets (mean 0.297 vs 0.247, ``docs/decisions.md``) at 7.4x the inference time; this
asks the same on the dev halves only, so that a choice made from it leaves the test halves unseen.

Data it may see: the dev halves of the six Table-1 sets (:mod:`evalkit.stats.halves`).

Candidates, cheapest first: ``minilm`` (pinned: ``EncoderJudge()`` with 1 context turn, 64 tokens), ``mpnet``
(the same settings on ``backbone_path("mpnet")``).

Rule, fixed before the run (:data:`evalkit.stats.selection.RULE`): ``mpnet`` is preferred when its six-set mean
Pearson r on the dev halves is higher by a paired 95% bootstrap interval excluding 0. Whether the book then
uses it also depends on its measured seconds against the book's time budget (recorded here, decided in
``experiments/README.md``).

    EVALKIT_DATA_DIR=../shared/data .venv/bin/python experiments/large_encoder.py [--smoke]

**Result (2026-12-01, alone on two cores):** on the dev halves (6 sets, n = 1,262 items) mean
Pearson r minilm 0.258, mpnet 0.302; mpnet minus minilm +0.044 [+0.019, +0.072] (it clears the rule). Per set,
minilm / mpnet: dailydialog-grade 0.129 / 0.173 (n = 148), convai2-grade 0.486 / 0.512 (315), dailydialog-zhao
0.187 / 0.253 (351), personachat-usr 0.359 / 0.379 (115), topicalchat-usr 0.292 / 0.345 (144), fed 0.095 /
0.150 (189). Scoring the dev halves took 5.4 s (minilm) and 37.3 s (mpnet). **Adopted** as a candidate of
chapter 4's dev-half choice (about 40 s per half was then within the book's budget); training it
(``RECIPES["large"]``) is not: it takes ~19 minutes for 1,600 pairs on two cores. The candidate
runs only with ``large_encoder = True`` (``params/extended.yml``): the book's run has no time for it,
and in chapter 4's choice it never cleared the judge adopted before it.
"""
from __future__ import annotations

import time

import _common as lab
from evalkit import paireval as pe
from evalkit.encoders import backbone_path
from evalkit.stats.selection import choose_on_dev

SETTINGS = {"turns": 1, "max_tokens": 64}


def run(*, smoke: bool = False, data_dir=None, items: int | None = None) -> dict:
    """Score the dev halves with both untrained encoders; the decision, per-set r and seconds."""
    items = items if items is not None else (12 if smoke else None)
    data = lab.judge_data(13, data_dir)
    dev = lab.dev_halves(items, data_dir)
    pool = pe.data.corpus_comparisons(data.validation, 4 if smoke else 8, seed=13)
    scores, seconds = {}, {}
    for label in ("minilm", "mpnet"):
        judge = pe.EncoderJudge(backbone_path(label), **SETTINGS, store=None)  # timed: embed, not read back
        started = time.perf_counter()
        for name, values in lab.dev_scores(judge, dev, pool, smoke=smoke).items():
            scores[label, name] = values
        seconds[label] = time.perf_counter() - started
    decision = choose_on_dev(dev, scores, ["minilm", "mpnet"], bootstrap=200 if smoke else 1000, seed=13,
                             question="Is the larger encoder better untrained?")
    return {"decision": decision.as_record(), "sentence": decision.sentence(), "scoring_seconds": seconds,
            "dev_items": {name: len(half) for name, half in dev.items()}}


if __name__ == "__main__":
    lab.main(run, __doc__, show=lab.decision_lines)
