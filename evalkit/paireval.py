"""Chapter 4 — PairEval: score a response by comparing it with responses from other conversations.

First increment: the training corpus (DailyDialog), training pairs (real next utterance vs a random
utterance of another dialogue, the positive's slot random) and the PairEval score through the model door:

    s(h, r) = mean over comparison examples (h_j, r_j) of P(r is the better reply),

each comparison asked in both orders (target shown as A, then as B) and averaged, which cancels a judge's
position bias. LoRA training, DirectEval, calibration and the meta-evaluation follow in later increments.
"""
from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Literal, Sequence

import numpy as np
import pandas as pd

from .models import Backend
from .sources import dataset_dir

__all__ = ["read_dailydialog", "load_dailydialog", "training_pairs", "pair_messages", "paireval_scores"]

Turns = Sequence[str]


def read_dailydialog(archive: str | Path) -> list[list[str]]:
    """Dialogues (lists of utterances) from one DailyDialog split archive (``train.zip`` etc.).

    Utterances are separated by ``__eou__``; the tokenised spacing of the release (``word , word``) is kept.
    A line with fewer than two utterances is not a dialogue and raises, naming the archive and line.
    """
    archive = Path(archive)
    with zipfile.ZipFile(archive) as bundle:
        names = [n for n in bundle.namelist() if n.endswith(".txt") and Path(n).name.startswith("dialogues_")
                 and "_act_" not in n and "_emotion_" not in n]
        if len(names) != 1:
            raise ValueError(f"{archive}: expected one dialogues_<split>.txt, found {names}")
        text = io.TextIOWrapper(bundle.open(names[0]), encoding="utf-8").read()
    dialogues = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        turns = [turn.strip() for turn in line.split("__eou__") if turn.strip()]
        if len(turns) < 2:
            raise ValueError(f"{archive}:{names[0]}, line {number}: fewer than two utterances")
        dialogues.append(turns)
    return dialogues


def load_dailydialog(split: Literal["train", "validation", "test"] = "train", *,
                     data_dir: str | Path | None = None) -> list[list[str]]:
    """One DailyDialog split from ``$EVALKIT_DATA_DIR``/``data_dir`` or the verified download cache."""
    return read_dailydialog(dataset_dir("dailydialog", data_dir=data_dir) / f"{split}.zip")


def training_pairs(dialogues: Sequence[Turns], n: int, *, seed: int = 0, max_context: int = 4) -> pd.DataFrame:
    """``n`` pairwise examples: a context (up to ``max_context`` turns), the real next utterance and a random
    utterance from another dialogue, the real one placed in slot A or B at random.

    Columns: ``context`` (list of turns), ``first``, ``second``, ``better`` ("A" or "B").
    """
    if len(dialogues) < 2:
        raise ValueError("need at least two dialogues to draw negatives from another dialogue")
    rng = np.random.default_rng(seed)
    rows = []
    while len(rows) < n:
        index = int(rng.integers(len(dialogues)))
        dialogue = dialogues[index]
        cut = int(rng.integers(1, len(dialogue)))
        other = int(rng.integers(len(dialogues) - 1))
        other += other >= index  # any dialogue but this one
        negative = dialogues[other][int(rng.integers(len(dialogues[other])))]
        positive = dialogue[cut]
        context = list(dialogue[max(0, cut - max_context):cut])
        if rng.random() < 0.5:
            rows.append((context, positive, negative, "A"))
        else:
            rows.append((context, negative, positive, "B"))
    return pd.DataFrame(rows, columns=["context", "first", "second", "better"])


def _dialogue_text(context: Turns) -> str:
    speakers = ("Speaker 1", "Speaker 2")
    offset = len(context) % 2  # the reply's speaker is always "Speaker 2"
    return "\n".join(f"{speakers[(i + offset) % 2]}: {turn}" for i, turn in enumerate(context))


def pair_messages(context_a: Turns, response_a: str, context_b: Turns, response_b: str) -> list[dict[str, str]]:
    """The pairwise prompt: two (conversation, reply) pairs, which reply fits its conversation better?"""
    prompt = ("Two short conversations follow, each with a proposed next reply.\n\n"
              f"Conversation A:\n{_dialogue_text(context_a)}\nReply A: {response_a}\n\n"
              f"Conversation B:\n{_dialogue_text(context_b)}\nReply B: {response_b}\n\n"
              "Which reply is the better continuation of its own conversation? Answer with one letter: A or B.")
    return [{"role": "user", "content": prompt}]


def paireval_scores(contexts: Sequence[Turns], responses: Sequence[str], comparisons: Sequence[tuple[Turns, str]],
                    backend: Backend, *, positions: Literal["both", "first", "second"] = "both") -> np.ndarray:
    """PairEval score of each (context, response) against every comparison example.

    ``positions``: "both" asks each comparison with the target as A and as B and averages (the paper's
    setting); "first"/"second" keep only one order (the paper's position ablation). All prompts of the call
    go to the backend in one batched label-probability request.
    """
    if len(contexts) != len(responses):
        raise ValueError(f"{len(contexts)} contexts but {len(responses)} responses")
    if not comparisons:
        raise ValueError("PairEval needs at least one comparison example")
    prompts, slots = [], []
    for target, (context, response) in enumerate(zip(contexts, responses)):
        for other_context, other_response in comparisons:
            if positions in ("both", "first"):
                prompts.append(pair_messages(context, response, other_context, other_response))
                slots.append((target, "A"))
            if positions in ("both", "second"):
                prompts.append(pair_messages(other_context, other_response, context, response))
                slots.append((target, "B"))
    results = backend.label_probs(prompts, ["A", "B"])
    totals, counts = np.zeros(len(contexts)), np.zeros(len(contexts))
    for (target, slot), result in zip(slots, results):
        if result.probs is None:
            continue  # an abstention contributes nothing rather than a guess
        totals[target] += result.probs[slot]
        counts[target] += 1
    with np.errstate(invalid="ignore"):
        return np.where(counts > 0, totals / np.maximum(counts, 1), np.nan)
