"""Where a submission runs: its own process tree, a scrubbed environment, resource limits, and the strongest
isolation the machine allows.

:func:`detect` picks the isolation once per grading:

- ``namespace (...), as nobody``: the grader runs as root and ``unshare`` works; each run gets PID, mount
  and IPC namespaces (ending its first process ends every process in it; shared memory segments go with it)
  and, where ``ip`` can bring its loopback up, a network namespace of its own (no network but its own
  loopback). It runs as the unprivileged user ``nobody`` in a file system of its own: the system's folders,
  the interpreter, the kit's package, the data and cache folders (read-only), its own folder, and fresh
  ``/tmp``, ``/var/tmp``, ``/run`` and ``/dev/shm``; nothing else exists for it (not the project around the
  package, not the class folder, the answer key or the output folder), and the checks package is a stub.
- Not root: a notebook in a user namespace is root of that namespace and can unmount what hides the class
  folder, the key and the grader's copies, so no sandbox is offered; grading needs ``--trusted``.
- ``process group only (trusted)``: no namespace could start and the teacher passed ``--trusted``; the run's
  process group and its kernel's are killed at the end, resource limits and the scrubbed environment still
  apply, a process that leaves its group can survive, and what a run writes to the machine's temporary
  folders stays there.

Without a namespace and without ``--trusted``, :func:`detect` raises :class:`SandboxUnavailable`.
"""
from __future__ import annotations

import ctypes
import json
import math
import os
import pwd
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from evalkit.course.cgroup import RunGroup, open_group, run_memory_bytes
from evalkit.course.intake import read_capped
# What a run sees, and the credential files among it that it reads as empty: their own module, re-exported here.
from evalkit.course.visible import (CREDENTIAL_FILES, ENVIRONMENT_ALLOWED, check_visible_folders,  # noqa: F401
                                    credential_files, data_folders, is_credential_folder, is_credential_name,
                                    machine_credential_files, unreadable_models, visible_paths,
                                    with_kit_cache)

__all__ = ["Isolation", "Limits", "SandboxUnavailable", "detect", "check_timeout", "scrubbed_environment",
           "clamped_limits", "launch", "supervise", "end", "mount_scratch", "release_mounts", "visible_paths",
           "check_visible_folders", "with_kit_cache", "unreadable_models", "credential_files", "data_folders", "is_credential_name",
           "is_credential_folder", "CREDENTIAL_FILES", "ENVIRONMENT_ALLOWED"]

_NSINIT = Path(__file__).with_name("_nsinit.py")


class SandboxUnavailable(ValueError):
    """No isolation can start here and grading was not marked ``--trusted``."""


@dataclass(frozen=True)
class Isolation:
    name: str                      # as the report states it
    namespace: bool
    unprivileged: bool             # unshare needs --user --map-root-user
    network: bool = False          # a network namespace of its own: loopback only
    uid: int | None = None         # the user a notebook runs as, when the grader drops to it
    gid: int | None = None


@dataclass(frozen=True)
class Limits:
    """What one run may use: wall clock, address space, output file size, open files, processes (threads
    count) of its user, and (with a namespace) the size of its own folder; CPU seconds follow the wall clock
    (every core busy for the whole time). Where the grader can make a control group (:mod:`.cgroup`), the whole
    run's memory and processes are capped too (``group_memory_bytes``, 0: no group), so a notebook cannot take
    the machine's memory by starting many processes each within the per-process limits."""

    timeout: float = 900.0
    memory_bytes: int = 16 * 2**30
    file_bytes: int = 256 * 2**20
    scratch_bytes: int = 2 * 2**30     # the run's own folder, a tmpfs of this size where the grader is root
    open_files: int = 1024
    processes: int = 1024
    group_memory_bytes: int = field(default_factory=run_memory_bytes)  # the whole run's, where a group can be made

    @property
    def cpu_seconds(self) -> int:
        return int(math.ceil(self.timeout)) * (os.cpu_count() or 1) + 60


def check_timeout(value: float) -> float:
    """``value`` as a finite, positive number of seconds, else a ``ValueError`` saying so.

    >>> check_timeout(30)
    30.0
    >>> check_timeout(float("nan"))
    Traceback (most recent call last):
    ...
    ValueError: --timeout must be a finite number of seconds above 0, not nan
    """
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"--timeout must be a number of seconds, not {value!r}") from None
    if not math.isfinite(seconds) or seconds <= 0:
        raise ValueError(f"--timeout must be a finite number of seconds above 0, not {value}")
    return seconds


_DETECTED: dict[bool, Isolation | str | None] = {}  # by whether the grader is root: the isolation, or why none


def detect(*, trusted: bool = False) -> Isolation:
    """The isolation this machine allows (see the module's text); ``trusted`` accepts running without one. The
    refusal says why none can start."""
    root = os.geteuid() == 0
    if root not in _DETECTED:
        _DETECTED[root] = _probe(root)
    found = _DETECTED[root]
    if isinstance(found, Isolation):
        return found
    if trusted:
        return Isolation("process group only (trusted)", namespace=False, unprivileged=False)
    raise SandboxUnavailable(f"no sandbox can start on this machine ({found or 'none was found'}); grade only "
                             "submissions you trust, with --trusted")


def _probe(root: bool) -> Isolation | str:
    """The isolation a run can start under, or why none can."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return "unshare is not installed (util-linux)"
    if not root:
        # In a user namespace the notebook is root of its own namespace and can unmount what hides the class,
        # the key and the grader's folder: that is no sandbox for hostile code, so grading needs --trusted.
        return "the grader is not root: a user namespace would make the notebook root of its own and is no sandbox"
    if not _runs([unshare, *_unshare_flags(False, False), "true"]):
        return "unshare could not make PID and mount namespaces"
    ip = shutil.which("ip") or "/usr/sbin/ip"
    network = _runs([unshare, *_unshare_flags(False, True), ip, "link", "set", "lo", "up"])
    kinds = "PID, mount and network" if network else "PID and mount"
    try:
        nobody = pwd.getpwnam("nobody")
    except KeyError:
        return "this machine has no user 'nobody' to run notebooks as"
    grouped = ", in a control group per run" if _groups_work() else ""
    found = Isolation(f"namespace ({kinds}), as nobody{grouped}", namespace=True, unprivileged=False,
                      network=network, uid=nobody.pw_uid, gid=nobody.pw_gid)
    failed = _start_failure(found)
    return found if failed is None else (
        f"a run in the sandbox, as nobody, could not import the kit ({failed}): the kit and its Python must be "
        "installed where every user can read them (an editable install's source folder too); PYTHONPATH is not "
        "passed on")


def _groups_work() -> bool:
    """Whether this grader can make a run's control group (:func:`open_group`): said in the isolation's name."""
    group = open_group(2**30, 64)
    if group is not None:
        group.remove()
    return group is not None


def _start_failure(isolation: Isolation) -> str | None:
    """None when a run can start under ``isolation`` (the kit imported by its interpreter, as its user), else the
    last line the run printed."""
    folder = Path(tempfile.mkdtemp(prefix="evalkit-probe-"))
    try:
        os.chmod(folder, 0o755)
        process = launch([sys.executable, "-c", "import evalkit.course.answers"], cwd=folder,
                         env=scrubbed_environment(folder), limits=Limits(timeout=60), isolation=isolation,
                         log=folder / "log")
        try:
            if process.wait(timeout=60) == 0:
                return None
        except subprocess.TimeoutExpired:
            return "it did not end within 60 s"
        finally:
            end(process)
        said = [line.strip() for line in (folder / "log").read_text(errors="replace").splitlines() if line.strip()]
        return said[-1][:300] if said else f"exit status {process.returncode}"
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _runs(command: list[str]) -> bool:
    try:
        done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def _unshare_flags(unprivileged: bool, network: bool) -> list[str]:
    flags = ["--pid", "--mount", "--ipc", "--fork", "--kill-child", "--mount-proc", "--propagation", "private"]
    return (["--user", "--map-root-user"] if unprivileged else []) + flags + (["--net"] if network else [])


def scrubbed_environment(home: Path, *, base: dict[str, str] | None = None) -> dict[str, str]:
    """The run's environment: the allowed variables of ``base`` (default ``os.environ``), but none whose value holds a
    credential (a mirror's URL with a password in ``HF_HUB_CACHE``: :func:`evalkit.models.redact` would change it,
    or the value, or a piece, of a variable named as a credential: ``TZ`` set to ``$DB_PASSWORD``), a
    ``PATH`` of the interpreter's folder and the system's, and every home, cache and runtime folder inside ``home``;
    the kit's own cache folder (:func:`with_kit_cache`) where ``base`` names none.

    >>> env = scrubbed_environment(Path("/h"), base={"LANG": "C", "HF_HOME": "https://u:Pw-9x8y@mirror/hub"})
    >>> env["LANG"], "HF_HOME" in env
    ('C', False)
    """
    from evalkit.models import redact
    from evalkit.models.redaction import environment_secrets

    base = with_kit_cache(os.environ if base is None else base)  # the kit's converted models, where none is named
    secrets = environment_secrets(base)  # a variable the grader holds as a credential, copied into an allowed one
    env = {name: base[name] for name in ENVIRONMENT_ALLOWED
           if base.get(name) and redact(base[name], secrets) == base[name]}
    if env.get("EVALKIT_DATA_DIR"):
        env["EVALKIT_DATA_DIR"] = str(Path(env["EVALKIT_DATA_DIR"]).resolve())
    env.update(PATH=os.pathsep.join([str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"]),
               HOME=str(home), TMPDIR=str(home / "tmp"), JUPYTER_RUNTIME_DIR=str(home / "runtime"),
               JUPYTER_CONFIG_DIR=str(home / "jupyter"), IPYTHONDIR=str(home / "ipython"),
               MPLCONFIGDIR=str(home / "mpl"), MPLBACKEND="Agg", PYTHONUNBUFFERED="1",
               PYTHONDONTWRITEBYTECODE="1")
    env.setdefault("LANG", "C.UTF-8")
    return env


def _rlimits(limits: Limits) -> list[tuple[int, int, str]]:
    """(resource, value, what it is as ``ulimit`` names it) of each per-process limit a run gets."""
    return [(resource.RLIMIT_AS, limits.memory_bytes, "address space (--memory; ulimit -v)"),
            (resource.RLIMIT_CPU, limits.cpu_seconds, "CPU seconds (ulimit -t)"),
            (resource.RLIMIT_FSIZE, limits.file_bytes, "file size (ulimit -f)"),
            (resource.RLIMIT_NOFILE, limits.open_files, "open files (ulimit -n)"),
            (resource.RLIMIT_NPROC, limits.processes, "processes (ulimit -u)"), (resource.RLIMIT_CORE, 0, "")]


def _within_hard_limit(kind: int, value: int) -> int:
    """``value``, or the grader's own hard limit of ``kind`` when that is lower: a process cannot raise its hard
    limit (without ``CAP_SYS_RESOURCE``), and a run never gets more than the grader was given."""
    hard = resource.getrlimit(kind)[1]
    return value if hard == resource.RLIM_INFINITY else min(value, hard)


def clamped_limits(limits: Limits) -> list[str]:
    """What of ``limits`` is above the grader's own hard limits (``ulimit -H``), each said as the limit a run gets
    instead: a run gets the lower of the two, so a lower ``ulimit -v`` than ``--memory`` caps the notebooks."""
    said = []
    for kind, value, what in _rlimits(limits):
        kept = _within_hard_limit(kind, value)
        if kept < value:
            shown = (f"{kept / 2**30:.3g} GiB", f"{value / 2**30:.3g} GiB") if kind == resource.RLIMIT_AS \
                else (f"{kept:,}", f"{value:,}")
            said.append(f"{what} of each notebook's processes capped at {shown[0]}, the grader's hard limit, "
                        f"not {shown[1]}")
    return said


def _limit(limits: Limits, group: RunGroup | None = None):
    libc = ctypes.CDLL(None, use_errno=True)

    def apply() -> None:
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: the run dies with the grader
        if group is not None:  # before the run's program: every process it starts is in the group
            group.join()
        for kind, value, _ in _rlimits(limits):  # never above the grader's own hard limit: that would raise here
            value = _within_hard_limit(kind, value)
            resource.setrlimit(kind, (value, value))

    return apply


def launch(argv: Sequence[str], *, cwd: Path, env: dict[str, str], limits: Limits, isolation: Isolation | None,
           log: Path, hide: Sequence[Path] = (), bind: Sequence[tuple[Path, Path]] = ()) -> subprocess.Popen:
    """``argv`` started in a session of its own under ``limits``; with a namespace ``isolation``, inside
    fresh PID, mount and IPC namespaces, in a file system holding only the system, :func:`visible_paths` and
    ``cwd`` (writable) (``hide``: folders among them it sees empty; ``bind``: read-only replacements)."""
    if isolation is not None and isolation.namespace:
        cwd_real = os.path.realpath(cwd)
        seen = [path for path in visible_paths(env) if str(path) != cwd_real]
        see = [[cwd_real, True]] + [[str(path), False] for path in seen]
        spec = {"see": see, "tmp_bytes": limits.file_bytes, "hide": [os.path.realpath(path) for path in hide],
                "hide_files": [str(path) for path in (*credential_files(data_folders(env)),
                                                      *machine_credential_files())],
                "bind": [[str(source), os.path.realpath(target)] for source, target in bind], "uid": isolation.uid,
                "gid": isolation.gid, "network": isolation.network, "cwd": cwd_real, "env": env,
                "argv": list(argv)}
        handle, spec_file = tempfile.mkstemp(prefix=".evalkit-run-", suffix=".json", dir=Path(cwd_real).parent)
        with os.fdopen(handle, "w") as stream:  # root-only (0600), removed by _nsinit once read
            json.dump(spec, stream)
        flags = _unshare_flags(isolation.unprivileged, isolation.network)
        argv = [shutil.which("unshare") or "unshare", *flags, sys.executable, "-I", "-S", str(_NSINIT), spec_file]
        env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"}
    group = open_group(limits.group_memory_bytes, limits.processes) if limits.group_memory_bytes else None
    try:
        with log.open("wb") as output:
            process = subprocess.Popen(list(argv), stdout=output, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                       cwd=cwd, env=env, start_new_session=True, preexec_fn=_limit(limits, group))
    except BaseException:
        if group is not None:
            group.remove()
        raise
    _GROUPS[process.pid] = group
    return process


#: The control group of each run started and not yet ended (by its first process's id).
_GROUPS: dict[int, RunGroup | None] = {}


def supervise(command: list[str], base: Path, limits: Limits, isolation: Isolation | None, env: dict,
              hide: Sequence[Path], bind: Sequence, active: list) -> str:
    """Start ``command`` in ``base`` (its log: ``base/worker.log``), wait at most ``limits.timeout`` seconds,
    and end everything it started (without a namespace: its group and the group in ``base/kernel.pgid``);
    returns ``"timeout"`` or ``"exit N"``. ``active`` holds it meanwhile, for a signal handler to end."""
    process = launch(command, cwd=base, env=env, limits=limits, isolation=isolation, log=base / "worker.log",
                     hide=hide, bind=bind)
    entry = (process, [])
    active.append(entry)
    try:
        process.wait(timeout=limits.timeout)
        outcome = f"exit {process.returncode}"
    except subprocess.TimeoutExpired:
        outcome = "timeout"
    finally:
        groups = []
        if isolation is None or not isolation.namespace:
            pgid = read_capped(base / "kernel.pgid", 32)
            if pgid is not None and pgid.strip().isdigit():
                groups.append(int(pgid))
        end(process, groups)
        active.remove(entry)
    return outcome


def mount_scratch(path: Path, size: int) -> None:
    """A tmpfs of ``size`` bytes at ``path`` (root only): a run's own folder, so what a notebook writes there is
    bounded by ``size`` (memory it takes while the run lasts) and never fills the machine's disk."""
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={int(size)},mode=0700", "tmpfs", str(path)], check=True,
                   capture_output=True)


def release_mounts(path: Path) -> None:
    """Unmount (lazily) every mount at or below ``path``, deepest first: what a grading that died left behind."""
    prefix = os.path.realpath(path)
    try:
        with open("/proc/self/mountinfo") as table:
            points = [line.split()[4].encode().decode("unicode_escape") for line in table]
    except OSError:
        return
    for point in sorted({p for p in points if p == prefix or p.startswith(prefix + "/")}, key=len, reverse=True):
        subprocess.run(["umount", "-l", point], check=False, capture_output=True)


def end(process: subprocess.Popen, groups: Sequence[int] = ()) -> None:
    """Kill ``process``'s group (with a namespace: every process of the run) and ``groups``; wait for it."""
    for group in (process.pid, *groups):
        try:
            os.killpg(group, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL is not refused
        pass
    group = _GROUPS.pop(process.pid, None)
    if group is not None:
        group.remove()
