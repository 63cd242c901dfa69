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

from ..models import Messages


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
    from ..defaults import cache_dir, default_lm_path, quiet_model_loading

    quiet_model_loading()  # before peft and transformers import tqdm
    import torch

    from ..models import _folder_fingerprint

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
    saved = _saved_run(folder, record, key) if reuse else None
    if saved is not None:
        return saved

    torch.manual_seed(seed)
    tokenizer, peft_model = _lora_model(location, r=r, alpha=alpha, dropout=dropout, target_modules=target_modules)
    encoded = [list(tokenizer.apply_chat_template(list(map(dict, m)), add_generation_prompt=True, tokenize=True,
                                                  return_dict=True)["input_ids"]) for m in prompts]
    target_ids = [tokenizer.encode(t, add_special_tokens=False)[0] for t in targets]
    started = time.perf_counter()
    losses = _train_steps(peft_model, tokenizer.pad_token_id, encoded, target_ids, steps=steps,
                          batch_size=batch_size, learning_rate=learning_rate, seed=seed, progress=progress)
    seconds_per_step = (time.perf_counter() - started) / max(steps, 1)
    folder.mkdir(parents=True, exist_ok=True)
    peft_model.save_pretrained(str(folder))
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


def _lora_model(location: str, *, r: int, alpha: int, dropout: float, target_modules: Sequence[str]):
    """The tokenizer (left padding, a pad token) and the fp32 causal LM at ``location`` with fresh LoRA layers
    (initialised from torch's current seed)."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(location)
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    base = AutoModelForCausalLM.from_pretrained(location, dtype=torch.float32)
    lora = LoraConfig(r=r, lora_alpha=alpha, lora_dropout=dropout, target_modules=list(target_modules),
                      task_type="CAUSAL_LM")
    return tokenizer, get_peft_model(base, lora)


def _train_steps(peft_model: Any, pad_token_id: int, encoded: list[list[int]], target_ids: list[int], *, steps: int,
                 batch_size: int, learning_rate: float, seed: int, progress: bool) -> list[float]:
    """``steps`` AdamW steps on the cross-entropy of each example's target token at its answer position
    (examples shuffled with ``seed``, left-padded batches of ``batch_size``, cycling); the loss of each step."""
    import torch

    order = np.random.default_rng(seed).permutation(len(encoded))
    optimizer = torch.optim.AdamW([p for p in peft_model.parameters() if p.requires_grad], lr=learning_rate)
    peft_model.train()
    losses: list[float] = []
    iterator: Iterable[int] = range(steps)
    if progress:
        from tqdm import tqdm  # the CLI's bar (a terminal); notebooks train without one

        iterator = tqdm(iterator, desc="LoRA steps")
    for step in iterator:
        batch = [int(order[(step * batch_size + k) % len(order)]) for k in range(batch_size)]
        width = max(len(encoded[i]) for i in batch)
        ids = torch.tensor([[pad_token_id] * (width - len(encoded[i])) + encoded[i] for i in batch])
        mask = torch.tensor([[0] * (width - len(encoded[i])) + [1] * len(encoded[i]) for i in batch])
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        logits = peft_model(input_ids=ids, attention_mask=mask, position_ids=positions, logits_to_keep=1).logits
        loss = torch.nn.functional.cross_entropy(logits[:, -1, :].float(),
                                                 torch.tensor([target_ids[i] for i in batch]))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    return losses


# --------------------------------------------------------------------------- the recipe's LoRA judge

def train_lm_judge(recipe: "JudgeRecipe | str", *, kind: Literal["pairwise", "direct"] = "pairwise",
                   hard_negatives: bool = True, data: Any = None,
                   data_dir: str | Path | None = None, model: str | Path | None = None):
    """The SmolLM2 LoRA judge of ``recipe`` on the same leak-free pairs (trained or loaded from the cache)."""
    from .data import pointwise_examples
    from .training_data import judge_data, recipe_frame
    from .prompts import direct_messages, pair_messages
    from .recipes import named_recipe

    recipe = named_recipe(recipe)
    data = data or judge_data(seed=recipe.seed, data_dir=data_dir)
    settings = recipe.lm
    frame = recipe_frame(data, settings.pairs, settings.hard_share if hard_negatives else 0.0, recipe.seed)
    common = dict(steps=settings.steps, learning_rate=settings.learning_rate, r=settings.r, alpha=settings.alpha,
                  seed=recipe.seed, model=model)
    if kind == "pairwise":
        prompts = [pair_messages(r.context_a, r.response_a, r.context_b, r.response_b) for r in frame.itertuples()]
        return train_lora(prompts, list(frame["better"]), batch_size=settings.batch_size, **common)
    points = pointwise_examples(frame)
    return train_lora([direct_messages(r.context, r.response) for r in points.itertuples()], list(points["label"]),
                      batch_size=settings.direct_batch_size, **common)
