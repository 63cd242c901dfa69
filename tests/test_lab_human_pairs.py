"""Training pairs from people's scores (the lab's experiments/_human_pairs.py): dev halves only, the margin, the mix of
same- and cross-context pairs, and no test-half text in them."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import sys
from pathlib import Path

from evalkit.stats.halves import DevHalf, TestHalf, split_meta_eval
from evalkit.paireval.scoring import good_and_bad_sides
from evalkit.paireval.splits import leaked_units

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "experiments"))
from _human_pairs import human_preference_pairs  # noqa: E402  (the lab's module, beside its scripts)


def toy_set(contexts: int = 6, replies: int = 4) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = []
    for c in range(contexts):
        for r in range(replies):
            rows.append({"context": [f"opening line number {c} of a conversation about topic {c}",
                                     f"a second turn in conversation {c} that asks a question"],
                         "response": f"reply {r} to conversation {c} " + "word " * r,
                         "score": float(rng.integers(1, 6))})
    return pd.DataFrame(rows)


def test_the_better_side_is_the_one_people_scored_higher_by_the_margin():
    items = toy_set()
    pairs = human_preference_pairs({"toy": DevHalf("toy", items)}, per_set=30, margin_sd=0.5).pairs
    score = {(tuple(c), r): s for c, r, s in zip(items["context"], items["response"], items["score"])}
    good_c, good_r, bad_c, bad_r = good_and_bad_sides(pairs)
    gaps = [score[tuple(gc), gr] - score[tuple(bc), br] for gc, gr, bc, br in zip(good_c, good_r, bad_c, bad_r)]
    assert len(pairs) == 30 and min(gaps) >= 0.5 * items["score"].std(ddof=1) and min(gaps) > 0
    assert np.allclose(gaps, pairs["gap"])
    assert pairs["same_context"].sum() == 15  # half from replies to one context, as asked
    assert (pairs["same_context"] == [a == b for a, b in zip(pairs["context_a"], pairs["context_b"])]).all()
    assert 0.2 < (pairs["better"] == "A").mean() < 0.8  # the better side's slot is drawn, not fixed


def test_a_set_with_one_reply_per_context_gives_cross_context_pairs_only():
    items = toy_set(contexts=12, replies=1)
    pairs = human_preference_pairs({"fed-like": DevHalf("fed-like", items)}, per_set=10).pairs
    assert len(pairs) == 10 and not pairs["same_context"].any()


def test_same_seed_same_pairs_and_a_test_half_is_refused():
    half = DevHalf("toy", toy_set())
    first = human_preference_pairs({"toy": half}, per_set=12, seed=3).pairs
    pd.testing.assert_frame_equal(first, human_preference_pairs({"toy": half}, per_set=12, seed=3).pairs)
    with pytest.raises(TypeError, match="got the test half of 'toy'"):
        human_preference_pairs({"toy": TestHalf("toy", toy_set())}, per_set=5)
    with pytest.raises(TypeError, match="takes a dev half"):
        human_preference_pairs({"toy": toy_set()}, per_set=5)


def test_items_sharing_text_with_held_out_conversations_are_cut_and_counted():
    items = toy_set()
    held = [[*items["context"][0], items["response"][0]]]  # one test conversation = the first context's first reply
    made = human_preference_pairs({"toy": DevHalf("toy", items)}, per_set=200, held_out=held)
    assert made.dropped == {"toy": 4}  # the four replies to that context share its pair of opening turns
    training = [[*c, r] for side in ("a", "b") for c, r in zip(made.pairs[f"context_{side}"],
                                                               made.pairs[f"response_{side}"])]
    assert leaked_units(training, held) == set() and len(made.pairs) > 0


@pytest.mark.slow
def test_no_text_of_a_test_half_reaches_the_pairs(real_data_dir):
    """On the staged sets a dev reply can match test text (within a set, and across sets of one corpus): with
    every test half held out, none of it is in the pairs."""
    from evalkit.paireval.metaeval import load_meta_eval_set, meta_eval_set_names

    dev, tests = {}, []
    for name in meta_eval_set_names():
        d, t = split_meta_eval(load_meta_eval_set(name, data_dir=real_data_dir).items, name)
        dev[name] = d
        tests.extend([*c, r] for c, r in zip(t.items["context"], t.items["response"]))
    unguarded = human_preference_pairs(dev, per_set=200).pairs
    sides = lambda pairs: [[*c, r] for side in ("a", "b")  # noqa: E731
                           for c, r in zip(pairs[f"context_{side}"], pairs[f"response_{side}"])]
    assert leaked_units(sides(unguarded), tests)  # the cut below has something to cut
    made = human_preference_pairs(dev, per_set=200, held_out=tests)
    assert set(made.pairs["set"]) == set(dev) and len(made.pairs) > 900 and sum(made.dropped.values()) > 0
    assert leaked_units(sides(made.pairs), tests) == set()
