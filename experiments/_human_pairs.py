"""Training pairs from people's scores: two replies of one human-scored set, the one people scored higher as the
better side — taken from **dev halves only**, so a judge trained on them can still be reported on test halves.

A pair is two items of the same set whose mean human scores differ by at least ``margin_sd`` of that set's
standard deviation (smaller gaps are inside the raters' own noise). Pairs of replies to the *same* context are
the sharpest signal (only the reply differs) and are taken first, up to ``same_context_share`` of a set's
``per_set`` pairs; the rest pair replies of *different* contexts, which is what PairEval compares at test time
(a reply against another conversation's). Which side is shown first is drawn at random, seeded.

The halves (:mod:`evalkit.stats.halves`) share no context, but a *reply* of a dev item can still match text of a
test item (a generic pair of turns; sets drawn from one corpus, such as ConvAI2-GRADE and PersonaChat-USR),
so ``held_out`` conversations (all test halves, and for a leave-one-set-out estimate the held-out set's dev
half) cut every item that shares a held-out unit of :mod:`evalkit.paireval.splits` with them, counted in
``dropped``. :func:`human_preference_pairs` refuses anything but a :class:`~evalkit.stats.halves.DevHalf`
(``tests/test_lab_human_pairs.py`` checks both, on the staged sets).

>>> import pandas as pd
>>> from evalkit.stats.halves import DevHalf
>>> items = pd.DataFrame({"context": [["hi"], ["hi"], ["and you?"]], "response": ["hello!", "bye", "fine"],
...                       "score": [5.0, 1.0, 3.0]})
>>> made = human_preference_pairs({"toy": DevHalf("toy", items)}, per_set=3, margin_sd=0.5)
>>> sorted(zip(made.pairs["same_context"], made.pairs["gap"]))
[(False, 2.0), (False, 2.0), (True, 4.0)]
>>> human_preference_pairs({"toy": DevHalf("toy", items)}, per_set=3, held_out=[["and you?", "fine"]]).dropped
{'toy': 1}
"""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd

from evalkit.stats.halves import DevHalf, require_dev
from evalkit.data.dialogue import Texts
from evalkit.paireval.encoder import PAIR_COLUMNS
from evalkit.data.overlap import conversation_units
from evalkit.paireval.splits import held_out_units

__all__ = ["HumanPairs", "human_preference_pairs", "people_held_out"]


@dataclass(frozen=True)
class HumanPairs:
    """The pairs (columns of :data:`~evalkit.paireval.encoder.PAIR_COLUMNS` plus ``set``, ``gap`` — the
    difference of the mean human scores — and ``same_context``) and, per set, the items cut because they share
    text with the held-out conversations."""

    pairs: pd.DataFrame
    dropped: dict[str, int]


def _candidate_pairs(scores: np.ndarray, contexts: list[tuple[str, ...]], threshold: float
                     ) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(same-context, cross-context) index pairs whose scores differ by at least ``threshold``."""
    same, cross = [], []
    for i, j in combinations(range(len(scores)), 2):
        if abs(scores[i] - scores[j]) >= threshold and scores[i] != scores[j]:
            (same if contexts[i] == contexts[j] else cross).append((i, j))
    return same, cross


def human_preference_pairs(halves: Mapping[str, DevHalf], *, per_set: int, margin_sd: float = 0.5,
                           same_context_share: float = 0.5, seed: int = 13, label: str = "score",
                           held_out: Iterable[Texts] = ()) -> HumanPairs:
    """Up to ``per_set`` pairs from each dev half, none of whose items shares a unit with ``held_out``
    conversations (each a list of turns, the reply included); see the module docstring."""
    if per_set < 1:
        raise ValueError(f"per_set must be at least 1, not {per_set}")
    if not 0 <= same_context_share <= 1:
        raise ValueError(f"same_context_share must be in [0, 1], not {same_context_share}")
    held = held_out_units(held_out)
    rows, dropped = [], {}
    for name, half in halves.items():
        require_dev(half)
        # One generator per set, seeded by the set's name: a set gives the same pairs whichever sets come with it.
        rng = np.random.default_rng([seed, int(hashlib.sha256(name.encode("utf-8")).hexdigest()[:8], 16)])
        items = half.items.reset_index(drop=True)
        scores = items[label].to_numpy(dtype=float)
        clean = np.array([not (conversation_units([*map(str, c), str(r)]) & held)
                          for c, r in zip(items["context"], items["response"])], dtype=bool)
        dropped[name] = int((~clean).sum())
        keep = ~np.isnan(scores) & clean
        items, scores = items[keep].reset_index(drop=True), scores[keep]
        if len(items) < 2:
            continue
        contexts = [tuple(map(str, c)) for c in items["context"]]
        same, cross = _candidate_pairs(scores, contexts, margin_sd * float(np.std(scores, ddof=1)))
        take_same = min(len(same), math.floor(per_set * same_context_share + 0.5))
        take_cross = min(len(cross), per_set - take_same)
        take_same = min(len(same), per_set - take_cross)  # a set short of cross pairs fills with same-context ones
        chosen = ([same[k] for k in sorted(rng.choice(len(same), take_same, replace=False))] if take_same else []) + \
                 ([cross[k] for k in sorted(rng.choice(len(cross), take_cross, replace=False))] if take_cross else [])
        replies = items["response"].astype(str).tolist()
        for i, j in chosen:
            good, bad = (i, j) if scores[i] > scores[j] else (j, i)
            first, second, better = (good, bad, "A") if rng.random() < 0.5 else (bad, good, "B")
            rows.append({"context_a": list(contexts[first]), "response_a": replies[first],
                         "context_b": list(contexts[second]), "response_b": replies[second], "better": better,
                         "set": name, "gap": float(abs(scores[i] - scores[j])),
                         "same_context": contexts[i] == contexts[j]})
    return HumanPairs(pd.DataFrame(rows, columns=[*PAIR_COLUMNS, "set", "gap", "same_context"]), dropped)


def people_held_out(data: Any, *, data_dir: str | Path | None = None) -> dict[str, list[list[str]]]:
    """What pairs of people's preferences must not touch, by source (conversations with their replies): every
    test half of the six Table-1 sets (context + reply and context + reference), UPHELD's three sets and
    Topical-Chat's test files whole (the judge card and chapter 3 report on them), and the judge data's own
    held-out sources (``data``: :class:`~evalkit.paireval.training_data.JudgeData`) except the two DailyDialog
    Table-1 sets, which the synthetic training data hold out whole and whose *dev halves* these pairs come from."""
    from evalkit.stats.halves import split_meta_eval
    from evalkit.paireval.corpora import _held_out
    from evalkit.paireval.metaeval import META_EVAL_SETS, load_meta_eval_set

    held = {name: turns for name, turns in _held_out(data_dir).items() if name not in META_EVAL_SETS}
    held.update({name: turns for name, turns in data.held_out.items() if name not in META_EVAL_SETS})
    for name in META_EVAL_SETS:
        _, test = split_meta_eval(load_meta_eval_set(name, data_dir=data_dir).items, name)
        items = test.items
        sides = [list(map(str, c)) + [str(r)] for c, r in zip(items["context"], items["response"])]
        if "reference" in items:
            sides += [list(map(str, c)) + [r] for c, r in zip(items["context"], items["reference"]) if isinstance(r, str)]
        held[f"{name} test half"] = sides
    return held
