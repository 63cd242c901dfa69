"""A grid's output folder: each unit's ``unit.json`` (written whole or not at all), whether a unit finished
before, and the gathered results table."""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd

from evalkit.models import redact
from evalkit.grid.masking import _public
from evalkit.grid.spec import GridSpec, GridUnit, _short, expand


def _record_path(out: Path, unit: GridUnit) -> Path:
    return out / "units" / unit.unit_id / "unit.json"


def _masked_record(unit: GridUnit, record: dict[str, Any]) -> dict[str, Any]:
    """``record`` with the unit as :meth:`GridUnit.public` gives it and its result, error and traceback masked
    with the unit's credentials as this process knows them (a Ray worker elsewhere has another environment).
    Masking a masked record changes nothing."""
    masked = {**record, "unit": unit.public()}
    for field in ("result", "error", "traceback"):
        if masked.get(field) is not None:
            masked[field] = _public(masked[field], unit.secrets)
    return masked


def _write_record(out: Path, unit: GridUnit, record: dict[str, Any]) -> dict[str, Any]:
    """Write a unit's record, masked (:func:`_masked_record`), whole or not at all (a kill mid-write leaves
    the previous record); return what was written."""
    record = _masked_record(unit, record)
    path = _record_path(out, unit)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(record, indent=1, default=str)
    try:
        _replace(path, text)
    except OSError:
        _make_room(path)  # what the unit's command left in the record's place, or a folder it made immutable
        _replace(path, text)
    return record


def _replace(path: Path, text: str) -> None:
    """Write ``text`` to a new file beside ``path`` and move it there, so a reader sees the old file or the new."""
    handle, partial = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "w") as stream:
            stream.write(text)
        os.replace(partial, path)
    except BaseException:
        if os.path.lexists(partial):
            os.unlink(partial)
        raise


def _make_room(path: Path) -> None:
    """Free the place of a unit's record: the folder holding it freed of its immutable flag, and anything a
    command left under the record's name that is no file (a folder) moved aside under a name of its own."""
    from evalkit.grid.scrub import _clear_flags

    for frozen in (path.parent, path):
        try:
            _clear_flags(frozen)
        except OSError:  # not root, a file system without flags, or nothing there
            pass
    if path.is_dir() and not path.is_symlink():
        aside, number = path.with_name(f"{path.name}.left-by-command"), 1
        while os.path.lexists(aside):
            number += 1
            aside = path.with_name(f"{path.name}.left-by-command.{number}")
        os.rename(path, aside)


def _finished(out: Path, unit: GridUnit) -> bool:
    """Whether the unit's folder holds an ``ok`` record of this very unit. The record stores the unit with
    its credentials masked, so equal stored forms alone could hide a changed password; but the folder is
    named by a hash of the real values, so a unit with another credential has another folder (and no
    record), while the stored form still tells apart units whose short hashes collide. The stored form masks
    the environment's credentials too, so a unit whose values hold one runs again under another environment."""
    path = _record_path(out, unit)
    if not path.is_file():
        return False
    try:
        record = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError):
        return False  # a damaged record: the unit runs again
    return (record.get("status") == "ok" and record.get("unit_id") == unit.unit_id
            and record.get("unit") == json.loads(json.dumps(unit.public())))


def _failed_record(unit: GridUnit, error: BaseException) -> dict[str, Any]:
    return {"unit_id": unit.unit_id, "unit": unit.public(), "status": "failed",
            "error": redact(f"{type(error).__name__}: {error}", unit.secrets), "result": {}, "seconds": 0.0}


def results_table(spec: GridSpec) -> pd.DataFrame:
    """One row per unit of the grid that has a record: its parameters, status, attempts, seconds and the
    numeric (or short text) values of its result, nested keys joined with ``/`` (a key named like one of the
    record's own columns, ``status`` or ``param/x``, as ``result/status``)."""
    out = Path(spec.out)
    rows = []
    for unit in expand(spec):
        path = _record_path(out, unit)
        if not path.is_file():
            continue
        record = json.loads(path.read_text())
        flat = pd.json_normalize(record.get("result") or {}, sep="/").to_dict("records")
        values = {k: v for k, v in (flat[0] if flat else {}).items()
                  if isinstance(v, (int, float, bool)) or (isinstance(v, str) and len(v) <= 80)}
        shown = unit.public()["params"]  # a record written before masking is masked here too
        values = _public(values, unit.secrets)
        own = {"unit_id": unit.unit_id, **{f"param/{k}": _short(v) if isinstance(v, (list, dict)) else v
                                           for k, v in shown.items()},
               "status": record["status"], "attempts": record.get("attempts", 1),
               "seconds": round(record.get("seconds", 0.0), 3), "error": _public(record.get("error"), unit.secrets)}
        # a result's key named like one of the record's own columns is the result's: kept apart, never over them
        row = dict(own)
        for k, v in values.items():
            key = f"result/{k}" if k in own or k.startswith("param/") else k
            while key in row:  # "status" and a nested "result.status": both kept
                key = f"result/{key}"
            row[key] = v
        rows.append(row)
    return pd.DataFrame(rows)
