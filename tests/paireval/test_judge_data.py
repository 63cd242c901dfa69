"""The paper's meta-evaluation sets, leak-free judge data (the leakage test), and the shared statistics."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from evalkit import stats

from evalkit import cli
from evalkit.paireval import metaeval
from evalkit.paireval.training_data import _ddpp_conversations, judge_data, validation_pairs
from evalkit.paireval.training_data import recipe_frame as _pairs
from evalkit.paireval.recipes import RECIPES
from evalkit.paireval.schema import MetaEvalFormatError
from evalkit.paireval.splits import held_out_units, leaked_units, remove_held_out


# --------------------------------------------------------------------------- meta-evaluation sets

EXPECTED = {"dailydialog-grade": (300, True), "convai2-grade": (600, True), "dailydialog-zhao": (900, False),
            "personachat-usr": (300, True), "topicalchat-usr": (360, True), "fed": (375, False)}


def test_the_six_sets_load_with_their_sizes_and_references(real_data_dir):
    for name, (items, has_reference) in EXPECTED.items():
        loaded = metaeval.load_meta_eval_set(name, data_dir=real_data_dir)
        frame = loaded.items
        assert len(frame) == items == loaded.report.items_kept, name
        assert frame["reference"].notna().all() if has_reference else frame["reference"].isna().all()
        assert frame["context"].map(len).min() >= 1 and frame["response"].str.len().min() > 0
        assert frame["response"].map(lambda t: t == t.strip()).all()
        assert frame["item_id"].is_unique


def test_fed_text_ratings_are_counted_not_coerced(real_data_dir):
    fed = metaeval.load_meta_eval_set("fed", data_dir=real_data_dir)
    assert len(fed.report.ratings_dropped) == 12  # SOURCES.md: a few free-text "N/A (...)" ratings
    assert all(raw.startswith("N/A") for *_, raw in fed.report.ratings_dropped)
    assert fed.items["score"].between(0, 4).all()  # FED's Overall is 0-4
    assert not fed.items["response"].str.startswith(("System:", "User:")).any()
    summary = fed.report.summary().set_index("what")["count"]
    assert summary["ratings given as text, dropped (any aspect)"] == 12


def _usr_file(tmp_path, responses):
    root = tmp_path / "metaeval" / "usr"
    root.mkdir(parents=True)
    (root / "readme.md").write_text("x")
    (root / "usr_percona_chat.json").write_text(json.dumps([{"context": "hi\nhello ", "responses": responses}]))
    (root / "usr_topical_chat.json").write_text("[]")
    return tmp_path


def test_usr_item_without_numeric_rating_is_dropped_and_counted(tmp_path):
    data = _usr_file(tmp_path, [{"response": "fine ", "model": "Original Ground Truth", "Overall": [4, 5, 3]},
                                {"response": "what", "model": "Seq2Seq", "Overall": ["N/A", "?", "-"]}])
    with pytest.raises(Exception, match="sha256"):  # a modified copy is refused unless asked for knowingly
        metaeval.load_meta_eval_set("convai2-usr", data_dir=data)
    loaded = metaeval.load_meta_eval_set("convai2-usr", data_dir=data, verify=False)  # the paper's name is accepted
    assert loaded.items["response"].tolist() == ["fine"] and loaded.items["score"].tolist() == [4.0]
    assert loaded.items["reference"].tolist() == ["fine"] and loaded.items["context"][0] == ["hi", "hello"]
    assert loaded.report.items_dropped == {"no numeric Overall rating": 1} and len(loaded.report.ratings_dropped) == 3
    assert loaded.report.whitespace_stripped == 3  # "hello ", "fine " (response and reference)


def test_a_broken_set_names_file_and_item(tmp_path):
    data = _usr_file(tmp_path, [{"model": "Seq2Seq", "Overall": [1]}])
    with pytest.raises(MetaEvalFormatError, match=r"usr_percona_chat.json, context 0, system 'Seq2Seq', field 'response'"):
        metaeval.load_meta_eval_set("personachat-usr", data_dir=data, verify=False)
    with pytest.raises(KeyError, match="known: dailydialog-grade"):
        metaeval.load_meta_eval_set("nope", data_dir=data)


def test_grade_files_of_unequal_length_are_refused(tmp_path, real_data_dir):
    import shutil

    root = tmp_path / "metaeval" / "grade"
    shutil.copytree(real_data_dir / "metaeval" / "grade", root)
    score = root / "evaluation/human_score/dailydialog/transformer_ranker/human_score.txt"
    score.write_text("\n".join(score.read_text().splitlines()[:-1]) + "\n")
    from evalkit.paireval.metaeval import _read_grade

    with pytest.raises(MetaEvalFormatError, match="unequal length"):
        _read_grade(root, "dailydialog", metaeval.MetaEvalLoadReport("x"))


def test_cli_meta_eval_on_a_named_set_with_a_length_baseline(real_data_dir, capsys):
    assert cli.main(["paireval", "meta-eval", "--dataset", "fed", "--method", "length"]) == 0
    out = capsys.readouterr().out
    assert "fed (length vs score)" in out and "n = 375" in out


# --------------------------------------------------------------------------- leakage

def test_remove_held_out_counts_by_source():
    train = [["Hello there .", "Hi , how are you ?"], ["What a lovely day it is today in the city", "yes"],
             ["ok", "fine"]]
    held = {"test": [["hello there", "hi how are you"]],
            "other": [["we said: what a lovely day it is today in the city!"]]}
    kept, report = remove_held_out(train, held)  # a long utterance counts only when it is the same utterance
    assert kept == train[1:] and report.removed_by == {"test": 1, "other": 0} and report.removed == 1
    held["other"] = [["What a lovely day it is, today in the city!"]]
    kept, report = remove_held_out(train, held)
    assert kept == [["ok", "fine"]] and report.removed_by == {"test": 1, "other": 1} and report.removed == 2


def test_no_held_out_text_reaches_training(real_data_dir):
    """The leakage test: the training conversations of both recipes' judges (dialogues and the DailyDialog++
    records whose adversarial replies they use) share no held-out unit with any evaluation or selection set —
    and the raw, uncut data would fail this very check."""
    data = judge_data(seed=RECIPES["book"].seed, data_dir=real_data_dir)
    training = data.train + _ddpp_conversations(data.hard_train, replies=("adversarial_negative_responses",))
    for source, conversations in data.held_out.items():
        assert not leaked_units(training, conversations), source
    # the pairs actually built for training hold only training text
    pairs = _pairs(data, RECIPES["book"].encoder.pairs, RECIPES["book"].encoder.hard_share, 13)
    sides = [list(c) + [r] for c, r in zip(pairs["context_a"], pairs["response_a"])]
    sides += [list(c) + [r] for c, r in zip(pairs["context_b"], pairs["response_b"])]
    everything_held = set().union(*(held_out_units(v) for v in data.held_out.values()))
    assert not (held_out_units(sides) & everything_held)
    validation = validation_pairs(data, 200, 0.5, 13)
    assert not (held_out_units([list(c) + [r] for c, r in zip(validation["context_a"], validation["response_a"])])
                & held_out_units(data.held_out["DailyDialog test"]))
    from evalkit.paireval.data import load_dailydialog

    raw_train = load_dailydialog("train", data_dir=real_data_dir)
    assert len(leaked_units(raw_train, data.held_out["DailyDialog test"])) > 100  # the check has teeth
    assert data.train_report.removed_by["DailyDialog test"] >= 150  # the 150 test dialogues repeated in train
    assert data.corpus == "DailyDialog"


# --------------------------------------------------------------------------- statistics

def test_wilson_interval_matches_a_worked_case():
    result = stats.proportion([1] * 17 + [0] * 3)
    assert (result.successes, result.n) == (17, 20)
    assert result.low == pytest.approx(0.6396, abs=1e-3) and result.high == pytest.approx(0.9476, abs=1e-3)
    assert np.isnan(stats.proportion([]).value)
    assert stats.proportion([1, 0, np.nan]).n == 2  # abstentions are not outcomes


def test_correlation_with_humans_interval_covers_the_estimate_and_counts_missing():
    rng = np.random.default_rng(0)
    human = rng.normal(size=200)
    metric = human + rng.normal(size=200)
    metric[:5] = np.nan
    result = stats.correlation_with_humans(metric, human, bootstrap=500)
    assert result.n == 195 and result.missing == 5
    assert result.pearson_low < result.pearson < result.pearson_high
    assert 0.55 < result.pearson < 0.85 and result.pearson_p < 1e-10
    with pytest.raises(ValueError, match="at least 3"):
        stats.correlation_with_humans([1, 2], [1, 2])


def test_topical_chat_reader_joins_a_partners_messages_and_names_a_bad_record(tmp_path):
    from evalkit.paireval.data import read_topical_chat

    good = {"t_1": {"content": [{"message": "Do you like  jazz?", "agent": "agent_1"},
                                {"message": "I do.", "agent": "agent_2"}, {"message": "Miles Davis!", "agent": "agent_2"},
                                {"message": " ", "agent": "agent_1"}]},
            "t_2": {"content": [{"message": "alone", "agent": "agent_1"}]}}
    path = tmp_path / "valid_freq.json"
    path.write_text(json.dumps(good))
    assert read_topical_chat(path) == [["Do you like jazz?", "I do. Miles Davis!"]]  # t_2 has one turn only
    path.write_text(json.dumps({**good, "t_3": {"content": [{"text": "no message field"}]}}))
    with pytest.raises(ValueError, match=r"valid_freq.json: conversation 't_3': field 'content\[0\]'"):
        read_topical_chat(path)


def test_staged_topical_chat_matches_its_pins(real_data_dir):
    from evalkit.paireval.data import load_topical_chat

    dialogues = load_topical_chat("valid_freq", data_dir=real_data_dir)
    assert len(dialogues) == 539 and min(len(d) for d in dialogues) >= 2


def test_second_corpus_keeps_every_held_out_text_out_of_training(real_data_dir):
    from evalkit.paireval.training_data import second_corpus

    corpus = second_corpus(seed=13, data_dir=real_data_dir)
    assert len(corpus.train) > 300 and len(corpus.selection) > 50  # half of it is in UPHELD's check set
    assert set(corpus.held_out) >= {"topicalchat-usr", "personachat-usr", "fed", "UPHELD Topical-Chat check set",
                                    "Topical-Chat test", "Topical-Chat selection part"}
    held = [c for conversations in corpus.held_out.values() for c in conversations]
    assert leaked_units(corpus.train, held) == set()
    tests_only = [c for name, conversations in corpus.held_out.items() if name != "Topical-Chat selection part"
                  for c in conversations]
    assert leaked_units(corpus.selection, tests_only) == set()


def test_spearman_difference_ignores_monotone_transforms_and_pairs_the_resamples():
    rng = np.random.default_rng(3)
    human = rng.normal(size=200)
    good, poor = human + 0.5 * rng.normal(size=200), human + 2 * rng.normal(size=200)
    plain = stats.correlation_difference(good, poor, human, bootstrap=300, kind="spearman")
    warped = stats.correlation_difference(np.exp(3 * good), poor, human, bootstrap=300, kind="spearman")
    assert plain.difference == pytest.approx(warped.difference) and plain.clear and plain.low > 0
    assert (plain.low, plain.high) == pytest.approx((warped.low, warped.high))
    pearson = stats.correlation_difference(np.exp(3 * good), poor, human, bootstrap=300)
    assert pearson.difference < plain.difference  # the warp hurts Pearson, not Spearman
    same = stats.correlation_difference(good, good, human, bootstrap=100, kind="spearman")
    assert same.difference == 0 and same.low == same.high == 0 and not same.clear
    with pytest.raises(ValueError, match="kind"):
        stats.correlation_difference(good, poor, human, kind="kendall")


def test_recipe_pairs_mix_in_the_second_corpus_only_when_asked(real_data_dir):
    from dataclasses import replace

    from evalkit.paireval.training_data import recipe_pairs, second_corpus

    recipe = RECIPES["smoke"]
    data = judge_data(seed=recipe.seed, data_dir=real_data_dir)
    plain = recipe_pairs(recipe, data, hard_share=0.5, data_dir=real_data_dir)
    copies = recipe.encoder.copy_share
    assert plain.equals(_pairs(data, recipe.encoder.pairs, 0.5, recipe.seed, copy_share=copies))
    mixed = recipe_pairs(replace(recipe, encoder=replace(recipe.encoder, second_corpus_share=0.25)), data,
                         hard_share=0.5, data_dir=real_data_dir)
    assert len(mixed) == len(plain) and mixed.iloc[:48].equals(_pairs(data, 48, 0.5, recipe.seed,
                                                                      copy_share=copies))
    topical = {turn for dialogue in second_corpus(seed=recipe.seed, data_dir=real_data_dir).train for turn in dialogue}
    tail = mixed.iloc[48:]  # the second corpus's pairs have random negatives only
    assert (tail["negative"] == "random").all()
    assert all(r in topical for r in tail["response_a"]) and all(r in topical for r in tail["response_b"])


def test_directeval_trains_with_its_own_copy_share(real_data_dir, monkeypatch):
    from evalkit.paireval import encoder

    seen = {}

    def capture(pairs, recipe, *, kind="pairwise", **settings):
        seen[kind] = pairs
        return kind

    monkeypatch.setattr(encoder, "train_encoder_judge", capture)
    recipe = RECIPES["smoke"]
    assert recipe.encoder.copy_share > 0 and recipe.encoder.direct_copy_share == 0
    data = judge_data(seed=recipe.seed, data_dir=real_data_dir)
    from evalkit import paireval as pe

    assert pe.train_judge(recipe, kind="pairwise", data=data) == "pairwise"
    assert pe.train_judge(recipe, kind="direct", data=data) == "direct"
    assert (seen["pairwise"]["negative"] == "copy").any()
    assert not (seen["direct"]["negative"] == "copy").any() and len(seen["direct"]) == len(seen["pairwise"])
