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
import re
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

__all__ = ["Isolation", "Limits", "SandboxUnavailable", "detect", "check_timeout", "scrubbed_environment",
           "clamped_limits", "launch", "supervise", "end", "mount_scratch", "release_mounts", "visible_paths",
           "check_visible_folders", "credential_files", "data_folders", "is_credential_name",
           "is_credential_folder", "CREDENTIAL_FILES", "ENVIRONMENT_ALLOWED"]

#: The only variables of the grader's environment a submission sees (paths and switches, no credentials).
ENVIRONMENT_ALLOWED = ("LANG", "LC_ALL", "LC_CTYPE", "TZ", "EVALKIT_DATA_DIR", "EVALKIT_CACHE_DIR",
                       "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HOME", "HF_HUB_CACHE", "TRANSFORMERS_CACHE",
                       "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
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


_DETECTED: dict[bool, Isolation | None] = {}


def detect(*, trusted: bool = False) -> Isolation:
    """The isolation this machine allows (see the module's text); ``trusted`` accepts running without one."""
    root = os.geteuid() == 0
    if root not in _DETECTED:
        _DETECTED[root] = _probe(root)
    found = _DETECTED[root]
    if found is not None:
        return found
    if trusted:
        return Isolation("process group only (trusted)", namespace=False, unprivileged=False)
    raise SandboxUnavailable("no sandbox can start on this machine (unshare could not make PID and mount "
                             "namespaces); grade only submissions you trust, with --trusted")


def _probe(root: bool) -> Isolation | None:
    unshare = shutil.which("unshare")
    if unshare is None:
        return None
    if not _runs([unshare, *_unshare_flags(not root, False), "true"]):
        return None
    ip = shutil.which("ip") or "/usr/sbin/ip"
    network = _runs([unshare, *_unshare_flags(not root, True), ip, "link", "set", "lo", "up"])
    kinds = "PID, mount and network" if network else "PID and mount"
    if root:
        try:
            nobody = pwd.getpwnam("nobody")
        except KeyError:
            return None
        grouped = ", in a control group per run" if _groups_work() else ""
        found = Isolation(f"namespace ({kinds}), as nobody{grouped}", namespace=True, unprivileged=False,
                          network=network, uid=nobody.pw_uid, gid=nobody.pw_gid)
    else:
        # In a user namespace the notebook is root of its own namespace and can unmount what hides the class,
        # the key and the grader's folder: that is no sandbox for hostile code, so grading needs --trusted.
        return None
    return found if _starts(found) else None


def _groups_work() -> bool:
    """Whether this grader can make a run's control group (:func:`open_group`): said in the isolation's name."""
    group = open_group(2**30, 64)
    if group is not None:
        group.remove()
    return group is not None


def _starts(isolation: Isolation) -> bool:
    """Whether a run can start under ``isolation``: the kit imported by its interpreter, as its user."""
    folder = Path(tempfile.mkdtemp(prefix="evalkit-probe-"))
    try:
        os.chmod(folder, 0o755)
        process = launch([sys.executable, "-c", "import evalkit.course.answers"], cwd=folder,
                         env=scrubbed_environment(folder), limits=Limits(timeout=60), isolation=isolation,
                         log=folder / "log")
        try:
            return process.wait(timeout=60) == 0
        except subprocess.TimeoutExpired:
            return False
        finally:
            end(process)
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
    """The run's environment: the allowed variables of ``base`` (default ``os.environ``), a ``PATH`` of the
    interpreter's folder and the system's, and every home, cache and runtime folder inside ``home``."""
    base = os.environ if base is None else base
    env = {name: base[name] for name in ENVIRONMENT_ALLOWED if base.get(name)}
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


#: Names a cache folder may hold that are credentials, not data (Hugging Face's tokens, a ``.netrc``, a ``.env``
#: of API keys); :func:`is_credential_name` matches these and every name shaped like one.
CREDENTIAL_FILES = ("token", "stored_tokens", ".netrc", ".git-credentials", "credentials", "credentials.json",
                    ".env")

#: Parts of a name that make it a credential's wherever they appear (case-insensitive).
_CREDENTIAL_PARTS = ("secret", "credential", "password", "passwd", "pgpass", "netrc", "pypirc", "npmrc", "apikey",
                     "api_key", "api-key", "access_key", "private_key")
#: Words (between dots, dashes, underscores) that make a name a credential's: ``token.txt``, ``server.key``,
#: ``.env.local``; not ``tokenizer.json``, ``special_tokens_map.json`` or ``environment``, which models hold.
_CREDENTIAL_WORDS = frozenset({"token", "key", "keys", "env", "envrc", "auth", "pem", "p12", "pfx", "kdbx"})


def is_credential_name(name: str) -> bool:
    """Whether a file named ``name`` in a cache folder may hold a credential: a hidden name (``.pgpass``,
    ``.envrc``, ``.ENV``), an SSH key (``id_*``), or a name with a credential's word in it (case-insensitive).

    >>> [is_credential_name(name) for name in (".env.local", "id_rsa", "API_KEY.txt", "my-token", "secrets.toml")]
    [True, True, True, True, True]
    >>> [is_credential_name(name) for name in ("tokenizer.json", "special_tokens_map.json", "environment")]
    [False, False, False]
    """
    lowered = name.lower()
    if name in CREDENTIAL_FILES or lowered.startswith((".", "id_")):
        return True
    return any(part in lowered for part in _CREDENTIAL_PARTS) or bool(
        _CREDENTIAL_WORDS.intersection(re.split(r"[^a-z0-9]+", lowered)))


#: Whole folder names (case-insensitive) that hold credentials: ``keys/``, ``auth/``. A word inside a longer name
#: (``bert-token-classification``, a model's cache folder) does not make a folder a credential's.
_CREDENTIAL_FOLDERS = frozenset({"token", "tokens", "key", "keys", "auth"})


def is_credential_folder(name: str) -> bool:
    """Whether a folder named ``name`` in a cache folder holds credentials, so that every file inside it reads as
    empty: a hidden name (``.docker``), a name holding a credential's part (``secrets``, ``credentials``,
    ``db_passwords``), or one of :data:`_CREDENTIAL_FOLDERS` whole.

    >>> [is_credential_folder(name) for name in (".docker", "secrets", "Credentials", "keys", "api_keys")]
    [True, True, True, True, True]
    >>> [is_credential_folder(name) for name in ("models--x--bert-token-classification", "snapshots", "keyphrase")]
    [False, False, False]
    """
    lowered = name.lower()
    return (lowered.startswith(".") or lowered in _CREDENTIAL_FOLDERS
            or any(part in lowered for part in _CREDENTIAL_PARTS))


def credential_files(folders: Sequence[Path]) -> list[Path]:
    """The files anywhere in each folder that :func:`is_credential_name` names, and every file inside a folder
    that :func:`is_credential_folder` names, hidden (``.docker/config.json``, ``.streamlit/secrets.toml``) or not
    (``secrets/openai.txt``, ``credentials/gcp.json``): a sandboxed run reads each as an empty file. A link so
    named counts by the file it points to, when that file lies in one of the folders.

    >>> import tempfile
    >>> home = Path(tempfile.mkdtemp())
    >>> _ = (home / "hub" / "models--x").mkdir(parents=True), (home / "hub" / "models--x" / "token").write_text("t")
    >>> _ = (home / "hub" / "model.bin").write_text("w"), (home / ".netrc").symlink_to(home / "hub" / "model.bin")
    >>> _ = (home / ".docker").mkdir(), (home / ".docker" / "config.json").write_text("{}")
    >>> _ = (home / "hub" / "tokenizer.json").write_text("{}")
    >>> _ = (home / "secrets").mkdir(), (home / "secrets" / "openai.txt").write_text("sk")
    >>> sorted(str(path.relative_to(home)) for path in credential_files([home]))
    ['.docker/config.json', 'hub/model.bin', 'hub/models--x/token', 'secrets/openai.txt']
    """
    roots = [Path(os.path.realpath(folder)) for folder in folders]
    found: dict[Path, None] = {}
    for root in roots:
        for here, _, names in os.walk(root):
            inside_credential = any(is_credential_folder(part) for part in Path(here).relative_to(root).parts)
            for name in names:
                if not (inside_credential or is_credential_name(name)):
                    continue
                target = Path(os.path.realpath(os.path.join(here, name)))
                if target.is_file() and any(target.is_relative_to(other) for other in roots):
                    found[target] = None
    return list(found)


#: Where a machine keeps credentials for every user: environment settings, package indexes' and tools' logins,
#: login scripts that export tokens. A run sees the system's ``/etc`` (its libraries and settings need it), but
#: reads each of these as an empty file. (Not every credential-looking name of ``/etc``: ``passwd`` is the user
#: table a run's programs look themselves up in.)
MACHINE_CREDENTIALS = ("/etc/environment", "/etc/pip.conf", "/etc/netrc", "/etc/npmrc", "/etc/gitconfig",
                       "/etc/wgetrc", "/etc/boto.cfg", "/etc/apt/auth.conf", "/etc/profile", "/etc/bash.bashrc",
                       "/etc/zshenv", "/etc/zprofile")
MACHINE_CREDENTIAL_FOLDERS = ("/etc/profile.d", "/etc/apt/auth.conf.d", "/etc/docker", "/etc/containers",
                              "/etc/xdg/pip", "/etc/pip", "/etc/uv", "/etc/zsh")
#: The package tools' settings an interpreter's own folder may hold (a virtual environment's ``pip.conf``).
PREFIX_CREDENTIALS = ("pip.conf", "pip.ini", "uv.toml", ".pypirc")


def machine_credential_files() -> list[Path]:
    """The files of the machine's ``/etc`` that a sandboxed run reads as empty: :data:`MACHINE_CREDENTIALS`, the
    files in :data:`MACHINE_CREDENTIAL_FOLDERS` and the interpreter's folders' :data:`PREFIX_CREDENTIALS` (not
    links: a link's target is what a bind would cover).

    >>> Path("/etc/environment") in machine_credential_files() or not Path("/etc/environment").is_file()
    True
    """
    prefixes = [os.path.join(prefix, name) for prefix in {sys.prefix, sys.base_prefix} for name in PREFIX_CREDENTIALS]
    found = [Path(name) for name in (*MACHINE_CREDENTIALS, *prefixes) if os.path.isfile(name)
             and not os.path.islink(name)]
    for folder in MACHINE_CREDENTIAL_FOLDERS:
        for here, _, names in os.walk(folder):
            found += [Path(here) / name for name in names if os.path.isfile(os.path.join(here, name))
                      and not os.path.islink(os.path.join(here, name))]
    return found


def check_visible_folders(env: dict[str, str], private: Sequence[Path]) -> None:
    """Refuse (``ValueError``) a data, cache or model folder of ``env`` that a run would see whole but that holds
    what no run may read: the file system's root, the grader's home, the temporary folder, the project around
    the kit's package, or any of ``private`` (the class, key and output folders) — a run sees such a folder in
    full, read-only, so ``EVALKIT_CACHE_DIR=/tmp`` would show it every other grading's files."""
    import evalkit

    guarded = {"the file system's root": Path("/"), "your home folder": Path.home(),
               "the temporary folder": Path(tempfile.gettempdir()),
               "the project around the kit": Path(evalkit.__file__).resolve().parents[1],
               **{f"{path}": path for path in private}}
    for name in ENVIRONMENT_ALLOWED:
        value = env.get(name, "")
        if not (name.endswith(("_DIR", "_HOME", "_CACHE")) and value.startswith("/")):
            continue
        folder = Path(os.path.realpath(value))
        for what, path in guarded.items():
            path = Path(os.path.realpath(path))
            if folder == path or path.is_relative_to(folder):
                raise ValueError(f"{name}={value} holds {what} ({path}); a graded notebook sees that folder whole: "
                                 f"point {name} at a folder of its own (the data or the model cache only)")


def visible_paths(env: dict[str, str]) -> list[Path]:
    """What a sandboxed run sees besides the system folders and its own: the interpreter and its environment,
    the kit's package (not the project around it), the project's download cache of datasets, and the data,
    cache and model folders that ``env`` names; those that exist, links resolved, read-only.

    >>> import evalkit
    >>> Path(evalkit.__file__).parent.resolve() in visible_paths({})
    True
    """
    found = [Path(sys.base_prefix), Path(os.path.realpath(sys.executable)).parent, Path(sys.prefix), _package(),
             *data_folders(env)]
    return list(dict.fromkeys(Path(os.path.realpath(path)) for path in found if os.path.exists(path)))


def _package() -> Path:
    """The kit's package folder, links resolved."""
    import evalkit

    return Path(evalkit.__file__).resolve().parent


def data_folders(env: dict[str, str]) -> list[Path]:
    """The data and cache folders a sandboxed run sees (each read through :func:`credential_files`): the
    project's download cache of datasets (``data`` beside the kit's package) and the data, cache and model
    folders ``env`` names; those that exist, links resolved. Not the interpreter's folders nor the package.

    >>> import evalkit, tempfile
    >>> cache = tempfile.mkdtemp()
    >>> Path(os.path.realpath(cache)) in data_folders({"EVALKIT_CACHE_DIR": cache})
    True
    >>> Path(evalkit.__file__).resolve().parent in data_folders({})
    False
    """
    found = [_package().parent / "data", *_env_folders(env)]
    return list(dict.fromkeys(Path(os.path.realpath(path)) for path in found if os.path.isdir(path)))


def _env_folders(env: dict[str, str]) -> list[Path]:
    """The data, cache and model folders ``env`` names (absolute paths that exist, links resolved)."""
    named = [env[name] for name in ENVIRONMENT_ALLOWED if name.endswith(("_DIR", "_HOME", "_CACHE"))
             and env.get(name, "").startswith("/")]
    return [Path(os.path.realpath(path)) for path in named if os.path.isdir(path)]


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
