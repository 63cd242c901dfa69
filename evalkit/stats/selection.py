"""Choosing between judges (or recipes, mixes, thresholds) by people's scores on dev halves only.

The rule, fixed before any run: the candidates are listed cheapest first (an untrained baseline leads); the
first is the incumbent; each later candidate replaces the incumbent only when its mean Pearson r over the dev
sets is higher by a paired bootstrap interval (:func:`evalkit.stats.mean_correlation_difference`) that
excludes zero — whole groups of :mod:`evalkit.stats.halves` (contexts that share text) are resampled, since the
replies to one context are not independent items. A gain inside the sampling error is not a gain, so ties
keep the cheaper judge.

:func:`choose_on_dev` takes :class:`~evalkit.stats.halves.DevHalf` values and nothing else (it calls
:func:`~evalkit.stats.halves.require_dev` on each): a test half cannot reach a decision.

>>> import numpy as np, pandas as pd
>>> from evalkit.stats.halves import DevHalf
>>> rng = np.random.default_rng(0)
>>> human = rng.normal(size=200)
>>> dev = {"s": DevHalf("s", pd.DataFrame({"item_id": [f"s:{i}" for i in range(200)], "score": human}))}
>>> scores = {("noise", "s"): rng.normal(size=200), ("good", "s"): human + rng.normal(size=200)}
>>> decision = choose_on_dev(dev, scores, ["noise", "good"], question="which judge?", bootstrap=200)
>>> decision.choice
'good'
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Mapping, Sequence

import numpy as np
import pandas as pd

from evalkit.stats.halves import DevHalf, TestHalf, require_dev
from evalkit.stats import CorrelationDifference, correlation, mean_correlation_difference

__all__ = ["RULE", "rule", "Decision", "choose_on_dev", "on_half"]

RULE = ("candidates in order, cheapest first; a later one replaces the incumbent only when its mean Pearson r "
        "over the dev sets is higher by a paired 95% bootstrap interval that excludes 0")
Kind = Literal["pearson", "spearman"]


def rule(kind: Kind = "pearson") -> str:
    """:data:`RULE` for the correlation ``kind`` a decision uses (Spearman for ordinal labels).

    >>> rule("spearman").split(";")[1].strip()[:64]
    'a later one replaces the incumbent only when its mean Spearman r'
    """
    if kind not in ("pearson", "spearman"):
        raise ValueError(f"a decision compares Pearson or Spearman r, not {kind!r}")
    return RULE if kind == "pearson" else RULE.replace("Pearson", "Spearman")


@dataclass(frozen=True)
class Decision:
    """A choice made on dev halves: the question, the rule, each candidate's dev correlations, the challenges
    (candidate minus the incumbent it faced) and the choice."""

    question: str
    candidates: tuple[str, ...]
    dev: pd.DataFrame  # candidate, set, pearson (the correlation of ``kind``, Pearson by default), n
    challenges: dict[str, CorrelationDifference]
    faced: dict[str, str]
    choice: str
    rule: str = RULE
    sets: tuple[str, ...] = field(default=())
    kind: Kind = "pearson"

    def dev_means(self) -> dict[str, float]:
        """Mean dev correlation (of :attr:`kind`) over the sets, per candidate."""
        return self.dev.groupby("candidate", sort=False)["pearson"].mean().to_dict()

    def as_record(self) -> dict[str, Any]:
        """The decision as plain values (for a chapter's results file and the experiment log)."""
        return {"question": self.question, "rule": self.rule, "candidates": list(self.candidates),
                "sets": list(self.sets), "kind": self.kind, "dev": self.dev.to_dict(orient="records"),
                "dev_means": self.dev_means(),
                "challenges": {name: {"against": self.faced[name], "difference": gap.difference, "low": gap.low,
                                      "high": gap.high, "n": gap.n} for name, gap in self.challenges.items()},
                "choice": self.choice}

    def sentence(self, names: Mapping[str, str] | None = None) -> str:
        """What was decided and why, from the numbers; ``names`` gives candidates the page's names (a candidate
        not in it keeps its own), and a Spearman decision writes its correlation as ρ.

        >>> dev = pd.DataFrame({"candidate": ["a", "b"], "set": ["s", "s"], "pearson": [0.2, 0.3], "n": [40, 40]})
        >>> gap = CorrelationDifference(0.1, -0.02, 0.22, 40)
        >>> Decision("Which judge?", ("a", "b"), dev, {"b": gap}, {"b": "a"}, "a", sets=("s",),
        ...          kind="spearman").sentence({"b": "judge B"})
        'Which judge? On the dev half of s (n = 40 items), Spearman ρ: a 0.200, judge B 0.300. Challenges: judge B against a: +0.100 [-0.020, +0.220] (did not clear it). Adopted: a.'
        """
        from evalkit.book.prose import with_interval  # the book's one way to write an interval

        name = (lambda key: (names or {}).get(key, key))
        means = self.dev_means()
        parts = []
        for candidate, gap in self.challenges.items():
            verdict = "replaced it" if gap.low > 0 else "did not clear it"
            parts.append(f"{name(candidate)} against {name(self.faced[candidate])}: "
                         f"{with_interval(gap.difference, gap.low, gap.high, signed=True)} ({verdict})")
        total = int(self.dev["n"].groupby(self.dev["candidate"]).sum().max())
        where = (f"the dev halves ({len(self.sets)} sets, n = {total:,} items), mean" if len(self.sets) != 1 else
                 f"the dev half of {self.sets[0]} (n = {total:,} items),")
        measure = "Pearson r" if self.kind == "pearson" else "Spearman ρ"
        return (f"{self.question} On {where} {measure}: "
                + ", ".join(f"{name(candidate)} {means[candidate]:.3f}" for candidate in self.candidates)
                + ". Challenges: " + "; ".join(parts) + f". Adopted: {name(self.choice)}.")


def _groups(half: DevHalf | TestHalf) -> list[object]:
    """The half's group per item (contexts that share text), or each item its own group."""
    return list(half.items["group"]) if "group" in half.items else list(range(len(half.items)))


def on_half(values: Sequence[float], item_ids: Sequence[str], half: DevHalf | TestHalf) -> np.ndarray:
    """``values`` (one per item of ``item_ids``) restricted to, and ordered as, the items of ``half``; an
    item of the half that was not scored is an error."""
    item_ids = list(item_ids)
    if len(values) != len(item_ids) or len(set(item_ids)) != len(item_ids):
        raise ValueError(f"{len(values)} scores for {len(item_ids)} item ids ({len(set(item_ids))} distinct): "
                         "each score needs its own item")
    position = {item: i for i, item in enumerate(item_ids)}
    missing = [item for item in half.items["item_id"] if item not in position]
    if missing:
        raise KeyError(f"{len(missing)} items of the {half.kind} half of {half.name!r} were not scored "
                       f"(first: {missing[0]!r})")
    values = np.asarray(values, dtype=float)
    return values[[position[item] for item in half.items["item_id"]]]


def choose_on_dev(dev: Mapping[str, DevHalf], scores: Mapping[tuple[str, str], Sequence[float]],
                  candidates: Sequence[str], *, question: str, human: str = "score",
                  item_ids: Mapping[str, Sequence[str]] | None = None, bootstrap: int = 1000,
                  seed: int = 0, kind: Kind = "pearson") -> Decision:
    """Choose among ``candidates`` by :data:`RULE` on the dev halves ``dev`` (set name -> DevHalf), with the
    correlation ``kind`` (``spearman`` for ordinal labels: the rule then compares Spearman r; the table's
    ``pearson`` column holds it).

    ``scores`` maps (candidate, set) to scores on the dev half's items in order, or — with ``item_ids`` (set
    -> the ids the scores belong to) — on a larger frame, restricted here with :func:`on_half`."""
    if not candidates:
        raise ValueError("no candidates to choose from")
    stated = rule(kind)  # refuses a kind the rule cannot state
    halves = {name: require_dev(half) for name, half in dev.items()}
    aligned: dict[tuple[str, str], np.ndarray] = {}
    for candidate in candidates:
        for name, half in halves.items():
            if (candidate, name) not in scores:
                raise KeyError(f"no scores of {candidate!r} on the dev half of {name!r}")
            values = scores[candidate, name]
            values = (on_half(values, item_ids[name], half) if item_ids is not None
                      else np.asarray(values, dtype=float))
            if len(values) != len(half):
                raise ValueError(f"{candidate!r} on {name!r}: {len(values)} scores for {len(half)} dev items")
            aligned[candidate, name] = values
    people = {name: half.items[human].to_numpy(dtype=float) for name, half in halves.items()}
    rows = []
    for candidate in candidates:
        for name in halves:
            keep = ~(np.isnan(aligned[candidate, name]) | np.isnan(people[name]))
            rows.append({"candidate": candidate, "set": name, "n": int(keep.sum()),
                         "pearson": correlation(aligned[candidate, name][keep], people[name][keep], kind=kind)})
    incumbent, challenges, faced = candidates[0], {}, {}
    for candidate in candidates[1:]:
        gap = mean_correlation_difference({name: (aligned[candidate, name], aligned[incumbent, name], people[name],
                                                  _groups(half)) for name, half in halves.items()},
                                          bootstrap=bootstrap, seed=seed, kind=kind)
        challenges[candidate], faced[candidate] = gap, incumbent
        if gap.low > 0:
            incumbent = candidate
    return Decision(question, tuple(candidates), pd.DataFrame(rows), challenges, faced, incumbent,
                    rule=stated, sets=tuple(halves), kind=kind)
