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
