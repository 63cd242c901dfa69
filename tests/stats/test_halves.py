"""Dev/test halves of the human-scored sets: disjoint by group and by text, stable, and dev-only selection."""
from __future__ import annotations

import inspect

import numpy as np
import pandas as pd
import pytest

from evalkit.stats import halves as hv
from evalkit.data.overlap import normalise
from evalkit.stats.selection import choose_on_dev, on_half


@pytest.fixture(scope="module")
def every_set():
    return hv.human_scored_halves()


def _conversation_texts(name: str, items: pd.DataFrame) -> list[list[str]]:
    if name.startswith("mirrorbench"):
        column = "real_conversation" if "real_conversation" in items else None
        if column:
            return [hv._user_turns(c) for c in items[column]]
        return [hv._user_turns(b if slot == "A" else a) for a, b, slot in
                zip(items["conversation_a"], items["conversation_b"], items["ground_truth_synthetic_slot"])]
    if name.startswith("upheld"):
        return [hv._turn_texts(h) + [r] for h, r in zip(items["history"], items["reference"])]
    return [list(c) for c in items["context"]]


def test_every_human_scored_set_is_split_into_two_nonempty_halves(every_set):
    assert set(every_set) >= {"dailydialog-grade", "convai2-grade", "dailydialog-zhao", "personachat-usr",
                              "topicalchat-usr", "fed", "upheld-main", "upheld-llm_arena", "upheld-topical_chat",
                              "mirrorbench-gteval", "mirrorbench-pi"}
    for name, (dev, test) in every_set.items():
        assert isinstance(dev, hv.DevHalf) and isinstance(test, hv.TestHalf)
        assert len(dev) and len(test), name
        assert 0.25 < len(dev) / (len(dev) + len(test)) < 0.75, name  # neither half starves


def test_no_context_conversation_or_distinctive_text_is_in_both_halves(every_set):
    for name, (dev, test) in every_set.items():
        assert not set(dev.items["group"]) & set(test.items["group"]), name
        if "item_id" in dev.items:
            assert not set(dev.items["item_id"]) & set(test.items["item_id"]), name
        if "conversation_id" in dev.items:
            assert not set(dev.items["conversation_id"]) & set(test.items["conversation_id"]), name
        dev_texts, test_texts = (_conversation_texts(name, h.items) for h in (dev, test))
        assert not ({normalise(" ".join(t)) for t in dev_texts} & {normalise(" ".join(t)) for t in test_texts}), name
        shared = (set().union(*map(hv._distinctive_units, dev_texts))
                  & set().union(*map(hv._distinctive_units, test_texts)))
        assert not shared, (name, sorted(shared)[:3])


def test_mirrorbench_conversations_keep_one_half_across_both_tables(every_set):
    gteval_dev, gteval_test = every_set["mirrorbench-gteval"]
    pi_dev, pi_test = every_set["mirrorbench-pi"]
    dev_texts = {normalise(" ".join(t)) for t in _conversation_texts("mirrorbench", gteval_dev.items)
                 + _conversation_texts("mirrorbench", pi_dev.items)}
    test_texts = {normalise(" ".join(t)) for t in _conversation_texts("mirrorbench", gteval_test.items)
                  + _conversation_texts("mirrorbench", pi_test.items)}
    assert not dev_texts & test_texts


def test_halves_are_a_function_of_content_not_of_row_order_or_other_items():
    items = hv.meta_eval_halves("topicalchat-usr")
    whole = pd.concat([items[0].items, items[1].items]).drop(columns="group")
    shuffled = whole.sample(frac=1.0, random_state=3)
    dev, _ = hv.split_meta_eval(shuffled, "topicalchat-usr")
    assert sorted(dev.items["item_id"]) == sorted(items[0].items["item_id"])
    extra = pd.DataFrame([{**whole.iloc[0].to_dict(), "context": ["an unrelated context of many words said once"],
                           "item_id": "extra:0"}])
    dev_more, test_more = hv.split_meta_eval(pd.concat([whole, extra]), "topicalchat-usr")
    assert sorted(set(dev_more.items["item_id"]) - {"extra:0"}) == sorted(items[0].items["item_id"])
    other_seed, _ = hv.split_meta_eval(whole, "topicalchat-usr", seed="another seed")
    assert sorted(other_seed.items["item_id"]) != sorted(items[0].items["item_id"])  # the seed matters


def test_fed_greetings_do_not_join_unrelated_conversations():
    dev, test = hv.meta_eval_halves("fed")
    largest = max(dev.items["group"].value_counts().max(), test.items["group"].value_counts().max())
    assert largest < 30  # "hi" / "hi there" opens ~110 FED contexts; as a unit it would make one giant group


def test_a_sample_of_a_dev_half_is_still_dev():
    dev, test = hv.meta_eval_halves("dailydialog-grade")
    assert isinstance(dev.sample(10, seed=0), hv.DevHalf) and len(dev.sample(10, seed=0)) == 10
    assert isinstance(test.sample(10, seed=0), hv.TestHalf)


def _toy(n=120, seed=0):
    rng = np.random.default_rng(seed)
    human = rng.normal(size=n)
    frame = pd.DataFrame({"item_id": [f"t:{i}" for i in range(n)], "score": human,
                          "context": [[f"context number {i} with enough words to be distinct"] for i in range(n)]})
    return frame, human, rng


def test_selection_refuses_a_test_half_and_a_plain_frame():
    frame, human, rng = _toy()
    dev, test = hv.split_meta_eval(frame, "toy")
    scores = {("a", "toy"): rng.normal(size=len(frame)), ("b", "toy"): human}
    with pytest.raises(TypeError, match="test half"):
        choose_on_dev({"toy": test}, scores, ["a", "b"], question="?", item_ids={"toy": frame["item_id"]})
    with pytest.raises(TypeError, match="dev half"):
        choose_on_dev({"toy": frame}, scores, ["a", "b"], question="?", item_ids={"toy": frame["item_id"]})
    decision = choose_on_dev({"toy": dev}, scores, ["a", "b"], question="?", item_ids={"toy": frame["item_id"]},
                             bootstrap=200)
    assert decision.choice == "b" and decision.dev["n"].tolist() == [len(dev)] * 2
    # the dev correlations are computed on dev items only
    expected = np.corrcoef(on_half(human, frame["item_id"], dev), dev.items["score"])[0, 1]
    assert decision.dev.set_index("candidate").loc["b", "pearson"] == pytest.approx(expected)
    assert "dev" in inspect.signature(choose_on_dev).parameters


def test_a_gain_inside_the_sampling_error_keeps_the_cheaper_candidate():
    frame, human, rng = _toy(60, seed=4)
    dev, _ = hv.split_meta_eval(frame, "toy")
    noisy = human + 2.0 * rng.normal(size=len(frame))
    almost = noisy + 0.05 * rng.normal(size=len(frame))
    decision = choose_on_dev({"toy": dev}, {("cheap", "toy"): noisy, ("costly", "toy"): almost},
                             ["cheap", "costly"], question="?", item_ids={"toy": frame["item_id"]}, bootstrap=300)
    gap = decision.challenges["costly"]
    assert gap.low <= 0 <= gap.high and decision.choice == "cheap"
    assert "did not clear it" in decision.sentence()
    record = decision.as_record()
    assert record["choice"] == "cheap" and record["challenges"]["costly"]["against"] == "cheap"


def test_unscored_items_of_a_half_are_an_error():
    frame, human, _ = _toy(30)
    dev, _ = hv.split_meta_eval(frame, "toy")
    with pytest.raises(KeyError, match="not scored"):
        on_half(human[:5], frame["item_id"][:5], dev)
