"""The literal credentials a command line carries (:func:`_scan`): options, parameters, headers and JSON
fields named as credentials, the password options of common programs (:mod:`evalkit.grid.command_programs`),
secrets piped or fed to a program's standard input, keys in a URL's path, and the scripts (here-documents,
``expect``) a shell line feeds a program (:mod:`evalkit.grid.scripts`)."""
from __future__ import annotations

import re
from urllib.parse import quote, urlsplit

from evalkit.models.redaction import (MASK, _ordinary_word, _userinfo_secrets, path_secrets, redact, secret_variable,
                                      url_credentials)
from evalkit.grid.scripts import expect_secrets, ftp_secrets, heredocs
from evalkit.grid.command_programs import (_ARCHIVERS, _ASSIGNMENT, _ASSIGNS, _ATTACHED_OK, _ATTACHED_PASSWORD,
                                           _COMMA_PAIR, _EXPECT_COMMANDS, _HEADER_NAME, _HEADER_OPTIONS, _HTTPIE,
                                           _LOGIN, _MYSQL, _NAMED_PAIR_OPTIONS, _ORACLE, _ORACLE_LOGIN, _PAIR_OPTIONS,
                                           _PASSWORD_OPTIONS, _PASSWORD_SUBCOMMANDS, _PATH_PARAMETER, _PROGRAMS,
                                           _PROGRAM_PAIR_OPTIONS, _SECRET_COMMANDS, _SEPARATORS, _SLASH_OPTION,
                                           _SSHPASS_VALUED, _STDIN_PROGRAMS, _STDIN_SECRET, _STDIN_STORES,
                                           _SUBCOMMAND_PASSWORD_OPTIONS, _TOKEN_LOGIN, _TOKEN_LOGIN_WORDS,
                                           _USER_OPTIONS, _USER_PAIR_OPTIONS, _VALUE_OPTIONS)
from evalkit.grid.text_secrets import (_AUTHORIZATION_END, _SCHEMES, _cookies, _header, _json_fields, _pair,
                                       _slashed_passwords, _templated, _text_secrets, _user_pair, _words)
from evalkit.grid.credential_names import (_URL, _credential_header, _credential_word, _secret_option,
                                           credential_name, name_words)


def _program(word: str) -> str:
    """The program a word names, by its file name (``/usr/bin/curl`` is curl, ``PsExec.exe`` PsExec; http, https
    and xh are HTTPie)."""
    name = word.rsplit("/", 1)[-1].rsplit("\\", 1)[-1]
    name = name[:-4] if name.lower().endswith(".exe") else name
    return "httpie" if name in _HTTPIE else name


def _header_name(argument: str, following: str | None) -> str | None:
    """The credential header's name that ``following`` is when it is given alone to a header option
    (``--header X-Api-Key VALUE``, ``-H "Authorization:" VALUE``), else None. After ``-H`` the name is
    capitalised, as headers are written (``grep -H token notes.txt`` names a pattern and a file).

    >>> _header_name("--header", "x-api-key"), _header_name("-H", "Authorization:"), _header_name("-H", "token")
    ('x-api-key', 'Authorization', None)
    """
    if argument not in _HEADER_OPTIONS or following is None or not _HEADER_NAME.fullmatch(following):
        return None
    name = following.rstrip(":")
    if argument == "-H" and not (name[:1].isupper() or following.endswith(":")):
        return None
    return name if _credential_header(name) else None


def _scan(arguments: list[str], *, prose: bool = False) -> tuple[list[str], dict[int, str]]:
    """The literal credentials in a command's arguments, and the arguments that show one, as they are shown.

    Three general rules hold for every program: the word after a word that names a credential key
    (:func:`_credential_word`: ``aws_secret_access_key X``, ``//registry/:_authToken X``, a netrc line's
    ``password X``; in ``prose``, a prompt's words, only a value that is no ordinary word); every ``name=value``
    piece of an argument whose name is a credential's, an ``Authorization`` value and a ``Bearer`` token
    (:func:`_text_secrets`); and the password of ``user:password`` (or ``user%password``) given to ``-u``,
    ``-U``, ``--user`` or ``--username`` (:func:`_user_pair`). A ``--`` between an option and its value is
    skipped (``--password -- X``).

    Read too, for every program: the value of an option named as a credential (``--password x``,
    ``--password=x``, ``--token x``, ``--api-key=x``, ``--cookie x``: the next argument unless it starts with
    ``--``; a value that starts with ``-`` is taken); the password of a ``user:password`` given to ``--login``,
    ``--proxy-user`` or ``--basic-auth``; the value of a credential header given to ``-H``/``--header``
    (``-H "Authorization: Bearer x"``; also a name and a value as two arguments, ``--header X-Api-Key x``, where
    after ``-H`` the name is capitalised); the value of a variable named as a credential assigned in the command
    (``MYSQL_PWD=x mysql ...``, see :func:`evalkit.models.redaction.secret_variable`); the password given as
    ``pass:x`` to openssl's ``-passin``, ``-passout`` or ``-pass``; the password of a URL
    (``https://user:pw@host/...``; the URL itself is masked where it is written); the values of fields named
    as credentials in a JSON body (``-d '{"token": "x"}'``, ``--data={"password": "x"}``, see
    :func:`_json_fields`); the password after ``-p`` (or attached, ``-pPASS``) following a login subcommand
    (``docker login -u me -p x``, ``podman login``, ``az login``, ``helm registry login``; a ``login`` that is
    the value of ``-l``, ``-u``, ``--user``... is a user name); a value attached to ``-p`` that looks like a
    password (at least 6 characters, letters and digits, no ``/`` or ``:``: ``-pS3cret-x``; ``-p8080``,
    ``-pthread``, ``-pedantic``, ``-projectId`` stay).

    Read only after the program's name, since the same short option means other things elsewhere
    (``ssh -p 2222``, ``python -u``): for curl ``-u``/``--user``/``-U`` ``user:password`` (also attached,
    ``-uuser:pw``), ``-b`` cookie data (a value with ``=``; without one it names a cookie file) and ``-H``
    attached; for HTTPie (``http``, ``https``, ``xh``) ``-a``/``--auth user:password`` and credential headers written
    ``Name:value``; for mysql, mysqldump, mysqladmin, mariadb... (and 7z, rar, unrar) the password attached
    to ``-p`` (``-pPASS``; a ``-p`` standing alone asks for the password, and the word after it is the
    database, which stays); for sshpass ``-p PASS`` and ``-pPASS`` (the program it runs starts a command of
    its own); the short password options of :data:`_PASSWORD_OPTIONS` (redis-cli ``-a``, mongosh ``-p``,
    zip ``-P``, openssl ``-k``/``-K``, ssh-keygen ``-N``/``-P``, ldapsearch ``-w``...; a value that starts with
    ``-`` is the next option: the program asks for the password); htpasswd's password with ``-b`` (its last
    word); vault's ``login TOKEN``; lftp's ``-u user,password``. A program is the first word of a command, or one of
    these names later in it (``sudo mysql``, ``timeout 9 curl``; ``http`` and ``https`` only as the first
    word: they are ordinary words too).

    A word with blanks in it is a shell line (``sh -c "..."``), read as a command of its own; in a shell line
    ``;``, ``&&``, ``|``... start another command, and its here-documents and expect scripts are read too
    (:func:`_script_secrets`). A value with a placeholder (``{pw}``) is shown as it is: the
    unit's value is masked with its values.

    >>> _scan(["curl", "-u", "bob:pw-1234", "-b", "sid=c00kie9", "-p", "8080"])[1]
    {2: 'bob:***', 4: '***'}
    >>> _scan(["mysql", "-uroot", "-pdbpass1", "app"])[1], _scan(["ssh", "-p", "2222", "host"])[1]
    ({2: '-p***'}, {})
    """
    found: list[str] = []
    shown: dict[int, str] = {}
    program = ""
    starts = True  # the next word that is no option and no assignment is a program (sshpass's own command too)
    login = False  # after a login subcommand: -p is its password
    skip = set()
    batch, words = False, []  # htpasswd -b; the positions of the command's words that are no option
    piped: list[int] = []  # the words an echo or printf pipes into the next command
    begun = 0  # where the command being read starts

    def secret_at(position: int, value: str | None = None, shown_as: str = MASK) -> None:
        if not _templated(arguments[position]):
            found.append(arguments[position] if value is None else value)
            shown[position] = shown_as

    def end_command() -> None:
        """The passwords a program takes as a positional word, read once its words are known."""
        texts = [arguments[i] for i in words]
        if program in ("chpasswd", "passwd") and piped:
            for position in piped:  # echo USER:PASSWORD | chpasswd: the line and its password
                secret_at(position)
                if ":" in arguments[position] and not _templated(arguments[position]):
                    found.append(arguments[position].partition(":")[2].split(":")[0])
        if piped and _STDIN_STORES.get(program) in texts:
            for position in piped:  # echo X | pass insert -e web/site
                secret_at(position)
        if piped and {"secret", "secrets"} & set(texts) and {"set", "put", "create", "add"} & set(texts):
            for position in piped:  # echo X | gh secret set NAME; printf X | wrangler secret put NAME
                secret_at(position)
        if program in _PASSWORD_SUBCOMMANDS and texts[:1] == [_PASSWORD_SUBCOMMANDS[program]] and len(words) >= 2:
            secret_at(words[-1] if program == "openssl" else words[1])  # openssl passwd -6 X; rclone obscure X
        if program == "mkpasswd":
            valued = {"-m", "--method", "-S", "--salt", "-R", "--rounds", "-P", "--password-fd"}
            plain = [i for i in words if not (i and arguments[i - 1] in valued)]
            if plain:
                secret_at(plain[0])  # mkpasswd [-m METHOD] PASSWORD [SALT]
        if program == "htpasswd" and batch and len(words) >= 2:
            secret_at(words[-1])  # htpasswd -b [-c] FILE USER PASSWORD: the last word
        elif program in ("smbclient", "net"):  # smbclient //host/share PASSWORD; net use \\host\share PASSWORD
            share = next((k for k, t in enumerate(texts) if t.startswith(("//", "\\\\"))), None)
            if share is not None and share + 1 < len(texts) and words[share + 1] == words[share] + 1 \
                    and texts[share + 1] != "*" and not texts[share + 1].startswith("/"):
                secret_at(words[share + 1])  # the word right after the share
        elif program == "rabbitmqctl" and texts[:1] in (["add_user"], ["change_password"]) and len(words) >= 3:
            secret_at(words[2])  # rabbitmqctl add_user USER PASSWORD
        elif program == "ngrok" and "add-authtoken" in texts and texts.index("add-authtoken") + 1 < len(texts):
            secret_at(words[texts.index("add-authtoken") + 1])
        elif program == "isql" and len(words) >= 3:
            secret_at(words[2])  # isql DSN USER PASSWORD (unixODBC)
        elif program == "wpa_passphrase" and len(words) >= 2:
            secret_at(words[1])  # wpa_passphrase SSID PASSPHRASE
        elif program == "mc" and texts[:2] == ["alias", "set"] and len(words) >= 6:
            secret_at(words[5])  # mc alias set ALIAS URL ACCESS_KEY SECRET_KEY
        elif program == "mc" and texts[:3] == ["config", "host", "add"] and len(words) >= 7:
            secret_at(words[6])
        elif program == "poetry":  # poetry config http-basic.REPO USER PASSWORD
            basic = next((k for k, t in enumerate(texts) if t.startswith("http-basic.")), None)
            if basic is not None and basic + 2 < len(texts):
                secret_at(words[basic + 2])
        elif program in _ORACLE:  # sqlplus USER/PASSWORD@DATABASE, expdp userid=USER/PASSWORD
            for position, text in zip(words, texts):
                pair = _ORACLE_LOGIN.fullmatch(text)
                if pair:
                    secret_at(position, pair[3], f"{pair[1] or ''}{pair[2]}/{MASK}{pair[4] or ''}")

    for index, argument in enumerate(arguments):
        value_index = index + 1
        if value_index + 1 < len(arguments) and ((arguments[value_index] == "--" and (
                (_secret_option(argument) and "=" not in argument) or _credential_word(argument)))
                or (arguments[value_index] in _ASSIGNS and _credential_word(argument))):
            value_index += 1  # --password -- VALUE: "--" ends the options; password = VALUE, :password => VALUE
        following = arguments[value_index] if value_index < len(arguments) else None
        if index in skip:
            continue
        named_header = _header_name(argument, following)
        if named_header and value_index + 1 < len(arguments) and arguments[value_index + 1] not in _SEPARATORS \
                and not arguments[value_index + 1].startswith("-"):  # --header X-Api-Key VALUE: two arguments
            secrets, text = _header(f"{named_header}: {arguments[value_index + 1]}")
            if secrets:
                secret_at(value_index + 1, secrets[0], text.partition(": ")[2])
            skip.update({value_index, value_index + 1})
            continue
        if argument in _SEPARATORS:
            end_command()
            piped = [i for i in words if program in ("echo", "printf")] if argument in ("|", "|&") else []
            program, starts, login, batch, words = "", True, False, False, []
            continue
        named = _program(argument)
        assigned = _ASSIGNMENT.fullmatch(argument)
        if assigned and _program(assigned[2]) in _PROGRAMS - _HTTPIE:  # ProxyCommand=sshpass -p X ssh j
            end_command()
            program, starts, login, batch, words = _program(assigned[2]), False, False, False, []
            begun = index
            continue
        if not argument.startswith("-") and not assigned and (
                starts or (named in _PROGRAMS and named not in _HTTPIE)):  # curl after sudo, timeout 5, env...
            end_command()
            program, starts, login, batch, words = named, named == "sshpass", False, False, []
            begun = index
            continue
        if not argument.startswith("-") and index not in skip:
            words.append(index)
        if program == "htpasswd":
            if argument.startswith("-") and not argument.startswith("--"):
                batch = batch or "b" in argument[1:]
            continue
        if program == "isql" and not argument.startswith("-"):
            continue  # isql DSN USER PASSWORD: positional words (end_command); a DSN here names a data source
        earlier = [arguments[i] for i in words if i < index]
        if argument.partition("=")[0] in _VALUE_OPTIONS and any(
                word in _SECRET_COMMANDS or set(name_words(word)) & {"secret", "secrets", "password", "parameter"}
                for word in earlier):  # gh secret set NAME --body VALUE; az keyvault secret set --value VALUE
            if "=" in argument and not _templated(argument):
                found.append(argument.partition("=")[2])
                shown[index] = argument.partition("=")[0] + "=" + MASK
            elif following is not None and "=" not in argument:
                secret_at(value_index)
                skip.add(value_index)
            continue
        if argument in _NAMED_PAIR_OPTIONS and value_index + 1 < len(arguments) \
                and credential_name(arguments[value_index].lstrip("$")):
            secret_at(value_index + 1)  # jq -n --arg token VALUE '{t: $token}'
            skip.update({value_index, value_index + 1})
            continue
        if argument == "<<<" and following is not None and (
                program in ("chpasswd", "passwd") or _STDIN_STORES.get(program) in earlier
                or (program in _STDIN_PROGRAMS and any(arguments[i] in _STDIN_SECRET for i in range(begun, index)))):
            secret_at(value_index)  # gh auth login --with-token <<< TOKEN: a here-string is the program's input
            skip.add(value_index)
            continue
        if piped and (argument in _STDIN_SECRET and program in _STDIN_PROGRAMS or program in ("chpasswd",)):
            for position in piped:  # echo SECRET | docker login --password-stdin
                secret_at(position)
            piped = []
        if program in ("vault", "bao") and (earlier[:2] in (["kv", "put"], ["kv", "patch"]) or earlier[:1] == ["write"]) \
                and "=" in argument and not argument.startswith("-") and not _templated(argument):
            name, _, value = argument.partition("=")  # vault kv put PATH key=VALUE: every value is stored secret
            if value and not value.startswith("@"):
                found.append(value)
                shown[index] = f"{name}={MASK}"
            continue
        if program in ("vault", "bao") and earlier[:1] == ["token"] and len(earlier) == 1 \
                and argument in ("lookup", "revoke", "renew") and following is not None \
                and not following.startswith("-"):
            secret_at(value_index)  # vault token lookup TOKEN
            skip.add(value_index)
            continue
        if program == "redis-cli" and argument.upper() == "SET" and [w.upper() for w in earlier[-1:]] == ["CONFIG"] \
                and following is not None and value_index + 1 < len(arguments) \
                and (credential_name(following) or following.lower() in ("masterauth", "requirepass")):
            secret_at(value_index + 1)  # CONFIG SET masterauth PASSWORD
            skip.add(value_index + 1)
            continue
        if program == "redis-cli" and argument.upper() == "AUTH":
            rest = []
            for k in range(index + 1, min(index + 3, len(arguments))):
                if arguments[k] in _SEPARATORS or arguments[k].startswith("-"):
                    break
                rest.append(k)
            if rest:
                secret_at(rest[-1])  # AUTH [USER] PASSWORD
            continue
        if program == "httpie" and argument in ("-a", "--auth") and following is not None and ":" not in following \
                and any(arguments[k].lower() in ("bearer", "--auth-type=bearer", "-abearer")
                        for k in range(begun, index)):
            secret_at(value_index)  # http -A bearer -a TOKEN: the token whole
            skip.add(value_index)
            continue
        subcommand, flags = _SUBCOMMAND_PASSWORD_OPTIONS.get(program, ((), frozenset()))
        if argument in flags and following is not None and tuple(earlier[:len(subcommand)]) == subcommand \
                and not following.startswith("-") and (program != "kaggle" or any(
                    credential_name(word) for word in earlier[len(subcommand):])):
            secret_at(value_index)  # airflow users create -p X; kaggle config set -n key -v X
            skip.add(value_index)
            continue
        if program in ("xfreerdp", "wlfreerdp") and argument.lower().startswith("/p:"):
            secret_at(index, argument[3:], argument[:3] + MASK)
            continue
        if (_LOGIN.fullmatch(argument) or (program in _TOKEN_LOGIN and argument in _TOKEN_LOGIN_WORDS)) \
                and not (index and arguments[index - 1] in _USER_OPTIONS):
            login = True
            continue
        if login and program in _TOKEN_LOGIN and not argument.startswith("-") and "=" not in argument:
            if not _templated(argument):  # vault login TOKEN
                found.append(argument)
                shown[index] = MASK
            login = False
            continue
        if login and argument.startswith("-p") and not argument.startswith("--"):
            value = argument[2:] or (following if following is not None and not following.startswith("-") else "")
            if value and not _templated(value):
                found.append(value)
                shown[index if argument[2:] else index + 1] = f"-p{MASK}" if argument[2:] else MASK
            if not argument[2:] and value:
                skip.add(index + 1)
            login = False  # its one password: a later -p (ssh -p 2222) is another program's
            continue
        secrets, replacement, taken = _argument_secrets(program, argument, following, prose=prose)
        if program == "sshpass" and argument in _SSHPASS_VALUED and following is not None:
            taken = True  # -f FILE, -d FD, -P PROMPT: values of sshpass's own options, not the program it runs
        if " " in argument.strip():
            secrets = _scan(_words(argument), prose=_prose(arguments, index))[0] + secrets  # sh -c "..."
        found += secrets
        if replacement is not None:
            shown[value_index if taken else index] = replacement
        if taken:
            skip.add(value_index)
    end_command()
    return [value for value in dict.fromkeys(found) if value], shown


def _argument_secrets(program: str, argument: str, following: str | None, *,
                      prose: bool = False) -> tuple[list[str], str | None, bool]:
    """What one argument of ``program`` gives away: (secrets, how the argument holding them is shown or None,
    whether that argument is the next one, ``following``). See :func:`_scan` for the forms read; in ``prose``
    (the words of a text such as a prompt) the word after a credential's name counts only when it is no
    ordinary word ("password reset" stays, "password hunter2" does not)."""
    option, equals, attached = argument.partition("=")
    prefixed = argument.startswith("-") and bool(equals)  # --data={...}
    body = attached if prefixed else argument
    if body.lstrip().startswith(("{", "[")):  # a JSON body: its credential fields
        secrets, text = _json_fields(body)
        if secrets:
            return secrets, (f"{option}={text}" if prefixed else text), False
    nxt = following if following is not None and not following.startswith("--") else None
    pairs = _PAIR_OPTIONS | _PROGRAM_PAIR_OPTIONS.get(program, frozenset())
    if option in pairs and argument.startswith("-"):
        if equals:
            secrets, text = _pair(attached)
            return secrets, f"{option}={text}" if secrets else None, False
        if nxt is not None and (":" in nxt or option not in _PAIR_OPTIONS):
            secrets, text = _pair(nxt)
            return secrets, text if secrets else None, True
        return [], None, False
    if option in _COMMA_PAIR.get(program, ()) and nxt is not None:
        secrets, text = _user_pair(nxt, ",")  # lftp -u user,password
        return secrets, text if secrets else None, bool(secrets)
    if option in _USER_PAIR_OPTIONS or (argument[:2] in ("-u", "-U") and len(argument) > 2 and not equals):
        value = attached if equals else nxt if option in _USER_PAIR_OPTIONS else argument[2:]
        secrets, text = _user_pair(value or "")
        if secrets:
            shown = f"{option}={text}" if equals else text if option in _USER_PAIR_OPTIONS else argument[:2] + text
            return secrets, shown, option in _USER_PAIR_OPTIONS and not equals
    if option in ("-passin", "-passout", "-pass") and (attached if equals else following or "").startswith("pass:"):
        value = attached if equals else following or ""  # openssl: pass:PASSWORD (env:, file:, fd: name no secret)
        return [value[5:], value], (f"{option}=pass:{MASK}" if equals else f"pass:{MASK}"), not equals
    if program in _ARCHIVERS and argument.startswith("-hp") and len(argument) > 3 and not _templated(argument):
        return [argument[3:]], f"-hp{MASK}", False  # rar -hpPASSWORD: the headers' password too
    if argument.startswith("-p") and len(argument) > 2 and not argument.startswith("--") and (
            program in _MYSQL or program in _ARCHIVERS or program == "sshpass"
            or _ATTACHED_PASSWORD.fullmatch(argument[2:])):  # before the options: -pMyPassword is no --my-password
        return ([], None, False) if _templated(argument) else ([argument[2:]], f"-p{MASK}", False)
    for flag in _PASSWORD_OPTIONS.get(program, ()):  # zip -P PASS, ssh-keygen -N PHRASE, ldapsearch -wPASS
        if argument == flag and following is not None and not following.startswith("-") \
                and not (flag == "-c" and _ordinary_word(following)):
            return ([], None, True) if _templated(following) else ([following], MASK, True)
        if argument.startswith(flag) and len(argument) > 2 and program in _ATTACHED_OK and not _templated(argument):
            return [argument[2:]], flag + MASK, False
    slashed = _SLASH_OPTION.fullmatch(argument)
    if slashed and credential_name(slashed[1], option=True) and not _templated(argument):
        return [slashed[2]], f"/{slashed[1]}:{MASK}", False  # cmdkey /pass:X, wmic /password:X
    if _secret_option(argument) and argument not in _STDIN_SECRET:  # --with-token is a switch: input is the token
        read = _cookies if "cookie" in option.lower() else (lambda value: [value])
        if equals:
            return ([], None, False) if _templated(attached) else (read(attached), f"{option}={MASK}", False)
        if following is not None and not following.startswith("--"):
            return ([], None, True) if _templated(following) else (read(following), MASK, True)
        return [], None, False
    if argument in _HEADER_OPTIONS or (option == "--header" and equals):
        value = attached if equals else following
        if value is None:
            return [], None, False
        secrets, text = _header(value)
        return (secrets, (f"{option}={text}" if equals else text) if secrets else None, not equals)
    if program == "curl" and argument[:2] in ("-u", "-U", "-H", "-b") and len(argument) > 2:
        flag, value = argument[:2], argument[2:]
        secrets, text = _header(value) if flag == "-H" else _pair(value) if flag in ("-u", "-U") else \
            ((_cookies(value), MASK) if "=" in value and not _templated(value) else ([], value))
        return secrets, (flag + text) if secrets else None, False
    if program == "curl" and argument == "-b" and following is not None:
        return (_cookies(following), MASK, True) if "=" in following and not _templated(following) else ([], None, True)
    if program == "httpie" and not argument.startswith("-") and ":" in argument and "://" not in argument:
        secrets, text = _header(argument.replace(":", ": ", 1))
        if secrets:
            return secrets, text, False
    if program == "curl" and option in ("--cert", "-E", "--proxy-cert") and (attached if equals else following):
        value = attached if equals else following or ""  # curl --cert FILE:PASSWORD
        path, colon, password = value.rpartition(":")
        if colon and password and not re.fullmatch(r"[A-Za-z]", path) and "/" not in password \
                and "\\" not in password and not _templated(value):
            text = f"{path}:{MASK}"
            return [password], (f"{option}={text}" if equals else text), not equals
    if program == "sshpass" and argument == "-p" and following is not None and not following.startswith("-"):
        return ([], None, True) if _templated(following) else ([following], MASK, True)
    if _credential_word(argument) and following is not None and following not in _SEPARATORS \
            and following not in _EXPECT_COMMANDS and not following.startswith(("-", "=")) \
            and not (prose and _ordinary_word(following)):  # aws configure set aws_secret_access_key X; netrc
        return ([], None, True) if _templated(following) else ([following], MASK, True)
    if _AUTHORIZATION_END.fullmatch(argument.strip()) and following is not None and not following.startswith("-") \
            and following not in _SEPARATORS and not _templated(following) \
            and not following.lower().startswith(_SCHEMES):  # "Authorization:" "TOKEN", "Authorization: Bearer" "TOKEN"
        return [following], MASK, True
    assignment = _ASSIGNMENT.fullmatch(argument)
    if assignment and secret_variable(assignment[1]) and not _templated(assignment[2]):
        return [assignment[2]], f"{assignment[1]}={MASK}", False
    if _URL.fullmatch(argument) and not _templated(argument):  # its password, also where it appears without the URL
        credentials = url_credentials(argument)
        # its password, and a user that is a token (https://TOKEN@github.com/org/repo.git)
        secrets = _userinfo_secrets(argument, lone_user=False)
        if credentials is not None and credentials[1]:
            secrets.append(quote(credentials[1], safe=""))
        secrets += path_secrets(argument)  # a webhook's key, a bot's token: a key in the path
        secrets += [match[2] for match in _PATH_PARAMETER.finditer(urlsplit(argument).path)
                    if credential_name(match[1], option=True) or match[1].lower().endswith(("sessionid", "sid"))]
        secrets += [argument[start:end] for start, end in _slashed_passwords(argument)]
        if secrets:
            return secrets, redact(argument, secrets), False
    secrets, text = _text_secrets(argument)
    scripted = [secret for secret in _script_secrets(argument) if secret not in secrets]
    if scripted:  # a here-document's body, an expect script: their credentials wherever they stand
        return secrets + scripted, redact(text, scripted), False
    return (secrets, text, False) if secrets else ([], None, False)


def _script_secrets(text: str) -> list[str]:
    """The credentials of the scripts a shell line feeds a program (:mod:`evalkit.grid.scripts`): each
    here-document's body read as printed output is read (:func:`output_secrets`: ``password=X``, ``token: X``,
    SQL's ``IDENTIFIED BY 'X'``...) with ftp's ``user NAME PASSWORD`` for an ftp client, and what an expect
    script sends after a password prompt. A value with a placeholder (``{pw}``) stays: the unit's value is
    masked with its values.

    >>> _script_secrets("ftp -n h <<EOF\\nuser me Hunter2xQ9\\nEOF\\ncat > a.ini <<'X'\\n[db]\\npassword = Pw-ini9\\nX")
    ['Hunter2xQ9', 'Pw-ini9']
    >>> _script_secrets('expect -c \\'spawn ssh u@h; expect "*assword*"; send "Hunter2\\\\r"\\'')
    ['Hunter2']
    """
    from evalkit.grid.printed_secrets import output_secrets  # which reads a traced command line with _scan

    found = []
    for opening, body in heredocs(text):
        found += ftp_secrets(opening, body) + output_secrets(body)
    found += expect_secrets(text)
    return [secret for secret in dict.fromkeys(found) if secret != MASK and not _templated(secret)]


def _prose(arguments: list[str], index: int) -> bool:
    """Whether the argument at ``index``, which has blanks, is a text (a prompt, a message) rather than a shell
    line: no ``-c`` before it (``sh -c "..."``) and no netrc line (``machine HOST login ... password ...``).

    >>> _prose(["sh", "-c", "a b"], 2), _prose(["t", "--prompt", "a b"], 2), _prose(["printf", "machine h login"], 1)
    (False, True, False)
    """
    return not ((index and arguments[index - 1] == "-c") or arguments[index].lstrip().startswith(("machine ",
                                                                                                  "default ")))


def _command_secrets(arguments: list[str]) -> list[str]:
    """The credentials written into a command's arguments (the forms :func:`_scan` reads).

    >>> _command_secrets(["tool", "--password", "hunter2", "--api-key=k3y0", "--seed", "1"])
    ['hunter2', 'k3y0']
    >>> _command_secrets(["sh", "-c", "sshpass -p ssh-pw-1 ssh -p 2222 host; curl -H 'Authorization: Bearer t0k'"])
    ['ssh-pw-1', 't0k']
    """
    return _scan(arguments)[0]
