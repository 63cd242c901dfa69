"""Credentials in the scripts and code a command line carries, and in what a command prints: the bodies of
here-documents (ftp's ``user NAME PASSWORD``, INI and YAML lines, SQL), expect scripts (``send`` after a
password prompt), Ruby's ``=>``, Rails' ``secret_key_base``, a header's name and value given as two arguments
(``--header X-Api-Key VALUE``) and a URL whose password holds an unencoded ``/``. And what stays readable:
paths, seeds, model ids, configuration that names no credential, a user name sent after a login prompt."""
from __future__ import annotations

import json
import sys

import pytest
import yaml

from evalkit.cli.commands import main
from evalkit.grid import GridUnit
from evalkit.grid.command_secrets import _command_secrets
from evalkit.grid.masking import _public_command, _secrets
from evalkit.grid.printed_secrets import output_secrets
from tests.grid.test_masking_general import _leaks

# (arguments, the credential they carry); no two credentials share six characters.
FORMS = {
    # here-documents
    "ftp here-document user NAME PASSWORD": (["bash", "-c",
                                              "ftp -n host <<EOF\nuser alice Sc01Hunter2xQ9\nput f\nEOF"],
                                             "Sc01Hunter2xQ9"),
    "ftp here-document quote PASS": (["sh", "-c", "cat <<'EOF' | ftp -n host\nquote USER alice\n"
                                                  "quote PASS Sc02-quoted\nEOF"], "Sc02-quoted"),
    "mysql here-document IDENTIFIED BY": (["bash", "-c", "mysql -u root <<SQL\nCREATE USER 'app'@'%' IDENTIFIED BY "
                                                         "'Sc03S3cretPw9';\nSQL"], "Sc03S3cretPw9"),
    "here-document INI password = X": (["bash", "-c", "cat > db.ini <<'EOF'\n[client]\npassword = Sc04-ini\nEOF\n"
                                                      "mysql --defaults-file=db.ini"], "Sc04-ini"),
    "here-document YAML token: X": (["bash", "-c", "cat > c.yml <<EOF\nauth:\n  token: Sc05-yaml\n  user: me\nEOF"],
                                    "Sc05-yaml"),
    "here-document password=X": (["bash", "-c", "cat > app.env <<-EOF\n\tdb_password=Sc06-env\n\tmode=fast\n\tEOF"],
                                 "Sc06-env"),
    # expect scripts
    "expect -c": (["expect", "-c", 'spawn ssh u@h; expect "*assword*"; send "Sc07Hunter2xQ9\\r"; interact'],
                  "Sc07Hunter2xQ9"),
    "expect here-document": (["bash", "-c", 'expect <<EOF\nspawn ssh u@h\nexpect "login:"\nsend "alice\\r"\n'
                                            'expect "Password:"\nsend "Sc08-expect\\r"\ninteract\nEOF'], "Sc08-expect"),
    "expect in sh -c": (["sh", "-c",
                         "expect -c 'spawn sftp u@h; expect -re \"(P|p)assword\"; send -- \"Sc09-sftp\\r\"'"],
                        "Sc09-sftp"),
    "expect branches": (["expect", "-c", 'spawn ssh u@h; expect { "*yes/no*" { send "yes\\r"; exp_continue } '
                                         '"*assword*" { send "Sc10-branch\\r" } }'], "Sc10-branch"),
    # Ruby's =>
    "Ruby :password =>": (["ruby", "-e", 'Net::SSH.start("h", "u", :password => "Sc11Hunter2xQ9")'], "Sc11Hunter2xQ9"),
    "Ruby \"api_key\" =>": (["ruby", "-e", 'c = Client.new("api_key" => "Sc12abc123XYZ789")'], "Sc12abc123XYZ789"),
    "Ruby => without blanks": (["ruby", "-e", "c = C.new(:token=>'Sc13-rtok')"], "Sc13-rtok"),
    # Rails' secret_key_base
    "--secret-key-base": (["rails", "runner", "--secret-key-base", "Sc14-skbopt", "x.rb"], "Sc14-skbopt"),
    "SECRET_KEY_BASE=": (["sh", "-c", "SECRET_KEY_BASE=Sc15-skbenv rails s"], "Sc15-skbenv"),
    "config.secret_key_base =": (["ruby", "-e", "config.secret_key_base = 'Sc16-skbrb'"], "Sc16-skbrb"),
    # a header's name and value as two arguments
    "--header NAME VALUE": (["tool", "--header", "X-Api-Key", "Sc17-hdr", "--seed", "3"], "Sc17-hdr"),
    "-H NAME VALUE": (["tool", "-H", "X-Api-Key", "Sc18-hdr"], "Sc18-hdr"),
    "--header NAME: VALUE": (["tool", "--header", "X-Api-Key:", "Sc19-hdr"], "Sc19-hdr"),
    "-H Authorization 'Bearer VALUE'": (["tool", "-H", "Authorization", "Bearer Sc20-hdr"], "Sc20-hdr"),
    "xh NAME:VALUE": (["xh", "GET", "h.example/x", "X-Api-Key:Sc21-xh"], "Sc21-xh"),
    # a "/" in a URL's password
    "URL password with /": (["psql", "postgres://user:Sc22pa/ss9word@db.example/app"], "Sc22pa/ss9word"),
    "URL password with / in sh -c": (["sh", "-c", "psql postgres://user:Sc23pa/ss@db.example:5432/app -c 'select 1'"],
                                     "Sc23pa/ss"),
    "URL password with @ and /": (["psql", "postgres://user:Sc24p@ss/w0rd@db.example/app"], "Sc24p@ss/w0rd"),
    "URL password with @ and / before a one-word host": (["psql", "postgres://user:Sc25p@ss/w0rd@db/app"],
                                                         "Sc25p@ss/w0rd"),
}

# What a command may print with such a credential in it.
PRINTED = {
    "Ruby hash (inspect)": ('{:password=>"Sc30-rbprint", :host=>"db"}\n', "Sc30-rbprint"),
    "Ruby hash with string keys": ('{"api_key" => "Sc31-rbkey", "mode" => "fast"}\n', "Sc31-rbkey"),
    "Ruby line :password => X": ("  :password => Sc32-rbline,\n", "Sc32-rbline"),
    "Rails credentials (YAML)": ("production:\n  secret_key_base: Sc33f0e1d2c3b4a5\n", "Sc33f0e1d2c3b4a5"),
    "URL password with / in a log": ("connecting to postgres://app:Sc34pa/ss@db.example:5432/app\n", "Sc34pa/ss"),
    "URL password with @ and / in a log": ("connecting to postgres://app:Sc35p@ss/w0rd@db.example/app\n",
                                           "Sc35p@ss/w0rd"),
}

READABLE = [
    ["tool", "--output", "out/x.json", "--seed", "3"],
    ["tool", "--model", "sentence-transformers/all-MiniLM-L6-v2", "--config", "lr=0.1,mode=fast,max_tokens=64"],
    ["bash", "-c", "cat > run.ini <<EOF\n[run]\nseed = 3\nmodel = gpt2\nuser alice admin\nEOF\nrun --ini run.ini"],
    ["bash", "-c", "ftp -n host <<EOF\nuser anonymous\nget f\nEOF"],
    ["expect", "-c", 'spawn ssh u@h; expect "login:"; send "alice\\r"; expect "$ "; send "ls\\r"'],
    ["expect", "-c", 'spawn ssh u@h; expect "*assword*"; send "$env(PW)\\r"'],
    ["ruby", "-e", 'run(:mode => "fast", "seed" => "3")'],
    ["grep", "-H", "token", "notes.txt"],
    ["tool", "--header", "Accept", "text/csv", "-H", "Content-Type", "application/json"],
    ["curl", "https://h.example:8080/users/@alice", "https://medium.com/@alice/post"],
    ["sh", "-c", "echo $((1 << 3)); cat <<< word"],
]


@pytest.mark.parametrize("form", sorted(FORMS))
def test_each_scripted_form_is_read_and_shown_masked(form):
    arguments, secret = FORMS[form]
    assert secret in _command_secrets(arguments), (form, _command_secrets(arguments))
    shown = _public_command(arguments)
    assert secret not in json.dumps(shown) and "***" in json.dumps(shown), shown
    assert _public_command(shown) == shown  # masking a masked command changes nothing


def test_what_stays_readable_around_the_credential():
    assert _public_command(FORMS["ftp here-document user NAME PASSWORD"][0])[2] == \
        "ftp -n host <<EOF\nuser alice ***\nput f\nEOF"
    assert _public_command(FORMS["--header NAME VALUE"][0]) == ["tool", "--header", "X-Api-Key", "***", "--seed", "3"]
    assert _public_command(FORMS["-H Authorization 'Bearer VALUE'"][0])[3] == "Bearer ***"
    assert "alice" in _public_command(FORMS["expect here-document"][0])[2]  # sent after "login:": a user name
    assert _public_command(FORMS["URL password with /"][0])[1].endswith("@db.example/app")


@pytest.mark.parametrize("form", sorted(PRINTED))
def test_each_printed_form_is_read(form):
    text, secret = PRINTED[form]
    assert secret in output_secrets(text), (form, output_secrets(text))


@pytest.mark.parametrize("command", READABLE, ids=[f"{k}-{c[0]}" for k, c in enumerate(READABLE)])
def test_ordinary_arguments_stay_readable(command):
    assert _command_secrets(command) == [] and _public_command(command) == command


def test_printed_ordinary_values_stay_readable():
    assert output_secrets('{:mode=>"fast", "seed" => "3"}\nsecret_key_base: null\n') == []


def test_a_secret_key_base_or_a_slashed_url_as_a_parameter_is_a_secret():
    unit = GridUnit("command", json.dumps(["tool", "{db_url}", "{seed}"]),
                    {"secret_key_base": "Sc40f0e1d2c3b4", "db_url": "postgres://u:Sc41pa/ss@db.example/app",
                     "seed": 3})
    assert unit.public()["params"]["secret_key_base"] == "***" and "Sc40" not in unit.unit_id
    assert "Sc41pa/ss" in unit.secrets and "Sc41" not in json.dumps(unit.public())
    assert unit.unit_id.startswith("seed=3-"), unit.unit_id
    assert _secrets("ftp -n h <<EOF\nuser me Sc42-param\nEOF", "script") == ["Sc42-param"]


def test_a_grid_with_every_scripted_form_leaks_nothing(tmp_path, capfd):
    """Each form written into a grid's command, each printed form in what the command prints, and the
    credential parameters: none reaches unit.json, stdout.txt, stderr.txt, results.csv, a folder's name or
    what the grid prints; the text around them stays."""
    (tmp_path / "printed.txt").write_text("".join(text for text, _ in PRINTED.values()))
    echo = ("import sys; print(' '.join(sys.argv)); text = open('printed.txt').read(); print(text);"
            " sys.stderr.write(text); print('{\"ok\": 1}')")
    arguments = [a for form in FORMS.values() for a in [*form[0], ";"]]
    spec = tmp_path / "grid.yml"
    spec.write_text(yaml.safe_dump({
        "name": "scripts", "kind": "command", "out": "out", "retries": 0, "workers": 1,
        "command": [sys.executable, "-c", echo, *arguments, "{db_url}", "--seed", "{seed}", "{page}"],
        "fixed": {"secret_key_base": "Sc50f0e1d2c3b4", "cred": "Sc52-cred"},
        "grid": {"seed": [1], "db_url": ["postgres://u:Sc51pa/ss@db.example/app"],
                 "page": ["https://h.example/cb#access_token=Sc53-frag"]}}))
    code = main(["grid", "--spec", str(spec)])
    captured = capfd.readouterr()
    printed = captured.out + captured.err
    assert code == 0, printed
    secrets = [s for _, s in FORMS.values()] + [s for _, s in PRINTED.values()] + ["Sc50f0e1d2c3b4", "Sc51pa/ss",
                                                                                   "Sc52-cred", "Sc53-frag"]
    assert not _leaks(tmp_path / "out", printed, secrets), _leaks(tmp_path / "out", printed, secrets)
    (record,) = (tmp_path / "out").rglob("unit.json")
    assert record.parent.name.startswith("seed=1-"), record.parent.name
    stdout = (record.parent / "stdout.txt").read_text()
    assert "user alice ***" in stdout and "--header X-Api-Key *** --seed 3" in stdout, stdout
    assert '"mode" => "fast"' in stdout and "@db.example:5432/app" in stdout, stdout
    assert 'expect "login:"\nsend "alice\\r"' in stdout and "mode=fast" in stdout, stdout
