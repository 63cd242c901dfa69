"""A control group per graded run: a cap on the memory and on the number of processes of the whole run.

The per-process limits of :mod:`evalkit.course.sandbox` (address space, processes of the user) bound each
process of a run, but a notebook that starts many processes can still take the machine's memory between them.
Where the grader runs as root and the machine offers the memory and pids controllers (cgroup v1, or v2 with
them enabled for the grader's group), each run gets a group of its own under the grader's: every process the run
starts joins it before the run's program starts, the kernel ends the run's largest process when the group's
memory is spent, and the group goes when the run ends (an empty group a killed grader left behind goes when
the next grading opens one). Elsewhere :func:`open_group` returns None and the
per-process limits are what bounds a run (the grading says which: :attr:`RunGroup.description`).
"""
from __future__ import annotations

import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

__all__ = ["RunGroup", "open_group", "remove_stale_groups", "run_memory_bytes"]

CGROUP_ROOT = Path("/sys/fs/cgroup")


@dataclass(frozen=True)
class RunGroup:
    """The folders of one run's control group (one per controller in cgroup v1, one in v2)."""

    folders: tuple[Path, ...]
    memory_bytes: int
    processes: int

    @property
    def description(self) -> str:
        return f"a control group of {self.memory_bytes / 2**30:.1f} GiB and {self.processes} processes for the run"

    def join(self) -> None:
        """Move the calling process into the group (called in the run's first process, before its program)."""
        for folder in self.folders:
            (folder / "cgroup.procs").write_text(str(os.getpid()))

    def remove(self) -> None:
        """Remove the group once its processes are gone (the kernel needs a moment after the last one ends)."""
        for folder in self.folders:
            for _ in range(50):
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.1)


def run_memory_bytes(total: int | None = None) -> int:
    """The memory a run's whole group may take: half the machine's (``total``, default the physical memory),
    at most 16 GiB, so that a run never takes the memory the grader and the other runs need.

    >>> run_memory_bytes(8 * 2**30) == 4 * 2**30, run_memory_bytes(256 * 2**30) == 16 * 2**30
    (True, True)
    """
    if total is None:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return int(min(total // 2, 16 * 2**30))


def _own_path(controller: str) -> str | None:
    """The grader's own group in ``controller``'s hierarchy (v1), or in the unified one (``""``, v2)."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, names, path = line.split(":", 2)
        if (controller and controller in names.split(",")) or (not controller and names == ""):
            return path
    return None


STALE_AFTER_S = 60.0
"""How old an empty run group must be before a grader removes it: a newer one may be another grader's, made and
not yet joined by its run."""


def remove_stale_groups(parent: Path, *, now: float | None = None) -> list[Path]:
    """Remove the empty run groups under ``parent`` older than :data:`STALE_AFTER_S` — left by a grader that was
    killed before it could remove them — and return them. A group that still holds a process cannot be removed
    (the kernel refuses), so a live run is never touched.

    >>> import tempfile
    >>> parent = Path(tempfile.mkdtemp())
    >>> (parent / "evalkit-run-old").mkdir(); (parent / "evalkit-run-new").mkdir(); (parent / "other").mkdir()
    >>> os.utime(parent / "evalkit-run-old", (0, 0))
    >>> [p.name for p in remove_stale_groups(parent)], sorted(p.name for p in parent.iterdir())
    (['evalkit-run-old'], ['evalkit-run-new', 'other'])
    """
    now = time.time() if now is None else now
    removed = []
    try:
        candidates = sorted(parent.glob("evalkit-run-*"))
    except OSError:
        return removed
    for folder in candidates:
        try:
            if now - folder.stat().st_mtime >= STALE_AFTER_S:
                folder.rmdir()
                removed.append(folder)
        except OSError:
            continue  # in use (a live run), gone already, or not ours to remove
    return removed


def open_group(memory_bytes: int, processes: int, *, root: Path = CGROUP_ROOT) -> RunGroup | None:
    """A new control group for one run, with its memory and process caps set; None where the machine does not
    let the grader make one (not root, no such controllers, or a hierarchy it may not write to)."""
    if os.geteuid() != 0:
        return None
    name = f"evalkit-run-{uuid.uuid4().hex[:12]}"
    made: list[Path] = []
    try:
        if (root / "cgroup.controllers").exists():  # v2: one hierarchy, both controllers enabled below us
            parent = root / (_own_path("") or "/").lstrip("/")
            if not {"memory", "pids"} <= set((parent / "cgroup.subtree_control").read_text().split()):
                return None
            remove_stale_groups(parent)
            folder = parent / name
            folder.mkdir()
            made.append(folder)
            (folder / "memory.max").write_text(str(memory_bytes))
            (folder / "memory.swap.max").write_text("0") if (folder / "memory.swap.max").exists() else None
            (folder / "pids.max").write_text(str(processes))
        else:  # v1: a group in each controller's hierarchy
            for controller, settings in (("memory", {"memory.limit_in_bytes": memory_bytes}),
                                         ("pids", {"pids.max": processes})):
                own = _own_path(controller)
                if own is None or not (root / controller).is_dir():
                    raise OSError(f"no {controller} controller")
                remove_stale_groups(root / controller / own.lstrip("/"))
                folder = root / controller / own.lstrip("/") / name
                folder.mkdir()
                made.append(folder)
                for setting, value in settings.items():
                    (folder / setting).write_text(str(value))
    except (OSError, ValueError):
        RunGroup(tuple(made), memory_bytes, processes).remove()
        return None
    return RunGroup(tuple(made), memory_bytes, processes)
