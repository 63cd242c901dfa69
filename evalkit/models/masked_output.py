"""A command's printed output with credentials masked: what a command prints names files, judges and values a
user or a card file chose (a folder named after a token, a score field holding a key), and a terminal or a CI log
is a shared record too.

:func:`masked_output` puts a :class:`MaskedStream` in place of ``sys.stdout`` and ``sys.stderr`` while a command
runs; each line is masked whole (:func:`evalkit.models.redact`: the given secrets, such as the environment's, in
any written form or piece, and URL user-info, query values and keys of a known shape), so a secret split across
two ``write`` calls of one line is masked too.
"""
from __future__ import annotations

import contextlib
import sys
from typing import Iterator, Sequence, TextIO

from evalkit.models.redaction import redact

__all__ = ["MaskedStream", "masked_output"]


class MaskedStream:
    """A text stream that writes each line to ``target`` with ``secrets`` and credentials of a known shape masked.

    >>> import io
    >>> target = io.StringIO()
    >>> stream = MaskedStream(target, ["Wm3nBv8Xc2Lk9Pq"])
    >>> _ = stream.write("note: cards/dir_Wm3nBv8"); _ = stream.write("Xc2Lk9Pq/card.json refused\\n")
    >>> _ = stream.write("field 'score': 'sk-proj-AbCdEf0123456789xyz' is not a number\\n")
    >>> print(target.getvalue(), end="")
    note: cards/dir_***/card.json refused
    field 'score': 'sk-***' is not a number
    """

    def __init__(self, target: TextIO, secrets: Sequence[str]) -> None:
        self.target = target
        self.secrets = list(secrets)
        self._line = ""

    def write(self, text: str) -> int:
        """Keep ``text`` until its line ends (a line break, or the carriage return a progress bar redraws with),
        then write the line masked."""
        self._line += text
        end = max(self._line.rfind("\n"), self._line.rfind("\r")) + 1
        if end:
            done, self._line = self._line[:end], self._line[end:]
            self.target.write(redact(done, self.secrets))
        return len(text)

    def flush(self) -> None:
        """Write what is kept of an unfinished line (masked), then flush the target."""
        if self._line:
            self.target.write(redact(self._line, self.secrets))
            self._line = ""
        self.target.flush()

    def isatty(self) -> bool:
        return self.target.isatty()

    def fileno(self) -> int:
        return self.target.fileno()

    @property
    def encoding(self) -> str:
        return getattr(self.target, "encoding", "utf-8")


@contextlib.contextmanager
def masked_output(secrets: Sequence[str]) -> Iterator[None]:
    """While the block runs, ``sys.stdout`` and ``sys.stderr`` write each line with ``secrets`` and credentials of
    a known shape masked.

    >>> with masked_output(["Kq8Zr3Lp5Wn7Xv"]):
    ...     print("unknown judge kind 'Kq8Zr3Lp5Wn7Xv', card folder hf_AbCdEfGhIjKlMnOpQrStUvWxYz12")
    unknown judge kind '***', card folder hf_***
    """
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = (MaskedStream(stream, secrets) for stream in streams)
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            if isinstance(stream, MaskedStream):
                stream.flush()
        sys.stdout, sys.stderr = streams
