"""Strict input and honest commands: parameter sets checked like job files, metric
columns like score columns, degenerate scores and duplicates reported, read-only commands that change nothing,
output paths checked before work, pipes closed quietly, FED read with checksums off naming its faults."""
from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from evalkit.book import benchpage

from evalkit import cli

from evalkit.book import runner
from evalkit.paireval import metaeval
from evalkit.paireval.schema import (DegenerateScoresError, MetaEvalFormatError, duplicate_rows, meta_evaluate,
                                     read_meta_eval, write_meta_eval)
from evalkit.userproxy import job
from evalkit.userproxy.runstore import RunStore


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --------------------------------------------------------------------------- parameter sets

PARAMS_PROBES = [
    ("42\n", r": expected a mapping of fields, got int 42"),
    ("notebooks:\n  01_dataset_building: {seed: [\n", r", line \d+, column \d+: not valid YAML"),
    ("notebooks:\n  01_dataset_building:\n    seed: 1\n    seed: 2\n", r"line 4, column 5: not valid YAML \(key 'seed' is given twice\)"),
    ("notebooks:\n  01_dataset_buildin: {seed: 1}\n",
     r", line 2, field 'notebooks': unknown field\(s\) 01_dataset_buildin; known: 00_models_and_backends"),
    ("defaults:\n  sed: 3\n", r", line 2, field 'defaults\.sed': no chapter's parameters cell defines it.*did you mean seed"),
    ("notebooks:\n  01_dataset_building:\n    sampel_size: 3\n",
     r"line 3, field 'notebooks\.01_dataset_building\.sampel_size': not a parameter of 01_dataset_building\.md"),
    ("notebooks:\n  01_dataset_building:\n    sample_size: '3'\n",
     r"line 3, field 'notebooks\.01_dataset_building\.sample_size': expected a whole number \(01_dataset_building\.md's "
     r"parameters cell has sample_size = 8\), got the text '3'"),
    ("defaults:\n  seed: 1.5\n", r"line 2, field 'defaults\.seed': expected a whole number"),
    ("notebooks:\n  02_agreement:\n    drop_duplicate_raters: 'no'\n", r"drop_duplicate_raters': expected true or false"),
    ("notebooks:\n  03_metric_correlation:\n    judges: yes_no\n", r"judges': expected a list of texts"),
    ("notebooks:\n  01_dataset_building: 3\n", r"line 2, field 'notebooks\.01_dataset_building': expected a mapping"),
    ("defaults:\n  output_dir: /tmp/x\n", r"field 'defaults\.output_dir': is set by the runner"),
    ("defaults: {}\nnotebook: {}\n", r"unknown field\(s\) notebook"),
]


@pytest.mark.parametrize("text, message", PARAMS_PROBES, ids=[p[0].strip()[:30] for p in PARAMS_PROBES])
def test_bad_parameter_sets_are_refused_with_file_line_and_field(tmp_path, capsys, text, message):
    path = tmp_path / "p.yml"
    path.write_text(text)
    with pytest.raises(runner.ParamsError, match=rf"^{re.escape(str(path))}.*{message}"):
        runner.load_params(path)
    for command in (["run-notebooks", "--params", str(path), "--out", str(tmp_path / "out")],
                    ["book", "--params", str(path), "--out", str(tmp_path / "book")]):
        assert cli.main(command) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"evalkit: {path}") and "Traceback" not in err
    assert not (tmp_path / "out").exists() and not (tmp_path / "book").exists()  # refused before any work


def test_a_credential_in_a_wrong_field_is_masked_in_the_message(tmp_path, capsys):
    """A URL pasted into the wrong field is quoted by the message: masked before it is printed."""
    secret_url = "http://userABC987x:PWsecretXYZ123456@127.0.0.1:99999/v1?key=QKEYvalue55555&sig=SIGvalue77777"
    path = tmp_path / "p.yml"
    path.write_text(f"notebooks:\n  03_metric_correlation:\n    seed: '{secret_url}'\n")
    assert cli.main(["run-notebooks", "--params", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "seed" in err and "***" in err
    for secret in ("userABC987x", "PWsecretXYZ123456", "QKEYvalue55555", "SIGvalue77777"):
        assert secret not in err


def test_good_parameter_sets_still_load(tmp_path):
    path = tmp_path / "p.yml"
    path.write_text("defaults:\n  seed: 7\nnotebooks:\n  03_metric_correlation:\n    metric_items: 30\n"
                    "    judges: [yes_no]\n  05_user_proxy_eval:\n    human_label_items: 5\n")
    params = runner.load_params(path)
    assert params["defaults"] == {"seed": 7} and params["notebooks"]["03_metric_correlation"]["judges"] == ["yes_no"]
    empty = tmp_path / "empty.yml"
    empty.write_text("")
    assert runner.load_params(empty)["notebooks"] == {}
    assert runner.load_params("smoke")["notebooks"]["04_pairwise_judge"]["runs"] == 2


def test_a_parameter_dict_is_checked_the_same_way(tmp_path):
    with pytest.raises(runner.ParamsError, match=r"parameter set 'x', field 'defaults\.sed'"):
        runner.run_notebooks({"defaults": {"sed": 1}, "notebooks": {}, "name": "x"}, out_dir=tmp_path / "out")
    assert not (tmp_path / "out").exists()


# --------------------------------------------------------------------------- meta-evaluation input

def _jsonl(path: Path, metric_values, scores=(1, 2, 3, 4)) -> Path:
    rows = [{"context": [f"c{i}"], "response": f"r{i}", "score": score, "m": value}
            for i, (score, value) in enumerate(zip(scores, metric_values))]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


@pytest.mark.parametrize("value, shown", [("true", "True is not a score"), ("false", "False is not a score"),
                                          ("Infinity", "inf is not a finite number"),
                                          ("NaN", "nan is not a finite number")])
def test_booleans_and_non_finite_numbers_are_refused_in_a_metric_column(tmp_path, capsys, value, shown):
    path = tmp_path / "set.jsonl"
    path.write_text("".join(json.dumps({"context": ["c"], "response": f"r{i}", "score": i}).replace(
        "}", f', "m": {value if i == 2 else i / 10}}}') + "\n" for i in range(1, 5)))
    assert cli.main(["paireval", "meta-eval", "--input", str(path), "--metric", "m"]) == 2
    err = capsys.readouterr().err
    assert f"{path}, line 2, field 'm': {shown}" in err and "Traceback" not in err


@pytest.mark.parametrize("value", ["true", "Infinity", "inf", "NaN"])
def test_the_same_values_in_a_csv_metric_column_are_refused(tmp_path, capsys, value):
    path = tmp_path / "set.csv"
    path.write_text('context,response,score,m\n' + "".join(
        f'"[""c""]",r{i},{i},{value if i == 3 else i / 10}\n' for i in range(1, 5)))
    assert cli.main(["paireval", "meta-eval", "--input", str(path), "--metric", "m"]) == 2
    assert f"{path}, line 4, field 'm': " in capsys.readouterr().err


def test_a_blank_or_null_metric_value_is_an_abstention(tmp_path):
    frame = read_meta_eval(_jsonl(tmp_path / "set.jsonl", [0.1, None, 0.3, 0.2, 0.5], scores=(1, 2, 3, 4, 5)))
    result = meta_evaluate(frame, "m")
    assert result["n"] == 4 and result["missing"] == 1


@pytest.mark.parametrize("values, scores, said", [
    ([0.5, 0.5, 0.5, 0.5], (1, 2, 3, 4), "the same score (0.5): a correlation is undefined"),
    ([0, 1, 0, 1], (1, 2, 3, 4), "takes only 2 distinct values (0, 1)"),
    ([0.1, 0.2, 0.3, 0.4], (3, 3, 3, 3), "human 'score' column gives every one of the 4 scored items the same"),
])
def test_degenerate_scores_are_reported_with_a_non_zero_exit(tmp_path, capsys, values, scores, said):
    path = _jsonl(tmp_path / "set.jsonl", values, scores)
    with pytest.raises(DegenerateScoresError, match=re.escape(said)):
        meta_evaluate(read_meta_eval(path), "m")
    assert cli.main(["paireval", "meta-eval", "--input", str(path), "--metric", "m"]) == 2  # as every input error
    captured = capsys.readouterr()
    assert "degenerate scores" in captured.err and said in captured.err and "nan" not in captured.out


def test_duplicate_rows_are_counted_and_reported(tmp_path, capsys):
    path = tmp_path / "set.jsonl"
    rows = [{"context": ["a"], "response": "x", "score": 1, "m": 0.1},
            {"context": ["b"], "response": "y", "score": 2, "m": 0.4},
            {"context": ["a"], "response": "x", "score": 1, "m": 0.1},   # the same row pasted twice
            {"context": ["c"], "response": "z", "score": 4, "m": 0.9},
            {"context": ["b"], "response": "y", "score": 3, "m": 0.4}]  # same item, another rating
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    frame = read_meta_eval(path)
    found = duplicate_rows(frame)
    assert found["repeated"] == 2 and found["identical"] == 1 and found["examples"][0] == ("line 1", "line 3")
    assert meta_evaluate(frame, "m")["duplicates"] == 2
    assert cli.main(["paireval", "meta-eval", "--input", str(path), "--metric", "m"]) == 0
    err = capsys.readouterr().err
    assert "2 rows repeat an earlier row's context and response (1 with the same human score too; e.g. line 1 " \
           "and line 3; line 2 and line 5)" in err


def test_a_json_array_is_read_and_a_jsonl_array_refused_by_name(tmp_path):
    rows = [{"context": ["a"], "response": "x", "score": 1}, {"context": ["b"], "response": "y", "score": 2}]
    array = tmp_path / "set.json"
    array.write_text(json.dumps(rows, indent=2))
    assert read_meta_eval(array)["score"].tolist() == [1.0, 2.0]
    misnamed = tmp_path / "set.jsonl"
    misnamed.write_text(json.dumps(rows, indent=2))
    with pytest.raises(MetaEvalFormatError, match=rf"{misnamed}: holds a JSON array, not JSON Lines"):
        read_meta_eval(misnamed)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([rows[0], {**rows[1], "score": True}]))
    with pytest.raises(MetaEvalFormatError, match=rf"{bad}, item 1, field 'score': True is not a number"):
        read_meta_eval(bad)
    broken = tmp_path / "broken.json"
    broken.write_text('[\n {"context": ["a"],\n')
    with pytest.raises(MetaEvalFormatError, match=rf"{broken}, line 3: not JSON"):
        read_meta_eval(broken)
    lines = tmp_path / "lines.json"  # JSON Lines under a .json name is still read
    lines.write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert len(read_meta_eval(lines)) == 2
    frame = read_meta_eval(array)
    assert read_meta_eval(write_meta_eval(frame, tmp_path / "back.json"))["response"].tolist() == ["x", "y"]


def test_score_output_is_checked_before_any_work(tmp_path, capsys, monkeypatch):
    source = _jsonl(tmp_path / "set.jsonl", [0.1, 0.2, 0.3, 0.4])

    def no_work(*_args, **_kwargs):
        raise AssertionError("scored before the output path was checked")

    monkeypatch.setattr(cli.commands, "_paireval_score", no_work)
    (tmp_path / "folder").mkdir()
    for output, said in ((tmp_path / "x.txt", "unknown format '.txt'"), (tmp_path / "folder", "is a folder"),
                         (tmp_path / "noext", "unknown format '(no suffix)'")):
        assert cli.main(["paireval", "score", "--input", str(source), "--output", str(output),
                         "--method", "length"]) == 2
        assert f"{output}: {said}" in capsys.readouterr().err
    assert not (tmp_path / "x.txt").exists()
    with pytest.raises(MetaEvalFormatError, match="unknown format"):
        write_meta_eval(read_meta_eval(source), tmp_path / "x.txt")


def test_length_scores_written_as_json_are_read_by_meta_eval(tmp_path, capsys):
    source = _jsonl(tmp_path / "set.jsonl", [0.1, 0.2, 0.3, 0.4])
    source.write_text(source.read_text().replace('"r1"', '"a longer reply"').replace('"r3"', '"the longest reply here"'))
    out = tmp_path / "scored.json"
    assert cli.main(["paireval", "score", "--input", str(source), "--output", str(out), "--method", "length"]) == 0
    assert cli.main(["paireval", "meta-eval", "--input", str(out), "--metric", "length"]) == 0
    assert "n = 4" in capsys.readouterr().out


# --------------------------------------------------------------------------- user-proxy job files

def _mirror(path: Path, n: int = 6) -> Path:
    """n conversations, their stratum (1, 2 or 3+ user turns) cycling."""
    rows = []
    for i in range(n):
        turns = []
        for t in range(1 + i % 3):
            turns += [{"role": "user", "content": f"question {i} {t} about trains"},
                      {"role": "assistant", "content": f"answer {i} {t}"}]
        rows.append({"dataset": "tiny", "conversation_id": f"c{i}", "task_description": f"wants {i}",
                     "turns": turns, "metadata": {"language": "en"}})
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


@pytest.mark.parametrize("url, said", [
    ("not a url", "'not a url' is not an endpoint URL: expected http(s)://host[:port]/path"),
    ("127.0.0.1:8080/v1", "is not an endpoint URL"),
    ("ftp://host/v1", "is not an endpoint URL"),
    ("http:///v1", "is not an endpoint URL"),
    ("http://user:hunter2@127.0.0.1:99999/v1", "the port must be a number from 1 to 65535"),
])
def test_plan_refuses_an_endpoint_that_is_not_a_url(tmp_path, capsys, url, said):
    path = tmp_path / "job.yml"
    path.write_text(f"metrics: [gteval]\njudges: {{j: {{kind: openai, model: m, base_url: '{url}'}}}}\n")
    with pytest.raises(job.JobConfigError, match=rf"^{path}, field 'judges\.j\.base_url': "):
        job.load_job(path)
    assert cli.main(["userproxy", "plan", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert said in err and "hunter2" not in err


def test_plan_refuses_url_credentials_beside_an_api_key_before_any_call(tmp_path, capsys, monkeypatch):
    """One request has one Authorization header: the plan says so, naming the field, and prints no secret."""
    path = tmp_path / "job.yml"
    path.write_text("metrics: [gteval]\njudges: {j: {kind: openai, model: m, base_url: "
                    "'https://user:hunter2secret@h/v1', options: {api_key_env: EVALKIT_TEST_KEY}}}\n")
    monkeypatch.setenv("EVALKIT_TEST_KEY", "sk-not-printed-123")
    assert cli.main(["userproxy", "plan", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert "field 'judges.j.base_url'" in err and "one Authorization header" in err
    assert "hunter2secret" not in err and "sk-not-printed-123" not in err
    monkeypatch.delenv("EVALKIT_TEST_KEY")
    job.load_job(path)  # without the key there is no conflict


def test_episodes_are_honoured_or_the_job_is_refused(tmp_path, capsys):
    _mirror(tmp_path / "tiny_mirror.jsonl")
    path = tmp_path / "job.yml"
    path.write_text("datasets: [tiny_mirror.jsonl]\nmetrics: [mattr]\nepisodes: 2\nminimum_per_stratum: 3\n")
    with pytest.raises(job.JobConfigError, match=rf"{path}, field 'episodes': 2 cannot give a stratum its "
                                                 r"minimum_per_stratum of 3"):
        job.load_job(path)
    # Three strata with at least one conversation each: two episodes cannot be drawn without a third.
    path.write_text("datasets: [tiny_mirror.jsonl]\nmetrics: [mattr]\nepisodes: 2\nminimum_per_stratum: 1\n")
    assert cli.main(["userproxy", "plan", "--config", str(path)]) == 2
    assert "field 'episodes': 2 episodes cannot give each of the 3 strata of tiny (datasets[0]) its " \
           "minimum_per_stratum of 1: the sample would hold 3" in capsys.readouterr().err
    path.write_text("datasets: [tiny_mirror.jsonl]\nmetrics: [mattr]\nepisodes: 3\nminimum_per_stratum: 1\n"
                    "store: runs.sqlite\n")
    assert cli.main(["userproxy", "plan", "--config", str(path)]) == 0


def test_report_after_an_edit_of_the_job_says_the_runs_differ(tmp_path, capsys):
    _mirror(tmp_path / "tiny_mirror.jsonl")
    path = tmp_path / "job.yml"
    path.write_text("datasets: [tiny_mirror.jsonl]\nmetrics: [mattr]\nepisodes: 3\nstore: runs.sqlite\n")
    assert cli.main(["userproxy", "report", "--config", str(path)]) == 2  # nothing stored: no store created
    assert "no run store there" in capsys.readouterr().err and not (tmp_path / "runs.sqlite").exists()
    config = job.load_job(path)
    store = RunStore(config.store)
    store.open_run(config.run_id(), config.name, config.identity(), job.plan(config))
    store.close()
    path.write_text(path.read_text() + "seeds: [0, 1]\n")
    assert cli.main(["userproxy", "report", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert "the job file differs from the one the stored run(s) used" in err and config.run_id() in err
    assert "IndexError" not in err and "Traceback" not in err
    assert cli.main(["userproxy", "report", "--config", str(path), "--run", config.run_id(),
                     "--json", str(tmp_path / "r.json")]) == 0
    assert json.loads((tmp_path / "r.json").read_text())["run"]["run_id"] == config.run_id()


# --------------------------------------------------------------------------- read-only, nothing to do, pipes

def _foreign_database(path: Path) -> Path:
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE people (name TEXT)")
    connection.execute("INSERT INTO people VALUES ('Ada')")
    connection.commit()
    connection.close()
    return path


def _tables_and_journal(path: Path) -> tuple[list[str], str]:
    connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        tables = [name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return tables, connection.execute("PRAGMA journal_mode").fetchone()[0]
    finally:
        connection.close()


@pytest.mark.parametrize("action", ["stats", "purge"])
def test_cache_commands_leave_another_programs_database_unchanged(tmp_path, capsys, action):
    foreign = _foreign_database(tmp_path / "other.sqlite")
    before = _sha(foreign)
    assert cli.main(["cache", action, "--path", str(foreign)]) == 2
    err = capsys.readouterr().err
    assert "not an evalkit model-call cache" in err and "no table 'calls'" in err and "left unchanged" in err
    assert _sha(foreign) == before and _tables_and_journal(foreign) == (["people"], "delete")
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    assert cli.main(["cache", action, "--path", str(empty)]) == 2
    assert "an empty file, not an evalkit model-call cache" in capsys.readouterr().err
    assert empty.stat().st_size == 0
    text = tmp_path / "notes.sqlite"
    text.write_text("hello, not a database at all " * 40)
    assert cli.main(["cache", action, "--path", str(text)]) == 2
    assert "not an evalkit model-call cache (SQLite says" in capsys.readouterr().err


def test_cache_stats_reads_a_real_cache_and_says_when_there_is_none(tmp_path, capsys, monkeypatch):
    from evalkit.models.cache import CallCache

    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "nothing-yet"))
    assert cli.main(["cache", "stats"]) == 1
    assert "no cache there yet" in capsys.readouterr().err and not (tmp_path / "nothing-yet").exists()
    cache = CallCache(tmp_path / "calls.sqlite")
    cache.put_many([("k1", "hash:a", "generate", {"x": 1}), ("k2", "hash:a", "generate", {"x": 2})])
    cache.close()
    assert cli.main(["cache", "stats", "--path", str(tmp_path / "calls.sqlite")]) == 0
    assert "2 cached calls" in capsys.readouterr().out
    assert cli.main(["cache", "purge", "--path", str(tmp_path / "calls.sqlite"), "--backend", "hash:b"]) == 1
    assert "no cached calls of backend 'hash:b'; nothing to purge (backends cached: hash:a)" in capsys.readouterr().err
    assert cli.main(["cache", "purge", "--path", str(tmp_path / "calls.sqlite")]) == 0
    assert "purged 2 cached calls" in capsys.readouterr().out


def test_a_closed_pipe_ends_the_command_quietly(tmp_path):
    from evalkit.models.cache import CallCache

    cache = CallCache(tmp_path / "calls.sqlite")
    cache.put_many([(f"k{i}", f"backend-{i}", "generate", {"x": i}) for i in range(300)])
    cache.close()
    reader_gone = subprocess.Popen([sys.executable, "-m", "evalkit.cli.commands", "cache", "stats", "--path",
                                    str(tmp_path / "calls.sqlite")], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    reader_gone.stdout.close()  # `| head` that has already gone away
    err = reader_gone.stderr.read().decode()
    assert reader_gone.wait(timeout=120) == 141
    assert "BrokenPipeError" not in err and "Traceback" not in err and "Exception ignored" not in err


def test_bench_with_an_unknown_name_runs_nothing_and_writes_no_page(tmp_path, capsys):
    page = tmp_path / "performance.md"
    assert cli.main(["bench", "--only", "nonexistent", "--page", str(page)]) == 2
    err = capsys.readouterr().err
    known = ", ".join(sorted(path.stem for path in benchpage.BENCHMARK_DIR.glob("*.py") if not path.name.startswith("_")))
    assert f"no benchmark matches 'nonexistent'; known benchmarks: {known}" in err
    assert not page.exists()
    with pytest.raises(ValueError, match="no benchmark scripts"):
        benchpage.run_benchmarks(tmp_path)


# --------------------------------------------------------------------------- FED with checksums off

def _fed(tmp_path: Path, records) -> Path:
    root = tmp_path / "metaeval" / "fed"
    root.mkdir(parents=True)
    (root / "fed_data.json").write_text(records if isinstance(records, str) else json.dumps(records))
    return tmp_path


_TURN = {"context": "User: Hi\nSystem: Hello", "response": "System: Fine", "system": "Meena",
         "annotations": {"Overall": [3, 4], "Relevant": [1, 1]}}
_DIALOGUE = {"context": "User: Hi\nSystem: Hello", "system": "Human", "annotations": {"Overall": [4], "Coherent": [3]}}


def test_a_malformed_fed_file_is_named(tmp_path):
    data = _fed(tmp_path, '[\n  {"context": "x",\n')
    with pytest.raises(MetaEvalFormatError, match=r"fed_data\.json, line 3, column 1: not JSON"):
        metaeval.load_meta_eval_set("fed", data_dir=data, verify=False)


def test_a_fed_file_that_is_not_an_array_is_named(tmp_path):
    data = _fed(tmp_path, {"items": []})
    with pytest.raises(MetaEvalFormatError, match=r"fed_data\.json: expected a JSON array of items, got dict"):
        metaeval.load_meta_eval_set("fed", data_dir=data, verify=False)


def test_a_renamed_fed_key_drops_the_item_counted_and_named(tmp_path, capsys, monkeypatch):
    renamed = {**{k: v for k, v in _TURN.items() if k != "response"}, "Response": "System: Fine"}
    data = _fed(tmp_path, [_TURN, _DIALOGUE, renamed, {**_TURN, "response": "System: Good"}])
    loaded = metaeval.load_meta_eval_set("fed", data_dir=data, verify=False)
    assert loaded.items["response"].tolist() == ["Fine", "Good"]  # the dialogue-level item is not a turn item
    why = "turn-level item without 'response' (a renamed key?)"
    assert loaded.report.items_read == 3 and loaded.report.items_dropped == {why: 1}
    assert loaded.report.items_dropped_where == [("fed_data.json", "item 2", why)]
    assert loaded.report.summary().set_index("what")["count"][f"items dropped: {why}"] == 1
    import evalkit.paireval

    monkeypatch.setattr(evalkit.paireval, "load_meta_eval_set",
                        lambda name, **_: metaeval.MetaEvalSet(loaded.name, loaded.items.copy(), loaded.report))
    cli.main(["paireval", "meta-eval", "--dataset", "fed", "--method", "length"])
    assert "note: fed: 1 of 3 items dropped (1 turn-level item without 'response' (a renamed key?)); e.g. " \
           "fed_data.json item 2" in capsys.readouterr().err


@pytest.fixture(autouse=True)
def _never_run_a_notebook(monkeypatch):
    """A parameter set that slipped through would run every chapter (minutes, models): fail fast instead."""
    import papermill

    def refuse(*_args, **_kwargs):
        raise AssertionError("a notebook was started: the parameter set was not refused")

    monkeypatch.setattr(papermill, "execute_notebook", refuse)


def test_fed_and_usr_keep_each_rating_with_its_rater_beside_the_mean(tmp_path):
    """The ceiling needs every rating: FED's (no rater named: one per item) and USR's (named annotators); a
    text rating is left out of both the mean and the pairs, and counted."""
    from evalkit.judgecard.sets import from_meta_eval

    data = _fed(tmp_path, [_TURN, _DIALOGUE, {**_TURN, "response": "System: Good",
                                              "annotations": {"Overall": [2, "n/a", 4]}}])
    loaded = metaeval.load_meta_eval_set("fed", data_dir=data, verify=False)
    assert list(loaded.items["score"]) == [3.5, 3.0]
    assert [pairs for pairs in loaded.items["ratings"]] == [[("fed:0:0", 3.0), ("fed:0:1", 4.0)],
                                                            [("fed:2:0", 2.0), ("fed:2:2", 4.0)]]
    assert loaded.report.ratings_dropped == [("fed_data.json", "item 2", "Overall", "n/a")]
    usr = tmp_path / "metaeval" / "usr"
    usr.mkdir(parents=True)
    (usr / "readme.md").write_text("USR\n")
    (usr / "usr_percona_chat.json").write_text("[]")
    (usr / "usr_topical_chat.json").write_text(json.dumps([{
        "context": "hi there\nhello", "fact": "", "annotators": ["ann", "bo", "cy"],
        "responses": [{"response": "fine", "model": "Original Ground Truth", "Overall": [5, 4, 4]},
                      {"response": "what", "model": "kv", "Overall": [1, 2, 2]}]}]))
    topical = metaeval.load_meta_eval_set("topicalchat-usr", data_dir=tmp_path, verify=False)
    assert [r for r, _ in topical.items["ratings"].iloc[1]] == ["ann", "bo", "cy"]
    rated = from_meta_eval(topical.items, "topicalchat-usr")
    assert rated.no_ratings == "" and len(rated.ratings) == 6 and set(rated.ratings["rater"]) == {"ann", "bo", "cy"}
    assert "ratings" not in rated.items.columns


@pytest.mark.parametrize("name, text", [
    ("deep.jsonl", '{"context": ["a"], "response": "x", "score": 1, "extra": ' + "[" * 100000 + "]" * 100000 + "}\n"),
    ("deep.json", "[" * 100000 + "]" * 100000),
    ("deep.csv", 'context,response,score\n"' + "[" * 5000 + "]" * 5000 + '",x,1\n'),  # a CSV cell holds 128 KB
])
@pytest.mark.parametrize("action", ["meta-eval", "score"])
def test_deeply_nested_json_is_an_input_error_naming_the_file(tmp_path, capsys, name, text, action):
    """Python's JSON reader raises RecursionError on deep nesting: it ended as "maximum recursion depth
    exceeded" with no file named. It is an input error (exit status 2) naming the file (and line)."""
    path = tmp_path / name
    path.write_text(text)
    arguments = ["paireval", action, "--input", str(path), "--method", "length"]
    assert cli.main(arguments + (["--output", str(tmp_path / "out.jsonl")] if action == "score" else [])) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"evalkit: {path}") and "nested too deeply" in error and "recursion" not in error
