"""The names of the human-scored sets a card reports by default (kept apart so the command line needs no pandas), their
titles and a skipped set's reason in a sentence (:func:`set_title`, :func:`skip_reason`),
a name as one line of text, and how long a judge's name may be (:data:`MAX_NAME_CHARS`, :func:`shortened`)."""

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
    """``text`` with every line break and control character (``\\n``, ``\\r``, tab, U+2028...) a space, every
    invisible format character escaped (:func:`visible`), and, where it reads as Latin text, every character that
    could pass for another written as its escape (:func:`_plain`): a judge's name, which a card file may set to
    anything, stays on its line of a table or a sentence, reads as written, and cannot pass for another ("gоod"
    with a Cyrillic ``о`` reads ``g\\u043eod``; a Kelvin sign, a ligature, a digit or letter of another script, a
    blank filler or a lone combining mark are escaped too). Accented Latin letters, common typography, and whole
    names in another script stand as written.

    >>> one_line("a\\nb\\r\\nc\\u2028d\\x00e")
    'a b  c d e'
    >>> print(one_line("evil\\u202egnp.exe"), one_line("g\\u043eod"), one_line("\\u212aiwi"),
    ...       one_line("g\\u0966\\u0966d"))
    evil\\u202egnp.exe g\\u043eod \\u212aiwi g\\u0966\\u0966d
    >>> one_line("café – naïve…"), one_line("судья"), one_line("GPT-4 判定")
    ('café – naïve…', 'судья', 'GPT-4 \\\\u5224\\\\u5b9a')
    """
    text = visible("".join(" " if unicodedata.category(c) in ("Cc", "Zl", "Zp") else c for c in str(text)))
    if text.isascii() or not any("a" <= c <= "z" for c in unicodedata.normalize("NFKC", text).lower()):
        return text  # no Latin letter, even once normalized: nothing it could pass for
    return "".join(c if _plain(c) else (f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}")
                   for c in text)


#: Typography kept as written in Latin text; two names that differ only by it are told apart by the board
#: (:func:`~evalkit.judgecard.cardfiles.named_apart` compares them with their ASCII look-alikes, :data:`LOOKS_LIKE`).
LOOKS_LIKE = {"–": "-", "—": "-", "…": "...", "‘": "'", "’": "'", "“": '"', "”": '"', "«": '"', "»": '"',
              "·": ".", "•": ".", "×": "x", "÷": "/", "→": "->", "←": "<-", "°": "o"}


def _plain(c: str) -> bool:
    """Whether ``c`` reads as itself beside Latin letters: printable ASCII, a composed accented Latin letter (``é``,
    not ``e`` and a lone accent), or common typography (:data:`LOOKS_LIKE`). Any other character (a letter, digit
    or mark of another script, a compatibility form, a space other than the space) could pass for one of them.

    >>> [_plain(c) for c in ("a", "é", "\\u0301", "\\u212a", "\\u0261", "\\ufb01", "判", "–", "\\u2800", "\\u17b4")]
    [True, True, False, False, False, False, False, True, False, False]
    """
    if " " <= c <= "~" or c in LOOKS_LIKE:
        return True
    if unicodedata.normalize("NFKC", c) != c:
        return False  # a compatibility form (a ligature, the Kelvin sign, a fullwidth or mathematical letter)
    decomposed = unicodedata.normalize("NFD", c)
    return len(decomposed) > 1 and decomposed[0].isascii() and decomposed[0].isalpha() \
        and all(unicodedata.category(mark) == "Mn" for mark in decomposed[1:])


MAX_NAME_CHARS = 200
"""The longest judge name a card holds: a name is repeated on every line, table and sentence of a board that names
the judge, so a card file with a name of megabytes would make a board of many megabytes. A board refuses a card with
a longer name (by file and field); a card is never made with one."""


def shortened(text: str, limit: int) -> str:
    """``text`` when it has at most ``limit`` characters, else its start and its end joined by ``…`` to ``limit``
    characters: a name made of a long file name stays within :data:`MAX_NAME_CHARS`, and a refusal shows a value
    of megabytes by its first and last characters. A key of a known shape in it is masked before it is cut.

    >>> shortened("scores:run.jsonl", 40)
    'scores:run.jsonl'
    >>> shortened("abcdefghij", 7)
    'abc…hij'
    """
    from evalkit.models.redaction import redact

    text = str(text)
    margin = limit + 512  # a key across the cut stays whole in the part masked (a value of megabytes is not read)
    text = redact(text) if len(text) <= 2 * margin else redact(text[:margin]) + "…" + redact(text[-margin:])
    if len(text) <= limit:
        return text
    head = limit // 2
    return text[:head] + "…" + text[len(text) - (limit - 1 - head):]


SET_TITLES = {"dailydialog-grade": "DailyDialog-GRADE", "convai2-grade": "ConvAI2-GRADE",
              "dailydialog-zhao": "DailyDialog-Zhao", "personachat-usr": "PersonaChat-USR",
              "topicalchat-usr": "TopicalChat-USR", "fed": "FED", "upheld-main": "UPHELD's main set",
              "upheld-llm_arena": "UPHELD's LLM-Arena set", "upheld-topical_chat": "UPHELD's Topical-Chat set"}


def set_title(name: str) -> str:
    """A set's name as a sentence writes it (its paper's spelling); a name not known stands as written.

    >>> set_title("dailydialog-zhao"), set_title("fed"), set_title("my-set")
    ('DailyDialog-Zhao', 'FED', 'my-set')
    """
    return SET_TITLES.get(name, name)


def skip_reason(why: str) -> str:
    """Why a card did not score a set, in the page's plain words: a reference metric's message (``"<judge> needs
    a reference for every item (n of n have none)"``) becomes "no reference replies"; any other reason stands.

    >>> skip_reason("bleu2 needs a reference for every item (549 of 549 have none)")
    'no reference replies'
    >>> skip_reason("too slow")
    'too slow'
    """
    return "no reference replies" if "needs a reference for every item" in why else why
