"""Credentials in the forms a hostile probe of the grid's masking used — a list parameter mixing texts with numbers,
records and tables a program prints, command-line forms of particular programs, key shapes under a neutral
parameter name — are absent from every file of the grid's output folder and from what the driver prints, while
ordinary arguments, numbers, model ids and paths stay readable."""
from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
import yaml

from evalkit.cli.commands import main
from evalkit.grid.command_secrets import _command_secrets
from evalkit.grid.masking import _public_command, _secrets, _shown
from evalkit.grid.printed_secrets import output_secrets
from evalkit.models.redaction import redact
from tests.grid.test_masking_general import _leaks

# A program that prints its arguments and one JSON result.
ECHO = "import json, sys; print('argv:', ' '.join(sys.argv[1:])); print(json.dumps({'ok': 1}))"


def _run(tmp_path: Path, capfd, raw: dict) -> tuple[int, str]:
    path = tmp_path / "grid.yml"
    path.write_text(yaml.safe_dump({"name": "probe", "kind": "command", "out": "out", "retries": 0, "workers": 1,
                                    **raw}))
    code = main(["grid", "--spec", str(path)])
    captured = capfd.readouterr()
    return code, captured.out + captured.err


# 1. A list parameter read as arguments, its numbers, booleans and nulls as their text.
MIXED_LISTS = {"--password X --port 5432": (["--password", "Pq01-mixport", "--port", 5432], "Pq01-mixport"),
               "--password X true": (["--password", "Pq02-mixbool", True], "Pq02-mixbool"),
               "--token X null": (["--token", "Pq03-mixnull", None], "Pq03-mixnull"),
               "--api-key X 1.5": (["-n", 3, "--api-key", "Pq04-mixfloat", "--temperature", 1.5], "Pq04-mixfloat")}


@pytest.mark.parametrize("form", sorted(MIXED_LISTS))
def test_a_list_mixing_texts_and_numbers_is_read_as_arguments(form):
    value, secret = MIXED_LISTS[form]
    assert secret in _secrets({"db_args": value}) and not _shown("db_args", value)


def test_mixed_list_parameters_leak_nowhere_and_ordinary_lists_stay(tmp_path, capfd):
    code, printed = _run(tmp_path, capfd, {
        "command": [sys.executable, "-c", ECHO, "{db_args}"],
        "grid": {"db_args": [value for value, _ in MIXED_LISTS.values()]}})
    assert code == 0, printed
    assert not _leaks(tmp_path / "out", printed, [secret for _, secret in MIXED_LISTS.values()])
    assert "5432" in printed or "5432" in "".join(p.read_text() for p in (tmp_path / "out").rglob("stdout.txt"))
    assert _secrets({"opts": ["--port", 5432, "--model", "gpt2-small", True, None]}) == []
    assert _shown("opts", ["--port", 5432, "--model", "gpt2-small"])


# 2. Records and tables a program prints.
PRINTED = {
    "aws ssm": ('{"Parameter": {"Name": "/prod/db/password", "Type": "SecureString", "Value": "Pr01-ssmval", '
                '"Version": 1}}', "Pr01-ssmval"),
    "ssm String type": ('{"Parameter": {"Name": "/prod/api_token", "Type": "String", "Value": "Pr02-ssmstr"}}',
                        "Pr02-ssmstr"),
    "az storage keys": ('[{"keyName": "key1", "permissions": "FULL", "value": "Pr03-azkey+abc=="}]',
                        "Pr03-azkey+abc=="),
    "az keyvault": ('{"attributes": {"enabled": true}, "id": "https://v.vault.azure.net/secrets/db/1", '
                    '"value": "Pr04-kvval"}', "Pr04-kvval"),
    "mysql box": ("+----------+-------------+\n| name     | value       |\n+----------+-------------+\n"
                  "| password | Pr05-mysqlbox |\n+----------+-------------+", "Pr05-mysqlbox"),
    "psql aligned": ("   name   |    value\n----------+-------------\n password | Pr06-psqlrow\n", "Pr06-psqlrow"),
    "spaced name": ("API Key: Pr07-spaced", "Pr07-spaced"),
    "nested map": ('{"secrets": {"openai": "Pr08-nested", "hf": "Pr09-nested"}}', "Pr08-nested"),
    "pgp block": ("-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG\n\nlQdGBGPr10pgpbody7xQwerty\n=abcd\n"
                  "-----END PGP PRIVATE KEY BLOCK-----", "lQdGBGPr10pgpbody7xQwerty"),
    "Name/Value env": ('[{"Name": "DB_PASSWORD", "Value": "Pr11-envval"}]', "Pr11-envval"),
    "entry key": ('<entry key="db.password">Pr12-entry</entry>', "Pr12-entry"),
    "setenv": ("setenv API_TOKEN Pr13-setenv", "Pr13-setenv"),
    "option in a message": ('{"msg": "login with --password Pr14-msgopt"}', "Pr14-msgopt"),
}


@pytest.mark.parametrize("form", sorted(PRINTED))
def test_each_printed_form_is_read(form):
    text, secret = PRINTED[form]
    assert secret in output_secrets(text)


def test_printed_forms_leak_nowhere(tmp_path, capfd):
    printer = "import json; print(open('printed.txt').read()); print(json.dumps({'ok': 1}))"
    (tmp_path / "printed.txt").write_text("\n".join(text for text, _ in PRINTED.values()))
    code, printed = _run(tmp_path, capfd, {"command": [sys.executable, "-c", printer], "grid": {"seed": [1]}})
    assert code == 0, printed
    secrets = [secret for _, secret in PRINTED.values()] + ["Pr09-nested"]
    assert not _leaks(tmp_path / "out", printed, secrets)


def test_ordinary_printed_records_stay_readable():
    text = ('{"Credentials": {"AccessKeyId": "ASIAEXAMPLE", "SecretAccessKey": "wJal-x9", "Expiration": "2026-01-01T00:00:00Z"}}\n'
            '[{"name": "region", "value": "eu-west-1"}, {"keyName": "key1", "value": null}]\n'
            '{"id": "/subscriptions/1/resourceGroups/rg", "value": "westeurope"}\n'
            "| name | value |\n| port | 5432 |\n model | gpt2-small\nMax tokens: 64\nAPI version: 2024-02-01\n"
            '<entry key="db.host">db.internal</entry>\n{"labels": {"team": "eval"}}\nsetenv LANG en_US.UTF-8\n'
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\n-----END PGP PRIVATE KEY BLOCK-----\n"
            "usage: tool [--password PASSWORD] [--token-limit 4096] [--password-file /etc/pw.txt]")
    found = output_secrets(text)
    for readable in ("ASIAEXAMPLE", "2026-01-01T00:00:00Z", "eu-west-1", "westeurope", "5432", "gpt2-small", "64",
                     "2024-02-01", "db.internal", "db.password", "eval", "en_US.UTF-8", "Version: GnuPG v2",
                     "PASSWORD", "4096", "/etc/pw.txt"):
        assert readable not in found, (readable, found)


# 3. Command-line forms of particular programs.
COMMANDS = {
    "httpie bearer": (["http", "-A", "bearer", "-a", "Pc01-httpie", "https://h"], "Pc01-httpie"),
    "xh --auth-type=bearer": (["xh", "--auth-type=bearer", "--auth", "Pc02-xhtok", "https://h"], "Pc02-xhtok"),
    "x-functions-key": (["curl", "-H", "x-functions-key: Pc03-funckey", "https://h"], "Pc03-funckey"),
    "X-JFrog-Art-Api": (["curl", "-H", "X-JFrog-Art-Api: Pc04-jfrog", "https://h"], "Pc04-jfrog"),
    "jsessionid": (["curl", "https://h/api;jsessionid=Pc05-jsess"], "Pc05-jsess"),
    "yt-dlp -p": (["yt-dlp", "-u", "bob", "-p", "Pc06-ytdlp", "https://h"], "Pc06-ytdlp"),
    "youtube-dl -p": (["youtube-dl", "-p", "Pc07-ytdl", "https://h"], "Pc07-ytdl"),
    "airflow users create -p": (["airflow", "users", "create", "-u", "bob", "-p", "Pc08-airflow", "-r", "Admin"],
                                "Pc08-airflow"),
    "p4 -P": (["p4", "-P", "Pc09-p4tick", "sync"], "Pc09-p4tick"),
    "kaggle config set": (["kaggle", "config", "set", "-n", "key", "-v", "Pc10-kaggle"], "Pc10-kaggle"),
    "isql DSN USER PW": (["isql", "MyDSN", "bob", "Pc11-isql"], "Pc11-isql"),
    "duckdb CREATE SECRET": (["duckdb", "-c", "CREATE SECRET (TYPE s3, KEY_ID AKIAX, SECRET 'Pc12-duck')"],
                             "Pc12-duck"),
    "chpasswd pair": (["sh", "-c", "echo bob:Pc13-chpw | chpasswd"], "Pc13-chpw"),
    "snmpget -c": (["snmpget", "-v2c", "-c", "Pc14-snmp", "h", "sysName.0"], "Pc14-snmp"),
    "cmdkey /pass:": (["cmdkey", "/add:h", "/user:bob", "/pass:Pc15-cmdkey"], "Pc15-cmdkey"),
    "schtasks /rp": (["schtasks", "/create", "/tn", "t", "/ru", "bob", "/rp", "Pc16-schtask"], "Pc16-schtask"),
    "psexec -p": (["PsExec.exe", "\\\\h", "-u", "bob", "-p", "Pc17-psexec", "cmd"], "Pc17-psexec"),
    "wmic /password:": (["wmic", "/node:h", "/user:bob", "/password:Pc18-wmic", "os", "get"], "Pc18-wmic"),
}


@pytest.mark.parametrize("form", sorted(COMMANDS))
def test_each_command_form_is_read_and_masked(form):
    command, secret = COMMANDS[form]
    assert secret in _command_secrets(command)
    assert not any(secret in argument for argument in _public_command(command))


def test_command_forms_leak_nowhere_in_a_grid(tmp_path, capfd):
    secrets = [secret for _, secret in COMMANDS.values()]
    line = " ; ".join(shlex.join(command) for command, _ in COMMANDS.values() if command[0] != "sh")
    code, printed = _run(tmp_path, capfd, {"command": [sys.executable, "-c", ECHO, line], "grid": {"seed": [1]}})
    assert code == 0, printed
    assert not _leaks(tmp_path / "out", printed, [s for s in secrets if s != "Pc13-chpw"])


def test_ordinary_command_lines_stay_readable():
    for command in (["airflow", "webserver", "-p", "8080"], ["snmpget", "-v2c", "-c", "public", "h", "sysName.0"],
                    ["msbuild", "/p:Configuration=Release"], ["curl", "-H", "Idempotency-Key: abc12345", "https://h"],
                    ["curl", "-H", "X-Request-Id: req-12345", "https://h"], ["http", "-a", "bob", "https://h"],
                    ["kaggle", "config", "set", "-n", "path", "-v", "/data/kaggle"],
                    ["robocopy", "/src", "/dst", "/mir"], ["duckdb", "-c", "SELECT 'secret' AS word"],
                    ["isql", "-v", "MyDSN"], ["p4", "-p", "ssl:perforce:1666", "sync"]):
        assert _command_secrets(command) == [] and _public_command(command) == command, command


# 4. Key shapes under a neutral parameter name.
SHAPES = ["ASIAQW7ZK2LMXPABCDEF", "dapiQw7Zk2LmXpAbCdEfGhIjKl0123456789", "ATATT3xFfGF0Qw7Zk2LmXpAbCdEfGh",
          "figd_Qw7Zk2LmXpAbCdEfGhIjKl", "nfp_Qw7Zk2LmXpAbCdEfGhIjKl", "lin_api_Qw7Zk2LmXpAbCdEfGhIjKl",
          "sq0atp-Qw7Zk2LmXpAbCdEf"]


@pytest.mark.parametrize("key", SHAPES)
def test_key_shapes_are_masked_in_any_text(key):
    assert key not in redact(f"tag {key} end") and not _shown("tag", key)


def test_key_shapes_under_a_neutral_name_leak_nowhere_and_ordinary_words_stay(tmp_path, capfd):
    code, printed = _run(tmp_path, capfd, {"command": [sys.executable, "-c", ECHO, "{tag}"], "grid": {"tag": SHAPES}})
    assert code == 0, printed
    assert not _leaks(tmp_path / "out", printed, [key[4:] for key in SHAPES])
    for word in ("ASIAN", "ASIAPACIFIC", "dapi", "figd_x", "lin_api_doc", "nfp_ok", "meta-llama/Llama-3.1-8B",
                 "ATATT", "sq0atp-x"):
        assert redact(word) == word and _shown("tag", word) or "/" in word, word


# 5. A value that is a piece of an environment credential: a key without its prefix, a number inside a key.
ENV_KEY = "sk-proj-Qm7Rt2Vx9Lp4Kd8Wn3Hs"
PIECE = ENV_KEY.removeprefix("sk-proj-")


def test_a_piece_of_an_environment_key_leaks_nowhere_and_reruns_find_the_unit(tmp_path, capfd, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    monkeypatch.setenv("HF_TOKEN", "hf_Xa83456019Lq")
    raw = {"command": [sys.executable, "-c", ECHO, "--model", "{model}", "--seed", "{seed}"],
           "grid": {"model": [PIECE, f"gpt-4o-{PIECE[:9]}", "gpt2-small"], "seed": [1, 83456019]}}
    code, printed = _run(tmp_path, capfd, raw)
    assert code == 0 and "6 units run, 0 skipped" in printed, printed
    out = tmp_path / "out"
    # the piece, any 6-character run of it, and the number cut from the token: in no file, folder name or line
    runs = [PIECE[i:i + 6] for i in range(len(PIECE) - 5)] + ["83456019"]
    assert not _leaks(out, printed, runs), _leaks(out, printed, runs)
    folders = sorted(p.name for p in (out / "units").iterdir())
    assert len(folders) == 6 and sum(f.startswith("model=gpt2-small,seed=1-") for f in folders) == 1, folders
    assert sum(f.startswith("model=gpt2-small-") for f in folders) == 1, folders  # its seed is left out
    table = (out / "results.csv").read_text()
    assert table.count(",gpt-4o***,") == 2 and "gpt2-small" in table and table.count("***") == 7, table
    # a rerun under the same environment finds every unit finished
    code, printed = _run(tmp_path, capfd, raw)
    assert code == 0 and "0 units run, 6 skipped" in printed, printed


def test_a_piece_of_a_credential_is_never_shown_in_a_unit_id(monkeypatch):
    from evalkit.grid import GridUnit

    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    command = json.dumps(["tool", "--password", "Zr5-pw-Kq81xT", "{x}"])
    for params in ({"model": PIECE}, {"model": PIECE[3:12]}, {"tag": ["a", PIECE]}, {"x": "Kq81xT-extra"}):
        unit = GridUnit("command", command, {"seed": 1, **params})
        assert unit.unit_id.startswith("seed=1-"), unit.unit_id
        assert not [run for run in (PIECE[i:i + 6] for i in range(len(PIECE) - 5)) if run in unit.unit_id]
        assert "Kq81xT" not in unit.unit_id and "Kq81xT" not in json.dumps(unit.public())
        assert PIECE[3:9] not in json.dumps(unit.public()), unit.public()
    # ordinary values stay in the id; two units whose values are both masked keep apart ids
    assert GridUnit("command", command, {"seed": 1, "model": "gpt2-small"}).unit_id.startswith("model=gpt2-small,")
    ids = {GridUnit("command", command, {"model": m}).unit_id for m in (PIECE, PIECE[:10], PIECE[2:])}
    assert len(ids) == 3
