"""The programs whose command lines carry a credential, and how each carries it: the options that take a
password (``mysql -pPASS``, ``redis-cli -a PASS``, ``zip -P PASS``), the subcommands and login forms that take a
token, the options whose value is read from standard input, and the separators of a shell line. Read by
:func:`evalkit.grid.command_secrets._scan`."""
from __future__ import annotations

import re

# Programs whose short options carry a credential (each program's options are read only after its name).
_CURL = frozenset({"curl"})
_MYSQL = frozenset({"mysql", "mysqldump", "mysqladmin", "mysqlimport", "mysqlshow", "mysqlcheck", "mysqlslap",
                    "mariadb", "mariadb-dump", "mariadb-admin"})
_HTTPIE = frozenset({"http", "https", "httpie", "xh", "xhs"})  # xh reads HTTPie's syntax
# Programs whose short options take a password or a passphrase, standing alone or attached (redis-cli -a PASS,
# zip -P PASS, ssh-keygen -N PHRASE, openssl enc -k PASS, ldapsearch -w PASS).
_LDAP = ("ldapsearch", "ldapadd", "ldapmodify", "ldapdelete", "ldapwhoami", "ldappasswd", "ldapcompare", "ldapmodrdn")
_PASSWORD_OPTIONS = {"redis-cli": frozenset({"-a"}), "mongosh": frozenset({"-p"}), "mongo": frozenset({"-p"}),
                     "zip": frozenset({"-P"}), "unzip": frozenset({"-P"}), "zipcloak": frozenset({"-P"}),
                     "openssl": frozenset({"-k", "-K"}), "ssh-keygen": frozenset({"-N", "-P"}),
                     "sqlcmd": frozenset({"-P"}), "bcp": frozenset({"-P"}), "mosquitto_pub": frozenset({"-P"}),
                     "mosquitto_sub": frozenset({"-P"}), "rabbitmqadmin": frozenset({"-p"}),
                     "twine": frozenset({"-p"}), "cqlsh": frozenset({"-p"}), "cypher-shell": frozenset({"-p"}),
                     "ipmitool": frozenset({"-P"}), "evil-winrm": frozenset({"-p"}), "rdesktop": frozenset({"-p"}),
                     "doctl": frozenset({"-t"}), "useradd": frozenset({"-p"}), "usermod": frozenset({"-p"}),
                     "poetry": frozenset({"-p"}), "nuget": frozenset({"-k", "-p"}), "codecov": frozenset({"-t"}),
                     "influx": frozenset({"-t"}), "doveadm": frozenset({"-p"}), "security": frozenset({"-w"}),
                     "ncftp": frozenset({"-p"}), "ncftpput": frozenset({"-p"}), "ncftpget": frozenset({"-p"}),
                     "sendemail": frozenset({"-xp"}), "yt-dlp": frozenset({"-p"}), "youtube-dl": frozenset({"-p"}),
                     "p4": frozenset({"-P"}), "openai": frozenset({"-k"}), "schtasks": frozenset({"/p", "/rp", "/P", "/RP"}),
                     **{name: frozenset({"-p"}) for name in ("psexec", "PsExec", "psexec64", "PsExec64")},
                     # SNMP: -A/-X passphrases, -c the community (an ordinary word such as "public" stays)
                     **{name: frozenset({"-A", "-X", "-c"}) for name in ("snmpwalk", "snmpget", "snmpset",
                                                                         "snmpbulkwalk", "snmptrap")},
                     **{name: frozenset({"-w"}) for name in _LDAP}, "ldappasswd": frozenset({"-w", "-s", "-a"})}
# Options that take a password in one subcommand only (airflow users create -p X; airflow webserver -p 8080).
_SUBCOMMAND_PASSWORD_OPTIONS = {"airflow": (("users", "create"), frozenset({"-p"})),
                                "kaggle": (("config", "set"), frozenset({"-v", "--value"}))}
# Options whose value is a user name, or "user:password" (also user%password, Samba's form) for any program;
# a pair whose second part is a number is an id pair (docker run -u 1000:1000), no password.
_USER_PAIR_OPTIONS = frozenset({"-u", "-U", "--user", "--username"})
# lftp's -u takes "user,password".
_COMMA_PAIR = {"lftp": frozenset({"-u"})}
# Programs that read a short option's value attached to it (zip -PPASS); openssl's -kfile is another option.
_ATTACHED_OK = frozenset({"zip", "unzip", "zipcloak", "ssh-keygen", "mosquitto_pub", "mosquitto_sub", "sqlcmd",
                          "bcp", *_LDAP})
# Programs whose "login" subcommand takes a token as its argument (vault login TOKEN, wandb login KEY).
_TOKEN_LOGIN = frozenset({"vault", "bao", "wandb", "cargo", "snyk", "bw"})
_TOKEN_LOGIN_WORDS = frozenset({"login", "auth", "unlock"})
# Oracle's tools take USER/PASSWORD[@DATABASE] (also as userid=USER/PASSWORD).
_ORACLE = frozenset({"sqlplus", "sql", "rman", "exp", "imp", "expdp", "impdp", "sqlldr", "dgmgrl"})
_ORACLE_LOGIN = re.compile(r"((?:userid|user)=)?([^/\s@=]+)/([^/\s@]+)(@\S+)?")
# Programs whose password is a positional word (read by _scan's end of command).
_POSITIONAL = frozenset({"smbclient", "net", "wpa_passphrase", "mc", "poetry", "gh", "rabbitmqctl", "xfreerdp",
                         "wlfreerdp", "ngrok", "az", "aws", "chpasswd", "mkpasswd", "rclone", "ansible-vault",
                         "wrangler", "isql"})
# Subcommands whose first positional word is a password to hash or hide (openssl passwd X, rclone obscure X,
# ansible-vault encrypt_string X), and programs that take it as their last word (mkpasswd -m sha-512 X).
_PASSWORD_SUBCOMMANDS = {"openssl": "passwd", "rclone": "obscure", "ansible-vault": "encrypt_string"}
# An option that gives a stored secret's value, in a command about secrets (az keyvault secret set --value,
# aws ssm put-parameter --value, aws secretsmanager ... --secret-string, gh secret set --body).
_VALUE_OPTIONS = frozenset({"--value", "--body", "-b", "--secret-string", "--secret-value"})
_SECRET_COMMANDS = frozenset({"secret", "secrets", "keyvault", "secretsmanager", "ssm", "password", "token",
                              "credential", "credentials", "put-parameter"})
# Options that make a program read a secret from its standard input (echo S | docker login --password-stdin).
_STDIN_SECRET = frozenset({"--password-stdin", "--with-token", "--passwd-on-stdin", "--pass-stdin", "-i",
                           "--stdin", "--token-stdin", "-S", "-s", "--passphrase-fd"})
_STDIN_PROGRAMS = frozenset({"chpasswd", "passwd", "htpasswd", "docker", "podman", "gh", "openconnect", "helm",
                             "cosign", "skopeo", "buildah", "oras", "nerdctl", "crane", "sudo", "smbpasswd", "gpg",
                             "gpg2"})
# Programs that store what they read from standard input as a secret, whatever their options (pass insert).
_STDIN_STORES = {"pass": "insert", "gopass": "insert", "security": "add-generic-password"}
# Archivers whose -pPASS is the archive's password (7z a -pPASS x.7z).
_ARCHIVERS = frozenset({"7z", "7za", "7zr", "rar", "unrar"})
_PROGRAMS = (_CURL | _MYSQL | _HTTPIE | _ARCHIVERS | set(_PASSWORD_OPTIONS) | set(_COMMA_PAIR) | _TOKEN_LOGIN
             | _ORACLE | _POSITIONAL | set(_SUBCOMMAND_PASSWORD_OPTIONS) | {"sshpass", "htpasswd"})
# -pVALUE for another program (a wrapper passing it on) is a password when VALUE looks like one: at least 6
# characters, letters and digits, no "/" or ":" (-p8080:80, -pthread, -pedantic, -pno:cacheprovider and
# Java-style options such as -projectId stay).
_ATTACHED_PASSWORD = re.compile(r"(?=[^/:\s]*?[A-Za-z])(?=[^/:\s]*?\d)[^/:\s]{6,}")  # a letter and a digit
# Where a shell line starts another command: the next word is a program.
_SEPARATORS = frozenset({";", "&&", "||", "|", "|&", "&", "(", ")", ";;"})
# Options whose value is "user:password", for any program, and for curl and HTTPie only.
_PAIR_OPTIONS = frozenset({"--login", "--proxy-user", "--basic-auth"})
_PROGRAM_PAIR_OPTIONS = {"curl": frozenset({"-u", "--user", "-U", "--proxy-user"}),
                         "httpie": frozenset({"-a", "--auth"})}
# Options that take a name and its value as two arguments (jq --arg NAME VALUE): a credential's name makes the value one.
_NAMED_PAIR_OPTIONS = frozenset({"--arg", "--argjson"})
_HEADER_OPTIONS = frozenset({"-H", "--header"})
# A header's name given alone to a header option, its value the next argument (--header X-Api-Key VALUE).
_HEADER_NAME = re.compile(r"([A-Za-z][\w-]*):?")
# Commands of an expect script: after a prompt ("Password:") the next word is one, no value (what it sends is
# read by evalkit.grid.scripts.expect_secrets).
_EXPECT_COMMANDS = frozenset({"send", "exp_send", "expect", "interact", "exp_continue"})
# Words between a credential's name and its value in code and configuration (password = X, :password => X).
_ASSIGNS = frozenset({"=", "=>", ":", ":="})
_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=([^=\s]\S*)")
# A login subcommand (docker login, podman login, az login, helm registry login): its -p is the password.
_LOGIN = re.compile(r"(?i)([\w.]+[-_])?login")
# Options whose value is a user name (ssh -l login): a "login" after one names a user, not a subcommand.
_USER_OPTIONS = frozenset({"-l", "-u", "-U", "--user", "--username", "--login"})
_SSHPASS_VALUED = frozenset({"-p", "-f", "-d", "-P"})
# A parameter of a URL's path: /api;jsessionid=X (a session id), /v1;token=X.
_PATH_PARAMETER = re.compile(r";([\w.-]+)=([^;/?#]+)")
# A Windows option with its value: /pass:X, /password:X (its name judged as an option's).
_SLASH_OPTION = re.compile(r"/([A-Za-z][\w-]*):(\S+)")
