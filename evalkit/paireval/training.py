"""LoRA fine-tuning of a judge on label-word targets (peft), seeded, with saved and reusable adapters."""
from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Literal, Sequence

import numpy as np
import pandas as pd

from evalkit.data.folders import readable_as_umask_allows
from evalkit.encoders import training_lock
from evalkit.models import Messages


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


def train_lora(prompts: Sequence[Messages], targets: Sequence[str], *, steps: int | None = None,
               epochs: float | None = None, batch_size: int = 4, accumulation: int = 1, learning_rate: float = 1e-4,
               r: int = 16, alpha: int = 8, dropout: float = 0.05, seed: int = 0, model: str | Path | None = None,
               target_modules: Sequence[str] = ("q_proj", "v_proj"), device: str = "cpu", dtype: str = "auto",
               output_dir: str | Path | None = None, reuse: bool = True, progress: bool = False) -> TrainingRun:
    """Fine-tune a LoRA adapter so the model answers each prompt with its target label word.

    The loss is the cross-entropy of the target's first token at the answer position (the label words
    "A"/"B" or "Yes"/"No" are one token each) — exactly the probability the judge is later read from.
    Each optimizer step sees ``batch_size * accumulation`` examples: ``accumulation`` micro-batches of
    ``batch_size``, their gradients summed (each loss divided by ``accumulation``, so a step equals one batch of
    the whole size, to float rounding). Give ``steps`` (examples shuffled once with ``seed`` and cycled) or
    ``epochs`` (passes over the examples, reshuffled each pass; the steps are the whole batches they fill).
    AdamW at a constant rate on the adapter's fp32 weights.

    ``device`` and ``dtype`` (:mod:`evalkit.models.device`): on an accelerator the frozen base weights are
    loaded in bf16/fp16 and the forward pass runs under autocast, while the adapter, its gradients, AdamW's
    state and the loss stay fp32 (fp16 adds a gradient scaler). The adapter lands in ``output_dir`` (default:
    the evalkit cache, keyed by model, settings and data — the device's kind and the precision only when they
    are not the CPU's fp32, and the accumulation and epochs only when used, so earlier adapters keep their
    keys); with ``reuse`` an adapter already trained on the same inputs is loaded instead.
    """
    from evalkit.models.defaults import cache_dir, default_lm_path, quiet_model_loading

    quiet_model_loading()  # before peft and transformers import tqdm
    import torch

    from evalkit.models import _folder_fingerprint
    from evalkit.models.device import Placement

    if len(prompts) != len(targets) or not prompts:
        raise ValueError(f"need as many targets as prompts (got {len(prompts)} prompts, {len(targets)} targets)")
    if (steps is None) == (epochs is None):
        raise ValueError(f"give steps or epochs, one of them (got steps={steps}, epochs={epochs})")
    if accumulation < 1 or batch_size < 1:
        raise ValueError(f"batch_size and accumulation are at least 1 (got {batch_size}, {accumulation})")
    if epochs is not None:
        steps = max(1, int(len(prompts) * epochs) // (batch_size * accumulation))
    placement = Placement.of(device, dtype)
    location = str(model) if model is not None else str(default_lm_path())
    config = {"model": Path(location).name, "model_fingerprint": _folder_fingerprint(Path(location))
              if Path(location).is_dir() else location, "steps": steps, "batch_size": batch_size,
              "learning_rate": learning_rate, "r": r, "alpha": alpha, "dropout": dropout, "seed": seed,
              "target_modules": list(target_modules)}
    # Only what differs from the first adapters' settings joins the key: those adapters keep theirs.
    config.update({"accumulation": accumulation} if accumulation != 1 else {})
    config.update({"epochs": epochs} if epochs is not None else {})
    config.update(placement.key_fields())
    key = _training_key(config, list(map(list, prompts)), list(targets))
    folder = Path(output_dir) if output_dir is not None else cache_dir() / "adapters" / key
    with training_lock(folder):  # another process training the same run waits, then reuses it
        record = folder / "evalkit-training.json"
        saved = _saved_run(folder, record, key) if reuse else None
        if saved is not None:
            return saved

        torch.manual_seed(seed)
        tokenizer, peft_model = _lora_model(location, r=r, alpha=alpha, dropout=dropout, target_modules=target_modules,
                                            placement=placement)
        encoded = [list(tokenizer.apply_chat_template(list(map(dict, m)), add_generation_prompt=True, tokenize=True,
                                                      return_dict=True)["input_ids"]) for m in prompts]
        target_ids = [tokenizer.encode(t, add_special_tokens=False)[0] for t in targets]
        started = time.perf_counter()
        losses = _train_steps(peft_model, tokenizer.pad_token_id, encoded, target_ids, steps=steps,
                              batch_size=batch_size, accumulation=accumulation, reshuffle=epochs is not None,
                              learning_rate=learning_rate, seed=seed, progress=progress, placement=placement)
        seconds_per_step = (time.perf_counter() - started) / max(steps, 1)
        folder.mkdir(parents=True, exist_ok=True)
        peft_model.save_pretrained(str(folder))
        readable_as_umask_allows(folder)  # a shared cache's other users read it too
        # The record is written last: a folder without it is an interrupted run and is trained again.
        record.write_text(json.dumps({"key": key, "losses": losses, "seconds_per_step": seconds_per_step,
                                      "config": config, "examples": len(encoded)}, indent=1))
        return TrainingRun(folder, losses, seconds_per_step, config, False, len(encoded))


def _saved_run(folder: Path, record: Path, key: str) -> TrainingRun | None:
    """The run recorded in ``folder`` when its record is of these very inputs (``key``), else None."""
    if not record.is_file():
        return None
    saved = json.loads(record.read_text())
    if saved.get("key") != key:
        return None
    return TrainingRun(folder, saved["losses"], saved["seconds_per_step"], saved["config"], True, saved["examples"])


def _lora_model(location: str, *, r: int, alpha: int, dropout: float, target_modules: Sequence[str],
                placement: Any = None):
    """The tokenizer (left padding, a pad token) and the causal LM at ``location`` with fresh LoRA layers
    (initialised from torch's current seed) on ``placement``'s device: the base weights in its precision (fp32
    on the CPU), the LoRA weights in fp32 (peft casts an adapter over bf16/fp16 weights up)."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from evalkit.models.device import Placement

    placement = placement or Placement()
    tokenizer = AutoTokenizer.from_pretrained(location)
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    base = AutoModelForCausalLM.from_pretrained(location, dtype=placement.torch_dtype).to(placement.device)
    lora = LoraConfig(r=r, lora_alpha=alpha, lora_dropout=dropout, target_modules=list(target_modules),
                      task_type="CAUSAL_LM")
    model = get_peft_model(base, lora)
    for parameter in model.parameters():  # the trained weights and AdamW's state in fp32 whatever the base's
        if parameter.requires_grad and parameter.dtype != torch.float32:
            parameter.data = parameter.data.float()
    return tokenizer, model


def _example_order(count: int, steps: int, per_step: int, seed: int, reshuffle: bool) -> np.ndarray:
    """The example index of each training slot: one permutation seeded by ``seed``, cycled; with ``reshuffle``
    a fresh permutation for each pass (the first pass is the same).

    >>> _example_order(3, 2, 2, 0, False).tolist() == (_example_order(3, 1, 3, 0, False).tolist() * 2)[:4]
    True
    >>> sorted(_example_order(3, 2, 3, 0, True)[3:].tolist())
    [0, 1, 2]
    """
    rng = np.random.default_rng(seed)
    first = rng.permutation(count)
    if not reshuffle:
        return first[np.arange(steps * per_step) % count]
    passes = -(-steps * per_step // count)
    return np.concatenate([first] + [rng.permutation(count) for _ in range(passes - 1)])[:steps * per_step]


def _train_steps(peft_model: Any, pad_token_id: int, encoded: list[list[int]], target_ids: list[int], *, steps: int,
                 batch_size: int, learning_rate: float, seed: int, progress: bool, accumulation: int = 1,
                 reshuffle: bool = False, placement: Any = None) -> list[float]:
    """``steps`` AdamW steps on the cross-entropy of each example's target token at its answer position
    (left-padded micro-batches of ``batch_size``, ``accumulation`` of them per step); the loss of each step
    (the mean over its examples)."""
    import torch

    from evalkit.models.device import Placement

    placement = placement or Placement()
    order = _example_order(len(encoded), steps, batch_size * accumulation, seed, reshuffle)
    optimizer = torch.optim.AdamW([p for p in peft_model.parameters() if p.requires_grad], lr=learning_rate)
    scaler = placement.grad_scaler()
    peft_model.train()
    losses: list[float] = []
    iterator: Iterable[int] = range(steps)
    if progress:
        from tqdm import tqdm  # plain tqdm: the CLI's bar (a terminal), with tqdm's ETA; notebooks train without one

        iterator = tqdm(iterator, desc="LoRA steps", unit="step")
    for step in iterator:
        optimizer.zero_grad()
        step_loss = 0.0
        for micro in range(accumulation):
            start = (step * accumulation + micro) * batch_size
            batch = [int(i) for i in order[start:start + batch_size]]
            width = max(len(encoded[i]) for i in batch)
            ids = torch.tensor([[pad_token_id] * (width - len(encoded[i])) + encoded[i] for i in batch],
                               device=placement.device)
            mask = torch.tensor([[0] * (width - len(encoded[i])) + [1] * len(encoded[i]) for i in batch],
                                device=placement.device)
            positions = (mask.cumsum(-1) - 1).clamp(min=0)
            with placement.autocast():
                logits = peft_model(input_ids=ids, attention_mask=mask, position_ids=positions,
                                    logits_to_keep=1).logits
            loss = torch.nn.functional.cross_entropy(logits[:, -1, :].float(),
                                                     torch.tensor([target_ids[i] for i in batch],
                                                                  device=placement.device))
            if accumulation > 1:
                loss = loss / accumulation
            (scaler.scale(loss) if scaler is not None else loss).backward()
            step_loss += float(loss.detach())
        if scaler is not None:
            scaler.step(optimizer)
            scaler.update()
        else:
            optimizer.step()
        losses.append(step_loss)
    return losses


# --------------------------------------------------------------------------- the recipe's LoRA judge

def train_lm_judge(recipe: "JudgeRecipe | str", *, kind: Literal["pairwise", "direct"] = "pairwise",
                   hard_negatives: bool = True, data: Any = None,
                   data_dir: str | Path | None = None, model: str | Path | None = None, device: str = "cpu",
                   dtype: str = "auto", progress: bool = False):
    """The LoRA judge of ``recipe`` on the same leak-free pairs (trained or loaded from the cache): SmolLM2 unless
    ``model`` names another causal LM (a folder or a Hugging Face id), on ``device`` in ``dtype``
    (:func:`train_lora`). The recipe's ``epochs``, when set, replace its ``steps``."""
    from evalkit.paireval.data import pointwise_examples
    from evalkit.paireval.training_data import judge_data, recipe_frame
    from evalkit.paireval.prompts import direct_messages, pair_messages
    from evalkit.paireval.recipes import named_recipe

    recipe = named_recipe(recipe)
    data = data or judge_data(seed=recipe.seed, data_dir=data_dir)
    settings = recipe.lm
    frame = recipe_frame(data, settings.pairs, settings.hard_share if hard_negatives else 0.0, recipe.seed)
    schedule = dict(epochs=settings.epochs) if settings.epochs is not None else dict(steps=settings.steps)
    common = dict(learning_rate=settings.learning_rate, r=settings.r, alpha=settings.alpha, seed=recipe.seed,
                  model=model, accumulation=settings.accumulation, device=device, dtype=dtype, progress=progress,
                  **schedule)
    if kind == "pairwise":
        prompts = [pair_messages(r.context_a, r.response_a, r.context_b, r.response_b) for r in frame.itertuples()]
        return train_lora(prompts, list(frame["better"]), batch_size=settings.batch_size, **common)
    points = pointwise_examples(frame)
    return train_lora([direct_messages(r.context, r.response) for r in points.itertuples()], list(points["label"]),
                      batch_size=settings.direct_batch_size, **common)
