"""The adapted judge: fitted on dev labels only, seeded, the same features on both halves, recovers a known
signal, falls back to the zero-shot judge without one, and the curve's k = 0 point is the zero-shot judge."""
import math

import numpy as np
import pandas as pd
import pytest

from evalkit.judges import adapted
from evalkit.stats.halves import DevHalf, TestHalf
from evalkit.stats import correlation


def _set(n: int, seed: int, *, signal: bool = True) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 4))
    human = (2.0 * x[:, 1] - 1.0 * x[:, 2] if signal else np.zeros(n)) + rng.normal(size=n)
    features = pd.DataFrame({"zero-shot": 0.3 * x[:, 1] + rng.normal(size=n), "a": x[:, 1], "b": x[:, 2],
                             "c": x[:, 3]})
    return features, human


def _halves(n_dev=240, n_test=240, *, signal=True):
    dev_f, dev_y = _set(n_dev, 1, signal=signal)
    test_f, test_y = _set(n_test, 2, signal=signal)
    dev = DevHalf("toy", pd.DataFrame({"score": dev_y, "group": np.arange(n_dev) // 2}))
    test = TestHalf("toy", pd.DataFrame({"score": test_y, "group": np.arange(n_test) // 2}), kind="test")
    return dev, dev_f, test, test_f


def test_fitting_refuses_a_test_half():
    dev, dev_f, test, test_f = _halves()
    with pytest.raises(TypeError, match="dev half"):
        adapted.fit_adapted(test, test_f, prior="zero-shot")
    with pytest.raises(TypeError, match="dev half"):
        adapted.budget_predictions(test, test_f, dev_f, prior="zero-shot", k=10)


def test_a_known_linear_signal_is_recovered():
    dev, dev_f, test, test_f = _halves(n_dev=400)
    judge = adapted.fit_adapted(dev, dev_f, prior="zero-shot")
    assert not judge.fell_back
    weights = judge.coefficients()
    assert weights["a"] == pytest.approx(2.0, abs=0.25) and weights["b"] == pytest.approx(-1.0, abs=0.25)
    assert abs(weights["c"]) < 0.2
    assert correlation(judge.score(test_f), test.items["score"]) > 0.85


def test_without_a_signal_the_judge_falls_back_or_shrinks_hard_toward_the_zero_shot_judge():
    dev, dev_f, test, test_f = _halves(signal=False)

    def fits(rule):
        return [adapted.fit_adapted(adapted._subset(dev, adapted._draw(dev, 25, seed)),
                                    dev_f.iloc[adapted._draw(dev, 25, seed)].reset_index(drop=True),
                                    prior="zero-shot", seed=seed, rule=rule) for seed in range(20)]

    chosen = [judge.alpha for judge in fits(adapted.minimum_error_choice)]
    assert sum(math.isinf(alpha) for alpha in chosen) >= 5 and min(chosen) >= 10  # noise buys no free weights
    assert sum(judge.fell_back for judge in fits(adapted.one_standard_error_choice)) >= 15  # the cautious rule
    judge = adapted.fit_adapted(dev.sample(2, seed=0), dev_f.iloc[:2], prior="zero-shot")
    assert judge.fell_back and np.array_equal(judge.score(test_f), test_f["zero-shot"].to_numpy())


def test_draws_are_seeded_and_reproducible():
    dev, dev_f, test, test_f = _halves()
    first = adapted.label_budget_curve(dev, dev_f, test, test_f, prior="zero-shot", budgets=(0, 10, 50),
                                       draws=5, bootstrap=100, seed=3)
    again = adapted.label_budget_curve(dev, dev_f, test, test_f, prior="zero-shot", budgets=(0, 10, 50),
                                       draws=5, bootstrap=100, seed=3)
    other = adapted.label_budget_curve(dev, dev_f, test, test_f, prior="zero-shot", budgets=(0, 10, 50),
                                       draws=5, bootstrap=100, seed=4)
    pd.testing.assert_frame_equal(first, again)
    assert not np.allclose(first["pearson"].iloc[1:], other["pearson"].iloc[1:])


def test_the_curves_zero_point_is_the_zero_shot_judge_and_labels_pay_with_a_signal():
    dev, dev_f, test, test_f = _halves()
    curve = adapted.label_budget_curve(dev, dev_f, test, test_f, prior="zero-shot", draws=5, bootstrap=200)
    zero = curve.set_index("budget").loc["0"]
    assert zero["pearson"] == pytest.approx(correlation(test_f["zero-shot"], test.items["score"]))
    assert zero["gain"] == 0 and zero["k"] == 0
    assert curve.set_index("budget").loc["all", "k"] == len(dev)
    assert adapted.smallest_paying_budget(curve) in {"10", "25"}
    mean = adapted.mean_budget_curve({"toy": (dev, dev_f, test, test_f)}, prior="zero-shot", draws=5, bootstrap=200)
    assert mean["pearson"].tolist() == pytest.approx(curve["pearson"].tolist())


def test_features_are_computed_row_by_row_the_same_on_both_halves():
    frame = pd.DataFrame({"context": [["hello there", "how is the weather ?"], ["what did you eat"], ["hi"]],
                          "response": ["the weather is fine ?", "pasta and pasta", ""]})
    whole = adapted.text_features(frame)
    parts = pd.concat([adapted.text_features(frame.iloc[:1]), adapted.text_features(frame.iloc[1:])])
    pd.testing.assert_frame_equal(whole, parts)
    assert whole["reply type-token ratio"].tolist()[1] == pytest.approx(2 / 3)


def test_scoring_needs_the_fitted_features_and_missing_values_take_the_mean():
    dev, dev_f, test, test_f = _halves()
    judge = adapted.fit_adapted(dev, dev_f, prior="zero-shot")
    with pytest.raises(KeyError, match="missing"):
        judge.score(test_f.drop(columns=["a"]))
    holed = test_f.copy()
    holed.loc[0, "a"] = np.nan
    assert np.isfinite(judge.score(holed)).all()
    assert math.isinf(adapted.one_standard_error_choice({1.0: np.ones(4), math.inf: np.ones(4)}))


def test_standardised_weights_say_per_standard_deviation_and_are_empty_for_the_prior_on_a_fall_back():
    dev, dev_f, test, test_f = _halves(n_dev=400)
    judge = adapted.fit_adapted(dev, dev_f, prior="zero-shot")
    weights = judge.standardised_weights()
    assert weights["a"] == pytest.approx(judge.coefficients()["a"] * dev_f["a"].std(ddof=0), rel=1e-6)
    fallen = adapted.fit_adapted(dev.sample(2, seed=0), dev_f.iloc[:2], prior="zero-shot").standardised_weights()
    assert np.isnan(fallen["zero-shot"]) and (fallen.drop("zero-shot") == 0).all()


def test_paying_budgets_lists_every_budget_whose_interval_is_above_zero():
    curve = pd.DataFrame({"budget": ["0", "10", "25", "50", "all"], "gain_low": [0.0, 0.01, -0.02, 0.03, 0.0]})
    assert adapted.paying_budgets(curve) == ["10", "50"]
    assert adapted.smallest_paying_budget(curve) == "10"
