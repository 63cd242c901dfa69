"""Judge-based realism of a proxy's user turns: GTEval, pairwise indistinguishability (PI) and
rubric-and-reason (RNR), with human-human (HH) and proxy-proxy (PP) controls and the calibrated score.

Each judge sees the whole conversation (each turn cut to 70 words) and is told to judge only the USER turns.
Two ways to ask, through the same model door:

* ``mode="json"`` (the paper's way): the judge reasons briefly and answers with a JSON verdict; ``samples``
  > 1 repeats the question at temperature 0.7 and averages (self-consistency). Output that cannot be parsed
  is kept as an abstention with its raw text.
* ``mode="probs"``: the verdict is read from next-token probabilities of the label words (GTEval on a 0-9
  scale, PI as A/B/T, RNR as YES/NO) — deterministic, one forward pass, and what a small local model can do.

Scores: GTEval in [0, 1]; PI per sample 1 when the judge takes the proxy for the human, 0.5 for a tie, 0
otherwise (reported as Δw = mean − 0.5); RNR 1 for YES.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal, Sequence

import numpy as np
import pandas as pd

from evalkit.models import Backend, Messages, warn_if_parsed
from evalkit.userproxy.data import render
from evalkit.data.dialogue import Turn

__all__ = ["gteval_messages", "pi_messages", "rnr_messages", "parse_json_verdict", "proxy_slots", "gteval",
           "pairwise_indistinguishability", "rubric_and_reason", "control_pairs", "calibrated", "Verdicts"]

Mode = Literal["json", "probs"]

_WORDS = 70  # each turn cut to this many words: keeps prompts inside a small model's budget


def _user_only_note() -> str:
    return "Judge only the USER turns (how the person writes and behaves); ignore the quality of the ASSISTANT."


def _judge_messages(task: str, shown: str, *, json_answer: str, plain_answer: str, mode: Mode) -> Messages:
    """One user message asking a realism judge ``task`` about the conversations ``shown``: the user-only
    note, the task, the conversations, then how to answer — a JSON object (``json_answer``, after "Answer
    with JSON only: ") in json mode, else the label words ``plain_answer`` asks for."""
    ask = f"Answer with JSON only: {json_answer}" if mode == "json" else plain_answer
    return [{"role": "user", "content": f"{_user_only_note()} {task}\n\n{shown}\n\n{ask}"}]


def gteval_messages(real: Sequence[Turn], proxy: Sequence[Turn], mode: Mode = "json") -> Messages:
    """GTEval: how close are the proxy conversation's user turns to the real user's in style, tone and realism?"""
    return _judge_messages(
        "Compare the user in conversation 1 (a real person) with the user in conversation 2 on style, tone, "
        "naturalness and fit to the context — not on content.",
        f"Conversation 1:\n{render(real, _WORDS)}\n\nConversation 2:\n{render(proxy, _WORDS)}",
        json_answer='{"reasoning": "<two sentences>", "score": <number from 0.0 to 1.0>}, where 0 means nothing '
                    "alike and 1 means indistinguishable in style and realism.",
        plain_answer="Rate the similarity with one digit from 0 (nothing alike) to 9 (indistinguishable). Digit:",
        mode=mode)


def pi_messages(first: Sequence[Turn], second: Sequence[Turn], mode: Mode = "json") -> Messages:
    """PI: two conversations; in which one is the USER a real person? (A, B, or T for cannot tell)"""
    return _judge_messages(
        "In one of these conversations the USER is a real person; in the other the USER is simulated by a "
        "program. Which conversation has the real person?",
        f"Conversation A:\n{render(first, _WORDS)}\n\nConversation B:\n{render(second, _WORDS)}",
        json_answer='{"reasoning": "<two sentences>", "verdict": "A" or "B" or "Tie"}.',
        plain_answer="Answer with one letter: A, B, or T if you cannot tell. Letter:", mode=mode)


def rnr_messages(conversation: Sequence[Turn], mode: Mode = "json") -> Messages:
    """RNR: does the USER read as a real person by a three-point rubric? (YES/NO)"""
    return _judge_messages(
        "Rubric — a real user: (1) writes concisely, as people type to an assistant; (2) does not sound scripted "
        "or artificial; (3) has a natural tone and style. Does the USER below meet the rubric?",
        f"Conversation:\n{render(conversation, _WORDS)}",
        json_answer='{"reasoning": "<one or two sentences>", "verdict": "YES" or "NO"}.',
        plain_answer="Answer YES or NO. Answer:", mode=mode)


_OBJECT = re.compile(r"\{.*?\}", re.DOTALL)


def parse_json_verdict(text: str, key: str) -> object | None:
    """The value of ``key`` in the first JSON object of a judge's answer, or None when there is none.

    >>> parse_json_verdict('Sure! {"reasoning": "terse, human", "score": 0.8} done', "score")
    0.8
    >>> parse_json_verdict("I think A", "verdict") is None
    True
    """
    for candidate in _OBJECT.findall(text):
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict) and key in value:
            return value[key]
    return None


def proxy_slots(n: int, seed: int) -> list[str]:
    """Where the proxy conversation goes in each of ``n`` PI samples ("A" or "B"): a seeded shuffle of as many
    A's as B's (one coin flip for the odd one out), the same for the same ``n`` and seed. Balanced, because a
    judge that prefers one slot would otherwise score the slot draw: with independent coin flips, 8 samples
    gave the proxy slot A twice, and an always-"A" judge a PI of 0.25. Balanced, it scores exactly 0.5.

    >>> proxy_slots(8, seed=13) == proxy_slots(8, seed=13), proxy_slots(8, seed=13).count("A")
    (True, 4)
    >>> sorted({proxy_slots(7, seed).count("A") for seed in range(20)})
    [3, 4]
    """
    rng = np.random.default_rng([seed, n])
    slots = ["A"] * (n // 2) + ["B"] * (n // 2) + ([str(rng.choice(["A", "B"]))] if n % 2 else [])
    return [str(slot) for slot in rng.permutation(slots)]


@dataclass
class Verdicts:
    """Per-sample scores (NaN = abstention), the raw answers, and the mode."""

    scores: np.ndarray
    raw: list[str]
    mode: str
    # probs mode: per sample, whether its probabilities are a parsed one-hot answer (no log-probabilities)
    parsed: list[bool] = field(default_factory=list)

    @property
    def abstentions(self) -> int:
        return int(np.isnan(self.scores).sum())

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame({"score": self.scores, "raw": self.raw})


def _ask_json(prompts: list[Messages], backend: Backend, key: str, convert, samples: int,
              max_tokens: int) -> Verdicts:
    """Ask for JSON verdicts, convert each sample's ``key`` value to a score (``convert``: one function, or
    one per prompt) and average the samples; a prompt with no usable sample is an abstention."""
    converters = convert if isinstance(convert, list) else [convert] * len(prompts)
    temperature = 0.0 if samples == 1 else 0.7
    results = backend.generate(prompts, max_tokens=max_tokens, temperature=temperature, n=samples)
    scores, raw = [], []
    for result, to_score in zip(results, converters):
        values = [to_score(parse_json_verdict(text, key)) for text in result.texts]
        values = [v for v in values if v is not None]
        scores.append(float(np.mean(values)) if values else np.nan)
        raw.append(" ||| ".join(result.texts))
    return Verdicts(np.array(scores), raw, "json")


def _parsed_flags(results, what: str) -> list[bool]:
    warn_if_parsed(results, what)
    return [r.method == "generated" for r in results]


def _number(value) -> float | None:
    if isinstance(value, bool):  # {"score": true} is not a score on the scale asked for
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    # A score outside [0, 1] is not a verdict on the scale asked for: an abstention (its raw text is kept),
    # never clipped into a confident 0 or 1.
    return number if np.isfinite(number) and 0.0 <= number <= 1.0 else None


def gteval(pairs: Sequence[tuple[Sequence[Turn], Sequence[Turn]]], backend: Backend, *, mode: Mode = "probs",
           samples: int = 1, max_tokens: int = 96) -> Verdicts:
    """GTEval score per (real, proxy) pair, in [0, 1]."""
    prompts = [gteval_messages(real, proxy, mode) for real, proxy in pairs]
    if mode == "json":
        return _ask_json(prompts, backend, "score", _number, samples, max_tokens)
    digits = [str(d) for d in range(10)]
    results = backend.label_probs(prompts, digits)
    scores = [sum(int(d) * p for d, p in r.probs.items()) / 9 if r.probs else np.nan for r in results]
    return Verdicts(np.array(scores), [r.text for r in results], "probs", _parsed_flags(results, "GTEval"))


def _proxy_win(verdict, proxy_slot: str) -> float | None:
    """1 when the judge names the proxy's slot as the real person, 0 for the other slot, 0.5 for a tie."""
    answer = str(verdict or "").strip().upper()
    if answer in ("A", "B"):
        return 1.0 if answer == proxy_slot else 0.0
    return 0.5 if answer in ("TIE", "T") else None


def pairwise_indistinguishability(pairs: Sequence[tuple[Sequence[Turn], Sequence[Turn]]], backend: Backend, *,
                                  seed: int = 0, mode: Mode = "probs", samples: int = 1, max_tokens: int = 96,
                                  slots: Sequence[str] | None = None) -> Verdicts:
    """PI per (real, proxy) pair: 1 if the judge takes the proxy for the real person, 0.5 for a tie, else 0
    (in ``probs`` mode the expected value of that under the judge's A/B/T probabilities). The proxy's slot
    is a seeded coin flip per sample unless ``slots`` fixes it (e.g. to replay labelled items)."""
    slots = list(slots) if slots is not None else proxy_slots(len(pairs), seed)
    if len(slots) != len(pairs):
        raise ValueError(f"{len(slots)} slots for {len(pairs)} pairs")
    prompts = [pi_messages(proxy, real, mode) if slot == "A" else pi_messages(real, proxy, mode)
               for (real, proxy), slot in zip(pairs, slots)]
    if mode == "json":
        return _ask_json(prompts, backend, "verdict", [lambda v, s=slot: _proxy_win(v, s) for slot in slots],
                         samples, max_tokens)
    results = backend.label_probs(prompts, ["A", "B", "T"])
    scores = [(r.probs[slot] + 0.5 * r.probs["T"]) if r.probs else np.nan for r, slot in zip(results, slots)]
    return Verdicts(np.array(scores), [r.text for r in results], "probs", _parsed_flags(results, "PI"))


def rubric_and_reason(conversations: Sequence[Sequence[Turn]], backend: Backend, *, mode: Mode = "probs",
                      samples: int = 1, max_tokens: int = 80) -> Verdicts:
    """RNR per conversation: 1 when the judge says the USER reads as real (P(YES) in ``probs`` mode)."""
    prompts = [rnr_messages(conversation, mode) for conversation in conversations]
    if mode == "json":
        convert = {"YES": 1.0, "NO": 0.0}
        return _ask_json(prompts, backend, "verdict", lambda v: convert.get(str(v).strip().upper()), samples,
                         max_tokens)
    results = backend.label_probs(prompts, ["YES", "NO"])
    return Verdicts(np.array([r.probs["YES"] if r.probs else np.nan for r in results]), [r.text for r in results],
                    "probs", _parsed_flags(results, "RNR"))


def control_pairs(conversations: Sequence[Sequence[Turn]], seed: int = 0) -> list[tuple[Sequence[Turn], Sequence[Turn]]]:
    """Pairs of two *different* conversations from one side — human with human (HH) or proxy with proxy (PP):
    each conversation paired with another chosen by a seeded derangement.

    >>> [a for a, b in control_pairs(["x", "y", "z"], seed=3)] == ["x", "y", "z"]
    True
    """
    n = len(conversations)
    if n < 2:
        raise ValueError("controls need at least two conversations")
    shift = 1 + int(np.random.default_rng(seed).integers(n - 1))
    return [(conversations[i], conversations[(i + shift) % n]) for i in range(n)]


def calibrated(score: float, hh: float, pp: float) -> float:
    """clip((score − PP) / (HH − PP), 0, 1): 0 at the proxy-proxy control, 1 at the human-human one. NaN unless
    the human-human control lies above the proxy-proxy one: with the controls equal or inverted the scale has
    no direction (an inverted pair would turn a proxy below both controls into a perfect 1).

    >>> calibrated(0.75, hh=1.0, pp=0.5)
    0.5
    >>> calibrated(0.9, hh=0.8, pp=0.4)
    1.0
    >>> calibrated(0.285, hh=0.287, pp=0.292)
    nan
    """
    if not np.isfinite(hh - pp) or hh - pp < 1e-9:
        return float("nan")
    return float(np.clip((score - pp) / (hh - pp), 0.0, 1.0)) + 0.0  # + 0.0: no "-0.0" in tables
