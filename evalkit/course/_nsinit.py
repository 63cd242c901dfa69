"""The first process of a submission's PID and mount namespaces (run by ``unshare`` as the namespaces' root).

Standard library only, run as a script: ``python -I -S _nsinit.py SPEC_JSON``. It makes each folder of
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


def main() -> int:
    spec = json.loads(sys.argv[1])
    if spec["network"]:
        subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
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
