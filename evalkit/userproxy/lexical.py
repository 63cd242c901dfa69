"""Lexical diversity of user turns: MATTR, HD-D and Yule's K as pure functions of a token list, and
human-anchored z-scores.

All three take the concatenated user turns of one episode, tokenised the same way for the human and the
proxy. How the turns are joined and tokenised is a :class:`LexicalMode`: the kit's own (``kit``: the default
LM's tokenizer, turns joined by newlines, QULAC's restored opening query kept, texts under ``min_tokens``
left missing) or MirrorBench's (``mirrorbench``: OpenAI's ``o200k_base`` token ids, turns joined by one
space, no restored query, short texts scored and flagged), so that its published numbers can be reproduced.
"""
from __future__ import annotations

import warnings
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Hashable, Sequence

import numpy as np
import pandas as pd
from scipy import stats

__all__ = ["mattr", "hdd", "yules_k", "lexical_features", "lexical_profile", "human_anchored_z", "lm_tokenizer",
           "word_tokenizer", "o200k_tokenizer", "tokenizer_named", "LexicalMode", "LEXICAL_MODES", "user_text",
           "LEXICAL_METRICS"]

# A tokenizer returns the tokens whose types are counted: strings (words, LM pieces) or token ids.
Tokenizer = Callable[[str], Sequence[Hashable]]


def mattr(tokens: Sequence[Hashable], window: int = 50) -> float:
    """Moving-average type-token ratio: the mean type/token ratio over every window of ``window`` tokens,
    sliding by one; the plain type/token ratio when the text is shorter than the window.

    >>> mattr(["a", "a", "b"], window=2)   # windows "a a" (1/2) and "a b" (2/2)
    0.75
    >>> mattr(["a", "b", "a", "b"], window=2)
    1.0
    >>> mattr(["a", "a", "b"], window=50)  # shorter than the window: TTR = 2/3
    0.6666666666666666
    """
    n = len(tokens)
    if n == 0:
        return float("nan")
    if n < window:
        return len(set(tokens)) / n
    counts = Counter(tokens[:window])
    distinct = [len(counts)]
    for leaving, entering in zip(tokens[:n - window], tokens[window:]):
        counts[leaving] -= 1
        if counts[leaving] == 0:
            del counts[leaving]
        counts[entering] += 1
        distinct.append(len(counts))
    return float(np.mean(distinct) / window)


def hdd(tokens: Sequence[Hashable], sample: int = 42) -> float:
    """HD-D: for each type, the probability that a random draw of ``sample`` tokens (without replacement)
    contains it at least once, summed over types and divided by the draw size; the draw is the whole text
    when it is shorter than ``sample``.

    >>> round(hdd(["a", "a", "b"]), 4)    # N = 3 < 42: both types are always drawn -> 2/3
    0.6667
    >>> round(hdd(["a", "a", "b", "c"], sample=2), 4)   # (5/6 + 1/2 + 1/2) / 2
    0.9167
    """
    n_tokens = len(tokens)
    if n_tokens == 0:
        return float("nan")
    draw = min(sample, n_tokens)
    frequencies = np.array(list(Counter(tokens).values()))
    never = stats.hypergeom(n_tokens, frequencies, draw).pmf(0)  # P(a type is missing from the draw)
    return float(np.sum(1 - never) / draw)


def yules_k(tokens: Sequence[Hashable]) -> float:
    """Yule's K = 10^4 * (sum_i i^2 V_i - N) / N^2, with V_i the number of types seen exactly i times;
    lower is more diverse.

    >>> round(yules_k(["a", "a", "b"]), 2)   # V_1 = 1, V_2 = 1: (1 + 4 - 3) / 9 * 10^4
    2222.22
    >>> yules_k(["a", "b", "c"])             # every type once: K = 0
    0.0
    """
    n = len(tokens)
    if n == 0:
        return float("nan")
    spectrum = Counter(Counter(tokens).values())
    return float(1e4 * (sum(i * i * v for i, v in spectrum.items()) - n) / (n * n))


LEXICAL_METRICS = {"mattr": mattr, "hdd": hdd, "yules_k": yules_k}


def lexical_features(texts: Sequence[str], index: Sequence[Any] | None = None, *,
                     prefix: str = "candidate_") -> pd.DataFrame:
    """MATTR, HD-D and Yule's K of each text's words, as columns ``<prefix><metric>`` (chapter 3 uses them as
    features of a candidate reply; a text too short for a metric gets NaN from it).

    >>> lexical_features(["the cat sat on the mat"], ["a"]).columns.tolist()
    ['candidate_mattr', 'candidate_hdd', 'candidate_yules_k']
    """
    tokens = [word_tokenizer(str(text)) for text in texts]
    return pd.DataFrame({f"{prefix}{name}": [function(t) for t in tokens] for name, function in LEXICAL_METRICS.items()},
                        index=None if index is None else list(index))


def word_tokenizer(text: str) -> list[str]:
    """Lower-cased word tokens (letters, digits, apostrophes) — the tokenizer ``lexicalrichness`` uses.

    >>> word_tokenizer("Don't stop, Bob!")
    ["don't", 'stop', 'bob']
    """
    import re

    return re.findall(r"[\w']+", text.lower())


def lm_tokenizer(model: str | None = None) -> Tokenizer:
    """A tokenizer function from a language model's tokenizer (default: the default LM's), returning
    lower-cased token strings with the word-boundary marker stripped."""
    from transformers import AutoTokenizer

    from evalkit.models.defaults import default_lm_path

    tokenizer = AutoTokenizer.from_pretrained(str(model) if model is not None else str(default_lm_path()))

    def tokenize(text: str) -> list[str]:
        pieces = tokenizer.convert_ids_to_tokens(tokenizer.encode(text, add_special_tokens=False))
        return [p.replace("Ġ", "").replace("▁", "").lower() for p in pieces if p.replace("Ġ", "").replace("▁", "").strip()]

    return tokenize


def o200k_tokenizer() -> Tokenizer:
    """MirrorBench's tokenizer: the token ids of OpenAI's ``o200k_base`` encoding (GPT-4o's), from the
    ``bpe-openai`` package, which ships the vocabulary (no download); ``tiktoken`` is used instead only when
    it is installed and already holds the file. Text that looks like a special token is ordinary text.

    >>> tokenize = o200k_tokenizer()
    >>> tokenize("a b a")          # 'a', ' b', ' a': the leading space makes ' a' another type than 'a'
    [64, 287, 261]
    """
    # bpe-openai reads its vocabularies through a deprecated importlib call, at import: nothing for a reader.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            import bpe_openai
        except ImportError:
            bpe_openai = None
        if bpe_openai is not None:
            encoding = bpe_openai.get_encoding("o200k_base")
            encoding.encode_ordinary("")  # loads the vocabulary now, inside the filter
            return encoding.encode_ordinary
    try:
        import tiktoken

        return tiktoken.get_encoding("o200k_base").encode_ordinary
    except Exception as error:  # tiktoken missing, or its file absent and the network closed
        raise RuntimeError("the MirrorBench lexical mode needs the o200k_base vocabulary: install bpe-openai "
                           "(it ships the file; `make install` does) or tiktoken with its file cached "
                           f"(TIKTOKEN_CACHE_DIR); tiktoken said: {error}") from error


def tokenizer_named(name: str | None) -> Tokenizer:
    """A tokenizer by name: ``None`` (the default LM's), ``"words"``, ``"o200k_base"`` or a model id/path."""
    if name == "words":
        return word_tokenizer
    if name == "o200k_base":
        return o200k_tokenizer()
    return lm_tokenizer(name)


@dataclass(frozen=True)
class LexicalMode:
    """How an episode's user turns become the tokens the lexical metrics count.

    ``tokenizer``: a name for :func:`tokenizer_named` (``None``: the job's own tokenizer setting);
    ``joiner``: what goes between user turns; ``restored_topic``: keep an opening user query that the loader
    restored from metadata (QULAC); ``score_short``: texts under ``min_tokens`` tokens are scored (and
    flagged) rather than left missing.
    """

    name: str
    tokenizer: str | None
    joiner: str
    restored_topic: bool
    score_short: bool


LEXICAL_MODES = {
    "kit": LexicalMode("kit", None, "\n", restored_topic=True, score_short=False),
    "mirrorbench": LexicalMode("mirrorbench", "o200k_base", " ", restored_topic=False, score_short=True),
}


def user_text(turns: Sequence[Any], joiner: str = "\n", *, skip_first: bool = False) -> str:
    """The user turns of a conversation joined by ``joiner``; ``skip_first`` leaves out the first user turn
    (an opening query the loader restored from metadata, which the source's users never typed here).

    >>> convo = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yes?"},
    ...          {"role": "user", "content": "bye"}]
    >>> user_text(convo), user_text(convo, " ", skip_first=True)
    ('hi\\nbye', 'bye')
    """
    texts = [t["content"] for t in turns if t["role"] == "user"]
    return joiner.join(texts[1:] if skip_first else texts)


def lexical_profile(texts: Sequence[str], tokenizer: Tokenizer, *, min_tokens: int = 5, window: int = 50,
                    sample: int = 42, score_short: bool = False) -> pd.DataFrame:
    """MATTR, HD-D and Yule's K for each text (an episode's user turns joined), with its token count and
    an ``unstable`` flag for texts under ``min_tokens`` tokens: their values are left missing, or, with
    ``score_short`` (MirrorBench's way), computed and flagged. An empty text is always missing.

    >>> words = lambda text: text.split()
    >>> lexical_profile(["a b a", "a b c d e f"], words)[["tokens", "unstable", "mattr"]].round(3).values.tolist()
    [[3, True, nan], [6, False, 1.0]]
    >>> lexical_profile(["a b a"], words, score_short=True)[["unstable", "mattr"]].round(3).values.tolist()
    [[True, 0.667]]
    """
    rows = []
    for text in texts:
        tokens = list(tokenizer(text))
        unstable = len(tokens) < min_tokens
        if (unstable and not score_short) or not tokens:
            rows.append({"tokens": len(tokens), "unstable": unstable, "mattr": np.nan, "hdd": np.nan,
                         "yules_k": np.nan})
        else:
            rows.append({"tokens": len(tokens), "unstable": unstable, "mattr": mattr(tokens, window),
                         "hdd": hdd(tokens, sample), "yules_k": yules_k(tokens)})
    return pd.DataFrame(rows)


def human_anchored_z(proxy: pd.Series | Sequence[float], human: pd.Series | Sequence[float]) -> float:
    """z = (mean proxy value - mean human value) / sd of the human values on the same dataset; 0 is
    human-like, the sign says in which direction the proxy departs.

    >>> round(human_anchored_z([0.8, 0.8], [0.5, 0.7, 0.9]), 6)
    0.5
    """
    proxy_values = np.asarray(proxy, dtype=float)
    human_values = np.asarray(human, dtype=float)
    proxy_values, human_values = proxy_values[~np.isnan(proxy_values)], human_values[~np.isnan(human_values)]
    spread = human_values.std(ddof=1) if len(human_values) > 1 else float("nan")
    if not spread or np.isnan(spread):
        return float("nan")
    return float((proxy_values.mean() - human_values.mean()) / spread)
