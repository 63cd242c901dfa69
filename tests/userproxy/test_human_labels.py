"""Chapter 5's realism judges against MirrorBench's human labels: halves, reference scores, the dev-only choice."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalkit.stats.halves import DevHalf, TestHalf
from evalkit.userproxy import human_labels


def test_labelled_halves_are_disjoint_and_carry_their_half(real_data_dir):
    from evalkit.userproxy.data import load_human_labels

    labels = load_human_labels(data_dir=real_data_dir)
    dev = human_labels.human_label_items(labels, None, half="dev")
    test = human_labels.human_label_items(labels, None, half="test")
    assert isinstance(dev["halves"]["gteval"], DevHalf) and isinstance(test["halves"]["pi"], TestHalf)
    for metric in ("gteval", "pi"):
        assert len(dev[metric]) + len(test[metric]) == len(labels[metric])
        assert not set(dev["halves"][metric].items["group"]) & set(test["halves"][metric].items["group"])
        assert set(dev[metric]["sample_id"]).isdisjoint(test[metric]["sample_id"])
    # the proxy's win by the human label, in the PI items' order, as the half carries it for the choice
    assert np.array_equal(dev["pi_human"], dev["halves"]["pi"].items["proxy_win"].to_numpy())
    assert set(np.unique(dev["pi_human"])) <= {0.0, 0.5, 1.0}
    few = human_labels.human_label_items(labels, 5, seed=3, half="dev")
    assert len(few["gteval"]) == len(few["halves"]["gteval"]) == 5
    assert set(few["gteval"]["sample_id"]) <= set(dev["gteval"]["sample_id"])


def _conversation(user: str) -> list[dict]:
    return [{"role": "user", "content": user}, {"role": "assistant", "content": "sure, here you go"},
            {"role": "user", "content": "thanks a lot"}]


def test_reference_scores_read_the_real_user_as_the_reference():
    from evalkit.upheld.metrics import ReferenceMetrics

    items = {"gteval_pairs": [(_conversation("need bus times for monday"), _conversation("need bus times for monday")),
                              (_conversation("need bus times for monday"), _conversation("write me a sonnet"))]}
    scores = human_labels.reference_scores(items, ReferenceMetrics(), user_turns=2)
    assert list(scores) == list(human_labels.REFERENCE_METRICS)
    for name, values in scores.items():
        assert set(values) == {"gteval"} and values["gteval"].shape == (2,), name  # no PI score: no reference there
        assert values["gteval"][0] == pytest.approx(1.0, abs=1e-4) and values["gteval"][1] < values["gteval"][0]
    # a judge that scores GTEval only enters the agreement table and the differences for GTEval only
    human = {"gteval": pd.DataFrame({"human_label": [0.9, 0.1, 0.5], "judge_score": [0.8, 0.2, 0.4]}),
             "pi": pd.DataFrame({"judge_score": [0.2, 0.7, 0.5]}), "pi_human": np.array([0.0, 1.0, 0.5])}
    scored = {"overlap": {"gteval": np.array([1.0, 0.0, 0.4])},
              "length": {"gteval": np.array([0.5, 0.6, 0.7]), "pi": np.array([0.4, 0.6, 0.5])}}
    table = human_labels.human_label_agreement(human, {}, scored=scored, bootstrap=0)
    assert "GTEval, overlap" in table.index and "PI, overlap" not in table.index
    differences = human_labels.human_label_differences(human, scored, "overlap", ["length"], bootstrap=20)
    assert list(differences.index) == [("GTEval", "length")]


def test_the_choice_takes_the_dev_half_only():
    rng = np.random.default_rng(0)
    label = rng.normal(size=80)
    frame = pd.DataFrame({"human_label": label, "proxy_win": (label > 0).astype(float), "group": range(80)})
    scores = {"length": {"gteval": rng.normal(size=80), "pi": rng.normal(size=80)},
              "close": {"gteval": label + rng.normal(size=80) / 3, "pi": label + rng.normal(size=80) / 3}}
    candidates = {"gteval": ["length", "close"], "pi": ["length", "close"]}
    dev = {"halves": {"gteval": DevHalf("mirrorbench-gteval", frame), "pi": DevHalf("mirrorbench-pi", frame)}}
    chosen = human_labels.choose_realism_judges(dev, lambda items: scores, candidates, bootstrap=200)
    assert {m: d.choice for m, d in chosen.items()} == {"gteval": "close", "pi": "close"}
    assert chosen["gteval"].kind == "spearman" and "Spearman ρ" in chosen["gteval"].sentence()
    test = {"halves": {"gteval": TestHalf("mirrorbench-gteval", frame), "pi": TestHalf("mirrorbench-pi", frame)}}
    with pytest.raises(TypeError, match="test half"):
        human_labels.choose_realism_judges(test, lambda items: scores, candidates, bootstrap=50)
    with pytest.raises(ValueError, match="half='dev'"):
        human_labels.choose_realism_judges({"halves": {}}, lambda items: scores, candidates, bootstrap=50)
    with pytest.raises(ValueError, match="not \\['rnr'\\]"):
        human_labels.choose_realism_judges(dev, lambda items: scores, {"rnr": ["length"]}, bootstrap=50)
    with pytest.raises(KeyError, match="no PI scores of \\['gteval only'\\]"):
        human_labels.choose_realism_judges(dev, lambda items: {**scores, "gteval only": {"gteval": label}},
                                           {"pi": ["length", "gteval only"]}, bootstrap=50)


def test_adapted_realism_fits_on_dev_labels_and_its_zero_point_is_the_chosen_judge():
    import numpy as np
    import pandas as pd

    from evalkit.stats.halves import DevHalf, TestHalf
    from evalkit.stats import correlation
    from evalkit.userproxy.human_labels import adapted_realism

    rng = np.random.default_rng(5)

    def half(kind, n=50):
        signal = rng.normal(size=n)
        frame = pd.DataFrame({"human_label": np.round(2 + signal + rng.normal(scale=0.3, size=n)),
                              "proxy_win": (signal > 0).astype(float), "group": np.arange(n) // 2})
        scores = {"length baseline": {"gteval": rng.normal(size=n), "pi": rng.normal(size=n)},
                  "trained encoder": {"gteval": signal + rng.normal(size=n), "pi": signal + rng.normal(size=n)}}
        halves = {m: (DevHalf if kind == "dev" else TestHalf)(m, frame, kind=kind) for m in ("gteval", "pi")}
        return {"halves": halves}, scores

    (dev, dev_scores), (test, test_scores) = half("dev"), half("test")
    curve, scores = adapted_realism(dev, dev_scores, test, test_scores,
                                    {"gteval": "length baseline", "pi": "length baseline"}, draws=4, bootstrap=100)
    assert set(curve["budget"]) == {"0", "10", "25", "all"} and set(curve["metric"]) == {"GTEval", "PI"}
    zero = curve[(curve["budget"] == "0") & (curve["metric"] == "GTEval")].iloc[0]
    labels = test["halves"]["gteval"].items["human_label"]
    assert zero["spearman"] == correlation(test_scores["length baseline"]["gteval"], labels, kind="spearman")
    assert correlation(scores["gteval"], labels, kind="spearman") > zero["spearman"] + 0.3
    with np.testing.assert_raises(TypeError):  # the fit reads dev labels only
        adapted_realism(test, test_scores, test, test_scores, {"gteval": "length baseline"}, draws=2, bootstrap=20)
