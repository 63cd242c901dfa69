"""What a graded notebook may read of the data folders, what the tables show of what it printed, and what one
student's folder or answers may cost the grader."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pandas as pd
import pytest

from evalkit.course import answers as answers_module
from evalkit.course import intake as intake_module
from evalkit.course.answers import Unreadable, load
from evalkit.course.grade import GradeRow
from evalkit.course.intake import intake
from evalkit.course.report import write_tables

#: Credentials a data folder may hold by mistake, each of which a graded notebook must read as empty.
DATA_CREDENTIALS = (".env", "token", "api_key.txt", ".hidden/config.json", "secrets/openai.txt",
                    "credentials/gcp.json", "keys/service.json")
#: What a data or model folder holds and a notebook reads.
DATA_FILES = ("dailydialog/train.jsonl", "models--x--bert-token-classification/config.json", "README.md")


def _project(root: Path) -> Path:
    """A kit's package beside its ``data`` folder, the folder holding :data:`DATA_CREDENTIALS` and
    :data:`DATA_FILES`; returns the package's ``__init__.py``."""
    package = root / "evalkit"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    for name in DATA_CREDENTIALS + DATA_FILES:
        path = root / "data" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"SECRET-{name}" if name in DATA_CREDENTIALS else f"data {name}")
    for path in [root, *root.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    return package / "__init__.py"


def test_credential_files_of_the_projects_data_folder_are_hidden(tmp_path, monkeypatch):
    """The ``data`` folder beside the package is shown to every run; its credential-named files were not among
    those a run reads as empty (only the folders the environment names were)."""
    import evalkit
    from evalkit.course import sandbox

    monkeypatch.setattr(evalkit, "__file__", str(_project(tmp_path / "project")))
    data = (tmp_path / "project" / "data").resolve()
    hidden = {str(path.relative_to(data)) for path in sandbox.credential_files(sandbox.data_folders({}))}
    assert hidden == set(DATA_CREDENTIALS), hidden
    assert data in sandbox.visible_paths({})


def test_files_in_a_folder_named_as_a_credentials_are_hidden_and_model_folders_are_not(tmp_path):
    from evalkit.course.sandbox import credential_files

    for name in ("secrets/openai.txt", "Credentials/gcp.json", "keys/a/b.json", "db_passwords/main.txt",
                 "hub/models--x--bert-token-classification/config.json", "hub/keyphrase/vocab.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    hidden = {str(path.relative_to(tmp_path.resolve())) for path in credential_files([tmp_path])}
    assert hidden == {"secrets/openai.txt", "Credentials/gcp.json", "keys/a/b.json", "db_passwords/main.txt"}, hidden


def test_a_sandboxed_run_reads_the_projects_data_credentials_as_empty(tmp_path, monkeypatch):
    import evalkit

    from .test_hostile import sandbox_or_skip
    from .test_sandbox_limits import _run

    isolation = sandbox_or_skip()
    monkeypatch.setattr(evalkit, "__file__", str(_project(tmp_path / "project")))
    data = (tmp_path / "project" / "data").resolve()
    code = f'''import os
for name in {DATA_CREDENTIALS + DATA_FILES!r}:
    print(name, repr(open(os.path.join({str(data)!r}, name)).read()))
'''
    said = _run(isolation, code, tmp_path / "grading")
    assert "SECRET" not in said, said
    assert all(f"{name} ''" in said for name in DATA_CREDENTIALS), said
    assert all(f"{name} 'data {name}'" in said for name in DATA_FILES), said


def test_the_tables_mask_credentials_a_run_put_in_a_reason(tmp_path, monkeypatch):
    """A cell's exception message reaches the reason column: a credential it carries is masked by shape, and a
    secret of the grader's environment wherever it appears."""
    monkeypatch.setenv("MY_SERVICE_TOKEN", "Zq8Lr2Wx5Tn9Bm4Kp7")
    reason = ("cell 2 ('raise RuntimeError(open(path).read())') raised RuntimeError: OPENAI_API_KEY=dataEnvSecret"
              "H1a2b3c4d; token Zq8Lr2Wx5Tn9Bm4Kp7 and password: hunter2hunter2")
    rows = [GradeRow("ann", "ann/04.ipynb", "04_pairwise_judge", "ch4-a", 0.0, 1.0, "cell error", "failed",
                     "not run", reason)]
    out = tmp_path / "grades"
    out.mkdir()
    written = write_tables(rows, out)
    for path in written:
        text = path.read_text()
        for secret in ("dataEnvSecretH1a2b3c4d", "Zq8Lr2Wx5Tn9Bm4Kp7", "hunter2hunter2"):
            assert secret not in text, (path.name, text)
    assert "OPENAI_API_KEY=***" in written[0].read_text()
    assert "ann/04.ipynb" in written[0].read_text()  # the names of the class folder are kept


def test_the_kept_log_tail_is_masked(tmp_path, monkeypatch):
    from evalkit.course.grade import _keep
    from evalkit.course.submission import SubmissionRun
    from evalkit.course.intake import Entry

    monkeypatch.setenv("MY_SERVICE_TOKEN", "Zq8Lr2Wx5Tn9Bm4Kp7")
    run = SubmissionRun(0, Entry("ann", "ann/04.ipynb", None))
    run.kept = {"worker.log": b"Traceback: OPENAI_API_KEY=dataEnvSecretH1a2b3c4d Zq8Lr2Wx5Tn9Bm4Kp7\n"}
    _keep([run], tmp_path)
    log = (tmp_path / "work" / "0000" / "worker.log").read_text()
    assert "dataEnvSecretH1a2b3c4d" not in log and "Zq8Lr2Wx5Tn9Bm4Kp7" not in log, log
    assert log.startswith("Traceback: OPENAI_API_KEY=***"), log


def test_folders_past_the_depth_limit_count_against_a_students_rows(tmp_path):
    """Each folder past the depth limit added a row of its own, without bound: 400 of them buried the table."""
    folder, copies = tmp_path / "class", tmp_path / "copies"
    deep = folder / "mallory"
    for _ in range(7):
        deep = deep / "d"
    for number in range(400):
        (deep / f"x{number:03d}").mkdir(parents=True)
    (folder / "zed").mkdir()
    (folder / "zed" / "04.ipynb").write_text("{}")
    copies.mkdir()
    entries = intake(folder, copies)
    mallory = [entry.refused for entry in entries if entry.student == "mallory"]
    assert len(mallory) == intake_module._MAX_FILES + 1, len(mallory)
    assert mallory[:-1] == ["refused: too deep"] * intake_module._MAX_FILES
    assert mallory[-1] == "refused: too many files"
    assert [(entry.student, entry.refused) for entry in entries if entry.student == "zed"] == [("zed", "")]


def test_the_file_cap_holds_for_a_students_whole_folder_not_each_subfolder(tmp_path):
    folder, copies = tmp_path / "class", tmp_path / "copies"
    for part in ("a", "b", "c"):
        (folder / "eve" / part).mkdir(parents=True)
        for number in range(100):
            (folder / "eve" / part / f"{number:03d}.md").write_text("x")
    copies.mkdir()
    entries = intake(folder, copies)
    assert sum(entry.copy is not None for entry in entries) == intake_module._MAX_FILES
    assert [entry.refused for entry in entries if entry.copy is None] == ["refused: too many files"]


def test_a_students_copies_stop_at_a_byte_budget_counting_sparse_files_by_size(tmp_path, monkeypatch):
    """Sparse files of 49 MB each (no disk blocks) were copied dense, 50 MB x 200 files per student."""
    monkeypatch.setattr(intake_module, "MAX_STUDENT_BYTES", 3 * 2**20, raising=False)
    folder, copies = tmp_path / "class", tmp_path / "copies"
    (folder / "eve").mkdir(parents=True)
    for number in range(5):
        with open(folder / "eve" / f"f{number}.ipynb", "wb") as handle:
            handle.truncate(2**20)  # a hole of 1 MB: no block on disk
    (folder / "zed.ipynb").write_bytes(b"{}")
    copies.mkdir()
    entries = intake(folder, copies)
    eve = [(entry.submission, entry.refused) for entry in entries if entry.student == "eve"]
    assert eve == [("eve/f0.ipynb", ""), ("eve/f1.ipynb", ""), ("eve/f2.ipynb", ""),
                   ("eve/f3.ipynb", "refused: too much in all"), ("eve/f4.ipynb", "refused: too much in all")], eve
    assert "over 3 MB in all" in entries[3].reason
    copied = sum(path.stat().st_size for path in copies.rglob("*") if path.is_file())
    assert copied == 3 * 2**20 + 2


def _wide_series(width: int) -> dict:
    key = {"tuple": [{"int": str(level)} for level in range(width)]}
    return {"series": [[key, {"int": "1"}]]}


def test_a_tuple_key_wider_than_the_limit_is_refused_quickly(tmp_path):
    """One key of 170,000 items made a MultiIndex of as many levels: 45 s and 700 MB in the grader itself."""
    path = tmp_path / "answers.json"
    path.write_text(json.dumps({"p_ab": _wide_series(50_000)}))
    started = time.monotonic()
    with pytest.raises(Unreadable, match="key holds 50000 items; keys of more than 16"):
        load(path)
    assert time.monotonic() - started < 5
    path.write_text(json.dumps({"p_ab": _wide_series(17)}))
    with pytest.raises(Unreadable, match="key holds 17 items"):
        load(path)


def test_a_tuple_key_at_the_limit_decodes_and_its_levels_count_against_the_budget(tmp_path):
    path = tmp_path / "answers.json"
    path.write_text(json.dumps({"p_ab": _wide_series(16)}))
    value = load(path)["p_ab"]
    assert isinstance(value, pd.Series) and value.index.nlevels == 16
    many = answers_module._MAX_ITEMS // (16 * answers_module._LEVEL_COST) + 1
    path.write_text(json.dumps({"p_ab": {"list": [_wide_series(16)] * many}}))
    with pytest.raises(Unreadable, match="too many values"):
        load(path)
