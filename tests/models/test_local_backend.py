"""The local transformers backend on the default SmolLM2 model."""
from __future__ import annotations

import pytest

from evalkit.models import Backend, TransformersBackend

pytestmark = pytest.mark.slow

QUESTIONS = ["Is Paris the capital of France? Answer Yes or No.",
             "Is the number 7 even? Answer Yes or No.",
             "Here is a longer question, padded with words so that it is the longest prompt of this batch by far: "
             "is ice colder than steam? Answer Yes or No."]


@pytest.fixture(scope="module")
def backend() -> TransformersBackend:
    return TransformersBackend(batch_size=3)


def _prompts(texts):
    return [[{"role": "user", "content": text}] for text in texts]


def test_satisfies_the_protocol(backend):
    assert isinstance(backend, Backend)
    assert backend.name.startswith("transformers:SmolLM2-135M-Instruct")


def test_label_probabilities_are_normalised_and_batch_independent(backend):
    batched = backend.label_probs(_prompts(QUESTIONS), ["Yes", "No"])
    for result in batched:
        assert sum(result.probs.values()) == pytest.approx(1.0)
        assert 0 < result.label_mass <= 1 and result.prompt_tokens > 10
    alone = [backend.label_probs(_prompts([q]), ["Yes", "No"])[0] for q in QUESTIONS]
    for together, single in zip(batched, alone):
        assert together.probs["Yes"] == pytest.approx(single.probs["Yes"], abs=1e-4)


def test_label_tokens_are_distinct_for_digits(backend):
    ids = backend.label_token_ids(["1", "2", "3", "4", "5"])
    assert len({token for tokens in ids.values() for token in tokens}) == sum(map(len, ids.values()))


def test_greedy_generation_is_deterministic_and_batched_alike(backend):
    first = backend.generate(_prompts(QUESTIONS), max_tokens=8)
    alone = backend.generate(_prompts(QUESTIONS[:1]), max_tokens=8)
    assert first[0].texts == alone[0].texts and first[0].texts[0]
    assert all(0 < r.completion_tokens <= 8 for r in first)
    sampled = backend.generate(_prompts(QUESTIONS[:1]), max_tokens=8, temperature=1.0, n=2, seed=3)
    assert len(sampled[0].texts) == 2
    assert sampled[0].texts == backend.generate(_prompts(QUESTIONS[:1]), max_tokens=8, temperature=1.0,
                                                n=2, seed=3)[0].texts


def test_a_sampled_answer_is_the_same_alone_or_in_a_batch_and_moves_with_the_seed(backend):
    together = backend.generate(_prompts(QUESTIONS), max_tokens=12, temperature=1.0, seed=5)
    alone = [backend.generate(_prompts([q]), max_tokens=12, temperature=1.0, seed=5)[0] for q in QUESTIONS]
    assert [r.texts for r in together] == [r.texts for r in alone]
    seeds = {backend.generate(_prompts(QUESTIONS[:1]), max_tokens=12, temperature=1.0, seed=s)[0].texts[0]
             for s in range(4)}
    assert len(seeds) > 1  # four seeds, not four copies of one answer


def test_the_row_seeded_draw_samples_the_softmax_of_its_scores():
    import numpy as np
    import torch

    from evalkit.models.hf import RowSeededDraw

    logits = torch.tensor([2.0, 1.0, 0.0, -1.0, float("-inf")])
    rows = 20000
    draw = RowSeededDraw(list(range(rows)))
    picked = draw(None, logits.expand(rows, -1).clone()).argmax(dim=-1).numpy()
    frequencies = np.bincount(picked, minlength=5) / rows
    expected = torch.softmax(logits, dim=-1).numpy()
    assert frequencies[4] == 0 and np.abs(frequencies - expected).max() < 0.015  # sd of a share <= 0.0036


@pytest.fixture(scope="module")
def llama():
    _needs_llama_cpp()
    from evalkit.models import LlamaCppBackend

    return LlamaCppBackend()


def _needs_llama_cpp() -> None:
    """llama.cpp is opt-in: built by `make llamacpp` the first time a test needs it (tests/llama.py)."""
    from tests.llama import ensure_llama_cpp

    ensure_llama_cpp()


def test_llama_cpp_engine_agrees_with_transformers_on_the_same_tokens(backend, llama):
    """Same token ids (one tokenizer); F16 weights move probabilities a little (benchmarks/engines.py measures
    how much on real prompts), never the plain answers here."""
    assert isinstance(llama, Backend) and llama.name.startswith("llamacpp:")
    ours, theirs = llama.label_probs(_prompts(QUESTIONS), ["Yes", "No"]), backend.label_probs(_prompts(QUESTIONS),
                                                                                          ["Yes", "No"])
    for a, b in zip(ours, theirs):
        assert a.prompt_tokens == b.prompt_tokens and sum(a.probs.values()) == pytest.approx(1.0)
        assert a.probs["Yes"] == pytest.approx(b.probs["Yes"], abs=0.05)
    # Without prefix reuse each result depends on its prompt alone, not on which prompt ran before it.
    again = [llama.label_probs(_prompts([q]), ["Yes", "No"])[0] for q in reversed(QUESTIONS)][::-1]
    for together, alone in zip(ours, again):
        assert together.probs["Yes"] == alone.probs["Yes"]


def test_llama_cpp_prefix_reuse_in_f32_equals_each_prompt_computed_whole():
    _needs_llama_cpp()
    from evalkit.models import LlamaCppBackend

    alike = [QUESTIONS[2], QUESTIONS[2].replace("steam", "boiling water"), QUESTIONS[2].replace("ice", "snow")]
    whole = LlamaCppBackend(weights="f32").label_probs(_prompts(alike), ["Yes", "No"])
    reusing = LlamaCppBackend(weights="f32", share_prefixes=True)
    shared = reusing.label_probs(_prompts(alike), ["Yes", "No"])
    assert reusing.name != LlamaCppBackend(weights="f32").name  # reuse is part of the cache identity
    assert [r.probs["Yes"] for r in shared] == pytest.approx([r.probs["Yes"] for r in whole], abs=1e-6)


def test_llama_cpp_generation_stops_at_the_end_of_turn_and_is_seeded(llama):
    first = llama.generate(_prompts(QUESTIONS), max_tokens=8)
    assert all(0 < r.completion_tokens <= 8 and r.texts[0] for r in first)
    assert llama.generate(_prompts(QUESTIONS[:1]), max_tokens=8)[0].texts == first[0].texts
    short = llama.generate([[{"role": "user", "content": "Reply with the single word: ok"}]], max_tokens=40)[0]
    assert short.completion_tokens < 40  # stopped at the end of its turn
    sampled = llama.generate(_prompts(QUESTIONS[:1]), max_tokens=8, temperature=1.0, n=2, seed=3)[0].texts
    assert len(sampled) == 2 and sampled[0] != sampled[1]  # the n-th sample has a seed of its own
    assert sampled == llama.generate(_prompts(QUESTIONS[:1]), max_tokens=8, temperature=1.0, n=2, seed=3)[0].texts


def test_a_lora_adapter_merged_into_the_gguf_scores_as_transformers_with_the_adapter(tmp_path, backend, monkeypatch):
    """The merge moves q/k rows into llama.cpp's rotary order; an error there would show as a large difference."""
    _needs_llama_cpp()
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    from evalkit.models.defaults import default_lm_path
    from evalkit.models import LlamaCppBackend

    lm = default_lm_path()  # before the cache moves: the merged GGUF goes to tmp, the converted model stays
    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "cache"))
    torch.manual_seed(0)
    config = LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "up_proj",
                                                           "down_proj"])
    peft_model = get_peft_model(AutoModelForCausalLM.from_pretrained(lm), config)
    with torch.no_grad():
        for name, weight in peft_model.named_parameters():
            if "lora_B" in name:  # PEFT starts B at zero (no change); give the adapter something to merge
                weight.normal_(0.0, 0.05)
    peft_model.save_pretrained(tmp_path / "adapter")
    tuned = TransformersBackend(lm, adapter=tmp_path / "adapter")
    merged = LlamaCppBackend(adapter=tmp_path / "adapter", weights="f32", tokenizer=lm)
    prompts = _prompts(QUESTIONS)
    base = [r.probs["Yes"] for r in backend.label_probs(prompts, ["Yes", "No"])]
    want = [r.probs["Yes"] for r in tuned.label_probs(prompts, ["Yes", "No"])]
    got = [r.probs["Yes"] for r in merged.label_probs(prompts, ["Yes", "No"])]
    assert max(abs(w - b) for w, b in zip(want, base)) > 0.01  # the adapter changes the answers
    assert got == pytest.approx(want, abs=2e-3)


def test_prompts_with_their_own_labels_in_one_pass_equal_each_label_set_asked_apart():
    backend = TransformersBackend()  # batch size 1: prompts run one by one, sharing prefixes
    stem = "Here is a reply to judge: 'the train leaves at nine from platform two'. "
    prompts = _prompts([stem + "Is it polite? Answer Yes or No.", stem + "Rate it from 1 to 5.",
                        stem + "Is it rude? Answer Yes or No."])
    labels = [["Yes", "No"], ["1", "2", "3", "4", "5"], ["Yes", "No"]]
    together = backend.label_probs_each(prompts, labels)
    apart = [backend.label_probs([prompt], own)[0] for prompt, own in zip(prompts, labels)]
    for joint, alone in zip(together, apart):
        assert set(joint.probs) == set(alone.probs)
        for label in alone.probs:
            assert joint.probs[label] == pytest.approx(alone.probs[label], abs=1e-4)
        assert joint.prompt_tokens == alone.prompt_tokens
