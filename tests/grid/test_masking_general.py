"""The general rules for credentials on a command line, checked on forms that leak without them:
a key's name followed by its value (``aws configure set aws_secret_access_key X``, npm's ``:_authToken``, a
netrc line's ``password``), ``name=value`` pieces anywhere (``--from-literal=password=X``, ``-o
user=me,password=X``), an ``Authorization`` value or a ``Bearer`` token whatever the program, a
``user:password`` given to any program's user option, ``--`` before an option's value, and the short options of
programs that take a password (``zip -P``, ``openssl enc -k``, ``ssh-keygen -N``, ``htpasswd -b``, ``vault
login``, ``ldapsearch -w``, ``lftp -u``). And what stays readable: id pairs, subcommands, files, ports."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
import yaml

from evalkit.cli.commands import main
from evalkit.grid.command_secrets import _command_secrets
from evalkit.grid.credential_names import credential_name
from evalkit.grid.masking import _public_command

# (arguments, the credential they carry); no two credentials share six characters.
FORMS = {
    "aws configure set": (["aws", "configure", "set", "aws_secret_access_key", "Gq01-aws"], "Gq01-aws"),
    "npm _authToken": (["npm", "config", "set", "//registry.npmjs.org/:_authToken", "Gq02-npm"], "Gq02-npm"),
    "npm _authToken=": (["npm", "config", "set", "//registry.npmjs.org/:_authToken=Gq03-npm"], "Gq03-npm"),
    "git config proxyPassword": (["git", "config", "http.proxyPassword", "Gq04-git"], "Gq04-git"),
    "netrc line": (["printf", "machine h.example login me password Gq05-netrc"], "Gq05-netrc"),
    "htpasswd -b": (["htpasswd", "-b", "/etc/pw", "me", "Gq06-htp"], "Gq06-htp"),
    "htpasswd -nb": (["htpasswd", "-nb", "me", "Gq07-htp"], "Gq07-htp"),
    "htpasswd -cb": (["htpasswd", "-cB", "-b", "/etc/pw", "me", "Gq08-htp"], "Gq08-htp"),
    "zip -P": (["zip", "-P", "Gq09-zip", "out.zip", "a.txt"], "Gq09-zip"),
    "unzip -P attached": (["unzip", "-PGq10-unzip", "out.zip"], "Gq10-unzip"),
    "openssl enc -k": (["openssl", "enc", "-aes-256-cbc", "-k", "Gq11-ossl", "-in", "a"], "Gq11-ossl"),
    "ssh-keygen -N": (["ssh-keygen", "-t", "ed25519", "-N", "Gq12-keygen", "-f", "k"], "Gq12-keygen"),
    "ssh-keygen -P": (["ssh-keygen", "-p", "-P", "Gq13-oldphrase", "-N", "Gq14-newphrase"], "Gq13-oldphrase"),
    "vault login": (["vault", "login", "hvs.Gq15-VaultToken"], "hvs.Gq15-VaultToken"),
    "vault login token=": (["vault", "login", "token=Gq16-vault"], "Gq16-vault"),
    "ldapsearch -w": (["ldapsearch", "-x", "-D", "cn=admin", "-w", "Gq17-ldap", "-b", "dc=x"], "Gq17-ldap"),
    "lftp -u": (["lftp", "-u", "me,Gq18-lftp", "ftp.example.org"], "Gq18-lftp"),
    "--sid": (["tool", "--sid", "Gq19-sid"], "Gq19-sid"),
    "--password --": (["tool", "--password", "--", "Gq20-dashes"], "Gq20-dashes"),
    "-u user:pw": (["tool", "-u", "me:Gq21-user"], "Gq21-user"),
    "--user=user:pw": (["tool", "--user=me:Gq22-user"], "Gq22-user"),
    "-uuser:pw": (["tool", "-ume:Gq23-user"], "Gq23-user"),
    "smbclient -U user%pw": (["smbclient", "//h/share", "-U", "me%Gq24-smb"], "Gq24-smb"),
    "Authorization=Bearer": (["tool", "Authorization=Bearer Gq25-authz"], "Gq25-authz"),
    "Authorization: + Bearer": (["tool", "Authorization:", "Bearer Gq26-split"], "Gq26-split"),
    "Authorization: + token": (["tool", "Authorization:", "Gq27-split"], "Gq27-split"),
    "Bearer + token": (["tool", "--hdr", "Authorization: Bearer", "Gq28-split"], "Gq28-split"),
    "git extraHeader": (["git", "-c", "http.extraHeader=Authorization: Bearer Gq29-git", "clone", "r"], "Gq29-git"),
    "--from-literal": (["kubectl", "create", "secret", "generic", "s", "--from-literal=password=Gq30-kube"],
                       "Gq30-kube"),
    "mount -o": (["mount", "-t", "cifs", "-o", "username=me,password=Gq31-cifs", "//h/s", "/mnt"], "Gq31-cifs"),
    "Basic": (["tool", "Basic R3EzMi1iYXNpYzp4eHg="], "R3EzMi1iYXNpYzp4eHg="),
    "password in a prompt": (["tool", "--prompt", "log in with password Gq33-prose please"], "Gq33-prose"),
    # Forms the general rules alone miss.
    "gh secret set --body": (["gh", "secret", "set", "NAME", "--body", "Gq34-gh"], "Gq34-gh"),
    "gh secret in sh -c": (["sh", "-c", "gh secret set N --body Gq35-ghsh"], "Gq35-ghsh"),
    "smbclient share PASS": (["smbclient", "//srv/share", "Gq36-smb", "-U", "me"], "Gq36-smb"),
    "twine -p": (["python", "-m", "twine", "upload", "-p", "Gq37-twine", "dist/*"], "Gq37-twine"),
    "poetry http-basic": (["poetry", "config", "http-basic.pypi", "me", "Gq38-poetry"], "Gq38-poetry"),
    "wandb login": (["wandb", "login", "Gq39-wandb"], "Gq39-wandb"),
    "sqlplus user/pw@db": (["sqlplus", "scott/Gq40-oracle@orcl"], "Gq40-oracle"),
    "mc alias set": (["mc", "alias", "set", "m", "http://h:9000", "AKIAEXAMPLE", "Gq41-minio"], "Gq41-minio"),
    "wpa_passphrase": (["wpa_passphrase", "homenet", "Gq42-wifi"], "Gq42-wifi"),
    "curl --cert file:pw": (["curl", "--cert", "client.pem:Gq43-cert", "https://h"], "Gq43-cert"),
    "ssh ProxyCommand sshpass": (["ssh", "-o", "ProxyCommand=sshpass -p Gq44-proxy ssh jump", "host"],
                                 "Gq44-proxy"),
    "--client-key-data=": (["kubectl", "config", "set-credentials", "admin", "--client-key-data=Gq45-kube"],
                           "Gq45-kube"),
    "--client-assertion": (["tool", "--client-assertion", "Gq46-assert"], "Gq46-assert"),
    "--authkey": (["tailscale", "up", "--authkey", "Gq47-tskey"], "Gq47-tskey"),
    "--hmac-key": (["tool", "--hmac-key", "Gq48-hmac"], "Gq48-hmac"),
    "--psk": (["tool", "--psk", "Gq49-psk"], "Gq49-psk"),
    "--openai-key": (["tool", "--openai-key", "Gq50-openai"], "Gq50-openai"),
    "JSON list": (["tool", '{"creds": ["Gq51-list"]}'], "Gq51-list"),
    "python environ": (["python3", "-c", "import os; os.environ['OPENAI_API_KEY']='Gq52-code'; print(1)"],
                       "Gq52-code"),
    "net use": (["net", "use", "\\\\h\\s", "Gq53-netuse", "/user:me"], "Gq53-netuse"),
    "httpie password=": (["http", "POST", "h/login", "password=Gq54-httpie"], "Gq54-httpie"),
    "httpie api_key==": (["http", "GET", "h/x", "api_key==Gq55-query"], "Gq55-query"),
    "echo | --password-stdin": (["sh", "-c", "echo Gq56-pipe | docker login -u me --password-stdin r"],
                                "Gq56-pipe"),
    "echo | chpasswd": (["sh", "-c", "echo me:Gq57-chpw | chpasswd"], "me:Gq57-chpw"),
    "az keyvault --value": (["az", "keyvault", "secret", "set", "--name", "n", "--value", "Gq58-az"], "Gq58-az"),
    "aws ssm --value": (["aws", "ssm", "put-parameter", "--name", "n", "--value", "Gq59-ssm"], "Gq59-ssm"),
    "vault kv put": (["vault", "kv", "put", "secret/app", "db=Gq60-kv"], "Gq60-kv"),
    "vault token lookup": (["vault", "token", "lookup", "Gq61-tok"], "Gq61-tok"),
    "redis-cli AUTH": (["redis-cli", "AUTH", "Gq62-redis"], "Gq62-redis"),
    "rabbitmqctl add_user": (["rabbitmqctl", "add_user", "u", "Gq63-rmq"], "Gq63-rmq"),
    "ngrok add-authtoken": (["ngrok", "config", "add-authtoken", "Gq64-ngrok"], "Gq64-ngrok"),
    "xfreerdp /p:": (["xfreerdp", "/u:me", "/p:Gq65-rdp", "/v:h"], "Gq65-rdp"),
    "sqlcmd -PPASS": (["sqlcmd", "-Sx", "-Ume", "-PGq66-sql"], "Gq66-sql"),
    "cqlsh -p": (["cqlsh", "-u", "me", "-p", "Gq67-cql"], "Gq67-cql"),
    "JSON after --password": (["tool", "--password", '{"x": "Gq68-js"}'], '{"x": "Gq68-js"}'),
    "rar -hp": (["rar", "a", "-hpGq69-rar", "x.rar"], "Gq69-rar"),
    "SQL IDENTIFIED BY": (["mysql", "-e", "CREATE USER u IDENTIFIED BY 'Gq70-my'"], "Gq70-my"),
    "docker -e KEY_2": (["docker", "run", "-e", "OPENAI_API_KEY_2=Gq71-env", "img"], "Gq71-env"),
    "JDBC Oracle": (["tool", "jdbc:oracle:thin:scott/Gq72-jdbc@db:1521/x"], "Gq72-jdbc"),
    ".pgpass line": (["printf", "db.example:5432:app:me:Gq73-pgpass"], "Gq73-pgpass"),
    "requests auth tuple": (["python3", "-c", "requests.get(u, auth=('me', 'Gq74-auth'))"], "Gq74-auth"),
    "Perl ENV": (["perl", "-e", '$ENV{DB_PASSWORD}="Gq75-perl"; system("x")'], "Gq75-perl"),
    "PowerShell SecureString": (["pwsh", "-c", 'ConvertTo-SecureString "Gq76-ps" -AsPlainText'], "Gq76-ps"),
    "ipmitool -P": (["ipmitool", "-H", "h", "-U", "admin", "-P", "Gq77-ipmi", "power", "status"], "Gq77-ipmi"),
    "poetry publish -p": (["poetry", "publish", "-u", "__token__", "-p", "Gq78-poetry"], "Gq78-poetry"),
    "MySQL IDENTIFIED WITH ... BY": (["mysql", "-e", "ALTER USER 'app'@'%' IDENTIFIED WITH mysql_native_password BY "
                                               "'Gq79-alter'"], "Gq79-alter"),
    "MySQL SET PASSWORD": (["mysql", "-e", "SET PASSWORD FOR 'app'@'%' = 'Gq80-setpw'"], "Gq80-setpw"),
    "Spark account key property": (["spark-submit", "--conf",
                                    "spark.hadoop.fs.azure.account.key.acct.dfs.core.windows.net=Gq81-spark", "j.py"],
                                   "Gq81-spark"),
    "mongosh db.auth": (["mongosh", "h/admin", "--eval", "db.auth('admin', 'Gq82-mauth')"], "Gq82-mauth"),
    "mongosh changeUserPassword": (["mongosh", "h/admin", "--eval", "db.changeUserPassword('app','Gq83-mchg')"],
                                   "Gq83-mchg"),
    "dotnet nuget push -k": (["dotnet", "nuget", "push", "p.nupkg", "-k", "Gq84-nuget"], "Gq84-nuget"),
    "dotnet nuget add source -p": (["dotnet", "nuget", "add", "source", "https://x/v3/index.json", "-u", "u", "-p",
                                    "Gq85-nugetpw"], "Gq85-nugetpw"),
    "codecov -t": (["codecov", "-t", "Gq86-codecov"], "Gq86-codecov"),
    "influx -t": (["influx", "bucket", "list", "-t", "Gq87-influx"], "Gq87-influx"),
    "cargo login": (["cargo", "login", "Gq88-cargo"], "Gq88-cargo"),
    "snyk auth": (["snyk", "auth", "Gq89-snyk"], "Gq89-snyk"),
    "sonar.login": (["mvn", "sonar:sonar", "-Dsonar.login=Gq90-sonar"], "Gq90-sonar"),
    "openssl passwd": (["openssl", "passwd", "-6", "Gq91-hashme"], "Gq91-hashme"),
    "mkpasswd": (["mkpasswd", "-m", "sha-512", "Gq92-mkpw"], "Gq92-mkpw"),
    "doveadm pw -p": (["doveadm", "pw", "-p", "Gq93-dove"], "Gq93-dove"),
    "ldappasswd -s": (["ldappasswd", "-s", "Gq94-ldapnew", "uid=me"], "Gq94-ldapnew"),
    "ansible-vault encrypt_string": (["ansible-vault", "encrypt_string", "Gq95-vault", "--name", "db_password"],
                                     "Gq95-vault"),
    "security -w": (["security", "add-generic-password", "-a", "me", "-s", "svc", "-w", "Gq96-keychain"],
                    "Gq96-keychain"),
    "rabbitmqctl change_password": (["rabbitmqctl", "change_password", "app", "Gq97-rabbit"], "Gq97-rabbit"),
    "redis CONFIG SET masterauth": (["redis-cli", "CONFIG", "SET", "masterauth", "Gq98-master"], "Gq98-master"),
    "rclone obscure": (["rclone", "obscure", "Gq99-rclone"], "Gq99-rclone"),
    "bw unlock": (["bw", "unlock", "Gr01-bw"], "Gr01-bw"),
    "ncftp -p": (["ncftp", "-u", "me", "-p", "Gr02-ftp", "host"], "Gr02-ftp"),
    "piped into gh secret set": (["sh", "-c", "echo Gr03-ghs | gh secret set API_TOKEN"], "Gr03-ghs"),
    "piped into docker secret create": (["sh", "-c", "echo Gr04-dsec | docker secret create db_password -"],
                                        "Gr04-dsec"),
    "piped into wrangler secret put": (["sh", "-c", "printf Gr05-wr | wrangler secret put API_KEY"], "Gr05-wr"),
    "piped into gpg --passphrase-fd 0": (["sh", "-c", "echo Gr06-gpg | gpg --batch --passphrase-fd 0 -c f"],
                                         "Gr06-gpg"),
    "sendemail -xp": (["sendemail", "-xu", "me", "-xp", "Gr07-mail"], "Gr07-mail"),
}

READABLE = [
    ["docker", "run", "-u", "1000:1000", "image:tag"],
    ["kubectl", "create", "secret", "generic", "name"],
    ["npm", "token", "list"],
    ["git", "credential", "fill"],
    ["openssl", "enc", "-kfile", "/run/keyfile", "-in", "a"],
    ["python", "-u", "script.py"],
    ["ssh", "-p", "2222", "host"],
    ["docker", "login", "registry.example.org"],
    ["tool", "--metric", "token", "--seed", "1"],
    ["tool", "seed=3,max_tokens=64", "--key-file", "/run/k"],
    ["tool", "--prompt", "count the tokens of a password reset mail", "--mode", "basic"],
    ["kubectl", "config", "set-credentials", "admin", "--token-file", "/run/t"],
    ["tool", "--label-key", "content", "--sort-key", "score", "--metadata", "m.json"],
    ["smbclient", "-L", "//srv", "-U", "me"],
    ["sqlplus", "/nolog"],
    ["spark-submit", "--conf", "spark.sql.shuffle.partitions=8", "job.py"],
    ["mvn", "-Dsonar.host.url=http://sonar:9000", "verify"],
    ["cargo", "build", "--release"],
    ["redis-cli", "CONFIG", "SET", "maxmemory", "100mb"],
    ["openssl", "x509", "-in", "cert.pem", "-noout"],
]


def _leaks(out, printed: str, secrets: list[str]) -> list[tuple[str, str]]:
    """Where any of ``secrets`` shows: in what the grid printed, in a file or folder name under ``out``, or in a
    file's bytes."""
    leaks = [("printed", s) for s in secrets if s in printed]
    for path in out.rglob("*"):
        leaks += [(str(path), s) for s in secrets if s in str(path.relative_to(out))]
        if path.is_file():
            leaks += [(str(path), s) for s in secrets if s.encode() in path.read_bytes()]
    return leaks


@pytest.mark.parametrize("form", sorted(FORMS))
def test_each_general_form_is_read_and_shown_masked(form):
    arguments, secret = FORMS[form]
    assert secret in _command_secrets(arguments), (form, _command_secrets(arguments))
    shown = _public_command(arguments)
    assert secret not in json.dumps(shown) and "***" in json.dumps(shown), shown
    assert _public_command(shown) == shown  # masking a masked command changes nothing


@pytest.mark.parametrize("command", READABLE, ids=[" ".join(c[:3]) for c in READABLE])
def test_ordinary_arguments_stay_readable(command):
    assert _command_secrets(command) == [] and _public_command(command) == command


def test_a_grid_with_every_general_form_leaks_nothing(tmp_path, capfd):
    echo = "import sys, json; print(' '.join(sys.argv)); print(json.dumps({'args': sys.argv[1:]}))"
    # a grid reads {NAME} as a placeholder: Perl's $ENV{...} is written with doubled braces, as in any grid file
    arguments = [a.replace("$ENV{DB_PASSWORD}", "$ENV{{DB_PASSWORD}}") for form in FORMS.values()
                 for a in [*form[0], ";"]]
    spec = tmp_path / "grid.yml"
    spec.write_text(yaml.safe_dump({"name": "general", "kind": "command", "out": "out", "retries": 0, "workers": 1,
                                    "command": [sys.executable, "-c", echo, *arguments, "--seed", "{seed}"],
                                    "grid": {"seed": [1]}}))
    code = main(["grid", "--spec", str(spec)])
    captured = capfd.readouterr()
    printed = captured.out + captured.err
    assert code == 0, printed
    secrets = [secret for _, secret in FORMS.values()] + ["Gq14-newphrase"]
    assert not _leaks(tmp_path / "out", printed, secrets)
    (record,) = (tmp_path / "out").rglob("unit.json")
    stdout = (record.parent / "stdout.txt").read_text()
    assert "aws_secret_access_key ***" in stdout and "htpasswd -b /etc/pw me ***" in stdout, stdout


@pytest.mark.parametrize("name", ["password_2", "client_secret_2", "passcode", "hf_token_backup", "private_key_pem",
                                  "api_key_2", "api_keys", "password2", "token_v2", "ssh_key", "connection_string",
                                  "openai_api_key_old"])
def test_copies_and_encodings_of_a_credential_are_credentials(name):
    from evalkit.grid.credential_names import credential_name

    assert credential_name(name), name


def test_a_services_key_named_as_a_parameter_is_a_secret_and_a_column_key_is_not():
    from evalkit.grid import GridUnit

    unit = GridUnit("command", json.dumps(["tool", "{openai_key}", "{label_key}"]),
                    {"openai_key": "Gq60-openaikey", "hf_key": "Gq61-hfkey", "label_key": "content"})
    assert "Gq60" not in unit.unit_id and "Gq61" not in unit.unit_id and "label_key=content" in unit.unit_id
    assert unit.public()["params"] == {"openai_key": "***", "hf_key": "***", "label_key": "content"}


def test_credentials_in_maps_and_printed_fields_leak_nowhere(tmp_path, capfd):
    """A credential parameter whose value is a map ({"api_keys": {"openai": X}}) or a list of maps was judged by
    the inner keys ("openai"), so X reached results.csv, unit.json, the summary and the unit's folder name; a
    list of arguments (["--password", X]) put X in the folder name; a command printing credentials in named
    fields (as `aws sts` and `vault` print them) kept them in stdout.txt; a Google or Vault token in an ordinary
    result field kept it in results.csv."""
    printer = ("import json; print(json.dumps({'Credentials': {'AccessKeyId': 'ASIAEXAMPLE', "
               "'SecretAccessKey': 'Gs01-sts', 'SessionToken': 'Gs02-session'}, 'auth': {'client_token': "
               "'Gs03-vault'}})); print(json.dumps({'note': 'ya29.a0Gs04googletoken1234567', "
               "'vault': 'hvs.CAESGs05vaulttoken12345'}))")
    spec = tmp_path / "grid.yml"
    spec.write_text(yaml.safe_dump({
        "name": "maps", "kind": "command", "out": "out", "retries": 0, "workers": 1,
        "command": [sys.executable, "-c", printer, "{api_keys}", "{extra}", "{tokens}"],
        "fixed": {"api_keys": {"openai": "Gs06-openai", "hf": "Gs07-hf"}, "secrets": {"db": "Gs08-db"}},
        "grid": {"tokens": [{"hf": "Gs09-gridmap"}], "extra": [["--password", "Gs10-listarg"]]}}))
    code = main(["grid", "--spec", str(spec)])
    captured = capfd.readouterr()
    printed = captured.out + captured.err
    assert code == 0, printed
    secrets = [f"Gs{k:02d}" for k in range(1, 11)]
    assert not _leaks(tmp_path / "out", printed, secrets)
    (record,) = (tmp_path / "out").rglob("unit.json")
    assert "ASIAEXAMPLE" in (record.parent / "stdout.txt").read_text()  # what is no credential stays readable
    assert json.loads(record.read_text())["unit"]["params"]["api_keys"] == {"openai": "***", "hf": "***"}


PRINTED = {  # what a command may print with a credential in it
    "kubectl config view --raw": "users:\n- name: admin\n  user:\n    token: Gt01kubetok\n",
    "gh hosts.yml": "github.com:\n    oauth_token: Gt02oauth\n    user: me\n",
    "netrc over lines": "machine api.example.org\n  login me\n  password Gt03netrc\n",
    "rclone.conf": "[remote]\ntype = sftp\npass = Gt04rclone\n",
    "my.cnf": '[client]\npassword="Gt05mycnf"\n',
    "export line": 'export SECRET_KEY="Gt06django"\n',
    "terraform output": 'db_password = "Gt07tfout"\n',
    "pulumi table row": "    OUTPUT      VALUE\n    dbPassword  Gt08pulumi\n",
    "vault table row": "Key      Value\ntoken    Gt09vaulttok\n",
    "a word after a credential's name": "password required\n",
    "Python repr": "Settings(openai_api_key='Gt10repr', model='m')\n",
    "PEM private key": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAGt11pem\n"
                       "-----END OPENSSH PRIVATE KEY-----\n",
    "set -x trace": "+ mysql -pGt19trace app\n++ curl -u me:Gt20curl https://x.example\n",
    "Set-Cookie": "Set-Cookie: sid=Gt21cookie; Path=/; HttpOnly\n",
    "Kubernetes env (JSON)": '{"name": "DB_PASSWORD", "value": "Gt22k8s"}\n',
    "Kubernetes env (YAML)": "- name: API_TOKEN\n  value: Gt23yaml\n",
    "NuGet config": '<add key="ApiKey" value="Gt24nuget"/>\n',
    "XML element": "<password>Gt25xml</password>\n",
    "GitLab token": "token glpat-Gt26xT3kq9ZbN2vLmP7r\n",
    "webhook URL in an error": "POST https://hooks.slack.com/services/T01ABCDEF/B01ABCDEF/Gt12Xk9Lm2Qr7Ts1Vw3Yz5Ab "
                               "failed\n",
}


def test_credentials_a_command_prints_and_fed_to_stdin_leak_nowhere(tmp_path, capfd, monkeypatch):
    """Credentials a command prints as configuration text, tables or a PEM block reach neither stdout.txt and
    stderr.txt nor (through a failing unit's error) results.csv and the printed FAILED line; a secret fed to a
    program's standard input (sudo -S, a here-string, pass insert) and a key in a literal URL's path reach no
    unit.json; BW_SESSION and TS_AUTHKEY are secret variables."""
    monkeypatch.setenv("BW_SESSION", "Gt13bwsession")
    monkeypatch.setenv("TS_AUTHKEY", "Gt14tskey")
    (tmp_path / "printed.txt").write_text("".join(PRINTED.values()))  # what the program prints, not its command
    printer = ("import os, sys; text = open('printed.txt').read(); print(text);"
               " print(os.environ['BW_SESSION'], os.environ['TS_AUTHKEY']); sys.stderr.write(text); sys.exit(3)")
    lines = ["echo Gt15sudo | sudo -S true", "gh auth login --with-token <<< Gt16here",
             "echo Gt17pass | pass insert -e web/site",
             "curl -X POST https://hooks.slack.com/services/T01ABCDEF/B01ABCDEF/Gt18Xk9Lm2Qr7Ts1Vw3Yz5Ab"]
    spec = tmp_path / "grid.yml"
    spec.write_text(yaml.safe_dump({
        "name": "printed", "kind": "command", "out": "out", "retries": 0, "workers": 1,
        "command": [sys.executable, "-c", printer, *lines, "{seed}"], "grid": {"seed": [1]}}))
    assert main(["grid", "--spec", str(spec)]) != 0  # the unit fails: its error carries stderr's tail
    captured = capfd.readouterr()
    printed = captured.out + captured.err
    secrets = [f"Gt{k:02d}" for k in range(1, 27)]
    assert not _leaks(tmp_path / "out", printed, secrets)
    (record,) = (tmp_path / "out").rglob("unit.json")
    stdout = (record.parent / "stdout.txt").read_text()
    # the rest stays readable: a PEM block's frame, a credential's name before an ordinary word, a netrc host
    assert "OPENSSH PRIVATE KEY" in stdout and "password required" in stdout and "machine api.example.org" in stdout



@pytest.mark.parametrize("name", ["credential_b64", "gcp_sa_key_b64", "connstr", "judge_key", "llm_key",
                                  "endpoint_key", "bearer", "authz", "cookie", "sas", "hmac", "otp", "totp_seed",
                                  "mfa_code", "pin"])
def test_more_parameter_names_are_credentials(name):
    """Parameter names that are credentials' names: their values must reach neither results.csv nor folder names."""
    assert credential_name(name), name


@pytest.mark.parametrize("name", ["pin_memory", "session", "sas_url", "hmac_algorithm", "max_tokens", "label_key"])
def test_names_near_them_stay_readable(name):
    assert not credential_name(name), name


def test_string_values_holding_arguments_or_key_files_are_masked():
    """A value that is arguments ("--password X") or a key file or kubeconfig (PEM, "token: X") was shown."""
    from evalkit.grid.masking import _secrets
    assert _secrets("--password Gu01-extra --seed 3", "extra_args") == ["Gu01-extra"]
    assert "Gu02-kube" in _secrets("users:\n- name: a\n  user:\n    token: Gu02-kube\n", "kubeconfig")
    assert _secrets("count the tokens of a password reset mail", "prompt") == []


def test_files_a_command_writes_into_its_unit_folder_are_scrubbed_whatever_their_kind(tmp_path, capfd, monkeypatch):
    """A command that finds its unit's folder and writes the environment's password there, as YAML, TSV, UTF-16
    text, Latin-1 text and binary bytes: each file is masked (text through the redaction; other bytes overwritten
    in place, so a binary file keeps its length)."""
    monkeypatch.setenv("DB_PASSWORD", "Gs01-scrubme")
    write = '''import glob, os
secret = os.environ["DB_PASSWORD"]
folder = glob.glob("out/units/*")[0]
open(os.path.join(folder, "notes.yaml"), "w").write("db:\\n  pw: " + secret + "\\n")
open(os.path.join(folder, "rows.tsv"), "w").write("name\\tvalue\\nx\\t" + secret + "\\n")
open(os.path.join(folder, "wide.txt"), "w", encoding="utf-16").write("value " + secret)
open(os.path.join(folder, "wide-le.txt"), "wb").write(("value " + secret).encode("utf-16-le"))
open(os.path.join(folder, "latin.txt"), "wb").write(b"caf\\xe9 " + secret.encode())
open(os.path.join(folder, "blob.bin"), "wb").write(b"\\x00\\xff\\x10" + secret.encode() + b"\\x00\\x01")
open(os.path.join(folder, "stray.txt"), "wb").write(b"\\xff hex " + secret.encode().hex().encode() + b" up "
                                                   + secret.upper().encode())
open(os.path.join(folder, "blob2.bin"), "wb").write(b"\\x00\\x01\\x02" * 50 + secret.encode().hex().encode())
print('{"ok": 1}')
'''
    spec = tmp_path / "grid.yml"
    spec.write_text(yaml.safe_dump({"name": "files", "kind": "command", "out": "out", "retries": 0, "workers": 1,
                                    "command": [sys.executable, "-c", write, "{seed}"], "grid": {"seed": [1]}}))
    code = main(["grid", "--spec", str(spec)])
    printed = "".join(capfd.readouterr())
    assert code == 0, printed
    folder = next((tmp_path / "out" / "units").iterdir())
    for path in folder.iterdir():
        data = path.read_bytes()
        for form in ("Gs01-scrubme".encode("utf-8"), "Gs01-scrubme".encode("utf-16-le"), b"Gs01-scrubme".hex().encode(),
                     b"GS01-SCRUBME"):
            assert form not in data, (path.name, data[:200])
    assert len((folder / "blob.bin").read_bytes()) == 3 + len("Gs01-scrubme") + 2
    assert (folder / "wide.txt").read_text(encoding="utf-16").startswith("value ")
    assert (folder / "wide-le.txt").read_bytes().decode("utf-16-le") == "value ***"  # still UTF-16


def test_a_file_over_the_text_limit_loses_its_secrets_bytes_hex_and_base64_in_place(tmp_path, monkeypatch):
    """A file too large for the redaction (a text too) has each secret's bytes, hex and base64 overwritten in
    place, its length kept."""
    import base64

    import evalkit.grid.scrub as scrub

    monkeypatch.setattr(scrub, "_TEXT_BYTES", 16)
    secret = "Gs02-bigfile9"
    big = tmp_path / "big.log"
    text = f"a {secret} b {secret.encode().hex()} c {base64.b64encode(secret.encode()).decode()} end\n" * 20
    big.write_bytes(text.encode())
    blob = tmp_path / "blob.bin"
    content = b"\x00\x01\x02" * 40 + secret.encode() + b"\x00" + secret.encode().hex().encode()
    blob.write_bytes(content)
    scrub.scrub_folder(tmp_path, [secret])
    data = big.read_bytes()
    assert len(data) == len(text) and data.count(b"end\n") == 20, data[:300]
    for form in (secret.encode(), secret.encode().hex().encode(), base64.b64encode(secret.encode()).rstrip(b"=")):
        assert form not in data and form not in blob.read_bytes(), form
    assert len(blob.read_bytes()) == len(content)


@pytest.mark.parametrize("secret", ['Kw"9\\Lm/Zq8Tx3Rp', "Pässwört-Lq8Zk2Xy", "GpwL7Rk2Tq9Vm4Xz8", "Ab1/Zq8/Ef3/Lq8Z/Ij5"])
def test_a_file_over_the_text_limit_loses_its_secrets_in_every_written_form_and_piece(tmp_path, monkeypatch, secret):
    """A file too large for the redaction loses a given secret in another case, percent-, \\u-, \\x-, octal-,
    entity-, HTML- or JSON-escaped (as ``json.dumps`` of a command's arguments writes it; also with ``\\/``, which
    leaves no piece of a secret cut by slashes), in base32 (either case),
    colon-separated hex, hex or base64 of its UTF-16 text, reversed and as a cut piece, in a text and in a binary,
    its length kept."""
    import base64
    import html
    import json

    import evalkit.grid.scrub as scrub

    monkeypatch.setattr(scrub, "_TEXT_BYTES", 16)
    raw = secret.encode()
    forms = [secret.lower(), secret.upper(), secret.swapcase(), "".join(f"%{b:02x}" for b in raw),
             "".join(f"\\u{ord(c):04x}" for c in secret), secret[2:10], "".join(f"&#{ord(c)};" for c in secret),
             base64.b32encode(raw).decode(), ":".join(f"{b:02x}" for b in raw), json.dumps(secret)[1:-1],
             json.dumps(secret, ensure_ascii=False)[1:-1], secret[::-1],
             base64.b64encode(secret.encode("utf-16-le")).decode(), "".join(f"\\x{b:02X}" for b in raw),
             "".join(f"&#x{ord(c):X};" for c in secret), "".join(f"\\{b:03o}" for b in raw),
             base64.b32encode(raw).decode().lower(), secret.encode("utf-16-le").hex(), html.escape(secret),
             json.dumps(secret)[1:-1].replace("/", "\\/")]
    text = "progress line ok\n" * 50 + "\n".join(f"{n}: {form}" for n, form in enumerate(forms)) + "\nlines: ok\n"
    (tmp_path / "big.log").write_text(text + json.dumps({"argv": [secret, "x"]}) + "\n")
    (tmp_path / "big.bin").write_bytes(b"\x00\x01" * 300 + "\x00".join(forms).encode() + b"\x00lines\x00")
    sizes = {path.name: path.stat().st_size for path in tmp_path.iterdir()}
    scrub.scrub_folder(tmp_path, [secret])
    for path in tmp_path.iterdir():
        data = path.read_bytes()
        assert len(data) == sizes[path.name] and b"lines" in data
        kept = [form for form in forms if form.encode() in data]
        assert not kept and b"Zq8" not in data and b"zq8" not in data and b"Lq8Z" not in data, (path.name, kept)


def test_pieces_across_a_window_of_the_byte_scan_are_read_whole(tmp_path, monkeypatch):
    """The byte scan reads a large file a window at a time: a secret cut by a window's end is masked whole (by its
    pieces, and a written form by the form), and a word it shares is still read as one word, and kept."""
    from evalkit.grid import byte_forms

    monkeypatch.setattr(byte_forms, "_WINDOW", 64)
    secret = "sk-openai-Zq8XwV3kLm9P"
    path = tmp_path / "big.bin"
    written = secret.encode().hex().encode()  # a form found whole, not by pieces, across the next window's start
    content = (b"." * 50 + b"<" + secret.swapcase().encode() + b">" + b"." * 60 + b" openai. " + b"." * 26
               + b"[" + written + b"]" + b"." * 40)
    path.write_bytes(content)
    byte_forms.mask_bytes_in_place(path, [secret])
    data = path.read_bytes()
    assert len(data) == len(content) and b"<" + b"*" * len(secret) + b">" in data and b" openai. " in data
    assert b"[" + b"*" * len(written) + b"]" in data, data


def test_the_scrub_reads_every_encoding_renames_secret_names_and_changes_nothing_through_a_hard_link(tmp_path):
    """A file that looks like UTF-16 for its first 4 KB and is UTF-8 after, or UTF-16 with a UTF-8 line after
    it, still loses the secret; a name holding a secret is renamed; a file hard-linked from outside the folder is
    scrubbed as a copy of its own, and the outside file stays as it was."""
    import evalkit.grid.scrub as scrub

    secret = "Gs03-mixed77"
    folder = tmp_path / "unit"
    folder.mkdir()
    (folder / "mixed.log").write_bytes(b"A\x00" * 2100 + f"secret {secret}\n".encode())
    (folder / "bom.log").write_bytes("\ufeffstart\n".encode("utf-16-le") + f"secret {secret}\n".encode())
    (folder / f"cache-{secret}.json").write_text("{}")
    (folder / f"dir-{secret}").mkdir()
    (folder / f"dir-{secret}" / "x.txt").write_text("x")
    outside = tmp_path / "victim.env"
    outside.write_text(f"APP_SECRET={secret}\n")
    os.link(outside, folder / "linked.env")
    scrub.scrub_folder(folder, [secret])
    for path in folder.rglob("*"):
        assert secret not in path.name, path
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path
    assert outside.read_text() == f"APP_SECRET={secret}\n"
    assert (folder / "cache-***.json").is_file() and (folder / "dir-***" / "x.txt").is_file()


def test_a_hard_linked_sparse_or_secret_free_large_file_costs_no_copy_of_its_size(tmp_path, monkeypatch):
    """A unit's file shared by a hard link is made a copy of its own only to be masked, and then with its holes
    kept: a 1 GiB sparse file holding a secret in its 4 KB of data takes 4 KB again, not 1 GiB; a large shared
    file holding no secret is left linked; the file outside the folder never changes."""
    import evalkit.grid.scrub as scrub

    monkeypatch.setattr(scrub, "_TEXT_BYTES", 16)
    secret = "Gs04-sparse-Zq8XwV"
    folder, outside = tmp_path / "unit", tmp_path / "outside"
    folder.mkdir()
    outside.mkdir()
    sparse = outside / "sparse.bin"
    with open(sparse, "wb") as handle:
        handle.write(f"head {secret} tail".encode())
        handle.truncate(2**30)
    clean = outside / "clean.bin"
    clean.write_bytes(b"weights " * 4096)
    os.link(sparse, folder / "sparse.bin")
    os.link(clean, folder / "clean.bin")
    scrub.scrub_folder(folder, [secret])
    copied = folder / "sparse.bin"
    assert copied.stat().st_size == 2**30 and copied.stat().st_blocks * 512 < 2**20, copied.stat()
    with open(copied, "rb") as handle:
        assert secret.encode() not in handle.read(4096)
    with open(sparse, "rb") as handle:
        assert secret.encode() in handle.read(4096)
    assert (folder / "clean.bin").stat().st_ino == clean.stat().st_ino and clean.read_bytes() == b"weights " * 4096


def test_a_link_left_under_the_scrubs_copy_name_is_never_written_through(tmp_path):
    """A command leaves ``a.log`` hard-linked (so the scrub copies it) and ``a.log.scrub`` a link to a file
    outside its folder: the copy gets a name of its own, and the outside file is not touched."""
    import evalkit.grid.scrub as scrub

    secret = "Gs05-linkname-Zq8XwV"
    folder, victim = tmp_path / "unit", tmp_path / "victim.txt"
    folder.mkdir()
    victim.write_text("the teacher's file\n")
    (folder / "a.log").write_text(f"token {secret}\n")
    os.link(folder / "a.log", tmp_path / "second-link.log")
    (folder / "a.log.scrub").symlink_to(victim)
    scrub.scrub_folder(folder, [secret])
    assert victim.read_text() == "the teacher's file\n"
    assert not (folder / "a.log").is_symlink() and (folder / "a.log").read_text() == "token ***\n"
    assert not [path for path in folder.iterdir() if path.name.startswith(".scrub-")]
