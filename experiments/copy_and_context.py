"""Recipe selection, on validation data only: copy negatives and a longer context for the encoder judge.

Two changes to the book recipe, each with a reason found before this run:
- ``copy``: an eighth of the training pairs get a bad reply that repeats its own context (the previous turn
  put in front of the real reply, or the previous turn alone; ``paireval.data.copy_reply``). A cosine
  bi-encoder rates a reply that contains its context highest, so the book judge never penalises copying
  (chapter 4's Speaker Sensitiveness attack: 0 of 40).
- ``turns2``: two context turns and 128 tokens instead of one turn and 64 (USR's Topical-Chat and
  PersonaChat items have long, multi-turn contexts; ``second_corpus.py`` found Topical-Chat's random negatives
  hard for a cosine of the last turn).
- ``copy+turns2``: both.

Baseline, pinned (:data:`BASELINE`): the book recipe before this experiment — no copy negatives,
no relevance head (``copy_share = 0``, ``head_hidden = 0``), every other field as the book's then.

Data it may see (:mod:`_common`): DailyDialog validation pairs with random and look-alike negatives (two
conversations, as the judge is trained), a same-conversation copy check (a validation context with its real
reply against the same context with a copy reply of either form — the attack's form, on validation
dialogues), and Topical-Chat selection pairs (the selection part of ``second_corpus.py``). The six Table-1 sets and the attack
suite are never scored here.

Decision rules, fixed before running (paired bootstrap intervals, 95%, n = 400 per check):
- adopt ``copy`` if its copy-check accuracy is higher than the book's with the interval above 0, and none of
  the other three checks is lower with the interval entirely below 0;
- adopt ``turns2`` if its Topical-Chat accuracy is higher with the interval above 0 and neither DailyDialog
  check is lower with the interval entirely below 0;
- if both are adopted, the book takes ``copy+turns2`` only if it passes both rules against the book itself.

    EVALKIT_DATA_DIR=../shared/data .venv/bin/python experiments/copy_and_context.py [--smoke] [VARIANT ...]

**Result (2026-12-01, alone on two cores; n = 400 pairs per check; book / copy / turns2):**
DailyDialog random 0.860 / 0.832 / 0.898; look-alike 0.855 / 0.858 / 0.840; copy check 0.000 / 0.000 / 0.012;
Topical-Chat selection 0.808 / 0.790 / 0.810 (the untrained encoder: 0.845, 0.762, 0.000, 0.808). Paired:
copy - book on the copy check +0.000 [+0.000, +0.000] -> not adopted (a cosine of the last turn and a reply that
contains that turn stays the highest score whatever 400 copy pairs teach); turns2 - book on Topical-Chat
+0.003 [-0.035, +0.037] -> not adopted (DailyDialog random +0.037 [+0.007, +0.068], look-alike -0.015
[-0.050, +0.020]; training 415 s vs 267 s). ``copy+turns2`` was therefore not trained.

**Added after that result, rule fixed before its run:** ``head+copy`` — the same copy negatives
with a relevance head (``EncoderRecipe.head_hidden = 64``: an MLP over ``[u * v, |u - v|]`` added to the
cosine, ``paireval.encoder.relevance_head``), which can score a reply lower for being *too* like its context.
Adopted by the same rule as ``copy``: copy check higher with the interval above 0, no other check lower with
the interval entirely below 0.

**Result of head+copy (2026-12-01, n = 400 per check):** DailyDialog random 0.858 (book 0.860), look-alike
0.840 (0.855), copy check 0.500 (0.000), Topical-Chat 0.810 (0.808); paired: copy check +0.500 [+0.450,
+0.547], random -0.003 [-0.030, +0.025], look-alike -0.015 [-0.045, +0.013], Topical-Chat +0.003 [-0.022,
+0.028] -> **adopted** (``EncoderRecipe`` defaults ``copy_share = 0.125``, ``head_hidden = 64``); training 254 s.

Variants named on the command line run alone (default: all); ``copy+turns2`` is trained only when both single
changes pass their rules.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

import _common as lab
from evalkit.paireval.recipes import EncoderRecipe, JudgeRecipe, LoraRecipe

BASELINE = JudgeRecipe("book-no-copies", EncoderRecipe(
    pairs=3200, batch_size=16, learning_rate=5e-5, in_batch_negatives=1.0, context_turns=1, max_tokens=64,
    freeze_embeddings=True, hard_share=0.5, validation_pairs=400, warmup_share=0.1, second_corpus_share=0.0,
    copy_share=0.0, copy_prefix_share=0.5, direct_copy_share=0.0, head_hidden=0), LoraRecipe(), seed=13)

COPY, RANDOM, LOOK_ALIKE, TOPICAL = ("copy check, either form", "DailyDialog validation, random",
                                     "DailyDialog validation, look-alike", "Topical-Chat selection, random")


def candidates(baseline: JudgeRecipe) -> dict[str, JudgeRecipe]:
    """The baseline and the four variants, each one change (or two) away from it."""
    def variant(name: str, **changes: Any) -> JudgeRecipe:
        return replace(baseline, name=f"{baseline.name}+{name}", encoder=replace(baseline.encoder, **changes))

    return {"book": baseline, "copy": variant("copy", copy_share=0.125),
            "turns2": variant("turns2", context_turns=2, max_tokens=128),
            "copy+turns2": variant("copy+turns2", copy_share=0.125, context_turns=2, max_tokens=128),
            "head+copy": variant("head+copy", copy_share=0.125, head_hidden=64)}


def failures(gaps: dict[str, dict[str, float]], target: str, guarded: tuple[str, ...]) -> list[str]:
    """The rule's failures: ``target`` not higher with the interval above 0, a ``guarded`` check lower with
    the interval entirely below 0 (empty: the variant passes)."""
    failed = [target] if gaps[target]["low"] <= 0 else []
    return failed + [check for check in guarded if check != target and gaps[check]["high"] < 0]


def run(*, smoke: bool = False, data_dir=None, variants: list[str] | None = None) -> dict:
    """Train the baseline and the variants asked for, score the checks, apply the rules; the record."""
    baseline = lab.at_size(BASELINE, smoke)
    seed = baseline.seed
    data, corpus = lab.judge_data(seed, data_dir), lab.second_corpus(seed, data_dir)
    checks = lab.validation_checks(data, corpus, seed, lab.check_size(smoke), copy_forms=(None,))
    recipes = candidates(baseline)
    asked = [name for name in recipes if name != "copy+turns2" and (not variants or name in variants)]
    judges, timing = {"zero-shot": lab.zero_shot()}, {}
    for name in ["book"] + [name for name in asked if name != "book"]:
        judges[name], timing[name] = lab.train(recipes[name], data, data_dir=data_dir)
    correct = lab.score(judges, checks)
    rules = {"copy": (COPY, tuple(checks)), "head+copy": (COPY, tuple(checks)),
             "turns2": (TOPICAL, (RANDOM, LOOK_ALIKE, TOPICAL))}

    def failed(name: str, rule: str) -> list[str]:
        target, guarded = rules[rule]
        return failures({check: lab.paired(correct[name, check], correct["book", check]) for check in checks},
                        target, guarded)

    fails = {name: failed(name, name) for name in judges if name in rules}
    if "copy" in fails and "turns2" in fails and not fails["copy"] and not fails["turns2"]:
        judges["copy+turns2"], timing["copy+turns2"] = lab.train(recipes["copy+turns2"], data, data_dir=data_dir)
        correct.update(lab.score({"copy+turns2": judges["copy+turns2"]}, checks))
        fails["copy+turns2"] = failed("copy+turns2", "copy") + failed("copy+turns2", "turns2")
    adopted = [name for name, failed_checks in fails.items() if not failed_checks]
    if "copy+turns2" in adopted:
        adopted = ["copy+turns2"] + [name for name in adopted if name not in ("copy", "turns2", "copy+turns2")]
    trained = {name: recipes[name] for name in judges if name in recipes}
    return lab.record("copy_and_context", __doc__, smoke=smoke, baseline="book", recipes=trained, correct=correct,
                      adopted=adopted, fails=fails, timing=timing)


if __name__ == "__main__":
    lab.main(run, __doc__, variants=True)
