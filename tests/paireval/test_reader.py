"""The judge protocol and the comparative reader: a judge that reads both sides, with a measured position bias."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalkit import paireval as pe
from evalkit.judges.protocol import Judge
from evalkit.paireval.lm_judge import LMJudge
from evalkit.paireval.reader import ComparativeReader, comparison_head, train_comparative_reader
from evalkit.paireval.recipes import ReaderRecipe

CONTEXTS = [["Do you want to get lunch at the new noodle place?"], ["How was the film last night?"]]
REPLIES = ["Sure, noodles sound great, let's go at noon.", "It was long but the ending was worth it."]
OTHERS = [(["Where is the station?"], "Turn left after the bank."), (["Is it raining?"], "Yes, take a coat.")]


def toy_pairs(n: int) -> pd.DataFrame:
    """Pairs whose good side answers its own context and whose bad side is an unrelated reply."""
    rows = []
    for k in range(n):
        context, reply = CONTEXTS[k % 2], REPLIES[k % 2]
        other_context, other_reply = OTHERS[k % 2]
        good_first = k % 3 != 0
        good, bad = (context, reply), (context, other_reply)
        a, b = (good, bad) if good_first else (bad, good)
        rows.append({"context_a": a[0], "response_a": a[1], "context_b": b[0], "response_b": b[1],
                     "better": "A" if good_first else "B", "negative": "random"})
    return pd.DataFrame(rows)


def test_every_judge_answers_the_one_protocol():
    class Door:
        name = "door"

        def label_probs(self, prompts, labels):
            raise AssertionError("not called")

    assert isinstance(LMJudge(Door()), Judge)
    assert not isinstance(Door(), Judge)  # a bare backend is not a judge: scoring code never guesses


@pytest.mark.slow
def test_an_untrained_reader_is_its_base_judge_and_a_trained_one_can_prefer_a_slot(tmp_path):
    base = pe.EncoderJudge()
    assert isinstance(base, Judge)
    untrained = ComparativeReader(base, comparison_head(base.model.config.hidden_size, 16, 16), max_tokens=32)
    assert isinstance(untrained, Judge)
    orders = untrained.orders(CONTEXTS, REPLIES, [c for c, _ in OTHERS], [r for _, r in OTHERS])
    expected = base.prefer(base.relevance(CONTEXTS, REPLIES), base.relevance(*zip(*OTHERS)))
    assert orders[:, 0] == pytest.approx(expected, abs=1e-6) and orders[:, 1] == pytest.approx(expected, abs=1e-6)

    head = comparison_head(base.model.config.hidden_size, 16, 16)
    import torch

    with torch.no_grad():  # a head that favours whichever side is shown first: the reader must show it
        head.out[2].bias.fill_(1.0)
    biased = ComparativeReader(base, head, max_tokens=32)
    matrix = biased.pairwise_matrix(CONTEXTS, REPLIES, OTHERS)
    assert matrix.shape == (2, 2, 2)
    assert np.all(matrix[..., 0] > matrix[..., 1])  # P(target wins) shown first > shown second
    assert np.isnan(biased.pairwise_matrix(CONTEXTS, REPLIES, OTHERS, positions="first")[..., 1]).all()


@pytest.mark.slow
def test_reader_training_is_cached_by_its_training_fields_and_learns_the_pairs(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path))
    base = pe.EncoderJudge()
    pairs, validation = toy_pairs(32), toy_pairs(12)
    recipe = ReaderRecipe(width=16, hidden=16, max_tokens=32, epochs=3, batch_size=8, learning_rate=5e-3,
                          curve_points=2)
    first = train_comparative_reader(pairs, base, recipe, base_key="untrained", validation=validation, seed=1)
    assert not first.from_cache and len(first.curve) == 3 and len(first.losses) == 3 * (64 // 8)
    again = train_comparative_reader(pairs, base, recipe, base_key="untrained", validation=validation, seed=1)
    assert again.from_cache and again.key == first.key
    from dataclasses import replace

    logged = train_comparative_reader(pairs, base, replace(recipe, curve_points=3), base_key="untrained",
                                      validation=validation, seed=1)
    assert logged.from_cache and logged.key == first.key            # a logging choice does not retrain
    faster = train_comparative_reader(pairs, base, replace(recipe, learning_rate=1e-2), base_key="untrained",
                                      validation=validation, seed=1)
    assert not faster.from_cache and faster.key != first.key        # a training field does
    other_base = train_comparative_reader(pairs, base, recipe, base_key="another judge", validation=validation,
                                          seed=1)
    assert other_base.key != first.key
    reader = ComparativeReader.from_training(first, base)
    accuracy = pe.encoder.pair_accuracy(reader, validation)
    assert np.mean(accuracy) == pytest.approx(1.0)                  # the toy pairs are easy: it keeps them right
    assert first.losses[-1] < first.losses[0]


def test_scoring_never_asks_what_kind_of_judge_it_holds():
    import inspect

    from evalkit.paireval import analysis, scoring, table1

    for module in (scoring, analysis, table1):
        source = inspect.getsource(module)
        assert "hasattr" not in source and "isinstance(judge" not in source, module.__name__
    assert len(pe.__all__) <= 25  # what a chapter or a user starts from; the rest by module
