"""Bad job and grid files get an error naming the file and the field (or line) before anything runs."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit import grid
from evalkit.userproxy import job

JOB_PROBES = [
    ("datasets: [null]\n", r"field 'datasets\[0\]': expected a non-empty text"),
    ("datasets: [{name: qulac}]\n", r"field 'datasets\[0\]': expected a non-empty text, got dict"),
    ("datasets: []\n", r"field 'datasets': expected at least one value"),
    ("datasets: [missing_mirror.jsonl]\n", r"field 'datasets\[0\]': no such file .*missing_mirror.jsonl"),
    ("seeds: 3\n", r"field 'seeds': expected a list, e\.g\. \[0, 1\], got int 3"),
    ("seeds: [0, -1]\n", r"field 'seeds\[1\]': must be at least 0, got -1"),
    ("seeds: ['1']\n", r"field 'seeds\[0\]': expected a whole number, got the text '1'"),
    ("proxies: {p: {temperature: hot}}\n", r"field 'proxies\.p\.temperature': expected a number, got the text 'hot'"),
    ("proxies: {p: {temperature: -0.5}}\n", r"field 'proxies\.p\.temperature': must be at least 0"),
    ("proxies: {p: 42}\n", r"field 'proxies\.p': expected a mapping of fields, got int 42"),
    ("proxies: {p: {modle: x}}\n", r"field 'proxies\.p': unknown field\(s\) modle"),
    ('guided: "false"\n', r"field 'guided': expected true or false, got the text 'false' \(write it without quotes\)"),
    ('controls: "no"\n', r"field 'controls': expected true or false, got the text 'no'"),
    ("bootstrap: -5\n", r"field 'bootstrap': must be at least 0, got -5"),
    ("episodes: 2.5\n", r"field 'episodes': expected a whole number, got float 2.5"),
    ("name: ''\n", r"field 'name': expected a non-empty text"),
    ("judges: {j: {kind: openai, model: m, options: 3}}\n", r"field 'judges\.j\.options': expected a mapping"),
    ("mode: multi\n  bad: [\n", r"line \d+, column \d+: not valid YAML"),
    ("judges: {j: {kind: openai, model: m, base_url: 'http://h/v1', options: {bogus: 1}}}\n",
     r"field 'judges\.j\.options': unknown field\(s\) bogus"),
    ("judges: {j: {kind: openai, model: m, base_url: 'http://h/v1', options: {timeout_s: soon}}}\n",
     r"field 'judges\.j\.options\.timeout_s': expected a number"),
    ("judges: {j: {kind: openai, model: m, base_url: 'http://h/v1', options: {deadline_s: 0}}}\n",
     r"field 'judges\.j\.options\.deadline_s': must be above 0"),
    ("assistant: {options: {dtype: float8}}\n", r"field 'assistant\.options\.dtype': 'float8' is not one of"),
    ("seeds: [0, 0]\n", r"field 'seeds': 0 given more than once"),
    ("datasets: [qulac, qulac]\n", r"field 'datasets': qulac given more than once"),
    ("data_dir: /no/such/folder\n", r"field 'data_dir': /no/such/folder is not a directory"),
]


@pytest.mark.parametrize("text, message", JOB_PROBES, ids=[p[0].strip()[:30] for p in JOB_PROBES])
def test_bad_job_files_name_the_file_and_field(tmp_path: Path, text: str, message: str):
    path = tmp_path / "job.yml"
    path.write_text(text)
    with pytest.raises(job.JobConfigError, match=rf"^{path}.*{message}"):
        job.load_job(path)


def test_a_job_file_that_is_not_utf8_is_named(tmp_path: Path):
    path = tmp_path / "job.yml"
    path.write_bytes(b"name: caf\xe9\n")
    with pytest.raises(job.JobConfigError, match=rf"{path}: not UTF-8 text"):
        job.load_job(path)


def test_a_proxy_given_as_a_model_name_is_that_model(tmp_path: Path):
    path = tmp_path / "job.yml"
    path.write_text("proxies: {p: some/model}\n")
    assert job.load_job(path).proxies["p"].model.model == "some/model"


def test_python_built_configurations_get_the_same_checks():
    with pytest.raises(job.JobConfigError, match=r"job configuration, field 'guided': expected true or false"):
        job.JobConfig(guided="false")
    with pytest.raises(job.JobConfigError, match=r"field 'seeds\[0\]': must be at least 0"):
        job.JobConfig(seeds=[-1])


GRID_PROBES = [
    ("kind: command\ncommand: [echo, '{sede}']\ngrid: {seed: [1, 2]}\n",
     r"field 'command\[1\]': placeholder \{sede\} names no parameter \(parameters: seed\)"),
    ("kind: command\ncommand: [echo]\ngrid: {seed: [1]}\ntimeout_s: soon\n",
     r"field 'timeout_s': expected a number, got the text 'soon'"),
    ("kind: command\ncommand: [echo]\ngrid: {seed: [1]}\ntimeout_s: 0\n", r"field 'timeout_s': must be above 0"),
    ("kind: command\ncommand: [echo]\ngrid: {seed: 1}\n", r"field 'grid\.seed': expected a list"),
    ("kind: command\ncommand: [echo]\ngrid: {seed: [1]}\nretries: -1\n", r"field 'retries': must be at least 0"),
    ("kind: command\ncommand: [echo]\ngrid: {seed: [1]}\nworkers: two\n", r"field 'workers': expected a whole number"),
    ("kind: command\ncommand: [echo\ngrid: {seed: [1]}\n", r"line \d+, column \d+: not valid YAML"),
    ("kind: shell\ngrid: {seed: [1]}\n", r"field 'kind': 'shell' is not one of notebook, command"),
    ("kind: command\ncommand: [echo]\ngrid: {s: [1, 1]}\n", r"field 'grid\.s': 1 listed more than once"),
    ("kind: command\ncommand: [echo, '{s}']\ngrid: {s: [1, 2]}\nfixed: {s: 5}\n", r"field 'fixed': s also in grid"),
    ("kind: command\ncommand: [no-such-program-xyz]\ngrid: {s: [1]}\n",
     r"field 'command\[0\]': 'no-such-program-xyz' is not a program on PATH"),
    ("kind: notebook\nnotebook: 02_agreement\ngrid: {sede: [1, 2]}\n",
     r"field 'grid': sede not a parameter of 02_agreement \(its parameters: "),
    ("kind: notebook\nnotebook: 02_agreement\ngrid: {seed: [1]}\nbase_params: smokey\n",
     r"field 'base_params': no parameter set 'smokey'"),
    ("kind: command\ncommand: [echo]\ngrid: {s: [1]}\ngrid: {s: [2]}\n", r"line 4, column 1: .*key 'grid' is given twice"),
]


@pytest.mark.parametrize("text, message", GRID_PROBES, ids=[p[1][:30] for p in GRID_PROBES])
def test_bad_grid_files_name_the_file_and_field(tmp_path: Path, text: str, message: str):
    path = tmp_path / "grid.yml"
    path.write_text(text)
    with pytest.raises(grid.GridSpecError, match=rf"^{path}.*{message}"):
        grid.load_grid(path)


def test_placeholders_may_name_fixed_values_and_leave_other_braces(tmp_path: Path):
    path = tmp_path / "grid.yml"
    path.write_text("kind: command\ncommand: [echo, '{seed}', '{model}', '{\"a\": 1}']\n"
                    "grid: {seed: [1]}\nfixed: {model: m}\n")
    spec = grid.load_grid(path)
    assert [u.params for u in grid.expand(spec)] == [{"model": "m", "seed": 1}]




def test_credentials_in_an_endpoint_never_reach_the_run_identity(tmp_path: Path):
    path = tmp_path / "job.yml"
    path.write_text("judges: {j: {kind: openai, model: m, base_url: 'http://user:hunter2secret@h/v1'}}\n")
    config = job.load_job(path)
    assert config.judges["j"].base_url == "http://user:hunter2secret@h/v1"  # what the calls use
    assert "hunter2secret" not in json.dumps(config.identity())  # what the run store and reports keep


def test_a_key_from_the_environment_in_an_endpoint_never_reaches_the_run_identity(tmp_path: Path, monkeypatch):
    """The run store keeps an endpoint as a card does (evalkit.models.public_endpoint): a key copied from the
    environment into the URL's path is masked as well as user-info and query values."""
    monkeypatch.setenv("MYCORP_API_KEY", "envkey-7f3a9c1d2e")
    path = tmp_path / "job.yml"
    path.write_text("judges: {j: {kind: openai, model: m, base_url: 'http://h/envkey-7f3a9c1d2e/v1?sig=s1g2n3d4'}}\n")
    identity = json.dumps(job.load_job(path).identity())
    assert "envkey-7f3a9c1d2e" not in identity and "s1g2n3d4" not in identity and "http://h/***/v1?sig=***" in identity
