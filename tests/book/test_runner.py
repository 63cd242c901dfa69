"""Batch runs: parameter sets, failure reports naming notebook and cell, the CLI's exit codes."""
from __future__ import annotations

import jupytext
import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from evalkit import cli

from evalkit.book import runner


def test_named_parameter_sets_exist_and_cover_notebooks():
    names = {path.stem for path in runner.notebook_sources()}
    for name in ("smoke", "full", "extended", "lab"):
        assert set(runner.load_params(name)["notebooks"]) <= names
    assert runner.load_params("smoke")["notebooks"]["01_dataset_building"]["sample_size"] == 3


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
    good.cells = [parameters, new_code_cell("from evalkit.book.results import record_results\n"
                                            "record_results(results_path, doubled=value * 2)")]
    bad.cells = [new_code_cell("x = 1"), new_code_cell("raise ValueError('boom')")]
    for nb in (good, bad):
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    jupytext.write(good, folder / "01_good.md", fmt="md:myst")
    jupytext.write(bad, folder / "02_bad.md", fmt="md:myst")
    monkeypatch.setattr(runner, "NOTEBOOK_DIR", folder)
    params = {"defaults": {"value": 21}, "notebooks": {}, "name": "test"}
    runs = runner.run_notebooks(params, out_dir=tmp_path / "out", raise_on_failure=False)
    assert [run.error is None for run in runs] == [True, False]
    assert "02_bad.md failed in cell 1 (\"raise ValueError('boom')\")" in runs[1].error and "ValueError: boom" in runs[1].error
    assert (tmp_path / "out" / "01_good.results.json").read_text().count('"doubled": 42') == 1
    with pytest.raises(runner.NotebookFailure, match="02_bad"):
        runner.run_notebooks(params, out_dir=tmp_path / "out", only=["02"])
    misspelt = {"defaults": {}, "notebooks": {"01_good": {"valeu": 3}}, "name": "typo"}
    with pytest.raises(ValueError, match=r"typo.*01_good.*valeu"):
        runner.run_notebooks(misspelt, out_dir=tmp_path / "out")


def test_cli_reports_a_bad_parameter_set(capsys):
    assert cli.main(["run-notebooks", "--params", "does-not-exist"]) == 2
    assert "does-not-exist" in capsys.readouterr().err


def test_every_chapter_round_trips_through_a_notebook_unchanged():
    """md -> ipynb -> md gives back the file byte for byte, so an edit made in JupyterLab (which saves through
    jupytext) and an edit made in a text editor are the same edit."""
    for source in runner.notebook_sources():
        text = source.read_text(encoding="utf-8")
        notebook = jupytext.reads(text, fmt="md:myst")
        assert jupytext.writes(nbformat.reads(nbformat.writes(notebook), as_version=4), fmt="md:myst") == text, source
        parameters = [c for c in notebook.cells if "parameters" in c.metadata.get("tags", [])]
        assert len(parameters) == 1, f"{source.name}: needs exactly one cell tagged parameters"


def test_the_book_parameter_set_overrides_nothing_and_smoke_only_names_real_parameters():
    """The chapters' parameters cells hold the book's values; a parameter set may only override names that a
    chapter's parameters cell defines (a misspelt override would otherwise be injected and ignored)."""
    assert runner.load_params("full")["notebooks"] == {} and runner.load_params("full")["defaults"] == {}
    defined = {source.stem: runner.chapter_parameters(source) for source in runner.notebook_sources()}
    for stem, overrides in runner.load_params("smoke")["notebooks"].items():
        assert set(overrides) <= set(defined[stem]), (stem, set(overrides) - set(defined[stem]))


def test_injected_values_are_folded_into_the_parameters_cell(tmp_path, monkeypatch):
    folder = tmp_path / "notebooks"
    folder.mkdir()
    notebook = new_notebook()
    parameters = new_code_cell("size = 10       # items\nresults_path = None")
    parameters.metadata["tags"] = ["parameters"]
    notebook.cells = [parameters, new_code_cell("print(size)")]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    jupytext.write(notebook, folder / "01_tiny.md", fmt="md:myst")
    monkeypatch.setattr(runner, "NOTEBOOK_DIR", folder)
    runs = runner.run_notebooks({"defaults": {}, "notebooks": {"01_tiny": {"size": 3}}, "name": "t"},
                                out_dir=tmp_path / "out")
    executed = nbformat.read(runs[0].executed, as_version=4)
    own = next(c for c in executed.cells if "parameters" in c.metadata.get("tags", []))
    injected = next(c for c in executed.cells if "injected-parameters" in c.metadata.get("tags", []))
    assert own.source.splitlines()[0].startswith("size = 3") and "# items" in own.source
    assert "results_path = None" in own.source  # the build machine's path is not shown
    assert "remove-cell" in injected.metadata["tags"]
    assert executed.cells[-1].outputs[0]["text"] == "3\n"


def test_strip_solutions_removes_gated_solutions_and_keeps_the_exercise():
    from nbformat.v4 import new_markdown_cell

    notebook = new_notebook()
    notebook.cells = [
        new_markdown_cell("Text.\n\n```{exercise}\n:label: e1\nDo it.\n```\n\n```{solution-start} e1\n:class: dropdown\n```"),
        new_code_cell("print('answer one')"),
        new_markdown_cell("Why it works.\n\n```{solution-end}\n```\n\n```{exercise}\n:label: e2\nAgain.\n```"),
        new_markdown_cell("```{solution-start} e2\n```"), new_code_cell("print('answer two')"),
        new_markdown_cell("```{solution-end}\n```"), new_code_cell("print('after')")]
    stripped = runner.strip_solutions(notebook)
    text = "\n".join(cell.source for cell in stripped.cells)
    assert "answer" not in text and "Why it works" not in text and "solution" not in text
    assert ":label: e1" in text and ":label: e2" in text and "print('after')" in text and text.startswith("Text.")


def test_every_chapter_has_two_to_four_exercises_with_solutions():
    import re

    for source in runner.notebook_sources():
        text = source.read_text()
        labels = re.findall(r"```\{exercise\}\n:label: (\S+)", text)
        assert 2 <= len(labels) <= 4, (source.name, labels)
        for label in labels:
            assert f"```{{solution-start}} {label}" in text, (source.name, label)
