"""Every device and precision path on the CPU, with tiny random models built offline (tests/tiny_models.py):
the shared resolver, LoRA training (accumulation, epochs, bf16 autocast, the cache key), the transformers
backend (batched against one at a time, bf16 against fp32) and the encoder trainers."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from evalkit.models import TransformersBackend
from evalkit.models.device import Placement, resolve_device, resolve_dtype
from evalkit.paireval.training import _training_key, train_lora
from tests.tiny_models import CORPUS as CORPUS_LINES
from tests.tiny_models import tiny_bert, tiny_llama

ACCELERATOR = torch.cuda.is_available() or torch.backends.mps.is_available()

PROMPTS = [[{"role": "user", "content": text}] for text in (
    "Which reply is better, A or B? Conversation A: user: Can I help you?",
    "Which reply is better, A or B? Conversation B: user: Where is the station? assistant: The weather is nice.",
    "Is the reply a good next turn? Hello, how are you today?",
    "Rate the reply. We went to the park and had a picnic by the river with some friends.",
    "Which reply is better?",
    "Answer with A or B.",
)]
TARGETS = ["A", "B", "A", "B", "B", "A"]


@pytest.fixture(scope="module")
def lm(tmp_path_factory):
    return tiny_llama(tmp_path_factory.mktemp("tiny-llama"))


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    return tiny_bert(tmp_path_factory.mktemp("tiny-bert"))


def _adapter_weights(folder) -> dict[str, np.ndarray]:
    from safetensors.torch import load_file

    return {k: v.float().numpy() for k, v in load_file(str(folder / "adapter_model.safetensors")).items()}


# --------------------------------------------------------------------------- the resolver

def test_auto_is_the_cpu_on_a_machine_without_an_accelerator():
    if ACCELERATOR:
        pytest.skip("this machine has an accelerator")
    assert resolve_device("auto") == "cpu" and resolve_dtype("auto", "cpu") == "float32"
    assert Placement.of("auto", "auto") == Placement("cpu", "float32") and Placement.of().is_default
    with pytest.raises(ValueError, match="device 'cuda:1': torch sees no CUDA device"):
        resolve_device("cuda:1")


def test_bad_names_are_refused_naming_them():
    with pytest.raises(ValueError, match="unknown device 'gpu0'"):
        resolve_device("gpu0")
    with pytest.raises(ValueError, match="unknown dtype 'int4'"):
        resolve_dtype("int4", "cpu")
    with pytest.raises(ValueError, match="unknown dtype 'half-ish'"):
        TransformersBackend("unused", dtype="half-ish")


# --------------------------------------------------------------------------- LoRA training

def test_accumulated_micro_batches_train_as_one_larger_batch(lm, tmp_path):
    common = dict(steps=2, learning_rate=1e-2, dropout=0.0, seed=3, model=lm, reuse=False)
    whole = train_lora(PROMPTS, TARGETS, batch_size=4, output_dir=tmp_path / "whole", **common)
    parts = train_lora(PROMPTS, TARGETS, batch_size=2, accumulation=2, output_dir=tmp_path / "parts", **common)
    assert parts.losses == pytest.approx(whole.losses, rel=1e-5)
    a, b = _adapter_weights(whole.adapter), _adapter_weights(parts.adapter)
    assert a.keys() == b.keys() and all(np.allclose(a[k], b[k], atol=1e-6) for k in a)
    moved = max(float(np.abs(a[k]).max()) for k in a if "lora_B" in k)
    assert moved > 1e-3  # the steps did train (lora_B starts at zero)


def test_epochs_fill_whole_accumulated_batches(lm, tmp_path):
    run = train_lora(PROMPTS, TARGETS, epochs=2, batch_size=2, accumulation=2, model=lm, reuse=False,
                     output_dir=tmp_path / "epochs")
    assert len(run.losses) == 3 and run.config["epochs"] == 2 and run.config["accumulation"] == 2  # 12 // 4
    with pytest.raises(ValueError, match="give steps or epochs"):
        train_lora(PROMPTS, TARGETS, steps=2, epochs=1, model=lm)


def test_a_bf16_autocast_run_stays_close_to_fp32(lm, tmp_path):
    common = dict(steps=3, batch_size=3, learning_rate=1e-2, dropout=0.0, seed=1, model=lm, reuse=False)
    full = train_lora(PROMPTS, TARGETS, output_dir=tmp_path / "fp32", **common)
    mixed = train_lora(PROMPTS, TARGETS, dtype="bf16", output_dir=tmp_path / "bf16", **common)
    assert mixed.config["dtype"] == "bfloat16" and "dtype" not in full.config
    assert mixed.losses == pytest.approx(full.losses, rel=0.02)
    weights = _adapter_weights(mixed.adapter)
    assert all(np.isfinite(v).all() for v in weights.values())
    from safetensors.torch import load_file

    saved = load_file(str(mixed.adapter / "adapter_model.safetensors"))
    assert {v.dtype for v in saved.values()} == {torch.float32}  # the trained weights stayed fp32


def test_the_cache_key_keeps_earlier_adapters_and_changes_with_what_matters(lm, tmp_path, monkeypatch):
    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path))
    from evalkit.models import _folder_fingerprint

    common = dict(batch_size=2, model=lm, dropout=0.0)
    default = train_lora(PROMPTS, TARGETS, steps=1, **common)
    # the key of the first adapters, written out: CPU/fp32 without accumulation or epochs adds nothing to it
    config = {"model": lm.name, "model_fingerprint": _folder_fingerprint(lm), "steps": 1, "batch_size": 2,
              "learning_rate": 1e-4, "r": 16, "alpha": 8, "dropout": 0.0, "seed": 0,
              "target_modules": ["q_proj", "v_proj"]}
    assert default.adapter.name == _training_key(config, [list(p) for p in PROMPTS], TARGETS)
    same = train_lora(PROMPTS, TARGETS, steps=1, device="cpu", dtype="fp32", **common)
    assert same.adapter == default.adapter and same.from_cache
    others = [train_lora(PROMPTS, TARGETS, steps=1, accumulation=2, **common),
              train_lora(PROMPTS, TARGETS, epochs=1 / 3, **common),
              train_lora(PROMPTS, TARGETS, steps=1, dtype="bf16", **common)]
    names = {default.adapter.name} | {run.adapter.name for run in others}
    assert len(names) == 4 and not any(run.from_cache for run in others)
    assert json.loads((others[2].adapter / "evalkit-training.json").read_text())["config"]["device"] == "cpu"


def test_the_paper_recipe():
    from evalkit.paireval.recipes import RECIPES

    paper = RECIPES["paper"].lm
    assert (paper.r, paper.alpha, paper.learning_rate, paper.effective_batch, paper.epochs) == (16, 8, 1e-4, 16, 1)
    assert paper.pairs == RECIPES["paper"].encoder.pairs  # one epoch over the recipe's whole pair set
    assert RECIPES["book"].lm.accumulation == 1 and RECIPES["book"].lm.epochs is None  # the book's judge as it was


# --------------------------------------------------------------------------- the transformers backend

def test_batched_label_probabilities_equal_one_at_a_time(lm):
    one = TransformersBackend(lm)  # batch 1 on the CPU, sharing prefixes
    assert one.batch_size == 1 and one.name.count(":") == 2  # no precision tag on the CPU in fp32
    batched = TransformersBackend(lm, batch_size=4, device="auto")
    for a, b in zip(one.label_probs(PROMPTS, ["A", "B"]), batched.label_probs(PROMPTS, ["A", "B"])):
        assert a.probs == pytest.approx(b.probs, abs=1e-5)
    greedy = [r.texts for r in one.generate(PROMPTS, max_tokens=4)]
    assert greedy == [r.texts for r in TransformersBackend(lm, generate_batch_size=1).generate(PROMPTS, max_tokens=4)]


def test_a_bf16_backend_reads_close_to_fp32_under_its_own_name(lm):
    full, half = TransformersBackend(lm), TransformersBackend(lm, dtype="bf16")
    assert half.name == full.name + ":cpu-bfloat16" and half.model.dtype == torch.bfloat16
    for a, b in zip(full.label_probs(PROMPTS, ["Yes", "No"]), half.label_probs(PROMPTS, ["Yes", "No"])):
        assert a.probs["Yes"] == pytest.approx(b.probs["Yes"], abs=0.02)


# --------------------------------------------------------------------------- the encoder judges

def _pairs(n: int):
    import pandas as pd

    lines = list(dict.fromkeys(CORPUS_LINES))
    rows = []
    for k in range(n):
        good, bad = lines[k % len(lines)], lines[(k + 3) % len(lines)]
        context = [lines[(k + 1) % len(lines)]]
        rows.append({"context_a": context, "response_a": good if k % 2 else bad, "context_b": context,
                     "response_b": bad if k % 2 else good, "better": "A" if k % 2 else "B"})
    return pd.DataFrame(rows)


def test_an_encoder_judge_trains_in_bf16_close_to_fp32_and_keeps_its_cpu_key(bert, tmp_path):
    from evalkit.paireval.encoder import EncoderJudge, train_encoder_judge
    from evalkit.paireval.recipes import EncoderRecipe

    recipe = EncoderRecipe(batch_size=4, head_hidden=8, curve_points=0, max_tokens=24)
    pairs = _pairs(12)
    full = train_encoder_judge(pairs, recipe, model=bert, output_dir=tmp_path / "fp32", seed=2)
    mixed = train_encoder_judge(pairs, recipe, model=bert, output_dir=tmp_path / "bf16", seed=2, dtype="bf16")
    assert "dtype" not in full.config and mixed.config["dtype"] == "bfloat16" and full.key != mixed.key
    assert mixed.losses == pytest.approx(full.losses, rel=0.05)
    same = train_encoder_judge(pairs, recipe, model=bert, output_dir=tmp_path / "fp32", seed=2, device="cpu",
                               dtype="fp32")
    assert same.from_cache and same.key == full.key
    one = EncoderJudge(full.model_dir, batch_size=1, store=False)
    many = EncoderJudge(full.model_dir, batch_size=64, store=False)
    texts = list(pairs["response_a"]) + ["a longer reply that pads the others in its batch"]
    assert np.allclose(one.embed(texts), many.embed(texts), atol=1e-5)
    half = EncoderJudge(full.model_dir, store=False, dtype="bf16")
    assert np.allclose(one.embed(texts), half.embed(texts), atol=0.05)


def test_the_realism_encoder_and_the_reference_metrics_take_a_device(bert, tmp_path):
    import pandas as pd

    from evalkit.upheld.metrics import ReferenceMetrics
    from evalkit.userproxy.realism_encoder import RealismEncoder, RealismRecipe, train_realism_encoder

    frame = pd.DataFrame({"human": CORPUS_LINES[:8], "proxy": CORPUS_LINES[8:16]})
    recipe = RealismRecipe(epochs=1, batch_size=4, curve_points=1, max_tokens=24)
    full = train_realism_encoder(frame, frame, recipe, model=bert, output_dir=tmp_path / "fp32")
    mixed = train_realism_encoder(frame, frame, recipe, model=bert, output_dir=tmp_path / "bf16", dtype="bf16")
    assert full.key != mixed.key and mixed.losses == pytest.approx(full.losses, rel=0.05)
    scores = RealismEncoder.from_training(full, device="auto").score_texts(CORPUS_LINES[:3])
    assert scores.shape == (3,) and np.isfinite(scores).all()
    assert "device" not in ReferenceMetrics(encoder=str(bert), store=object(), device="auto").config


# --------------------------------------------------------------------------- the accelerator check

def test_the_accelerator_check_runs_its_device_half_on_the_cpu_as_a_dry_run():
    import os
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "scripts" / "accelerator_check.py"
    done = subprocess.run([sys.executable, str(script), "--device", "cpu", "--dtype", "bf16"], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "cpu, bfloat16:" in done.stdout and "all checks passed" in done.stdout
    assert "evalkit backend P(A), device against the CPU's fp32" in done.stdout  # the kit's own half ran


def test_the_paper_recipe_path_trains_on_the_recipes_data_at_smoke_size(lm, tmp_path, monkeypatch, real_data_dir):
    from evalkit.paireval.training import train_lm_judge
    from evalkit.paireval.training_data import judge_data

    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path))
    data = judge_data(seed=13, data_dir=real_data_dir)
    run = train_lm_judge("paper-smoke", data=data, model=lm, device="auto")  # the chapter's call, params/gpu-smoke.yml
    assert run.examples == 8 and len(run.losses) == 2  # one epoch of 8 pairs, 2 x 2 prompts a step
    assert run.config["epochs"] == 1 and run.config["accumulation"] == 2
    direct = train_lm_judge("paper-smoke", kind="direct", data=data, model=lm, device="auto")
    assert direct.examples == 16 and len(direct.losses) == 4


def test_the_reader_runs_where_its_base_runs_and_the_metrics_score_on_a_device(bert, tmp_path):
    from evalkit.upheld.metrics import MetricStore, ReferenceMetrics
    from evalkit.paireval.encoder import EncoderJudge
    from evalkit.paireval.reader import train_comparative_reader
    from evalkit.paireval.recipes import ReaderRecipe

    pairs, recipe = _pairs(16), ReaderRecipe(epochs=1, batch_size=4, curve_points=0, max_tokens=24)
    runs = {dtype: train_comparative_reader(pairs, EncoderJudge(bert, store=False, dtype=dtype), recipe, base_key="b",
                                            output_dir=tmp_path / dtype) for dtype in ("fp32", "bf16")}
    assert "dtype" not in runs["fp32"].config and runs["bf16"].config["dtype"] == "bfloat16"
    assert runs["bf16"].key != runs["fp32"].key
    assert runs["bf16"].losses == pytest.approx(runs["fp32"].losses, rel=0.05)
    metrics = ReferenceMetrics(encoder=str(bert), bertscore_layers=2, store=MetricStore(tmp_path / "m.sqlite"),
                               device="auto")
    scores = metrics.score(CORPUS_LINES[:3], CORPUS_LINES[3:6])
    assert scores["bertscore_f1"].between(-1, 1).all() and scores["embedding_cosine"].notna().all()
