"""The human-scored sets a card reads: one shape for all (:class:`HumanSet`), the half it reports, and the
human noise ceiling where the data keep individual ratings.

**The ceiling.** Where each item's individual ratings are kept (UPHELD: one row per item and annotator), the
reliability of an item's mean rating is the one-way intraclass correlation ``ICC(1, k)`` of Shrout and Fleiss
(case 1: raters vary per item; :func:`evalkit.stats.icc_oneway`, ``k`` the mean number of ratings per item).
Under that model the observed mean is the true item score plus noise, and a judge that *knew* the true score
would correlate with the observed mean at ``ceiling = sqrt(ICC(1, k))``; that is the Pearson ceiling a card
sets beside the judge, and the judge's ``share`` is ``pearson / ceiling``. A share at or above 1 is flagged:
no judge should beat people's own noise on unseen items (a judge equal to the human mean does, since it
carries the same noise). Beside it the card shows ``one_person``: the mean over annotators (with at least 10
items) of the Pearson correlation of one annotator's ratings with the mean of the *other* annotators on the
same items — how well a single person agrees with the rest.

Sets whose staged files keep only means say so instead of guessing (GRADE, DailyDialog-Zhao). USR keeps three
named raters' Overall ratings per reply and FED five unnamed ones per turn: both get a ceiling; FED's
``one_person`` is NaN, since no rater is known across items.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from evalkit.stats import correlation, icc_oneway
from evalkit.judgecard._names import SET_NAMES

__all__ = ["HalfChoice", "HumanSet", "Ceiling", "noise_ceiling", "load_set", "from_meta_eval", "from_upheld_labels",
           "upheld_folder_set", "card_items", "SET_NAMES",
           "UPHELD_LABELS"]

HalfChoice = Literal["test", "dev", "all"]
UPHELD_LABELS = ("content", "style", "reasonable")
_NO_RATINGS = {"dailydialog-grade": "means only in the staged files", "convai2-grade": "means only in the staged files",
               "dailydialog-zhao": "means only in the staged files", "personachat-usr": "", "topicalchat-usr": "",
               "fed": ""}  # USR keeps 3 named raters' Overall per reply, FED 5 unnamed ones per turn


@dataclass(frozen=True)
class HumanSet:
    """One human-scored set in the card's shape.

    ``items``: ``item_id``, ``group`` (the dev/test grouping of :mod:`evalkit.stats.halves`), ``half`` ("dev" or
    "test"), ``context`` (turn texts), ``history`` ((speaker, text) pairs), ``response``, ``reference`` (None
    where absent), ``dataset`` and one column per label of ``labels`` (the item's mean human score).
    ``ratings``: ``item_id``, ``rater`` and the label columns, one row per individual rating — or None, with
    ``no_ratings`` saying why."""

    name: str
    items: pd.DataFrame
    labels: tuple[str, ...] = ("score",)
    ratings: pd.DataFrame | None = None
    no_ratings: str = "the file holds one score per item"
    notes: tuple[str, ...] = field(default=())

    def half(self, which: HalfChoice) -> "HumanSet":
        """The set restricted to the ``dev`` or ``test`` half (``all``: unchanged)."""
        if which == "all":
            return self
        if which not in ("dev", "test"):
            raise ValueError(f"half must be test, dev or all, not {which!r}")
        return self._keep(self.items[self.items["half"] == which])

    def sample(self, items: int | None, *, seed: int = 0) -> "HumanSet":
        """About ``items`` items drawn by whole groups (contexts), in a seeded order of the group keys (so the
        same set, size and seed always give the same items); unchanged when ``items`` is None or covers all.

        >>> frame = pd.DataFrame({"item_id": list("abcdef"), "group": list("xxyyzz"), "score": range(6)})
        >>> sorted(HumanSet("toy", frame).sample(3, seed=1).items["group"].unique())
        ['x', 'y']
        """
        if items is None or items >= len(self.items):
            return self
        keys = sorted(self.items["group"].astype(str).unique())
        order = np.random.default_rng(seed).permutation(len(keys))
        sizes = self.items["group"].astype(str).value_counts()
        chosen, total = set(), 0
        for index in order:
            if total >= items:
                break
            chosen.add(keys[index])
            total += int(sizes[keys[index]])
        return self._keep(self.items[self.items["group"].astype(str).isin(chosen)])

    def _keep(self, items: pd.DataFrame) -> "HumanSet":
        items = items.reset_index(drop=True)
        ratings = None if self.ratings is None else self.ratings[self.ratings["item_id"].isin(set(items["item_id"]))]
        return HumanSet(self.name, items, self.labels, ratings, self.no_ratings, self.notes)


@dataclass(frozen=True)
class Ceiling:
    """The human noise ceiling of one label on the items rated: see the module docstring."""

    ceiling: float
    icc_single: float
    icc_mean: float
    raters_per_item: float
    one_person: float
    items: int


def noise_ceiling(ratings: pd.DataFrame, label: str) -> Ceiling:
    """The ceiling of ``label`` from individual ``ratings`` (``item_id``, ``rater``, the label column).

    >>> table = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]
    >>> ratings = pd.DataFrame([{"item_id": i, "rater": r, "score": v} for i, row in enumerate(table)
    ...                         for r, v in enumerate(row)])
    >>> result = noise_ceiling(ratings, "score")
    >>> round(result.icc_mean, 2), round(result.ceiling, 2), result.items  # Shrout and Fleiss: ICC(1, 4) = .44
    (0.44, 0.67, 6)
    """
    values = ratings[["item_id", "rater", label]].dropna()
    values = values.assign(**{label: values[label].astype(float)})
    per_item = values.groupby("item_id")[label].apply(list)
    single, mean, k = icc_oneway(per_item.tolist())
    rated = int((per_item.map(len) >= 2).sum())
    ceiling = float(np.sqrt(mean)) if mean == mean and mean > 0 else float("nan")
    totals = values.groupby("item_id")[label].agg(["sum", "count"])
    people = []
    for _, own in values.groupby("rater"):
        own = own[own["item_id"].map(totals["count"]) >= 2]
        if len(own) < 10:
            continue
        total, count = own["item_id"].map(totals["sum"]), own["item_id"].map(totals["count"])
        others = (total - own[label]) / (count - 1)
        people.append(correlation(own[label].to_numpy(), others.to_numpy()))
    people = [p for p in people if p == p]
    return Ceiling(ceiling, single, mean, k, float(np.mean(people)) if people else float("nan"), rated)


# --------------------------------------------------------------------------- the kit's sets

def _with_halves(dev, test) -> pd.DataFrame:
    return pd.concat([dev.items.assign(half="dev"), test.items.assign(half="test")], ignore_index=True)


def refuse_repeated_ids(frame: pd.DataFrame, source: str) -> None:
    """Each ``item_id`` of a user's file names one row (a set of one's own, ``--add``, and a file of scores,
    ``--scores``, alike): a repeated id would leave one of its rows silently unused. Raises a ValueError
    (:class:`~evalkit.paireval.schema.MetaEvalFormatError`)
    naming ``source``, the row (its line, when the frame was read from a file) and the id.

    >>> refuse_repeated_ids(pd.DataFrame({"item_id": ["a", "b", "a"]}), "mine.jsonl")
    Traceback (most recent call last):
    ...
    evalkit.paireval.schema.MetaEvalFormatError: mine.jsonl, row 3, field 'item_id': 'a' is already the id of row 1 (1 repeated ids in all): every item needs one row with its own id
    """
    from evalkit.paireval.schema import MetaEvalFormatError

    if "item_id" not in frame.columns:
        return
    ids = frame["item_id"].astype(str)
    repeated = ids.duplicated().to_numpy()
    if repeated.any():
        where = frame.attrs.get("where")
        where = where if where is not None and len(where) == len(frame) else [f"row {k + 1}" for k in range(len(frame))]
        again = int(np.flatnonzero(repeated)[0])
        first = int(np.flatnonzero((ids == ids.iat[again]).to_numpy())[0])
        raise MetaEvalFormatError(f"{source}, {where[again]}, field 'item_id': {ids.iat[again]!r} is already the id "
                                  f"of {where[first]} ({int(repeated.sum())} repeated ids in all): every item needs "
                                  "one row with its own id")


def from_meta_eval(frame: pd.DataFrame, name: str, *, no_ratings: str = "the file holds one score per item"
                   ) -> HumanSet:
    """A set in the meta-evaluation schema (one of the six, or a user's file), split into its halves."""
    from evalkit.data.dialogue import alternating
    from evalkit.stats.halves import split_meta_eval

    frame = frame.reset_index(drop=True)
    if "item_id" not in frame.columns:
        frame = frame.assign(item_id=[f"{name}:{i}" for i in range(len(frame))])
    refuse_repeated_ids(frame, frame.attrs.get("source", name))
    dev, test = split_meta_eval(frame, name)
    items = _with_halves(dev, test)
    items["history"] = [alternating(list(c)) for c in items["context"]]
    if "reference" not in items.columns:
        items["reference"] = None
    items["reference"] = items["reference"].where(items["reference"].notna(), None)
    items["dataset"] = items["dataset"].fillna(name) if "dataset" in items.columns else name
    ratings = None
    if "ratings" in items.columns:  # (rater, rating) pairs per item, as the USR and FED loaders keep them
        ratings = pd.DataFrame([{"item_id": item, "rater": rater, "score": float(value)}
                                for item, pairs in zip(items["item_id"], items["ratings"]) for rater, value in pairs])
        items = items.drop(columns="ratings")
    return HumanSet(name, items, ("score",), ratings, "" if ratings is not None else no_ratings)


def _upheld(subset: str, data_dir) -> HumanSet:
    from evalkit.upheld.release import load_upheld

    return from_upheld_labels(load_upheld(subset, data_dir=data_dir).labels, f"upheld-{subset}")


def from_upheld_labels(labels: pd.DataFrame, name: str) -> HumanSet:
    """A set from a long label table in UPHELD's shape (one row per item and annotator): its three labels, each
    a mean over annotators, the individual ratings kept for the ceiling, split into halves by conversation."""
    from evalkit.stats.halves import split_upheld_items
    from evalkit.upheld.release import item_table

    items = _with_halves(*split_upheld_items(item_table(labels), name))
    items = items.assign(context=[[text for _, text in h] for h in items["history"]], response=items["candidate"],
                         **{label: items[f"{label}_mean"].astype(float) for label in UPHELD_LABELS})
    ratings = labels[["item_id", "annotator", *UPHELD_LABELS]].rename(columns={"annotator": "rater"})
    ratings = ratings.astype({label: float for label in UPHELD_LABELS})
    return HumanSet(name, items, UPHELD_LABELS, ratings, "")


def upheld_folder_set(folder: str | Path) -> HumanSet:
    """A user's own per-annotator files in UPHELD's layout (:func:`evalkit.upheld.release.read_annotator_folder`) as a
    set named ``upheld:<folder name>``; what the loader dropped or flagged is in the set's notes."""
    from evalkit.upheld.release import read_annotator_folder

    folder = Path(folder)
    data = read_annotator_folder(folder)
    report = data.report
    # Everything the loader changed or flagged (the plain counts of files and rows read and kept aside).
    notes = tuple(f"{what}: {count}" for what, count in report.summary().itertuples(index=False)
                  if what not in ("files read", "rows read", "rows kept") and count not in (0, ""))
    notes += tuple(f"{fault.file}, row {fault.row}, {fault.column}: {fault.kind}" for fault in report.faults[:20])
    human_set = from_upheld_labels(data.labels, f"upheld:{data.labels['dataset'].iat[0]}")
    return HumanSet(human_set.name, human_set.items, human_set.labels, human_set.ratings, "", notes)


def load_set(name: str, *, data_dir: str | Path | None = None) -> HumanSet:
    """One of :data:`SET_NAMES` (both halves, marked in ``items.half``), a meta-evaluation file's path, or a
    folder of annotator files in UPHELD's layout (:func:`upheld_folder_set`)."""
    if name.startswith("upheld-"):
        subset = name[len("upheld-"):]
        if subset not in ("main", "llm_arena", "topical_chat"):
            raise KeyError(f"no set {name!r}; known: {', '.join(SET_NAMES)}")
        return _upheld(subset, data_dir)
    if name in _NO_RATINGS or name == "convai2-usr":
        from evalkit.paireval.metaeval import load_meta_eval_set

        loaded = load_meta_eval_set(name, data_dir=data_dir)
        return from_meta_eval(loaded.items, loaded.name, no_ratings=_NO_RATINGS[loaded.name])
    path = Path(name)
    if path.is_dir():  # a user's annotator files in UPHELD's layout
        return upheld_folder_set(path)
    if path.suffix.lower() in (".jsonl", ".json", ".csv"):
        from evalkit.paireval.schema import read_meta_eval

        return from_meta_eval(read_meta_eval(path), path.stem)
    raise KeyError(f"no set {name!r}; known: {', '.join(SET_NAMES)}, a meta-evaluation file (--add FILE) or a "
                   "folder of annotator files (--add-upheld DIR)")


def card_items(entry: "str | HumanSet", *, half: HalfChoice, items_per_set: int | None, seed: int,
               data_dir: str | Path | None = None) -> HumanSet:
    """The items a card scores on ``entry`` (a :class:`HumanSet` or a name :func:`load_set` reads): its
    ``half``, then about ``items_per_set`` of them by whole contexts (:meth:`HumanSet.sample` with ``seed``).
    Anything that must ask a judge about the same items as a card (``prefetch_lm``) draws them here."""
    human_set = entry if isinstance(entry, HumanSet) else load_set(entry, data_dir=data_dir)
    return human_set.half(half).sample(items_per_set, seed=seed)
