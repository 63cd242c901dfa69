"""Reference metrics: values against the libraries' direct use, and the on-disk cache."""
from __future__ import annotations

import numpy as np
import pytest

from evalkit.upheld.metrics import MetricStore, ReferenceMetrics, bert_score_tokenizer

pytestmark = pytest.mark.slow
REFERENCES = ["Sure, what time would you like the table?", "It is sunny today.", "Sure, what time would you like the table?"]
CANDIDATES = ["Of course. At what time?", "I like turtles.", "Of course. At what time?"]


def test_scores_match_direct_library_calls_and_cache(tmp_path):
    from rouge_score import rouge_scorer
    from sentence_transformers import SentenceTransformer

    scorer = ReferenceMetrics(store=MetricStore(tmp_path / "m.sqlite"))
    first = scorer.score(REFERENCES, CANDIDATES)
    assert scorer.computed == 2 and scorer.hits == 0  # the repeated pair is scored once
    direct = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=True).score(REFERENCES[0], CANDIDATES[0])
    assert first.loc[0, "rouge1"] == pytest.approx(direct["rouge1"].fmeasure)
    encoder = SentenceTransformer(scorer.encoder, device="cpu")
    vectors = encoder.encode([REFERENCES[1], CANDIDATES[1]], normalize_embeddings=True)
    assert first.loc[1, "embedding_cosine"] == pytest.approx(float(vectors[0] @ vectors[1]), abs=1e-5)
    assert first.loc[0, "bertscore_f1"] > first.loc[1, "bertscore_f1"]
    assert first.loc[0].equals(first.loc[2])

    again = ReferenceMetrics(store=MetricStore(tmp_path / "m.sqlite"))
    second = again.score(REFERENCES, CANDIDATES)
    assert (again.computed, again.hits) == (0, 2)
    assert np.allclose(first.to_numpy(), second.to_numpy())


def test_multiplicity_pairs_and_consistency(tmp_path):
    import pandas as pd

    from evalkit.upheld.multiplicity import multiplicity
    from tests.fakes import ScriptedBackend

    replies = iter(["The blue one suits you.", "Blue fits you best.", "Bananas are yellow.", "I like trains."] * 2)
    backend = ScriptedBackend(lambda prompt: "Yes" if "Predicted reply" in prompt else next(replies))
    contexts = pd.DataFrame({"set": ["a", "b"], "history": [[("user", "Which phone?")], [("user", "Hi")]]})
    pairs = multiplicity(contexts, backend, ReferenceMetrics(store=MetricStore(tmp_path / "m.sqlite")), seed=1)
    assert pairs["first"].tolist() == ["The blue one suits you.", "Blue fits you best."]
    assert pairs["second"].tolist() == ["Bananas are yellow.", "I like trains."]
    assert pairs["P(Yes) judge"].tolist() == pytest.approx([0.9, 0.9])
    assert pairs["embedding_cosine"].between(-1, 1).all()


def test_one_encoder_pass_gives_what_bert_score_and_the_sentence_encoder_give_apart(tmp_path):
    from bert_score import BERTScorer
    from sentence_transformers import SentenceTransformer

    long_text = " ".join(f"word{i} and then some more" for i in range(80))  # > 256 tokens: its own encoder pass
    references = REFERENCES[:2] + ["Thanks!", long_text, "See you at eight, then."]
    candidates = CANDIDATES[:2] + ["", "A short answer.", long_text[:200]]
    scorer = ReferenceMetrics(store=MetricStore(tmp_path / "m.sqlite"))
    assert scorer._pooled_length() == 256
    ours = scorer.score(references, candidates)
    reference = BERTScorer(model_type=scorer.encoder, num_layers=6, device="cpu")
    bert_score_tokenizer(reference._tokenizer)  # its empty-text call, as the kit gives it (transformers 5)
    precision, recall, f1 = reference.score(candidates, references)
    assert np.allclose(ours["bertscore_precision"], precision.numpy(), atol=1e-5)
    assert np.allclose(ours["bertscore_recall"], recall.numpy(), atol=1e-5)
    assert np.allclose(ours["bertscore_f1"], f1.numpy(), atol=1e-5)
    encoder = SentenceTransformer(scorer.encoder, device="cpu")
    vectors = [encoder.encode(texts, normalize_embeddings=True) for texts in (references, candidates)]
    assert np.allclose(ours["embedding_cosine"], (vectors[0] * vectors[1]).sum(axis=1), atol=1e-5)
    stored = scorer.embed(references + candidates)  # the pass stored every text's vector under embed's keys
    assert np.allclose(stored, np.concatenate(vectors), atol=1e-5)


def test_an_encoder_that_is_not_a_plain_mean_pooling_folder_gets_its_own_sentence_pass(tmp_path):
    scorer = ReferenceMetrics(encoder=tmp_path, store=MetricStore(tmp_path / "m.sqlite"))
    assert scorer._pooled_length() is None  # no sentence-transformers files: nothing is assumed
    shallower = ReferenceMetrics(bertscore_layers=4, store=MetricStore(tmp_path / "m.sqlite"))
    assert shallower._pooled_length() is None  # BERTScore would read layer 4, the sentence encoder layer 6
