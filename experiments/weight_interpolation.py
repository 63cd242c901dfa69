"""Recipe selection, on validation data only: averaging the fine-tuned judge's weights with the untrained encoder's.

Why: in chapter 4's run of 2026-12-01 the fine-tuned judge gained on the two DailyDialog sets (the corpus it trains
on) and fell slightly below the untrained encoder on the four sets from other corpora (PersonaChat, Topical-Chat,
FED, ConvAI2; every difference inside its interval). That pattern — gains where the training data comes from,
small losses elsewhere — is what weight-space ensembling was proposed for (WiSE-FT, Wortsman et al. 2022):
``theta = w * theta_fine-tuned + (1 - w) * theta_untrained``. The weight is fixed at ``w = 0.5`` before any run,
the value that paper recommends when nothing else is known; it is not searched. The relevance head is kept
as trained (:func:`interpolated`, here: not adopted, so not in the package).

Baseline, pinned (:data:`BASELINE`): the book recipe before ``prefix_copies.py`` — copy negatives
on an eighth of the pairs, half of each form, and a relevance head (``copy_share = 0.125``,
``head_hidden = 64``), as adopted by ``copy_and_context.py`` (``direct_copy_share`` is DirectEval's, not trained
here).

Data it may see — checks, all built from data no judge trains on (as in ``copy_and_context.py``): DailyDialog
validation pairs with random and look-alike negatives, the same-conversation copy check (split by form here:
``prefix`` = previous turn + real reply, the form of Khalid & Lee's Speaker Sensitiveness attack; ``parrot`` =
the previous turn alone), and Topical-Chat selection pairs — the one check from another corpus. The six Table-1
sets and the attack suite are never scored here.

Decision rule, fixed before running (paired bootstrap intervals, 95%, n = 400 per check): adopt ``wise`` as
the book's judge if Topical-Chat accuracy is not lower than the book judge's with the interval entirely below 0,
and no other check is lower with the interval entirely below 0 *or* by more than 0.02 in its point estimate
(the checks cannot show the out-of-corpus gain the method is for, so the rule asks that it costs nothing
measurable where the checks can see).

    EVALKIT_DATA_DIR=../shared/data .venv/bin/python experiments/weight_interpolation.py [--smoke]

**Result (2026-12-01, alone on two cores; n = 400 per check; zero-shot / book / wise):** DailyDialog random
0.845 / 0.858 / 0.852; look-alike 0.762 / 0.840 / 0.815; copy check, prefix form 0.000 / 0.168 / 0.058; parrot
form 0.000 / 0.875 / 0.618; Topical-Chat selection 0.808 / 0.810 / 0.808. Paired, wise - book: look-alike
-0.025 [-0.050, -0.003], prefix -0.110 [-0.142, -0.083], parrot -0.258 [-0.302, -0.215] (each fails the rule),
random -0.005 [-0.028, +0.018], Topical-Chat -0.003 [-0.028, +0.022] -> **not adopted**: halfway back to the
untrained weights gives back the look-alike skill and most of the copy check, and shows no gain on the one
other-corpus check. The split by form also shows what the result of ``copy_and_context.py`` suggested: the book judge rejects the parrot
form (0.875) but hardly the prefix form (0.168), the form of the Speaker Sensitiveness attack
(``prefix_copies.py`` follows up).
"""
from __future__ import annotations

from pathlib import Path

import _common as lab
from evalkit import paireval as pe
from evalkit.paireval.recipes import EncoderRecipe, JudgeRecipe, LoraRecipe

BASELINE = JudgeRecipe("book-copy-eighth", EncoderRecipe(
    pairs=3200, batch_size=16, learning_rate=5e-5, in_batch_negatives=1.0, context_turns=1, max_tokens=64,
    freeze_embeddings=True, hard_share=0.5, validation_pairs=400, warmup_share=0.1, second_corpus_share=0.0,
    copy_share=0.125, copy_prefix_share=0.5, direct_copy_share=0.0, head_hidden=64), LoraRecipe(), seed=13)

WEIGHT = 0.5
TOPICAL = "Topical-Chat selection, random"


def interpolated(judge: pe.EncoderJudge, weight: float, base: str | Path | None = None) -> pe.EncoderJudge:
    """A judge whose encoder weights are ``weight`` x the fine-tuned ones + ``1 - weight`` x the untrained
    ``base`` encoder's (weight-space ensembling, "WiSE-FT", Wortsman et al. 2022: it keeps much of what
    fine-tuning gained on its own data and less of what it lost elsewhere). The relevance head, the scale and
    the bias are the fine-tuned judge's. ``weight = 1`` is the fine-tuned judge, ``0`` the base encoder
    (``None``: the kit's default encoder).

    Both encoders must have the same architecture; a name or parameter that differs raises ``ValueError``.
    """
    import torch

    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"weight must lie in [0, 1], got {weight}")
    mixed = pe.EncoderJudge(judge.path, turns=judge.turns, max_tokens=judge.max_tokens, scale=judge.scale,
                            bias=judge.bias, name=f"{judge.name}@{weight:g}", batch_size=judge.batch_size)
    tuned_state, base_state = mixed.model.state_dict(), pe.EncoderJudge(base).model.state_dict()
    if set(tuned_state) != set(base_state):
        raise ValueError(f"{judge.path} and the base encoder have different parameters: "
                         f"{sorted(set(tuned_state) ^ set(base_state))[:5]}")
    with torch.no_grad():
        for name, tensor in tuned_state.items():
            if tensor.is_floating_point():
                tensor.copy_(weight * tensor + (1.0 - weight) * base_state[name])
    return mixed


def candidates(baseline: JudgeRecipe) -> dict[str, JudgeRecipe]:
    """The one recipe trained; ``wise`` is its judge with the weights mixed, not a recipe of its own."""
    return {"book": baseline}


def run(*, smoke: bool = False, data_dir=None) -> dict:
    """Train (or load) the baseline judge, mix its weights, score the checks, apply the rule; the record."""
    baseline = lab.at_size(BASELINE, smoke)
    seed = baseline.seed
    data, corpus = lab.judge_data(seed, data_dir), lab.second_corpus(seed, data_dir)
    checks = lab.validation_checks(data, corpus, seed, lab.check_size(smoke))
    book, timing = lab.train(baseline, data, data_dir=data_dir)
    judges = {"zero-shot": lab.zero_shot(), "book": book, "wise": interpolated(book, WEIGHT)}
    correct = lab.score(judges, checks)
    fails = []
    for check in checks:
        gap = lab.paired(correct["wise", check], correct["book", check])
        if gap["high"] < 0 or (gap["difference"] < -0.02 and check != TOPICAL):
            fails.append(check)
    return lab.record("weight_interpolation", __doc__, smoke=smoke, baseline="book", recipes=candidates(baseline),
                      candidates=["book", "wise"], correct=correct, adopted=[] if fails else ["wise"],
                      fails={"wise": fails}, weight=WEIGHT, timing={"book": timing})


if __name__ == "__main__":
    lab.main(run, __doc__)
