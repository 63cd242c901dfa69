"""Chapter 1 — the UPHELD dataset: per-annotator CSVs in, tidy tables and a load report out.

Three subsets share one format: the main set (``annotator_{1..10}.csv`` at the top of the release) and two
check sets built from LLM-Arena and Topical-Chat (``additional_resources/...``). Each annotator has one
file; a row is one judged continuation (``Option B``) of a dialogue history against the human reference
(``Option A``) with three text labels whose value is the integer before the colon.

:func:`load_upheld` returns :class:`UpheldData` with

``labels`` — one row per (item, annotator): ``dataset``, ``item_id`` (turn id + candidate model),
``turn_id``, ``conversation_id``, ``turn`` (number of utterances before the continuation), ``history``
(list of ``(speaker, text)``), ``reference``, ``candidate``, ``model``, ``annotator``, ``content`` (1-5),
``style`` (1/3/5), ``reasonable`` (1/5), ``source_file``, ``source_row``; a blank or misplaced label is
missing (``<NA>``), never guessed.

``items`` — one row per item: the texts, ``n_annotators`` and ``<label>_{mean,median,std,n,bin}``.

``report`` — a :class:`LoadReport`: every fault found, counted and located.

The release's format — subsets, labels and their spellings, reading one cell — is
:mod:`evalkit.upheld.release_format`; its public names are importable from here too.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from evalkit.data.sources import dataset_dir, find_file, sha256_of
from evalkit.upheld.release_format import (DATASET_NAMES, ID_COLUMNS, LABEL_NAMES, LABELS, SUBSETS, TEXT_COLUMNS, Subset,
                            UpheldFormatError, parse_history, parse_label)
from evalkit.upheld.release_format import LabelSpec  # noqa: F401  (re-exported: evalkit.upheld.release.LabelSpec, as before the split)

__all__ = [
    "LABELS", "SUBSETS", "CALIBRATION_SOURCES", "UpheldFormatError", "Fault", "LoadReport", "UpheldData",
    "load_upheld", "read_subset", "read_annotator_folder", "parse_history", "agreement_bin", "item_table", "aggregate_scores",
]

#: The two calibration sources of the main set: a paraphrase of the reference and a random utterance.
CALIBRATION_SOURCES = ("gpt4_rephrase", "random")
#: Option B of both check sets was written by GPT-4o (paper §3.1.5); the files have no model column.
CHECK_SET_MODEL = "gpt-4o"
N_ANNOTATOR_FILES = 10


@dataclass(frozen=True)
class Fault:
    """One cell that was not taken at face value. ``row`` is the 1-based data row (header excluded)."""

    file: str
    row: int
    column: str
    kind: str
    raw: str


@dataclass
class LoadReport:
    """What the loader read, kept, dropped and normalised — nothing is changed silently."""

    subset: str
    files: list[dict] = field(default_factory=list)
    rows_read: int = 0
    rows_dropped: dict[str, int] = field(default_factory=dict)
    duplicate_raters: list[tuple[str, ...]] = field(default_factory=list)
    label_variants: dict[str, int] = field(default_factory=dict)
    blank_labels: dict[str, int] = field(default_factory=dict)
    misplaced_labels: dict[str, int] = field(default_factory=dict)
    leaked_reference_stripped: dict[str, int] = field(default_factory=dict)
    leak_expected_not_found: int = 0
    items_with_text_variants: int = 0
    extra_columns: dict[str, list[str]] = field(default_factory=dict)
    faults: list[Fault] = field(default_factory=list)

    @property
    def rows_kept(self) -> int:
        return self.rows_read - sum(self.rows_dropped.values())

    def summary(self) -> pd.DataFrame:
        """The report as a two-column table (what, count) for notebooks."""
        lines: list[tuple[str, object]] = [("files read", len(self.files)), ("rows read", self.rows_read)]
        lines += [(f"rows dropped: {why}", n) for why, n in self.rows_dropped.items()]
        lines.append(("rows kept", self.rows_kept))
        lines += [("duplicate rater files", " = ".join(group)) for group in self.duplicate_raters]
        for title, counts in (("label spelling normalised", self.label_variants),
                              ("blank label", self.blank_labels),
                              ("label of another field (set missing)", self.misplaced_labels)):
            lines += [(f"{title}: {name}", n) for name, n in counts.items() if n]
        lines += [(f"leaked reference stripped from history: {m}", n)
                  for m, n in self.leaked_reference_stripped.items() if n]
        if self.leak_expected_not_found:
            lines.append(("random/rephrase rows whose history did not end with the reference",
                          self.leak_expected_not_found))
        lines.append(("items whose texts differ between annotators", self.items_with_text_variants))
        lines += [(f"extra column {col!r} ignored in", ", ".join(files)) for col, files in self.extra_columns.items()]
        kinds = Counter(fault.kind for fault in self.faults if fault.kind not in ("blank", "misplaced"))
        lines += [(f"located faults: {kind}", n) for kind, n in sorted(kinds.items())]
        return pd.DataFrame(lines, columns=["what", "count"])


@dataclass(frozen=True)
class UpheldData:
    """A loaded subset: the long label table, the item table and the load report."""

    labels: pd.DataFrame
    items: pd.DataFrame
    report: LoadReport


# --------------------------------------------------------------------------- reading files

def _read_csv(path: Path) -> pd.DataFrame:
    try:
        # All cells as text, blanks as "" — so every blank is seen and counted, not turned into NaN.
        return pd.read_csv(path, dtype=str, keep_default_na=False, na_filter=False,
                           compression="gzip" if path.suffix == ".gz" else None)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, EOFError, OSError) as error:
        raise UpheldFormatError(path, f"not a readable CSV file ({type(error).__name__}: {error})") from error


def _annotator_files(root: Path) -> list[tuple[int, Path]]:
    found = []
    for number in range(1, N_ANNOTATOR_FILES + 1):
        path = find_file(root, f"annotator_{number}.csv")
        if path is not None:
            found.append((number, path))
    if not found:
        raise UpheldFormatError(root, "no annotator_<n>.csv(.gz) file found")
    return found


def _folder_annotator_files(folder: Path) -> list[tuple[int, Path]]:
    """Every ``annotator_<n>.csv`` (or ``.csv.gz``) in a user's folder, any ``n``, in the order of ``n``."""
    if not folder.is_dir():
        raise UpheldFormatError(folder, "not a folder of annotator_<n>.csv files")
    found = {}
    for path in folder.iterdir():
        match = re.fullmatch(r"annotator_(\d+)\.csv(\.gz)?", path.name)
        if match and path.is_file():
            number = int(match.group(1))
            if number in found:
                raise UpheldFormatError(path, f"annotator {number} has two files ({found[number].name} too)")
            found[number] = path
    if not found:
        raise UpheldFormatError(folder, "no annotator_<n>.csv(.gz) file found")
    return sorted(found.items())


def _rows_of_file(path: Path, annotator: int, subset: str, report: LoadReport, *, dataset: str | None = None,
                  default_model: str = CHECK_SET_MODEL) -> pd.DataFrame:
    frame = _read_csv(path)
    id_column = next((c for c in ID_COLUMNS if c in frame.columns), None)
    if id_column is None:
        raise UpheldFormatError(path, f"no turn-id column (expected one of {list(ID_COLUMNS)})",
                                column=ID_COLUMNS[0])
    required = [*TEXT_COLUMNS, *(spec.column for spec in LABELS.values())]
    if subset == "main":
        required.append("model")
    for column in required:
        if column not in frame.columns:
            raise UpheldFormatError(path, "missing column", column=column)
    known = {id_column, *required}
    for extra in (c for c in frame.columns if c not in known):
        # Stray columns (a pandas index artefact in two files) are ignored; any value in them is reported.
        report.extra_columns.setdefault(extra, []).append(path.name)
        for index in np.flatnonzero(frame[extra].str.strip().astype(bool).to_numpy()) + 1:
            report.faults.append(Fault(path.name, int(index), extra, "stray cell", frame[extra].iloc[index - 1]))

    report.rows_read += len(frame)
    report.files.append({"file": path.name, "annotator": annotator, "rows": len(frame)})
    rows = []
    for index, record in enumerate(frame.to_dict("records"), start=1):
        turn_id = record[id_column].strip()
        if not turn_id:
            raise UpheldFormatError(path, "blank turn id", row=index, column=id_column)
        for column in TEXT_COLUMNS:
            if not record[column].strip():
                raise UpheldFormatError(path, "blank text", row=index, column=column)
        try:
            history = parse_history(record["chat_history"])
        except ValueError:
            # The release holds a few such cells (e.g. a history that is just "]"): the row cannot be
            # judged, so it is dropped, counted and located rather than guessed at.
            report.faults.append(Fault(path.name, index, "chat_history", "malformed history",
                                       record["chat_history"][:200]))
            report.rows_dropped["malformed history"] = report.rows_dropped.get("malformed history", 0) + 1
            continue
        model = record["model"].strip() if subset == "main" else default_model
        if subset == "main" and not model:
            raise UpheldFormatError(path, "blank model", row=index, column="model")
        row = {"dataset": dataset or DATASET_NAMES[subset], "turn_id": turn_id, "model": model, "annotator": annotator,
               "history": history, "reference": record["Option A"].strip(),
               "candidate": record["Option B"].strip(), "source_file": path.name, "source_row": index}
        for name, spec in LABELS.items():
            raw = record[spec.column]
            value, status = parse_label(raw, name)
            if status == "bad":
                raise UpheldFormatError(path, f"unparseable {name} label {raw!r} (allowed: "
                                              f"{list(spec.spellings.values())})", row=index, column=spec.column)
            if status == "variant":
                report.label_variants[name] = report.label_variants.get(name, 0) + 1
            elif status in ("blank", "misplaced"):
                counts = report.blank_labels if status == "blank" else report.misplaced_labels
                counts[name] = counts.get(name, 0) + 1
                report.faults.append(Fault(path.name, index, spec.column, status, raw))
            row[name] = value
        rows.append(row)
    return pd.DataFrame(rows)


def _same_text(first: str, second: str) -> bool:
    return " ".join(first.split()) == " ".join(second.split())


def _conversation_of(turn_id: str) -> str | None:
    """Conversation part of a turn id; None for the bare global ids (e.g. ``45397``).

    >>> _conversation_of("87-15"), _conversation_of("mw-20-12"), _conversation_of("tc_211-10")
    ('87', 'mw-20', 'tc_211')
    >>> _conversation_of("45397") is None
    True
    """
    head, sep, _ = turn_id.rpartition("-")
    return head if sep else None


def _strip_leaked_reference(labels: pd.DataFrame, report: LoadReport) -> None:
    """Drop final assistant turns equal to the reference (the release appends it for two sources, in one
    item twice); other models' histories end with the user turn."""
    stripped: Counter[str] = Counter()
    histories = []
    for history, reference, model in zip(labels["history"], labels["reference"], labels["model"]):
        length = len(history)
        while history and history[-1][0] == "assistant" and _same_text(history[-1][1], reference):
            history = history[:-1]
        if len(history) < length:
            stripped[model] += 1
        elif model in CALIBRATION_SOURCES:
            report.leak_expected_not_found += 1
        histories.append(history)
    labels["history"] = histories
    report.leaked_reference_stripped = dict(sorted(stripped.items()))


def _assign_conversations(labels: pd.DataFrame) -> None:
    """Conversation ids from turn ids; bare numeric ids are grouped by their dialogue's first utterance."""
    conversation = labels["turn_id"].map(_conversation_of)
    bare = conversation.isna()
    if bare.any():
        opening = labels.loc[bare, "history"].map(lambda h: h[0][1] if h else "")
        first_id = labels.loc[bare, "turn_id"].groupby(opening).transform("min")
        conversation[bare] = "u" + first_id
    labels["conversation_id"] = conversation
    labels["turn"] = labels["history"].map(len)


def _duplicate_files(files: Sequence[tuple[int, Path]]) -> list[list[tuple[int, Path]]]:
    by_hash: dict[str, list[tuple[int, Path]]] = {}
    for number, path in files:
        by_hash.setdefault(sha256_of(path), []).append((number, path))
    return [group for group in by_hash.values() if len(group) > 1]


def read_subset(root: Path | str, subset: Subset = "main", *, drop_duplicate_raters: bool = True) -> UpheldData:
    """Read one subset's annotator files from ``root`` (a directory laid out like the release's)."""
    if subset not in SUBSETS:
        raise ValueError(f"subset must be one of {list(SUBSETS)}, not {subset!r}")
    report = LoadReport(subset=subset)
    files = _annotator_files(Path(root) / SUBSETS[subset])
    return _read_files(files, subset, report, drop_duplicate_raters=drop_duplicate_raters)


def read_annotator_folder(folder: Path | str, *, name: str | None = None,
                          drop_duplicate_raters: bool = True) -> UpheldData:
    """A user's own per-annotator labels in UPHELD's layout: ``annotator_<n>.csv`` (or ``.csv.gz``, any ``n``)
    in ``folder``, with the release's columns — a ``model`` column as in the main set, or none as in the check
    sets (the model is then ``unnamed``). The same checks and report as the release; ``dataset`` is ``name``
    (default: the folder's name)."""
    folder = Path(folder)
    files = _folder_annotator_files(folder)
    name = name or folder.resolve().name
    if not name:
        raise UpheldFormatError(folder, "the set needs a name: the folder has none (pass name=)")
    with_model = ["model" in _read_csv(path).columns for _, path in files]
    for (_, path), has in zip(files, with_model):
        if has != with_model[0]:
            raise UpheldFormatError(path, f"{'has' if has else 'lacks'} a model column and {files[0][1].name} does "
                                          "not: every annotator file of a folder has one layout", column="model")
    subset = "main" if with_model[0] else "llm_arena"  # the check sets' layout: no model column
    return _read_files(files, subset, LoadReport(subset=name), drop_duplicate_raters=drop_duplicate_raters,
                       dataset=name, default_model="unnamed")


def _read_files(files: Sequence[tuple[int, Path]], subset: str, report: LoadReport, *, drop_duplicate_raters: bool,
                dataset: str | None = None, default_model: str = CHECK_SET_MODEL) -> UpheldData:
    frames = []
    for number, path in files:
        frames.append(_rows_of_file(path, number, subset, report, dataset=dataset, default_model=default_model))
    labels = pd.concat(frames, ignore_index=True)
    if labels.empty:
        raise UpheldFormatError(files[0][1].parent, "the annotator files hold no rows")

    duplicates = _duplicate_files(files)
    report.duplicate_raters = [tuple(path.name for _, path in group) for group in duplicates]
    if drop_duplicate_raters and duplicates:
        dropped = [number for group in duplicates for number, _ in group[1:]]
        mask = labels["annotator"].isin(dropped)
        report.rows_dropped["duplicate rater file"] = int(mask.sum())
        labels = labels[~mask].reset_index(drop=True)

    repeated = labels.duplicated(["turn_id", "model", "annotator"], keep="first")
    if repeated.any():
        report.rows_dropped["same annotator rated the item twice (first kept)"] = int(repeated.sum())
        for row in labels[repeated].itertuples():
            report.faults.append(Fault(row.source_file, row.source_row, "id", "repeated rating", row.turn_id))
        labels = labels[~repeated].reset_index(drop=True)

    _strip_leaked_reference(labels, report)
    _assign_conversations(labels)
    labels["item_id"] = labels["turn_id"] + "|" + labels["model"]
    for name in LABEL_NAMES:
        labels[name] = labels[name].astype("Int64")
    ordered = ["dataset", "item_id", "turn_id", "conversation_id", "turn", "model", "annotator", "history",
               "reference", "candidate", *LABEL_NAMES, "source_file", "source_row"]
    labels = labels[ordered]
    items = item_table(labels)
    report.items_with_text_variants = int(items["text_variants"].sum())
    return UpheldData(labels=labels, items=items, report=report)


def load_upheld(subset: Subset = "main", *, data_dir: str | Path | None = None,
                drop_duplicate_raters: bool = True, verify: bool = True) -> UpheldData:
    """Load an UPHELD subset from ``$EVALKIT_DATA_DIR``/``data_dir`` or the download cache.

    ``drop_duplicate_raters`` drops every byte-identical copy of an annotator file after the first
    (the release holds two such pairs); the report lists them either way.
    """
    return read_subset(dataset_dir("upheld", data_dir=data_dir, verify=verify), subset,
                       drop_duplicate_raters=drop_duplicate_raters)


# --------------------------------------------------------------------------- item-level views

def agreement_bin(scores: Iterable[float]) -> str:
    """Strongest agreement level among the annotators' scores of one item (UPHELD App. H).

    ``perfect`` all equal; ``majority`` one score given by more than half; ``plurality`` one score given
    more often than any other; ``none`` otherwise; ``single`` when fewer than two scores exist
    (missing values are ignored).

    >>> agreement_bin([5, 5, 5, 5, 5]), agreement_bin([5, 5, 5, 1, 3]), agreement_bin([5, 5, 1, 3, 4])
    ('perfect', 'majority', 'plurality')
    >>> agreement_bin([5, 5, 1, 1, 3]), agreement_bin([1, 2, 3, 4, 5]), agreement_bin([4])
    ('none', 'none', 'single')
    """
    values = [v for v in scores if v is not None and not pd.isna(v)]
    if len(values) < 2:
        return "single"
    counts = Counter(values).most_common()
    top = counts[0][1]
    if top == len(values):
        return "perfect"
    if top * 2 > len(values):
        return "majority"
    if len(counts) > 1 and counts[1][1] < top:
        return "plurality"
    return "none"


def _most_common(values: pd.Series):
    return Counter(map(_hashable, values)).most_common(1)[0][0]


def _hashable(value):
    return tuple(value) if isinstance(value, list) else value


def item_table(labels: pd.DataFrame) -> pd.DataFrame:
    """One row per item: its texts (the most common spelling), annotator count and label statistics."""
    grouped = labels.groupby("item_id", sort=True)
    first = grouped[["dataset", "turn_id", "conversation_id", "turn", "model"]].first()
    texts = grouped[["history", "reference", "candidate"]].agg(_most_common)
    texts["history"] = texts["history"].map(list)
    variants = grouped[["history", "reference", "candidate"]].agg(
        lambda v: len(set(map(_hashable, v))) > 1).any(axis=1).rename("text_variants")
    table = first.join(texts).join(grouped["annotator"].nunique().rename("n_annotators")).join(variants)
    for name in LABEL_NAMES:
        values = grouped[name]
        stats = pd.DataFrame({
            f"{name}_mean": values.mean().astype(float),
            f"{name}_median": values.median().astype(float),
            f"{name}_std": values.std(ddof=1).astype(float),
            f"{name}_n": values.count(),
            f"{name}_bin": values.agg(lambda v: agreement_bin(v.dropna().tolist())),
        })
        table = table.join(stats)
    return table.reset_index()


def aggregate_scores(labels: pd.DataFrame, by: str = "model") -> pd.DataFrame:
    """Sum of scores over sum of maxima per group and label (UPHELD App. D.1), missing labels skipped.

    >>> frame = pd.DataFrame({"model": ["m", "m", "m"], "content": [5, 3, 2], "style": [5, 5, 1],
    ...                       "reasonable": [5, 1, pd.NA]})
    >>> aggregate_scores(frame).round(3).to_dict("records")
    [{'model': 'm', 'content': 0.667, 'style': 0.733, 'reasonable': 0.6}]
    """
    rows = {}
    for name, spec in LABELS.items():
        values = pd.to_numeric(labels[name], errors="raise").astype(float)
        grouped = values.groupby(labels[by])
        rows[name] = grouped.sum() / (grouped.count() * spec.maximum)
    return pd.DataFrame(rows).reset_index().rename(columns={"index": by})
