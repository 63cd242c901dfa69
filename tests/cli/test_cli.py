"""The ``evalkit`` command line: every command is listed and answers --help; a wrong one exits 2, named."""
from __future__ import annotations

import pytest

from evalkit import cli
from evalkit.cli.parser import COMMANDS, build_parser


@pytest.mark.parametrize("command", [*COMMANDS, "course"])
def test_every_command_answers_help(command, capsys):
    with pytest.raises(SystemExit) as ended:
        cli.main([command, "--help"])
    assert ended.value.code == 0
    assert f"evalkit {command}" in capsys.readouterr().out


def test_an_unknown_command_exits_2_and_names_it(capsys):
    with pytest.raises(SystemExit) as ended:
        cli.main(["no-such-command"])
    assert ended.value.code == 2
    assert "no-such-command" in capsys.readouterr().err


def test_a_parser_without_a_handler_for_a_command_is_refused():
    handlers = {name: len for name in COMMANDS if name != "grid"}
    with pytest.raises(ValueError, match=r"no handler for the commands \['grid'\]"):
        build_parser("evalkit", handlers)
