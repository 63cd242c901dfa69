"""The names of the human-scored sets a card reports by default (kept apart so the command line needs no pandas),
and a name as one line of text."""

import unicodedata

SET_NAMES = ("dailydialog-grade", "convai2-grade", "dailydialog-zhao", "personachat-usr", "topicalchat-usr", "fed",
             "upheld-main", "upheld-llm_arena", "upheld-topical_chat")


def visible(text: str) -> str:
    """``text`` with every invisible format character (Unicode category Cf: the bidirectional controls such as
    U+202E RIGHT-TO-LEFT OVERRIDE and U+2066-U+2069, zero-width spaces and joiners, U+FEFF) written as its escape,
    e.g. ``\\u202e``: a card's text, which a card file may set to anything, cannot reorder or hide what is shown
    after it on a terminal, in leaderboard.md or on a card's page, nor make two names look alike.

    >>> print(visible("gpt\\u202e4-judge\\u200b"))
    gpt\\u202e4-judge\\u200b
    >>> visible("plain café")
    'plain café'
    """
    return "".join((f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}")
                   if unicodedata.category(c) == "Cf" else c for c in str(text))


def one_line(text: str) -> str:
    """``text`` with every line break and control character (``\\n``, ``\\r``, tab, U+2028...) a space and every
    invisible format character escaped (:func:`visible`): a judge's name, which a card file may set to anything,
    stays on its line of a table or a sentence and reads as written.

    >>> one_line("a\\nb\\r\\nc\\u2028d\\x00e")
    'a b  c d e'
    >>> print(one_line("evil\\u202egnp.exe"))
    evil\\u202egnp.exe
    """
    return visible("".join(" " if unicodedata.category(c) in ("Cc", "Zl", "Zp") else c for c in str(text)))
