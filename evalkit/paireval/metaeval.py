"""The PairEval paper's six human-scored, turn-level meta-evaluation sets (its Table 1), read into evalkit's
meta-evaluation schema (``context``, ``response``, ``reference``, ``score``, ``dataset``, ``system``).

=====================  ====================================  ==============================  =========
name                   what                                  human score                     reference
=====================  ====================================  ==============================  =========
``dailydialog-grade``  GRADE, DailyDialog, 2 systems x 150    mean coherence rating (1-5)     yes
``convai2-grade``      GRADE, ConvAI2, 4 systems x 150        mean coherence rating (1-5)     yes
``dailydialog-zhao``   Zhao et al. 2020, 100 contexts x 9     mean of 4 ratings (1-5)         no
``personachat-usr``    USR, PersonaChat (the paper's          mean of 3 ``Overall`` (1-5)     yes
                       "ConvAI2-USR"), 60 contexts x 5
``topicalchat-usr``    USR, TopicalChat, 60 contexts x 6      mean of 3 ``Overall`` (1-5)     yes
``fed``                FED, turn level, 375 responses         mean of 5 ``Overall`` (0-4)     no
=====================  ====================================  ==============================  =========

Every file comes through :func:`evalkit.data.sources.dataset_dir` (``$EVALKIT_DATA_DIR/metaeval/...``, else the
download cache, else a checksum-verified download from the pinned repository). What a loader had to change
is counted in its :class:`MetaEvalLoadReport`: ratings written as text (FED's "N/A (...)") are dropped and
each is listed with its file, item and aspect; surrounding whitespace is stripped and counted; an item left
with no numeric rating is dropped and counted. A FED turn-level item (known by its turn-level aspects)
without its ``response`` or ``context`` — a renamed key in a modified copy read with ``verify=False`` — is
dropped, counted and listed, never taken for a dialogue-level item. A structural fault (a file that is not
JSON, a missing field, files of unequal length, a score that is not a number) raises
:class:`~evalkit.paireval.schema.MetaEvalFormatError` naming the file, line or item, and field.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from evalkit.data.jsonl import csv_frame, read_text
from evalkit.data.sources import dataset_dir, find_file
from evalkit.paireval.schema import META_EVAL_COLUMNS, MetaEvalFormatError

__all__ = ["META_EVAL_SETS", "MetaEvalSet", "MetaEvalLoadReport", "load_meta_eval_set", "meta_eval_set_names"]


@dataclass
class MetaEvalLoadReport:
    """What a loader read, kept, dropped and normalised."""

    name: str
    items_read: int = 0
    items_dropped: dict[str, int] = field(default_factory=dict)
    ratings_dropped: list[tuple[str, str, str, str]] = field(default_factory=list)  # file, item, aspect, raw
    whitespace_stripped: int = 0
    score_aspect: str = "Overall"
    items_dropped_where: list[tuple[str, str, str]] = field(default_factory=list)  # file, item, why


    @property
    def items_kept(self) -> int:
        return self.items_read - sum(self.items_dropped.values())

    def drop(self, why: str, file: str = "", where: str = "") -> None:
        self.items_dropped[why] = self.items_dropped.get(why, 0) + 1
        if where:
            self.items_dropped_where.append((file, where, why))

    def summary(self) -> pd.DataFrame:
        """The report as a (what, count) table."""
        lines: list[tuple[str, object]] = [("items read", self.items_read)]
        lines += [(f"items dropped: {why}", n) for why, n in self.items_dropped.items()]
        used = sum(1 for *_, aspect, _ in self.ratings_dropped if aspect == self.score_aspect)
        lines += [("items kept", self.items_kept), ("ratings given as text, dropped (any aspect)",
                                                    len(self.ratings_dropped)),
                  (f"... of them {self.score_aspect!r} ratings (the score's)", used),
                  ("texts with surrounding whitespace stripped", self.whitespace_stripped)]
        return pd.DataFrame(lines, columns=["what", "count"])


@dataclass(frozen=True)
class MetaEvalSet:
    """A loaded set: the items in the meta-evaluation schema and the load report."""

    name: str
    items: pd.DataFrame
    report: MetaEvalLoadReport


class _Texts:
    """Strips and counts: one place decides what "clean text" means for every set."""

    def __init__(self, report: MetaEvalLoadReport):
        self.report = report

    def __call__(self, text: str) -> str:
        clean = text.strip()
        if clean != text:
            self.report.whitespace_stripped += 1
        return clean

    def turns(self, texts: list[str]) -> list[str]:
        return [turn for turn in (self(t) for t in texts) if turn]


def _read_text(path: Path) -> str:
    return read_text(path, MetaEvalFormatError)


def _read_json(path: Path) -> Any:
    """A JSON file's value; text that is not JSON raises :class:`MetaEvalFormatError` naming file and line."""
    try:
        return json.loads(_read_text(path))
    except json.JSONDecodeError as error:
        raise MetaEvalFormatError(f"{path}, line {error.lineno}, column {error.colno}: not JSON ({error.msg})") \
            from None


def _json_list(path: Path, what: str) -> list[Any]:
    value = _read_json(path)
    if not isinstance(value, list):
        raise MetaEvalFormatError(f"{path}: expected a JSON array of {what}, got {type(value).__name__}")
    return value


def _required(root: Path, relative: str) -> Path:
    path = find_file(root, relative)
    if path is None:
        raise MetaEvalFormatError(f"{root}: missing {relative}")
    return path


def _is_rating(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)


def _numeric_ratings(values: Any, where: str, aspect: str, report: MetaEvalLoadReport, file: str) -> list[float]:
    """The numeric ratings of a list; text ratings are recorded in the report and left out."""
    if not isinstance(values, list):
        raise MetaEvalFormatError(f"{file}, {where}, field {aspect!r}: expected a list of ratings")
    numbers = []
    for value in values:
        if _is_rating(value):
            numbers.append(float(value))
        else:
            report.ratings_dropped.append((file, where, aspect, str(value)))
    return numbers


def _by_rater(values: list, raters: Any, unnamed: str) -> list[tuple[str, float]]:
    """Each numeric rating with who gave it: ``raters[k]`` when the file names one per rating, else
    ``unnamed:k`` (a rater of this item only, so no one is taken for the same person across items)."""
    named = isinstance(raters, list) and len(raters) == len(values)
    return [(str(raters[k]) if named else f"{unnamed}:{k}", float(v)) for k, v in enumerate(values) if _is_rating(v)]


# --------------------------------------------------------------------------- GRADE

_GRADE_SYSTEMS = {"dailydialog": ("transformer_generator", "transformer_ranker"),
                  "convai2": ("bert_ranker", "dialogGPT", "transformer_generator", "transformer_ranker")}


def _read_grade(root: Path, corpus: str, report: MetaEvalLoadReport) -> list[dict[str, Any]]:
    clean, rows = _Texts(report), []
    for system in _GRADE_SYSTEMS[corpus]:
        files = {part: _required(root, f"evaluation/eval_data/{corpus}/{system}/human_{part}.txt")
                 for part in ("ctx", "hyp", "ref")}
        files["score"] = _required(root, f"evaluation/human_score/{corpus}/{system}/human_score.txt")
        lines = {part: _read_text(path).splitlines() for part, path in files.items()}
        lengths = {part: len(value) for part, value in lines.items()}
        if len(set(lengths.values())) != 1:
            raise MetaEvalFormatError(f"{files['ctx'].parent}: files of unequal length {lengths} (items must align)")
        for number, (context, response, reference, score) in enumerate(
                zip(lines["ctx"], lines["hyp"], lines["ref"], lines["score"]), start=1):
            report.items_read += 1
            try:
                value = float(score)
            except ValueError as error:
                raise MetaEvalFormatError(f"{files['score']}, line {number}, field 'score': {score!r} is not a "
                                          f"number") from error
            rows.append({"context": clean.turns(context.split("|||")), "response": clean(response),
                         "reference": clean(reference), "score": value, "system": system})
    return rows


# --------------------------------------------------------------------------- USR

def _read_usr(root: Path, file: str, report: MetaEvalLoadReport) -> list[dict[str, Any]]:
    path = _required(root, file)
    clean, rows = _Texts(report), []
    for index, record in enumerate(_json_list(path, "contexts")):
        where = f"context {index}"
        if not isinstance(record, dict) or not isinstance(record.get("context"), str) \
                or not isinstance(record.get("responses"), list):
            raise MetaEvalFormatError(f"{path}, {where}: expected an object with 'context' and 'responses'")
        context = clean.turns(record["context"].split("\n"))
        references = [r["response"] for r in record["responses"] if r.get("model") == "Original Ground Truth"]
        reference = clean(references[0]) if references else None
        for response in record["responses"]:
            report.items_read += 1
            if not isinstance(response.get("response"), str):
                raise MetaEvalFormatError(f"{path}, {where}, system {response.get('model')!r}, field 'response': "
                                          "missing")
            ratings = _numeric_ratings(response.get("Overall"), f"{where}, system {response.get('model')!r}",
                                       "Overall", report, path.name)
            if not ratings:
                report.drop("no numeric Overall rating", path.name, f"{where}, system {response.get('model')!r}")
                continue
            rows.append({"context": context, "response": clean(response["response"]), "reference": reference,
                         "score": sum(ratings) / len(ratings), "system": str(response.get("model")),
                         "ratings": _by_rater(response["Overall"], record.get("annotators"),
                                              f"{path.stem}:{index}:{response.get('model')}")})
    return rows


# --------------------------------------------------------------------------- FED

def _untag(line: str) -> str:
    """A FED line without its speaker tag (the tags are FED's layout, not what was said).

    >>> _untag("System: Hi there"), _untag("no tag: here")
    ('Hi there', 'no tag: here')
    """
    for tag in ("User: ", "System: "):
        if line.startswith(tag):
            return line[len(tag):]
    return line


# Aspects rated only at the turn level in FED (its dialogue-level items rate Coherent, Depth, ...).
_FED_TURN_ASPECTS = frozenset({"Interesting", "Engaging", "Specific", "Relevant", "Correct",
                               "Semantically appropriate", "Understandable", "Fluent"})


def _read_fed(root: Path, report: MetaEvalLoadReport) -> list[dict[str, Any]]:
    path = _required(root, "fed_data.json")
    clean, rows = _Texts(report), []
    for index, record in enumerate(_json_list(path, "items")):
        where = f"item {index}"
        if not isinstance(record, dict):
            raise MetaEvalFormatError(f"{path}, {where}: expected an object, got {type(record).__name__}")
        annotations = record.get("annotations")
        turn_level = "response" in record or (isinstance(annotations, dict)
                                              and bool(_FED_TURN_ASPECTS & set(annotations)))
        if not turn_level:
            continue  # a dialogue-level item: FED's turn-level part is the one PairEval reports
        report.items_read += 1
        missing = [name for name in ("response", "context") if name not in record]
        if missing:  # a renamed key: the item cannot be read, and it must not vanish unseen
            report.drop(f"turn-level item without {' and '.join(map(repr, missing))} (a renamed key?)",
                        path.name, where)
            continue
        if not isinstance(annotations, dict) or "Overall" not in annotations:
            raise MetaEvalFormatError(f"{path}, {where}, field 'annotations': no 'Overall' ratings")
        overall: list[float] = []
        for aspect, values in annotations.items():  # every aspect's text ratings are counted, Overall is used
            numbers = _numeric_ratings(values, where, aspect, report, path.name)
            if aspect == "Overall":
                overall = numbers
        if not overall:
            report.drop("no numeric Overall rating", path.name, where)
            continue
        turns = [_untag(line) for line in str(record["context"]).split("\n")]
        rows.append({"context": clean.turns(turns), "response": clean(_untag(str(record["response"]))),
                     "reference": None,
                     "score": sum(overall) / len(overall), "system": str(record.get("system")),
                     "ratings": _by_rater(annotations["Overall"], None, f"fed:{index}")})  # FED names no rater
    return rows


# --------------------------------------------------------------------------- DailyDialog-Zhao

def _read_zhao(root: Path, report: MetaEvalLoadReport) -> list[dict[str, Any]]:
    path = _required(root, "dailydialog-zhao.csv")
    clean, rows = _Texts(report), []
    frame, lines = csv_frame(path, MetaEvalFormatError)
    missing = [c for c in ("english_ctx", "english_res", "ratings") if c not in frame.columns]
    if missing:
        raise MetaEvalFormatError(f"{path}, line 1 (header): missing column(s) {', '.join(missing)}")
    for number, row in zip(lines, frame.itertuples(index=False)):
        report.items_read += 1
        try:
            score = float(row.ratings)
        except ValueError as error:
            raise MetaEvalFormatError(f"{path}, line {number}, field 'ratings': {row.ratings!r} is not a number") \
                from error
        rows.append({"context": clean.turns(row.english_ctx.split("\n")), "response": clean(row.english_res),
                     "reference": None, "score": score, "system": None})
    return rows


# --------------------------------------------------------------------------- registry

@dataclass(frozen=True)
class _SetSpec:
    source: str                      # the dataset in evalkit.data.sources
    reader: Callable[[Path, MetaEvalLoadReport], list[dict[str, Any]]]
    paper_name: str                  # the column name in PairEval's Table 1
    has_reference: bool


META_EVAL_SETS: dict[str, _SetSpec] = {
    "dailydialog-grade": _SetSpec("metaeval/grade", lambda r, rep: _read_grade(r, "dailydialog", rep),
                                  "DailyDialog-GRADE", True),
    "convai2-grade": _SetSpec("metaeval/grade", lambda r, rep: _read_grade(r, "convai2", rep), "ConvAI2-GRADE", True),
    "dailydialog-zhao": _SetSpec("metaeval/dailydialog_zhao", _read_zhao, "DailyDialog-Zhao", False),
    "personachat-usr": _SetSpec("metaeval/usr", lambda r, rep: _read_usr(r, "usr_percona_chat.json", rep),
                                "ConvAI2-USR", True),
    "topicalchat-usr": _SetSpec("metaeval/usr", lambda r, rep: _read_usr(r, "usr_topical_chat.json", rep),
                                "TopicalChat-USR", True),
    "fed": _SetSpec("metaeval/fed", _read_fed, "FED", False),
}
_ALIASES = {"convai2-usr": "personachat-usr"}


def meta_eval_set_names() -> list[str]:
    """The six sets, in the order of the paper's Table 1."""
    return list(META_EVAL_SETS)


def load_meta_eval_set(name: str, *, data_dir: str | Path | None = None, verify: bool = True) -> MetaEvalSet:
    """One of the paper's meta-evaluation sets by name (see the module table; ``convai2-usr`` is accepted
    for ``personachat-usr``), with an ``item_id`` column (``<name>:<row>``) and its load report.
    ``verify=False`` reads a modified copy knowingly (no sha256 check)."""
    key = _ALIASES.get(name.lower(), name.lower())
    if key not in META_EVAL_SETS:
        raise KeyError(f"no meta-evaluation set {name!r}; known: {', '.join(META_EVAL_SETS)}")
    spec = META_EVAL_SETS[key]
    report = MetaEvalLoadReport(key)
    rows = spec.reader(dataset_dir(spec.source, data_dir=data_dir, verify=verify), report)
    frame = pd.DataFrame(rows)
    frame["dataset"] = key
    frame["item_id"] = [f"{key}:{i}" for i in range(len(frame))]
    ordered = [c for c in META_EVAL_COLUMNS if c in frame.columns]
    kept = ["ratings"] if "ratings" in frame.columns else []  # (rater, rating) pairs where the file keeps them
    return MetaEvalSet(key, frame[ordered + ["item_id"] + kept], report)
