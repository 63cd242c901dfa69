"""The grader's sandbox at its edges: a run's own folder is bounded, credential files in a visible cache folder
are not readable, no process sees the grading's folders on a command line, read-only means read-only below
the top, a grading that died is cleaned up by the next, and a class that breaks the tables' encoding or hands
in a chapter twice still gets its tables."""
from __future__ import annotations

import csv
import os
import time
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from evalkit.course.grade import grade, remove_stale_gradings
from evalkit.course.sandbox import Limits, end, launch, mount_scratch, release_mounts, scrubbed_environment

from .test_course import answer_key, submission
from .test_hostile import sandbox_or_skip


def _run(isolation, code: str, folder: Path, env: dict | None = None, limits: Limits | None = None) -> str:
    run_dir = folder / "runs" / "0000"
    run_dir.mkdir(parents=True)
    os.chmod(folder, 0o755)
    os.chmod(folder / "runs", 0o711)
    os.chown(run_dir, isolation.uid, isolation.gid)
    environment = scrubbed_environment(run_dir, base=env or {})
    process = launch([sys.executable, "-c", code], cwd=run_dir, env=environment, limits=limits or Limits(timeout=60),
                     isolation=isolation, log=folder / "log")
    try:
        assert process.wait(timeout=60) == 0, (folder / "log").read_text()
    finally:
        end(process)
    return (folder / "log").read_text()


def test_a_runs_own_folder_is_bounded_and_its_writes_never_reach_the_disk(tmp_path):
    isolation = sandbox_or_skip()
    scratch = tmp_path / "runs" / "0000"
    scratch.mkdir(parents=True)
    mount_scratch(scratch, 8 * 2**20)
    try:
        os.chown(scratch, isolation.uid, isolation.gid)
        os.chmod(tmp_path, 0o755)
        os.chmod(tmp_path / "runs", 0o711)
        code = '''import os
written = 0
try:
    for n in range(4):
        with open(f"fill{n}", "wb") as handle:
            handle.write(b"x" * (3 * 2**20))
        written += 3
except OSError as error:
    print("stopped", error.errno, written)
'''
        process = launch([sys.executable, "-c", code], cwd=scratch, env=scrubbed_environment(scratch),
                         limits=Limits(timeout=60), isolation=isolation, log=tmp_path / "log")
        try:
            assert process.wait(timeout=60) == 0, (tmp_path / "log").read_text()
        finally:
            end(process)
        said = (tmp_path / "log").read_text()
        assert "stopped 28 6" in said, said  # ENOSPC after two files: 8 MB, not the machine's disk
    finally:
        release_mounts(scratch)
    assert not any(scratch.iterdir())  # the tmpfs and what it held are gone


def test_credential_files_in_a_visible_cache_folder_read_as_empty(tmp_path):
    isolation = sandbox_or_skip()
    home = tmp_path / "hf"
    (home / "hub").mkdir(parents=True)
    (home / "token").write_text("hf_probeFILETOKEN789")
    (home / "stored_tokens").write_text("[default]\nhf_token = hf_probeFILETOKEN789\n")
    (home / "hub" / "weights.txt").write_text("model weights")
    for path in (tmp_path, home, home / "hub"):
        os.chmod(path, 0o755)
    for path in (home / "token", home / "stored_tokens", home / "hub" / "weights.txt"):
        os.chmod(path, 0o644)
    code = f'''import os
home = {str(home.resolve())!r}
print("token", repr(open(os.path.join(home, "token")).read()))
print("stored", repr(open(os.path.join(home, "stored_tokens")).read()))
print("weights", open(os.path.join(home, "hub", "weights.txt")).read())
'''
    said = _run(isolation, code, tmp_path / "grading", env={"HF_HOME": str(home)})
    assert "hf_probe" not in said and "token ''" in said and "stored ''" in said, said
    assert "weights model weights" in said, said  # the cache itself stays readable


def test_no_process_of_a_run_sees_the_gradings_folders_and_read_only_holds_below_the_top(tmp_path):
    isolation = sandbox_or_skip()
    secret_folder = tmp_path / "class-of-2026"
    secret_folder.mkdir()
    code = '''import os
cmdlines = []
for pid in os.listdir("/proc"):
    if pid.isdigit():
        try:
            cmdlines.append(open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\\0", b" ").decode())
        except OSError:
            pass
print("CMDLINES", " || ".join(cmdlines))
writable = []
for line in open("/proc/self/mountinfo"):
    fields = line.split()
    point, options = fields[4], fields[5].split(",")
    if point.startswith(("/usr", "/etc", "/sys", "/lib")) and "rw" in options:
        writable.append(point)
print("WRITABLE", writable)
'''
    said = _run(isolation, code, tmp_path / "grading")
    cmdlines = said.split("CMDLINES", 1)[1].split("WRITABLE")[0]
    assert "_nsinit" in cmdlines and '"see"' not in cmdlines and "runs/0000" not in cmdlines.split("_nsinit")[1], said
    assert "WRITABLE []" in said, said
    assert not list((tmp_path / "grading" / "runs").glob("*.json"))  # the spec file is gone once read


def test_a_grading_that_died_is_cleaned_up_by_the_next(tmp_path):
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale, alive = tmp_path / "evalkit-grade-stale", tmp_path / "evalkit-grade-alive"
    for folder, pid in ((stale, dead.pid), (alive, os.getpid())):
        (folder / "copies").mkdir(parents=True)
        (folder / "copies" / "student.ipynb").write_text("{}")
        (folder / "grader.pid").write_text(str(pid))
    remove_stale_gradings(tmp_path)
    assert not stale.exists() and alive.exists()


def test_a_name_that_is_not_utf8_and_a_chapter_handed_in_twice_still_give_tables(tmp_path):
    sandbox_or_skip()
    folder = tmp_path / "class"
    (folder / "min").mkdir(parents=True)
    with open(os.fsencode(folder / "min") + b"/bad\xffname.txt", "wb") as handle:
        handle.write(b"x")
    submission(folder / "twice" / "first.ipynb")
    submission(folder / "twice" / "second.ipynb")
    run = grade(folder, tmp_path / "grades", key=answer_key(tmp_path), timeout=120)
    with run.csv.open(encoding="utf-8") as handle:
        written = list(csv.DictReader(handle))
    reasons = " ".join(row["reason"] for row in written)
    assert "bad\\xffname.txt" in reasons
    twice = [row for row in written if row["student"] == "twice"]
    assert twice and {row["status"] for row in twice} == {"refused: several copies"}
    assert {row["score"] for row in twice} == {"0.0"} and "first.ipynb, twice/second.ipynb" in twice[0]["reason"]
    assert (tmp_path / "grades" / "grades.html").is_file() and (tmp_path / "grades" / "totals.csv").is_file()
    assert not list(Path(tempfile.gettempdir()).glob("evalkit-grade-*/grader.pid")) or all(
        int(p.read_text()) != os.getpid() for p in Path(tempfile.gettempdir()).glob("evalkit-grade-*/grader.pid"))


def test_a_data_or_cache_folder_that_holds_what_no_run_may_read_is_refused(tmp_path, monkeypatch):
    from evalkit.course.sandbox import check_visible_folders

    classes = tmp_path / "classes"
    (classes / "2026").mkdir(parents=True)
    for value in ("/", tempfile.gettempdir(), str(Path.home()), str(Path(__file__).resolve().parents[2]),
                  str(classes)):
        with pytest.raises(ValueError, match="sees that folder whole"):
            check_visible_folders({"EVALKIT_CACHE_DIR": value}, [classes / "2026"])
    check_visible_folders({"EVALKIT_CACHE_DIR": str(tmp_path / "cache"), "HF_HOME": str(tmp_path / "hf")},
                          [classes / "2026"])  # folders of their own are fine
    monkeypatch.setenv("HF_HOME", tempfile.gettempdir())
    with pytest.raises(ValueError, match="HF_HOME"):
        grade(classes, tmp_path / "grades", key=tmp_path)
    assert not (tmp_path / "grades").exists()


def test_credential_files_anywhere_in_a_cache_folder_and_links_to_them_read_as_empty(tmp_path):
    isolation = sandbox_or_skip()
    home = tmp_path / "hf"
    deep = home / "hub" / "models--x"
    deep.mkdir(parents=True)
    (deep / "token").write_text("hf_deepTOKEN4242")
    (home / "hub" / "secret.txt").write_text("machine h login u password netrcPW4242")
    (home / ".netrc").symlink_to(home / "hub" / "secret.txt")
    for path in (tmp_path, home, home / "hub", deep):
        os.chmod(path, 0o755)
    for path in (deep / "token", home / "hub" / "secret.txt"):
        os.chmod(path, 0o644)
    code = f'''home = {str(home.resolve())!r}
for name in ("hub/models--x/token", ".netrc", "hub/secret.txt"):
    print(name, repr(open(home + "/" + name).read()))
'''
    said = _run(isolation, code, tmp_path / "grading", env={"HF_HOME": str(home)})
    assert "4242" not in said and "hub/models--x/token ''" in said and ".netrc ''" in said, said


def test_two_names_that_differ_never_print_alike():
    from evalkit.course.intake import printable

    assert printable("mal\\xffory") != printable("mal\udcffory")
    assert printable("mal\udcffory") == "mal\\xffory" and printable("a\\b") == "a\\\\b"


def test_a_run_that_spreads_its_memory_over_many_processes_is_capped_as_a_whole(tmp_path):
    """Four processes of 120 MB each stay within the per-process address-space limit; a run's control group
    caps their sum (here 256 MB), so the kernel ends the run, where without a group all four would live."""
    from evalkit.course.cgroup import open_group

    isolation = sandbox_or_skip()
    probe = open_group(2**30, 64)
    if probe is None:
        pytest.skip("this machine does not let the grader make a control group")
    probe.remove()
    from evalkit.course.sandbox import _GROUPS

    folders: list[Path] = []  # this test's runs' groups (another grading may open its own meanwhile)
    code = '''import multiprocessing, time
def hold(_):
    block = bytearray(120 * 2**20)
    for i in range(0, len(block), 4096):
        block[i] = 1
    time.sleep(3)
    return len(block)
if __name__ == "__main__":
    with multiprocessing.get_context("fork").Pool(4) as pool:
        print("held", sum(pool.map(hold, range(4))) // 2**20)
'''
    (tmp_path / "runs").mkdir()
    os.chmod(tmp_path, 0o755)
    os.chmod(tmp_path / "runs", 0o711)
    outcomes = {}
    for number, (name, cap) in enumerate((("capped", 256 * 2**20), ("uncapped", 0))):
        run_dir = tmp_path / "runs" / f"{number:04d}"
        run_dir.mkdir()
        os.chown(run_dir, isolation.uid, isolation.gid)
        (run_dir / "spread.py").write_text(code)
        os.chmod(run_dir / "spread.py", 0o644)
        log = tmp_path / f"{name}.log"
        process = launch([sys.executable, "spread.py"], cwd=run_dir, env=scrubbed_environment(run_dir),
                         limits=Limits(timeout=60, group_memory_bytes=cap), isolation=isolation, log=log)
        group = _GROUPS.get(process.pid)
        folders += group.folders if group is not None else ()
        try:
            outcomes[name] = (process.wait(timeout=30), log.read_text())
        except subprocess.TimeoutExpired:  # a pool whose worker the kernel ended can wait for it forever
            outcomes[name] = ("timeout", log.read_text())
        finally:
            end(process)  # as the grader does: the run's processes and its group go
    assert outcomes["uncapped"][0] == 0 and "held 480" in outcomes["uncapped"][1], outcomes["uncapped"]
    assert "held 480" not in outcomes["capped"][1], outcomes["capped"]
    assert folders and not [folder for folder in folders if folder.exists()], "a run's group outlived it"


def test_an_empty_group_a_killed_grader_left_is_removed_when_the_next_run_opens_one():
    """A grader killed by SIGKILL cannot remove its run's group; the next grading removes such empty groups
    (older than a minute), and never one that holds a process."""
    from evalkit.course.cgroup import open_group

    sandbox_or_skip()
    probe = open_group(2**30, 64)
    if probe is None:
        pytest.skip("this machine does not let the grader make a control group")
    probe.remove()
    parent = probe.folders[0].parent
    left = parent / "evalkit-run-leftover00"
    left.mkdir()
    os.utime(left, (time.time() - 3600, time.time() - 3600))
    group = open_group(2**30, 64)
    try:
        assert not left.exists()
    finally:
        group.remove()
        if left.exists():
            left.rmdir()


def test_the_stage_the_runs_root_was_built_in_is_no_copy_of_the_system_inside_the_run(tmp_path):
    """The run's file system is staged in its own folder; binding that folder copied the stage (the system as it
    stood before credential files were hidden and the checks' stub bound) to ``<run folder>/.root``."""
    isolation = sandbox_or_skip()
    code = '''import os
stage = os.path.join(os.getcwd(), ".root")
points = [line.split()[4] for line in open("/proc/self/mountinfo")]
print("stage entries", sorted(os.listdir(stage)) if os.path.isdir(stage) else "none")
print("stage mounts", [p for p in points if "/.root" in p])
print("etc beside", os.path.exists(os.path.join(stage, "etc", "passwd")))
'''
    log = _run(isolation, code, tmp_path)
    assert "stage entries []" in log or "stage entries none" in log, log
    assert "stage mounts []" in log and "etc beside False" in log, log


@pytest.mark.skipif(__import__("platform").machine() != "x86_64", reason="the probe calls add_key by its x86-64 number")
def test_a_run_can_leave_no_key_in_its_users_keyring_for_the_next_run(tmp_path):
    """The kernel keeps a user's keyrings across processes and namespaces: every run is the same user, so a key
    one run left there would be a channel to the next (and outlive its grading). The run's keyring calls are
    refused (EPERM), and what a run could leave is emptied before the next."""
    isolation = sandbox_or_skip()
    add = '''import ctypes
libc = ctypes.CDLL(None, use_errno=True)
key = libc.syscall(248, b"user", b"evalkit-left-behind", b"from-an-earlier-run", 19, ctypes.c_long(-4))
print("added", key > 0, "errno", ctypes.get_errno())
'''
    search = '''import ctypes
libc = ctypes.CDLL(None, use_errno=True)
found = libc.syscall(250, 10, ctypes.c_long(-4), b"user", b"evalkit-left-behind", 0)  # KEYCTL_SEARCH in @u
print("found", found > 0)
'''
    first = _run(isolation, add, tmp_path / "one")
    assert "added False errno 1" in first, first
    assert "found False" in _run(isolation, search, tmp_path / "two")


@pytest.mark.skipif(__import__("platform").machine() != "x86_64", reason="the probe calls keyctl by its x86-64 number")
def test_a_key_the_grader_made_readable_by_everyone_is_out_of_a_runs_reach(tmp_path):
    """A key's serial number is all a process needs to read it when its owner lets others read it: a run must
    not read one of the grader's by its number, whatever its permissions."""
    import ctypes
    isolation = sandbox_or_skip()
    libc = ctypes.CDLL(None, use_errno=True)
    serial = libc.syscall(248, b"user", b"evalkit-test-open-key", b"open-key-value-123", 18, ctypes.c_long(-4))
    if serial <= 0:
        pytest.skip("this kernel refuses add_key to the grader's user keyring")
    try:
        assert libc.syscall(250, 5, ctypes.c_long(serial), ctypes.c_uint(0x3F3F3F3F)) == 0  # KEYCTL_SETPERM: all
        code = f'''import ctypes
libc = ctypes.CDLL(None, use_errno=True)
buffer = ctypes.create_string_buffer(64)
size = libc.syscall(250, 11, ctypes.c_long({serial}), buffer, 64)  # KEYCTL_READ
print("read", size, buffer.raw[:max(size, 0)], "errno", ctypes.get_errno())
'''
        log = _run(isolation, code, tmp_path)
        assert "open-key-value" not in log and "read -1" in log, log
    finally:
        libc.syscall(250, 21, ctypes.c_long(serial))  # KEYCTL_INVALIDATE


@pytest.mark.skipif(__import__("platform").machine() != "x86_64", reason="the probe calls add_key by its x86-64 number")
def test_a_key_a_run_adds_to_its_users_persistent_keyring_is_gone_for_the_next_run(tmp_path):
    """The persistent keyring outlives every process of a user for days: a channel to the next run, unless
    emptied."""
    isolation = sandbox_or_skip()
    add = '''import ctypes
libc = ctypes.CDLL(None, use_errno=True)
ring = libc.syscall(250, 22, ctypes.c_long(-1), ctypes.c_long(-5))  # KEYCTL_GET_PERSISTENT into @us
key = libc.syscall(248, b"user", b"evalkit-persistent", b"from-an-earlier-run", 19, ctypes.c_long(ring)) if ring > 0 else -1
print("added", key > 0)
'''
    search = '''import ctypes
libc = ctypes.CDLL(None, use_errno=True)
ring = libc.syscall(250, 22, ctypes.c_long(-1), ctypes.c_long(-5))
found = libc.syscall(250, 10, ctypes.c_long(ring), b"user", b"evalkit-persistent", 0) if ring > 0 else -1
print("found", found > 0)
'''
    first = _run(isolation, add, tmp_path / "one")
    assert "added False" in first or "found False" in _run(isolation, search, tmp_path / "two"), first


@pytest.mark.skipif(__import__("platform").machine() != "x86_64", reason="the probe calls add_key by its x86-64 number")
def test_a_run_holds_none_of_the_graders_session_keyring(tmp_path):
    """The session keyring is inherited through fork, exec and setuid, and its holder may read and write its keys
    whatever its user: the grader's (a login session's tokens) must be out of every run's reach."""
    import ctypes
    isolation = sandbox_or_skip()
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.syscall(250, 1, b"evalkit-test-grader-session") <= 0:  # KEYCTL_JOIN_SESSION_KEYRING, as a login does
        pytest.skip("this kernel refuses a session keyring")
    if libc.syscall(248, b"user", b"grader-secret", b"grader-secret-value", 19, ctypes.c_long(-3)) <= 0:
        pytest.skip("this kernel refuses add_key to a session keyring")
    code = '''import ctypes
libc = ctypes.CDLL(None, use_errno=True)
found = libc.syscall(250, 10, ctypes.c_long(-3), b"user", b"grader-secret", 0)  # KEYCTL_SEARCH in @s
added = libc.syscall(248, b"user", b"left-by-a-run", b"x", 1, ctypes.c_long(-3))
print("found", found > 0, "added", added > 0)
'''
    log = _run(isolation, code, tmp_path)
    assert "found False" in log, log
    assert libc.syscall(250, 10, ctypes.c_long(-3), b"user", b"left-by-a-run", 0) < 0  # nothing reached ours


def test_a_run_sees_the_kits_default_cache_when_the_grader_names_none(tmp_path, monkeypatch):
    """With no ``EVALKIT_CACHE_DIR`` in the grader's environment, a run sees the kit's default cache folder
    (``~/.cache/evalkit``, where ``make models`` converted the models) read-only: a run that could not see it
    converted the model again in its own folder, past its file-size limit, and every honest notebook failed. Its
    call cache is read from the shared one, and what the run adds is kept in memory."""
    isolation = sandbox_or_skip()
    home = tmp_path / "home"
    converted = home / ".cache" / "evalkit" / "models" / "encoder"
    converted.mkdir(parents=True)
    (converted / "weights.bin").write_text("converted weights")
    from evalkit.models.cache import CallCache

    warm = CallCache(home / ".cache" / "evalkit" / "calls.sqlite")
    warm.put_many([("warm", "fake", "generate", "cached reply")])
    warm.close()  # as a finished book run leaves it: its log checkpointed into the file
    for store in (home / ".cache" / "evalkit").glob("calls.sqlite*"):
        os.chmod(store, 0o644)
    for folder in (tmp_path, home, home / ".cache", home / ".cache" / "evalkit", converted.parent, converted):
        os.chmod(folder, 0o755)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("EVALKIT_CACHE_DIR", raising=False)
    code = '''import os, pathlib
cache = pathlib.Path(os.environ["EVALKIT_CACHE_DIR"])
print("read", (cache / "models" / "encoder" / "weights.bin").read_text())
try:
    (cache / "models" / "new").write_text("x")
except OSError as error:
    print("read-only", error.errno)
from evalkit.models.cache import CallCache
calls = CallCache()  # the call cache read from the shared one, its new entries kept in memory
calls.put_many([("new", "fake", "generate", "new reply")])
print("calls", sorted(calls.get_many(["warm", "new"]).items()))
'''
    said = _run(isolation, code, tmp_path / "grading", env=dict(os.environ))
    assert "read converted weights" in said and "read-only" in said
    assert "calls [('new', 'new reply'), ('warm', 'cached reply')]" in said
    assert scrubbed_environment(tmp_path, base={})["EVALKIT_CACHE_DIR"] == str((home / ".cache" / "evalkit").resolve())
