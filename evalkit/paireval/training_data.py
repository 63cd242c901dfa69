"""The leak-free data the judges train on: DailyDialog and DailyDialog++ cut into roles, Topical-Chat as a
second corpus, and a recipe's training and validation pairs.

Nothing held out reaches training: every conversation that shares a held-out unit (an adjacent pair of turns
or an utterance of 8+ words, :mod:`.splits`) with an evaluation or selection set is removed first, and the
cut is counted (:class:`~evalkit.paireval.splits.LeakReport`).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from evalkit.paireval.data import load_dailydialog, load_dailydialog_plusplus, load_khalid_lee, training_pairs
from evalkit.paireval.recipes import JudgeRecipe
from evalkit.paireval.splits import LeakReport, held_out_units, remove_held_out

__all__ = ["JudgeData", "judge_data", "SecondCorpus", "second_corpus", "recipe_pairs", "recipe_frame",
           "validation_pairs", "split_dailydialog_plusplus_dev"]


@dataclass
class JudgeData:
    """The corpus cut into roles, with nothing held out reaching training.

    ``train``: DailyDialog train dialogues that share no held-out unit (see :mod:`.splits`) with any
    evaluation or selection set; ``validation``: DailyDialog validation, cut the same way against the test
    sets (used for recipe selection, learning curves and PairEval's comparison examples); ``test``:
    DailyDialog test; ``hard_train`` / ``hard_calibration``: DailyDialog++ dev, 80/20, the training part
    cut like ``train`` (the calibration part cut against the test sets); ``ddpp_test``: DailyDialog++ test.
    """

    corpus: str
    train: list[list[str]]
    validation: list[list[str]]
    test: list[list[str]]
    hard_train: list[dict[str, Any]]
    hard_calibration: list[dict[str, Any]]
    ddpp_test: list[dict[str, Any]]
    train_report: LeakReport
    validation_report: LeakReport
    hard_removed: int
    held_out: dict[str, list[list[str]]]  # every conversation training must not see, by source



def _ddpp_conversations(records: list[dict[str, Any]], *, replies: tuple[str, ...] = (
        "positive_responses", "adversarial_negative_responses", "random_negative_responses")) -> list[list[str]]:
    """Each record's context followed by each of its replies of the kinds named. Held out: all of them;
    what training uses of a record: its context and adversarial replies."""
    return [list(r["context"]) + [reply] for r in records for kind in replies for reply in r.get(kind, [])]


@lru_cache(maxsize=4)
def _evaluation_conversations(data_dir: str | None) -> dict[str, list[list[str]]]:
    """DailyDialog-based meta-evaluation sets and the attack suite: conversations the judge is tested on
    (sets that cannot be had are left out here; the chapter that evaluates on them fails loudly instead)."""
    from evalkit.data.sources import DataUnavailable
    from evalkit.paireval.metaeval import load_meta_eval_set

    sources = {}
    for name in ("dailydialog-grade", "dailydialog-zhao"):
        try:
            items = load_meta_eval_set(name, data_dir=data_dir).items
        except DataUnavailable:
            continue
        sources[name] = [list(c) + [r] for c, r in zip(items["context"], items["response"])]
        sources[name] += [list(c) + [r] for c, r in zip(items["context"], items["reference"]) if isinstance(r, str)]
    try:
        attacks = load_khalid_lee(data_dir=data_dir)
        sources["Khalid & Lee"] = ([list(c) + [o] for c, o in zip(attacks["context"], attacks["original"])]
                                   + [list(c) + [m] for c, m in zip(attacks["context"], attacks["modified"])])
    except DataUnavailable:
        pass
    return sources


def _evaluation_sources(test, hard_calibration, ddpp_test, data_dir) -> dict[str, list[list[str]]]:
    return {"DailyDialog test": test, "DailyDialog++ test": _ddpp_conversations(ddpp_test),
            "DailyDialog++ dev (held-out 20%)": _ddpp_conversations(hard_calibration),
            **_evaluation_conversations(None if data_dir is None else str(data_dir))}


def judge_data(*, seed: int = 13, data_dir: str | Path | None = None) -> JudgeData:
    """DailyDialog and DailyDialog++ cut into leak-free roles (see :class:`JudgeData`).

    Without DailyDialog (offline, no ``EVALKIT_DATA_DIR``) the embedded chitchat corpus stands in, cut into
    three disjoint parts (80/10/10) and named as a fallback in ``corpus``; without DailyDialog++ there are no
    hard negatives.
    """
    from evalkit.data.sources import DataUnavailable
    from evalkit.paireval.data import chitchat_dialogues

    try:
        train, validation, test = (load_dailydialog(s, data_dir=data_dir) for s in ("train", "validation", "test"))
        corpus = "DailyDialog"
    except DataUnavailable:
        dialogues = chitchat_dialogues()
        cut_a, cut_b = int(0.8 * len(dialogues)), int(0.9 * len(dialogues))
        train, validation, test = dialogues[:cut_a], dialogues[cut_a:cut_b], dialogues[cut_b:]
        corpus = "chitchat-dataset (FALLBACK: DailyDialog could not be had)"
    try:
        ddpp_dev = load_dailydialog_plusplus("dev", data_dir=data_dir)
        ddpp_test = load_dailydialog_plusplus("test", data_dir=data_dir)
    except DataUnavailable:
        ddpp_dev, ddpp_test = [], []
    hard_train, hard_calibration = split_dailydialog_plusplus_dev(ddpp_dev, seed) if ddpp_dev else ([], [])
    evaluation = _evaluation_sources(test, hard_calibration, ddpp_test, data_dir)
    validation, validation_report = remove_held_out(validation, evaluation)
    sources = {**evaluation, "DailyDialog validation": validation}
    train, train_report = remove_held_out(train, sources)
    units = set().union(*(held_out_units(v) for v in sources.values()))
    used = ("positive_responses", "adversarial_negative_responses")
    kept_hard = [r for r in hard_train if not (held_out_units(_ddpp_conversations([r], replies=used)) & units)]
    # The calibration/validation records must not carry test text either (selection never sees the test sets).
    test_units = set().union(*(held_out_units(v) for k, v in evaluation.items() if "held-out 20%" not in k))
    hard_validation = [r for r in hard_calibration
                       if not (held_out_units(_ddpp_conversations([r], replies=used)) & test_units)]
    return JudgeData(corpus, train, validation, test, kept_hard, hard_validation, ddpp_test, train_report,
                     validation_report, len(hard_train) - len(kept_hard), sources)


@dataclass
class SecondCorpus:
    """Topical-Chat's validation conversations cut for training: ``train`` (80%) and ``selection`` (20%, for
    choosing a recipe), each without any conversation that shares a held-out unit with the six Table-1 sets,
    UPHELD's Topical-Chat check set or Topical-Chat's test files (``train`` also not with ``selection``)."""

    train: list[list[str]]
    selection: list[list[str]]
    train_report: LeakReport
    selection_report: LeakReport
    held_out: dict[str, list[list[str]]]


def _table1_conversations(data_dir: str | Path | None) -> dict[str, list[list[str]]]:
    """Every (context + reply) and (context + reference) of the six Table-1 sets, by set."""
    from evalkit.paireval.metaeval import META_EVAL_SETS, load_meta_eval_set

    held = {}
    for name in META_EVAL_SETS:
        items = load_meta_eval_set(name, data_dir=data_dir).items
        held[name] = [list(c) + [r] for c, r in zip(items["context"], items["response"])]
        held[name] += [list(c) + [r] for c, r in zip(items["context"], items["reference"]) if isinstance(r, str)]
    return held


def second_corpus(*, seed: int = 13, data_dir: str | Path | None = None) -> SecondCorpus:
    """Topical-Chat (knowledge-grounded chit-chat, longer turns than DailyDialog) as a second training corpus,
    leak-cut (see :class:`SecondCorpus`). Its train file is not public in a size this kit fetches, so the judge
    trains on the validation files; USR's Topical-Chat items come from the test files, held out here."""
    from evalkit.upheld.release import load_upheld
    from evalkit.paireval.data import load_topical_chat

    held = _table1_conversations(data_dir)
    check = load_upheld("topical_chat", data_dir=data_dir).labels
    held["UPHELD Topical-Chat check set"] = [[t for _, t in h] + [x for x in (r, c) if isinstance(x, str)]
                                             for h, r, c in zip(check["history"], check["reference"],
                                                                check["candidate"])]
    held["Topical-Chat test"] = (load_topical_chat("test_freq", data_dir=data_dir)
                                 + load_topical_chat("test_rare", data_dir=data_dir))
    valid = (load_topical_chat("valid_freq", data_dir=data_dir)
             + load_topical_chat("valid_rare", data_dir=data_dir))
    order = np.random.default_rng(seed).permutation(len(valid))
    part = [valid[i] for i in order[:len(valid) // 5]]
    selection, selection_report = remove_held_out(part, held)
    train, train_report = remove_held_out([valid[i] for i in order[len(valid) // 5:]],
                                          {**held, "Topical-Chat selection part": part})
    return SecondCorpus(train, selection, train_report, selection_report,
                        {**held, "Topical-Chat selection part": part})


def recipe_pairs(recipe: JudgeRecipe, data: JudgeData, *, hard_share: float,
                 data_dir: str | Path | None = None) -> pd.DataFrame:
    """The encoder recipe's training pairs: DailyDialog pairs (with ``hard_share`` adversarial negatives), for a
    share ``second_corpus_share`` Topical-Chat pairs with random negatives (:func:`second_corpus`), and for a
    share ``domain_share`` pairs from the leak-cut ``domains`` (:func:`~evalkit.paireval.corpora.domain_pairs`)."""
    settings = recipe.encoder
    extra = int(round(settings.pairs * settings.second_corpus_share))
    other = int(round(settings.pairs * settings.domain_share)) if settings.domains else 0
    pairs = recipe_frame(data, settings.pairs - extra - other, hard_share, recipe.seed,
                         copy_share=settings.copy_share, copy_prefix_share=settings.copy_prefix_share)
    frames = [pairs]
    if extra:
        corpus = second_corpus(seed=recipe.seed, data_dir=data_dir)
        frames.append(training_pairs(corpus.train, extra, seed=recipe.seed + 7))
    if other:
        from evalkit.paireval.corpora import domain_corpus, domain_pairs

        own = {**data.held_out, "judge validation dialogues": data.validation}
        frames.append(domain_pairs(domain_corpus(settings.domains, data_dir=data_dir, also_held_out=own), other,
                                   seed=recipe.seed + 11,
                                   copy_share=settings.copy_share, copy_prefix_share=settings.copy_prefix_share)
                      .drop(columns="corpus"))
    return pd.concat(frames, ignore_index=True) if len(frames) > 1 else pairs


def recipe_frame(data: JudgeData, n: int, hard_share: float, seed: int, *, copy_share: float = 0.0,
                 copy_prefix_share: float = 0.5) -> pd.DataFrame:
    """``n`` DailyDialog training pairs, a ``hard_share`` of them with DailyDialog++'s adversarial negatives."""
    return training_pairs(data.train, n, seed=seed, hard_negatives=data.hard_train, hard_share=hard_share,
                          copy_share=copy_share, copy_prefix_share=copy_prefix_share)


def validation_pairs(data: JudgeData, n: int, hard_share: float, seed: int) -> pd.DataFrame:
    """Pairs built from the validation dialogues and the held-out 20% of DailyDialog++ dev."""
    return training_pairs(data.validation, n, seed=seed + 1, hard_negatives=data.hard_calibration,
                          hard_share=hard_share)


def split_dailydialog_plusplus_dev(records: Sequence[Any], seed: int) -> tuple[list[Any], list[Any]]:
    """DailyDialog++ has no public train file, so its dev file is cut by a seeded permutation: 80% supplies
    adversarial training negatives, 20% is held out (calibration pairs).

    >>> train, held_out = split_dailydialog_plusplus_dev(list(range(10)), seed=0)
    >>> len(train), len(held_out), sorted(train + held_out) == list(range(10))
    (8, 2, True)
    """
    shuffled = np.random.default_rng(seed).permutation(len(records))
    cut = int(0.8 * len(shuffled))
    return [records[i] for i in shuffled[:cut]], [records[i] for i in shuffled[cut:]]
