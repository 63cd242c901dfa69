"""The grader at its edges: a grader whose own hard limits are below the limits asked, an output folder under a
file, a class entry with a hidden name, a cell whose error message cannot be encoded, and credential files in a
cache folder. Each gave a traceback, a silent omission or a readable secret; each now gives a row or a message."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_notebook

from evalkit.course.grade import grade

from .test_course import submission

#: A cell whose exception message holds a lone surrogate (no kernel can encode it) and a spreadsheet formula.
UNENCODABLE = 'raise Exception(\'=HYPERLINK("http://evil","x")\' + "\\ud800\\x00\\x1b[31m" + "A" * 1000)'


def test_limits_above_the_graders_hard_limit_are_lowered_and_said_not_a_traceback(tmp_path):
    """Under ``ulimit -v`` 8 GiB (soft and hard), the default ``--memory`` of 16 GiB crashed the grader in its
    sandbox probe (``setrlimit`` above the hard limit inside ``preexec_fn``)."""
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "ann.txt").write_text("not a notebook")
    out = tmp_path / "grades"
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (8 * 2**30, 8 * 2**30)); "
            "from evalkit.cli.commands import main; sys.exit(main(sys.argv[1:]))")
    done = subprocess.run([sys.executable, "-c", code, "course", "grade", str(folder), "--out", str(out),
                           "--trusted", "--timeout", "60"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-3000:]
    said = ("address space (--memory; ulimit -v) of each notebook's processes capped at 8 GiB, the grader's hard "
            "limit, not 16 GiB")
    assert f"evalkit: note: {said}" in done.stderr, done.stderr[-3000:]
    assert said.replace("'", "&#x27;") in (out / "grades.html").read_text()
    assert "ann.txt" in (out / "grades.csv").read_text()


def test_an_output_folder_under_a_file_is_refused_naming_the_file(tmp_path, capsys):
    """``--out FILE/sub`` ended in a NotADirectoryError traceback."""
    from evalkit.cli.commands import main

    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "ann.txt").write_text("not a notebook")
    a_file = tmp_path / "a-file"
    a_file.write_text("keep")
    assert main(["course", "grade", str(folder), "--out", str(a_file / "sub" / "deeper"), "--trusted"]) == 2
    said = capsys.readouterr().err
    assert f"{a_file / 'sub' / 'deeper'}: {a_file} is a file, not a folder" in said, said
    assert a_file.read_text() == "keep"


def test_an_answer_key_inside_the_class_folder_is_refused_before_anything_runs(tmp_path, capsys):
    """``--key`` naming the class folder, a student's folder in it, or a link to one: a submission there would be
    the teacher's chapter, run outside the sandbox and setting everyone's expected values. Refused, exit 2, no
    output folder made; and so is a ``--params`` file there."""
    from evalkit.cli.commands import main

    folder = tmp_path / "class"
    (folder / "mallory").mkdir(parents=True)
    (folder / "mallory" / "01-agreement.ipynb").write_text("{}")
    (tmp_path / "link").symlink_to(folder / "mallory")
    for key in (folder, folder / "mallory", tmp_path / "link"):
        out = tmp_path / f"out-{key.name}"
        assert main(["course", "grade", str(folder), "--out", str(out), "--key", str(key), "--trusted"]) == 2
        said = capsys.readouterr().err
        assert "the answer key lies inside the folder of submissions" in said, said
        assert not out.exists()
    # a parameter file there too: a student could write the sizes every run uses
    (folder / "mallory" / "params.yml").write_text("n_items: 5\n")
    out = tmp_path / "out-params"
    assert main(["course", "grade", str(folder), "--out", str(out), "--params",
                 str(folder / "mallory" / "params.yml"), "--trusted"]) == 2
    assert "the parameter file lies inside the folder of submissions" in capsys.readouterr().err
    assert not out.exists()


def _taken_in(folder: Path, copies: Path):
    """The class folder taken in: its entries, each as (student, submission, refused), and the copies made."""
    from evalkit.course.intake import intake

    copies.mkdir()
    entries = intake(folder, copies)
    return entries, [(entry.student, entry.submission, entry.refused) for entry in entries], len(list(
        copies.iterdir()))


def test_a_class_entry_with_a_hidden_name_gets_a_refused_row_and_checkpoints_stay_ignored(tmp_path):
    """``.sneaky/04_pairwise_judge.ipynb`` got no row and no mention: the teacher never learnt of it."""
    folder = tmp_path / "class"
    submission(folder / ".sneaky" / "04_pairwise_judge.ipynb")
    (folder / ".hidden.txt").write_text("a hand-in a file manager does not show")
    for checkpoints in (folder / ".ipynb_checkpoints", folder / "dan" / ".ipynb_checkpoints"):
        checkpoints.mkdir(parents=True)
        (checkpoints / "04_pairwise_judge-checkpoint.ipynb").write_text("{}")
    (folder / "dan" / "notes.txt").write_text("not a notebook")
    _, taken, copied = _taken_in(folder, tmp_path / "copies")
    assert taken == [(".hidden", ".hidden.txt", "refused: hidden name"), (".sneaky", ".sneaky", "refused: hidden name"),
                     ("dan", "dan/notes.txt", "")]
    assert copied == 1  # dan's notes only: nothing hidden was read
    run = grade(folder, tmp_path / "grades", timeout=30, key=tmp_path / "key", trusted=True)
    rows = [(row.student, row.submission, row.status, row.score) for row in run.rows]
    assert rows == [(".hidden", ".hidden.txt", "refused: hidden name", 0.0),
                    (".sneaky", ".sneaky", "refused: hidden name", 0.0),
                    ("dan", "dan/notes.txt", "not a notebook", 0.0)]
    assert "the folder '.sneaky' has a hidden name" in run.rows[1].reason, run.rows[1].reason


def test_a_tool_folder_name_in_the_class_folder_gets_a_refused_row_and_is_skipped_inside_a_student(tmp_path):
    """``__pycache__/x.txt`` in the class folder got no row while the report counted every student: a student
    folder under a tool's name gets a row "refused: tool folder", not read; in a student's folder the tool's
    folders are still skipped."""
    folder = tmp_path / "class"
    for tool in ("__pycache__", "__MACOSX", "dan/__pycache__"):
        (folder / tool).mkdir(parents=True)
        (folder / tool / "x.txt").write_text("a hand-in under a tool's name")
    (folder / "dan" / "notes.txt").write_text("not a notebook")
    entries, taken, copied = _taken_in(folder, tmp_path / "copies")
    assert taken == [("__MACOSX", "__MACOSX", "refused: tool folder"),
                     ("__pycache__", "__pycache__", "refused: tool folder"), ("dan", "dan/notes.txt", "")]
    assert "'__pycache__' has the name of a folder a tool leaves" in entries[1].reason
    assert copied == 1


def test_a_cell_whose_error_message_cannot_be_encoded_still_fails_with_a_reason(tmp_path):
    """The kernel cannot send such an error's output, so the cell left none and its row read "graded" with no
    reason; its execute reply still says it failed."""
    from evalkit.course.checks import chapter_exercises
    from evalkit.course.grade import _rows
    from evalkit.course.submission import SubmissionRun
    from evalkit.course.intake import Entry
    from evalkit.course.worker import execute

    notebook = new_notebook(cells=[new_code_cell("x = 1"), new_code_cell(UNENCODABLE), new_code_cell("print(x)")])
    path = tmp_path / "submission.ipynb"
    nbformat.write(notebook, path)
    outcome = execute(path, tmp_path, tmp_path, graded=3)
    assert [error["cell"] for error in outcome["errors"]] == [1], outcome
    assert outcome["errors"][0]["error"].startswith("an error whose message could not be shown"), outcome

    label = chapter_exercises("04_pairwise_judge")[0].label
    run = SubmissionRun(0, Entry("ann", "ann/04_pairwise_judge.ipynb", Path("copy")), chapter="04_pairwise_judge",
               labels=[label], errors=outcome["errors"],
               checked={label: {"passed": True, "message": "", "public": "passed", "hidden": "passed"}})
    row, = _rows(run, timeout=30)
    assert row.status == "cell error" and row.reason.startswith("cell 1 ('raise Exception("), row
    assert "could not be shown" in row.reason


def test_a_dotenv_file_in_a_cache_folder_counts_as_a_credential_file(tmp_path):
    """A ``.env`` of API keys in ``EVALKIT_CACHE_DIR`` was readable by every graded notebook."""
    from evalkit.course.sandbox import credential_files

    (tmp_path / "hub").mkdir()
    (tmp_path / "hub" / ".env").write_text("OPENAI_API_KEY=sk-test-not-a-real-key\n")
    (tmp_path / "hub" / "weights.bin").write_text("model weights")
    (tmp_path / "environment").symlink_to(tmp_path / "hub" / "weights.bin")  # a name like it is no credential
    assert credential_files([tmp_path]) == [(tmp_path / "hub" / ".env").resolve()]


#: Credentials a cache folder held that a graded notebook read (each name but ``.env`` and ``hub/token``).
CACHE_CREDENTIALS = (".env", ".env.local", ".env.production", ".envrc", ".ENV", ".pgpass", ".pypirc", ".npmrc",
                     "id_rsa", ".docker/config.json", ".streamlit/secrets.toml", "api_key.txt", "token.txt",
                     "credentials.bak", "hub/token")
#: What a model cache holds and the kit reads: never hidden.
CACHE_MODEL_FILES = ("models/m/tokenizer.json", "models/m/special_tokens_map.json", "models/m/config.json",
                     "models/m/model.safetensors", "environment")


def _cache_with_credentials(cache: Path) -> None:
    for name in CACHE_CREDENTIALS + CACHE_MODEL_FILES:
        (cache / name).parent.mkdir(parents=True, exist_ok=True)
        (cache / name).write_text(f"SECRET-{name}" if name in CACHE_CREDENTIALS else f"model {name}")
    (cache / "models" / "m" / ".verified").write_text("sha256\n")  # a marker the kit checks with is_file()
    (cache / "linked").symlink_to(cache / "hub" / "token")


def test_every_credential_shaped_file_in_a_cache_folder_is_hidden_and_model_files_are_not(tmp_path):
    """Only the exact names ``.env``, ``token``... were hidden: ``.env.local``, ``.pgpass``, ``id_rsa``,
    ``.docker/config.json``, ``api_key.txt`` and the like in ``EVALKIT_CACHE_DIR`` were read by a notebook."""
    from evalkit.course.sandbox import credential_files

    _cache_with_credentials(tmp_path)
    hidden = {str(path.relative_to(tmp_path.resolve())) for path in credential_files([tmp_path])}
    assert hidden == {*CACHE_CREDENTIALS, "models/m/.verified"}, hidden


def test_a_sandboxed_run_reads_cache_credentials_as_empty_and_still_finds_its_models(tmp_path):
    from .test_hostile import sandbox_or_skip
    from .test_sandbox_limits import _run

    isolation = sandbox_or_skip()
    cache = tmp_path / "cache"
    _cache_with_credentials(cache)
    for path in [tmp_path, *cache.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    code = f'''import os
cache = {str(cache.resolve())!r}
for name in {CACHE_CREDENTIALS + CACHE_MODEL_FILES + ("linked",)!r}:
    print(name, repr(open(os.path.join(cache, name)).read()))
print("marker", os.path.isfile(os.path.join(cache, "models/m/.verified")))
'''
    said = _run(isolation, code, tmp_path / "grading", env={"EVALKIT_CACHE_DIR": str(cache)})
    assert "SECRET" not in said, said
    assert all(f"{name} ''" in said for name in CACHE_CREDENTIALS + ("linked",)), said
    assert all(f"{name} 'model {name}'" in said for name in CACHE_MODEL_FILES), said
    assert "marker True" in said, said  # an empty file, not /dev/null: the kit still finds its checked models


def test_a_student_whose_files_take_too_long_to_read_gets_the_rest_refused(tmp_path, monkeypatch):
    """A MyST file of 100,000 empty cells costs 16 s to parse and 200 files are allowed per student: one student
    could hold the class for hours before any notebook runs. Past the reading budget (0 s here, so after the first
    file), a student's other files get rows "refused: too slow to read" and are not read."""
    import evalkit.course.grade as grading

    monkeypatch.setattr(grading, "READ_BUDGET", 0.0)
    folder = tmp_path / "class"
    for name in ("a.md", "b.md", "c.md"):
        (folder / "eve" / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / "eve" / name).write_text("# notes\n\nno code here\n")
    (folder / "zed" / "notes.md").parent.mkdir(parents=True)
    (folder / "zed" / "notes.md").write_text("# notes\n")
    run = grade(folder, tmp_path / "grades", timeout=30, key=tmp_path / "key", trusted=True)
    rows = [(row.student, row.submission, row.status) for row in run.rows]
    assert rows == [("eve", "eve/a.md", "not a notebook"), ("eve", "eve/b.md", "refused: too slow to read"),
                    ("eve", "eve/c.md", "refused: too slow to read"), ("zed", "zed/notes.md", "not a notebook")], rows
    assert "took more than 0 s to read" in run.rows[1].reason


def test_progress_lines_and_tables_escape_a_file_names_terminal_codes_and_line_separators(tmp_path, capsys):
    """A submission's file name holding a terminal's escape sequences (cursor up, erase line, a window title, a
    clipboard write) was printed raw by --progress on the teacher's terminal; a U+2028 went raw into the tables."""
    folder = tmp_path / "class"
    hostile = "x\x1b[1A\x1b[2K\x1b]52;c;cHduZWQ=\x07y\u2028z.md"
    (folder / "eve").mkdir(parents=True)
    (folder / "eve" / hostile).write_text("# notes\n")
    run = grade(folder, tmp_path / "grades", timeout=30, key=tmp_path / "key", trusted=True, progress=True)
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\u2028" not in err and "\\x1b[1A" in err, err
    for table in (run.csv, run.html):
        text = Path(table).read_text(encoding="utf-8")
        assert "\x1b" not in text and "\u2028" not in text and "\\u2028" in text
