"""Chapter 4 — PairEval: score a response by comparing it with responses from other conversations.

    s(h, r) = mean over comparison examples (h_j, r_j) of P(r is the better reply),

each comparison asked in both orders (target shown as A, then as B) and averaged, which cancels a judge's
position bias. The judge is a small LM fine-tuned with LoRA on synthetic pairs: the real next utterance of a
conversation against a random utterance of another dialogue or a human-written adversarial reply
(DailyDialog++). DirectEval, the pointwise baseline, asks P("Yes") to "is this a good reply?" after training
on the same data.

Everything a prompt shows is clipped the same way in training and scoring (:data:`PROMPT_LIMITS`): the last
few turns of a context, each utterance cut to a word budget — the price of running a judge on a CPU.
"""
from __future__ import annotations

import gzip
import hashlib
import io
import json
import math
import re
import tarfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Literal, Sequence

import numpy as np
import pandas as pd
from scipy import optimize, stats

from .models import Backend, Messages
from .sources import DataUnavailable, dataset_dir, find_file

__all__ = ["PROMPT_LIMITS", "PromptLimits", "read_dailydialog", "load_dailydialog", "chitchat_dialogues",
           "training_corpus", "read_dailydialog_plusplus", "load_dailydialog_plusplus", "training_pairs",
           "pointwise_examples", "pair_messages", "direct_messages", "pairwise_matrix", "paireval_scores",
           "compare_responses", "directeval_scores", "TrainingRun", "train_lora", "fit_temperature",
           "apply_temperature", "expected_calibration_error", "reliability_table", "MetaEvalFormatError",
           "META_EVAL_COLUMNS", "read_meta_eval", "write_meta_eval", "upheld_meta_eval", "meta_evaluate",
           "read_khalid_lee", "load_khalid_lee", "KHALID_LEE_ATTACKS", "bleu2", "restrict_positions",
           "comparison_runs", "exhaustive_matrix", "correlations", "ranking_accuracy", "enriched_sample",
           "corpus_comparisons", "score_frame"]

Turns = Sequence[str]
Position = Literal["both", "first", "second"]


# --------------------------------------------------------------------------- prompt limits

@dataclass(frozen=True)
class PromptLimits:
    """How much of a conversation a prompt shows: the last ``turns`` turns, each cut to ``words`` words."""

    turns: int = 3
    words: int = 60

    def clip(self, text: str) -> str:
        """``text`` cut to the word budget, an ellipsis marking the cut.

        >>> PromptLimits(words=3).clip("one two three four five")
        'one two three …'
        """
        words = str(text).split()
        return " ".join(words[:self.words]) + (" …" if len(words) > self.words else "")

    def context(self, turns: Turns) -> list[str]:
        """The last ``turns`` turns of a context, each clipped.

        >>> PromptLimits(turns=2, words=2).context(["a b c", "d", "e f g"])
        ['d', 'e f …']
        """
        return [self.clip(turn) for turn in list(turns)[-self.turns:]] if self.turns > 0 else []


PROMPT_LIMITS = PromptLimits()


# --------------------------------------------------------------------------- corpora

def read_dailydialog(archive: str | Path) -> list[list[str]]:
    """Dialogues (lists of utterances) from one DailyDialog split archive (``train.zip`` etc.).

    Utterances are separated by ``__eou__``; the tokenised spacing of the release (``word , word``) is kept.
    A line with fewer than two utterances is not a dialogue and raises, naming the archive and line.
    """
    archive = Path(archive)
    with zipfile.ZipFile(archive) as bundle:
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


def chitchat_dialogues() -> list[list[str]]:
    """The human conversations shipped inside the ``chitchat-dataset`` wheel, one list of turns each
    (a speaker's consecutive messages joined into one turn) — the embedded fallback corpus."""
    import chitchat_dataset

    dialogues = []
    for conversation in chitchat_dataset.Dataset().values():
        turns = [" ".join(m["text"].strip() for m in turn if m.get("text", "").strip())
                 for turn in conversation["messages"]]
        turns = [t for t in turns if t]
        if len(turns) >= 2:
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
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    needed = ("context", "positive_responses", "adversarial_negative_responses")
    records = []
    with opener(path, "rt", encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}, line {number}: not JSON ({error.msg})") from error
            for name in needed:
                value = record.get(name)
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

def training_pairs(dialogues: Sequence[Turns], n: int, *, seed: int = 0,
                   hard_negatives: Sequence[dict[str, Any]] = (), hard_share: float = 0.5) -> pd.DataFrame:
    """``n`` pairwise training examples, each two (conversation, reply) sides, one good and one bad.

    The good side is a context and its real next utterance. The bad side is another context with a wrong
    reply: a random utterance of a third dialogue, or — for a share ``hard_share`` of the examples when
    ``hard_negatives`` (DailyDialog++ records) are given — a human-written adversarial reply to that
    record's context. The good side's slot (A or B) is random. With ``hard_negatives`` empty every negative
    is random, so the hard-negative ablation keeps the number of examples.

    Columns: ``context_a``, ``response_a``, ``context_b``, ``response_b``, ``better`` ("A"/"B"),
    ``negative`` ("random"/"adversarial").
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
        if hard_negatives and rng.random() < hard_share:
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


# --------------------------------------------------------------------------- prompts

def _dialogue_text(context: Turns, limits: PromptLimits) -> str:
    shown = limits.context(context)
    if not shown:
        return "(the conversation starts with the reply)"
    speakers = ("Speaker 1", "Speaker 2")
    offset = len(shown) % 2  # the reply's speaker is always "Speaker 2"
    return "\n".join(f"{speakers[(i + offset) % 2]}: {turn}" for i, turn in enumerate(shown))


def pair_messages(context_a: Turns, response_a: str, context_b: Turns, response_b: str, *,
                  limits: PromptLimits = PROMPT_LIMITS) -> Messages:
    """The pairwise prompt: two (conversation, reply) pairs, which reply fits its conversation better?"""
    prompt = ("Two short conversations follow, each with a proposed next reply.\n\n"
              f"Conversation A:\n{_dialogue_text(context_a, limits)}\nReply A: {limits.clip(response_a)}\n\n"
              f"Conversation B:\n{_dialogue_text(context_b, limits)}\nReply B: {limits.clip(response_b)}\n\n"
              "Which reply is the better continuation of its own conversation? Answer with one letter: A or B.")
    return [{"role": "user", "content": prompt}]


def direct_messages(context: Turns, response: str, *, limits: PromptLimits = PROMPT_LIMITS) -> Messages:
    """DirectEval's prompt: one conversation and a reply — is it a good reply? (Yes/No)"""
    prompt = (f"Conversation:\n{_dialogue_text(context, limits)}\nProposed reply: {limits.clip(response)}\n\n"
              "Is the proposed reply a good next turn for this conversation? Answer Yes or No.")
    return [{"role": "user", "content": prompt}]


# --------------------------------------------------------------------------- scoring

def pairwise_matrix(contexts: Sequence[Turns], responses: Sequence[str], comparisons: Sequence[tuple[Turns, str]],
                    backend: Backend, *, positions: Position = "both",
                    limits: PromptLimits = PROMPT_LIMITS) -> np.ndarray:
    """P(target is better) for every target x comparison example x order, shape ``(targets, N, 2)``.

    Order 0 shows the target as A, order 1 as B; an order left out by ``positions`` (or an abstention)
    is NaN. Every score and ablation of the chapter is an average over parts of this array, and all its
    prompts go to the backend in one batched label-probability request.
    """
    if len(contexts) != len(responses):
        raise ValueError(f"{len(contexts)} contexts but {len(responses)} responses")
    if not comparisons:
        raise ValueError("PairEval needs at least one comparison example")
    prompts, slots = [], []
    for target, (context, response) in enumerate(zip(contexts, responses)):
        for j, (other_context, other_response) in enumerate(comparisons):
            if positions in ("both", "first"):
                prompts.append(pair_messages(context, response, other_context, other_response, limits=limits))
                slots.append((target, j, 0))
            if positions in ("both", "second"):
                prompts.append(pair_messages(other_context, other_response, context, response, limits=limits))
                slots.append((target, j, 1))
    matrix = np.full((len(contexts), len(comparisons), 2), np.nan)
    for (target, j, order), result in zip(slots, backend.label_probs(prompts, ["A", "B"])):
        if result.probs is not None:  # an abstention stays NaN rather than a guess
            matrix[target, j, order] = result.probs["A" if order == 0 else "B"]
    return matrix


def _mean_over(matrix: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    counts = np.sum(~np.isnan(matrix), axis=axes)
    totals = np.nansum(matrix, axis=axes)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, totals / np.maximum(counts, 1), np.nan)


def paireval_scores(contexts: Sequence[Turns], responses: Sequence[str], comparisons: Sequence[tuple[Turns, str]],
                    backend: Backend, *, positions: Position = "both",
                    limits: PromptLimits = PROMPT_LIMITS) -> np.ndarray:
    """PairEval score of each (context, response): P(better) averaged over comparisons and orders.

    ``positions``: "both" (the paper's setting), or "first"/"second" for one order only (its Table 5).
    """
    matrix = pairwise_matrix(contexts, responses, comparisons, backend, positions=positions, limits=limits)
    return _mean_over(matrix, (1, 2))


def compare_responses(contexts: Sequence[Turns], first: Sequence[str], second: Sequence[str], backend: Backend, *,
                      limits: PromptLimits = PROMPT_LIMITS) -> np.ndarray:
    """P(``first`` reply is better than ``second``) for the same context, both orders averaged — how
    PairEval judges an original reply against its corrupted version in one prompt."""
    prompts = []
    for context, a, b in zip(contexts, first, second):
        prompts.append(pair_messages(context, a, context, b, limits=limits))
        prompts.append(pair_messages(context, b, context, a, limits=limits))
    results = backend.label_probs(prompts, ["A", "B"])
    values = np.full((len(contexts), 2), np.nan)
    for index, result in enumerate(results):
        if result.probs is not None:
            values[index // 2, index % 2] = result.probs["A" if index % 2 == 0 else "B"]
    return _mean_over(values, (1,))


def directeval_scores(contexts: Sequence[Turns], responses: Sequence[str], backend: Backend, *,
                      limits: PromptLimits = PROMPT_LIMITS) -> np.ndarray:
    """DirectEval: P("Yes") that each reply is a good next turn (NaN where the judge abstains)."""
    results = backend.label_probs([direct_messages(c, r, limits=limits) for c, r in zip(contexts, responses)],
                                  ["Yes", "No"])
    return np.array([r.probs["Yes"] if r.probs is not None else np.nan for r in results])


# --------------------------------------------------------------------------- LoRA training

@dataclass
class TrainingRun:
    """A trained (or cached) LoRA adapter and how its training went."""

    adapter: Path
    losses: list[float]
    seconds_per_step: float
    config: dict[str, Any]
    from_cache: bool = False
    examples: int = 0

    def loss_curve(self, window: int = 5) -> pd.DataFrame:
        """Per-step loss with a trailing moving average (the curve the notebook plots)."""
        frame = pd.DataFrame({"step": np.arange(1, len(self.losses) + 1), "loss": self.losses})
        frame["smoothed"] = frame["loss"].rolling(window, min_periods=1).mean()
        return frame


def _training_key(config: dict[str, Any], prompts: list[Messages], targets: list[str]) -> str:
    digest = hashlib.sha256(json.dumps(config, sort_keys=True).encode())
    for messages, target in zip(prompts, targets):
        digest.update(json.dumps([messages, target]).encode())
    return digest.hexdigest()[:20]


def train_lora(prompts: Sequence[Messages], targets: Sequence[str], *, steps: int, batch_size: int = 4,
               learning_rate: float = 1e-4, r: int = 16, alpha: int = 8, dropout: float = 0.05, seed: int = 0,
               model: str | Path | None = None, target_modules: Sequence[str] = ("q_proj", "v_proj"),
               output_dir: str | Path | None = None, reuse: bool = True, progress: bool = False) -> TrainingRun:
    """Fine-tune a LoRA adapter so the model answers each prompt with its target label word.

    The loss is the cross-entropy of the target's first token at the answer position (the label words
    "A"/"B" or "Yes"/"No" are one token each) — exactly the probability the judge is later read from.
    Examples are shuffled with ``seed`` and taken ``batch_size`` at a time, cycling when ``steps`` asks for
    more; fp32 AdamW. The adapter lands in ``output_dir`` (default: the evalkit cache, keyed by model,
    settings and data); with ``reuse`` an adapter already trained on the same inputs is loaded instead.
    """
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from .defaults import cache_dir, default_lm_path, quiet_model_loading
    from .models import _folder_fingerprint

    if len(prompts) != len(targets) or not prompts:
        raise ValueError(f"need as many targets as prompts (got {len(prompts)} prompts, {len(targets)} targets)")
    location = str(model) if model is not None else str(default_lm_path())
    config = {"model": Path(location).name, "model_fingerprint": _folder_fingerprint(Path(location))
              if Path(location).is_dir() else location, "steps": steps, "batch_size": batch_size,
              "learning_rate": learning_rate, "r": r, "alpha": alpha, "dropout": dropout, "seed": seed,
              "target_modules": list(target_modules)}
    key = _training_key(config, list(map(list, prompts)), list(targets))
    folder = Path(output_dir) if output_dir is not None else cache_dir() / "adapters" / key
    record = folder / "evalkit-training.json"
    if reuse and record.is_file():
        saved = json.loads(record.read_text())
        if saved.get("key") == key:
            return TrainingRun(folder, saved["losses"], saved["seconds_per_step"], saved["config"], True,
                               saved["examples"])

    quiet_model_loading()
    torch.manual_seed(seed)
    tokenizer = AutoTokenizer.from_pretrained(location)
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    base = AutoModelForCausalLM.from_pretrained(location, dtype=torch.float32)
    lora = LoraConfig(r=r, lora_alpha=alpha, lora_dropout=dropout, target_modules=list(target_modules),
                      task_type="CAUSAL_LM")
    peft_model = get_peft_model(base, lora)
    encoded = [list(tokenizer.apply_chat_template(list(map(dict, m)), add_generation_prompt=True, tokenize=True,
                                                  return_dict=True)["input_ids"]) for m in prompts]
    target_ids = [tokenizer.encode(t, add_special_tokens=False)[0] for t in targets]
    order = np.random.default_rng(seed).permutation(len(encoded))
    optimizer = torch.optim.AdamW([p for p in peft_model.parameters() if p.requires_grad], lr=learning_rate)
    peft_model.train()
    losses: list[float] = []
    started = time.perf_counter()
    iterator: Iterable[int] = range(steps)
    if progress:
        from tqdm.auto import tqdm

        iterator = tqdm(iterator, desc="LoRA steps")
    for step in iterator:
        batch = [int(order[(step * batch_size + k) % len(order)]) for k in range(batch_size)]
        width = max(len(encoded[i]) for i in batch)
        ids = torch.tensor([[tokenizer.pad_token_id] * (width - len(encoded[i])) + encoded[i] for i in batch])
        mask = torch.tensor([[0] * (width - len(encoded[i])) + [1] * len(encoded[i]) for i in batch])
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        logits = peft_model(input_ids=ids, attention_mask=mask, position_ids=positions, logits_to_keep=1).logits
        loss = torch.nn.functional.cross_entropy(logits[:, -1, :].float(),
                                                 torch.tensor([target_ids[i] for i in batch]))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    seconds_per_step = (time.perf_counter() - started) / max(steps, 1)
    folder.mkdir(parents=True, exist_ok=True)
    peft_model.save_pretrained(str(folder))
    # The record is written last: a folder without it is an interrupted run and is trained again.
    record.write_text(json.dumps({"key": key, "losses": losses, "seconds_per_step": seconds_per_step,
                                  "config": config, "examples": len(encoded)}, indent=1))
    return TrainingRun(folder, losses, seconds_per_step, config, False, len(encoded))


# --------------------------------------------------------------------------- calibration

def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(np.asarray(p, dtype=float), 1e-6, 1 - 1e-6)
    return np.log(p) - np.log1p(-p)


def apply_temperature(probabilities, temperature: float) -> np.ndarray:
    """Probabilities with their log-odds divided by ``temperature`` (>1 softens, <1 sharpens).

    >>> apply_temperature([0.5, 0.9], 1.0).round(3).tolist()
    [0.5, 0.9]
    """
    return 1 / (1 + np.exp(-_logit(probabilities) / temperature))


def fit_temperature(probabilities, outcomes) -> float:
    """The temperature minimising the negative log-likelihood of binary ``outcomes`` (temperature scaling)."""
    z, y = _logit(probabilities), np.asarray(outcomes, dtype=float)
    if len(z) == 0:
        raise ValueError("temperature scaling needs at least one held-out example")

    def nll(log_t: float) -> float:
        p = np.clip(1 / (1 + np.exp(-z / math.exp(log_t))), 1e-12, 1 - 1e-12)
        return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))

    return float(math.exp(optimize.minimize_scalar(nll, bounds=(-5, 5), method="bounded").x))


def reliability_table(probabilities, outcomes, bins: int = 10) -> pd.DataFrame:
    """Equal-width confidence bins: mean predicted probability, observed frequency and count per bin."""
    p, y = np.asarray(probabilities, dtype=float), np.asarray(outcomes, dtype=float)
    index = np.minimum((p * bins).astype(int), bins - 1)
    frame = pd.DataFrame({"bin": index, "predicted": p, "observed": y})
    table = frame.groupby("bin").agg(predicted=("predicted", "mean"), observed=("observed", "mean"),
                                     n=("observed", "size")).reset_index()
    table["lower"], table["upper"] = table["bin"] / bins, (table["bin"] + 1) / bins
    return table


def expected_calibration_error(probabilities, outcomes, bins: int = 10) -> float:
    """ECE: the count-weighted mean gap between predicted probability and observed frequency per bin.

    >>> expected_calibration_error([0.9, 0.9, 0.1, 0.1], [1, 1, 0, 0])
    0.1
    """
    table = reliability_table(probabilities, outcomes, bins)
    return round(float(np.sum(table["n"] * (table["predicted"] - table["observed"]).abs()) / table["n"].sum()), 12)


# --------------------------------------------------------------------------- meta-evaluation schema

META_EVAL_COLUMNS = ("context", "response", "reference", "score", "dataset", "system")
_REQUIRED = ("context", "response", "score")


class MetaEvalFormatError(ValueError):
    """A meta-evaluation file breaks the schema; the message names the file, line and field."""


def _check_record(record: Any, path: Path, line: int) -> dict[str, Any]:
    where = f"{path}, line {line}"
    if not isinstance(record, dict):
        raise MetaEvalFormatError(f"{where}: expected an object with fields {', '.join(_REQUIRED)}")
    for name in _REQUIRED:
        if name not in record or record[name] is None or (isinstance(record[name], float) and np.isnan(record[name])):
            raise MetaEvalFormatError(f"{where}, field {name!r}: missing")
    context = record["context"]
    if isinstance(context, str):
        try:
            context = json.loads(context)
        except json.JSONDecodeError as error:
            raise MetaEvalFormatError(f"{where}, field 'context': not a JSON list of turns ({error.msg})") from error
    if not isinstance(context, list) or not all(isinstance(turn, str) for turn in context):
        raise MetaEvalFormatError(f"{where}, field 'context': expected a list of turns (strings)")
    if not isinstance(record["response"], str):
        raise MetaEvalFormatError(f"{where}, field 'response': expected a string")
    try:
        score = float(record["score"])
    except (TypeError, ValueError) as error:
        raise MetaEvalFormatError(f"{where}, field 'score': {record['score']!r} is not a number") from error
    if not math.isfinite(score):
        raise MetaEvalFormatError(f"{where}, field 'score': {record['score']!r} is not a finite number")
    clean = {**record, "context": context, "score": score}
    for name in ("reference", "dataset", "system"):
        value = clean.get(name)
        clean[name] = None if value is None or (isinstance(value, float) and np.isnan(value)) else str(value)
    return clean


def read_meta_eval(path: str | Path) -> pd.DataFrame:
    """A meta-evaluation file (``.jsonl`` or ``.csv``) in evalkit's turn-level schema.

    Fields: ``context`` (list of turns; in CSV a JSON list), ``response``, ``score`` (human), and optional
    ``reference``, ``dataset``, ``system``; other fields are kept. Any malformed line raises
    :class:`MetaEvalFormatError` naming the file, line and field.
    """
    path = Path(path)
    records = []
    if path.suffix.lower() in (".jsonl", ".json"):
        with open(path, encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as error:
                    raise MetaEvalFormatError(f"{path}, line {number}: not JSON ({error.msg})") from error
                records.append(_check_record(record, path, number))
    elif path.suffix.lower() == ".csv":
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
        missing = [c for c in _REQUIRED if c not in frame.columns]
        if missing:
            raise MetaEvalFormatError(f"{path}, line 1 (header): missing column(s) {', '.join(missing)}")
        for number, row in enumerate(frame.to_dict("records"), start=2):  # line 1 is the header
            row = {k: (None if v == "" else v) for k, v in row.items()}
            records.append(_check_record(row, path, number))
    else:
        raise MetaEvalFormatError(f"{path}: unknown format (use .jsonl or .csv)")
    if not records:
        raise MetaEvalFormatError(f"{path}: no records")
    frame = pd.DataFrame(records)
    if path.suffix.lower() == ".csv":
        # CSV has no types: an extra column (a metric's scores) that is entirely numeric becomes numbers.
        for column in frame.columns.difference(list(META_EVAL_COLUMNS)):
            numbers = pd.to_numeric(frame[column], errors="coerce")
            if numbers.notna().sum() == frame[column].notna().sum():
                frame[column] = numbers
    ordered = [c for c in META_EVAL_COLUMNS if c in frame.columns]
    return frame[ordered + [c for c in frame.columns if c not in ordered]]


def write_meta_eval(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write a frame in the schema (``.jsonl`` or ``.csv``, chosen by the suffix); it reads back equal."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    records = frame.to_dict("records")
    if path.suffix.lower() == ".csv":
        out = frame.copy()
        out["context"] = [json.dumps(list(c), ensure_ascii=False) for c in out["context"]]
        out.to_csv(path, index=False)
    else:
        with open(path, "w", encoding="utf-8") as handle:
            for record in records:
                record = {k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in record.items()}
                record["context"] = list(record["context"])
                handle.write(json.dumps(record, ensure_ascii=False, default=float) + "\n")
    return path


def upheld_meta_eval(subset: str = "main", *, label: str = "reasonable",
                     data_dir: str | Path | None = None) -> pd.DataFrame:
    """UPHELD items in the meta-evaluation schema: the dialogue so far as ``context``, the candidate as
    ``response``, the human reference, and the mean annotator ``label`` score (default reasonableness)."""
    from .upheld import load_upheld, parse_history

    items = load_upheld(subset, data_dir=data_dir).items
    score = pd.to_numeric(items[f"{label}_mean"], errors="coerce")
    keep = score.notna()
    contexts = [[text for _, text in (parse_history(h) if isinstance(h, str) else h)]
                for h in items.loc[keep, "history"]]
    return pd.DataFrame({"context": contexts, "response": items.loc[keep, "candidate"].astype(str).values,
                         "reference": items.loc[keep, "reference"].astype(str).values,
                         "score": score[keep].values, "dataset": f"upheld:{subset}",
                         "system": items.loc[keep, "model"].astype(str).values,
                         "item_id": items.loc[keep, "item_id"].values}).reset_index(drop=True)


def meta_evaluate(frame: pd.DataFrame, metric: str, human: str = "score") -> dict[str, float]:
    """Pearson and Spearman of a metric column against the human scores, with p-values and n (rows where
    either is missing are left out and counted)."""
    both = frame[[metric, human]].apply(pd.to_numeric, errors="coerce").dropna()
    if len(both) < 3:
        raise ValueError(f"meta-evaluation needs at least 3 scored rows, got {len(both)}")
    pearson = stats.pearsonr(both[metric], both[human])
    spearman = stats.spearmanr(both[metric], both[human])
    return {"pearson": float(pearson.statistic), "pearson_p": float(pearson.pvalue),
            "spearman": float(spearman.statistic), "spearman_p": float(spearman.pvalue),
            "n": int(len(both)), "missing": int(len(frame) - len(both))}


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
        with tarfile.open(source) as bundle:
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


# --------------------------------------------------------------------------- reference baseline

_WORD = re.compile(r"\w+|[^\w\s]")


def bleu2(references: Sequence[str], candidates: Sequence[str]) -> np.ndarray:
    """Sentence BLEU-2 (uniform 1- and 2-gram weights, smoothing method 1, lower-cased word tokens).

    >>> bleu2(["the cat sat"], ["the cat sat"]).round(3).tolist()
    [1.0]
    """
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    smooth = SmoothingFunction().method1
    scores = []
    for reference, candidate in zip(references, candidates):
        ref, cand = _WORD.findall(str(reference).lower()), _WORD.findall(str(candidate).lower())
        scores.append(sentence_bleu([ref], cand, weights=(0.5, 0.5), smoothing_function=smooth) if cand and ref
                      else 0.0)
    return np.array(scores)


# --------------------------------------------------------------------------- the chapter's experiments

def restrict_positions(matrix: np.ndarray, positions: Position) -> np.ndarray:
    """The pairwise matrix with only the target-first ("first") or target-second ("second") order kept."""
    if positions == "both":
        return matrix
    kept = matrix.copy()
    kept[..., 1 if positions == "first" else 0] = np.nan
    return kept


def comparison_runs(matrix: np.ndarray, n: int, runs: int, *, seed: int = 0,
                    positions: Position = "both") -> list[np.ndarray]:
    """Scores from ``runs`` random draws of ``n`` comparison examples (columns) of a pairwise matrix — how
    the paper averages "five runs with different comparison examples". With ``n`` = 1 and ``runs`` equal to
    the number of columns, each column is used once.

    >>> m = np.array([[[0.9, 0.7], [0.5, 0.5]], [[0.1, 0.3], [0.5, 0.5]]])
    >>> [s.round(2).tolist() for s in comparison_runs(m, 1, 2)]
    [[0.8, 0.2], [0.5, 0.5]]
    """
    columns = matrix.shape[1]
    if not 1 <= n <= columns:
        raise ValueError(f"cannot draw {n} comparison examples from {columns}")
    rng = np.random.default_rng(seed)
    chosen = ([[j] for j in range(columns)][:runs] if n == 1 and runs <= columns
              else [sorted(rng.choice(columns, size=n, replace=False)) for _ in range(runs)])
    view = restrict_positions(matrix, positions)
    return [_mean_over(view[:, list(c), :], (1, 2)) for c in chosen]


def exhaustive_matrix(contexts: Sequence[Turns], responses: Sequence[str], backend: Backend, *,
                      limits: PromptLimits = PROMPT_LIMITS) -> np.ndarray:
    """Every item against every other item of the same set, both orders (the paper's O(M²) variant);
    the diagonal (an item against itself) is NaN."""
    items = list(zip(contexts, responses))
    matrix = pairwise_matrix(contexts, responses, items, backend, limits=limits)
    for i in range(len(items)):
        matrix[i, i, :] = np.nan
    return matrix


def correlations(scores, human) -> dict[str, float]:
    """Pearson r and Spearman rho (with p-values and n) of scores against human judgements, NaNs dropped."""
    frame = pd.DataFrame({"metric": np.asarray(scores, dtype=float), "score": np.asarray(human, dtype=float)})
    return meta_evaluate(frame, "metric", "score")


def ranking_accuracy(better, worse) -> float:
    """Share of cases where the first score beats the second (ties count half; NaN pairs are left out).

    >>> ranking_accuracy([0.9, 0.2, 0.5], [0.1, 0.4, 0.5])
    0.5
    """
    a, b = np.asarray(better, dtype=float), np.asarray(worse, dtype=float)
    keep = ~(np.isnan(a) | np.isnan(b))
    if not keep.any():
        return float("nan")
    return float(np.mean((a[keep] > b[keep]) + 0.5 * (a[keep] == b[keep])))


def enriched_sample(items: pd.DataFrame, n: int, *, column: str = "score", top: float | None = None,
                    seed: int = 0) -> pd.DataFrame:
    """``n`` items, half from below the top score and half at it — for a set whose scores pile up at the
    ceiling (a uniform sample would hold almost nothing to correlate with). Say so wherever it is used."""
    top = items[column].max() if top is None else top
    low, high = items[items[column] < top], items[items[column] >= top]
    k = min(len(low), n // 2)
    picked = pd.concat([low.sample(k, random_state=seed), high.sample(min(len(high), n - k), random_state=seed)])
    return picked.sort_index()


def corpus_comparisons(dialogues: Sequence[Turns], n: int, *, seed: int = 0) -> list[tuple[list[str], str]]:
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


def score_frame(frame: pd.DataFrame, backend: Backend, *, method: Literal["paireval", "directeval"] = "paireval",
                comparisons: Sequence[tuple[Turns, str]] = (), limits: PromptLimits = PROMPT_LIMITS) -> np.ndarray:
    """Scores for every row of a meta-evaluation frame (``context``, ``response``) by one method."""
    if method == "paireval":
        return paireval_scores(list(frame["context"]), list(frame["response"]), comparisons, backend, limits=limits)
    if method == "directeval":
        return directeval_scores(list(frame["context"]), list(frame["response"]), backend, limits=limits)
    raise ValueError(f"unknown method {method!r} (paireval or directeval)")
