"""The names of the human-scored sets a card reports by default (kept apart so the command line needs no pandas),
and a name as one line of text."""

import unicodedata

SET_NAMES = ("dailydialog-grade", "convai2-grade", "dailydialog-zhao", "personachat-usr", "topicalchat-usr", "fed",
             "upheld-main", "upheld-llm_arena", "upheld-topical_chat")


def one_line(text: str) -> str:
    """``text`` with every line break and control character (``\\n``, ``\\r``, tab, U+2028...) a space: a judge's
    name, which a card file may set to anything, stays on its line of a table or a sentence.

    >>> one_line("a\\nb\\r\\nc\\u2028d\\x00e")
    'a b  c d e'
    """
    return "".join(" " if unicodedata.category(c) in ("Cc", "Zl", "Zp") else c for c in str(text))
