"""The first process of a submission's namespaces (run by ``unshare`` as the namespaces' root).

Standard library only, run as a script: ``python -I -S _nsinit.py SPEC_FILE`` (a root-only JSON file, read and
removed at once, so no process sees the grading's folders on a command line). It builds the only file system
the run sees, on a fresh tmpfs, and changes root into it:

- the system's programs and libraries (``/usr``, ``/bin``, ``/lib``..., ``/etc``), read-only;
- a fresh ``/proc`` of the run's PID namespace, ``/dev`` with a fresh ``/dev/shm``, ``/sys`` read-only;
- fresh tmpfs folders at ``/tmp``, ``/var/tmp`` and ``/run`` (``tmp_bytes`` each; gone when the run ends);
- each path of ``see`` at its own path: the run's own folder writable, everything else (the interpreter, the
  kit's package, the data and cache folders) read-only, every mount under it included;
- an empty read-only file over each file of ``hide_files`` (credential files inside a visible cache folder);
- an empty tmpfs over each path of ``hide`` that lies inside one of those, and each ``bind`` pair bound
  read-only (the checks package over a stub).

Nothing else exists for the run: not the project around the kit's package (its notebooks, built pages,
history), not the class folder, not other users' homes, not the machine's lock files. It then brings the
loopback of a new network namespace up, forks the command, dropped to ``uid``/``gid``, and reaps every
process until the command ends. When it exits, the kernel ends every process left in the namespace: a
``setsid`` or double-forked child does not outlive its submission.
"""
import ctypes
import json
import os
import platform
import subprocess
import sys

#: The system folders every program needs; a link among them (``/bin`` -> ``usr/bin``) is copied as a link.
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")


def mount(*arguments: str) -> None:
    subprocess.run(["mount", *arguments], check=True)


def mounts_under(target: str) -> list[str]:
    """The mount points strictly below ``target`` (from ``/proc/self/mountinfo``), shallowest first."""
    found = []
    with open("/proc/self/mountinfo") as table:
        for line in table:
            point = line.split()[4].encode().decode("unicode_escape")  # octal escapes: \040 is a space
            if point.startswith(target.rstrip("/") + "/"):
                found.append(point)
    return sorted(set(found), key=len)


def bind(source: str, target: str, *, writable: bool = False) -> None:
    """``source`` (a folder or a file, with what is mounted under it) shown at ``target``; read-only, every
    mount under it included, unless ``writable``."""
    if os.path.isdir(source):
        os.makedirs(target, mode=0o755, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
        if not os.path.exists(target):
            open(target, "w").close()
    mount("--rbind", source, target)
    if not writable:
        for point in [target, *mounts_under(target)]:
            subprocess.run(["mount", "-o", "remount,bind,ro", point], check=False, stderr=subprocess.DEVNULL)


def build_root(spec: dict) -> str:
    """The run's file system (see the module's text), built under a stage in the run's folder."""
    root = os.path.join(spec["cwd"], ".root")
    os.mkdir(root, 0o755)
    mount("-t", "tmpfs", "-o", "size=1m,mode=0755", "tmpfs", root)
    for name in SYSTEM:
        if os.path.islink(name):
            os.symlink(os.readlink(name), root + name)
        elif os.path.isdir(name):
            bind(name, root + name)
    os.mkdir(root + "/proc", 0o555)
    mount("-t", "proc", "proc", root + "/proc")
    bind("/sys", root + "/sys")
    bind("/dev", root + "/dev", writable=True)
    size = f"size={int(spec['tmp_bytes'])}"
    mount("-t", "tmpfs", "-o", f"{size},mode=1777", "tmpfs", root + "/dev/shm")
    for folder in ("/tmp", "/var/tmp", "/run"):
        os.makedirs(root + folder, mode=0o755, exist_ok=True)
        mount("-t", "tmpfs", "-o", f"{size},mode=1777", "tmpfs", root + folder)
    covered = [name for name in SYSTEM if os.path.isdir(name) and not os.path.islink(name)]
    for path, writable in sorted(spec["see"], key=lambda item: len(item[0])):
        inside_system = any(path == name or path.startswith(name + "/") for name in covered)
        if os.path.exists(path) and not (inside_system and not writable):
            bind(path, root + path, writable=writable)
    for path in spec["hide"]:
        if os.path.isdir(root + path):
            mount("-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", root + path)
    empty = root + "/.evalkit-empty"  # an empty file: a marker a kit checks with is_file() still is one
    with open(empty, "w"):
        pass
    os.chmod(empty, 0o444)
    for path in spec.get("hide_files", []):
        if os.path.isfile(root + path):
            mount("--bind", empty, root + path)
            subprocess.run(["mount", "-o", "remount,bind,ro", root + path], check=False, stderr=subprocess.DEVNULL)
    os.unlink(empty)  # the binds keep it; the run's root shows no such name
    for source, target in spec["bind"]:
        if os.path.exists(root + target):
            bind(source, root + target)
    # The stage lies in the run's folder, so binding that folder (or a visible folder above it) copied the stage,
    # as it stood then, into the new root at root + root: a view of the system taken before the hiding and the
    # checks' stub. Detach every such copy, so the run's ".root" is an empty folder.
    copy = root + root
    if copy in mounts_under(root):
        subprocess.run(["umount", "-l", copy], check=True)  # lazily: its own mounts go with it
    return root


#: The ``keyctl`` system call's number on the machines the kit runs on (other machines: not cleared).
_KEYCTL = {"x86_64": 250, "aarch64": 219}.get(platform.machine())
_KEYCTL_CLEAR, _KEYCTL_GET_PERSISTENT, _USER_KEYRING, _USER_SESSION_KEYRING = 7, 22, -4, -5
_KEYCTL_JOIN_SESSION_KEYRING = 1


def leave_session_keyring() -> None:
    """Give the calling process a new, empty session keyring of its own. The session keyring is inherited through
    fork, exec and setuid, and whoever holds it may search, read and write its keys, whatever its user: a run that
    kept the grader's (a login session's, a tool's tokens) could read it, write into it, and so reach the next run."""
    if _KEYCTL is None:
        return
    ctypes.CDLL(None, use_errno=True).syscall(_KEYCTL, _KEYCTL_JOIN_SESSION_KEYRING, None)


def clear_user_keyrings() -> None:
    """Empty the calling user's keyrings that outlive a process: the per-user ones and the persistent one (where
    the kernel has it). The kernel keeps them for the user, not for a process or a namespace, so a key a run adds
    there would outlive it and be readable by the next run as the same user."""
    if _KEYCTL is None:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    # the persistent keyring's id (linked into the user keyring, which is emptied next); -1 where there is none
    persistent = libc.syscall(_KEYCTL, _KEYCTL_GET_PERSISTENT, ctypes.c_long(-1), ctypes.c_long(_USER_KEYRING))
    for keyring in ((persistent,) if persistent > 0 else ()) + (_USER_KEYRING, _USER_SESSION_KEYRING):
        libc.syscall(_KEYCTL, _KEYCTL_CLEAR, ctypes.c_long(keyring))


# Seccomp: the kernel keyring's system calls (add_key, request_key, keyctl) fail with EPERM for the run, so no key
# of the machine is reachable by its serial number, whatever permissions its owner gave it. Per architecture: its
# audit id and the three calls' numbers; on x86_64 the x32 calls (numbers from 2**30) are refused whole.
_KEY_CALLS = {"x86_64": (0xC000003E, (248, 249, 250)), "aarch64": (0xC00000B7, (217, 218, 219))}.get(platform.machine())


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def deny_keyring_calls() -> bool:
    """Install a seccomp filter on the calling process (and so on all it starts) under which ``add_key``,
    ``request_key`` and ``keyctl`` fail with EPERM; False where the architecture is not known (nothing installed).
    It sets no-new-privileges, which a run as an unprivileged user needs no more than it had."""
    if _KEY_CALLS is None:
        return False
    arch, calls = _KEY_CALLS
    load, jump_eq, jump_ge, ret = 0x20, 0x15, 0x35, 0x06  # BPF_LD|W|ABS, BPF_JMP|JEQ|K, BPF_JMP|JGE|K, BPF_RET|K
    allow, refuse = 0x7FFF0000, 0x00050000 | 1  # SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO | EPERM
    program = [(load, 0, 0, 4), (jump_eq, 1, 0, arch), (ret, 0, 0, allow),  # another ABI (i386 on x86_64): as is
               (load, 0, 0, 0), (jump_ge, len(calls) + 1, 0, 0x40000000)]
    program += [(jump_eq, len(calls) - index, 0, number) for index, number in enumerate(calls)]
    program += [(ret, 0, 0, allow), (ret, 0, 0, refuse)]
    filters = (_SockFilter * len(program))(*[_SockFilter(*instruction) for instruction in program])
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    fprog = _SockFprog(len(program), filters)
    if libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")
    return True


def as_run_user(spec: dict) -> None:
    """Become the run's user (``uid``/``gid``; root keeps root when there is none)."""
    if spec["uid"] is not None:
        os.setgroups([])
        os.setgid(spec["gid"])
        os.setuid(spec["uid"])


def main() -> int:
    leave_session_keyring()  # before anything else: this process, and so every run, holds none of the grader's
    with open(sys.argv[1]) as handle:
        spec = json.load(handle)
    os.unlink(sys.argv[1])
    if spec["network"]:
        subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    os.chroot(build_root(spec))
    os.chdir("/")
    child = os.fork()
    if child == 0:
        try:
            as_run_user(spec)
            leave_session_keyring()  # one of the run's own user
            clear_user_keyrings()  # what an earlier run as this user left
            deny_keyring_calls()  # and no other key, by its serial number
            os.umask(0o077)
            os.chdir(spec["cwd"])
            os.execve(spec["argv"][0], spec["argv"], spec["env"])
        finally:
            os._exit(126)
    code = 125
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            break
        if pid == child:
            code = os.waitstatus_to_exitcode(status)
            break
    if spec["uid"] is not None:  # and what this one left, so no key outlives the run
        cleaner = os.fork()
        if cleaner == 0:
            try:
                as_run_user(spec)
                clear_user_keyrings()
            finally:
                os._exit(0)
        os.waitpid(cleaner, 0)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main())
