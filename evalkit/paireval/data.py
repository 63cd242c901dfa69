"""Chapter 4 data: the training corpus (DailyDialog, or the embedded chitchat corpus), DailyDialog++
adversarial replies, the Khalid & Lee attack cases, and the synthetic training pairs built from them."""
from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path
from typing import Any, Literal, Sequence

import numpy as np
import pandas as pd

from evalkit.data.dialogue import Texts
from evalkit.data.jsonl import json_lines
from evalkit.data.sources import DataUnavailable, dataset_dir, find_file
from evalkit.data.jsonl import archive_errors_named



# --------------------------------------------------------------------------- corpora

def read_dailydialog(archive: str | Path) -> list[list[str]]:
    """Dialogues (lists of utterances) from one DailyDialog split archive (``train.zip`` etc.).

    Utterances are separated by ``__eou__``; the tokenised spacing of the release (``word , word``) is kept.
    A line with fewer than two utterances is not a dialogue and raises, naming the archive and line.
    """
    archive = Path(archive)
    with archive_errors_named(archive), zipfile.ZipFile(archive) as bundle:
        names = [n for n in bundle.namelist() if n.endswith(".txt") and Path(n).name.startswith("dialogues_")
                 and "_act_" not in n and "_emotion_" not in n]
        if len(names) != 1:
            raise ValueError(f"{archive}: expected one dialogues_<split>.txt, found {names}")
        text = io.TextIOWrapper(bundle.open(names[0]), encoding="utf-8").read()
    dialogues = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        turns = [turn.strip() for turn in line.split("__eou__") if turn.strip()]
        if len(turns) < 2:
            raise ValueError(f"{archive}:{names[0]}, line {number}: fewer than two utterances")
        dialogues.append(turns)
    return dialogues


def load_dailydialog(split: Literal["train", "validation", "test"] = "train", *,
                     data_dir: str | Path | None = None) -> list[list[str]]:
    """One DailyDialog split from ``$EVALKIT_DATA_DIR``/``data_dir`` or the verified download cache."""
    return read_dailydialog(dataset_dir("dailydialog", data_dir=data_dir) / f"{split}.zip")


def read_topical_chat(path: str | Path) -> list[list[str]]:
    """Topical-Chat conversations from one of its JSON files (conversation id -> ``content`` of
    ``{message, agent, ...}``), one list of turns each in file order; a partner's consecutive messages are
    joined into one turn. A file that is not that shape raises ValueError naming the file and conversation."""
    import json

    from evalkit.data.jsonl import read_text

    path = Path(path)
    try:
        records = json.loads(read_text(path))
    except json.JSONDecodeError as error:
        raise ValueError(f"{path}: not JSON ({error})") from None
    if not isinstance(records, dict):
        raise ValueError(f"{path}: expected an object of conversations, got {type(records).__name__}")
    dialogues = []
    for key, record in records.items():
        content = record.get("content") if isinstance(record, dict) else None
        if not isinstance(content, list):
            raise ValueError(f"{path}: conversation {key!r}: field 'content' must be a list of "
                             "{message, agent} turns")
        for position, m in enumerate(content):
            if not (isinstance(m, dict) and isinstance(m.get("message"), str) and "agent" in m):
                raise ValueError(f"{path}: conversation {key!r}: field 'content[{position}]' must be a "
                                 "{message, agent} turn")
        turns: list[str] = []
        previous = None
        for message in content:
            text = " ".join(message["message"].split())
            if not text:
                continue
            if message["agent"] == previous:
                turns[-1] += " " + text
            else:
                turns.append(text)
            previous = message["agent"]
        if len(turns) >= 2:
            dialogues.append(turns)
    return dialogues


def load_topical_chat(split: Literal["valid_freq", "valid_rare", "test_freq", "test_rare"], *,
                      data_dir: str | Path | None = None) -> list[list[str]]:
    """One Topical-Chat file from ``$EVALKIT_DATA_DIR``/``data_dir`` or the verified download cache."""
    root = dataset_dir("topical_chat", data_dir=data_dir)
    path = find_file(root, f"conversations/{split}.json")
    if path is None:
        raise DataUnavailable(f"{root}: no conversations/{split}.json(.gz)")
    return read_topical_chat(path)


def chitchat_dialogues() -> list[list[str]]:
    """The human conversations shipped inside the ``chitchat-dataset`` wheel, one list of turns each
    (a speaker's consecutive messages joined into one turn; single-turn and repeated conversations left
    out) — the embedded fallback corpus."""
    import chitchat_dataset

    dialogues, seen = [], set()
    for conversation in chitchat_dataset.Dataset().values():
        turns = [" ".join(m["text"].strip() for m in turn if m.get("text", "").strip())
                 for turn in conversation["messages"]]
        turns = [t for t in turns if t]
        # Nearly half the conversations have a single turn, and some appear twice; neither can be a
        # training example or may straddle the train/held-out cut.
        if len(turns) >= 2 and tuple(turns) not in seen:
            seen.add(tuple(turns))
            dialogues.append(turns)
    return dialogues


def training_corpus(split: Literal["train", "validation", "test"] = "train", *,
                    data_dir: str | Path | None = None) -> tuple[str, list[list[str]]]:
    """(name, dialogues): DailyDialog when it can be had, else the embedded chitchat corpus.

    The chitchat corpus has no splits: "train" takes its first 90% and the other splits the rest, so a
    comparison set never overlaps the training conversations.
    """
    try:
        return "DailyDialog", load_dailydialog(split, data_dir=data_dir)
    except DataUnavailable:
        dialogues = chitchat_dialogues()
        cut = int(0.9 * len(dialogues))
        return "chitchat-dataset", dialogues[:cut] if split == "train" else dialogues[cut:]


def read_dailydialog_plusplus(path: str | Path) -> list[dict[str, Any]]:
    """Records of one DailyDialog++ file (JSON Lines despite the ``.json`` name; ``.gz`` accepted):
    ``context``, ``positive_responses``, ``adversarial_negative_responses``, ``random_negative_responses``.
    A line that is not JSON or lacks a field raises, naming the file, line and field."""
    needed = ("context", "positive_responses", "adversarial_negative_responses")
    records = []
    for number, record in json_lines(path):
        for name in needed:
            value = record.get(name) if isinstance(record, dict) else None
            if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
                raise ValueError(f"{path}, line {number}, field {name!r}: expected a non-empty list of strings")
        records.append(record)
    return records


def load_dailydialog_plusplus(split: Literal["dev", "test"], *,
                              data_dir: str | Path | None = None) -> list[dict[str, Any]]:
    """DailyDialog++ ``dev`` or ``test`` (the train file is not public in a size we can fetch here)."""
    root = dataset_dir("dailydialog_plusplus", data_dir=data_dir)
    path = find_file(root, f"{split}.json")
    if path is None:
        raise FileNotFoundError(f"{root}: no {split}.json(.gz)")
    return read_dailydialog_plusplus(path)


# --------------------------------------------------------------------------- training examples

COPY_FORMS = ("prefix", "parrot")


def copy_reply(context: Texts, reply: str, form: str) -> str:
    """A reply that repeats its conversation: ``prefix`` puts the previous turn in front of the real reply
    (the speaker mixes up whose words are whose), ``parrot`` answers with the previous turn itself.

    >>> copy_reply(["Hi .", "Want tea ?"], "Yes please .", "prefix"), copy_reply(["Want tea ?"], "Yes .", "parrot")
    ('Want tea ? Yes please .', 'Want tea ?')
    """
    if not context:
        raise ValueError("a copy negative needs at least one context turn")
    previous = str(context[-1]).strip()
    if form == "prefix":
        return f"{previous} {str(reply).strip()}"
    if form == "parrot":
        return previous
    raise ValueError(f"copy form must be one of {COPY_FORMS}, not {form!r}")


def training_pairs(dialogues: Sequence[Texts], n: int, *, seed: int = 0,
                   hard_negatives: Sequence[dict[str, Any]] = (), hard_share: float = 0.5,
                   copy_share: float = 0.0, copy_prefix_share: float = 0.5) -> pd.DataFrame:
    """``n`` pairwise training examples, each two (conversation, reply) sides, one good and one bad.

    The good side is a context and its real next utterance. The bad side is another context with a wrong
    reply: a random utterance of a third dialogue, or — for a share ``hard_share`` of the examples when
    ``hard_negatives`` (DailyDialog++ records) are given — a human-written adversarial reply to that
    record's context. For a share ``copy_share`` (drawn first) the wrong reply repeats its own context
    instead (:func:`copy_reply`; the ``prefix`` form with probability ``copy_prefix_share``, else ``parrot``).
    The good side's slot (A or B) is
    random. With ``hard_negatives`` empty every other negative is random, so the hard-negative ablation keeps
    the number of examples; ``copy_share=0`` draws no copy and leaves the random stream as it was.

    Columns: ``context_a``, ``response_a``, ``context_b``, ``response_b``, ``better`` ("A"/"B"),
    ``negative`` ("random"/"adversarial"/"copy").
    """
    if len(dialogues) < 3:
        raise ValueError("need at least three dialogues (positive, negative context, negative reply)")
    rng = np.random.default_rng(seed)

    def other_than(*taken: int) -> int:
        while True:
            index = int(rng.integers(len(dialogues)))
            if index not in taken:
                return index

    rows = []
    for _ in range(n):
        source = int(rng.integers(len(dialogues)))
        dialogue = dialogues[source]
        cut = int(rng.integers(1, len(dialogue)))
        good = (list(dialogue[:cut]), dialogue[cut])
        if copy_share and rng.random() < copy_share:
            other = dialogues[other_than(source)]
            other_cut = int(rng.integers(1, len(other)))
            if copy_prefix_share == 0.5:  # an even split draws a form index, so the pairs (and cached judges) stay stable
                form = COPY_FORMS[int(rng.integers(len(COPY_FORMS)))]
            else:
                form = "prefix" if rng.random() < copy_prefix_share else "parrot"
            bad, kind = (list(other[:other_cut]), copy_reply(other[:other_cut], other[other_cut], form)), "copy"
        elif hard_negatives and rng.random() < hard_share:
            record = hard_negatives[int(rng.integers(len(hard_negatives)))]
            replies = record["adversarial_negative_responses"]
            bad, kind = (list(record["context"]), replies[int(rng.integers(len(replies)))]), "adversarial"
        else:
            context_source = other_than(source)
            other = dialogues[context_source]
            other_cut = int(rng.integers(1, len(other)))
            reply_source = dialogues[other_than(source, context_source)]
            bad = (list(other[:other_cut]), reply_source[int(rng.integers(len(reply_source)))])
            kind = "random"
        first, second, better = (good, bad, "A") if rng.random() < 0.5 else (bad, good, "B")
        rows.append((first[0], first[1], second[0], second[1], better, kind))
    return pd.DataFrame(rows, columns=["context_a", "response_a", "context_b", "response_b", "better", "negative"])


def pointwise_examples(pairs: pd.DataFrame) -> pd.DataFrame:
    """DirectEval's training data from the same pairs: each side alone, labelled "Yes" (good) or "No".

    >>> pairs = pd.DataFrame({"context_a": [["hi"]], "response_a": ["hello"], "context_b": [["bye"]],
    ...                       "response_b": ["tomato"], "better": ["A"], "negative": ["random"]})
    >>> pointwise_examples(pairs)[["response", "label"]].values.tolist()
    [['hello', 'Yes'], ['tomato', 'No']]
    """
    rows = []
    for row in pairs.itertuples(index=False):
        rows.append((row.context_a, row.response_a, "Yes" if row.better == "A" else "No"))
        rows.append((row.context_b, row.response_b, "Yes" if row.better == "B" else "No"))
    return pd.DataFrame(rows, columns=["context", "response", "label"])


# --------------------------------------------------------------------------- Khalid & Lee attacks

KHALID_LEE_ATTACKS = {
    # attack folder: (paper's column name, whether the change should lower quality)
    "entailment": ("Entailment", True), "pronoun": ("Pronoun Usage", True), "ner": ("Named Entities", True),
    "speaker_sensitiveness": ("Speaker Sensitiveness", True), "contradiction": ("Contradict", True),
    "repetitiveness": ("Repetition", True), "diversity": ("Vocabulary Diversity", True),
    "bad_paraphrase": ("Bad Paraphrase", True), "entrainment": ("Entrainment", True),
    "dullness": ("Dullness", True), "good_paraphrase": ("Good Paraphrase (control)", False),
    "ner_neutral": ("Neutral Entities (control)", False),
}


def _parse_case(text: str, where: str) -> tuple[list[str], list[str]]:
    lines = [line.strip() for line in text.splitlines()]
    try:
        start, middle = lines.index("original_conversation"), lines.index("modified_conversation")
    except ValueError as error:
        raise ValueError(f"{where}: missing the original_conversation/modified_conversation markers") from error
    original = [line for line in lines[start + 1:middle] if line]
    modified = [line for line in lines[middle + 1:] if line]
    if not original or not modified:
        raise ValueError(f"{where}: a conversation has no turns")
    return original, modified


def read_khalid_lee(source: str | Path) -> pd.DataFrame:
    """The Khalid & Lee (2022) DailyDialog attack cases from the tarball or an unpacked folder.

    One row per case: ``attack``, ``case``, ``context`` (the original turns before the last; empty for the
    single-turn cases, 251 of 7,417), ``original``
    and ``modified`` last turns, and ``context_changed`` (True where the attack also edited earlier
    turns; the original context is then used for both replies). A malformed case raises, naming it.
    """
    source = Path(source)
    texts: list[tuple[str, str]] = []
    if source.is_dir():
        for path in sorted(source.rglob("case_*")):
            texts.append((str(path.relative_to(source)), path.read_text(encoding="utf-8")))
    else:
        with archive_errors_named(source), tarfile.open(source) as bundle:
            for member in bundle.getmembers():
                if member.isfile() and Path(member.name).name.startswith("case_"):
                    texts.append((member.name, bundle.extractfile(member).read().decode("utf-8")))  # type: ignore
    rows = []
    for name, text in texts:
        parts = Path(name).parts
        attack, case = parts[-2], int(parts[-1].split("_")[1])
        original, modified = _parse_case(text, f"{source}:{name}")
        rows.append((attack, case, original[:-1], original[-1], modified[-1], modified[:-1] != original[:-1]))
    if not rows:
        raise ValueError(f"{source}: no attack cases found")
    frame = pd.DataFrame(rows, columns=["attack", "case", "context", "original", "modified", "context_changed"])
    return frame.sort_values(["attack", "case"]).reset_index(drop=True)


def load_khalid_lee(*, data_dir: str | Path | None = None) -> pd.DataFrame:
    """The attack cases from ``$EVALKIT_DATA_DIR``/``data_dir`` or the verified download cache."""
    root = dataset_dir("khalid_lee_2022", data_dir=data_dir)
    archive = find_file(root, "daily_dialogue_test_conversations.tar.gz")
    return read_khalid_lee(archive if archive is not None else root)


def corpus_comparisons(dialogues: Sequence[Texts], n: int, *, seed: int = 0) -> list[tuple[list[str], str]]:
    """``n`` comparison examples (context, real next utterance) from distinct dialogues of a corpus —
    the paper draws its N = 3 from DailyDialog's validation split."""
    if n > len(dialogues):
        raise ValueError(f"cannot draw {n} comparison examples from {len(dialogues)} dialogues")
    rng = np.random.default_rng(seed)
    examples = []
    for index in rng.choice(len(dialogues), size=n, replace=False):
        dialogue = dialogues[int(index)]
        cut = int(rng.integers(1, len(dialogue)))
        examples.append((list(dialogue[:cut]), dialogue[cut]))
    return examples
