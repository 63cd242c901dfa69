"""One unit run by a worker: a notebook through papermill, or a command under a reaper that kills its
process group; its record filed with credentials masked."""
from __future__ import annotations

import collections
import json
import os
import signal
import subprocess
import sys
import threading
import time
import traceback
import uuid
from pathlib import Path
from typing import Any

from evalkit.models import redact
from evalkit.models.redaction import environment_secrets
from evalkit.grid.masking import _public
from evalkit.grid.records import _write_record
from evalkit.grid.scrub import named_in_data, scrub_folder
from evalkit.grid.spec import GridUnit, command_path, fill


def _run_notebook(unit: GridUnit, folder: Path) -> dict[str, Any]:
    """The notebook with its base parameter set, the unit's values laid over that notebook's entry."""
    from evalkit.book.results import read_results
    from evalkit.book.runner import load_params, notebook_sources, run_notebooks

    params = load_params(unit.base_params)
    (source,) = notebook_sources([unit.target])
    notebooks = {**params["notebooks"], source.stem: {**(params["notebooks"].get(source.stem) or {}), **unit.params}}
    (run,) = run_notebooks({"defaults": params["defaults"], "notebooks": notebooks}, only=[source.stem],
                           out_dir=folder)
    return read_results(run.results) if run.results.is_file() else {}


# The process between a worker and its command. It asks for SIGTERM when its parent (the worker, or the
# driver itself) dies — however it dies — and starts the command in a session and process group of its own
# (the command itself asks for SIGKILL when the reaper dies). Told to stop, or orphaned, it kills the whole
# group, the command and all it started; when the command ends it kills what the command left running (a
# background child would otherwise hold the output pipes open). It is a child subreaper, so what the command
# detached into a session of its own (setsid) is reparented to it and killed too: the whole tree below it,
# however deep, is stopped first and then killed at once. A command killed by a signal is reported as killed by
# that signal.
_REAPER = r"""
import ctypes, os, signal, subprocess, sys, time
def processes():
    # (pid, parent pid, state) of every process this reaper can see
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            found.append((int(entry), int(fields[1]), fields[0]))
    return found
def descendants():
    # every live process below this one, however deep: a detached (setsid) chain is reparented here link by link
    children, state = {}, {}
    for pid, parent_pid, status in processes():
        children.setdefault(parent_pid, []).append(pid)
        state[pid] = status
    found, todo = [], [me]
    while todo:
        for pid in children.get(todo.pop(), ()):
            todo.append(pid)
            if state[pid] not in "ZX":
                found.append(pid)
    return found
def reap():
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                return
        except ChildProcessError:
            return
def signal_each(pids, signum):
    for pid in pids:
        try:
            os.kill(pid, signum)
        except PermissionError:  # a set-user-id program this reaper may not signal: it is left, not waited for
            unkillable.add(pid)
        except OSError:
            pass
def kill_descendants():
    # Stop the whole tree first (a stopped process cannot fork), scanning again until no process below is left
    # running, then kill it all at once; repeat until nothing is left. No round limit: each round stops all it
    # sees, so only what was forked during a scan remains for the next. (A process stuck in the kernel past a
    # minute is left to die when it returns.)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        stopped = set()
        while True:
            running = [pid for pid in descendants() if pid not in stopped and pid not in unkillable]
            if not running:
                break
            signal_each(running, signal.SIGSTOP)
            stopped.update(running)
        if not stopped:
            return
        signal_each(stopped, signal.SIGKILL)
        reap()
        time.sleep(0.01)
        reap()
def die_with_parent(signum):
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signum))  # PR_SET_PDEATHSIG (Linux)
    except (OSError, AttributeError):
        pass
parent, me, group, unkillable = int(sys.argv[1]), os.getpid(), None, set()
die_with_parent(signal.SIGTERM)
if os.getppid() != parent:
    os._exit(143)
os.setsid()
try:
    ctypes.CDLL(None, use_errno=True).prctl(36, 1)  # PR_SET_CHILD_SUBREAPER: orphans of the command come here
except (OSError, AttributeError):
    pass
def stop(signum, frame):
    if group is not None:
        try:
            os.killpg(group, signal.SIGKILL)
        except OSError:
            pass
    kill_descendants()
    os._exit(128 + signum)
for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(signum, stop)
def child_setup():
    die_with_parent(signal.SIGKILL)
    if os.getppid() != me:
        os._exit(137)
try:
    child = subprocess.Popen(sys.argv[2:], start_new_session=True, preexec_fn=child_setup)
except OSError as error:
    print(f"cannot start {sys.argv[2]!r}: {type(error).__name__}: {error.strerror or error}", file=sys.stderr)
    os._exit(127)
group = child.pid
code = child.wait()
try:
    os.killpg(group, signal.SIGKILL)
except OSError:
    pass
kill_descendants()
if code < 0:
    signal.signal(-code, signal.SIG_DFL)
    os.kill(me, -code)
sys.exit(code if code >= 0 else 128 - code)
"""


# Every process a unit starts inherits this variable, set to a value of the unit's own: what outlives the reaper
# (a command that killed it leaves its detached processes to the system) is found by it and killed.
_MARKER = "EVALKIT_GRID_UNIT"


def kill_marked(marker: str, wait_s: float = 30.0, settle_s: float = 1.0) -> list[int]:
    """Stop, then kill, every process whose environment holds ``EVALKIT_GRID_UNIT=<marker>``, until none is left
    (or ``wait_s`` has passed: a process stuck in the kernel dies when it returns); return their ids. A process
    this worker may not signal is left (it is not the unit's).

    A process in the middle of ``exec`` shows an empty environment for a moment, so a scan that finds no marked
    process but a user process with an empty environment is repeated, for at most ``settle_s`` seconds (one
    started with no environment at all reads empty for good)."""
    needle, killed, unkillable = f"{_MARKER}={marker}".encode(), [], set()
    deadline = time.monotonic() + wait_s
    settled_by = None
    while time.monotonic() < deadline:
        found, unread = _processes_holding(needle)
        found = [pid for pid in found if pid not in unkillable]
        if not found:
            settled_by = settled_by or time.monotonic() + settle_s
            if not unread or time.monotonic() >= settled_by:
                return killed
            time.sleep(0.01)
            continue
        settled_by = None
        for signum in (signal.SIGSTOP, signal.SIGKILL):
            for pid in found:
                try:
                    os.kill(pid, signum)
                except PermissionError:
                    unkillable.add(pid)
                except OSError:
                    pass
        killed += found
        time.sleep(0.01)
    return killed


_KERNEL_THREAD = 0x00200000  # PF_KTHREAD in /proc/<pid>/stat's flags: a kernel thread has no environment


def _processes_holding(needle: bytes) -> tuple[list[int], list[int]]:
    """The live processes whose environment holds ``needle`` as one of its entries, and the user processes whose
    environment reads empty: one in the middle of ``exec``, or one started with none (a zombie's reads empty
    too, and is not counted)."""
    found, unread = [], []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                with open(f"/proc/{entry}/environ", "rb") as handle:
                    environment = handle.read()
                if needle in environment.split(b"\0"):
                    found.append(int(entry))
                elif not environment and _user_process_running(entry):
                    unread.append(int(entry))
            except OSError:
                continue
    return found, unread


def _user_process_running(pid: str) -> bool:
    """Whether ``/proc/<pid>`` is a process that has not ended and is not a kernel thread."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return fields[0] not in ("Z", "X") and not int(fields[6]) & _KERNEL_THREAD


# Characters of a command's stdout or stderr kept, from its end (where its result line is): a command printing
# gigabytes within its time limit would otherwise fill the worker's memory, and the redaction reads about 0.3 MB
# of log lines a second.
KEPT_OUTPUT = 4 * 2**20


class _Drain:
    """A pipe read to its end by a thread of its own, keeping at least its last ``keep`` characters and at most
    64 K more (whole reads are dropped from its start, and then the rest of the line the cut fell in), and counting
    what it dropped."""

    def __init__(self, pipe, keep: int = KEPT_OUTPUT):
        self.parts: collections.deque[str] = collections.deque()
        self.kept = self.cut = 0
        self.cut_at_line_end = True  # whether the last character dropped ended a line
        self.keep = keep
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._read, args=(pipe,), daemon=True)
        self.thread.start()

    def _read(self, pipe) -> None:
        for part in iter(lambda: pipe.read(65536), ""):
            with self.lock:
                self.parts.append(part)
                self.kept += len(part)
                while self.kept - len(self.parts[0]) >= self.keep:
                    dropped = self.parts.popleft()
                    self.kept -= len(dropped)
                    self.cut += len(dropped)
                    self.cut_at_line_end = dropped.endswith("\n")

    def text(self, wait_s: float = 10.0) -> str:
        """What was kept, after a line saying how much was cut before it; a pipe still held open after
        ``wait_s`` (by a process this worker may not kill) is read no further.

        >>> import io
        >>> drain = _Drain(io.StringIO("x" * 200_000 + '\\n{"ok": 1}\\n'), keep=70_000)
        >>> text = drain.text()
        >>> text.splitlines()[0], text.splitlines()[-1], len(text) < 140_000
        ('[evalkit: the first 200,001 characters of this output were cut; its last 10 are kept]', '{"ok": 1}', True)
        >>> named = "x" * 65530 + "token=" + "Qm8vT2xLp9Rw4KzNc7\\n" + "step\\n" * 20_000  # the cut after "token="
        >>> "Qm8vT2xLp9Rw4KzNc7" in _Drain(io.StringIO(named), keep=70_000).text()
        False
        >>> whole = "y" * 65_535 + "\\n" + "the first whole line\\n" + "z\\n" * 20_000  # the cut at a line's end
        >>> _Drain(io.StringIO(whole), keep=40_000).text().splitlines()[1]
        'the first whole line'
        """
        self.thread.join(wait_s)
        with self.lock:
            text = "".join(self.parts)
            cut, at_line_end = self.cut, self.cut_at_line_end
        if cut and not at_line_end:  # the line the cut fell in goes whole: a value whose name was cut
            line_end = text.index("\n") + 1 if "\n" in text else len(text)  # is never kept
            text, cut = text[line_end:], cut + line_end
        return f"[evalkit: the first {cut:,} characters of this output were cut; its last {len(text):,} are kept]\n" \
            + text if cut else text


def _json_result(stdout: str) -> dict[str, Any]:
    """The last line of ``stdout`` that is a whole JSON object.

    >>> _json_result('{"a": 1}\\nnot json\\n[2]\\n{"b": 2}\\ndone\\n')
    {'b': 2}
    """
    for line in reversed(stdout.splitlines()):
        line = line.strip()
        if line.startswith("{") and line.endswith("}"):
            try:
                value = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                return value
    raise RuntimeError("no result: no line of its standard output is a JSON object (a command unit prints its "
                       "result as one JSON object on a line of its own)")


def _run_command(unit: GridUnit, folder: Path, secrets: list[str], printed: set[str]) -> dict[str, Any]:
    """Run a command unit under its reaper; its output files masked, its result read from its standard output.
    The credentials it printed in a named field are added to ``printed``, for the unit's other files."""
    arguments = [fill(part, unit.params) for part in json.loads(unit.target)]
    marker = uuid.uuid4().hex
    environment = {**os.environ, "PATH": command_path(), _MARKER: marker}
    reaper = subprocess.Popen([sys.executable, "-I", "-S", "-c", _REAPER, str(os.getpid()), *arguments],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, encoding="utf-8", errors="replace",
                              cwd=unit.workdir or None, env=environment)
    # The output is read by threads while this worker waits for the reaper alone: a process that outlived the
    # reaper may hold the pipes open, and is killed (by its marker) before the reading ends.
    readers = [_Drain(reaper.stdout), _Drain(reaper.stderr)]
    timed_out = False
    try:
        try:
            reaper.wait(timeout=unit.timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            _end(reaper)
    finally:
        if reaper.poll() is None:  # this worker is interrupted: its unit's processes go with it
            _end(reaper)
        kill_marked(marker)
    stdout, stderr = (reader.text() for reader in readers)
    # The unit's own credentials, the environment's (a command can print a key it inherited) and those the
    # command printed in a named field ({"SecretAccessKey": ...}, as `aws sts` prints them).
    printed.update(_printed_secrets(stdout), _printed_secrets(stderr))
    shared = sorted({*secrets, *environment_secrets(), *printed}, key=len, reverse=True)
    raw_stdout = stdout  # the result line is read as printed: masking first could break its JSON (?x=\" in a text)
    stdout, stderr = redact(stdout, shared), redact(stderr, shared)
    replaced = _reclaim(folder)
    (folder / "stdout.txt").write_text(stdout)
    (folder / "stderr.txt").write_text(stderr)
    if replaced:
        raise RuntimeError("the command replaced its folder (or the units folder) with a link, which was removed; "
                           "nothing was written through it")
    if timed_out:
        raise TimeoutError(f"still running after timeout_s = {unit.timeout_s:g} s; its processes were killed")
    if reaper.returncode != 0:
        ended = (f"killed by signal {signal.Signals(-reaper.returncode).name}" if reaper.returncode < 0
                 else f"exit status {reaper.returncode}")
        tail = (stderr.strip() or stdout.strip())[-1500:]
        raise RuntimeError(f"{ended}: {tail}")
    return _public(_json_result(raw_stdout), shared)


def _printed_secrets(text: str) -> list[str]:
    """The credentials a command's output names (:func:`~evalkit.grid.scrub.named_in_data`, read as a unit's files
    are: also where a program printed them as UTF-16 or UTF-32, zero bytes between the characters).

    >>> _printed_secrets('{"password": "Pw-Wide77x"}'.encode("utf-16-le").decode("utf-8"))
    ['Pw-Wide77x']
    """
    return named_in_data(text.encode("utf-8", "surrogatepass"))


def _end(reaper: subprocess.Popen, grace_s: float = 10.0) -> None:
    """Ask the reaper to kill its command and end; a reaper that does not end within ``grace_s`` (stopped, say,
    by its command: a stopped process takes no SIGTERM) is killed."""
    reaper.terminate()  # the reaper kills the command's process group
    try:
        reaper.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        reaper.kill()
        reaper.wait()


def _reclaim(folder: Path) -> bool:
    """Make ``folder`` and the ``units`` folder above it real folders again where a command replaced one with a
    link (whatever it points at is never written through); True when one was replaced. The grid's output folder
    itself replaced by a link is an error: nothing is written."""
    if folder.parent.parent.is_symlink():
        raise RuntimeError(f"the grid's output folder {folder.parent.parent} was replaced by a link while the unit "
                           "ran; nothing was written through it")
    replaced = False
    for path in (folder.parent, folder):
        if path.is_symlink() or (path.exists() and not path.is_dir()):
            path.unlink()
            replaced = True
        path.mkdir(exist_ok=True)
    return replaced


def _marked_notebook(unit: GridUnit, folder: Path) -> dict[str, Any]:
    """:func:`_run_notebook` with its kernel, and all the kernel starts, marked as the unit's; what of it is still
    running when the notebook ends is killed."""
    marker, before = uuid.uuid4().hex, os.environ.get(_MARKER)
    os.environ[_MARKER] = marker
    try:
        return _run_notebook(unit, folder)
    finally:
        if before is None:
            os.environ.pop(_MARKER, None)
        else:
            os.environ[_MARKER] = before
        kill_marked(marker)


def run_unit(unit: GridUnit, out_dir: str) -> dict[str, Any]:
    """Run one unit into ``out_dir/units/<id>/`` and return its record (never raises: a failure is recorded
    with its error). Importable by process-pool and Ray workers alike."""
    folder = Path(out_dir) / "units" / unit.unit_id
    folder.mkdir(parents=True, exist_ok=True)
    secrets = unit.secrets
    started = time.perf_counter()
    record: dict[str, Any] = {"unit_id": unit.unit_id, "unit": unit.public(), "status": "ok", "error": None,
                              "result": {}}
    printed: set[str] = set()
    result, error = {}, None
    try:
        result = (_marked_notebook(unit, folder) if unit.kind == "notebook"
                  else _run_command(unit, folder, secrets, printed))
    except Exception as failure:  # noqa: BLE001 — any failure of a unit is reported, the grid goes on
        error = (f"{type(failure).__name__}: {failure}", traceback.format_exc(limit=6))
    record["seconds"] = time.perf_counter() - started
    try:
        problems = ["its folder (or the units folder) was replaced by a link, which was removed; nothing was "
                    "written through it"] if _reclaim(folder) else []
    except RuntimeError as replaced:  # the output folder itself: neither scrubbed nor written through
        record.update(status="failed", error=redact(str(replaced), secrets), result={})
        return record
    # A notebook's executed copy and any file a command wrote there; the credentials its files name join those it
    # printed, and are masked in every file and in the record.
    scrubbed = scrub_folder(folder, [*secrets, *printed])
    known = sorted({*secrets, *printed, *scrubbed.learned}, key=len, reverse=True)
    if scrubbed.kept:
        problems.append(f"the scrub could not clean {len(scrubbed.kept)} entr{'y' if len(scrubbed.kept) == 1 else 'ies'}"
                        f" of its folder (each may hold a credential): {', '.join(scrubbed.kept[:5])}")
    record["result"] = _public(result, known)
    if error is not None:
        record.update(status="failed", error=redact(error[0], known), traceback=redact(error[1], known))
    if problems:
        record.update(status="failed", error=redact("; ".join([*([record["error"]] if record["error"] else []),
                                                                 *problems]), known))
    # Filed here too, not only by the driver: a driver killed while this worker ran loses nothing it did.
    try:
        _write_record(Path(out_dir), unit, record)
    except OSError:  # the driver files it again, and says why where it cannot
        pass
    return record
