"""Scripts a command line feeds a program, read for the credentials they type: the bodies of here-documents
(``ftp -n host <<EOF ... EOF``), ftp's ``user NAME PASSWORD`` line and an expect script's ``send`` after a
password prompt. :func:`evalkit.grid.command_secrets._script_secrets` reads each body as printed output is read and
adds what these functions find."""
from __future__ import annotations

import re

# A here-document's start: <<WORD, <<-WORD, <<'WORD', <<"WORD", <<\WORD (not a here-string, <<<).
_MARKER = re.compile(r"""(?<!<)<<(?!<)-?[ \t]*\\?(["']?)([A-Za-z_][\w.-]*)\1""")
# Programs that read ftp's commands from their input (user NAME PASSWORD logs in).
_FTP = frozenset({"ftp", "pftp", "tnftp", "netkit-ftp", "inetutils-ftp", "lftp", "ncftp"})
_FTP_LOGIN = re.compile(r"(?im)^[ \t]*user[ \t]+\S+[ \t]+(\S+)")
_FTP_QUOTED_PASS = re.compile(r"(?im)^[ \t]*(?:quote|literal)[ \t]+pass[ \t]+(\S+)")
# An expect script: its quoted (or braced) strings and its send commands, in order.
_EXPECT_SCRIPT = re.compile(r"\b(?:spawn|expect)\b")
_EXPECT_STEP = re.compile(r"""\b(?:exp_)?send(?![\w-])(?:[ \t]+-\S*)*[ \t]+"""
                          r"""(?P<sent>"(?:\\.|[^"\\])*"|\{[^{}]*\}|[^\s;{}\]]+)"""
                          r"""|\bexpect(?:[ \t]+-\S+)*[ \t]+(?P<bare>[^\s;{}"\[]+)"""  # expect Password:
                          r"""|"(?:\\.|[^"\\])*"|\{(?![^{}]*\bsend\b)[^{}\n]*\}""")
# A prompt for a credential: "*assword*", "Password:", "Enter passphrase", "PIN:", "Token:".
_PROMPT = re.compile(r"(?i)ssword|passphrase|passcode|pass\b|\bpin\b|token|secret|\botp\b")


def heredocs(text: str) -> list[tuple[str, str]]:
    """Each here-document of a shell script: (the line that opens it, its body). The body runs to the line
    that is its word (leading blanks allowed, as ``<<-`` allows tabs), or to the end of the text.

    >>> heredocs("ftp -n h <<EOF\\nuser me pw\\nEOF\\ncat <<'A' <<B\\na1\\nA\\nb1\\nB")
    [('ftp -n h <<EOF', 'user me pw'), ("cat <<'A' <<B", 'a1'), ("cat <<'A' <<B", 'b1')]
    >>> heredocs("echo $((1 << 3)); cat <<< word")
    []
    """
    lines = text.split("\n")
    found: list[tuple[str, str]] = []
    index = 0
    while index < len(lines):
        opening = lines[index]
        index += 1
        for match in _MARKER.finditer(opening):
            body = []
            while index < len(lines) and lines[index].strip() != match[2]:
                body.append(lines[index])
                index += 1
            index += 1  # the line that ends it
            found.append((opening, "\n".join(body)))
    return found


def ftp_secrets(opening: str, body: str) -> list[str]:
    """The passwords an ftp script types: ``user NAME PASSWORD`` and ``quote PASS PASSWORD``, when the line
    that opens the here-document runs an ftp client (``ftp -n host <<EOF``, ``cat <<EOF | lftp``); another
    program's ``user ...`` line is no login.

    >>> ftp_secrets("ftp -n host <<EOF", "open host\\nuser alice Hunter2xQ9\\nquote PASS Pw-2\\nput f")
    ['Hunter2xQ9', 'Pw-2']
    >>> ftp_secrets("cat > users.txt <<EOF", "user alice admin")
    []
    """
    programs = {word.rsplit("/", 1)[-1] for word in re.split(r"[\s;|&()]+", opening)}
    if not programs & _FTP:
        return []
    return [match[1] for pattern in (_FTP_LOGIN, _FTP_QUOTED_PASS) for match in pattern.finditer(body)]


def expect_secrets(script: str) -> list[str]:
    """What an expect script sends after a prompt for a credential (``expect "*assword*"; send "X\\r"``):
    the ``send`` that follows a string naming a password, a passphrase, a PIN or a token, without its
    ``\\r``/``\\n``. A send after another prompt (``login:``) is a user name or an answer and stays, and so
    does a variable (``send "$pw\\r"``): its value is not in the script.

    >>> expect_secrets('spawn ssh u@h; expect "login:"; send "alice\\\\r"; expect "*assword*"; send "Hunter2\\\\r"')
    ['Hunter2']
    >>> expect_secrets('expect { "*yes/no*" { send "yes\\\\r"; exp_continue } "Password:" { send -- {S3c r3t}\\\\r } }')
    ['S3c r3t']
    >>> expect_secrets('expect "Password:"; send "$env(PW)\\\\r"'), expect_secrets('send the password "x"')
    ([], [])
    """
    if not _EXPECT_SCRIPT.search(script):
        return []
    found: list[str] = []
    prompt = False
    for match in _EXPECT_STEP.finditer(script):
        if match["sent"] is None:  # a pattern expected: a prompt when it names a credential
            prompt = bool(_PROMPT.search(match["bare"] or match[0]))
            continue
        value = match["sent"]
        if value[:1] in ('"', "{"):
            value = value[1:-1]
        value = re.sub(r"(?:\\[rn])+$", "", value)
        if prompt and value and "$" not in value and "[" not in value:
            found.append(value)
        prompt = False
    return found
