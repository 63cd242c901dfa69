"""A judge's report card: agreement with people on every human-scored set, against the human noise ceiling,
with its length and position biases, abstentions and cost, measured on the same items.

Per set and label (UPHELD's content, style and reasonable separately; a Table-1 set's score) a
:class:`LabelRow` holds Pearson, Spearman and Kendall with percentile-bootstrap intervals that resample
*groups* of items (the dev/test groups of :mod:`evalkit.stats.halves`: the replies to one context, joined with any
context sharing its conversation), n, the noise ceiling and the share of it
(:mod:`evalkit.judgecard.sets`), and the length panel:

* ``length_partial`` — the partial correlation of the judge's score with reply length (words) given the human
  score (:func:`evalkit.stats.partial_correlation`), with the same grouped interval: > 0 means the judge
  rewards length beyond what people's scores explain;
* ``prefers_longer`` — on pairs of replies to the same context where people scored the *shorter* reply
  higher, the share where the judge scored the longer one higher (ties count half), Wilson interval.

``length_bias`` is raised when the partial correlation's interval lies above 0 or the preference's above 0.5.
For a judge with slots (:meth:`~evalkit.judges.Judge.orders`), a :class:`SlotRow` per set gives the
first-slot win rate over every verdict and the flip rate: the share of pairs whose winner changes when the
two replies swap slots (the same slot wins both times).

**Self-consistency.** A judge whose score averages independent draws (PairEval: one run per comparison set drawn
from the pool; a scored file with several score columns, e.g. seeds) gives a :class:`ConsistencyRow` per set:
the draws, the items every draw scored (n), the mean over them of the spread (SD) of an item's score across
draws, the mean Pearson between two draws' scores (how well the judge agrees with itself), and the Pearson with
people of each draw alone on the set's first label (min, max): what one draw instead of the average would have
reported. PairEval's runs each draw their comparison examples from one small pool, so two runs can share
examples and agree more than independent pools would. A judge that gives one draw only (a metric, an LM's label
probabilities, DirectEval, one score column) has no row, and the card's notes say so.
"""
from __future__ import annotations

import json
import math
import sys
import time
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Sequence

import numpy as np
import pandas as pd

from evalkit.judges.adapted import MIN_LABELS, budget_label
from evalkit.paireval.scoring import length_scores
from evalkit.stats import correlation, grouped_correlation_intervals
from evalkit.judgecard.checks import (ConsistencyRow, SlotRow, _consistency_row, _length_panel, _slot_row,
                                      same_context_pairs)
from evalkit.judgecard.adapt import adapt_set, adapted_name, parse_budget
from evalkit.judgecard import sets as card_sets
from evalkit.judgecard.sets import HalfChoice, HumanSet, card_items, noise_ceiling
from evalkit.judgecard.judges import build_judge
from evalkit.judgecard.score_files import ScoresJudge
from evalkit.judgecard._names import MAX_NAME_CHARS, one_line, shortened
from evalkit.judges.protocol import CannotScore, Judge
from evalkit.judgecard.spec import JudgeSpec, parse_spec, public_record
from evalkit.judgecard.card_records import LabelRow, SetCost, SetScores, _KEPT_EXAMPLES
from evalkit.judgecard.card_fields import (MAX_NOTE_CHARS, _read_curve, _read_examples, _read_half, _read_notes,
                                           _read_set_scores, _read_skipped, _refuse_non_numbers, _refuse_non_texts,
                                           _whole_number, check_judge_name, check_spec_record)

__all__ = ["LabelRow", "SlotRow", "ConsistencyRow", "SetCost", "SetScores", "Card", "judge_card", "merge_cards",
           "same_context_pairs"]


@dataclass(frozen=True)
class Card:
    """A judge's card: what was judged, on which half, and the rows. :meth:`record` gives plain values (NaN
    as None), :meth:`to_json` the JSON text."""

    judge: str
    spec: dict[str, Any]
    half: str
    bootstrap: int
    seed: int
    rows: tuple[LabelRow, ...]
    slots: tuple[SlotRow, ...]
    costs: tuple[SetCost, ...]
    skipped: tuple[tuple[str, str], ...] = ()
    notes: tuple[str, ...] = field(default=())
    scores: tuple[SetScores, ...] = ()  # each set's scores, item by item (what a leaderboard resamples)
    consistency: tuple[ConsistencyRow, ...] = ()
    curves: tuple[dict, ...] = ()  # an adapted judge's label-budget curve, one row per set and budget

    def __post_init__(self):
        # A card is shared (card.json, card.html, the board's pages): it keeps its judge's name, spec, notes and
        # abstained texts with every credential masked, however it was made (spec.public_record).
        shared = public_record({"base_url": self.spec.get("base_url"), "judge": self.judge, "spec": dict(self.spec),
                                "notes": list(self.notes), "skipped": [list(s) for s in self.skipped],
                                "examples": [[list(e) for e in c.examples] for c in self.costs]})
        object.__setattr__(self, "judge", shared["judge"])
        object.__setattr__(self, "spec", shared["spec"])
        object.__setattr__(self, "notes", tuple(shared["notes"]))
        object.__setattr__(self, "skipped", tuple(map(tuple, shared["skipped"])))
        object.__setattr__(self, "costs", tuple(replace(c, examples=tuple(map(tuple, e)))
                                                for c, e in zip(self.costs, shared["examples"])))

    def table(self) -> pd.DataFrame:
        return pd.DataFrame([asdict(row) for row in self.rows])

    def set_scores(self, name: str) -> pd.Series:
        """The judge's score of each item of set ``name``, indexed by ``item_id`` (NaN: not scored); KeyError
        when the card did not score the set."""
        for entry in self.scores:
            if entry.set == name:
                return pd.Series(entry.scores, index=pd.Index(entry.item_ids, name="item_id"), dtype=float,
                                 name=self.judge)
        raise KeyError(f"{self.judge!r} has no scores on {name!r} (scored: "
                       f"{', '.join(e.set for e in self.scores) or 'none'})")

    def scores_on(self, human_set: HumanSet) -> np.ndarray:
        """The judge's scores aligned with ``human_set.items`` (NaN for an item it did not score)."""
        return human_set.items["item_id"].astype(str).map(self.set_scores(human_set.name)).to_numpy(dtype=float)

    def summary(self) -> dict[str, Any]:
        """Means over the rows: Pearson, share of ceiling (rows with a ceiling), flags raised."""
        shares = [row.share for row in self.rows if row.share == row.share]
        pearsons = [row.pearson for row in self.rows if row.pearson == row.pearson]
        return {"rows": len(self.rows), "mean_pearson": float(np.mean(pearsons)) if pearsons else None,
                "mean_share": float(np.mean(shares)) if shares else None, "rows_with_ceiling": len(shares),
                "length_bias": [f"{r.set}/{r.label}" for r in self.rows if r.length_bias],
                "at_ceiling": [f"{r.set}/{r.label}" for r in self.rows if r.at_ceiling],
                "calls": sum(c.calls for c in self.costs), "seconds": sum(c.seconds for c in self.costs),
                "money": (sum(c.money for c in self.costs) if all(c.money is not None for c in self.costs)
                          and self.costs else None)}

    def record(self) -> dict[str, Any]:
        return _plain({"judge": self.judge, "spec": self.spec, "half": self.half, "bootstrap": self.bootstrap,
                       "seed": self.seed, "summary": self.summary(), "rows": [asdict(r) for r in self.rows],
                       "slots": [asdict(s) for s in self.slots], "costs": [asdict(c) for c in self.costs],
                       "skipped": [list(s) for s in self.skipped], "notes": list(self.notes),
                       "scores": [asdict(s) for s in self.scores],
                       "consistency": [asdict(c) for c in self.consistency], "curves": list(self.curves)})

    def to_json(self) -> str:
        return json.dumps(self.record(), indent=1, ensure_ascii=False)

    @classmethod
    def from_record(cls, record: dict[str, Any], *, source: str = "card") -> "Card":
        """The card a :meth:`record` (e.g. a ``card.json``) holds; None in it is NaN again. Raises
        ``ValueError`` naming ``source`` and the field when the record is not a card's, or when its item scores
        are not one finite number (or null) per item, each item once (:func:`check_set_scores`)."""
        def nan(value):
            return float("nan") if value is None else value

        if not isinstance(record, dict):
            raise ValueError(f"{source}: not a judge card's record (a JSON object)")
        field_name = "rows"
        try:
            rows = tuple(LabelRow(**{k: nan(v) for k, v in row.items()}) for row in record["rows"])
            field_name = "slots"
            slots = tuple(SlotRow(**{k: nan(v) for k, v in row.items()}) for row in record["slots"])
            field_name = "costs"
            costs = tuple(SetCost(**{**row, "examples": _read_examples(row["examples"],
                                                                       f"{source}, field 'costs[{k}]'")})
                          for k, row in enumerate(record["costs"]))
            field_name = "scores"
            scores = tuple(_read_set_scores(row, f"{source}, field 'scores[{k}]'")
                           for k, row in enumerate(record.get("scores", [])))
            field_name = "consistency"
            consistency = tuple(ConsistencyRow(**{k: nan(v) for k, v in row.items()})
                                for row in record.get("consistency", []))
            field_name = "curves"
            curves = tuple({k: nan(v) for k, v in _read_curve(row, f"{source}, field 'curves[{n}]'").items()}
                           for n, row in enumerate(record.get("curves", [])))
            for name, kept in (("rows", rows), ("slots", slots), ("consistency", consistency), ("costs", costs)):
                for k, row in enumerate(kept):
                    _refuse_non_texts(row, f"{source}, field '{name}[{k}]'")
            first_of: dict[tuple, int] = {}
            for k, row in enumerate(rows):  # a row repeated would count twice in every mean over rows
                first = first_of.setdefault((row.set, row.label), k)
                if first != k:
                    raise ValueError(f"{source}, field 'rows[{k}]': a second row for {row.set}/{row.label} (the first "
                                     f"is rows[{first}]): one row per set and label")
            field_name = "judge, spec, half, bootstrap, seed, skipped or notes"
            judge = check_judge_name(record["judge"], f"{source}, field 'judge'")
            skipped = _read_skipped(record["skipped"], source)
            bootstrap = _whole_number(record["bootstrap"], f"{source}, field 'bootstrap'")
            seed = _whole_number(record["seed"], f"{source}, field 'seed'")
            card = cls(judge, check_spec_record(record["spec"], f"{source}, field 'spec'"),
                       _read_half(record["half"], source), bootstrap,
                       seed, rows, slots, costs, skipped,
                       _read_notes(record["notes"], source), scores, consistency, curves)
        except KeyError as missing:
            raise ValueError(f"{source}: not a judge card's record (no field {missing})") from None
        except (TypeError, AttributeError) as wrong:
            raise ValueError(f"{source}, field '{field_name}': a row of the card does not fit its fields "
                             f"({wrong})") from None
        except ValueError as wrong:
            if str(wrong).startswith(source):
                raise
            raise ValueError(f"{source}, field '{field_name}': {wrong}") from None
        for name, kept in (("rows", rows), ("slots", slots), ("consistency", consistency), ("costs", costs)):
            for k, row in enumerate(kept):
                _refuse_non_numbers(row, f"{source}, field '{name}[{k}]'")
        sets = [entry.set for entry in scores]
        twice = sorted({name for name in sets if sets.count(name) > 1})
        if twice:
            raise ValueError(f"{source}, field 'scores': set {twice[0]!r} has two entries (each set once)")
        return card


def _sets_of(card: Card) -> set[str]:
    """Every set a card holds anything on: item scores, rows, slots, self-consistency, costs."""
    return {entry.set for name in ("scores", "rows", "slots", "consistency", "costs") for entry in getattr(card, name)}


def merge_cards(cards: Sequence[Card]) -> Card:
    """One judge's cards on different sets (e.g. a grid's units, one set each) as one card. They must come from
    one judge: the same name and the same stored judge record (``spec``: what was judged, with its settings),
    with the same half, bootstrap and seed; and no set may be on two of them (in its item scores, rows, slots,
    self-consistency or costs). Cards that differ in any of these are two judges, or one judge scored twice: they
    are refused, naming what differs, never merged.

    >>> a = Card("j", {"kind": "metric", "name": "j"}, "test", 0, 0, (), (), ())
    >>> merge_cards([a, replace(a, spec={"kind": "metric", "name": "j", "n": 2})])
    Traceback (most recent call last):
    ...
    ValueError: cards of 'j' differ in spec: {'kind': 'metric', 'name': 'j'} and {'kind': 'metric', 'name': 'j', 'n': 2} (two judges with one name: rename one)
    """
    if not cards:
        raise ValueError("no cards to merge")
    first = cards[0]
    for card in cards[1:]:
        for name in ("judge", "spec", "half", "bootstrap", "seed"):
            if getattr(card, name) != getattr(first, name):
                why = " (two judges with one name: rename one)" if name == "spec" else ""
                raise ValueError(f"cards of {first.judge!r} differ in {name}: {getattr(first, name)!r} and "
                                 f"{getattr(card, name)!r}{why}")
    sets = [name for card in cards for name in sorted(_sets_of(card))]
    twice = sorted({name for name in sets if sets.count(name) > 1})
    if twice:
        raise ValueError(f"cards of {first.judge!r}: sets scored twice: {', '.join(twice)}")
    join = lambda name: tuple(x for card in cards for x in getattr(card, name))
    return Card(first.judge, first.spec, first.half, first.bootstrap, first.seed, join("rows"), join("slots"),
                join("costs"), join("skipped"), tuple(dict.fromkeys(join("notes"))), join("scores"),
                join("consistency"), join("curves"))


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (float, np.floating)):
        return None if not math.isfinite(float(value)) else float(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value


def _label_row(human_set: HumanSet, label: str, scores: np.ndarray, pairs, *, bootstrap: int, seed: int) -> LabelRow:
    items = human_set.items
    human = items[label].to_numpy(dtype=float)
    keep = ~(np.isnan(scores) | np.isnan(human))
    n = int(keep.sum())
    x, y, groups = scores[keep], human[keep], items["group"].to_numpy()[keep]
    values = {kind: correlation(x, y, kind) for kind in ("pearson", "spearman", "kendall")}
    bounds = grouped_correlation_intervals(x, y, groups, bootstrap=bootstrap, seed=seed) if bootstrap and n >= 3 \
        else {kind: (float("nan"), float("nan")) for kind in values}
    ceiling, one_person, note = float("nan"), float("nan"), human_set.no_ratings
    if human_set.ratings is not None:
        rated = human_set.ratings[human_set.ratings["item_id"].isin(set(items["item_id"][keep]))]
        result = noise_ceiling(rated, label)
        ceiling, one_person = result.ceiling, result.one_person
        note = (f"sqrt(ICC(1, k)) = sqrt({result.icc_mean:.3f}), k = {result.raters_per_item:.2f} ratings per item "
                f"on {result.items} items")
    share = values["pearson"] / ceiling if ceiling == ceiling and ceiling > 0 else float("nan")
    length = _length_panel(scores, length_scores(items["response"]), human, items["group"].to_numpy(), pairs,
                           bootstrap=bootstrap, seed=seed)
    return LabelRow(human_set.name, label, n, int(len(set(groups))), int(len(items) - n),
                    values["pearson"], *bounds["pearson"], values["spearman"], *bounds["spearman"],
                    values["kendall"], *bounds["kendall"], ceiling, one_person, note, share,
                    bool(share == share and share >= 1.0), **length)


def _cost(name: str, items: int, seconds: float, records: list, scores: np.ndarray, raw: Sequence, price: float | None,
          ids: Sequence) -> SetCost:
    tokens = [(r.prompt_tokens, r.completion_tokens) for r in records]
    prompt, completion = sum(t[0] for t in tokens), sum(t[1] for t in tokens)
    money = None if price is None else (prompt + completion) / 1000 * price
    missing = np.flatnonzero(np.isnan(scores))
    raw = raw if len(raw) == len(scores) else ()
    # An endpoint's reply can be of any length: an example keeps its start and end, so the card stays readable.
    examples = tuple((shortened(str(ids[i]), MAX_NAME_CHARS),
                      shortened(str(raw[i]), MAX_NOTE_CHARS) if raw else "(no text: not scored)")
                     for i in missing[:_KEPT_EXAMPLES])
    return SetCost(name, items, seconds, len(records), sum(1 for r in records if r.cache_hit), prompt, completion,
                   float(sum(r.latency_s for r in records)), money, int(len(missing)), examples)


def judge_card(judge: Judge | JudgeSpec | str, sets: Sequence[str | HumanSet], *, half: HalfChoice = "test",
               bootstrap: int = 1000, seed: int = 0, max_pairs: int = 300, data_dir=None,
               price_per_1k_tokens: float | None = None, items_per_set: int | None = None,
               adapt: str | None = None) -> Card:
    """The card of ``judge`` (a judge, a :class:`JudgeSpec` or a ``--judge`` string) on ``sets`` (names of
    :data:`~evalkit.judgecard.sets.SET_NAMES`, meta-evaluation files, or :class:`HumanSet` values), on their
    ``half`` (the test halves unless told; ``all`` for the full sets). ``max_pairs`` caps the pairs per set
    a judge with slots is asked about (both orders each); ``items_per_set`` draws about that many items of
    each half by whole contexts (:meth:`HumanSet.sample`, seeded by ``seed``) for a judge too slow for all.
    ``adapt`` (``"all"`` or a number of labels, :func:`~.adapt.parse_budget`) reports the judge adapted to each
    set with that many of its dev labels (:mod:`.adapt`), on the test halves, with its label-budget curve.
    A judge's name longer than :data:`~._names.MAX_NAME_CHARS` is refused before anything is scored. For a file of
    scores (:class:`~.score_files.ScoresJudge`), its lines of these sets that match no item of them (either half) are
    named in a note (:meth:`~.score_files.ScoresJudge.unread`), in the card's notes and on stderr."""
    spec = parse_spec(judge) if isinstance(judge, str) else judge if isinstance(judge, JudgeSpec) else None
    if spec is not None:
        judge = build_judge(spec)
        price_per_1k_tokens = price_per_1k_tokens if price_per_1k_tokens is not None else spec.price_per_1k_tokens
    if half not in ("test", "dev", "all"):
        raise ValueError(f"half must be test, dev or all, not {half!r}")
    budget = parse_budget(adapt) if adapt is not None else None
    if adapt is not None and half != "test":
        raise ValueError(f"an adapted judge is fitted on the dev halves and reported on the test halves; "
                         f"--half {half} cannot be adapted")
    name = judge.name if adapt is None else adapted_name(judge.name, budget)
    check_judge_name(name, "judge card")  # before any item is scored: a board would refuse the card
    if spec is not None:  # so would it a card whose spec (a template of megabytes) it would copy onto its page
        check_spec_record(spec.as_record(), "judge card, the judge's spec")
    curves: list[dict] = []
    rows, slots, costs, skipped, kept, consistency, one_draw, set_notes = [], [], [], [], [], [], [], []
    seen: set[str] = set()
    wholes: list[HumanSet] = []  # each set whole (both halves): what a scores file's lines are checked against
    for entry in sets:
        whole = entry if isinstance(entry, HumanSet) else card_sets.load_set(entry, data_dir=data_dir)
        wholes.append(whole)
        human_set = card_items(whole, half=half, items_per_set=items_per_set, seed=seed, data_dir=data_dir)
        if human_set.name in seen:
            raise ValueError(f"two sets are named {human_set.name!r} (a set given twice, or two folders or files "
                             "with one name): rename one")
        seen.add(human_set.name)
        set_notes.extend(f"{human_set.name}: {note}" for note in human_set.notes)
        items = human_set.items
        if len(items) < 3:
            skipped.append((human_set.name, f"{len(items)} items in the {half} half"))
            continue
        before = len(judge.calls())
        started = time.perf_counter()
        try:
            scored = judge.score(items)
        except CannotScore as reason:
            skipped.append((human_set.name, str(reason)))
            continue
        scores = np.asarray(scored.scores, dtype=float)
        if scores.shape != (len(items),):
            raise ValueError(f"{judge.name} gave {scores.shape} scores for {len(items)} items of {human_set.name}")
        if adapt is not None:
            dev_set = card_items(whole, half="dev", items_per_set=items_per_set, seed=seed, data_dir=data_dir)
            try:
                dev_scores = np.asarray(judge.score(dev_set.items).scores, dtype=float)
            except CannotScore as reason:
                skipped.append((human_set.name, f"its dev half could not be scored to adapt to: {reason}"))
                continue
            usable = int((np.isfinite(dev_scores) & dev_set.items[dev_set.labels[0]].notna().to_numpy()).sum())
            if usable < MIN_LABELS:
                skipped.append((human_set.name, f"{usable} dev items scored and labelled; adapting needs at least "
                                                f"{MIN_LABELS} (a scores file must score the dev half too: "
                                                "judge export --half all)"))
                continue
            adaptation = adapt_set(dev_set, dev_scores, human_set, scores, k=budget, bootstrap=bootstrap, seed=seed)
            scores = adaptation.scores
            curves.extend(adaptation.curve)
            set_notes.append(f"{human_set.name}: fitted on {adaptation.k} dev labels ({human_set.labels[0]}); "
                             + ("the rule kept the judge itself (no penalty had a smaller cross-validated error)"
                                if np.isinf(adaptation.alpha) else f"ridge penalty {adaptation.alpha:g}"))
        pairs = same_context_pairs(list(items["context"]))
        if np.isnan(scores).all():
            skipped.append((human_set.name, f"the judge scored none of its {len(items)} items"))
        else:
            kept.append(SetScores(human_set.name, tuple(items["item_id"].astype(str)), tuple(map(float, scores))))
            for label in human_set.labels:
                rows.append(_label_row(human_set, label, scores, pairs, bootstrap=bootstrap, seed=seed))
            slot = _slot_row(human_set.name, judge, items, pairs, max_pairs=max_pairs, seed=seed)
            if slot is not None:
                slots.append(slot)
            if len(scored.draws) >= 2 and adapt is None:
                shapes = {np.shape(draw) for draw in scored.draws}
                if shapes != {(len(items),)}:
                    raise ValueError(f"{judge.name} gave draws of shapes {sorted(shapes)} for {len(items)} items of "
                                     f"{human_set.name}")
                consistency.append(_consistency_row(human_set, scored.draws, scored.draws_from))
            else:
                one_draw.append(human_set.name)
        costs.append(_cost(human_set.name, len(items), time.perf_counter() - started, judge.calls()[before:],
                           scores, scored.raw, price_per_1k_tokens, items["item_id"].tolist()))
    record = spec.as_record() if spec is not None else {"kind": type(judge).__name__, "name": judge.name,
                                                         **({"scores_sha256": judge.fingerprint}
                                                            if getattr(judge, "fingerprint", None) else {})}
    notes = (f"{judge.name} gave one draw only on {', '.join(one_draw)}: no self-consistency row there "
             "(spread over training seeds is not measured either)",) if one_draw else ()
    unread = judge.unread(wholes) if isinstance(judge, ScoresJudge) else None
    if unread is not None:
        print(f"note: {one_line(unread)}", file=sys.stderr)
    notes = (*set_notes, *notes, *([unread] if unread is not None else []))
    if adapt is not None:
        record = {**record, "adapted": budget_label(budget)}
    return Card(name, record, half, bootstrap, seed, tuple(rows), tuple(slots), tuple(costs), tuple(skipped),
                notes, tuple(kept), tuple(consistency), tuple(curves))
