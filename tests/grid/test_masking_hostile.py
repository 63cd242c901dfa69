"""Credentials planted in a grid the way a hostile probe plants them — in environment variables the mask must
recognise by name, and written into a command line in the forms programs read them — are absent from every
file of the grid's output folder and from what the driver prints; ordinary values stay readable."""
from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import pytest
import yaml

from evalkit import grid
from evalkit.cli.commands import main
from evalkit.grid.command_secrets import _command_secrets
from evalkit.grid.masking import _public_command
from evalkit.grid.records import _masked_record
from evalkit.models.redaction import secret_variable

# Environment variables holding credentials, by the names a demanding user would expect to be recognised.
ENV = {
    "MYSQL_PWD": "Ev01-alpine",
    "SSHPASS": "Ev02-bronze",
    "GPG_PASSPHRASE": "Ev03-cobalt",
    "SLACK_WEBHOOK_URL": "https://hooks.slack.com/services/T0AAA/B0BBB/Ev04-dune",
    "BACKUP_PASSWD": "Ev05-ebony",
    "SMTP_PASS": "Ev06-fennel",
    "VAULT_PASSPHRASE_PRIMARY": "Ev07-garnet",
    "TEAMS_WEBHOOK": "Ev08-hazel",
    "REGISTRY_AUTH": "Ev09-iris",
    "PROXY_AUTHORIZATION": "Ev10-jade",
    "SESSION_COOKIE": "Ev11-kiwi",
    "GCP_CREDENTIALS_JSON": "Ev12-lilac",
    "DEPLOY_PRIVATE_KEY": "Ev13-mango",
    "SENTRY_DSN": "https://Ev14-nutmeg@o0.ingest.sentry.io/42",
    "DATABASE_URL": "postgres://app:Ev15-olive@db.internal:5432/app",
}
# What must not appear: each whole value, and the credential inside the URL-valued ones. No two credentials of
# these tests share six characters (a run of six characters of a credential is masked wherever it appears, so a
# shared run could hide a credential the mask missed).
ENV_SECRETS = [*ENV.values(), "Ev04-dune", "Ev14-nutmeg", "Ev15-olive"]

# Each command-line form with its literal credential; the program is a stand-in of that name beside the grid.
CLI_FORMS = {
    "curl -u": (["./bin/curl", "-u", "alice:Zq01-birch", "http://h/x"], "Zq01-birch"),
    "curl -u attached": (["./bin/curl", "-ualice:Zq02-cedar", "http://h/x"], "Zq02-cedar"),
    "curl --user token": (["./bin/curl", "--user", "Zq03-delta:", "http://h/x"], "Zq03-delta"),
    "curl --cookie": (["./bin/curl", "--cookie", "sid=Zq04-ember", "http://h/x"], "Zq04-ember"),
    "curl -b": (["./bin/curl", "-b", "sid=Zq05-fjord", "http://h/x"], "Zq05-fjord"),
    "curl -H bearer": (["./bin/curl", "-H", "Authorization: Bearer Zq06-grove", "http://h/x"], "Zq06-grove"),
    "curl --header api key": (["./bin/curl", "--header", "X-Api-Key: Zq07-heron"], "Zq07-heron"),
    "mysql -pPASS": (["./bin/mysql", "-uroot", "-pZq08-indigo", "appdb"], "Zq08-indigo"),
    "mysqldump -pPASS": (["./bin/mysqldump", "-pZq09-juniper", "appdb"], "Zq09-juniper"),
    "--password=x": (["./bin/tool", "--password=Zq10-kelp"], "Zq10-kelp"),
    "--password x": (["./bin/tool", "--password", "Zq11-lotus"], "Zq11-lotus"),
    "sshpass -p PW": (["./bin/sshpass", "-p", "Zq12-maple", "./bin/tool", "-p", "2222"], "Zq12-maple"),
    "sshpass -pPW": (["./bin/sshpass", "-pZq13-nectar", "./bin/tool"], "Zq13-nectar"),
    "--login=user:pw": (["./bin/tool", "--login=bob:Zq14-onyx"], "Zq14-onyx"),
    "--login user:pw": (["./bin/tool", "--login", "bob:Zq15-pecan"], "Zq15-pecan"),
    "--token x": (["./bin/tool", "--token", "Zq16-quartz"], "Zq16-quartz"),
    "--api-key x": (["./bin/tool", "--api-key", "Zq17-raven"], "Zq17-raven"),
    "http auth header": (["./bin/http", "GET", "h/x", "Authorization:Bearer Zq18-sable"], "Zq18-sable"),
    "http -a": (["./bin/http", "-a", "bob:Zq19-tundra", "GET", "h/x"], "Zq19-tundra"),
    "redis-cli -a": (["./bin/redis-cli", "-h", "h", "-a", "Zq21-violet", "ping"], "Zq21-violet"),
    "mongosh -p": (["./bin/mongosh", "-u", "me", "-p", "Zq22-walnut", "appdb"], "Zq22-walnut"),
    "openssl pass:": (["./bin/openssl", "enc", "-passin", "pass:Zq23-xenon", "-passout", "env:X"], "Zq23-xenon"),
    "URL password": (["./bin/git", "clone", "https://me:Zq24-yarrow@h/r.git"], "Zq24-yarrow"),
    "--oauth2-bearer": (["./bin/curl", "--oauth2-bearer", "Zq25-zinnia", "http://h/x"], "Zq25-zinnia"),
}
CLI_SECRETS = [secret for _, secret in CLI_FORMS.values()]
PROGRAMS = ("curl", "mysql", "mysqldump", "sshpass", "http", "redis-cli", "mongosh", "openssl", "git", "tool")

# A stand-in program: prints its arguments and the environment's credentials to both outputs (with a URL
# that must stay readable), fails for "-n 2" with all of them in its message, else prints them in its result.
FAKE = """#!{python}
import json, os, sys
args = sys.argv[1:]
env = " ".join(os.environ.get(name, "") for name in {names!r})
print("argv", " ".join(args), "| env", env, "| see https://example.org/docs")
print("stderr argv", args, env, file=sys.stderr)
if "-n" in args and args[args.index("-n") + 1] == "2":
    sys.exit("failed: " + " ".join(args) + " " + env)
result = {{"arg%d" % i: a for i, a in enumerate(args)}}
result.update(env=env[:80], seen=" ".join(args)[-80:], square=4)
print(json.dumps(result))
"""


def _programs(folder: Path) -> None:
    (folder / "bin").mkdir(exist_ok=True)
    for name in PROGRAMS:
        path = folder / "bin" / name
        path.write_text(FAKE.format(python=sys.executable, names=sorted(ENV)))
        path.chmod(path.stat().st_mode | stat.S_IXUSR)


def _leaks(folder: Path, printed: str, secrets: list[str]) -> list[tuple[str, str]]:
    """(where, secret) for each secret in a file (its path or content) under ``folder`` or in ``printed``."""
    found = [("printed", s) for s in secrets if s in printed]
    for path in folder.rglob("*"):
        found += [(str(path), s) for s in secrets if s in str(path.relative_to(folder))]
        if path.is_file():
            data = path.read_bytes()
            found += [(str(path), s) for s in secrets if s.encode() in data]
    return found


def _run(tmp_path: Path, capfd, raw: dict) -> tuple[int, str]:
    path = tmp_path / "grid.yml"
    path.write_text(yaml.safe_dump({"name": "hostile", "kind": "command", "out": "out", "retries": 0, **raw}))
    code = main(["grid", "--spec", str(path)])
    captured = capfd.readouterr()
    return code, captured.out + captured.err


def test_environment_credentials_are_masked_in_every_output(tmp_path, capfd, monkeypatch):
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    _programs(tmp_path)
    # The environment's values also planted in the spec: as a parameter not named as a credential, and as a
    # literal word of the command.
    code, printed = _run(tmp_path, capfd, {
        "workers": 2, "grid": {"n": [1, 2]}, "fixed": {"note": ENV["MYSQL_PWD"], "port": 8080},
        "command": ["./bin/tool", "--port", "{port}", "-n", "{n}", "{note}", ENV["SSHPASS"], ENV["DATABASE_URL"]]})
    assert code == 1 and "1 units run, 0 skipped (finished before), 1 failed" in printed, printed
    out = tmp_path / "out"
    assert {p.name for p in out.rglob("*")} >= {"unit.json", "stdout.txt", "stderr.txt", "results.csv"}
    assert not _leaks(out, printed, ENV_SECRETS)
    stdout = next(out.rglob("stdout.txt")).read_text()
    # What is no credential stays: the URL schemes, the database's host, the options.
    assert "see https://example.org/docs" in stdout and "postgres://***@db.internal:5432/app" in stdout
    assert "https://***" in stdout  # the webhook: its scheme kept, the rest masked
    table = grid.results_table(grid.load_grid(tmp_path / "grid.yml")).set_index("param/n")
    assert table.loc[1, "status"] == "ok" and table.loc[1, "square"] == 4 and table.loc[1, "param/port"] == 8080
    assert table.loc[2, "status"] == "failed" and "failed: --port 8080 -n 2" in table.loc[2, "error"]
    # Resume recognises the finished unit from its masked record.
    code, printed = _run(tmp_path, capfd, {
        "workers": 2, "grid": {"n": [1, 2]}, "fixed": {"note": ENV["MYSQL_PWD"], "port": 8080},
        "command": ["./bin/tool", "--port", "{port}", "-n", "{n}", "{note}", ENV["SSHPASS"], ENV["DATABASE_URL"]]})
    assert "0 units run, 1 skipped" in printed and not _leaks(out, printed, ENV_SECRETS)


@pytest.mark.parametrize("form", sorted(CLI_FORMS))
def test_each_command_line_credential_is_masked_in_every_output(tmp_path, capfd, form):
    _programs(tmp_path)
    command, secret = CLI_FORMS[form]
    code, printed = _run(tmp_path, capfd, {"workers": 1, "grid": {"n": [1, 2]},
                                           "command": [*command, "-n", "{n}"]})
    assert code == 1 and "1 units run" in printed and "1 failed" in printed, printed
    out = tmp_path / "out"
    assert not _leaks(out, printed, [secret]), _leaks(out, printed, [secret])
    record = json.loads(next(p for p in out.rglob("unit.json") if "n=1" in str(p)).read_text())
    shown = json.loads(record["unit"]["target"])
    assert shown[0] == command[0] and "***" in " ".join(shown), shown
    assert record["status"] == "ok" and "-n" in next(out.rglob("stdout.txt")).read_text()


def test_every_command_line_form_in_one_shell_line_is_masked(tmp_path, capfd):
    _programs(tmp_path)
    import shlex

    line = " ; ".join(shlex.join(command) for command, _ in CLI_FORMS.values())
    line = f"MYSQL_PWD=Zq20-amber {line} ; ./bin/tool --port 8080 -n {{n}}"
    code, printed = _run(tmp_path, capfd, {"workers": 1, "grid": {"n": [1]}, "command": ["sh", "-c", line]})
    assert code == 0, printed
    out = tmp_path / "out"
    assert not _leaks(out, printed, [*CLI_SECRETS, "Zq20-amber"])
    (record,) = [json.loads(p.read_text()) for p in out.rglob("unit.json")]
    shown = json.loads(record["unit"]["target"])[2]
    assert "./bin/tool --port 8080 -n {n}" in shown and "MYSQL_PWD=*** ./bin/curl -u *** http://h/x" in shown, shown


def test_ordinary_values_stay_readable(tmp_path, capfd):
    _programs(tmp_path)
    command = ["./bin/tool", "--port", "{port}", "-n", "5", "--model", "{model}", "-p", "8080", "--user", "1000:1000",
               "--login", "-u", "ssh", "-p", "2222", "--cookie-jar", "jar.txt", "-a", "all",
               "https://example.org/d.csv"]
    code, printed = _run(tmp_path, capfd, {"workers": 1, "grid": {"model": ["gpt2-small"]}, "fixed": {"port": 8080},
                                           "command": command})
    assert code == 0, printed
    out = tmp_path / "out"
    (unit_json,) = out.rglob("unit.json")
    assert unit_json.parent.name.startswith("model=gpt2-small,port=8080-")
    record = json.loads(unit_json.read_text())
    assert json.loads(record["unit"]["target"]) == command and "***" not in unit_json.read_text()
    stdout = (unit_json.parent / "stdout.txt").read_text()
    assert ("--port 8080 -n 5 --model gpt2-small -p 8080 --user 1000:1000 --login -u ssh -p 2222 --cookie-jar "
            "jar.txt -a all https://example.org/d.csv") in stdout and "***" not in stdout
    assert "gpt2-small" in (out / "results.csv").read_text()


def test_masking_a_masked_command_or_record_changes_nothing(monkeypatch):
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    for command, secret in CLI_FORMS.values():
        shown = _public_command(command)
        assert secret not in " ".join(shown) and _public_command(shown) == shown, shown
        assert secret in _command_secrets(command)
    unit = grid.GridUnit("command", json.dumps(["./bin/curl", "-u", "a:Zq99-tundra", "{n}"]), {"n": ENV["SSHPASS"]})
    record = {"unit_id": unit.unit_id, "status": "failed", "result": {"token": "t0k3n-abc", "echo": ENV["SMTP_PASS"]},
              "error": f"RuntimeError: a:Zq99-tundra {ENV['GPG_PASSPHRASE']} {ENV['SLACK_WEBHOOK_URL']}"}
    masked = _masked_record(unit, record)
    assert _masked_record(unit, masked) == masked
    assert not [s for s in [*ENV_SECRETS, "Zq99-tundra", "t0k3n-abc"] if s in json.dumps(masked)], masked
    assert ENV["SSHPASS"] not in unit.unit_id


def test_environment_names_read_as_credentials_and_not():
    named = ["MYSQL_PWD", "SSHPASS", "GPG_PASSPHRASE", "SLACK_WEBHOOK_URL", "DB_PASSWD", "FTP_PASS", "KEY_PASSPHRASE",
             "MY_WEBHOOK", "NPM_AUTH", "BASIC_AUTH_HEADER", "BROWSER_COOKIE", "AZURE_CREDENTIAL", "SSH_PRIVATE_KEY",
             "SENTRY_DSN", "PGPASSWORD", "OPENAI_API_KEY", "HF_TOKEN", "AWS_SECRET_ACCESS_KEY"]
    assert [n for n in named if not secret_variable(n)] == []
    ordinary = ["PWD", "OLDPWD", "HOME", "PATH", "SSH_AUTH_SOCK", "GIT_ASKPASS", "SSH_ASKPASS", "GIT_AUTHOR_NAME",
                "AWS_ACCESS_KEY_ID", "TOKENIZERS_PARALLELISM", "PASSWORD_STORE_DIR", "AWS_SHARED_CREDENTIALS_FILE",
                "DATABASE_URL", "PGPASSFILE", "EVALKIT_DATA_DIR"]
    assert [n for n in ordinary if secret_variable(n)] == []


@pytest.mark.parametrize("name", ["../../../escaped", "/tmp/abs_escape", "a/b", ".hidden", ""])
def test_a_parameter_name_that_is_no_name_is_refused_and_no_folder_leaves_the_output(tmp_path, name):
    path = tmp_path / "grid.yml"
    path.write_text(yaml.safe_dump({"kind": "command", "out": "out", "command": [sys.executable, "-c", "print(1)"],
                                    "grid": {name: [1]}}))
    with pytest.raises(grid.GridSpecError, match="is not a name"):
        grid.load_grid(path)
    assert "/" not in grid.GridUnit("command", "[]", {name: 1}).unit_id  # ids are one folder's name regardless


def test_result_keys_named_like_the_records_columns_are_kept_apart_and_a_token_named_grid_gets_a_plain_folder(
        tmp_path, capfd):
    forged = {"unit_id": "forged", "status": "ok", "attempts": 0, "param": {"x": 999}, "result": {"status": "nested"}}
    script = f"import json; print(json.dumps({forged!r}))"
    path = tmp_path / "grid.yml"
    path.write_text(yaml.safe_dump({"kind": "command", "out": "out", "command": [sys.executable, "-c", script, "{x}"],
                                    "grid": {"x": [1]}, "retries": 0}))
    spec = grid.load_grid(path)
    grid.run_grid(spec)
    (row,) = grid.results_table(spec).to_dict("records")
    assert row["param/x"] == 1 and row["unit_id"] != "forged" and row["attempts"] == 1
    assert row["result/param/x"] == 999 and row["result/unit_id"] == "forged"
    assert {row["result/status"], row["result/result/status"]} == {"ok", "nested"}  # both kept
    token = "sk-proj-NameSecret0123456789"
    path.write_text(yaml.safe_dump({"name": f"run-{token}", "kind": "command", "command": ["true"], "grid": {"x": [1]}}))
    assert token not in grid.load_grid(path).out
