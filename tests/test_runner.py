"""Batch runs: parameter sets, failure reports naming notebook and cell, the CLI's exit codes."""
from __future__ import annotations

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from evalkit import cli, runner


def test_named_parameter_sets_exist_and_cover_notebooks():
    names = {path.stem for path in runner.notebook_sources()}
    for name in ("smoke", "full"):
        params = runner.load_params(name)
        assert set(params["notebooks"]) <= names
        assert params["notebooks"]["01_dataset_building"]["seed"] == 13


def test_unknown_parameter_set_lists_the_known_ones():
    with pytest.raises(FileNotFoundError, match="smoke"):
        runner.load_params("nope")


def test_bad_top_level_key_is_rejected(tmp_path):
    path = tmp_path / "p.yml"
    path.write_text("defaults: {}\nnotebook: {}\n")
    with pytest.raises(ValueError, match="notebook"):
        runner.load_params(path)


def test_failing_notebook_is_named_with_its_cell(tmp_path, monkeypatch):
    folder = tmp_path / "notebooks"
    folder.mkdir()
    good, bad = new_notebook(), new_notebook()
    parameters = new_code_cell("value = 1")
    parameters.metadata["tags"] = ["parameters"]
    good.cells = [parameters, new_code_cell("from evalkit.results import record_results\n"
                                            "record_results(results_path, doubled=value * 2)")]
    bad.cells = [new_code_cell("x = 1"), new_code_cell("raise ValueError('boom')")]
    for nb in (good, bad):
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(good, folder / "01_good.ipynb")
    nbformat.write(bad, folder / "02_bad.ipynb")
    monkeypatch.setattr(runner, "NOTEBOOK_DIR", folder)
    params = {"defaults": {"value": 21}, "notebooks": {}, "name": "test"}
    runs = runner.run_notebooks(params, out_dir=tmp_path / "out", raise_on_failure=False)
    assert [run.error is None for run in runs] == [True, False]
    assert "02_bad.ipynb failed in cell 1 (\"raise ValueError('boom')\")" in runs[1].error and "ValueError: boom" in runs[1].error
    assert (tmp_path / "out" / "01_good.results.json").read_text().count('"doubled": 42') == 1
    with pytest.raises(runner.NotebookFailure, match="02_bad"):
        runner.run_notebooks(params, out_dir=tmp_path / "out", only=["02"])


def test_cli_reports_a_bad_parameter_set(capsys):
    assert cli.main(["run-notebooks", "--params", "does-not-exist"]) == 2
    assert "does-not-exist" in capsys.readouterr().err
