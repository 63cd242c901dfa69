"""Agreement statistics against published worked examples, hand computations and the real release."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evalkit.upheld import agreement


def _long(matrix: list[list[float]], label: str = "content") -> pd.DataFrame:
    """Annotators x items matrix (NaN = not rated) to the loader's long format."""
    rows = [{"annotator": a + 1, "item_id": f"i{i}", label: value}
            for a, ratings in enumerate(matrix) for i, value in enumerate(ratings) if not np.isnan(value)]
    return pd.DataFrame(rows)


def test_kappa_on_the_textbook_two_rater_example():
    # 50 items: both yes 20, A yes / B no 5, A no / B yes 10, both no 15 -> p_o 0.7, p_e 0.5, kappa 0.4.
    first = [1] * 20 + [1] * 5 + [0] * 10 + [0] * 15
    second = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    table = agreement.pairwise_kappa(_long([first, second]), "content")
    assert table["kappa"].iloc[0] == pytest.approx(0.4)
    assert table["exact_agreement"].iloc[0] == pytest.approx(0.7)


def test_alpha_on_krippendorffs_worked_example():
    nan = np.nan
    data = [[nan, nan, nan, nan, nan, 3, 4, 1, 2, 1, 1, 3, 3, nan, 3],
            [1, nan, 2, 1, 3, 3, 4, 3, nan, nan, nan, nan, nan, nan, nan],
            [nan, nan, 2, 1, 3, 4, 4, nan, 2, 1, 1, 3, 3, nan, 4]]
    labels = _long(data)
    assert agreement.alpha(labels, "content", "nominal") == pytest.approx(0.691358, abs=1e-6)
    assert agreement.alpha(labels, "content", "interval") == pytest.approx(0.810845, abs=1e-6)


def test_leave_one_out_matches_a_hand_computation():
    data = [[1, 2, 3, 4], [1, 3, 3, 5], [2, 2, 4, 5]]
    table = agreement.leave_one_out_ceiling(_long(data), "content").set_index("annotator")
    others_of_first = [(1 + 2) / 2, (3 + 2) / 2, (3 + 4) / 2, (5 + 5) / 2]
    assert table.loc[1, "correlation"] == pytest.approx(stats.pearsonr(data[0], others_of_first)[0])
    assert table["items"].tolist() == [4, 4, 4]


def test_split_half_reliability_bounds():
    rng = np.random.default_rng(1)
    truth = rng.normal(size=300)
    identical = _long([truth, truth, truth, truth])
    assert agreement.split_half_reliability(identical, "content", repeats=5)["reliability"] == pytest.approx(1.0)
    noise = _long(rng.normal(size=(4, 300)))
    assert abs(agreement.split_half_reliability(noise, "content", repeats=20)["reliability"]) < 0.15
    # Signal plus equal noise per rater: half-means of 2 raters correlate at 2/3, corrected to 0.8.
    mixed = _long(truth + rng.normal(size=(4, 300)))
    result = agreement.split_half_reliability(mixed, "content", repeats=20)
    assert result["reliability"] == pytest.approx(0.8, abs=0.06)
    assert result["ceiling"] == pytest.approx(np.sqrt(result["reliability"]))


def test_near_duplicate_raters_are_flagged_on_any_label():
    rng = np.random.default_rng(2)
    base = rng.integers(1, 6, size=(3, 60)).astype(float)
    copy = base.copy()
    copy[2] = base[0]
    content, style = _long(copy.tolist(), "content"), _long(base.tolist(), "style")
    labels = content.merge(style, on=["annotator", "item_id"])
    flagged = agreement.near_duplicate_raters(labels, ("content", "style"))
    assert flagged[["annotator_a", "annotator_b", "labels_above"]].values.tolist() == [[1, 3, "content"]]


def test_real_release_agreement(real_data_dir):
    from evalkit.upheld.release import load_upheld

    main = load_upheld("main", data_dir=real_data_dir).labels
    kappa = agreement.mean_pairwise_kappa(main, "content")
    assert 0.2 < kappa < 0.5  # the paper reports 0.33 averaged over labels
    shares = agreement.agreement_shares(main, "content")
    assert shares["perfect"] < shares["majority"] < shares["plurality"] <= 1
    topical = load_upheld("topical_chat", data_dir=real_data_dir).labels
    flagged = agreement.near_duplicate_raters(topical)
    assert flagged[["annotator_a", "annotator_b"]].values.tolist() == [[5, 9]]


def test_kappa_interval_by_source_agrees_with_scikit_learn_and_covers_it(real_data_dir):
    from evalkit.upheld.release import load_upheld

    main = load_upheld("main", data_dir=real_data_dir).labels
    table = agreement.kappa_by_group_interval(main, "content", bootstrap=200, seed=1)
    plain = agreement.kappa_by_group(main, "content")
    assert np.allclose(table["kappa"].astype(float), plain.loc[table.index].astype(float))
    assert ((table["low"] <= table["kappa"]) & (table["kappa"] <= table["high"])).all()
    assert (table["high"] - table["low"]).between(0.01, 0.5).all()  # real spread, not a point
    assert table["items"].sum() == main.groupby("model")["item_id"].nunique().sum()


def test_kappa_interval_of_two_raters_matches_a_direct_bootstrap():
    rng = np.random.default_rng(0)
    truth = rng.integers(1, 4, size=60)
    noisy = np.where(rng.random(60) < 0.7, truth, rng.integers(1, 4, size=60))
    frame = pd.DataFrame({"item_id": np.repeat(np.arange(60), 2), "annotator": [1, 2] * 60, "model": "m",
                          "content": np.ravel(np.column_stack([truth, noisy]))})
    table = agreement.kappa_by_group_interval(frame, "content", bootstrap=300, seed=4)
    draws = np.random.default_rng(4).integers(0, 60, size=(300, 60))
    from sklearn.metrics import cohen_kappa_score
    direct = [cohen_kappa_score(truth[d], noisy[d]) for d in draws]
    assert table.loc["m", "kappa"] == pytest.approx(cohen_kappa_score(truth, noisy))
    assert (table.loc["m", "low"], table.loc["m", "high"]) == pytest.approx(tuple(np.percentile(direct, [2.5, 97.5])))
