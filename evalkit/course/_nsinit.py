"""The first process of a submission's PID and mount namespaces (run by ``unshare`` as the namespaces' root).

Standard library only, run as a script: ``python -I -S _nsinit.py SPEC_JSON``. It puts a fresh tmpfs of the
run's own over ``/tmp``, ``/var/tmp`` and ``/dev/shm`` (``tmp``: each with the folders of it the run needs,
bound back in; what the run writes there is gone when the namespace ends), makes each folder of
``reveal`` (the interpreter, when it lies in a folder the run's user cannot enter, such as root's home) the
only thing visible in that folder, mounts an empty tmpfs over each path of ``hide`` (the class folder, the
output folder, the grader's copies), binds each ``bind`` pair read-only (the checks package over a stub),
brings the loopback of a new network namespace up, then forks the command, dropped to ``uid``/``gid`` when
given, and reaps every process until the command ends. When it exits, the kernel ends every process left in the
namespace: a ``setsid`` or double-forked child does not outlive its submission.
"""
import json
import os
import subprocess
import sys


def private_tmp(spec: dict) -> None:
    """Each shared temporary folder (``/tmp``, ``/var/tmp``, ``/dev/shm``) replaced by a fresh tmpfs of
    ``tmp_bytes`` holding only the folders of it the run needs (its own folder, the stub, the interpreter when
    they lie there), each bound at its own path: a fresh tmpfs is mounted on a stage inside the run's folder,
    the kept folders are bound into it, and it is moved over the shared folder. Done before any other mount,
    so a kept folder is bound without submounts and the later mounts apply to the new tree."""
    for shared, kept in spec.get("tmp", []):
        stage = os.path.join(spec["cwd"], ".private-tmp")
        os.mkdir(stage, 0o700)
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={int(spec['tmp_bytes'])},mode=1777", "tmpfs", stage],
                       check=True)
        for path in kept:
            inside = os.path.join(stage, os.path.relpath(path, shared))
            os.makedirs(inside, mode=0o711, exist_ok=True)
            subprocess.run(["mount", "--bind", path, inside], check=True)
        subprocess.run(["mount", "--move", stage, shared], check=True)
        os.rmdir(stage)  # the stage's own folder, empty again once its tmpfs moved


def main() -> int:
    spec = json.loads(sys.argv[1])
    if spec["network"]:
        subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    private_tmp(spec)
    for closed, inners in spec["reveal"]:
        # each ``inner`` (the interpreter, the kit) lies under ``closed``, a folder the run's user cannot
        # enter: keep them aside, put an empty open folder over ``closed``, and bring them back into it.
        for inner, stage in inners:
            subprocess.run(["mount", "--bind", inner, stage], check=True)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,mode=0755", "tmpfs", closed], check=True)
        for inner, stage in inners:
            os.makedirs(inner, mode=0o755, exist_ok=True)
            subprocess.run(["mount", "--move", stage, inner], check=True)
    for path in spec["hide"]:
        if os.path.isdir(path):
            subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", path], check=True)
    for source, target in spec["bind"]:
        subprocess.run(["mount", "--bind", source, target], check=True)
        subprocess.run(["mount", "-o", "remount,bind,ro", target], check=True)
    child = os.fork()
    if child == 0:
        try:
            if spec["uid"] is not None:
                os.setgroups([])
                os.setgid(spec["gid"])
                os.setuid(spec["uid"])
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
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main())
