"""Chapter 3 statistics, folds, ensembles and the metric cache."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evalkit.upheld import ensemble
from evalkit.upheld.correlation import (bootstrap_ci, correlation, cramers_v, evaluation_frame, fold_correlations, folds)
from evalkit.upheld.paper_tables import by_agreement_level, judge_accuracy_by_bin, stratified_sample


@pytest.fixture
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    n = 300
    target = rng.normal(size=n)
    return pd.DataFrame({
        "item_id": [f"i{i}" for i in range(n)], "conversation_id": [f"c{i // 6}" for i in range(n)],
        "model": ["m"] * n, "target": target, "target_std": rng.uniform(0, 2, n),
        "good": target + rng.normal(scale=0.5, size=n), "noise": rng.normal(size=n),
        "agreement_bin": rng.choice(["perfect", "majority", "plurality", "none"], n)})


def test_correlations_agree_with_scipy(frame):
    x, y = frame["good"], frame["target"]
    assert correlation(x, y) == pytest.approx(stats.pearsonr(x, y)[0])
    assert correlation(x, y, "spearman") == pytest.approx(stats.spearmanr(x, y)[0])
    assert correlation(x, y, "kendall") == pytest.approx(stats.kendalltau(x, y)[0])
    binary = (x > 0).astype(float)
    assert correlation(binary, y, "pointbiserial") == pytest.approx(stats.pointbiserialr(binary, y)[0])
    with pytest.raises(ValueError, match="binary"):
        correlation(x, y, "pointbiserial")


def test_cramers_v_hand_case():
    # 2x2 table [[10, 0], [0, 10]] -> V = 1; [[5, 5], [5, 5]] -> V = 0.
    assert cramers_v([0] * 10 + [1] * 10, ["a"] * 10 + ["b"] * 10) == pytest.approx(1.0)
    assert cramers_v([0] * 10 + [1] * 10, (["a"] * 5 + ["b"] * 5) * 2) == pytest.approx(0.0)


def test_grouped_folds_share_no_conversation(frame):
    seen = 0
    for train, test in folds(frame, grouped=True, seed=3):
        assert not set(frame["conversation_id"].iloc[train]) & set(frame["conversation_id"].iloc[test])
        seen += len(test)
    assert seen == len(frame)
    plain = list(folds(frame, grouped=False, seed=3))
    leaked = sum(bool(set(frame["conversation_id"].iloc[tr]) & set(frame["conversation_id"].iloc[te])) for tr, te in plain)
    assert leaked == len(plain)  # shuffled folds do split conversations


def test_fold_correlations_and_bootstrap(frame):
    mean, sd = fold_correlations(frame, "good")
    assert 0.8 < mean < 0.95 and 0 < sd < 0.1
    low, high = bootstrap_ci(frame, "good", n=200, seed=1)
    assert low < correlation(frame["good"], frame["target"]) < high


def test_ensemble_cv_is_reproducible_and_uses_the_signal(frame):
    first = ensemble.cross_validate(frame, ["good", "noise"], "random_forest", seed=5, grouped=True)
    second = ensemble.cross_validate(frame, ["good", "noise"], "random_forest", seed=5, grouped=True)
    assert first["folds"] == second["folds"]
    assert first["mean"] > 0.7
    linear = ensemble.cross_validate(frame, ["good", "noise"], "linear")
    weighted = ensemble.cross_validate(frame, ["good", "noise"], "linear", weighted=True)
    assert linear["mean"] > 0.8 and weighted["mean"] > 0.8
    regressions = ensemble.single_feature_regressions(frame, ["good", "noise"])
    assert regressions.loc["good", "p-value"] < 1e-10 < regressions.loc["noise", "p-value"]


def test_evaluation_frame_protocols():
    items = pd.DataFrame({"item_id": ["a|gpt4", "b|random", "c|gpt4"], "conversation_id": ["1", "1", "2"],
                          "model": ["gpt4", "random", "gpt4"], "content_mean": [4.0, 1.0, 2.0],
                          "content_std": [0.0, 0.0, 1.0], "content_bin": ["perfect"] * 3})
    labels = pd.DataFrame({"item_id": ["a|gpt4", "a|gpt4", "b|random", "c|gpt4"], "content": [4, 4, 1, 2]})
    scores = pd.DataFrame({"metric": [0.9, 0.1]}, index=["a|gpt4", "b|random"])
    assert evaluation_frame(items, labels, scores, "content")["item_id"].tolist() == ["a|gpt4", "b|random"]
    assert len(evaluation_frame(items, labels, scores, "content", target="annotations")) == 3
    assert evaluation_frame(items, labels, scores, "content", sources="real")["model"].tolist() == ["gpt4"]


def test_tables_by_agreement(frame):
    table = by_agreement_level(frame, ["good"])
    assert list(table.columns[:4]) == ["all", "plurality", "majority", "perfect"]
    counts = table.loc["good", "items (all/plurality/majority/perfect)"].split("/")
    assert int(counts[0]) == frame["good"].notna().sum() and len(counts) == 4  # the items that column scored
    from evalkit.upheld.agreement import LEVELS

    t = np.arange(-20, 20) + 0.5  # symmetric: t and t squared are uncorrelated on all items
    square = pd.DataFrame({"target": t, "square": t ** 2, "same": t,
                           "agreement_bin": [LEVELS[i % len(LEVELS)] for i in range(len(t))]})
    shares = by_agreement_level(square, ["square", "same"])
    assert abs(shares.loc["square", "all"]) < 1e-9 and np.isnan(shares.loc["square", "Δ% plurality vs all"])
    assert shares.loc["same", "Δ% plurality vs all"] == pytest.approx(0.0)  # no share of almost nothing, else a share
    labels = pd.DataFrame({"item_id": ["i0"] * 3 + ["i1"] * 3, "content": [5, 5, 4, 1, 1, 1]})
    data = pd.DataFrame({"item_id": ["i0", "i1"], "agreement_bin": ["majority", "perfect"],
                         "judge_likert": [4.8, 3.0], "judge_yes_no": [0.9, 0.2]})
    result = judge_accuracy_by_bin(data, labels, "content", {"judge_likert": "likert", "judge_yes_no": "binary"})
    assert result.loc["majority", "Human"] == pytest.approx(2 / 3)
    assert result.loc["majority", "judge_likert"] == 1.0 and result.loc["perfect", "judge_likert"] == 0.0
    assert result.loc["perfect", "judge_yes_no"] == 1.0


def test_stratified_sample_is_seeded(frame):
    data = frame.assign(model=np.repeat(["a", "b", "c"], 100))
    first, second = stratified_sample(data, 30, seed=2), stratified_sample(data, 30, seed=2)
    assert first.index.tolist() == second.index.tolist()
    assert first["model"].value_counts().tolist() == [10, 10, 10]


def test_the_ceiling_figure_chooses_on_upheld_alone():
    import pandas as pd

    from evalkit.upheld.paper_tables import ceiling_gap

    grouped = pd.DataFrame({"upheld": [0.7, 0.6], "upheld sd": [0.01, 0.02], "llm_arena": [0.2, 0.5],
                            "llm_arena sd": [0.03, 0.03]}, index=["rougeL", "bertscore_f1"])
    index = pd.MultiIndex.from_tuples([("content", "linear"), ("content", "svm")])
    ensembles = pd.DataFrame({"upheld grouped cv": [0.75, 0.72], "upheld grouped cv sd": [0.02, 0.02],
                              "llm_arena transfer": [0.1, 0.6], "llm_arena low": [0.0, 0.5],
                              "llm_arena high": [0.2, 0.7]}, index=index)
    gap = ceiling_gap(grouped, ensembles, {"upheld": 0.9, "llm_arena": 0.8}, ["rougeL", "bertscore_f1"])
    # The check set would prefer bertscore_f1 and the svm; the choice is made on UPHELD: rougeL and linear.
    assert gap["metric"].tolist() == ["rougeL", "rougeL"] and gap["ensemble"].tolist() == ["linear", "linear"]
    assert gap.loc["llm_arena", "ensemble r"] == 0.1 and gap.loc["upheld", "ensemble r"] == 0.75
    assert gap.loc["llm_arena", "metric r"] == 0.2
    # with the items, a check set's metric is its r over all of them with a bootstrap interval
    import numpy as np

    from evalkit.stats import correlation_with_humans

    rng = np.random.default_rng(0)
    target = rng.normal(size=80)
    items = {"upheld": None, "llm_arena": pd.DataFrame({"rougeL": target + rng.normal(size=80), "target": target})}
    gap = ceiling_gap(grouped, ensembles, {"upheld": 0.9, "llm_arena": 0.8}, ["rougeL", "bertscore_f1"],
                      frames=items, bootstrap=200, seed=1)
    expected = correlation_with_humans(items["llm_arena"]["rougeL"], target, bootstrap=200, seed=1)
    assert gap.loc["llm_arena", ["metric r", "metric low", "metric high"]].tolist() == pytest.approx(
        [expected.pearson, expected.pearson_low, expected.pearson_high])
    assert gap.loc["upheld", "metric r"] == 0.7 and np.isnan(gap.loc["upheld", "metric low"])


def test_a_proportion_counts_ties_as_half_wins_with_the_wilson_interval():
    import numpy as np

    from evalkit.stats import proportion

    whole = proportion([1] * 37 + [0] * 13)
    halves = proportion([1] * 36 + [0.5, 0.5] + [0] * 12)  # the same 37 of 50, one win split into two ties
    assert halves.value == whole.value == 0.74
    assert (halves.low, halves.high) == pytest.approx((whole.low, whole.high))  # the formula scipy uses
    odd = proportion([1] * 36 + [0.5] + [0] * 13)
    assert odd.value == pytest.approx(36.5 / 50) and whole.low > odd.low and np.isfinite(odd.high)


def test_grouped_intervals_computed_at_once_equal_scipy_on_each_resample_written_out():
    from evalkit.stats import bootstrap as resampling
    from evalkit.stats import group_resamples, grouped_correlation_intervals

    rng = np.random.default_rng(5)
    n = 90
    human = rng.integers(1, 6, size=n).astype(float)  # a Likert scale: many ties
    metric = np.round(human + rng.normal(size=n), 1)
    metric[::17] = np.nan
    groups = np.arange(n) // 3
    keep = ~np.isnan(metric)
    x, y, keys = metric[keep], human[keep], groups[keep]
    by_hand = {"pearson": [], "spearman": [], "kendall": []}
    for draw in group_resamples(keys, bootstrap=120, seed=2):
        by_hand["pearson"].append(stats.pearsonr(x[draw], y[draw])[0])
        by_hand["spearman"].append(stats.spearmanr(x[draw], y[draw])[0])
        by_hand["kendall"].append(stats.kendalltau(x[draw], y[draw])[0])
    weights = np.stack([np.bincount(d, minlength=len(x)) for d in group_resamples(keys, bootstrap=120, seed=2)])
    weights = weights.astype(float)
    (xc, xi), (yc, yi) = resampling._value_counts(x, weights), resampling._value_counts(y, weights)
    at_once = {"pearson": resampling._weighted_pearson(x, y, weights),
               "spearman": resampling._weighted_pearson(resampling._weighted_ranks(xc, xi),
                                                        resampling._weighted_ranks(yc, yi), weights),
               "kendall": resampling._weighted_kendall(x, y, weights, xc, yc, block=7)}  # blocks that do not divide n
    for name in by_hand:
        assert np.allclose(at_once[name], by_hand[name], atol=1e-12), name
    bounds = grouped_correlation_intervals(metric, human, groups, bootstrap=120, seed=2)
    for name, values in by_hand.items():
        assert bounds[name] == pytest.approx((np.percentile(values, 2.5), np.percentile(values, 97.5)), abs=1e-12)
    constant = grouped_correlation_intervals(np.ones(6), np.arange(6.0), [0, 0, 1, 1, 2, 2], bootstrap=20)
    assert all(np.isnan(low) and np.isnan(high) for low, high in constant.values())  # no resample varies


def test_a_forest_is_fitted_on_two_threads_predicts_on_one_and_equals_a_one_thread_forest(monkeypatch):
    from sklearn.ensemble import RandomForestRegressor

    from evalkit.upheld import ensemble

    rng = np.random.default_rng(0)
    x, weights = rng.normal(size=(300, 5)), rng.uniform(0.1, 1.0, 300)
    y = x @ rng.normal(size=5) + rng.normal(size=300)
    threads, fit = [], RandomForestRegressor.fit

    def recording_fit(self, *args, **kwargs):
        threads.append(self.n_jobs)
        return fit(self, *args, **kwargs)

    monkeypatch.setattr(RandomForestRegressor, "fit", recording_fit)
    predictions = {}
    for jobs in (1, 2):
        monkeypatch.setattr(ensemble, "FIT_JOBS", jobs)
        model = ensemble._fit(ensemble.make_model("random_forest", seed=13), x, y, weights)
        assert model.steps[-1][1].n_jobs == 1  # prediction on one thread: a fixed summation order
        predictions[jobs] = model.predict(x)
    assert threads == [1, 2]
    assert np.array_equal(predictions[1], predictions[2])
    linear = ensemble._fit(ensemble.make_model("linear"), x, y, None)
    assert linear.steps[-1][1].n_jobs is None  # only a forest's threads are set
