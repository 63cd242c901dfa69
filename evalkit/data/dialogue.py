"""The kit's one dialogue vocabulary: what a turn and a conversation are, and how a conversation is written
out for a model or a reader.

The datasets give the same thing in three shapes; each has one name here and every module uses it:

* :class:`Turn` / :data:`Conversation` — ``{"role": ..., "content": ...}`` dicts, the chat format
  (MirrorBench conversations, prompts sent through the model door);
* :data:`Texts` — a conversation as its turns' texts, speakers alternating (DailyDialog, PairEval's
  meta-evaluation sets);
* :data:`History` — ``(speaker, text)`` pairs (UPHELD's dialogue histories).

:func:`render` is the one renderer: ``speaker: text`` lines from any of them (after :func:`roles`,
:func:`alternating` or as given), each text optionally cut to a word budget.
"""
from __future__ import annotations

from typing import Iterable, Sequence, TypedDict

__all__ = ["Turn", "Conversation", "Texts", "History", "clip_words", "roles", "alternating", "render"]


class Turn(TypedDict):
    """One turn of a chat conversation."""

    role: str
    content: str


Conversation = Sequence[Turn]
Texts = Sequence[str]
History = Sequence[tuple[str, str]]


def clip_words(text: str, max_words: int | None) -> str:
    """``text`` cut to ``max_words`` words, an ellipsis marking the cut (unchanged when it fits or no budget).

    >>> clip_words("one two three four", 2), clip_words("one  two", 2)
    ('one two …', 'one  two')
    """
    if max_words is None:
        return text
    words = str(text).split()
    return text if len(words) <= max_words else " ".join(words[:max_words]) + " …"


def roles(conversation: Conversation, *, upper: bool = True) -> list[tuple[str, str]]:
    """A chat conversation as (speaker, text) pairs, the speaker being the role (upper-cased by default).

    >>> roles([{"role": "user", "content": "hi"}])
    [('USER', 'hi')]
    """
    return [(turn["role"].upper() if upper else turn["role"], turn["content"]) for turn in conversation]


def alternating(texts: Texts, speakers: tuple[str, str] = ("Speaker 1", "Speaker 2"), *,
                last: int = 1) -> list[tuple[str, str]]:
    """Texts whose speakers alternate, named from the end: the last text is ``speakers[last]``.

    >>> alternating(["a", "b", "c"])
    [('Speaker 2', 'a'), ('Speaker 1', 'b'), ('Speaker 2', 'c')]
    """
    n = len(texts)
    return [(speakers[(last - (n - 1 - i)) % 2], text) for i, text in enumerate(texts)]


def render(lines: Iterable[tuple[str, str]], *, max_words: int | None = None, empty: str = "") -> str:
    """``speaker: text`` lines (each text cut to ``max_words`` when given); ``empty`` when there are none.

    >>> render([("user", "Hi"), ("assistant", "Hello!")])
    'user: Hi\\nassistant: Hello!'
    >>> render([], empty="(the conversation starts here)")
    '(the conversation starts here)'
    """
    return "\n".join(f"{speaker}: {clip_words(text, max_words)}" for speaker, text in lines) or empty
