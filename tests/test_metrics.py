"""Reference metrics: values against the libraries' direct use, and the on-disk cache."""
from __future__ import annotations

import numpy as np
import pytest

from evalkit.metrics import MetricStore, ReferenceMetrics

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

    from evalkit.multiplicity import multiplicity
    from tests.fakes import ScriptedBackend

    replies = iter(["The blue one suits you.", "Blue fits you best.", "Bananas are yellow.", "I like trains."] * 2)
    backend = ScriptedBackend(lambda prompt: "Yes" if "Predicted reply" in prompt else next(replies))
    contexts = pd.DataFrame({"set": ["a", "b"], "history": [[("user", "Which phone?")], [("user", "Hi")]]})
    pairs = multiplicity(contexts, backend, ReferenceMetrics(store=MetricStore(tmp_path / "m.sqlite")), seed=1)
    assert pairs["first"].tolist() == ["The blue one suits you.", "Blue fits you best."]
    assert pairs["second"].tolist() == ["Bananas are yellow.", "I like trains."]
    assert pairs["P(Yes) judge"].tolist() == pytest.approx([0.9, 0.9])
    assert pairs["embedding_cosine"].between(-1, 1).all()
