"""Dialogue from more domains than DailyDialog, leak-cut, for training the judges.

The sets where the DailyDialog-trained judge gained nothing are persona chat (PersonaChat-USR, ConvAI2-GRADE),
knowledge-grounded chat (TopicalChat-USR) and open chat (FED). Four corpora cover those domains:

=========================  ==============================================  ===========================
name                       what                                            licence
=========================  ==============================================  ===========================
``personachat``            ConvAI2 / PersonaChat validation dialogues      CC BY 4.0
``commonsense``            Commonsense-Dialogues, valid + test             CC BY-NC 4.0
``topical_chat``           Topical-Chat validation conversations           CDLA-Sharing-1.0
``chitchat``               the ``chitchat-dataset`` wheel's conversations  MIT
=========================  ==============================================  ===========================

PersonaChat's validation file is the *source* of most PersonaChat-USR and ConvAI2-GRADE contexts, and
Topical-Chat of TopicalChat-USR's and of UPHELD's Topical-Chat check set: :func:`domain_corpus` removes every
dialogue that shares a held-out unit (:mod:`.splits`) with any human-scored set the kit reports or selects on —
the six Table-1 sets whole (dev and test halves), UPHELD's three sets, Topical-Chat's test files — and counts
what each cut removed.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from evalkit.data.jsonl import read_text
from evalkit.data.sources import DataUnavailable, dataset_dir, find_file
from evalkit.paireval.splits import LeakReport, remove_held_out

__all__ = ["DOMAINS", "read_personachat", "read_commonsense_dialogues", "domain_dialogues", "DomainCorpus",
           "domain_corpus", "domain_pairs"]

DOMAINS = ("personachat", "commonsense", "topical_chat", "chitchat")


def read_personachat(path: str | Path) -> list[list[str]]:
    """ParlAI's ``self_original_no_cands`` format: a dialogue restarts its line numbers at 1; ``your persona:``
    lines are the persona (left out: the judges read conversations, not profiles); every other line is
    ``N <partner turn>\\t<reply>`` (the tab may be missing on a dialogue's last line). A line of neither form
    is an error naming the file and line."""
    dialogues: list[list[str]] = []
    for number, line in enumerate(read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        index, _, text = line.partition(" ")
        if not index.isdigit():
            raise ValueError(f"{path}, line {number}: expected '<number> <text>', got {line[:60]!r}")
        if index == "1" or not dialogues:
            dialogues.append([])
        if text.startswith("your persona:") or text.startswith("partner's persona:"):
            continue
        dialogues[-1].extend(turn.strip() for turn in text.split("\t") if turn.strip())
    return [d for d in dialogues if len(d) >= 2]


def read_commonsense_dialogues(path: str | Path) -> list[list[str]]:
    """Commonsense-Dialogues' JSON (id -> {context, speaker, turns}): the turns of each dialogue (the situation
    sentence is a prompt for the writers, not a turn)."""
    records = json.loads(read_text(path))
    if not isinstance(records, dict):
        raise ValueError(f"{path}: expected an object keyed by dialogue id")
    dialogues = []
    for key, record in records.items():
        turns = record.get("turns") if isinstance(record, dict) else None
        if not isinstance(turns, list) or not all(isinstance(t, str) for t in turns):
            raise ValueError(f"{path}, dialogue {key!r}, field 'turns': expected a list of strings")
        turns = [t.strip() for t in turns if t.strip()]
        if len(turns) >= 2:
            dialogues.append(turns)
    return dialogues


def _file(name: str, relative: str, data_dir: str | Path | None) -> Path:
    root = dataset_dir(name, data_dir=data_dir)
    path = find_file(root, relative)
    if path is None:
        raise DataUnavailable(f"{root}: no {relative}")
    return path


def domain_dialogues(name: str, *, data_dir: str | Path | None = None) -> list[list[str]]:
    """The dialogues of one corpus of :data:`DOMAINS`, before the leak cut."""
    from evalkit.paireval.data import chitchat_dialogues, load_topical_chat

    if name == "personachat":
        return read_personachat(_file("personachat", "valid_self_original_no_cands.txt", data_dir))
    if name == "commonsense":
        return [d for split in ("valid.json", "test.json")
                for d in read_commonsense_dialogues(_file("commonsense_dialogues", split, data_dir))]
    if name == "topical_chat":
        return (load_topical_chat("valid_freq", data_dir=data_dir) + load_topical_chat("valid_rare", data_dir=data_dir))
    if name == "chitchat":
        return chitchat_dialogues()
    raise KeyError(f"no training corpus {name!r}; known: {', '.join(DOMAINS)}")


@dataclass
class DomainCorpus:
    """Leak-cut dialogues per corpus and what each cut removed."""

    dialogues: dict[str, list[list[str]]]
    reports: dict[str, LeakReport]

    def table(self) -> pd.DataFrame:
        """Dialogues before and after the cut, per corpus."""
        return pd.DataFrame([{"corpus": name, "dialogues": r.dialogues_before, "removed": r.removed,
                              "kept": r.dialogues_after} for name, r in self.reports.items()]).set_index("corpus")


def _held_out(data_dir: str | Path | None) -> dict[str, list[list[str]]]:
    from evalkit.upheld.release import load_upheld
    from evalkit.paireval.data import load_topical_chat
    from evalkit.paireval.training_data import _table1_conversations

    held = _table1_conversations(data_dir)
    for subset in ("main", "llm_arena", "topical_chat"):
        labels = load_upheld(subset, data_dir=data_dir).labels
        held[f"UPHELD {subset}"] = [[t for _, t in h] + [x for x in (r, c) if isinstance(x, str)]
                                    for h, r, c in zip(labels["history"], labels["reference"], labels["candidate"])]
    held["Topical-Chat test"] = (load_topical_chat("test_freq", data_dir=data_dir)
                                 + load_topical_chat("test_rare", data_dir=data_dir))
    return held


def domain_corpus(names: Sequence[str], *, data_dir: str | Path | None = None,
                  also_held_out: dict[str, list[list[str]]] | None = None) -> DomainCorpus:
    """The corpora ``names`` (of :data:`DOMAINS`), each without every dialogue that shares a held-out unit with
    a human-scored set (see the module docstring) or with ``also_held_out`` (the judge data's own held-out
    sources — DailyDialog validation and test, DailyDialog++ held-out parts, the attack suite: a training
    recipe passes :attr:`~evalkit.paireval.training_data.JudgeData.held_out` and its validation dialogues)."""
    held = {**_held_out(data_dir), **(also_held_out or {})}
    dialogues, reports = {}, {}
    for name in names:
        dialogues[name], reports[name] = remove_held_out(domain_dialogues(name, data_dir=data_dir), held)
    return DomainCorpus(dialogues, reports)


def domain_pairs(corpus: DomainCorpus, n: int, *, seed: int, copy_share: float = 0.0,
                 copy_prefix_share: float = 0.5) -> pd.DataFrame:
    """``n`` two-conversation training pairs split evenly over the corpora (the remainder to the first ones),
    each with random negatives from its own corpus (a reply from another domain would be too easy to reject)
    and a ``copy_share`` of copy negatives as in :func:`~evalkit.paireval.data.training_pairs`."""
    from evalkit.paireval.data import training_pairs

    names = [name for name, d in corpus.dialogues.items() if d]
    if not names:
        raise ValueError("no dialogues left in any training corpus after the leak cut")
    counts = np.full(len(names), n // len(names))
    counts[: n % len(names)] += 1
    frames = [training_pairs(corpus.dialogues[name], int(k), seed=seed + 101 * i, copy_share=copy_share,
                             copy_prefix_share=copy_prefix_share).assign(corpus=name)
              for i, (name, k) in enumerate(zip(names, counts)) if k]
    return pd.concat(frames, ignore_index=True)
