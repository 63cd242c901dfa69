"""Passwords and tokens on a command line quoted in free text (a log line, an error, a notebook's output): the
value a program's password option, login subcommand or positional argument carries. :data:`COMMAND_SHAPES` is a
part of :data:`evalkit.models.key_shapes.KEY_SHAPES`, which :func:`evalkit.models.redact` masks in any text. A
program's prompt for a password (``mysql -p`` alone, ``psql --password``) holds none and stays as written.
"""
from __future__ import annotations

import re

__all__ = ["COMMAND_SHAPES"]

# Programs whose password option a quoted command may carry (programs, options: regex alternatives).
_PROGRAM_PASSWORD_OPTIONS = [
    ("redis-cli", "-a|--pass"), ("(?:docker|podman|nerdctl|buildah|helm)(?:\\s+registry)?\\s+login", "-p|--password"),
    ("ldap(?:search|add|modify|delete|passwd|whoami|compare|modrdn)", "-w"), ("sqlcmd|bcp", "-P"),
    ("mongosh|mongo|mongodump|mongorestore|mongoexport|mongoimport", "-p|--password"), ("unzip|zip|zipcloak", "-P"),
    ("7za?|7zr", "-p"), ("rabbitmqadmin", "-p|--password"), ("keytool", "-storepass|-keypass|-srcstorepass|-deststorepass"),
    ("gpg2?", "--passphrase"), ("wget", "--http-password|--password|--ftp-password|--proxy-password"),
    ("az\\s+login", "-p|--password"), ("ipmitool", "-P"), ("psexec(?:64)?|PsExec(?:64)?", "-p"),
    ("sshpass", "-p"), ("influx", "-password"), ("openssl", "-passin|-passout|-pass|-k"),
    ("xfreerdp|wlfreerdp|sdl-freerdp", "/p:"), ("unrar|rar", "-p"),
]
_VALUE = r"(?=[^\s-])[^\s\"',;]+"  # the value: not the next option

COMMAND_SHAPES = [
    *[(re.compile(rf"(\b(?:{programs})\b[^\n]{{0,200}}?\s(?:{options})(?:[ \t]+|=)?[\"']?){_VALUE}"), r"\1***")
      for programs, options in _PROGRAM_PASSWORD_OPTIONS],
    # mysql's password is attached (-pPASS, --password=PASS): "-p shop" is a prompt, then the database
    (re.compile(r"(\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n]{0,200}?\s(?:-p|--password=)[\"']?)" + _VALUE), r"\1***"),
    # user:password after curl's -u/--user and its proxy's -U/--proxy-user; smbclient's -U user%password
    (re.compile(r"(\bcurl\b[^\n]{0,300}?\s(?:-u|--user|-U|--proxy-user)\s*[\"']?[^\s:\"']*:)[^\s\"']+"), r"\1***"),
    (re.compile(r"(\b(?:http|https|xh|xhs)\b[^\n]{0,200}?\s(?:-a|--auth)[ \t=]*[\"']?[^\s:\"']*:)[^\s\"']+"), r"\1***"),
    (re.compile(r"(\blftp\b[^\n]{0,200}?\s-u\s*[\"']?[^\s,\"']*,)[^\s\"']+"), r"\1***"),  # lftp -u user,PASS
    (re.compile(r"(\brabbitmqctl\s+(?:add_user|change_password)\s+\S+\s+)" + _VALUE), r"\1***"),
    (re.compile(r"(\bnmcli\b[^\n]{0,300}?\s(?:password|wifi-sec\.psk|802-11-wireless-security\.psk)\s+)" + _VALUE),
     r"\1***"),
    (re.compile(r"(\bsmbclient\b[^\n]{0,200}?\s(?:-U|--user)[ \t=]*[\"']?[^\s%\"']*%)[^\s\"']+"), r"\1***"),
    (re.compile(r"(-pass(?:in|out)?\s+[\"']?pass:)[^\s\"']+"), r"\1***"),  # openssl -passin pass:X
    (re.compile(r"(\bhtpasswd\s[^\n;|&]{0,200}?-[A-Za-z]*b[A-Za-z]*\s[^\n;|&]{0,200}?\s)[^\s\"';|&]+"
                r"(?=[ \t]*(?:$|[\r\n;|&\"']))"), r"\1***"),  # htpasswd -b file user PASSWORD
    # a token given as a login's argument: vault login X, wandb login X, ngrok (config) add-authtoken X,
    # aws configure set aws_secret_access_key X; sqlplus user/PASSWORD@db; net use \\host PASSWORD /user:u
    (re.compile(r"(\b(?:vault|wandb|huggingface-cli|hf)\s+(?:auth\s+)?login\s+(?:--?[\w-]+(?:=\S*)?\s+){0,4})" + _VALUE),
     r"\1***"),
    (re.compile(r"(?i)(\b(?:npm|yarn|pnpm)\s+config\s+set\s+\S*_(?:authToken|auth|password)\s*=?\s*)" + _VALUE), r"\1***"),
    (re.compile(r"(\bngrok\s+(?:config\s+)?add-authtoken\s+)" + _VALUE), r"\1***"),
    (re.compile(r"(?i)(\baws\s+configure\s+set\s+\S*(?:secret|token|password)\S*\s+)" + _VALUE), r"\1***"),
    (re.compile(r"(\bsqlplus\s+(?:-\w+\s+){0,3}[\"']?[\w.$#]+/)[^\s@\"']+"), r"\1***"),
    (re.compile(r"(?i)(\bnet\s+use\s+(?:[A-Z]:\s+)?\\\\\S+\s+)(?!/)[^\s\"']+"), r"\1***"),
]
