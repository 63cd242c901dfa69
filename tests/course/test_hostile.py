"""The grader against hostile notebooks and a careless command line: one class of attacks graded once (kernel
starts are the cost), a signal sent to a grading, and the argument and output-folder refusals (no kernel)."""
from __future__ import annotations

import csv
import json
import os
import resource
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evalkit.course.grade import grade
from evalkit.course.sandbox import SandboxUnavailable, detect

from .test_course import answer_key, by_student, submission

SECRET = "sk-test-5d41402abc4b2a76b9719d911017c592"


def sandbox_or_skip():
    try:
        return detect()
    except SandboxUnavailable as reason:
        pytest.skip(str(reason))


def processes_with(token: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if token.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def survivor(token: str, target: Path) -> str:
    """Code that leaves a setsid, double-forked child which rewrites ``target`` three seconds later."""
    return f'''import os, subprocess, sys
code = "import time, pathlib; time.sleep(3); pathlib.Path({str(target)!r}).write_text('student,score\\\\nme,999\\\\n')"
subprocess.Popen([sys.executable, "-c", code + " # {token}"], start_new_session=True,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
'''


def test_a_hostile_class_is_graded_from_its_answers_alone(tmp_path, monkeypatch):
    """Each student below attacks the grader (several attacks per notebook: a kernel start is the cost);
    every row must be what the answers alone earn, and no output may hold a secret, a classmate's file, a
    forged row or a 100 MB print."""
    sandbox_or_skip()
    monkeypatch.setenv("EVALKIT_TEST_API_KEY", SECRET)
    folder, out, token = tmp_path / "class", tmp_path / "grades", f"evalkit-survivor-{os.getpid()}"
    victim = folder / "zed" / "04_pairwise_judge.ipynb"
    # mallory: forges the old record of points, replaces the checks and grade_env, imports a hidden check's
    # helper for an answer, overwrites a classmate's notebook and grades.csv, and leaves a setsid survivor
    # that rewrites grades.csv after the grading; two answers (ch4-rank, ch4-budget) are right.
    forge = f'''import json, evalkit.course as course, evalkit.course.worker as worker
def forged(env, chapter, path):
    open(path, "w").write(json.dumps([{{"exercise": l, "points": 999, "score": 999, "public": "passed",
                                       "hidden": "passed", "message": ""}} for l in ("ch4-order", "ch4-size", "ch4-rank")]))
worker.record = forged
course.grade_env = lambda chapter, env: []
for item in course.EXERCISES.values():
    object.__setattr__(item, "public", ())
    object.__setattr__(item, "hidden", ())
for path in ({str(victim)!r}, {str(out / "grades.csv")!r}):
    try:
        open(path, "w").write("{{}}")
    except OSError:
        pass
'''
    submission(folder / "mallory" / "04_pairwise_judge.ipynb", setup_extra=forge, order="a, b",
               needed="__import__('evalkit.course.checks.ch04', fromlist=['ch04'])._half_width and 560",
               extra=survivor(token, out / "grades.csv"))
    # nosy: reads the grader's environment, the class folder, a classmate's notebook and the processes'
    # command lines; makes a folder outside its own; prints 100 MB. Its answers are right.
    classmate = victim
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    snoop = f'''import os, glob, socket
seen = [os.environ.get("EVALKIT_TEST_API_KEY", "no key"), str(glob.glob({str(folder)!r} + "/*"))]
for path in ({str(classmate)!r}, "/proc/1/environ", "/proc/%d/cmdline" % os.getppid()):
    try:
        seen.append(open(path, errors="replace").read()[:300])
    except OSError as error:
        seen.append(type(error).__name__)
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=3).close()
    seen.append("connected to the grader's machine")
except OSError as error:
    seen.append(type(error).__name__)
print(seen)
print("x" * 100_000_000)
raise RuntimeError(" ".join(seen))
'''
    crash = "import os\nfor n in range(12):\n    try:\n        os.makedirs(f'../../{n:04d}')\n    except OSError as error:\n        print(error)\n"
    submission(folder / "nosy" / "04_pairwise_judge.ipynb", setup_extra=crash, extra=snoop)
    # killer: SIGKILLs the grader (its worker's parent, as it sees it) and the first process, then its worker
    kill = '''import os
grader = int(open("/proc/%d/stat" % os.getppid()).read().rsplit(")", 1)[1].split()[1])
for pid in (grader, 1, os.getppid()):
    try:
        os.kill(pid, 9)
    except OSError as error:
        print(pid, error)
'''
    submission(folder / "killer" / "04_pairwise_judge.ipynb", extra=kill)
    submission(folder / "looper" / "04_pairwise_judge.ipynb", extra="while True:\n    pass")
    submission(victim)
    victim_bytes = victim.read_bytes()
    (folder / '=HYPERLINK("evil.example", "x")').mkdir()
    (folder / '=HYPERLINK("evil.example", "x")' / "answers.txt").write_text("not a notebook")
    secret_file = tmp_path / "teacher-secret.txt"
    secret_file.write_text(SECRET)
    (folder / "ann").mkdir()
    (folder / "ann" / "04_pairwise_judge.ipynb").symlink_to(answer_key(tmp_path) / "04_pairwise_judge.ipynb")
    (folder / "leaker").mkdir()
    (folder / "leaker" / "04_pairwise_judge.ipynb").symlink_to(secret_file)
    (folder / "ghost").symlink_to(tmp_path / "key")
    run = grade(folder, out, timeout=30, key=tmp_path / "key")
    table = by_student(run.rows)
    assert set(table) == {"mallory", "nosy", "killer", "looper", "zed", '=HYPERLINK("evil.example", "x")', "ann",
                          "leaker", "ghost"}
    score = {student: sum(row.score for row in rows.values()) for student, rows in table.items()}
    assert all(row.points == 1 for rows in table.values() for row in rows.values() if row.exercise)

    assert score["zed"] == 4 and table["zed"]["ch4-rank"].status == "graded"
    assert victim.read_bytes() == victim_bytes  # the class folder was out of every run's reach
    assert score["mallory"] == 2 and table["mallory"]["ch4-rank"].score == 1  # what its answers earn
    assert "is not defined" in table["mallory"]["ch4-size"].reason  # the hidden check's helper is not there
    assert score["nosy"] == 4 and table["nosy"]["ch4-size"].status == "cell error"
    assert "cut" in table["nosy"]["ch4-size"].reason  # the 100 MB print
    assert score["killer"] == 0 and {row.status for row in table["killer"].values()} == {"crashed"}
    assert score["looper"] == 0 and {row.status for row in table["looper"].values()} == {"timeout"}
    for student in ("ann", "leaker", "ghost"):
        (row,) = table[student].values()
        assert row.status == "refused: symlink" and row.score == 0, student
    assert run.isolation.startswith("namespace")

    time.sleep(4)  # the survivor's child would have rewritten grades.csv by now
    assert not processes_with(token)
    with run.csv.open(encoding="utf-8") as handle:
        written = list(csv.DictReader(handle))
    assert len(written) == len(run.rows) and {r["score"] for r in written} == {"0.0", "1.0"}
    assert "'" + '=HYPERLINK("evil.example", "x")' in {r["student"] for r in written}
    for path in [path for path in out.rglob("*") if path.is_file()]:
        data = path.read_bytes()
        assert len(data) < 6 * 2**20, path
        assert SECRET.encode() not in data, path
    snooped = " ".join(row.reason for row in table["nosy"].values())
    assert "no key" in snooped and "[]" in snooped and "04_pairwise" not in snooped
    if "network" in run.isolation:
        assert "connected" not in snooped
    listener.close()


def test_sigterm_ends_the_grading_and_everything_it_started(tmp_path):
    sandbox_or_skip()
    folder, out, token = tmp_path / "class", tmp_path / "grades", f"evalkit-sigterm-{os.getpid()}"
    waiter = f'''import subprocess, sys, time
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120) # {token}"], start_new_session=True)
time.sleep(120)'''
    submission(folder / "ann" / "04_pairwise_judge.ipynb", extra=waiter)
    grader = subprocess.Popen([sys.executable, "-m", "evalkit.course", "grade", str(folder), "--out", str(out),
                               "--key", str(answer_key(tmp_path)), "--timeout", "100"],
                              stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 90
    while not processes_with(token) and time.monotonic() < deadline and grader.poll() is None:
        time.sleep(0.5)
    assert processes_with(token), grader.stderr.read() if grader.poll() is not None else "not started"
    grader.send_signal(signal.SIGTERM)
    assert grader.wait(timeout=30) == 128 + signal.SIGTERM
    assert "interrupted by SIGTERM" in grader.stderr.read()
    time.sleep(1)
    assert not processes_with(token)
    assert not (out / "grades.csv").exists()


def test_bad_arguments_and_output_folders_are_refused_with_a_message(tmp_path, capsys):
    """No kernel: ``--timeout`` nan, inf, 0 or negative; ``--out`` a file; an output folder holding other
    files, a previous grading (kept unless --replace) or a planted link (replaced, never followed)."""
    from evalkit.cli.commands import main

    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "ann.txt").write_text("not a notebook")
    for bad in ("nan", "inf", "0", "-5"):
        with pytest.raises(SystemExit) as stopped:
            main(["course", "grade", str(folder), "--timeout", bad])
        assert stopped.value.code == 2
        assert "--timeout must be a finite number of seconds above 0" in capsys.readouterr().err
    with pytest.raises(ValueError, match="finite number"):
        grade(folder, tmp_path / "x", timeout=float("nan"), trusted=True)
    a_file = tmp_path / "a-file"
    a_file.write_text("keep")
    assert main(["course", "grade", str(folder), "--out", str(a_file), "--trusted"]) == 2
    assert f"--out {a_file}: {a_file} is a file, not a folder" in capsys.readouterr().err
    assert main(["course", "release", "--out", str(a_file), "--only", "04"]) == 2
    assert f"--out {a_file}: {a_file} is a file, not a folder" in capsys.readouterr().err
    assert a_file.read_text() == "keep"

    out = tmp_path / "grades"
    (out / "work").mkdir(parents=True)
    (out / "work" / "notes.txt").write_text("the teacher's notes")
    assert main(["course", "grade", str(folder), "--out", str(out), "--trusted"]) == 2
    assert "pass --replace" in capsys.readouterr().err and (out / "work" / "notes.txt").is_file()
    # --replace removes a previous grading only: a teacher's own "work" folder, a "grades.csv" that is a folder or
    # a gradebook of that name is no grading's, and stays; an interrupted grading (work/ alone) is one
    assert main(["course", "grade", str(folder), "--out", str(out), "--trusted", "--replace"]) == 2
    assert "work/notes.txt is not what a grading writes" in capsys.readouterr().err
    (out / "work" / "notes.txt").unlink()
    (out / "work" / "0001").mkdir()
    (out / "work" / "0001" / "chapter1.tex").write_text("my only copy")
    assert main(["course", "grade", str(folder), "--out", str(out), "--trusted", "--replace"]) == 2
    assert "work/0001/chapter1.tex is not what" in capsys.readouterr().err
    (out / "work" / "0001" / "chapter1.tex").unlink()
    (out / "grades.csv").mkdir()
    (out / "grades.csv" / "notes.txt").write_text("the teacher's notes")
    assert main(["course", "grade", str(folder), "--out", str(out), "--trusted", "--replace"]) == 2
    assert "grades.csv is not what a grading writes" in capsys.readouterr().err
    assert (out / "grades.csv" / "notes.txt").read_text() == "the teacher's notes"
    (out / "grades.csv" / "notes.txt").unlink()
    (out / "grades.csv").rmdir()
    (out / "work" / "0001" / "executed.ipynb").write_text("{}")
    (out / "grades.csv").write_text("student,points\nann,3\n")  # a teacher's own gradebook, no grading's
    assert main(["course", "grade", str(folder), "--out", str(out), "--trusted", "--replace"]) == 2
    assert "grades.csv is not what a grading writes" in capsys.readouterr().err
    assert (out / "grades.csv").read_text() == "student,points\nann,3\n"
    (out / "grades.csv").unlink()
    (out / "grades.html").write_text("<p>my page</p>")  # a page of that name, with no grading's table beside it
    assert main(["course", "grade", str(folder), "--out", str(out), "--trusted", "--replace"]) == 2
    assert "grades.html is not what a grading writes" in capsys.readouterr().err
    (out / "grades.html").unlink()
    (out / "mine.txt").write_text("other")
    assert main(["course", "grade", str(folder), "--out", str(out), "--trusted", "--replace"]) == 2
    assert "holds other files (mine.txt)" in capsys.readouterr().err
    (out / "mine.txt").unlink()
    assert main(["course", "grade", str(folder), "--out", str(out), "--trusted", "--replace"]) == 0  # interrupted
    assert not (out / "work" / "0001").exists() and (out / "grades.csv").is_file()
    (out / "work" / "0001").mkdir(parents=True, exist_ok=True)
    (out / "work" / "0001" / "executed.ipynb").write_text("{}")  # a grading's, beside its tables
    assert main(["course", "grade", str(folder), "--out", str(out), "--trusted", "--replace"]) == 0
    assert not (out / "work" / "0001").exists() and (out / "grades.csv").is_file()

    outside = tmp_path / "outside.html"
    outside.write_text("untouched")
    planted = tmp_path / "planted"
    planted.mkdir()
    (planted / "grades.html").symlink_to(outside)
    assert main(["course", "grade", str(folder), "--out", str(planted), "--trusted"]) == 2
    assert "previous grading" in capsys.readouterr().err
    assert main(["course", "grade", str(folder), "--out", str(planted), "--trusted", "--replace"]) == 0
    assert outside.read_text() == "untouched" and not (planted / "grades.html").is_symlink()
    assert "ann.txt" in (planted / "grades.html").read_text()
    assert main(["course", "grade", str(folder), "--out", str(folder / "grades"), "--trusted"]) == 2
    assert "inside the folder of submissions" in capsys.readouterr().err and not (folder / "grades").exists()
    link = tmp_path / "link-out"
    link.symlink_to(planted)
    assert main(["course", "grade", str(folder), "--out", str(link), "--trusted", "--replace"]) == 2
    assert "symbolic link" in capsys.readouterr().err


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_sigint_and_sigterm_alike_kill_the_running_group_and_stop_the_grading(signum):
    from evalkit.course.grade import Interrupted, _on_signals

    child = subprocess.Popen(["sleep", "60"], start_new_session=True)
    restore = _on_signals([(child, [])])
    try:
        with pytest.raises(Interrupted, match=signal.Signals(signum).name):
            os.kill(os.getpid(), signum)
            time.sleep(5)
    finally:
        restore()
    assert child.poll() == -signal.SIGKILL
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_class_folder_that_holds_what_every_run_needs_is_refused(tmp_path):
    sandbox_or_skip()
    with pytest.raises(ValueError, match="which every run needs"):
        grade(Path(sys.prefix).parent, tmp_path / "grades", key=tmp_path)
    assert not (tmp_path / "grades").exists()


def test_answers_are_read_as_plain_data_within_limits(tmp_path):
    import numpy as np
    import pandas as pd

    from evalkit.course.answers import MAX_ANSWER_BYTES, Unreadable, dump, load

    namespace = {"p": np.array([0.25, 0.5]), "gaps": pd.Series({("main", "content"): 0.1}), "f": len,
                 "later": ..., "n": np.int64(7)}
    dump(namespace, ["p", "gaps", "f", "later", "n", "undefined"], str(tmp_path / "answers.json"))
    answers = load(tmp_path / "answers.json")
    assert answers["p"] == [0.25, 0.5] and answers["gaps"][("main", "content")] == 0.1 and answers["n"] == 7
    assert repr(answers["f"]) == "<builtin_function_or_method>" and answers["later"] is Ellipsis
    assert "undefined" not in answers
    cases = {"deep": '{"x": ' + '{"list": [' * 3000 + "]}" * 3000 + "}",
             "tagged": '{"x": {"pickle": "gASVAAAAAAAAAAA="}}', "shallow": '{"x": 1}',
             "big": '{"x": {"str": "' + "y" * (MAX_ANSWER_BYTES + 10) + '"}}'}
    for name, text in cases.items():
        (tmp_path / name).write_text(text)
        with pytest.raises(Unreadable):
            load(tmp_path / name)
    (tmp_path / "link").symlink_to(tmp_path / "answers.json")
    with pytest.raises(Unreadable, match="not a plain file"):
        load(tmp_path / "link")


def test_a_folder_nested_past_pythons_recursion_limit_is_removed(tmp_path):
    """A notebook that left a 1,200-deep folder tree in its scratch folder ended the whole grading
    (shutil.rmtree's RecursionError); the grader removes it all the same."""
    from evalkit.course.submission import remove_tree

    root = tmp_path / "scratch"
    deep = str(root)
    os.mkdir(deep)
    for _ in range(1200):  # one level at a time: os.makedirs itself recurses per level
        deep += "/d"
        os.mkdir(deep)
    remove_tree(root)
    assert not root.exists()


def test_deep_class_folders_and_undecodable_names_get_rows_not_a_crash(tmp_path):
    from evalkit.course.intake import intake

    folder, copies = tmp_path / "class", tmp_path / "copies"
    deep = folder / "dora"
    for _ in range(30):
        deep = deep / "d"
    deep.mkdir(parents=True)
    (deep / "04_pairwise_judge.ipynb").write_text("{}")
    (folder / "zed").mkdir()
    (folder / "zed" / os.fsdecode(b"04\xff.ipynb")).write_text("{}")
    copies.mkdir()
    entries = {entry.student: entry for entry in intake(folder, copies)}
    assert entries["dora"].refused == "refused: too deep"
    assert entries["zed"].submission == "zed/04\\xff.ipynb" and entries["zed"].submission.encode("utf-8")


def test_without_root_no_sandbox_is_offered(monkeypatch):
    """In a user namespace the notebook is root of its namespace and could unmount what hides the class and the
    key: the grader refuses untrusted grading there."""
    from evalkit.course import sandbox

    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 1000)
    monkeypatch.setattr(sandbox, "_DETECTED", {})
    with pytest.raises(sandbox.SandboxUnavailable, match="--trusted"):
        sandbox.detect()
    assert sandbox.detect(trusted=True).name == "process group only (trusted)"


def test_a_sandbox_that_cannot_import_the_kit_is_refused_with_that_reason(monkeypatch):
    """An editable install whose source folder the sandbox's user cannot read: the refusal blamed unshare, which
    worked. It names the run's own error and what to do."""
    from evalkit.course import sandbox

    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 0)
    monkeypatch.setattr(sandbox.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(sandbox, "_runs", lambda command: True)
    monkeypatch.setattr(sandbox, "_groups_work", lambda: False)
    monkeypatch.setattr(sandbox, "_start_failure", lambda isolation: "ModuleNotFoundError: No module named 'evalkit'")
    monkeypatch.setattr(sandbox, "_DETECTED", {})
    with pytest.raises(sandbox.SandboxUnavailable) as refused:
        sandbox.detect()
    said = str(refused.value)
    assert "could not import the kit (ModuleNotFoundError: No module named 'evalkit')" in said and "unshare" not in said
    monkeypatch.setattr(sandbox, "_runs", lambda command: False)
    monkeypatch.setattr(sandbox, "_DETECTED", {})
    with pytest.raises(sandbox.SandboxUnavailable, match="unshare could not make PID and mount namespaces"):
        sandbox.detect()


# --- the probe's findings: a YAML alias bomb, ambiguous students, the key's time, the key's sizes, /tmp ------

def alias_bomb() -> str:
    """A MyST chapter whose front matter is a "billion laughs": nine levels of ten aliases (10**9 strings)."""
    lines = ["a: &a [" + ", ".join(['"lol"'] * 10) + "]"]
    for before, name in zip("abcdefgh", "bcdefghi"):
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{before}"] * 10) + "]")
    # one flow mapping: no line of it reads as a setting naming an anchor, so only the child's limits stop it
    return ("---\n{" + ", ".join(lines) + "}\n---\n\n# 4. PairEval\n\n```{code-cell} ipython3\n"
            "from evalkit import course\ncourse.check(\"ch4-size\", pairs_needed=560)\n```\n")


def test_a_yaml_alias_bomb_is_parsed_in_a_limited_child_and_gets_a_row(tmp_path):
    from evalkit.course.worker import NotASubmission, identify, read_submission

    bomb = tmp_path / "class" / "bob" / "04_pairwise_judge.md"
    bomb.parent.mkdir(parents=True)
    bomb.write_text(alias_bomb())
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.monotonic()
    with pytest.raises(NotASubmission, match="limits for reading a file"):
        read_submission(bomb, seconds=60, memory_bytes=512 * 2**20)
    assert time.monotonic() - started < 59
    honest = submission(tmp_path / "grace" / "answers.md")  # a MyST file is read the same way, whole
    assert identify(read_submission(honest), honest) == "04_pairwise_judge"
    run = grade(tmp_path / "class", tmp_path / "grades", timeout=30, key=tmp_path / "key", trusted=True)
    (row,) = run.rows
    assert (row.student, row.status, row.score) == ("bob", "not a notebook", 0.0)
    assert "could not be read" in row.reason and "limits for reading a file" in row.reason
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - grown  # KiB: the grader never expanded it
    assert grown < 2**20, grown


def test_a_folder_and_a_file_that_name_the_same_student_are_graded_apart_never_merged(tmp_path):
    from evalkit.course.intake import intake

    folder = tmp_path / "class"
    submission(folder / "bob" / "04_pairwise_judge.ipynb")
    (folder / "bob.txt").write_text("bob's other hand-in, or another bob's")
    submission(folder / "cy.ipynb")
    submission(folder / "cy.md")
    (folder / "dan.txt").write_text("not a notebook")
    copies = tmp_path / "copies"
    copies.mkdir()
    entries = [(entry.student, entry.submission, entry.refused, bool(entry.note)) for entry in intake(folder, copies)]
    assert entries == [("bob", "bob/04_pairwise_judge.ipynb", "", True), ("bob.txt", "bob.txt", "", True),
                       ("cy.ipynb", "cy.ipynb", "", True), ("cy.md", "cy.md", "", True), ("dan", "dan.txt", "", False)]
    for name in ("cy.ipynb", "cy.md"):  # graded below: bob's pair (the cy pair is read the same way)
        (folder / name).unlink()
    run = grade(folder, tmp_path / "grades", timeout=240, key=answer_key(tmp_path), trusted=True)
    statuses = {(row.student, row.status) for row in run.rows}
    assert {("bob", "graded"), ("bob.txt", "not a notebook"), ("dan", "not a notebook")} == statuses, statuses
    bob = next(row for row in run.rows if row.student == "bob")
    assert "collides with bob.txt: they name the student 'bob' alike" in bob.reason, bob.reason
    assert all("collides with" not in row.reason for row in run.rows if row.student == "dan")


def test_one_submissions_slow_checks_do_not_use_up_the_keys_time(tmp_path, monkeypatch):
    """In the key's kernel each submission's checks have ``seconds``; past them that submission gets a problem
    and the next one is checked."""
    from evalkit.course import core
    from evalkit.course.answers import check_all, encode

    real = core.run_exercise

    def slow(item, given, env, hidden=False):
        if given.get("pairs_needed") == 7:
            time.sleep(60)
        return real(item, given, env, hidden=hidden)

    monkeypatch.setattr(core, "run_exercise", slow)
    given = {"0": {"pairs_needed": encode(7)}, "1": {"pairs_needed": encode(560)}}
    (tmp_path / "in.json").write_text(json.dumps(given))
    started = time.monotonic()
    check_all({}, "04_pairwise_judge", str(tmp_path / "in.json"), str(tmp_path / "out.json"), seconds=5)
    assert time.monotonic() - started < 40
    checked = json.loads((tmp_path / "out.json").read_text())
    assert checked["0"] == {"problem": "the checks of these answers did not finish within 5 s"}
    assert set(checked["1"]) == {"ch4-order", "ch4-size", "ch4-rank", "ch4-budget"}


def test_the_keys_time_grows_with_the_number_of_submissions(tmp_path, monkeypatch):
    """Three submissions, ``--timeout 20``, a key that needs more than 20 s: the key has 20 s plus 20 s per
    submission (one ``--timeout`` for all was not enough), so every row is graded. The submissions' runs are
    stood in for (their answers given), so the key is the one kernel started."""
    from evalkit.course import grade as grading

    folder = tmp_path / "class"
    for student in ("ann", "ben", "cy"):
        submission(folder / student / "04_pairwise_judge.ipynb")
    key = tmp_path / "key"
    submission(key / "04_pairwise_judge.ipynb", parameters="heldout_pairs = 400", extra="import time\ntime.sleep(25)")

    def answered(run, *_):
        run.answers = {"pairs_needed": 560}

    monkeypatch.setattr(grading, "run_submission", answered)
    table = by_student(grade(folder, tmp_path / "grades", timeout=20, key=key, trusted=True).rows)
    assert sorted(table) == ["ann", "ben", "cy"]
    assert all(row.status == "graded" for rows in table.values() for row in rows.values()), table["ann"]
    assert all(rows["ch4-size"].score == 1 and rows["ch4-order"].score == 0 for rows in table.values())
    assert grading.key_limits(grading.Limits(timeout=20), 3).timeout == 80


def test_a_submissions_metadata_never_picks_the_keys_sizes(tmp_path):
    import nbformat

    from evalkit.course.submission import SubmissionRun, plan
    from evalkit.course.intake import Entry

    path = submission(tmp_path / "cy" / "04_pairwise_judge.ipynb", parameters="heldout_pairs = 400")

    def planned(names, params):
        notebook = nbformat.read(path, as_version=4)
        notebook.metadata["evalkit"] = {"chapter": "04_pairwise_judge", "params": names}
        nbformat.write(notebook, path)
        run = SubmissionRun(0, Entry("cy", "cy/04_pairwise_judge.ipynb", path))
        plan(run, params)
        return run

    for names in ("lab", "smoke"):
        run = planned(names, None)  # the notebook names a set, the teacher none: the key stays at the chapter's
        assert run.key_params is None and run.status == "not graded"
        assert f"released at the {names!r} sizes" in run.problem and f"grade with --params {names}" in run.problem
    run = planned("../../../etc/passwd", None)
    assert run.key_params is None and run.status == "not graded" and "--params of its release" in run.problem
    for names, params in (("smoke", "lab"), ("lab", "lab"), (None, "smoke")):
        run = planned(names, params)  # the teacher's set, whatever the notebook names
        assert run.key_params == params and not run.status


def test_a_run_sees_only_the_system_the_kit_and_its_own_folder_and_leaves_nothing(tmp_path):
    """With a mount namespace a run's file system holds the system, the interpreter, the kit's package and its
    own folder: not the project's notebooks, built pages or history, not the grader's temporary files; what it
    writes to /tmp, /var/tmp, /run or /dev/shm and the shared memory it makes are gone when it ends."""
    import evalkit
    from evalkit.course.sandbox import Limits, end, launch, scrubbed_environment, visible_paths

    isolation = sandbox_or_skip()
    package = Path(evalkit.__file__).resolve().parent
    assert package in visible_paths({}) and package.parent not in visible_paths({})
    run_dir = tmp_path / "runs" / "0000"
    run_dir.mkdir(parents=True)
    os.chmod(tmp_path, 0o755)
    os.chown(run_dir, isolation.uid, isolation.gid)
    token = f"evalkit-tmp-{os.getpid()}"
    host = Path("/tmp") / f"{token}-host"
    host.write_text("the grader's own")
    code = f'''import ctypes, os
print("project", sorted(os.listdir({str(package.parent)!r})))
print("seen", [name for name in os.listdir("/tmp") if name.startswith("{token}")])
for folder in ("/tmp", "/var/tmp", "/run", "/dev/shm"):
    open(os.path.join(folder, "{token}"), "w").write("left behind")
libc = ctypes.CDLL(None, use_errno=True)
print("shm", libc.shmget(0x5e5e5e5e, 4096, 0o1666))  # IPC_CREAT | 0666
print("etc", {{name: len(open(name).read()) for name in ("/etc/pip.conf", "/etc/environment", "/etc/passwd")
              if os.path.exists(name)}})
'''
    before = subprocess.run(["ipcs", "-m"], capture_output=True, text=True).stdout
    try:
        process = launch([sys.executable, "-c", code], cwd=run_dir, env=scrubbed_environment(run_dir),
                         limits=Limits(timeout=60), isolation=isolation, log=tmp_path / "log")
        try:
            assert process.wait(timeout=60) == 0, (tmp_path / "log").read_text()
        finally:
            end(process)
    finally:
        host.unlink()
    said = (tmp_path / "log").read_text()
    project = eval(said.split("project ", 1)[1].splitlines()[0])
    assert package.name in project and not {"notebooks", "_build", ".git", "tests", "README.md"} & set(project), said
    assert "seen []" in said and "shm -1" not in said, said
    etc = eval(said.split("etc ", 1)[1].splitlines()[0])  # a machine's credentials read empty; its user table not
    assert etc["/etc/passwd"] > 0 and all(etc[name] == 0 for name in etc if name != "/etc/passwd"), etc
    for folder in ("/tmp", "/var/tmp", "/run", "/dev/shm"):
        assert not (Path(folder) / token).exists(), folder
    assert "0x5e5e5e5e" not in subprocess.run(["ipcs", "-m"], capture_output=True, text=True).stdout
    assert "0x5e5e5e5e" not in before


def test_copies_of_one_chapter_count_each_exercise_once_in_the_totals():
    from evalkit.course.grade import GradeRow
    from evalkit.course.report import totals

    def row(student, exercise, score, status="graded"):
        return GradeRow(student, f"{student}/copy.ipynb", "04_pairwise_judge", exercise, score, 1.0, status,
                        "passed", "passed", "")

    rows = [row("dupe", label, 1.0) for label in ("ch4-order", "ch4-size") for _ in range(3)]
    rows += [row("honest", "ch4-order", 1.0), row("honest", "ch4-size", 0.0, "cell error")]
    table = {t["student"]: t for t in totals(rows)}
    assert (table["dupe"]["score"], table["dupe"]["points"], table["dupe"]["exercises passed"]) == (2.0, 2.0, 2)
    assert (table["honest"]["score"], table["honest"]["points"], table["honest"]["problems"]) == (1.0, 2.0, 1)


def test_two_names_a_table_shows_alike_are_told_apart_in_the_totals_and_the_summary(tmp_path):
    """A composed ``josé`` beside a decomposed one (a name a Mac writes decomposed): grades.csv's rows name the
    collision, and the totals and the page's summary, one line per name, say which line is which."""
    import csv

    from evalkit.course.grade import GradeRow
    from evalkit.course.report import write_tables

    composed, decomposed = "jos\u00e9", "jose\u0301"
    rows = [GradeRow(name, f"{name}/04.ipynb", "04", "ch4-a", score, 1.0, "graded", "passed", "passed", "")
            for name, score in ((composed, 0.0), (decomposed, 1.0), ("bob", 1.0))]
    grades, totals_path, page = write_tables(rows, tmp_path)
    with open(totals_path, newline="", encoding="utf-8") as handle:
        table = {line["student"]: line for line in csv.DictReader(handle)}
    assert "U+0301" in table[composed]["collides with"] and "U+00E9" in table[decomposed]["collides with"]
    assert table["bob"]["collides with"] == ""
    summary = page.read_text().split("<h2>")[0]
    assert "U+0301 COMBINING ACUTE ACCENT" in summary and "U+00E9 LATIN SMALL LETTER E WITH ACUTE" in summary
    assert summary.count("collides with") == 2


def test_a_literal_backslash_name_and_a_byte_that_is_not_utf8_are_two_students_printed_apart(tmp_path):
    from evalkit.course.intake import intake

    folder = tmp_path / "class"
    (folder / "vic\\xff").mkdir(parents=True)                     # a literal backslash, x, f, f
    (folder / "vic\\xff" / "04_pairwise_judge.ipynb").write_text("{}")
    with open(os.path.join(os.fsencode(folder), b"vic\xff.ipynb"), "w") as handle:  # a byte that is not UTF-8
        handle.write("{}")
    (tmp_path / "copies").mkdir()
    entries = intake(folder, tmp_path / "copies")
    assert len(entries) == 2 and {entry.student for entry in entries} == {"vic\\\\xff", "vic\\xff"}
    assert not any(entry.refused for entry in entries)


def test_a_release_never_writes_through_a_link_planted_in_its_folder(tmp_path):
    from evalkit.course.release import release

    victim = tmp_path / "victim.txt"
    victim.write_text("the teacher's own file")
    out = tmp_path / "release" / "02_agreement"
    out.mkdir(parents=True)
    (out / "02_agreement.md").symlink_to(victim)
    with pytest.raises(ValueError, match=r"02_agreement\.md: a symbolic link where the release writes"):
        release(tmp_path / "release", only=["02"])
    assert victim.read_text() == "the teacher's own file"


def test_a_notebook_that_rewrites_its_own_result_gets_no_graded_row(tmp_path):
    """A setsid loop rewrote the worker's result.json (and could the executed copy) until the
    run ended, so a notebook whose last cell failed showed "graded" with a reason of its own choosing. The
    worker seals its result with a key the kernel never sees; a rewritten result is named and not graded."""
    sandbox_or_skip()
    folder, out = tmp_path / "class", tmp_path / "grades"
    loop = '''import os, subprocess, sys
code = """import time, json, pathlib
end = time.time() + 60
while time.time() < end:
    for name in ("../result.json", "result.json"):
        try:
            pathlib.Path(name).write_text(json.dumps({"errors": [], "problem": "FORGED BY MALLORY"}))
        except OSError:
            pass
    time.sleep(0.02)
"""
subprocess.Popen([sys.executable, "-c", code], start_new_session=True, stdout=subprocess.DEVNULL,
                 stderr=subprocess.DEVNULL)
print(os.environ.get("EVALKIT_RESULT_KEY", "no key"))
raise RuntimeError("the last cell fails")
'''
    submission(folder / "mallory" / "04_pairwise_judge.ipynb", extra=loop)
    submission(folder / "zed" / "04_pairwise_judge.ipynb")
    run = grade(folder, out, timeout=60, key=answer_key(tmp_path))
    table = by_student(run.rows)
    assert {row.status for row in table["zed"].values()} == {"graded"}
    mallory = table["mallory"].values()
    assert {row.status for row in mallory} != {"graded"} and all(row.score == 0 for row in mallory)
    assert not any("FORGED" in row.reason for row in mallory)
    assert all("changed from inside the notebook" in row.reason for row in mallory), [r.reason for r in mallory]


def test_a_notebook_that_replaces_its_executed_copy_gets_no_graded_row(tmp_path):
    """A loop that swaps the executed copy for a link (or a 6 MB file) must not leave the row "graded" with the
    copy "not kept" and no flag: the worker's sealed record holds the copy's hash and size."""
    sandbox_or_skip()
    folder, out = tmp_path / "class", tmp_path / "grades"
    loop = '''import subprocess, sys
code = """import time, os
end = time.time() + 60
while time.time() < end:
    try:
        if os.path.exists("../executed.ipynb") and not os.path.islink("../executed.ipynb"):
            os.remove("../executed.ipynb")
            os.symlink("/etc/hostname", "../executed.ipynb")
    except OSError:
        pass
    time.sleep(0.02)
"""
subprocess.Popen([sys.executable, "-c", code], start_new_session=True, stdout=subprocess.DEVNULL,
                 stderr=subprocess.DEVNULL)
'''
    submission(folder / "bob" / "04_pairwise_judge.ipynb", extra=loop)
    run = grade(folder, out, timeout=60, key=answer_key(tmp_path))
    rows = by_student(run.rows)["bob"].values()
    assert {row.status for row in rows} != {"graded"} and all(row.score == 0 for row in rows)
    assert all("changed from inside the notebook" in row.reason for row in rows), [r.reason for r in rows]


def test_control_characters_in_a_reason_reach_no_table_raw(tmp_path):
    """A student's exception message carried terminal escape sequences (ESC[2J, ESC[1A) raw into grades.csv and
    grades.html, so printing the file let one row repaint how the others look; every control character but a
    line break and a tab is written as its escape."""
    from evalkit.course.grade import GradeRow
    from evalkit.course.report import write_tables
    row = GradeRow("eve", "04.ipynb", "04", "ch4-a", 0.0, 1.0, "crashed", "not run", "not run",
                   "RuntimeError: \x1b[2J\x1b[1Abob full marks\x07\x9b")
    written = write_tables([row], tmp_path)
    for path in written:
        text = path.read_bytes()
        assert not any(byte < 32 and byte not in (9, 10, 13) for byte in text), path
        assert b"\xc2\x9b" not in text and "\\x1b[2J" in path.read_text() or path.name == "totals.csv"


def test_a_small_alias_structure_that_fits_the_childs_limits_is_refused_by_its_growth(tmp_path):
    """Six levels of ten aliases (10**6 strings) parse within the child's limits, but their JSON is thousands of
    times the file's size: loading and preparing it would cost the grader's own process gigabytes per file."""
    from evalkit.course.worker import NotASubmission, read_submission

    lines = ["l0: &l0 [" + ", ".join(["0"] * 10) + "]"]
    lines += [f"l{n}: &l{n} [" + ", ".join([f"*l{n - 1}"] * 10) + "]" for n in range(1, 6)]
    small = tmp_path / "mallory" / "04_pairwise_judge.md"
    small.parent.mkdir(parents=True)
    small.write_text("---\n{" + ", ".join(lines) + "}\n---\n\n```{code-cell} ipython3\nx = 1\n```\n")
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(NotASubmission, match="grows from|more than 500,000 values"):
        read_submission(small)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - grown < 2**18  # KiB: never loaded here
    # written as settings, one per line, the anchors are refused before any parsing (each read cost ~20 s)
    small.write_text("---\n" + "\n".join(lines) + "\n---\n\n```{code-cell} ipython3\nx = 1\n```\n")
    with pytest.raises(NotASubmission, match="defines YAML anchors"):
        read_submission(small)


def test_a_notebook_nested_past_any_chapters_depth_is_refused_before_the_grader_loads_it(tmp_path):
    """Indented for its run, each level of nesting costs every line below it: a 3 MB notebook nested 100 deep
    became 162 MB in the grader's memory."""
    import nbformat
    from evalkit.course.worker import NotASubmission, read_submission

    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    deep: dict = {"leaf": list(range(100))}
    for _ in range(100):
        deep = {"d": deep}
    notebook.metadata["deep"] = deep
    path = tmp_path / "mallory" / "04_pairwise_judge.ipynb"
    path.parent.mkdir(parents=True)
    path.write_text(nbformat.writes(notebook))
    with pytest.raises(NotASubmission, match=r"JSON is nested \d+ deep"):
        read_submission(path)


def test_a_notebook_that_grows_past_its_limit_when_written_for_its_run_is_refused(tmp_path):
    """A list nested 27 deep (under the depth limit) holding 1.5 million zeros is 3 MB of compact JSON, and 52 MB
    once indented for its run: the grader would keep 17 times the file per notebook. Its written length, measured
    in the reading child, is held to the same growth limit as its parsing."""
    import nbformat
    from evalkit.course.worker import NotASubmission, read_submission

    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    deep: list = [0] * 1_500_000
    for _ in range(26):
        deep = [deep]
    notebook.cells[0].metadata["deep"] = deep
    path = tmp_path / "mallory" / "04_pairwise_judge.ipynb"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(notebook, separators=(",", ":")))
    # (refused by its count of values too, which bounds what any notebook can grow to)
    with pytest.raises(NotASubmission, match="when written out for its run|more than 500,000 values"):
        read_submission(path)


def test_a_notebook_holding_millions_of_values_is_refused_before_the_grader_loads_it(tmp_path):
    """A flat list of 6 million floats in a cell's metadata is shallow and grows little when written (2.5x), but
    loaded it cost the grader's process ~29 times the file. More values than a chapter could need are refused."""
    import nbformat
    from evalkit.course.worker import NotASubmission, read_submission

    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    notebook.cells[0].metadata["floats"] = [0.5] * 600_000
    path = tmp_path / "mallory" / "04_pairwise_judge.ipynb"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(notebook, separators=(",", ":")))
    with pytest.raises(NotASubmission, match="more than 500,000 values"):
        read_submission(path)


def test_an_allowed_variable_holding_a_credential_of_the_graders_environment_is_not_passed_on():
    """``TZ`` set to the grader's ``$DB_PASSWORD`` (or to a piece of it) reaches no notebook; an allowed variable
    with an ordinary value does."""
    from evalkit.course.sandbox import scrubbed_environment

    password = "Mx9vQ2mPz77Kk"
    for held in (password, f"Europe/{password[:8]}"):
        env = scrubbed_environment(Path("/h"), base={"TZ": held, "DB_PASSWORD": password, "LANG": "C.UTF-8"})
        assert "TZ" not in env and env["LANG"] == "C.UTF-8" and password not in "".join(env.values()), env
    assert scrubbed_environment(Path("/h"), base={"TZ": "Europe/Paris", "DB_PASSWORD": password})["TZ"] == "Europe/Paris"
