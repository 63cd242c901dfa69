"""Development and test halves of every human-scored set: people decide on one half, the other half reports.

A judge, a recipe, a data mix, a threshold or an ensemble is *chosen* by its agreement with people on the
**dev** half of a human-scored set; a chapter *reports* the **test** half. The halves are

* **grouped**: items whose conversations share text are one group and land in one half — so no context, and
  no conversation, is in both. Two items are joined when they share a held-out unit of
  :mod:`evalkit.paireval.splits` (an adjacent pair of turns, or an utterance of eight words or more, after
  normalisation; a pair only when its two turns have eight words together, so that greetings join
  nothing), or an id the data give (UPHELD's ``conversation_id``). Joining is transitive (union-find):
  FED's later turns, whose contexts contain the earlier turns, go with them;
* **a function of content**: a group's half is the parity of a SHA-256 of the seed and the group's smallest
  normalised text, so it never drifts with row order, and adding an unrelated item moves no other item;
* **typed**: a :class:`DevHalf` and a :class:`TestHalf` are different types. Selection code takes a
  :class:`DevHalf` and calls :func:`require_dev`, which refuses anything else — a test half cannot reach a
  decision by accident.

>>> import pandas as pd
>>> frame = pd.DataFrame({"context": [["hi there how are you today my old friend"], ["what time is it ?"],
...                                   ["hi there how are you today my old friend"]],
...                       "response": ["fine", "noon", "great"], "score": [3.0, 4.0, 5.0]})
>>> dev, test = split_frame(frame, "toy", texts=lambda row: list(row.context))
>>> len(dev) + len(test), set(dev.items["group"]) & set(test.items["group"])  # a group never splits
(3, set())
>>> again, _ = split_frame(frame.iloc[::-1], "toy", texts=lambda row: list(row.context))
>>> sorted(again.items["score"]) == sorted(dev.items["score"])  # row order changes nothing
True
>>> require_dev(test)
Traceback (most recent call last):
...
TypeError: selection takes a dev half; got the test half of 'toy'
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Callable, Iterable, Literal, Sequence

import pandas as pd

from evalkit.data.dialogue import Texts
from evalkit.data.overlap import DISTINCT_WORDS, PAIR_JOINER, conversation_units, normalise

__all__ = ["SEED", "Half", "DevHalf", "TestHalf", "content_groups", "split_frame", "require_dev", "halves_table",
           "meta_eval_halves", "split_meta_eval", "upheld_halves", "split_upheld_items", "mirrorbench_label_halves", "split_mirrorbench_labels", "human_scored_halves"]

SEED = "evalkit-halves-1"
HalfName = Literal["dev", "test"]


@dataclass(frozen=True)
class Half:
    """One half of a human-scored set: its ``items`` (the set's own columns plus ``group``) and its name."""

    name: str
    items: pd.DataFrame
    kind: HalfName = "dev"

    @property
    def groups(self) -> int:
        """Content groups (contexts that share text are one group, so a group may hold several contexts)."""
        return int(self.items["group"].nunique()) if len(self.items) else 0

    @property
    def contexts(self) -> int | None:
        """Distinct contexts (their turns, word for word); None for a set without a ``context`` column.

        >>> import pandas as pd
        >>> Half("s", pd.DataFrame({"context": [["hi", "yo"], ["hi", "yo"], ["hey"]], "group": ["a", "a", "b"]})).contexts
        2
        """
        if "context" not in self.items:
            return None
        return len({str(c) if isinstance(c, str) else tuple(map(str, c)) for c in self.items["context"]})

    def __len__(self) -> int:
        return len(self.items)

    def sample(self, n: int | None, *, seed: int) -> "Half":
        """``n`` of the half's items drawn without replacement (all when ``n`` is None or not smaller), as a
        half of the same kind: a sample of a dev half is still dev."""
        if n is None or n >= len(self.items):
            return self
        picked = self.items.sample(n=n, random_state=seed).sort_index().reset_index(drop=True)
        return type(self)(self.name, picked, kind=self.kind)


@dataclass(frozen=True)
class DevHalf(Half):
    """The half that decides."""

    kind: HalfName = "dev"


@dataclass(frozen=True)
class TestHalf(Half):
    """The half that reports; never passed to selection code."""

    __test__ = False  # not a pytest class

    kind: HalfName = "test"


def require_dev(half: object) -> DevHalf:
    """``half`` if it is a :class:`DevHalf`; a TypeError for a test half, a full set or anything else."""
    if isinstance(half, DevHalf):
        return half
    if isinstance(half, TestHalf):
        raise TypeError(f"selection takes a dev half; got the test half of {half.name!r}")
    raise TypeError(f"selection takes a dev half (evalkit.stats.halves.DevHalf); got {type(half).__name__}")


class _Groups:
    """Union-find over item indices."""

    def __init__(self, n: int):
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def join(self, i: int, j: int) -> None:
        a, b = self.find(i), self.find(j)
        if a != b:
            self.parent[max(a, b)] = min(a, b)


def content_groups(conversations: Sequence[Texts], ids: Sequence[object] | None = None) -> list[str]:
    """A group key per conversation: conversations sharing a held-out unit (or an id in ``ids``) share a
    key, transitively. The key is the group's smallest normalised text, so it depends on content only.

    >>> content_groups([["a b c d e f g h"], ["x y"], ["A, b c d e f g h!", "z"]])
    ['a b c d e f g h', 'x y', 'a b c d e f g h']
    """
    groups = _Groups(len(conversations))
    first_seen: dict[object, int] = {}
    for index, turns in enumerate(conversations):
        units = _distinctive_units(turns) or {normalise(" ".join(turns))}
        keys: Iterable[object] = list(units) + ([("id", ids[index])] if ids is not None else [])
        for key in keys:
            if key in first_seen:
                groups.join(first_seen[key], index)
            else:
                first_seen[key] = index
    smallest: dict[int, str] = {}
    for index, turns in enumerate(conversations):
        root = groups.find(index)
        text = normalise(" ".join(turns))
        smallest[root] = min(smallest.get(root, text), text)
    return [smallest[groups.find(index)] for index in range(len(conversations))]


def _distinctive_units(turns: Texts) -> set[str]:
    """The held-out units of ``turns`` that name one conversation: greeting pairs such as "hi" / "hi there"
    open a hundred FED conversations and would join them all, so a pair counts only when its two turns
    together have :data:`~evalkit.data.overlap.DISTINCT_WORDS` words."""
    return {unit for unit in conversation_units(turns)
            if len(unit.replace(PAIR_JOINER, " ").split()) >= DISTINCT_WORDS}


def _half_of(group: str, seed: str) -> HalfName:
    digest = hashlib.sha256(f"{seed}\u241f{group}".encode("utf-8")).digest()
    return "dev" if digest[0] % 2 == 0 else "test"


def split_frame(frame: pd.DataFrame, name: str, *, texts: Callable[[pd.Series], Texts],
                id_column: str | None = None, seed: str = SEED) -> tuple[DevHalf, TestHalf]:
    """The dev and test halves of ``frame``; ``texts(row)`` gives the turns that identify a row's
    conversation (context and reply), ``id_column`` an id that joins rows too."""
    conversations = [list(texts(row)) for row in frame.itertuples(index=False)]
    ids = frame[id_column].tolist() if id_column else None
    groups = content_groups(conversations, ids)
    keyed = frame.assign(group=[hashlib.sha256(g.encode("utf-8")).hexdigest()[:12] for g in groups])
    in_dev = pd.Series([_half_of(g, seed) == "dev" for g in groups], index=frame.index)
    return (DevHalf(name, keyed[in_dev].reset_index(drop=True)),
            TestHalf(name, keyed[~in_dev].reset_index(drop=True)))


def halves_table(halves: dict[str, tuple[DevHalf, TestHalf]]) -> pd.DataFrame:
    """Items, contexts and content groups per half, one row per set (the ``halves`` record of a chapter)."""
    rows = [{"set": name, "dev_items": len(dev), "dev_contexts": dev.contexts, "dev_groups": dev.groups,
             "test_items": len(test), "test_contexts": test.contexts, "test_groups": test.groups}
            for name, (dev, test) in halves.items()]
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- the kit's human-scored sets

def meta_eval_halves(name: str, *, data_dir=None, seed: str = SEED) -> tuple[DevHalf, TestHalf]:
    """The halves of one of the paper's Table-1 sets (:func:`evalkit.paireval.metaeval.load_meta_eval_set`).
    A context's turns identify its conversation (its replies to be judged are left out: two systems' replies
    to one context must share its half, and do, as they share the context)."""
    from evalkit.paireval.metaeval import load_meta_eval_set

    return split_meta_eval(load_meta_eval_set(name, data_dir=data_dir).items, seed=seed)


def split_meta_eval(items: pd.DataFrame, name: str | None = None, *, seed: str = SEED) -> tuple[DevHalf, TestHalf]:
    """The halves of a whole set in the meta-evaluation schema (a user's file too): a context's turns
    identify its conversation. Split the whole set, then sample within a half — a sample's groups differ."""
    name = name or (str(items["dataset"].iat[0]) if "dataset" in items and len(items) else "items")
    return split_frame(items, name, seed=seed, texts=lambda row: list(row.context))


def upheld_halves(subset: str = "main", *, data_dir=None, seed: str = SEED) -> tuple[DevHalf, TestHalf]:
    """The halves of UPHELD's item table (:func:`evalkit.upheld.release.item_table`) for ``subset``, joined by
    ``conversation_id`` and by the history's text."""
    from evalkit.upheld.release import item_table, load_upheld

    return split_upheld_items(item_table(load_upheld(subset, data_dir=data_dir).labels), f"upheld-{subset}", seed=seed)


def split_upheld_items(items: pd.DataFrame, name: str, *, seed: str = SEED) -> tuple[DevHalf, TestHalf]:
    """The halves of an item table in UPHELD's shape (the release's, or a user's own annotator files read by
    :func:`evalkit.upheld.release.read_annotator_folder`), joined by ``conversation_id`` and the history's text."""
    return split_frame(items, name, seed=seed, id_column="conversation_id",
                       texts=lambda row: [*_turn_texts(row.history), row.reference])


def _turn_texts(history) -> list[str]:
    """UPHELD's history turns are (speaker, text) pairs; the text is what identifies them."""
    return [turn[1] if isinstance(turn, (tuple, list)) else str(turn) for turn in history]


def _user_turns(conversation: list[dict]) -> list[str]:
    return [turn["content"] for turn in conversation if turn.get("role") == "user"]


def mirrorbench_label_halves(*, data_dir=None, seed: str = SEED) -> dict[str, tuple[DevHalf, TestHalf]]:
    """The halves of MirrorBench's labelled items (``gteval`` and ``pi``), grouped by the *real* user's
    turns, so a real conversation is in one half across both tables."""
    from evalkit.userproxy.data import load_human_labels

    return split_mirrorbench_labels(load_human_labels(data_dir=data_dir), seed=seed)


def split_mirrorbench_labels(labels: dict, *, seed: str = SEED) -> dict[str, tuple[DevHalf, TestHalf]]:
    """:func:`mirrorbench_label_halves` of labels already loaded (:func:`evalkit.userproxy.data.load_human_labels`)."""
    gteval, pi = labels["gteval"], labels["pi"]
    slots = set(pi["ground_truth_synthetic_slot"])
    if not slots <= {"A", "B"}:
        raise ValueError(f"MirrorBench PI items: ground_truth_synthetic_slot must be A or B, found {sorted(map(str, slots))}")
    real_pi = [row.conversation_b if row.ground_truth_synthetic_slot == "A" else row.conversation_a
               for row in pi.itertuples(index=False)]
    conversations = [_user_turns(c) for c in gteval["real_conversation"]] + [_user_turns(c) for c in real_pi]
    groups = content_groups(conversations)
    out = {}
    for table, name, keys in ((gteval, "mirrorbench-gteval", groups[:len(gteval)]),
                              (pi, "mirrorbench-pi", groups[len(gteval):])):
        keyed = table.assign(group=[hashlib.sha256(g.encode("utf-8")).hexdigest()[:12] for g in keys])
        in_dev = pd.Series([_half_of(g, seed) == "dev" for g in keys], index=table.index)
        out[name] = (DevHalf(name, keyed[in_dev].reset_index(drop=True)),
                     TestHalf(name, keyed[~in_dev].reset_index(drop=True)))
    return out


def human_scored_halves(*, data_dir=None, seed: str = SEED) -> dict[str, tuple[DevHalf, TestHalf]]:
    """Every human-scored set the chapters report on, split: the six Table-1 sets, UPHELD's main and check
    sets, MirrorBench's labelled items."""
    from evalkit.paireval.metaeval import meta_eval_set_names

    halves = {name: meta_eval_halves(name, data_dir=data_dir, seed=seed) for name in meta_eval_set_names()}
    for subset in ("main", "llm_arena", "topical_chat"):
        halves[f"upheld-{subset}"] = upheld_halves(subset, data_dir=data_dir, seed=seed)
    halves.update(mirrorbench_label_halves(data_dir=data_dir, seed=seed))
    return halves
