"""The realism judge's data (part of :mod:`evalkit.userproxy.realism_encoder`, which re-exports these names).

Real conversations of the mirror sets, each paired with the same conversation whose first ``user_turns``
user turns the proxy re-wrote (:func:`proxy_rewrites`) — at each position the proxy sees the goal and the
*real* conversation so far (teacher forcing: one generation per turn instead of a whole rollout, and both
sides share their context). Conversations that share text with anything held out — MirrorBench's
human-labelled items (:func:`labelled_conversations`) and the judge's own held-out conversations — are
removed before training (:func:`realism_split`). :func:`realism_pairs` gives the (real, proxy) user sides the
encoder reads (:func:`user_side`).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from evalkit.data.dialogue import Turn
from evalkit.models import Backend
from evalkit.paireval.splits import LeakReport, remove_held_out
from evalkit.userproxy.rollout import GoalLevel, clean_user_turn, proxy_messages

__all__ = ["user_side", "RealismSplit", "realism_split", "proxy_rewrites", "realism_pairs", "length_matched",
           "labelled_conversations"]


def user_side(turns: Sequence[Turn], user_turns: int | None = None, *, skip_first: bool = False) -> str:
    """The first ``user_turns`` user turns (None: all), one per line: what the realism encoder reads.
    ``skip_first`` leaves out the opening user turn (QULAC's, which the loader restored from metadata).

    >>> turns = [{"role": "user", "content": " hi "}, {"role": "assistant", "content": "hello"},
    ...          {"role": "user", "content": "thanks"}]
    >>> user_side(turns, 1), user_side(turns, 1, skip_first=True)
    ('hi', 'thanks')
    """
    texts = [str(t["content"]).strip() for t in turns if t["role"] == "user"][1 if skip_first else 0:]
    return "\n".join(texts if user_turns is None else texts[:user_turns])


def _restored(frame: pd.DataFrame) -> list[bool]:
    """Per row: does the conversation open with a user turn the loader restored (``topic_restored``)?"""
    return [bool(v) for v in frame["topic_restored"]] if "topic_restored" in frame else [False] * len(frame)


def _texts(turns: Sequence[Turn]) -> list[str]:
    return [str(t["content"]) for t in turns]


@dataclass
class RealismSplit:
    """Training and held-out conversations (rows of the mirror frames) and what the leak cut removed."""

    train: pd.DataFrame
    heldout: pd.DataFrame
    report: LeakReport
    per_set: pd.DataFrame = field(default_factory=pd.DataFrame)


def realism_split(frames: Mapping[str, pd.DataFrame], held_out: Mapping[str, Sequence[Sequence[Turn]]], *,
                  train_per_set: int, heldout_per_set: int, seed: int = 0) -> RealismSplit:
    """Per mirror set: a seeded draw of held-out conversations; then, per set, training conversations drawn
    from the rest after removing every conversation that shares a held-out unit (an adjacent pair of turns or
    an utterance of 8+ words, normalised — :mod:`evalkit.paireval.splits`) with ``held_out`` (by source name,
    e.g. MirrorBench's labelled items) or with the held-out draw of *any* set (sets can share text).

    Raises ValueError when a set has too few conversations left for the sizes asked.
    """
    rng = np.random.default_rng(seed)
    orders = {name: rng.permutation(len(frame)) for name, frame in frames.items()}
    heldouts = {name: frame.iloc[orders[name][:heldout_per_set]] for name, frame in frames.items()}
    sources = {**{k: [_texts(c) for c in v] for k, v in held_out.items()},
               "held-out conversations": [_texts(c) for part in heldouts.values() for c in part["turns"]]}
    train_parts, heldout_parts, rows = [], [], []
    report = LeakReport(removed_by={name: 0 for name in sources})
    for name, frame in frames.items():
        heldout, rest = heldouts[name], frame.iloc[orders[name][heldout_per_set:]]
        kept_texts, cut = remove_held_out([_texts(c) for c in rest["turns"]], sources)
        kept_keys = {json.dumps(t) for t in kept_texts}
        kept = rest[[json.dumps(_texts(c)) in kept_keys for c in rest["turns"]]]
        if len(kept) < train_per_set or len(heldout) < heldout_per_set:
            raise ValueError(f"mirror set {name!r}: {len(kept)} training and {len(heldout)} held-out conversations "
                             f"left after the leak cut; the recipe asks {train_per_set} and {heldout_per_set}")
        train_parts.append(kept.iloc[:train_per_set])
        heldout_parts.append(heldout)
        report.dialogues_before += cut.dialogues_before
        report.dialogues_after += cut.dialogues_after
        for source, n in cut.removed_by.items():
            report.removed_by[source] += n
        rows.append({"set": name, "conversations": len(frame), "held out": len(heldout),
                     "removed (shares held-out text)": cut.removed, "training pool": len(kept),
                     "trained on": train_per_set})
    return RealismSplit(pd.concat(train_parts, ignore_index=True), pd.concat(heldout_parts, ignore_index=True),
                        report, pd.DataFrame(rows).set_index("set"))


def proxy_rewrites(frame: pd.DataFrame, proxy: Backend, *, user_turns: int, goal_levels: Sequence[str],
                   user_tokens: int, empty_turns: list[dict[str, Any]] | None = None, temperature: float = 0.0,
                   seed: int = 0) -> list[list[Turn]]:
    """Each conversation of ``frame`` (columns ``turns``, ``goal``; ``topic_restored`` if present) with its
    first ``user_turns`` user turns written by ``proxy`` — after the opening when the loader restored it, which
    stays as it is: at each position the proxy reads the goal (or none, by ``goal_levels`` — ``full`` or
    ``none`` — taken in turn over the rows) and the *real* conversation so far. All prompts go in one
    batched, cached call. The returned conversations stop after the last re-written user turn. An empty
    output keeps the rollout's placeholder so the pair stays whole, and is appended to ``empty_turns``
    (conversation id, turn); a backend error or a missing result raises, naming the conversation and turn.
    ``temperature`` and ``seed`` go to the proxy's sampler (0: its most likely turns).
    """
    from evalkit.userproxy.rollout import PLACEHOLDER

    if not goal_levels or set(goal_levels) - {"full", "none"}:
        raise ValueError(f"goal_levels must be 'full' or 'none' (no goal writer here), not {list(goal_levels)}")
    ids = frame["conversation_id"].tolist() if "conversation_id" in frame else list(range(len(frame)))
    prompts, where = [], []
    for row_index, (turns, goal, restored) in enumerate(zip(frame["turns"], frame["goal"], _restored(frame))):
        level: GoalLevel = goal_levels[row_index % len(goal_levels)]  # type: ignore[assignment]
        positions = [k for k, t in enumerate(turns) if t["role"] == "user"][1 if restored else 0:][:user_turns]
        for k in positions:
            prompts.append(proxy_messages(goal if level == "full" else "", level, turns[:k]))
            where.append((row_index, k))
    written = proxy.generate(prompts, max_tokens=user_tokens, temperature=temperature, seed=seed) if prompts else []
    if len(written) != len(prompts):
        raise RuntimeError(f"proxy {getattr(proxy, 'name', proxy)!r} returned {len(written)} results for "
                           f"{len(prompts)} prompts")
    rewritten = [[dict(t) for t in turns] for turns in frame["turns"]]
    last: dict[int, int] = {}
    for (row_index, k), result in zip(where, written):
        if getattr(result, "error", None):
            raise RuntimeError(f"proxy failed on conversation {ids[row_index]!r}, turn {k}: {result.error}")
        text = clean_user_turn(result.texts[0])
        if not text and empty_turns is not None:
            empty_turns.append({"conversation_id": ids[row_index], "turn": k})
        rewritten[row_index][k]["content"] = text or PLACEHOLDER
        last[row_index] = k
    return [turns[:last.get(i, -1) + 1] for i, turns in enumerate(rewritten)]


def realism_pairs(frame: pd.DataFrame, rewrites: Sequence[Sequence[Turn]], user_turns: int) -> pd.DataFrame:
    """(real, proxy) user-side texts per conversation: ``human`` and ``proxy`` columns, plus ``dataset``; a
    restored opening (QULAC) is left out of both sides."""
    restored = _restored(frame)
    return pd.DataFrame({"dataset": frame["dataset"].tolist(),
                         "human": [user_side(t, user_turns, skip_first=r) for t, r in zip(frame["turns"], restored)],
                         "proxy": [user_side(t, user_turns, skip_first=r) for t, r in zip(rewrites, restored)]})


def length_matched(pairs: pd.DataFrame, ratio: float) -> tuple[pd.DataFrame, int]:
    """The (real, proxy) pairs whose two user sides differ in word count by at most ``ratio`` (either way; one
    word at least), so that length cannot tell them apart, and how many pairs were dropped.

    >>> pairs = pd.DataFrame({"human": ["a b", "a b c d e f", "a"], "proxy": ["a b c", "a", "b"]})
    >>> kept, dropped = length_matched(pairs, 1.5)
    >>> kept["human"].tolist(), dropped
    (['a b', 'a'], 1)
    """
    if ratio < 1:
        raise ValueError(f"a length ratio is at least 1, not {ratio}")
    words = lambda column: np.maximum(1, pairs[column].map(lambda text: len(str(text).split())).to_numpy())  # noqa: E731
    keep = np.abs(np.log(words("proxy") / words("human"))) <= np.log(ratio) + 1e-12
    return pairs[keep].reset_index(drop=True), int((~keep).sum())


def labelled_conversations(labels: Mapping[str, Any]) -> list[list[Turn]]:
    """Every conversation in MirrorBench's human-labelled items (real and synthetic, GTEval and PI): text
    the realism encoder must never train on."""
    gt, pi = labels["gteval"], labels["pi"]
    return [list(c) for column in (gt["real_conversation"], gt["synthetic_conversation"],
                                   pi["conversation_a"], pi["conversation_b"]) for c in column]
