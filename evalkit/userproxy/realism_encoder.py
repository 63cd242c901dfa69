"""A realism judge that learns: a small sentence encoder trained to tell a real user's turns from a proxy's.

MirrorBench's judges are large models asked zero-shot. Here the kit trains its own, with the backbone and the
pairwise recipe that won chapter 4 (all-MiniLM-L6-v2, word embeddings frozen, a Bradley-Terry loss):

    g(conversation) = w . E(user turns) + b          (E: the unit-length mean-pooled embedding)
    P(the user of A is the real person, not B's) = sigmoid(g(A) - g(B))

**Training data** (:mod:`.realism_data`: :func:`realism_split`, :func:`proxy_rewrites`): real conversations of
the mirror sets, each paired with the same conversation whose first ``user_turns`` user turns the proxy
re-wrote — at each position the proxy sees the goal and the *real* conversation so far (teacher forcing: one
generation per turn instead of a whole rollout, and both sides share their context). Conversations that share
text with anything held out — MirrorBench's human-labelled items and the judge's own held-out conversations —
are removed before training (:func:`realism_split`; the test suite checks no held-out unit reaches training).

**Scores** on a (real, proxy) pair, fixed before any evaluation: ``p = sigmoid(g(proxy) - g(real))``, the
chance the judge takes the proxy for the human. PI's score is ``p`` (as a verdict it is the proxy's win);
GTEval's is ``2 min(p, 1 - p)`` — 1 when the judge cannot tell the two users apart, 0 when it is sure which
is real. (GTEval's raters know which side is real and rate how *similar* the proxy is, so a proxy that reads
as more human than the real user is not more similar; the score is symmetric for that reason.) The same two formulas with ``g = -log(words)`` give the length baseline (a user who writes less
reads as more human).
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, Mapping, Sequence

import numpy as np
import pandas as pd

from evalkit.data.dialogue import Turn
from evalkit.encoders import (Schedule, default_encoder_path, load_encoder, mean_pooled, read_record, recipe_key_fields,
                        run_steps, save_encoder, training_key, training_lock)
from evalkit.models import Backend
from evalkit.userproxy.realism_data import (RealismSplit, labelled_conversations, length_matched, proxy_rewrites, realism_pairs,
                           realism_split, user_side)

__all__ = ["RealismRecipe", "REALISM_RECIPES", "RealismSplit", "realism_split", "proxy_rewrites",
           "user_side", "RealismEncoder", "RealismTrainingRun", "train_realism_encoder", "pair_scores",
           "length_scores", "realism_pairs", "labelled_conversations", "RealismJudge", "train_realism_judge",
           "label_item_scores", "length_matched"]


@dataclass(frozen=True)
class RealismRecipe:
    """How the realism encoder is trained: data sizes, the proxy's turns, and the optimiser."""

    train_per_set: int = 32          # training conversations per mirror set
    heldout_per_set: int = 12        # held-out conversations per mirror set (never trained on)
    user_turns: int = 2              # user turns per conversation the proxy re-writes (and the judge reads)
    goal_levels: tuple[str, ...] = ("full", "none")  # alternated over conversations: varied proxy text
    user_tokens: int = 40            # max tokens of a proxy turn (chapter 5's proxy setting)
    epochs: int = 3
    batch_size: int = 16
    encoder_learning_rate: float = 3e-5
    head_learning_rate: float = 1e-3
    max_tokens: int = 128
    freeze_embeddings: bool = True
    curve_points: int = 4
    seed: int = 13
    temperatures: tuple[float, ...] = (0.0,)  # one proxy rewrite of each training conversation per temperature
    length_ratio: float | None = None  # keep a training pair only when its sides' word counts are this close
    batch_pairs: Literal["all", "own"] = "all"  # "all": each real user of a batch against every proxy; "own": its own

    def __post_init__(self) -> None:
        if not self.temperatures or min(self.temperatures) < 0:
            raise ValueError(f"temperatures must be one or more values >= 0, not {self.temperatures}")
        if self.length_ratio is not None and self.length_ratio < 1:
            raise ValueError(f"length_ratio is at least 1 (or None), not {self.length_ratio}")
        if self.batch_pairs not in ("all", "own"):
            raise ValueError(f"batch_pairs must be 'all' or 'own', not {self.batch_pairs!r}")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


REALISM_RECIPES: dict[str, RealismRecipe] = {
    "book": RealismRecipe(),
    "lab": RealismRecipe(train_per_set=20, curve_points=2),  # params/lab.yml: fewer proxy turns to write
    "smoke": RealismRecipe(train_per_set=4, heldout_per_set=2, user_tokens=12, epochs=2, batch_size=4,
                           curve_points=2),
}


# --------------------------------------------------------------------------- the judge

class RealismEncoder:
    """``g(conversation)`` from the user side: a sentence encoder and a linear head (see the module), on
    ``device`` with its embeddings computed under autocast to ``dtype`` (:mod:`evalkit.models.device`)."""

    def __init__(self, path: str | Path | None = None, *, weights: Sequence[float] | None = None,
                 bias: float = 0.0, user_turns: int = 2, max_tokens: int = 128, name: str | None = None,
                 batch_size: int = 32, device: str = "cpu", dtype: str = "auto"):
        import torch

        from evalkit.models.device import Placement

        self.path = Path(path) if path is not None else default_encoder_path()
        self.placement = Placement.of(device, dtype)
        self.tokenizer, self.model = load_encoder(self.path, device=self.placement.device)
        self.model.eval()
        size = self.model.config.hidden_size
        self.weights = np.zeros(size) if weights is None else np.asarray(weights, dtype=float)
        if self.weights.shape != (size,):
            raise ValueError(f"head weights of shape {self.weights.shape}; the encoder's embeddings have {size}")
        self.bias, self.user_turns, self.max_tokens = float(bias), user_turns, max_tokens
        self.name, self.batch_size, self._torch = name or f"realism:{self.path.name}", batch_size, torch

    @classmethod
    def from_training(cls, run: "RealismTrainingRun", *, device: str = "cpu",
                      dtype: str = "auto") -> "RealismEncoder":
        recipe = run.config["recipe"]
        return cls(run.model_dir, weights=run.weights, bias=run.bias, user_turns=recipe["user_turns"],
                   max_tokens=recipe["max_tokens"], name=f"realism:{run.key[:8]}", device=device, dtype=dtype)

    def score_texts(self, texts: Sequence[str]) -> np.ndarray:
        """``g`` of user-side texts (higher: reads more like a real person)."""
        out = []
        for start in range(0, len(texts), self.batch_size):
            with self._torch.no_grad(), self.placement.autocast():
                out.append(mean_pooled(self.model, self.tokenizer, list(texts[start:start + self.batch_size]),
                                  self.max_tokens).cpu().numpy() @ self.weights + self.bias)
        return np.concatenate(out) if out else np.zeros(0)

    def score(self, conversations: Sequence[Sequence[Turn]]) -> np.ndarray:
        """``g`` of conversations (their first ``user_turns`` user turns)."""
        return self.score_texts([user_side(c, self.user_turns) for c in conversations])


def pair_scores(real: np.ndarray, proxy: np.ndarray) -> dict[str, np.ndarray]:
    """From ``g`` of the real and the proxy side: ``p`` = P(the proxy is taken for the human), the PI score
    (``p``) and the GTEval score (``2 min(p, 1 - p)``).

    >>> {k: v.round(3).tolist() for k, v in pair_scores(np.array([0.0, 1.0]), np.array([0.0, 0.0])).items()}
    {'p': [0.5, 0.269], 'pi': [0.5, 0.269], 'gteval': [1.0, 0.538]}
    """
    p = 1.0 / (1.0 + np.exp(-(np.asarray(proxy, float) - np.asarray(real, float))))
    return {"p": p, "pi": p, "gteval": 2 * np.minimum(p, 1 - p)}


def length_scores(conversations: Sequence[Sequence[Turn]], user_turns: int | None = None) -> np.ndarray:
    """The length baseline's ``g``: minus the log of the user side's word count (one word at least).

    >>> length_scores([[{"role": "user", "content": "a b c d"}]]).round(3).tolist()
    [-1.386]
    """
    return -np.log(np.array([max(1, len(user_side(c, user_turns).split())) for c in conversations], float))


# --------------------------------------------------------------------------- training

@dataclass
class RealismTrainingRun:
    """A trained (or cached) realism encoder and how its training went."""

    model_dir: Path
    key: str
    weights: list[float]
    bias: float
    losses: list[float]
    curve: list[dict[str, float]]     # {"pairs": seen, "accuracy": on the held-out pairs}
    seconds: float
    pairs: int
    config: dict[str, Any] = field(default_factory=dict)
    from_cache: bool = False

    @classmethod
    def from_record(cls, folder: Path, saved: Mapping[str, Any], from_cache: bool) -> "RealismTrainingRun":
        """The run a training record describes (``saved``: the record :func:`train_realism_encoder` writes beside
        the encoder in ``folder``, its ``key`` included)."""
        return cls(folder, saved["key"], saved["weights"], saved["bias"], saved["losses"], saved["curve"],
                   saved["seconds"], saved["pairs"], saved["config"], from_cache)

    @property
    def pairs_per_second(self) -> float:
        return self.pairs / self.seconds if self.seconds else float("nan")


def train_realism_encoder(train: pd.DataFrame, heldout: pd.DataFrame, recipe: RealismRecipe, *,
                          model: str | Path | None = None, output_dir: str | Path | None = None,
                          reuse: bool = True, device: str = "cpu", dtype: str = "auto") -> RealismTrainingRun:
    """Fine-tune the encoder and fit the head on (human, proxy) pairs (:func:`realism_pairs`).

    Loss: for a batch of ``batch_size`` pairs, ``-log sigmoid(g(human_i) - g(proxy_j))`` averaged over every
    human i and proxy j of the batch (each pair's own proxy and the batch's other proxies — the other
    conversations are free comparisons). ``epochs`` passes, reshuffled each epoch; linear warm-up (10%) then
    linear decay; AdamW with one rate for the encoder and a larger one for the new head. The held-out pairs
    (never trained on) give the learning curve: the share of pairs where the human side scores higher.
    Cached under ``$EVALKIT_CACHE_DIR/realism-judges/<key>`` (key: the recipe's training fields, backbone
    and data; ``curve_points`` is not in it; the device's kind and the precision only when they are not the
    CPU's fp32). On ``device`` the weights stay fp32 and the loss runs under autocast to ``dtype``.
    """
    import torch

    from evalkit.models.defaults import cache_dir
    from evalkit.models.device import Placement

    if recipe.batch_pairs not in ("all", "own"):
        raise ValueError(f"batch_pairs must be 'all' or 'own', not {recipe.batch_pairs!r}")
    if len(train) < recipe.batch_size:
        raise ValueError(f"{len(train)} training pairs is less than one batch of {recipe.batch_size}")
    location = Path(model) if model is not None else default_encoder_path()
    placement = Placement.of(device, dtype)
    config = {"model": location.name, "recipe": recipe.as_dict(), **placement.key_fields()}
    key = training_key({**config, "recipe": recipe_key_fields(recipe)}, (train, heldout), ["human", "proxy"])
    folder = Path(output_dir) if output_dir is not None else cache_dir() / "realism-judges" / key
    with training_lock(folder):  # another process training the same run waits, then reuses it
        saved = read_record(folder, key) if reuse else None
        if saved is not None:
            return RealismTrainingRun.from_record(folder, saved, True)

        torch.manual_seed(recipe.seed)
        tokenizer, encoder = load_encoder(location, freeze_embeddings=recipe.freeze_embeddings, device=placement.device)
        head, optimizer = _head_and_optimizer(encoder, recipe)
        per_epoch = len(train) // recipe.batch_size
        schedule = Schedule.linear(steps=per_epoch * recipe.epochs, warmup_share=0.1, curve_points=recipe.curve_points)
        rng = np.random.default_rng(recipe.seed)
        orders = np.concatenate([rng.permutation(len(train))[:per_epoch * recipe.batch_size]
                                 for _ in range(recipe.epochs)])
        human, proxy = train["human"].to_numpy(), train["proxy"].to_numpy()

        def g(texts) -> "torch.Tensor":
            return head(mean_pooled(encoder, tokenizer, list(texts), recipe.max_tokens)).squeeze(-1)

        def heldout_accuracy() -> float:
            with torch.no_grad(), placement.autocast():
                won = np.concatenate([(g(heldout["human"].iloc[s:s + 32]) - g(heldout["proxy"].iloc[s:s + 32])).float()
                                      .cpu().numpy()
                                      for s in range(0, len(heldout), 32)])
            return float(np.mean(np.where(won > 0, 1.0, np.where(won < 0, 0.0, 0.5))))

        def loss_at(step: int):
            batch = orders[step * recipe.batch_size:(step + 1) * recipe.batch_size]
            if recipe.batch_pairs == "own":  # the other conversations' proxies would bring length back in
                return -torch.nn.functional.logsigmoid(g(human[batch]) - g(proxy[batch])).mean()
            return -torch.nn.functional.logsigmoid(g(human[batch])[:, None] - g(proxy[batch])[None, :]).mean()

        losses, curve, seconds = run_steps(schedule, optimizer, loss_at, models=[encoder, head],
                                           measure=heldout_accuracy, per_step=recipe.batch_size, placement=placement)
        weights = head.weight.detach().cpu().numpy()[0].astype(float).tolist()
        result = {"key": key, "weights": weights, "bias": float(head.bias.detach()[0]), "losses": losses,
                  "curve": curve, "seconds": seconds, "pairs": schedule.steps * recipe.batch_size, "config": config}
        save_encoder(folder, encoder, tokenizer, result)
        return RealismTrainingRun.from_record(folder, result, False)


def _head_and_optimizer(encoder: Any, recipe: RealismRecipe) -> tuple[Any, Any]:
    """The new linear head (zeros: every conversation starts at ``g = 0``) and AdamW over the encoder's
    trainable weights at one rate and the head at a larger one."""
    import torch

    head = torch.nn.Linear(encoder.config.hidden_size, 1).to(encoder.device)
    torch.nn.init.zeros_(head.weight)
    torch.nn.init.zeros_(head.bias)
    optimizer = torch.optim.AdamW(
        [{"params": [p for p in encoder.parameters() if p.requires_grad], "lr": recipe.encoder_learning_rate},
         {"params": head.parameters(), "lr": recipe.head_learning_rate}], weight_decay=0.01)
    return head, optimizer


# --------------------------------------------------------------------------- the chapter's step

@dataclass
class RealismJudge:
    """What :func:`train_realism_judge` returns: the judge, its run, its data and the leak cut."""

    judge: RealismEncoder
    run: RealismTrainingRun
    split: RealismSplit
    train_pairs: pd.DataFrame
    heldout_pairs: pd.DataFrame
    generation_seconds: float
    empty_turns: list[dict[str, Any]] = field(default_factory=list)
    length_dropped: int = 0  # training pairs left out by the recipe's length_ratio

    def heldout_accuracy(self) -> Any:
        """Share of held-out pairs where the real user scores strictly higher, with its Wilson interval (a tie
        counts as a miss here; the training curve counts it as half)."""
        from evalkit.stats import proportion

        won = self.judge.score_texts(list(self.heldout_pairs["human"])) - self.judge.score_texts(
            list(self.heldout_pairs["proxy"]))
        return proportion(won > 0)


def train_realism_judge(recipe: RealismRecipe | str, proxy: Backend, frames: Mapping[str, pd.DataFrame],
                        labels: Mapping[str, Any], *, model: str | Path | None = None,
                        user_tokens: int | None = None, device: str = "cpu", dtype: str = "auto") -> RealismJudge:
    """The whole step: leak-free split, the proxy's re-written turns (through the model door, so cached and
    resumable), training (cached by recipe and data) and the judge.

    ``recipe`` is a :class:`RealismRecipe` or a name in :data:`REALISM_RECIPES`; ``user_tokens`` (the
    chapter's proxy setting) replaces the recipe's when given, so the judge learns the proxy it will meet.
    Each training conversation is re-written once per ``recipe.temperatures`` (the held-out ones at the first);
    with ``recipe.length_ratio`` the training pairs whose sides differ more in length are left out.
    """
    if isinstance(recipe, str):
        if recipe not in REALISM_RECIPES:
            raise KeyError(f"no realism recipe {recipe!r}; known: {', '.join(REALISM_RECIPES)}")
        recipe = REALISM_RECIPES[recipe]
    if user_tokens is not None:
        recipe = replace(recipe, user_tokens=user_tokens)
    split = realism_split(frames, {"MirrorBench human-labelled items": labelled_conversations(labels)},
                          train_per_set=recipe.train_per_set, heldout_per_set=recipe.heldout_per_set,
                          seed=recipe.seed)
    started = time.perf_counter()
    pairs, empty = {}, []
    for part, frame, temperatures in (("train", split.train, recipe.temperatures),
                                      ("heldout", split.heldout, recipe.temperatures[:1])):
        pairs[part] = pd.concat([realism_pairs(frame, proxy_rewrites(
            frame, proxy, user_turns=recipe.user_turns, goal_levels=recipe.goal_levels, user_tokens=recipe.user_tokens,
            empty_turns=empty, temperature=temperature, seed=recipe.seed if temperature > 0 else 0),  # greedy: as before
            recipe.user_turns)
            for temperature in temperatures], ignore_index=True)
    generation_seconds = time.perf_counter() - started
    dropped = 0
    if recipe.length_ratio is not None:
        pairs["train"], dropped = length_matched(pairs["train"], recipe.length_ratio)
    run = train_realism_encoder(pairs["train"], pairs["heldout"], recipe, model=model, device=device, dtype=dtype)
    judge = RealismEncoder.from_training(run, device=device, dtype=dtype)
    return RealismJudge(judge, run, split, pairs["train"], pairs["heldout"], generation_seconds, empty, dropped)


def label_item_scores(items: Mapping[str, Any], g: Any) -> dict[str, np.ndarray]:
    """GTEval and PI scores of MirrorBench's labelled items (:func:`~evalkit.userproxy.human_labels.human_label_items`)
    from a scorer ``g`` (a function of a list of conversations, e.g. :meth:`RealismEncoder.score` or
    :func:`length_scores`)."""
    gt_real, gt_proxy = zip(*items["gteval_pairs"])
    pi_real, pi_proxy = zip(*items["pi_pairs"])
    return {"gteval": pair_scores(g(list(gt_real)), g(list(gt_proxy)))["gteval"],
            "pi": pair_scores(g(list(pi_real)), g(list(pi_proxy)))["pi"]}
