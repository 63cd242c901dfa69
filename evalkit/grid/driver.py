"""Running a grid: the pending units on a local process pool or as Ray tasks, retries, the output folder's
lock, and the outcome."""
from __future__ import annotations

import os
import signal
import sys
import threading
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pandas as pd

from evalkit.data.jsonl import spreadsheet_safe
from evalkit.grid.records import _failed_record, _finished, _masked_record, _write_record, results_table
from evalkit.grid.spec import GridSpec, GridUnit, expand
from evalkit.grid.scrub import _rename_if_secret, scrub_folder
from evalkit.grid.unit import run_unit
from evalkit.models import environment_secrets, redact


class GridLocked(RuntimeError):
    """Another grid run holds the output folder."""


@dataclass
class GridOutcome:
    """What a grid run did: units run now, skipped as finished, failed after retries; the gathered table."""

    ran: list[str]
    skipped: list[str]
    failed: dict[str, str]
    table: pd.DataFrame
    csv: Path

    def summary(self) -> str:
        lines = [f"{len(self.ran)} units run, {len(self.skipped)} skipped (finished before), "
                 f"{len(self.failed)} failed; results: {redact(str(self.csv), environment_secrets())}"]
        lines += [f"FAILED {unit_id}: {error}" for unit_id, error in self.failed.items()]
        return "\n".join(lines)


def _die_with_parent() -> None:
    """Pool-worker initializer: on Linux, ask for SIGTERM when the driver dies, however it dies, so a killed
    grid leaves no idle workers behind (elsewhere a no-op). A worker's command units die with it (see
    ``_REAPER``)."""
    import ctypes

    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
    except OSError:
        return
    parent = os.getppid()
    libc.prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the driver died before the request took effect
        os._exit(1)


def _execute(units: list[GridUnit], out: Path, *, engine: str, workers: int,
             ray_address: str | None) -> Iterator[tuple[GridUnit, dict[str, Any]]]:
    """(unit, record) pairs in the order units finish, so the caller can file each at once."""
    if not units:
        return
    if engine == "ray":
        import ray

        if not ray.is_initialized():
            ray.init(address=ray_address, ignore_reinit_error=True, log_to_driver=False)
        task = ray.remote(max_retries=0)(run_unit)  # retries are ours: counted and recorded
        waiting = {task.remote(unit, str(out)): unit for unit in units}
        while waiting:
            (done,), _ = ray.wait(list(waiting), num_returns=1)
            unit = waiting.pop(done)
            try:
                yield unit, ray.get(done)
            except Exception as error:  # noqa: BLE001 — a worker that died is a failed unit
                yield unit, _failed_record(unit, error)
        return
    if workers == 1:
        for unit in units:
            yield unit, run_unit(unit, str(out))
        return
    with ProcessPoolExecutor(max_workers=workers, initializer=_die_with_parent) as pool:
        futures = {pool.submit(run_unit, unit, str(out)): unit for unit in units}
        for future in as_completed(futures):
            try:
                yield futures[future], future.result()
            except Exception as error:  # noqa: BLE001 — a worker process that died is a failed unit
                yield futures[future], _failed_record(futures[future], error)


_HELD: set[str] = set()  # output folders locked by this process (POSIX locks do not exclude threads)
_HELD_GUARD = threading.Lock()


@contextmanager
def _folder_lock(out: Path):
    """Hold ``out/.grid.lock`` for the run; a second run on the same folder — from another process or
    another thread — is refused. A POSIX record lock belongs to this process alone: worker processes do not
    inherit it, and it goes with the process, so a killed run leaves no lock behind. (Closing any handle of
    the file releases such a lock, so this process never opens it twice: threads are kept apart first.)"""
    import fcntl

    key = str(out.resolve())
    path = out / ".grid.lock"

    def refuse() -> GridLocked:
        holder = path.read_text().strip() if path.is_file() else ""
        return GridLocked(f"{out} is in use by another grid run (process {holder or 'unknown'}); wait for it to "
                          "finish or give this grid another `out` folder")

    with _HELD_GUARD:
        if key in _HELD:
            raise refuse()
        handle = open(path, "a+")
        try:
            fcntl.lockf(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()  # this process does not hold the lock, so closing releases nothing
            raise refuse() from None
        _HELD.add(key)
    try:
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        yield
    finally:
        with _HELD_GUARD:
            _HELD.discard(key)
            handle.close()


def _identity(folder: Path) -> tuple[int, int]:
    status = os.stat(folder)
    return status.st_dev, status.st_ino


def _check_same_folder(out: Path, identity: tuple[int, int]) -> None:
    """Refuse to write on when ``out`` is no longer the folder the grid started in (a command swapped it for a
    link or another folder): nothing is written through it."""
    if out.is_symlink() or not out.is_dir() or _identity(out) != identity:
        raise RuntimeError(f"{out} was replaced while the grid ran (by one of its commands?): nothing more is "
                           "written there; check what it holds and points at")


def _filed(out: Path, unit: GridUnit, record: dict) -> dict:
    """``record`` written into the unit's folder and returned as written; where it cannot be written even after
    the folder is freed (a command's doing), the unit fails with why, and the grid goes on."""
    try:
        return _write_record(out, unit, record)
    except OSError as error:
        reason = f"its record could not be written in its folder ({error.strerror or type(error).__name__})"
        shown = _masked_record(unit, {**record, "status": "failed",
                                      "error": "; ".join(part for part in (record.get("error"), reason) if part)})
        print(f"evalkit: unit {unit.unit_id}: {shown['error']}", file=sys.stderr)
        return shown


def run_grid(spec: GridSpec, *, engine: str = "local", ray_address: str | None = None,
             workers: int | None = None, progress: bool = False) -> GridOutcome:
    """Run every unit of ``spec`` not finished before; retry failures ``spec.retries`` times; gather results.

    ``engine``: ``local`` (a process pool of ``workers``) or ``ray`` (tasks on the Ray cluster at
    ``ray_address``, or on the Ray instance this process already initialised). Each unit's record is
    written the moment it finishes, so a run killed part-way repeats none of its finished units; the
    output folder is locked against a second run for the duration.
    """
    if engine not in ("local", "ray"):
        raise ValueError(f"engine must be local or ray, not {engine!r}")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ValueError(f"workers (--workers) must be a whole number of at least 1, not {workers!r}")
    out = Path(spec.out)
    out.mkdir(parents=True, exist_ok=True)
    with _folder_lock(out):
        identity = _identity(out)  # a command that swaps the folder for another is caught before any write
        units = expand(spec)
        pending = [u for u in units if not _finished(out, u)]
        skipped = [u.unit_id for u in units if u not in pending]
        ran: list[str] = []
        failed: dict[str, str] = {}
        executed, records = list(pending), {}
        for attempt in range(spec.retries + 1):
            if not pending:
                break
            if progress:
                print(f"attempt {attempt + 1}: {len(pending)} units on {engine}", file=sys.stderr, flush=True)
            retry = []
            size = spec.workers if workers is None else workers
            for unit, record in _execute(pending, out, engine=engine, workers=size, ray_address=ray_address):
                _check_same_folder(out, identity)
                record = records[unit.unit_id] = _filed(out, unit, {**record, "attempts": attempt + 1})
                if record["status"] == "ok":
                    ran.append(unit.unit_id)
                    failed.pop(unit.unit_id, None)
                else:
                    failed[unit.unit_id] = record["error"]
                    retry.append(unit)
            pending = [u for u in pending if u in retry]  # the file's order, whatever order they finished in
        # Each worker scrubs its unit's folder as the unit ends; once every worker is gone, again: a worker killed
        # mid-unit never scrubbed, and nothing a unit started can write any more. The record is filed again
        # after it, as this process wrote it.
        _check_same_folder(out, identity)
        for unit in executed:
            folder = out / "units" / unit.unit_id
            if folder.is_dir():
                scrub_folder(folder, unit.secrets)
            if unit.unit_id in records:
                records[unit.unit_id] = _filed(out, unit, records[unit.unit_id])
        # A folder in units/ that is no unit's (one a command renamed its own folder to) is scrubbed with every
        # credential of the run.
        every = sorted({secret for unit in executed for secret in unit.secrets}, key=len, reverse=True)
        ids = {unit.unit_id for unit in units}
        for folder in sorted((out / "units").iterdir()) if (out / "units").is_dir() else ():
            if folder.name not in ids and folder.is_dir() and not folder.is_symlink():
                scrub_folder(folder, every)
                try:
                    _rename_if_secret(folder, every)
                except OSError:  # neither renamed nor removed: its name may hold a credential, so it is not shown
                    print(f"evalkit: a folder in {out / 'units'} that is no unit's could not be renamed or removed",
                          file=sys.stderr)
        table = results_table(spec)
        csv = out / "results.csv"
        # A text cell a spreadsheet would run as a formula (a parameter, a result a program printed) gets a "'".
        shown = table.map(spreadsheet_safe)  # result keys are column names: a header cell is guarded too
        shown.columns = [spreadsheet_safe(str(column)) for column in shown.columns]
        shown.to_csv(csv, index=False)
        try:
            table.to_parquet(out / "results.parquet", index=False)
        except ImportError:
            pass  # Parquet needs pyarrow (pip install pyarrow); the CSV has the same table
    return GridOutcome(ran, skipped, failed, table, csv)
