"""What two conversations share: the normalised text both chapters compare, and a conversation's units.

A **unit** is what makes a conversation recognisable elsewhere (after :func:`normalise`: lower case,
punctuation and spacing removed): every adjacent pair of turns, and every utterance of at least
:data:`DISTINCT_WORDS` words (shorter ones, "thank you ." or "ok .", are common to any two conversations and
say nothing about a particular one). The leak cuts of the judges' training data
(:mod:`evalkit.paireval.splits`) and the content groups of the dev and test halves
(:mod:`evalkit.stats.halves`) both read conversations through these units.
"""
from __future__ import annotations

import re
from functools import lru_cache

from evalkit.data.dialogue import Texts

__all__ = ["DISTINCT_WORDS", "PAIR_JOINER", "normalise", "conversation_units"]

DISTINCT_WORDS = 8
PAIR_JOINER = "\u241e"  # joins the two turns of a pair unit; no normalised text holds it

_TOKENISED_CONTRACTION = re.compile(r"\s+(?=n[’']t\b|[’']\w)")
_APOSTROPHE = re.compile(r"[’']")
_NOT_ALPHANUMERIC = re.compile(r"[^a-z0-9]+")


# Leak cuts normalise the same turns again and again (every held-out source, every cut of a run): about seven
# calls per distinct text when the judge data is built, so the last half-million texts are remembered.
@lru_cache(maxsize=1 << 19)
def normalise(text: str) -> str:
    """Lower case, apostrophes dropped, every run of other non-alphanumerics one space — so DailyDialog's
    tokenised "it 's" / "do n't" equal "it's" / "don't" elsewhere.

    >>> normalise("It 's  a  deal , Mr. Smith!") == normalise("it's a deal, mr smith")
    True
    >>> normalise("I do n't know .")
    'i dont know'
    """
    joined = _TOKENISED_CONTRACTION.sub("", text.lower())
    return _NOT_ALPHANUMERIC.sub(" ", _APOSTROPHE.sub("", joined)).strip()


def conversation_units(turns: Texts) -> set[str]:
    """The units of one conversation: its adjacent pairs of turns and its long utterances, normalised.

    >>> units = conversation_units(["Hi!", "Hello there.", "Shall we read the long chapter on kappa today?"])
    >>> sorted(unit.replace(PAIR_JOINER, " / ") for unit in units)  # two pairs and one long utterance
    ['hello there / shall we read the long chapter on kappa today', 'hi / hello there', \
'shall we read the long chapter on kappa today']
    """
    clean = [normalise(t) for t in turns]
    units = {f"{a}{PAIR_JOINER}{b}" for a, b in zip(clean, clean[1:]) if a and b}
    units |= {t for t in clean if len(t.split()) >= DISTINCT_WORDS}
    return units
