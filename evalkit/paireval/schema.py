"""evalkit's turn-level meta-evaluation schema (JSONL or CSV), its readers and writers, UPHELD in it, and
the correlation of a metric column with the human scores."""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import pandas as pd

from ..jsonl import csv_frame, json_lines
from ..stats import correlation_with_humans


# --------------------------------------------------------------------------- meta-evaluation schema

META_EVAL_COLUMNS = ("context", "response", "reference", "score", "dataset", "system")
_REQUIRED = ("context", "response", "score")


class MetaEvalFormatError(ValueError):
    """A meta-evaluation file breaks the schema; the message names the file, line and field."""


def _check_record(record: Any, path: Path, line: int) -> dict[str, Any]:
    where = f"{path}, line {line}"
    if not isinstance(record, dict):
        raise MetaEvalFormatError(f"{where}: expected an object with fields {', '.join(_REQUIRED)}")
    for name in _REQUIRED:
        if name not in record or record[name] is None or (isinstance(record[name], float) and np.isnan(record[name])):
            raise MetaEvalFormatError(f"{where}, field {name!r}: missing")
    context = record["context"]
    if isinstance(context, str):
        try:
            context = json.loads(context)
        except json.JSONDecodeError as error:
            raise MetaEvalFormatError(f"{where}, field 'context': not a JSON list of turns ({error.msg})") from error
    if not isinstance(context, list) or not all(isinstance(turn, str) for turn in context):
        raise MetaEvalFormatError(f"{where}, field 'context': expected a list of turns (strings)")
    if not isinstance(record["response"], str):
        raise MetaEvalFormatError(f"{where}, field 'response': expected a string")
    try:
        if isinstance(record["score"], bool):  # JSON true/false would pass as 1.0/0.0
            raise TypeError("a boolean")
        score = float(record["score"])
    except (TypeError, ValueError) as error:
        raise MetaEvalFormatError(f"{where}, field 'score': {record['score']!r} is not a number") from error
    if not math.isfinite(score):
        raise MetaEvalFormatError(f"{where}, field 'score': {record['score']!r} is not a finite number")
    clean = {**record, "context": context, "score": score}
    for name in ("reference", "dataset", "system"):
        value = clean.get(name)
        clean[name] = None if value is None or (isinstance(value, float) and np.isnan(value)) else str(value)
    return clean


def read_meta_eval(path: str | Path) -> pd.DataFrame:
    """A meta-evaluation file (``.jsonl`` or ``.csv``) in evalkit's turn-level schema.

    Fields: ``context`` (list of turns; in CSV a JSON list), ``response``, ``score`` (human), and optional
    ``reference``, ``dataset``, ``system``; other fields are kept. Any malformed line raises
    :class:`MetaEvalFormatError` naming the file, line and field.
    """
    path = Path(path)
    records = []
    if path.suffix.lower() in (".jsonl", ".json"):
        records = [_check_record(record, path, number) for number, record in json_lines(path, MetaEvalFormatError)]
    elif path.suffix.lower() == ".csv":
        frame, lines = csv_frame(path, MetaEvalFormatError)
        missing = [c for c in _REQUIRED if c not in frame.columns]
        if missing:
            raise MetaEvalFormatError(f"{path}, line 1 (header): missing column(s) {', '.join(missing)}")
        for number, row in zip(lines, frame.to_dict("records")):
            row = {k: (None if v == "" else v) for k, v in row.items()}
            records.append(_check_record(row, path, number))
    else:
        raise MetaEvalFormatError(f"{path}: unknown format (use .jsonl or .csv)")
    if not records:
        raise MetaEvalFormatError(f"{path}: no records")
    frame = pd.DataFrame(records)
    if path.suffix.lower() == ".csv":
        # CSV has no types: an extra column (a metric's scores) that is entirely numeric becomes numbers.
        for column in frame.columns.difference(list(META_EVAL_COLUMNS)):
            numbers = pd.to_numeric(frame[column], errors="coerce")
            if numbers.notna().sum() == frame[column].notna().sum():
                frame[column] = numbers
    ordered = [c for c in META_EVAL_COLUMNS if c in frame.columns]
    return frame[ordered + [c for c in frame.columns if c not in ordered]]


def write_meta_eval(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write a frame in the schema (``.jsonl`` or ``.csv``, chosen by the suffix); it reads back equal."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    records = frame.to_dict("records")
    if path.suffix.lower() == ".csv":
        out = frame.copy()
        out["context"] = [json.dumps(list(c), ensure_ascii=False) for c in out["context"]]
        out.to_csv(path, index=False)
    else:
        with open(path, "w", encoding="utf-8") as handle:
            for record in records:
                record = {k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in record.items()}
                record["context"] = list(record["context"])
                handle.write(json.dumps(record, ensure_ascii=False, default=float) + "\n")
    return path


def upheld_contexts(histories: Iterable[Any]) -> list[list[str]]:
    """UPHELD dialogue histories (stored text or parsed (speaker, text) pairs) as the meta-evaluation
    ``context``: the list of turn texts."""
    from ..upheld import parse_history

    return [[text for _, text in (parse_history(h) if isinstance(h, str) else h)] for h in histories]


def upheld_meta_eval(subset: str = "main", *, label: str = "reasonable",
                     data_dir: str | Path | None = None) -> pd.DataFrame:
    """UPHELD items in the meta-evaluation schema: the dialogue so far as ``context``, the candidate as
    ``response``, the human reference, and the mean annotator ``label`` score (default reasonableness)."""
    from ..upheld import load_upheld

    items = load_upheld(subset, data_dir=data_dir).items
    score = pd.to_numeric(items[f"{label}_mean"], errors="coerce")
    keep = score.notna()
    contexts = upheld_contexts(items.loc[keep, "history"])
    return pd.DataFrame({"context": contexts, "response": items.loc[keep, "candidate"].astype(str).values,
                         "reference": items.loc[keep, "reference"].astype(str).values,
                         "score": score[keep].values, "dataset": f"upheld:{subset}",
                         "system": items.loc[keep, "model"].astype(str).values,
                         "item_id": items.loc[keep, "item_id"].values}).reset_index(drop=True)


def meta_evaluate(frame: pd.DataFrame, metric: str, human: str = "score", *, bootstrap: int = 0,
                  seed: int = 0) -> dict[str, float]:
    """Pearson and Spearman (and Kendall) of a metric column against the human scores, with p-values, n and
    — when ``bootstrap`` resamples are asked for — intervals; rows where either is missing are left out and
    counted (:func:`evalkit.stats.correlation_with_humans` on the frame's two columns)."""
    if metric == human:
        raise ValueError(f"the metric column and the human column are both {metric!r}")
    columns = frame[[metric, human]].apply(pd.to_numeric, errors="coerce")
    try:
        return correlation_with_humans(columns[metric], columns[human], bootstrap=bootstrap, seed=seed).as_dict()
    except ValueError as error:
        raise ValueError(f"meta-evaluation of {metric!r}: {error}") from None
