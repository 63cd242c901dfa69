"""The kit's encoder judge: its pairwise algebra, training that learns and is cached, and scoring through the
same functions as the LM judge."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from evalkit import paireval as pe
from evalkit.paireval import recipes as R

pytestmark = pytest.mark.slow  # loads the 22M-parameter encoder (a second on two cores)


@pytest.fixture(scope="module")
def judge():
    return pe.EncoderJudge()


def test_pairwise_matrix_has_no_position_bias_and_follows_relevance(judge):
    contexts = [["Where is the station?"], ["Do you like tea?"]]
    responses = ["Two blocks north, next to the bank.", "The station is two blocks north."]
    comparisons = [(["What time is it?"], "It is noon."), (["Can you help me?"], "Purple elephants sing.")]
    matrix = pe.pairwise_matrix(contexts, responses, comparisons, judge)
    assert matrix.shape == (2, 2, 2) and np.allclose(matrix[..., 0], matrix[..., 1])
    relevance = judge.relevance(contexts, responses)
    assert relevance[0] > relevance[1]  # the on-topic reply is more relevant than the off-topic one
    scores = pe.paireval_scores(contexts, responses, comparisons, judge)
    assert scores[0] > scores[1]
    first_only = pe.pairwise_matrix(contexts, responses, comparisons, judge, positions="first")
    assert np.isnan(first_only[..., 1]).all() and np.allclose(first_only[..., 0], matrix[..., 0])
    # comparing a reply with itself is a coin flip
    assert pe.compare_responses(contexts, responses, responses, judge) == pytest.approx([0.5, 0.5])


def test_embeddings_are_kept_in_the_store_and_reused_by_another_judge_of_the_same_model(tmp_path):
    from evalkit.upheld.metrics import MetricStore

    store = MetricStore(tmp_path / "metrics.sqlite")
    texts = ["A much longer reply that goes on about the weather for a while.", "Yes.", "Maybe tomorrow."]
    first = pe.EncoderJudge(store=store)
    vectors = first.embed(texts)
    alone = pe.EncoderJudge(store=None)  # no store: computed again, each text in a batch of its own (no padding)
    assert np.allclose(np.vstack([alone.embed([t]) for t in texts]), vectors, atol=1e-5)
    assert not alone.store and first.store is store

    second = pe.EncoderJudge(store=store)

    def no_model(**batch):
        raise AssertionError("embedded again although the store holds these texts")

    second.model = no_model
    assert np.array_equal(second.embed(texts), vectors)  # read back exactly, float32
    shorter = pe.EncoderJudge(store=store, max_tokens=4)  # another setting: another key, embedded anew
    assert not np.allclose(shorter.embed(texts[:1]), vectors[:1])


TOY_RECIPE = R.EncoderRecipe(batch_size=8, learning_rate=1e-4, curve_points=2, freeze_embeddings=False,
                              head_hidden=0)


def _toy_pairs(n: int, seed: int) -> pd.DataFrame:
    """Questions about colours answered with a colour (good) or with a number (bad): learnable."""
    rng = np.random.default_rng(seed)
    colours, numbers = ["red", "blue", "green", "yellow", "purple"], ["seven", "twelve", "forty", "nine"]
    rows = []
    for _ in range(n):
        good = ([f"Which colour is the {rng.choice(['car', 'door', 'hat'])}?"], f"It is {rng.choice(colours)}.")
        bad = ([f"Which colour is the {rng.choice(['cup', 'wall', 'bag'])}?"], f"It is {rng.choice(numbers)}.")
        a, b, better = (good, bad, "A") if rng.random() < 0.5 else (bad, good, "B")
        rows.append((a[0], a[1], b[0], b[1], better, "random"))
    return pd.DataFrame(rows, columns=["context_a", "response_a", "context_b", "response_b", "better", "negative"])


def test_training_learns_is_seeded_and_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "cache"))
    train, validation = _toy_pairs(64, 0), _toy_pairs(32, 1)
    recipe = TOY_RECIPE
    run = pe.train_encoder_judge(train, recipe, validation=validation)
    assert not run.from_cache and run.pairs == 64 and len(run.losses) == 8 and run.seconds > 0
    assert [point["pairs"] for point in run.curve] == [0, 32, 64]
    assert run.curve[-1]["accuracy"] >= 0.9  # a task this plain is learnt in one pass
    assert np.mean(run.losses[-2:]) < np.mean(run.losses[:2])
    again = pe.train_encoder_judge(train, recipe, validation=validation)
    assert again.from_cache and again.losses == run.losses and again.model_dir == run.model_dir
    trained = pe.EncoderJudge.from_training(run)
    assert np.mean(pe.encoder.pair_accuracy(trained, validation)) == pytest.approx(run.curve[-1]["accuracy"])
    direct = pe.train_encoder_judge(train, recipe, kind="direct")
    assert direct.model_dir != run.model_dir and direct.curve == []
    probabilities = pe.EncoderJudge.from_training(direct).direct([["Which colour is it?"]] * 2,
                                                                 ["It is red.", "It is forty."])
    assert probabilities[0] > probabilities[1] and ((0 < probabilities) & (probabilities < 1)).all()


def test_two_processes_asking_for_the_same_training_train_it_once(tmp_path):
    """A grid's two workers on one cache: the second waits for the first's run and reuses it."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    code = ("from tests.paireval.test_encoder_judge import _toy_pairs, TOY_RECIPE\n"
            "from evalkit import paireval as pe\n"
            "run = pe.train_encoder_judge(_toy_pairs(64, 0), TOY_RECIPE)\n"
            "print(run.from_cache, run.losses[-1], run.model_dir)")
    env = {**os.environ, "EVALKIT_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(root)}
    workers = [subprocess.Popen([sys.executable, "-c", code], cwd=root, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True) for _ in range(2)]
    said = [worker.communicate(timeout=300) for worker in workers]
    assert all(worker.returncode == 0 for worker in workers), [err[-2000:] for _, err in said]
    runs = sorted(out.split()[:3] for out, _ in said)
    assert [run[0] for run in runs] == ["False", "True"]  # one trained, the other found its record
    assert runs[0][1:] == runs[1][1:]  # the same last loss, the same folder


def test_a_recipe_field_reaches_training_through_the_recipe_and_a_logging_choice_does_not(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "cache"))
    train = _toy_pairs(16, 0)
    first = pe.train_encoder_judge(train, TOY_RECIPE)
    faster = pe.train_encoder_judge(train, replace(TOY_RECIPE, learning_rate=3e-4))
    logged = pe.train_encoder_judge(train, replace(TOY_RECIPE, curve_points=5))
    assert faster.model_dir != first.model_dir and not faster.from_cache
    assert faster.losses != first.losses  # the learning rate was used, not only hashed
    assert logged.model_dir == first.model_dir and logged.from_cache
    folders = sorted(p.name for p in (tmp_path / "cache" / "encoder-judges").iterdir() if p.is_dir())
    assert len(folders) == 2


def test_training_refuses_too_few_pairs():
    with pytest.raises(ValueError, match="less than one batch"):
        pe.train_encoder_judge(_toy_pairs(3, 0), TOY_RECIPE)


def _copy_pairs(n: int, seed: int) -> pd.DataFrame:
    """Same-conversation pairs: a question answered (good) against the question repeated back (bad)."""
    rng = np.random.default_rng(seed)
    things, colours = ["car", "door", "hat", "cup", "wall", "bag", "kite", "boat"], ["red", "blue", "green", "grey"]
    rows = []
    for _ in range(n):
        question = f"Which colour is the {rng.choice(things)} you bought?"
        good, bad = ([question], f"It is {rng.choice(colours)}."), ([question], question)
        a, b, better = (good, bad, "A") if rng.random() < 0.5 else (bad, good, "B")
        rows.append((a[0], a[1], b[0], b[1], better, "copy"))
    return pd.DataFrame(rows, columns=["context_a", "response_a", "context_b", "response_b", "better", "negative"])


def test_a_relevance_head_learns_what_a_cosine_cannot_and_is_saved_with_the_judge(tmp_path, monkeypatch, judge):
    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "cache"))
    train, held_out = _copy_pairs(96, 0), _copy_pairs(32, 1)
    assert np.mean(pe.encoder.pair_accuracy(judge, held_out)) == 0.0  # the cosine prefers the copy, every time
    run = pe.train_encoder_judge(train, replace(TOY_RECIPE, learning_rate=5e-4, head_hidden=16, curve_points=1),
                                 validation=held_out)
    assert run.config["recipe"]["head_hidden"] == 16 and run.curve[-1]["accuracy"] >= 0.9
    trained = pe.EncoderJudge.from_training(run)
    assert trained.head is not None
    assert np.mean(pe.encoder.pair_accuracy(trained, held_out)) == pytest.approx(run.curve[-1]["accuracy"])
    plain = pe.train_encoder_judge(train, replace(TOY_RECIPE, learning_rate=5e-4, curve_points=1),
                                   validation=held_out)
    assert plain.config["recipe"]["head_hidden"] == 0 and pe.EncoderJudge.from_training(plain).head is None




def test_training_goes_on_from_a_trained_judge_with_its_head_scale_and_bias(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "cache"))
    recipe = replace(TOY_RECIPE, learning_rate=5e-4, head_hidden=16, curve_points=1)
    train, held_out = _copy_pairs(96, 0), _copy_pairs(32, 1)
    first = pe.train_encoder_judge(train, recipe, validation=held_out)
    assert pe.encoder.continued_from(first.model_dir)["key"] == first.key
    # at step 0 the continued run is the first judge: its curve starts where the first one ended
    more = pe.train_encoder_judge(_toy_pairs(16, 2), replace(recipe, learning_rate=1e-12), validation=held_out,
                                  model=first.model_dir)
    assert more.config["continues"] == first.key and more.model_dir != first.model_dir
    assert more.curve[0]["accuracy"] == pytest.approx(first.curve[-1]["accuracy"])
    assert more.scale == pytest.approx(first.scale, abs=1e-6)
    from evalkit.encoders import default_encoder_path

    assert pe.encoder.continued_from(default_encoder_path()) is None  # a plain backbone
    with pytest.raises(ValueError, match="relevance head of width 16"):
        pe.train_encoder_judge(_toy_pairs(16, 2), replace(recipe, head_hidden=0), model=first.model_dir)


def test_a_cache_where_no_lock_can_be_made_is_still_read(tmp_path):
    """A cache no lock file can be written in (shared read-only, as a class's sandboxed runs see it): the run is
    read or trained without a lock, not refused."""
    from evalkit.encoders import training_lock

    (tmp_path / "not-a-folder").write_text("a file where the cache's folder would be")
    entered = []
    with training_lock(tmp_path / "not-a-folder" / "run-key"):
        entered.append(True)
    assert entered == [True] and not (tmp_path / "run-key.lock").exists()
