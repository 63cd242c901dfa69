"""Recipe selection, on validation data only: averaging the fine-tuned judge's weights with the untrained encoder's.

Why: in chapter 4's session-8 run the fine-tuned judge gained on the two DailyDialog sets (the corpus it trains
on) and fell slightly below the untrained encoder on the four sets from other corpora (PersonaChat, Topical-Chat,
FED, ConvAI2; every difference inside its interval). That pattern — gains where the training data comes from,
small losses elsewhere — is what weight-space ensembling was proposed for (WiSE-FT, Wortsman et al. 2022):
``theta = w * theta_fine-tuned + (1 - w) * theta_untrained``. The weight is fixed at ``w = 0.5`` before any run,
the value that paper recommends when nothing else is known; it is not searched. The relevance head is kept
as trained (``paireval.encoder.interpolated``).

Checks, all built from data no judge trains on (as in ``copy_and_context.py``): DailyDialog validation pairs with
random and look-alike negatives, the same-conversation copy check (split by form here: ``prefix`` = previous
turn + real reply, the form of Khalid & Lee's Speaker Sensitiveness attack; ``parrot`` = the previous turn
alone), and Topical-Chat selection pairs — the one check from another corpus. The six Table-1 sets and the
attack suite are never scored here.

Decision rule, fixed before running (paired bootstrap intervals, 95%, n = 400 per check): adopt ``wise`` as
the book's judge if Topical-Chat accuracy is not lower than the book judge's with the interval entirely below 0,
and no other check is lower with the interval entirely below 0 *or* by more than 0.02 in its point estimate
(the checks cannot show the out-of-corpus gain the method is for, so the rule asks that it costs nothing
measurable where the checks can see).

    EVALKIT_DATA_DIR=../shared/data .venv/bin/python experiments/weight_interpolation.py

**Result (session 9, alone on two cores; n = 400 per check; zero-shot / book / wise):** DailyDialog random
0.845 / 0.858 / 0.852; look-alike 0.762 / 0.840 / 0.815; copy check, prefix form 0.000 / 0.168 / 0.058; parrot
form 0.000 / 0.875 / 0.618; Topical-Chat selection 0.808 / 0.810 / 0.808. Paired, wise - book: look-alike
-0.025 [-0.050, -0.003], prefix -0.110 [-0.142, -0.083], parrot -0.258 [-0.302, -0.215] (each fails the rule),
random -0.005 [-0.028, +0.018], Topical-Chat -0.003 [-0.028, +0.022] -> **not adopted**: halfway back to the
untrained weights gives back the look-alike skill and most of the copy check, and shows no gain on the one
other-corpus check. The split by form also shows what session 8 guessed: the book judge rejects the parrot
form (0.875) but hardly the prefix form (0.168), the form of the Speaker Sensitiveness attack
(``prefix_copies.py`` follows up).
"""
import numpy as np
import pandas as pd

from evalkit import paireval as pe
from evalkit.paireval import recipes as R
from evalkit.paireval.data import COPY_FORMS, copy_reply, training_pairs

WEIGHT = 0.5


def copy_check(dialogues: list[list[str]], n: int, seed: int, form: str | None = None) -> pd.DataFrame:
    """``n`` same-conversation pairs: a context and its real reply (A) against the same context with a copy
    reply (B) of ``form`` (None: each pair's form drawn at random, as in ``copy_and_context.py``)."""
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n):
        dialogue = dialogues[int(rng.integers(len(dialogues)))]
        cut = int(rng.integers(1, len(dialogue)))
        context, reply = list(dialogue[:cut]), dialogue[cut]
        shape = form or COPY_FORMS[int(rng.integers(len(COPY_FORMS)))]
        rows.append((context, reply, context, copy_reply(context, reply, shape), "A", "copy"))
    return pd.DataFrame(rows, columns=["context_a", "response_a", "context_b", "response_b", "better", "negative"])


def validation_checks(data: R.JudgeData, corpus: R.SecondCorpus, seed: int) -> dict[str, pd.DataFrame]:
    """The checks of these experiments, all built from data no judge trains on (n = 400 each)."""
    return {"DailyDialog validation, random": R.validation_pairs(data, 400, 0.0, seed),
            "DailyDialog validation, look-alike": R.validation_pairs(data, 400, 1.0, seed),
            "copy check, prefix form": copy_check(data.validation, 400, seed + 2, "prefix"),
            "copy check, parrot form": copy_check(data.validation, 400, seed + 3, "parrot"),
            "Topical-Chat selection, random": training_pairs(corpus.selection, 400, seed=seed + 1)}


def paired(a: np.ndarray, b: np.ndarray, seed: int = 0) -> tuple[float, float, float]:
    difference = a - b
    rng = np.random.default_rng(seed)
    boots = difference[rng.integers(0, len(difference), (2000, len(difference)))].mean(axis=1)
    low, high = np.percentile(boots, [2.5, 97.5])
    return float(difference.mean()), float(low), float(high)


def main() -> None:
    recipe = pe.RECIPES["book"]
    seed = recipe.seed
    data = R.judge_data(seed=seed)
    corpus = R.second_corpus(seed=seed)
    checks = validation_checks(data, corpus, seed)
    run = pe.train_judge(recipe, data=data)
    print(f"book judge: {'cached' if run.from_cache else 'trained'} ({run.seconds:.0f} s)", flush=True)
    book = pe.EncoderJudge.from_training(run)
    judges = {"zero-shot": pe.EncoderJudge(), "book": book, "wise": pe.interpolated(book, WEIGHT)}
    correct = {(name, check): pe.pair_accuracy(judge, frame) for name, judge in judges.items()
               for check, frame in checks.items()}
    print(pd.DataFrame({name: {check: correct[(name, check)].mean() for check in checks} for name in judges}).T
          .round(3).to_string())
    verdict = True
    for check in checks:
        difference, low, high = paired(correct[("wise", check)], correct[("book", check)])
        worse = high < 0 or (difference < -0.02 and "Topical-Chat" not in check)
        verdict &= not worse
        print(f"wise - book, {check}: {difference:+.3f} [{low:+.3f}, {high:+.3f}] (n = {len(correct[('book', check)])})"
              f"{'  <- fails the rule' if worse else ''}")
    print("adopt wise:", verdict)


if __name__ == "__main__":
    main()
