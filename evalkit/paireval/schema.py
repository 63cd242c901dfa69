"""evalkit's turn-level meta-evaluation schema (JSONL or CSV), its readers and writers, UPHELD in it, and
the correlation of a metric column with the human scores."""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import pandas as pd

from evalkit.data.jsonl import TOO_DEEP, csv_frame, json_lines, read_text
from evalkit.stats import correlation_with_humans


# --------------------------------------------------------------------------- meta-evaluation schema

META_EVAL_COLUMNS = ("context", "response", "reference", "score", "dataset", "system")
META_EVAL_SUFFIXES = (".jsonl", ".json", ".csv")
_REQUIRED = ("context", "response", "score")


class MetaEvalFormatError(ValueError):
    """A meta-evaluation file breaks the schema; the message names the file, line and field."""


class DegenerateScoresError(ValueError):
    """Scores from which no correlation can be computed (all equal, or too few distinct values)."""


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and np.isnan(value))


def _shown(value: Any) -> str:
    """A value as a refusal names it: an integer too large for a float (JSON reads ``1`` and 400 zeros as one) by
    its count of digits, not its digits; anything else by its ``repr``.

    >>> _shown(10 ** 400), _shown(12), _shown("x")
    ('an integer of 401 digits', '12', "'x'")
    """
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10 ** 20:
        return f"an integer of {len(str(abs(value)))} digits"
    return repr(value)


def _check_record(record: Any, where: str, *, human: bool = True) -> dict[str, Any]:
    """One record in the schema; ``where`` locates it in messages (``file, line N`` or ``file, item N``). Without
    ``human`` the human ``score`` may be absent (a file of a judge's scores): it is then NaN."""
    if not isinstance(record, dict):
        raise MetaEvalFormatError(f"{where}: expected an object with fields {', '.join(_REQUIRED)}")
    if not human and _is_missing(record.get("score")):
        checked = _check_record({**record, "score": 0.0}, where)
        return {**checked, "score": float("nan")}
    for name, value in record.items():  # JSON has no NaN or Infinity: Python's reader lets them through
        if isinstance(value, float) and not math.isfinite(value):
            raise MetaEvalFormatError(f"{where}, field {name!r}: {value!r} is not a finite number "
                                      "(write null for a missing score)")
    for name in _REQUIRED:
        if name not in record or _is_missing(record[name]):
            raise MetaEvalFormatError(f"{where}, field {name!r}: missing")
    context = record["context"]
    if isinstance(context, str):
        try:
            context = json.loads(context)
        except json.JSONDecodeError as error:
            raise MetaEvalFormatError(f"{where}, field 'context': not a JSON list of turns ({error.msg})") from error
        except RecursionError:
            raise MetaEvalFormatError(f"{where}, field 'context': {TOO_DEEP}") from None
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
    except OverflowError:  # an integer beyond a float's range: JSON gives one for 1 followed by 400 zeros
        score = math.inf
    if not math.isfinite(score):
        raise MetaEvalFormatError(f"{where}, field 'score': {_shown(record['score'])} is not a finite number")
    clean = {**record, "context": context, "score": score}
    for name in ("reference", "dataset", "system"):
        value = clean.get(name)
        clean[name] = None if _is_missing(value) else str(value)
    return clean


def _json_records(path: Path) -> list[tuple[str, Any]]:
    """(where, record) of a ``.json`` file (a JSON array of records, or JSON Lines) or a ``.jsonl`` file (JSON
    Lines; an array there is refused by name rather than reported as a line that is not JSON)."""
    text = read_text(path, MetaEvalFormatError)
    if text.lstrip().startswith("["):
        try:
            whole = json.loads(text)
        except json.JSONDecodeError as error:
            if path.suffix.lower() == ".json":
                raise MetaEvalFormatError(f"{path}, line {error.lineno}: not JSON ({error.msg})") from None
            whole = None
        except ValueError as error:  # an integer of more digits than Python converts (4,300)
            raise MetaEvalFormatError(f"{path}: not JSON the kit can read ({error})") from None
        except RecursionError:
            raise MetaEvalFormatError(f"{path}: {TOO_DEEP}") from None
        if isinstance(whole, list):
            if path.suffix.lower() == ".jsonl":
                raise MetaEvalFormatError(f"{path}: holds a JSON array, not JSON Lines (one object per line); "
                                          "name it .json to read it as an array of records")
            return [(f"{path}, item {index}", record) for index, record in enumerate(whole)]
    if path.suffix.lower() == ".json":
        try:
            whole = json.loads(text)
        except ValueError:  # JSON Lines in a .json file, read line by line below (a line too long a number says so)
            whole = None
        except RecursionError:
            raise MetaEvalFormatError(f"{path}: {TOO_DEEP}") from None
        if isinstance(whole, dict):
            return [(f"{path}, line 1", whole)]
    return [(f"{path}, line {number}", record) for number, record in json_lines(path, MetaEvalFormatError)]


def read_meta_eval(path: str | Path, *, human: bool = True) -> pd.DataFrame:
    """A meta-evaluation file (``.jsonl``, ``.json`` or ``.csv``) in evalkit's turn-level schema.

    Fields: ``context`` (list of turns; in CSV a JSON list), ``response``, ``score`` (human; optional, NaN when
    absent, with ``human=False``: a file of a judge's scores), and optional ``reference``, ``dataset``,
    ``system``; other fields are kept. A ``.json`` file holds a JSON array of
    records (or JSON Lines). Any malformed line raises :class:`MetaEvalFormatError` naming the file, line
    (item, for an array) and field. The frame's ``attrs`` keep the file (``source``) and where each row
    was (``where``), so that a bad value found later is named the same way (:func:`metric_scores`).
    """
    path = Path(path)
    suffix = path.suffix.lower()
    records, where = [], []
    if suffix in (".jsonl", ".json"):
        for place, record in _json_records(path):
            records.append(_check_record(record, place, human=human))
            where.append(place.rsplit(", ", 1)[-1])
    elif suffix == ".csv":
        frame, lines = csv_frame(path, MetaEvalFormatError)
        missing = [c for c in _REQUIRED if c not in frame.columns and (human or c != "score")]
        if missing:
            raise MetaEvalFormatError(f"{path}, line 1 (header): missing column(s) {', '.join(missing)}")
        for number, row in zip(lines, frame.to_dict("records")):
            row = {k: (None if v == "" else v) for k, v in row.items()}
            records.append(_check_record(row, f"{path}, line {number}", human=human))
            where.append(f"line {number}")
    else:
        raise MetaEvalFormatError(f"{path}: unknown format (use {', '.join(META_EVAL_SUFFIXES)})")
    if not records:
        raise MetaEvalFormatError(f"{path}: no records")
    frame = pd.DataFrame(records)
    if suffix == ".csv":
        # CSV has no types: an extra column (a metric's scores) that is entirely numeric becomes numbers.
        for column in frame.columns.difference(list(META_EVAL_COLUMNS)):
            numbers = pd.to_numeric(frame[column], errors="coerce")
            if numbers.notna().sum() == frame[column].notna().sum():
                frame[column] = numbers
    ordered = [c for c in META_EVAL_COLUMNS if c in frame.columns]
    frame = frame[ordered + [c for c in frame.columns if c not in ordered]]
    frame.attrs.update(source=str(path), where=where)
    return frame


def check_meta_eval_output(path: str | Path) -> Path:
    """``path`` if a meta-evaluation file can be written there (a ``.jsonl``, ``.json`` or ``.csv`` name that
    is not a folder) — checked before any scoring is done."""
    path = Path(path)
    if path.is_dir():
        raise MetaEvalFormatError(f"{path}: is a folder; name the file to write (e.g. {path / 'scored.jsonl'})")
    if path.suffix.lower() not in META_EVAL_SUFFIXES:
        raise MetaEvalFormatError(f"{path}: unknown format {path.suffix or '(no suffix)'!r}; name a "
                                  f"{', '.join(META_EVAL_SUFFIXES)} file (what `paireval meta-eval` reads)")
    return path


def write_meta_eval(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write a frame in the schema (``.jsonl``, ``.json`` — an array — or ``.csv``, by the suffix); it reads
    back equal. Another suffix is refused (the file could not be read back)."""
    path = check_meta_eval_output(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() == ".csv":
        out = frame.copy()
        out["context"] = [json.dumps(list(c), ensure_ascii=False) for c in out["context"]]
        out.to_csv(path, index=False)
        return path
    records = []
    for record in frame.to_dict("records"):
        record = {k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in record.items()}
        record["context"] = list(record["context"])
        records.append(record)
    with open(path, "w", encoding="utf-8") as handle:
        if path.suffix.lower() == ".json":
            json.dump(records, handle, ensure_ascii=False, default=float, indent=1)
            handle.write("\n")
        else:
            for record in records:
                handle.write(json.dumps(record, ensure_ascii=False, default=float) + "\n")
    return path


def metric_scores(frame: pd.DataFrame, metric: str, *, source: str | None = None) -> pd.Series:
    """A metric column as floats, checked as strictly as the ``score`` column: missing (null, a blank CSV
    cell, NaN from a scorer that abstained) is an abstention; ``true``/``false``, a text that is not a
    number, an infinite number and an integer too large for a float (``1`` and 400 zeros in JSON) are refused
    naming the file, line and field.

    >>> metric_scores(pd.DataFrame({"m": [0.5, None, "2"]}), "m").tolist()
    [0.5, nan, 2.0]
    >>> metric_scores(pd.DataFrame({"m": [0.5, True]}), "m", source="x.jsonl")
    Traceback (most recent call last):
    ...
    evalkit.paireval.schema.MetaEvalFormatError: x.jsonl, row 2, field 'm': True is not a score (true/false is not a number)
    """
    if metric not in frame.columns:
        raise MetaEvalFormatError(f"{source or frame.attrs.get('source', 'the frame')} has no column {metric!r} "
                                  f"(columns: {', '.join(map(str, frame.columns))})")
    source = source or frame.attrs.get("source", "the frame")
    where = frame.attrs.get("where")
    if where is None or len(where) != len(frame):
        where = [f"row {index + 1}" for index in range(len(frame))]
    values = []
    for place, value in zip(where, frame[metric].tolist()):
        at = f"{source}, {place}, field {metric!r}"
        if _is_missing(value):
            values.append(np.nan)
            continue
        if isinstance(value, (bool, np.bool_)):
            raise MetaEvalFormatError(f"{at}: {value!r} is not a score (true/false is not a number)")
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise MetaEvalFormatError(f"{at}: {value!r} is not a number; name a column of scores") from None
        except OverflowError:  # an integer beyond a float's range (1 followed by 400 zeros in JSON)
            number = math.inf
        if not math.isfinite(number):
            raise MetaEvalFormatError(f"{at}: {_shown(value)} is not a finite number (leave it blank, or null, for "
                                      "an abstention)")
        values.append(number)
    return pd.Series(values, index=frame.index, name=metric, dtype=float)


def duplicate_rows(frame: pd.DataFrame) -> dict[str, Any]:
    """Rows that repeat an earlier row's context and response: how many (``repeated``), how many of them
    also repeat its human score (``identical``), and up to three (first, repeat) locations.

    They are reported, not refused: the paper's sets hold such rows (two systems giving the same response
    to the same context, rated apart; DailyDialog-Zhao repeats some items whole), but a file pasted twice
    doubles n and shrinks every p-value, so a reader must see the count.

    >>> duplicate_rows(pd.DataFrame({"context": [["a"], ["a"], ["b"]], "response": ["x", "x", "x"],
    ...                              "score": [1.0, 1.0, 2.0]}))["repeated"]
    1
    """
    where = frame.attrs.get("where")
    if where is None or len(where) != len(frame):
        where = [f"row {index + 1}" for index in range(len(frame))]
    first: dict[Any, int] = {}
    repeated, identical, examples = 0, 0, []
    scores = frame["score"].tolist() if "score" in frame else [None] * len(frame)
    for position, (context, response) in enumerate(zip(frame["context"], frame["response"])):
        key = (tuple(context) if isinstance(context, (list, tuple)) else context, response)
        if key not in first:
            first[key] = position
            continue
        repeated += 1
        identical += scores[first[key]] == scores[position]
        if len(examples) < 3:
            examples.append((where[first[key]], where[position]))
    return {"repeated": repeated, "identical": int(identical), "examples": examples}


def upheld_contexts(histories: Iterable[Any]) -> list[list[str]]:
    """UPHELD dialogue histories (stored text or parsed (speaker, text) pairs) as the meta-evaluation
    ``context``: the list of turn texts."""
    from evalkit.upheld.release import parse_history

    return [[text for _, text in (parse_history(h) if isinstance(h, str) else h)] for h in histories]


def upheld_meta_eval(subset: str = "main", *, label: str = "reasonable",
                     data_dir: str | Path | None = None) -> pd.DataFrame:
    """UPHELD items in the meta-evaluation schema: the dialogue so far as ``context``, the candidate as
    ``response``, the human reference, and the mean annotator ``label`` score (default reasonableness)."""
    from evalkit.upheld.release import load_upheld

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
                  seed: int = 0, min_distinct: int = 3) -> dict[str, float]:
    """Pearson and Spearman (and Kendall) of a metric column against the human scores, with p-values, n and
    — when ``bootstrap`` resamples are asked for — intervals; rows where either is missing are left out and
    counted (:func:`evalkit.stats.correlation_with_humans` on the frame's two columns), and rows repeating
    an earlier row's context and response are counted in ``duplicates`` (:func:`duplicate_rows`).

    The metric column is checked as the score column is (:func:`metric_scores`). Scores of either side with
    fewer than ``min_distinct`` distinct values over the scored items raise :class:`DegenerateScoresError`:
    all equal, no correlation exists (it would be nan); two values make Spearman and Kendall mostly ties.
    """
    if metric == human:
        raise ValueError(f"the metric column and the human column are both {metric!r}")
    metric_values = metric_scores(frame, metric)
    human_values = pd.to_numeric(frame[human], errors="coerce")
    scored = metric_values.notna() & human_values.notna()
    for side, values in ((f"metric {metric!r}", metric_values[scored]), (f"human {human!r}", human_values[scored])):
        distinct = sorted(values.unique())
        if len(values) >= 3 and len(distinct) < min_distinct:
            shown = ", ".join(f"{v:g}" for v in distinct)
            what = (f"gives every one of the {len(values)} scored items the same score ({shown}): a correlation "
                    "is undefined" if len(distinct) == 1 else
                    f"takes only {len(distinct)} distinct values ({shown}) over {len(values)} scored items "
                    f"(fewer than {min_distinct}: the correlation would be mostly ties)")
            raise DegenerateScoresError(f"meta-evaluation of {metric!r}: the {side} column {what}")
    try:
        result = correlation_with_humans(metric_values, human_values, bootstrap=bootstrap, seed=seed).as_dict()
    except ValueError as error:
        raise ValueError(f"meta-evaluation of {metric!r}: {error}") from None
    if "context" in frame and "response" in frame:
        result["duplicates"] = duplicate_rows(frame)["repeated"]
    return result
