"""A judge that reads both sides: the fine-tuned encoder's comparison, corrected by a head that attends from
each conversation's tokens to the other's.

The bi-encoder judge (:class:`~evalkit.paireval.encoder.EncoderJudge`) scores each side alone, so its
``P(A better than B) = sigmoid(scale * (f(A) - f(B)))`` ranks replies as ``f`` does and cannot show a
position bias. The comparative reader keeps that comparison as its base and adds a learned correction that
sees both sides at once, token by token:

    logit(A, B) = scale * (f(A) - f(B)) + c(T_A, T_B)        P(A better than B) = sigmoid(logit)

``T`` are the base encoder's token states of a side (its last context turns and the reply read as one
text pair); ``c`` projects them to a small width, lets every token of A attend over B's tokens and every
token of B over A's, pools each side and its attended summary, and maps the pooled features through an MLP
whose last layer starts at zero — so before training the reader *is* the bi-encoder judge (a start from
an embedding model without that base was measured far below the untrained cosine, ``docs/decisions.md``). ``c`` is not
antisymmetric: showing a side first or second can change the verdict, and the reader is trained on every pair
in both orders, so a position bias that remains is measured, not zero by construction.

Only the head trains (the encoder's token states are computed once, without gradients, and reused), which
makes the reader cheap enough to train and score in the book; it is cached by its recipe, its base judge's
training key and its data.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from evalkit.data.dialogue import Texts
from evalkit.encoders import Schedule, recipe_key_fields, run_steps, training_key, training_lock
from evalkit.paireval.encoder import PAIR_COLUMNS, EncoderJudge, context_text
from evalkit.paireval.recipes import ReaderRecipe
from evalkit.judges.protocol import Position, ScoresByDirect, check_items, cross_sides, keep_positions
from evalkit.paireval.scoring import good_and_bad_sides, pair_preferences, preference_accuracy

__all__ = ["ComparativeReader", "ReaderTrainingRun", "train_comparative_reader", "train_reader", "comparison_head"]

HEAD_FILE = "comparison-head.pt"
RECORD_FILE = "evalkit-reader.json"


def comparison_head(states: int, width: int, hidden: int):
    """The correction ``c(T_A, T_B)`` (see the module): token states of ``states`` dimensions in, one logit
    out, zero at initialisation."""
    import torch

    class ComparisonHead(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.sizes = {"states": states, "width": width, "hidden": hidden}
            self.project = torch.nn.Linear(states, width)
            self.query = torch.nn.Linear(width, width, bias=False)
            self.key = torch.nn.Linear(width, width, bias=False)
            self.value = torch.nn.Linear(width, width, bias=False)
            self.out = torch.nn.Sequential(torch.nn.Linear(6 * width, hidden), torch.nn.ReLU(),
                                           torch.nn.Linear(hidden, 1))
            torch.nn.init.zeros_(self.out[2].weight)
            torch.nn.init.zeros_(self.out[2].bias)

        @staticmethod
        def _pool(x, mask):
            weights = mask.unsqueeze(-1).to(x.dtype)
            return (x * weights).sum(1) / weights.sum(1).clamp(min=1)

        def _attend(self, x, x_mask, y, y_mask):
            """Each token of x attends over y's tokens; the attended summaries pooled over x's tokens."""
            logits = self.query(x) @ self.key(y).transpose(1, 2) / width ** 0.5
            logits = logits.masked_fill(~y_mask.unsqueeze(1), float("-inf"))
            return self._pool(torch.softmax(logits, dim=-1) @ self.value(y), x_mask)

        def forward(self, a, a_mask, b, b_mask):
            xa, xb = self.project(a), self.project(b)
            pa, pb = self._pool(xa, a_mask), self._pool(xb, b_mask)
            ua, ub = self._attend(xa, a_mask, xb, b_mask), self._attend(xb, b_mask, xa, a_mask)
            return self.out(torch.cat([pa, pb, ua, ub, pa * pb, ua - ub], dim=-1)).squeeze(-1)

    return ComparisonHead()


class ComparativeReader(ScoresByDirect):
    """The reader as a :class:`~evalkit.judges.protocol.Judge`: the base judge's comparison plus the head's
    correction. ``direct`` is the base judge's (a reader compares; it has no pointwise question). It runs where
    its base judge runs (the base's ``placement``: device and autocast precision)."""

    def __init__(self, base: EncoderJudge, head: Any, *, max_tokens: int = 48, name: str | None = None,
                 batch_size: int = 256):
        import torch

        self.base, self.max_tokens, self.batch_size = base, max_tokens, batch_size
        self.head = head.to(base.placement.device).eval()
        self.name = name or f"reader:{base.name}"
        self._torch = torch
        self._states: dict[tuple[str, str], tuple[Any, Any]] = {}

    @classmethod
    def from_training(cls, run: "ReaderTrainingRun", base: EncoderJudge) -> "ComparativeReader":
        """The reader a training run saved, over the base judge it was trained on."""
        return cls(base, load_comparison_head(run.folder), max_tokens=run.config["recipe"]["max_tokens"],
                   name=f"reader:{run.key[:8]}")

    def forget(self) -> None:
        self._states = {}

    def _side_states(self, contexts: Sequence[Texts], replies: Sequence[str]):
        """(states, mask) of each side, padded to ``max_tokens``: the base encoder's last hidden states of the
        (context, reply) text pair, computed once per side."""
        torch, base = self._torch, self.base
        sides = [(context_text(c, base.turns), str(r).strip()) for c, r in zip(contexts, replies)]
        missing = list(dict.fromkeys(s for s in sides if s not in self._states))
        for start in range(0, len(missing), 64):
            chunk = missing[start:start + 64]
            batch = base.tokenizer([c for c, _ in chunk], [r for _, r in chunk], truncation="longest_first",
                                   max_length=self.max_tokens, padding="max_length", return_tensors="pt")
            batch = batch.to(base.placement.device) if base.placement.kind != "cpu" else batch
            with torch.no_grad(), base.placement.autocast():
                hidden = base.model(**batch).last_hidden_state.float()
            for k, side in enumerate(chunk):
                self._states[side] = (hidden[k], batch["attention_mask"][k].bool())
        states = [self._states[s] for s in sides]
        return torch.stack([s for s, _ in states]), torch.stack([m for _, m in states])

    def logits(self, first_contexts, first_replies, second_contexts, second_replies) -> np.ndarray:
        """``logit(A, B)`` with the first side shown as A."""
        torch = self._torch
        base = self.base.scale * (self.base.relevance(first_contexts, first_replies)
                                  - self.base.relevance(second_contexts, second_replies))
        a, a_mask = self._side_states(first_contexts, first_replies)
        b, b_mask = self._side_states(second_contexts, second_replies)
        out = []
        with torch.no_grad():
            for s in range(0, len(base), self.batch_size):
                part = slice(s, s + self.batch_size)
                out.append(self.head(a[part], a_mask[part], b[part], b_mask[part]).cpu().numpy())
        return base + (np.concatenate(out) if out else np.zeros(0))

    def orders(self, first_contexts, first_replies, second_contexts, second_replies) -> np.ndarray:
        """P(the first side better) shown as A (column 0) and shown as B (column 1): two readings."""
        as_a = self.logits(first_contexts, first_replies, second_contexts, second_replies)
        as_b = self.logits(second_contexts, second_replies, first_contexts, first_replies)
        return np.stack([_sigmoid(as_a), 1.0 - _sigmoid(as_b)], axis=1)

    def pairwise_matrix(self, contexts: Sequence[Texts], responses: Sequence[str],
                        comparisons: Sequence[tuple[Texts, str]], *, positions: Position = "both") -> np.ndarray:
        check_items(contexts, responses, comparisons)
        matrix = self.orders(*cross_sides(contexts, responses, comparisons))
        return keep_positions(matrix.reshape(len(contexts), len(comparisons), 2), positions)

    def direct(self, contexts: Sequence[Texts], responses: Sequence[str]) -> np.ndarray:
        return self.base.direct(contexts, responses)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.asarray(x, dtype=float)))


def load_comparison_head(folder: Path):
    import torch

    saved = torch.load(Path(folder) / HEAD_FILE, map_location="cpu", weights_only=True)
    head = comparison_head(**saved["sizes"])
    head.load_state_dict(saved["state"])
    return head.eval()


# --------------------------------------------------------------------------- training

@dataclass
class ReaderTrainingRun:
    """A trained (or cached) comparison head and how its training went."""

    folder: Path
    key: str
    losses: list[float]
    curve: list[dict[str, float]]     # {"pairs": seen, "accuracy": validation pairs, both orders averaged}
    seconds: float
    pairs: int
    config: dict[str, Any] = field(default_factory=dict)
    from_cache: bool = False


def train_comparative_reader(pairs: pd.DataFrame, base: EncoderJudge, recipe: ReaderRecipe | None = None, *,
                             base_key: str, validation: pd.DataFrame | None = None, seed: int = 0,
                             output_dir: str | Path | None = None, reuse: bool = True) -> ReaderTrainingRun:
    """Train the comparison head over ``base`` on two-conversation pairs, each in both orders (the good side as
    A with target 1, then as B with target 0): binary cross-entropy on ``logit(A, B)``, AdamW, ``epochs``
    passes reshuffled each epoch, linear warm-up then decay. ``base_key`` names the base judge's training
    (its :class:`~evalkit.paireval.encoder.EncoderTrainingRun` key) and is part of the cache key with the
    recipe's training fields, the seed and the data (and the base's device kind and precision when they are not
    the CPU's fp32: the head trains where its base judge runs)."""
    import torch

    from evalkit.models.defaults import cache_dir

    recipe = ReaderRecipe() if recipe is None else recipe
    if len(pairs) < recipe.batch_size:
        raise ValueError(f"{len(pairs)} training pairs is less than one batch of {recipe.batch_size}")
    config = {"base": base_key, "seed": seed, "recipe": recipe_key_fields(recipe), **base.placement.key_fields()}
    key = training_key(config, (pairs, validation), PAIR_COLUMNS)
    folder = Path(output_dir) if output_dir is not None else cache_dir() / "comparison-readers" / key
    with training_lock(folder):  # another process training the same run waits, then reuses it
        record = folder / RECORD_FILE
        if reuse and record.is_file() and json.loads(record.read_text()).get("key") == key:
            saved = json.loads(record.read_text())
            return ReaderTrainingRun(folder, key, saved["losses"], saved["curve"], saved["seconds"], saved["pairs"],
                                     saved["config"], True)

        torch.manual_seed(seed)
        head = comparison_head(base.model.config.hidden_size, recipe.width, recipe.hidden)
        reader = ComparativeReader(base, head, max_tokens=recipe.max_tokens)
        good_c, good_r, bad_c, bad_r = good_and_bad_sides(pairs)
        a_c, a_r, b_c, b_r = good_c + bad_c, good_r + bad_r, bad_c + good_c, bad_r + good_r  # both orders
        device = base.placement.device
        target = torch.cat([torch.ones(len(pairs)), torch.zeros(len(pairs))]).to(device)
        base_logit = torch.from_numpy(reader.base.scale * (base.relevance(a_c, a_r) - base.relevance(b_c, b_r))).float()
        base_logit = base_logit.to(device)
        a, a_mask = reader._side_states(a_c, a_r)
        b, b_mask = reader._side_states(b_c, b_r)
        per_epoch = len(target) // recipe.batch_size
        rng = np.random.default_rng(seed)
        order = np.concatenate([rng.permutation(len(target))[:per_epoch * recipe.batch_size]
                                for _ in range(recipe.epochs)])
        schedule = Schedule.linear(steps=per_epoch * recipe.epochs, warmup_share=recipe.warmup_share,
                                   curve_points=recipe.curve_points if validation is not None else 0)
        optimizer = torch.optim.AdamW(head.parameters(), lr=recipe.learning_rate, weight_decay=0.01)

        def loss_at(step: int):
            batch = torch.from_numpy(order[step * recipe.batch_size:(step + 1) * recipe.batch_size]).to(device)
            logit = base_logit[batch] + head(a[batch], a_mask[batch], b[batch], b_mask[batch])
            return torch.nn.functional.binary_cross_entropy_with_logits(logit, target[batch])

        def measure() -> float:
            return float(np.nanmean(preference_accuracy(pair_preferences(validation, reader))))

        losses, curve, seconds = run_steps(schedule, optimizer, loss_at, models=[head],
                                           measure=measure if validation is not None else None,
                                           per_step=recipe.batch_size)
        head.eval()
        result = {"key": key, "losses": losses, "curve": curve, "seconds": seconds,
                  "pairs": schedule.steps * recipe.batch_size, "config": config}
        folder.mkdir(parents=True, exist_ok=True)
        torch.save({"sizes": head.sizes, "state": head.state_dict()}, folder / HEAD_FILE)
        record.write_text(json.dumps(result, indent=1))  # written last: without it the folder is an interrupted run
        return ReaderTrainingRun(folder, key, losses, curve, seconds, result["pairs"], config, False)


def train_reader(recipe: "JudgeRecipe | str", *, base: EncoderJudge | None = None, data: Any = None,
                 data_dir: str | Path | None = None, device: str = "cpu",
                 dtype: str = "auto") -> tuple[ComparativeReader, ReaderTrainingRun]:
    """The comparative reader of ``recipe`` (a :class:`~evalkit.paireval.recipes.JudgeRecipe` or its name):
    its head trained over the recipe's PairEval judge (``base``, trained or loaded by
    :func:`~evalkit.paireval.encoder.train_judge` when not given) on the same leak-free pairs, with the same
    validation pairs for its curve; the base judge is trained and run on ``device`` in ``dtype`` when not given."""
    from evalkit.paireval.encoder import train_judge
    from evalkit.paireval.training_data import judge_data, recipe_pairs, validation_pairs
    from evalkit.paireval.recipes import named_recipe

    recipe = named_recipe(recipe)
    data = data or judge_data(seed=recipe.seed, data_dir=data_dir)
    base_run = train_judge(recipe, data=data, data_dir=data_dir, device=device, dtype=dtype)
    base = base or EncoderJudge.from_training(base_run, device=device, dtype=dtype)
    settings = recipe.encoder
    run = train_comparative_reader(
        recipe_pairs(recipe, data, hard_share=settings.hard_share, data_dir=data_dir), base, recipe.reader,
        base_key=base_run.key, validation=validation_pairs(data, settings.validation_pairs, settings.hard_share,
                                                           recipe.seed), seed=recipe.seed)
    return ComparativeReader.from_training(run, base), run
