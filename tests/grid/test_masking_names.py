"""Credentials a grid must mask however they are named: options named in camelCase or compound words
(``--accessToken``, ``--dbPassword``, keytool's ``-storepass``/``-keypass``, ``--pat``), ``docker login -p``,
the credential fields of JSON bodies (``-d '{"token": ...}'``), environment variables named ``*_PAT``,
``PGPASS``, ``*_JWT``, ``*_CREDS``, and parameters named ``pat``, ``creds``, ``webhook``; and what must stay
readable: options such as ``--max-tokens`` or ``--password-file``, and ordinary words a secret happens to
contain (``OPENAI`` of a key ``sk-...-OPENAI-...``)."""
from __future__ import annotations

import json
import sys

import pytest
import yaml

from evalkit.cli.commands import main
from evalkit.grid import GridUnit
from evalkit.grid.command_secrets import _command_secrets, _scan
from evalkit.grid.credential_names import credential_name
from evalkit.grid.masking import _public_command
from tests.grid.test_masking_general import _leaks

ECHO = ("import sys, json, os; print(' '.join(sys.argv)); "
        "print(json.dumps({'ok': 1, 'args': sys.argv[1:], "
        "'env': {k: v for k, v in os.environ.items() if k.startswith(('PROBE', 'OPENAI'))}}))")

# (argument list, its credential) for each form the probe planted.
FORMS = {
    "--accessToken": (["--accessToken", "Nm01-camel"], "Nm01-camel"),
    "--dbPassword": (["--dbPassword", "Nm02-camel"], "Nm02-camel"),
    "--apiKey=": (["--apiKey=Nm03-camel"], "Nm03-camel"),
    "-storepass": (["-storepass", "Nm04-keytool"], "Nm04-keytool"),
    "-keypass": (["-keypass", "Nm05-keytool"], "Nm05-keytool"),
    "--pat": (["--pat", "Nm06-patpat"], "Nm06-patpat"),
    "--secret-id": (["--secret-id", "Nm07-vault"], "Nm07-vault"),
    "--session": (["--session", "Nm08-sess"], "Nm08-sess"),
    "docker login -p": (["docker-login", "-u", "me", "-p", "Nm09-docker"], "Nm09-docker"),
    "-d json": (["-d", '{"token": "Nm10-jsonA", "user": "me"}'], "Nm10-jsonA"),
    "--data json": (["--data", '{"password":"Nm11-jsonB"}'], "Nm11-jsonB"),
    "--data= json": (['--data={"client_secret": "Nm12-jsonC"}'], "Nm12-jsonC"),
    "-pPASS passed on": (["-pNm13-inline"], "Nm13-inline"),
}
ENV = {"PROBE_GH_PAT": "Nm20-ghpat", "PGPASS": "Nm21-pgpass", "PROBE_CI_JOB_JWT": "Nm22-jwtjwt",
       "PROBE_SERVICE_CREDS": "Nm23-creds", "OPENAI_API_KEY": "sk-probe-OPENAI-SECRET-999"}
PARAMS = {"pat": "Nm30-patparam", "creds": "admin:Nm31-credsparam",
          "webhook": "https://hooks.slack.com/services/T000/B000/Nm32-hook"}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_each_probe_form_is_read_and_shown_masked(form):
    arguments, secret = FORMS[form]
    command = ["python", "-c", "pass", *arguments, "--seed", "1"]
    assert secret in _command_secrets(command), form
    shown = _public_command(command)
    assert secret not in json.dumps(shown) and "***" in json.dumps(shown) and shown[-2:] == ["--seed", "1"], shown
    assert _public_command(shown) == shown  # masking a masked command changes nothing


def test_the_probe_grid_leaks_nothing_and_keeps_ordinary_text(tmp_path, capfd, monkeypatch):
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    command = [sys.executable, "-c", ECHO, *[a for arguments, _ in FORMS.values() for a in arguments],
               "{pat}", "{creds}", "{webhook}", "--max-tokens", "64", "--password-file", "/run/pw", "--port", "8080",
               "--tokenizer", "gpt2", "--passes", "3", "--keyboard", "us", "--author", "ann", "--password-stdin",
               "-p", "2222", "--seed", "{seed}"]
    spec = tmp_path / "grid.yml"
    spec.write_text(yaml.safe_dump({"name": "probe", "kind": "command", "out": "out", "retries": 0, "workers": 1,
                                    "command": command, "grid": {"seed": [1], **{k: [v] for k, v in PARAMS.items()}}}))
    code = main(["grid", "--spec", str(spec)])
    captured = capfd.readouterr()
    printed = captured.out + captured.err
    assert code == 0, printed
    out = tmp_path / "out"
    secrets = [s for _, s in FORMS.values()] + list(ENV.values()) + ["Nm30-patparam", "Nm31-credsparam", "Nm32-hook"]
    assert not _leaks(out, printed, secrets), _leaks(out, printed, secrets)
    (unit_json,) = out.rglob("unit.json")
    assert unit_json.parent.name.startswith("seed=1-"), unit_json.parent.name  # pat=, creds=, webhook= left out
    record = json.loads(unit_json.read_text())
    assert record["unit"]["params"] == {"seed": 1, "pat": "***", "creds": "***", "webhook": "***"}
    stdout = (unit_json.parent / "stdout.txt").read_text()
    assert ("--max-tokens 64 --password-file /run/pw --port 8080 --tokenizer gpt2 --passes 3 --keyboard us "
            "--author ann --password-stdin -p 2222 --seed 1") in stdout, stdout
    # The key's value holds the word OPENAI: the variable's name stays readable, in the output and the table.
    assert "OPENAI_API_KEY" in stdout and "env/OPENAI_API_KEY" in (out / "results.csv").read_text()


def test_credential_names_and_names_that_stay_readable():
    named = ["--accessToken", "--dbPassword", "-storepass", "-keypass", "-srcstorepass", "--pat", "--apiKey",
             "--client-secret", "--secret-id", "--session", "--private-key", "--token-value", "--MY_SERVICE_CREDS",
             "X-Goog-Api-Key", "PRIVATE-TOKEN", "--jwt", "--passphrase", "--AccountKey", "--bearerToken"]
    assert [n for n in named if not credential_name(n, option=True)] == []
    readable = ["--port", "--passes", "--keyboard", "--author", "--tokenizer", "--max-tokens", "--key-file",
                "--password-file", "--password-stdin", "--cookie-jar", "--auth-type", "--no-password", "--sort-key",
                "--bypass", "--token-limit", "--db-url", "--compass", "--ask-pass", "--pattern", "--path"]
    assert [n for n in readable if credential_name(n, option=True)] == []
    # A parameter or a result's field: "session" and "cookie" may be flags; pass_rate is a rate.
    assert [credential_name(n) for n in ("pat", "creds", "webhook", "hf_token", "session", "pass_rate")] == \
        [True, True, True, True, False, False]


def test_docker_login_password_stdin_and_a_login_user_stay_readable():
    for command in (["docker", "login", "--password-stdin", "-u", "me", "registry"],
                    ["ssh", "-l", "login", "-p", "2222", "host"], ["gcc", "-pthread", "-p8080", "-projectId", "x"]):
        assert _scan(command) == ([], {}), command
    assert _public_command(["docker", "login", "-u", "me", "-p", "Nm40-dock", "r"]) == \
        ["docker", "login", "-u", "me", "-p", "***", "r"]


def test_json_bodies_mask_credential_fields_only():
    command = ["curl", "-d", '{"token": "Nm50-tok", "max_tokens": 64, "nested": {"api_key": "Nm51-key"}}',
               "--json", "{\"seed\": {seed}, \"password\": \"{pw}\"}"]
    assert _command_secrets(command) == ["Nm50-tok", "Nm51-key"]
    assert _public_command(command)[2] == '{"token": "***", "max_tokens": 64, "nested": {"api_key": "***"}}'
    assert "{pw}" not in _command_secrets(command)  # a placeholder: the unit's values are masked with its own
    shell = ["sh", "-c", "curl -d '{\"password\": \"Nm52-pw\"}' http://h/x -u bob:Nm53-pw"]
    assert set(_command_secrets(shell)) >= {"Nm52-pw", "Nm53-pw"}


def test_secret_named_parameters_are_left_out_of_the_folder_name():
    unit = GridUnit("command", json.dumps(["echo", "{pat}", "{seed}"]), {"pat": "PatParam-aaa111", "seed": 1})
    assert "PatParam" not in unit.unit_id and unit.unit_id.startswith("seed=1-")
    assert unit.public()["params"]["pat"] == "***"


def test_a_value_given_under_a_credentials_name_to_jq_is_masked():
    """jq's ``--arg NAME VALUE`` and ``--argjson NAME VALUE``: a name that is a credential's makes its value one."""
    arguments = ["jq", "-n", "--arg", "token", "Zr8Kq2Wx5Tn9Bm4Lp", "--argjson", "db_password", '"Pw-jq-77x"',
                 "--arg", "name", "bob", "{t: $token}"]
    assert _command_secrets(arguments) == ["Zr8Kq2Wx5Tn9Bm4Lp", '"Pw-jq-77x"']
    assert _public_command(arguments) == ["jq", "-n", "--arg", "token", "***", "--argjson", "db_password", "***",
                                          "--arg", "name", "bob", "{t: $token}"]
