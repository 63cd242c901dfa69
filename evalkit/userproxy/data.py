"""MirrorBench conversations: read, normalise and sample; and the human labels that validate its judges.

A mirror set is JSON Lines, one conversation per line: ``dataset``, ``conversation_id``, ``task_description``
(a goal written by MirrorBench's authors) and ``turns`` (``role`` user/assistant, ``content``). Normalising
makes every episode usable by the same driver: English only, consecutive turns of one role merged, empty
turns dropped, the user speaking first (QULAC's stored turns open with the assistant's clarifying question;
its user query is restored from the ``topic`` metadata) and at least one user and one assistant turn.
Everything changed or dropped is counted in the report; a line that is not a conversation raises, naming
the file, line and field.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalkit.data.jsonl import json_lines
from evalkit.data.sources import dataset_dir, find_file
from evalkit.data import dialogue
from evalkit.data.dialogue import Conversation, Turn

__all__ = ["MIRROR_SETS", "MirrorFormatError", "MirrorReport", "read_mirror_set", "load_mirror_set",
           "stratified_episodes", "load_human_labels", "render"]

MIRROR_SETS = ("chatbot_arena", "clariq", "oasst1", "qulac")
ROLES = ("user", "assistant")


class MirrorFormatError(ValueError):
    """A mirror-set line is not a conversation; the message names the file, line and field."""


@dataclass
class MirrorReport:
    """What normalisation did to one file: counts per kind of change, and the lines dropped."""

    file: str
    lines: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    dropped: list[tuple[int, str]] = field(default_factory=list)

    def count(self, kind: str, n: int = 1) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + n


def _turns(record: dict[str, Any], where: str) -> list[Turn]:
    turns = record.get("turns")
    if not isinstance(turns, list):
        raise MirrorFormatError(f"{where}, field 'turns': expected a list of turns")
    clean = []
    for index, turn in enumerate(turns):
        if not isinstance(turn, dict) or turn.get("role") not in ROLES or not isinstance(turn.get("content"), str):
            raise MirrorFormatError(f"{where}, field 'turns[{index}]': expected role user/assistant and text content")
        clean.append({"role": turn["role"], "content": turn["content"].strip()})
    return clean


def _normalise(record: dict[str, Any], turns: list[Turn], report: MirrorReport) -> tuple[list[Turn], bool]:
    """The normalised turns, and whether the opening user query was restored from metadata."""
    if any(not t["content"] for t in turns):
        report.count("empty turns dropped", sum(not t["content"] for t in turns))
        turns = [t for t in turns if t["content"]]
    merged: list[Turn] = []
    for turn in turns:
        if merged and merged[-1]["role"] == turn["role"]:
            merged[-1] = {"role": turn["role"], "content": merged[-1]["content"] + "\n" + turn["content"]}
            report.count("same-role turns merged")
        else:
            merged.append(dict(turn))
    if merged and merged[0]["role"] == "assistant":
        topic = str((record.get("metadata") or {}).get("topic") or "").strip()
        if topic:
            merged.insert(0, {"role": "user", "content": topic})
            report.count("opening user query restored from metadata")
            return merged, True
        merged = merged[1:]
        report.count("opening assistant turn dropped")
    return merged, False


def read_mirror_set(path: str | Path) -> tuple[pd.DataFrame, MirrorReport]:
    """Episodes of one mirror file, normalised, and the report of what changed.

    Columns: ``dataset``, ``conversation_id``, ``goal``, ``turns`` (list of {role, content}), ``user_turns``,
    ``topic_restored`` (the opening user turn was restored from metadata), ``user_tokens`` (whitespace words in
    the user turns), ``stratum``.
    """
    path = Path(path)
    report = MirrorReport(str(path))
    rows = []
    for number, record in json_lines(path, MirrorFormatError):
        report.lines += 1
        where = f"{path}, line {number}"
        if not isinstance(record, dict) or not isinstance(record.get("conversation_id"), (str, int)):
            raise MirrorFormatError(f"{where}, field 'conversation_id': missing")
        turns, restored = _normalise(record, _turns(record, where), report)
        language = str((record.get("metadata") or {}).get("language", "en"))
        if language != "en":
            report.dropped.append((number, f"language {language}"))
            continue
        roles = {t["role"] for t in turns}
        if len(turns) < 2 or roles != set(ROLES):
            report.dropped.append((number, "fewer than two turns or one side missing"))
            continue
        user_turns = sum(t["role"] == "user" for t in turns)
        rows.append({"dataset": str(record.get("dataset") or path.stem.replace("_mirror", "")),
                     "conversation_id": str(record["conversation_id"]),
                     "goal": str(record.get("task_description") or ""), "turns": turns,
                     "topic_restored": restored,
                     "user_turns": user_turns,
                     "user_tokens": sum(len(t["content"].split()) for t in turns if t["role"] == "user"),
                     "stratum": f"{min(user_turns, 3)}{'+' if user_turns >= 3 else ''} user turns"})
    if report.dropped:
        report.count("conversations dropped", len(report.dropped))
    return pd.DataFrame(rows), report


def load_mirror_set(name: str, *, data_dir: str | Path | None = None) -> tuple[pd.DataFrame, MirrorReport]:
    """One MirrorBench set (``chatbot_arena``, ``clariq``, ``oasst1``, ``qulac``), verified and normalised."""
    if name not in MIRROR_SETS:
        raise ValueError(f"unknown mirror set {name!r}; choose from {', '.join(MIRROR_SETS)}")
    root = dataset_dir("mirrorbench", data_dir=data_dir)
    path = find_file(root, f"data/{name}/{name}_mirror.jsonl")
    if path is None:
        raise FileNotFoundError(f"{root}: no data/{name}/{name}_mirror.jsonl")
    return read_mirror_set(path)


def stratified_episodes(episodes: pd.DataFrame, n: int, *, by: str = "stratum", minimum: int = 2,
                        seed: int = 0) -> pd.DataFrame:
    """``n`` episodes spread over the strata of ``by`` in proportion to their size, each stratum given at
    least ``minimum`` (or all it has); seeded, so the same call draws the same episodes.

    >>> frame = pd.DataFrame({"stratum": ["a"] * 18 + ["b"] * 2, "x": range(20)})
    >>> stratified_episodes(frame, 10, minimum=2, seed=1)["stratum"].value_counts().to_dict()
    {'a': 8, 'b': 2}
    """
    if n >= len(episodes):
        return episodes
    rng = np.random.default_rng(seed)
    sizes = episodes[by].value_counts()
    quota = {stratum: min(size, minimum) for stratum, size in sizes.items()}
    left = n - sum(quota.values())
    if left > 0:
        spare = {s: sizes[s] - quota[s] for s in sizes.index}
        total_spare = sum(spare.values())
        shares = {s: left * spare[s] / total_spare for s in spare} if total_spare else {}
        for stratum, share in shares.items():
            quota[stratum] += int(np.floor(share))
        remaining = n - sum(quota.values())
        for stratum in sorted(shares, key=lambda s: -(shares[s] - np.floor(shares[s]))):
            if remaining <= 0:
                break
            if quota[stratum] < sizes[stratum]:
                quota[stratum] += 1
                remaining -= 1
    chosen = []
    for stratum, members in episodes.groupby(by).groups.items():
        take = min(quota.get(stratum, 0), len(members))
        chosen.extend(rng.choice(np.asarray(members), size=take, replace=False).tolist())
    return episodes.loc[sorted(chosen)]


def render(turns: Conversation, max_words: int | None = None) -> str:
    """A conversation as ``USER: …`` / ``ASSISTANT: …`` lines (each turn optionally cut to ``max_words``).

    >>> render([{"role": "user", "content": "hi there you"}, {"role": "assistant", "content": "hello"}], 2)
    'USER: hi there …\\nASSISTANT: hello'
    """
    return dialogue.render(dialogue.roles(turns), max_words=max_words)


def load_human_labels(*, data_dir: str | Path | None = None) -> dict[str, Any]:
    """MirrorBench's human validation of its judges (ChatbotArena, Gemini-2.5-Pro proxy, Claude judge):
    ``gteval`` (real vs proxy conversation, human similarity 0-1, the published judge score), ``pi``
    (two conversations, which user is human: A/B/Tie, the published judge score) and ``published`` (their
    correlation report)."""
    root = dataset_dir("mirrorbench", data_dir=data_dir)
    folder = "human_corr/runs/chatbot_arena_mirror-gemini-2.5-pro-user-gpt-4o-assistant-claude-4-sonnet-judge/"

    def read(name: str) -> Any:
        path = find_file(root, folder + name)
        if path is None:
            raise FileNotFoundError(f"{root}: no {folder}{name}")
        return json.loads(path.read_text(encoding="utf-8"))

    gteval = pd.DataFrame(read("gteval_labeled.json")).merge(
        pd.DataFrame(read("gteval_judge_scores.json"))[["sample_id", "judge_score"]], on="sample_id", how="left")
    pi = pd.DataFrame(read("pi_pairwise_labeled.json")).merge(
        pd.DataFrame(read("pi_pairwise_judge_scores.json")).drop(columns=["human_label"], errors="ignore"),
        on="sample_id", how="left", suffixes=("", "_judge"))
    return {"gteval": gteval, "pi": pi, "published": read("correlation_report.json")["results"]}
