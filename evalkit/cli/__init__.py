"""The ``evalkit`` command: :mod:`.parser` declares every command and its options, :mod:`.commands` runs them."""
from evalkit.cli.commands import main

__all__ = ["main"]
