"""The course edition: every exercise's checks on small stand-in data, the student release, and grading a
folder of tiny notebooks (each in its own process; none imports torch or loads a model)."""
from __future__ import annotations

import inspect
import json
import os
import re
import time
import zipfile
from pathlib import Path
from types import SimpleNamespace

import nbformat
import numpy as np
import pandas as pd
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from evalkit import course
from evalkit.course import checks, exercise, run_exercise
from evalkit.course.answers import decode, encode
from evalkit.course.grade import grade
from evalkit.course.intake import intake
from evalkit.course.release import answer_cells, release, student_notebook

ROOT = Path(__file__).resolve().parents[2]
DATA = os.environ.get("EVALKIT_DATA_DIR")


def outcome(label: str, env: dict, **answers):
    return run_exercise(exercise(label), answers, env, hidden=True)


def shown_forms(value) -> list[str]:
    """The ways a number could appear in a message."""
    if isinstance(value, (bool, np.bool_)):
        return []
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return [f" {value} ", f"= {value}", f"{value}."] if abs(value) > 3 else []
    return [f"{value:.2f}", f"{value:.3f}", f"{value:.4f}", repr(float(value))]


def assert_wrong(feedback, expected_values, *, check: str | None = None) -> None:
    """Failed, with a message that names what is wrong and shows none of the expected values."""
    assert not feedback.passed and feedback.score == 0
    message = feedback.message()
    assert len(feedback.failures[0].message) > 30, message
    if check is not None:
        assert feedback.failures[0].check == check, message
    for value in expected_values:
        for form in shown_forms(value):
            assert form not in message, (form, message)


# --- chapter 0 ------------------------------------------------------------------------------------------

def ch0_env() -> dict:
    pairs = [("c1", "good", "bad"), ("c2", "good", "bad"), ("c3", "good", "bad")]
    position = pd.DataFrame({"P(A)": [0.81, 0.62, 0.40, 0.70, 0.55, 0.65]})
    probe = pd.DataFrame({"mass on Yes/No": [0.41, 0.12, 0.33, 0.27, 0.09, 0.52, 0.18, 0.24]})
    return {"pairs": pairs, "position": position, "probe": probe}


def test_ch0_checks_accept_the_chapter_quantities_and_refuse_others():
    env = ch0_env()
    first, swapped = env["position"]["P(A)"][:3].to_numpy(), env["position"]["P(A)"][3:].to_numpy()
    kept = int(((first > 0.5) == (swapped < 0.5)).sum())  # the third: the bad reply, in B then in A
    share = float(env["position"]["P(A)"].mean())
    assert kept == 1
    assert outcome("ch0-flip", env, kept_reply=kept, share_on_a=share).passed
    assert outcome("ch0-flip", env, kept_reply=kept, share_on_a=share + 5e-4).passed  # within the tolerance
    assert_wrong(outcome("ch0-flip", env, kept_reply=kept, share_on_a=float(first.mean())), [share],
                 check="share_on_a")
    wrong_count = outcome("ch0-flip", env, kept_reply=2, share_on_a=share)
    assert_wrong(wrong_count, [share], check="kept_reply")
    assert wrong_count.failures[0].hidden
    assert "probability" in outcome("ch0-flip", env, kept_reply=1, share_on_a=62.0).message()
    mass = env["probe"]["mass on Yes/No"]
    assert outcome("ch0-mass", env, mass_median=mass.median(), mass_range=(mass.min(), mass.max())).passed
    assert_wrong(outcome("ch0-mass", env, mass_median=mass.mean(), mass_range=(mass.min(), mass.max())),
                 [mass.median()], check="mass_median")
    assert_wrong(outcome("ch0-mass", env, mass_median=mass.median(), mass_range=(mass.min(), 1.0)),
                 [mass.max()], check="mass_range")


# --- chapter 1 ------------------------------------------------------------------------------------------

def ch1_env() -> dict:
    rows = []
    for model, scores in {"random": [1, 1, 1, 2], "gpt4": [3, 4, 2, 3], "gpt4_rephrase": [5, 5, 4, 5]}.items():
        for item, score in enumerate(scores):
            for annotator in range(3):
                rows.append({"item_id": f"{model}-{item}", "model": model, "annotator": annotator,
                             "content": score if annotator or item % 2 else max(1, score - 1), "style": 3,
                             "reasonable": 5})
    labels = pd.DataFrame(rows)
    items = labels.groupby("item_id").agg(model=("model", "first"), content_min=("content", "min"),
                                          content_max=("content", "max")).reset_index()
    items["content_bin"] = np.where(items["content_min"] == items["content_max"], "perfect", "majority")
    topical = pd.DataFrame({"model": ["gpt-4o"] * 4, "content": [1, 2, 1, 1], "style": [1] * 4,
                            "reasonable": [5] * 4})
    main = SimpleNamespace(labels=labels, items=items)
    return {"main": main, "data": {"main": main, "topical_chat": SimpleNamespace(labels=topical)}}


def test_ch1_checks():
    env = ch1_env()
    assert outcome("ch1-floor", env, floor=0.2, lowest_source="random", nearer_source="random").passed
    assert_wrong(outcome("ch1-floor", env, floor=0.0, lowest_source="random", nearer_source="random"), [0.2],
                 check="floor")
    assert_wrong(outcome("ch1-floor", env, floor=1 / 5, lowest_source="gpt4", nearer_source="random"), [0.2],
                 check="lowest_source")
    assert_wrong(outcome("ch1-floor", env, floor=1 / 5, lowest_source=" Random ", nearer_source="gpt4_rephrase"),
                 [0.2], check="nearer_source")
    assert "one of" in outcome("ch1-floor", env, floor=0.2, lowest_source="nobody", nearer_source="random").message()
    items = env["main"].items
    share = (items["content_bin"] == "perfect").groupby(items["model"]).mean()
    assert outcome("ch1-bins", env, perfect_share=share, most_perfect=share.idxmax()).passed
    assert outcome("ch1-bins", env, perfect_share=share.to_dict(), most_perfect=share.idxmax()).passed
    counts = (items["content_bin"] == "perfect").groupby(items["model"]).sum()  # counts, not shares
    assert_wrong(outcome("ch1-bins", env, perfect_share=counts / 10, most_perfect="random"), share.tolist())
    missing = outcome("ch1-bins", env, perfect_share=share.drop("gpt4"), most_perfect="random")
    assert "'gpt4' is missing" in missing.message()
    assert_wrong(outcome("ch1-bins", env, perfect_share=share, most_perfect=share.idxmin()), share.tolist(),
                 check="most_perfect")


# --- chapter 2 ------------------------------------------------------------------------------------------

def ch2_env(seed: int = 5) -> dict:
    rng = np.random.default_rng(seed)
    labels = {}
    for subset, noise in (("main", 0.6), ("llm_arena", 1.0), ("topical_chat", 1.4)):
        truth = rng.integers(1, 6, 40)
        rows = [{"item_id": f"i{item}", "annotator": annotator,
                 "content": int(np.clip(round(truth[item] + rng.normal(0, noise)), 1, 5)),
                 "style": int(rng.choice([1, 3, 5])), "reasonable": int(rng.choice([1, 5]))}
                for item in range(40) for annotator in range(4)]
        labels[subset] = pd.DataFrame(rows)
    return {"labels": labels, "seed": 13}


def test_ch2_checks():
    from evalkit.upheld import agreement

    env = ch2_env()
    ceilings = {n: agreement.split_half_reliability(env["labels"]["main"], "content", repeats=n, seed=13)["ceiling"]
                for n in (10, 50, 200)}
    assert outcome("ch2-half", env, half_ceilings=ceilings).passed
    assert outcome("ch2-half", env, half_ceilings=pd.Series(ceilings)).passed
    style = {n: agreement.split_half_reliability(env["labels"]["main"], "style", repeats=n, seed=13)["ceiling"]
             for n in (10, 50, 200)}
    assert_wrong(outcome("ch2-half", env, half_ceilings=style), list(ceilings.values()), check="half_200")
    squared = {n: value ** 2 for n, value in ceilings.items()}  # the reliability, not its square root
    assert_wrong(outcome("ch2-half", env, half_ceilings=squared), list(ceilings.values()))
    only_200 = {**ceilings, 10: squared[10]}
    hidden = outcome("ch2-half", env, half_ceilings=only_200)
    assert_wrong(hidden, list(ceilings.values()), check="half_all")
    assert "[10]" in hidden.message()
    assert "missing" in outcome("ch2-half", env, half_ceilings={10: 0.9, 200: 0.9}).message()

    gaps = {(subset, name): abs(agreement.alpha(frame, name, "ordinal") - agreement.alpha(frame, name, "interval"))
            for subset, frame in env["labels"].items() for name in ("content", "style", "reasonable")}
    widest = max(gaps, key=gaps.get)
    assert all(gaps[(subset, "reasonable")] < 1e-9 for subset in env["labels"])  # two values: no gap
    signed = pd.Series({key: -value for key, value in gaps.items()})  # interval - ordinal is as good
    assert outcome("ch2-alpha", env, alpha_gaps=signed, widest_gap=widest).passed
    assert outcome("ch2-alpha", env, alpha_gaps=gaps, widest_gap=list(widest)).passed
    off = {**gaps, ("main", "content"): gaps[("main", "content")] + 0.05}
    assert_wrong(outcome("ch2-alpha", env, alpha_gaps=off, widest_gap=widest), list(gaps.values()))
    narrowest = min(gaps, key=gaps.get)
    assert_wrong(outcome("ch2-alpha", env, alpha_gaps=gaps, widest_gap=narrowest), list(gaps.values()),
                 check="widest_gap")


@pytest.mark.skipif(not DATA, reason="EVALKIT_DATA_DIR is not set: the real UPHELD labels are not available")
def test_ch2_half_tolerance_on_the_real_data_accepts_any_seed_and_refuses_the_usual_mistakes():
    """The tolerance's claims, on the book's data: another seed passes; the style label, the reliability
    without its square root and the uncorrected half correlation do not."""
    from evalkit.upheld import agreement
    from evalkit.upheld.release import SUBSETS, load_upheld

    env = {"labels": {name: load_upheld(name).labels for name in SUBSETS}, "seed": 13}
    main = env["labels"]["main"]
    other_seed = {n: agreement.split_half_reliability(main, "content", repeats=n, seed=99)["ceiling"]
                  for n in (10, 50, 200)}
    assert outcome("ch2-half", env, half_ceilings=other_seed).passed
    for mistake in ("style", "reliability", "split_half_r"):
        label, key = ("style", "ceiling") if mistake == "style" else ("content", mistake)
        wrong = {n: agreement.split_half_reliability(main, label, repeats=n, seed=13)[key] for n in (10, 50, 200)}
        assert not outcome("ch2-half", env, half_ceilings=wrong).passed, mistake


# --- chapter 3 ------------------------------------------------------------------------------------------

def ch3_env() -> dict:
    rng = np.random.default_rng(3)

    def frame(n: int, prefix: str) -> pd.DataFrame:
        target = rng.uniform(1, 5, n)
        return pd.DataFrame({"item_id": [f"{prefix}{i}" for i in range(n)], "target": target,
                             "conversation_id": [f"{prefix}c{i // 3}" for i in range(n)],
                             "target_std": rng.uniform(0, 1.5, n),
                             "bleu": target * 0.1 + rng.normal(0, 0.2, n),
                             "embedding_cosine": target * 0.05 + rng.normal(0, 0.1, n)})

    frames = {"content": {"upheld": frame(240, "u"), "llm_arena": frame(90, "a"), "topical_chat": frame(60, "t")}}
    judged = {"upheld": frames["content"]["upheld"].iloc[::6]}
    return {"frames": frames, "judged": judged, "METRICS": ["bleu", "embedding_cosine"], "bootstrap": 300, "seed": 13}


def test_ch3_checks():
    from evalkit.upheld import ensemble
    from evalkit.stats import correlation_with_humans

    env = ch3_env()
    table = ensemble.ensemble_table(env["frames"], env["METRICS"], labels=["content"], train="llm_arena",
                                    checks=("upheld",), n_splits=3, seed=13, bootstrap=0)
    reverse = table["upheld transfer"]  # indexed by (label, ensemble), as the chapter's table is
    assert outcome("ch3-direction", env, reverse_transfer=reverse).passed
    plain = {name: reverse["content", name] for name in ("linear", "svm", "random_forest")}
    assert outcome("ch3-direction", env, reverse_transfer=plain).passed
    forward = ensemble.ensemble_table(env["frames"], env["METRICS"], labels=["content"], train="upheld",
                                      checks=("llm_arena",), n_splits=3, seed=13, bootstrap=0)
    wrong_direction = {name: forward.loc[("content", name), "llm_arena transfer"] for name in plain}
    assert_wrong(outcome("ch3-direction", env, reverse_transfer=wrong_direction), list(plain.values()))
    assert "'svm' missing" in outcome("ch3-direction", env, reverse_transfer={"linear": 0.2,
                                                                              "random_forest": 0.1}).message()

    everything = env["frames"]["content"]["upheld"]
    sample = env["judged"]["upheld"]
    full, part = (correlation_with_humans(f["embedding_cosine"], f["target"], bootstrap=1000, seed=1)
                  for f in (everything, sample))
    width = (part.pearson_high - part.pearson_low) / (full.pearson_high - full.pearson_low)
    size = float(np.sqrt(full.n / part.n))
    assert outcome("ch3-interval", env, width_ratio=width, size_ratio_sqrt=size).passed  # another seed and B
    assert_wrong(outcome("ch3-interval", env, width_ratio=width, size_ratio_sqrt=1 / size), [size],
                 check="size_ratio")
    assert_wrong(outcome("ch3-interval", env, width_ratio=1 / width, size_ratio_sqrt=size), [width, size],
                 check="width_ratio")


# --- chapter 4 ------------------------------------------------------------------------------------------

class StandInJudge:
    """The encoder judge's two methods, on word overlap: no model."""

    scale = 2.0

    def relevance(self, contexts, responses):
        return np.array([len(set(str(c).split()) & set(str(r).split())) + 0.01 * len(str(r))
                         for c, r in zip(contexts, responses)])

    def prefer(self, first, second):
        return 1.0 / (1.0 + np.exp(-self.scale * (np.asarray(first) - np.asarray(second))))


def ch4_env() -> dict:
    rng = np.random.default_rng(4)
    words = "the cat sat on a mat with blue red shoes and tea".split()

    def text(k: int) -> str:
        return " ".join(rng.choice(words, k))

    heldout = {"random": pd.DataFrame({column: [text(5) for _ in range(25)]
                                       for column in ("context_a", "response_a", "context_b", "response_b")})}
    items = {"fed": pd.DataFrame({"context": [text(6) for _ in range(30)], "response": [text(5) for _ in range(30)]})}
    judge = StandInJudge()
    relevance = judge.relevance(list(items["fed"]["context"]), list(items["fed"]["response"]))
    scores = {("PairEval", "fed"): 1 / (1 + np.exp(-(relevance - 1.0)))}
    return {"heldout": heldout, "tuned": {"PairEval": judge}, "items": items, "scores": scores, "SET_ORDER": ["fed"]}


def test_ch4_checks():
    env = ch4_env()
    judge, pairs = env["tuned"]["PairEval"], env["heldout"]["random"].iloc[:20]
    a = judge.relevance(list(pairs["context_a"]), list(pairs["response_a"]))
    b = judge.relevance(list(pairs["context_b"]), list(pairs["response_b"]))
    p_ab, p_ba = judge.prefer(a, b), judge.prefer(b, a)
    assert outcome("ch4-order", env, p_ab=p_ab, p_ba=list(p_ba)).passed
    assert_wrong(outcome("ch4-order", env, p_ab=p_ab, p_ba=p_ab), [], check="order_sums")
    shuffled = outcome("ch4-order", env, p_ab=p_ba, p_ba=p_ab)  # sums still 1: only the hidden check sees it
    assert_wrong(shuffled, [], check="order_values")
    assert "holds 19" in outcome("ch4-order", env, p_ab=p_ab[:19], p_ba=p_ba[:19]).message()

    assert outcome("ch4-size", env, pairs_needed=560).passed     # the chapter's grid of 20
    assert outcome("ch4-size", env, pairs_needed=543).passed     # the exact smallest n
    assert_wrong(outcome("ch4-size", env, pairs_needed=400), [543, 560], check="size_bound")
    assert_wrong(outcome("ch4-size", env, pairs_needed=600), [543, 560], check="size_smallest")
    assert "fraction" in outcome("ch4-size", env, pairs_needed=560.5).message()

    from scipy import stats

    frame = env["items"]["fed"]
    rho = stats.spearmanr(env["scores"]["PairEval", "fed"],
                          judge.relevance(list(frame["context"]), list(frame["response"]))).statistic
    assert rho > 0.999
    assert outcome("ch4-rank", env, rank_rho=rho).passed
    pearson = float(np.corrcoef(env["scores"]["PairEval", "fed"],
                                judge.relevance(list(frame["context"]), list(frame["response"])))[0, 1])
    assert_wrong(outcome("ch4-rank", env, rank_rho=pearson), [rho], check="rank_form")


def ch4_adapt_env() -> dict:
    """Chapter 4's adapted-judge variables on stand-in data: one set's halves and features."""
    from evalkit.judges import adapted
    from evalkit.stats.halves import DevHalf, TestHalf

    rng = np.random.default_rng(8)

    def half(kind, n):
        signal = rng.normal(size=(n, 2))
        frame = pd.DataFrame({"score": signal[:, 0] + rng.normal(size=n), "group": np.arange(n)})
        features = pd.DataFrame({"DirectEval": signal[:, 0] + 2 * rng.normal(size=n), "length": signal[:, 1]})
        return kind("fed", frame, kind="dev" if kind is DevHalf else "test"), features

    (dev, dev_f), (test, test_f) = half(DevHalf, 80), half(TestHalf, 60)
    curves = pd.DataFrame({"set": ["fed"], "budget": ["50"], "draws": [20], "pearson": [0.3]})
    return {"SET_ORDER": ["fed"], "adapt_sets": {"fed": (dev, dev_f, test, test_f)}, "adopted": "DirectEval",
            "seed": 13, "curves": curves, "adapted": adapted}


def test_ch4_budget_checks():
    from evalkit.judges.adapted import fit_adapted
    from evalkit.stats.halves import DevHalf
    from evalkit.stats import correlation

    env = ch4_adapt_env()
    dev, dev_f, test, test_f = env["adapt_sets"]["fed"]
    fit = fit_adapted(DevHalf("fed", dev.items.iloc[:50]), dev_f.iloc[:50], prior="DirectEval", seed=13)
    right = correlation(fit.score(test_f), test.items["score"])
    assert outcome("ch4-budget", env, budget_r=right).passed
    whole = correlation(fit_adapted(dev, dev_f, prior="DirectEval", seed=13).score(test_f), test.items["score"])
    assert_wrong(outcome("ch4-budget", env, budget_r=whole + (0.01 if whole == right else 0)), [right],
                 check="budget_value")
    assert "Pearson correlation" in outcome("ch4-budget", env, budget_r=3.0).message()


# --- chapter 5 ------------------------------------------------------------------------------------------

class StandInStore:
    def __init__(self, episodes):
        self._episodes = episodes

    def episodes(self, unit_id):
        return {i: {"payload": {"turns": turns}} for i, turns in enumerate(self._episodes[unit_id])}


def ch5_env(monkeypatch) -> dict:
    from evalkit.userproxy import lexical

    monkeypatch.setattr(lexical, "lm_tokenizer", lambda model=None: str.split)
    rng = np.random.default_rng(5)
    vocabulary = [f"w{i}" for i in range(40)]

    def conversation(k: int, spread: int):
        return [{"role": "user", "content": " ".join(rng.choice(vocabulary[:spread], k))},
                {"role": "assistant", "content": "ok"},
                {"role": "user", "content": " ".join(rng.choice(vocabulary[:spread], k))}]

    human = pd.DataFrame({"turns": [conversation(40, 40) for _ in range(260)],
                          "stratum": rng.integers(1, 4, 260)})
    store = StandInStore({"u-roll": [conversation(40, 12) for _ in range(6)]})
    units = pd.DataFrame({"kind": ["rollout", "metric"], "dataset": ["oasst1", "oasst1"],
                          "unit_id": ["u-roll", "u-metric"]})
    return {"datasets": ["oasst1"], "unit_table": units, "store": store, "loaded": {"oasst1": (human, None)},
            "min_tokens": 5, "seed": 13}


def test_ch5_checks(monkeypatch):
    from scipy import stats

    from evalkit.userproxy import realism
    from evalkit.userproxy.data import stratified_episodes
    from evalkit.userproxy.evaluate import lexical_z_scores

    env = ch5_env(monkeypatch)
    balanced = [realism.proxy_slots(8, s).count("A") / 8 for s in range(1000)]
    coins = [np.mean(np.random.default_rng([s, 8]).random(8) < 0.5) for s in range(1000)]
    far = float(np.mean([abs(pi - 0.5) >= 0.25 for pi in coins]))
    exact = float(stats.binom.cdf(2, 8, 0.5) * 2)
    assert outcome("ch5-slots", env, coin_far_share=far, balanced_range=(min(balanced), max(balanced))).passed
    assert outcome("ch5-slots", env, coin_far_share=exact, balanced_range=[0.5, 0.5]).passed  # worked out exactly
    strictly = float(np.mean([abs(pi - 0.5) > 0.25 for pi in coins]))  # "more than", not "0.25 or more"
    assert_wrong(outcome("ch5-slots", env, coin_far_share=strictly, balanced_range=(0.5, 0.5)), [far, exact],
                 check="coin_share")
    assert_wrong(outcome("ch5-slots", env, coin_far_share=far, balanced_range=(min(coins), max(coins))), [0.5],
                 check="balanced_range")

    frame = env["loaded"]["oasst1"][0]
    proxy = [episode["payload"]["turns"] for episode in env["store"].episodes("u-roll").values()]
    z = {n: lexical_z_scores(list(stratified_episodes(frame, n, seed=21)["turns"]), proxy, str.split)
         for n in (20, 50, 200)}
    anchor_z = {n: float(table["mattr"].mean()) for n, table in z.items()}
    proxy_mattr = float(z[20]["mattr_proxy"].mean())
    assert outcome("ch5-anchor", env, anchor_z=anchor_z, proxy_mattr=proxy_mattr).passed  # another anchor draw
    human_mattr = float(z[200]["mattr_human_mean"].iloc[0])
    assert_wrong(outcome("ch5-anchor", env, anchor_z=anchor_z, proxy_mattr=human_mattr), [proxy_mattr],
                 check="proxy_mattr")
    flipped = {n: -value for n, value in anchor_z.items()}
    assert_wrong(outcome("ch5-anchor", env, anchor_z=flipped, proxy_mattr=proxy_mattr), list(anchor_z.values()),
                 check="anchor_values")


# --- the check API --------------------------------------------------------------------------------------

def test_ch6_checks():
    from evalkit.judgecard.sets import noise_ceiling
    from evalkit.stats import correlation_difference

    env = ch6_env()
    main = env["human_sets"]["upheld-main"]
    ceiling = noise_ceiling(main.ratings, "content")
    length = env["cards"]["length"].rows[0]
    right = {"ceiling_by_hand": ceiling.ceiling, "share_by_hand": length.pearson / ceiling.ceiling}
    assert run_exercise(exercise("ch6-share"), right, env, hidden=True).passed
    one_rater = {**right, "ceiling_by_hand": float(np.sqrt(ceiling.icc_single))}  # ICC(1, 1): one person's
    failed = run_exercise(exercise("ch6-share"), one_rater, env, hidden=True)
    assert not failed.passed and "sqrt(ICC(1, k))" in failed.message()
    assert "should lie in (0, 1]" in run_exercise(exercise("ch6-share"), {**right, "ceiling_by_hand": 1.4}, env).message()
    scores = {n: np.asarray(env["cards"][n].scores[0].scores) for n in ("encoder", "paireval:smoke")}
    result = correlation_difference(scores["paireval:smoke"], scores["encoder"], main.items["content"],
                                    groups=list(main.items["group"]), seed=3)
    answer = {"difference": result.difference, "low": result.low, "high": result.high,
              "tied": bool(result.low <= 0 <= result.high)}
    assert run_exercise(exercise("ch6-tie"), answer, env, hidden=True).passed  # another seed is a correct method
    swapped = {**answer, "difference": -result.difference, "low": -result.high, "high": -result.low}
    assert not run_exercise(exercise("ch6-tie"), swapped, env, hidden=True).passed
    lying = {**answer, "tied": not answer["tied"]}
    assert "whether your interval holds zero" in run_exercise(exercise("ch6-tie"), lying, env).message()


def test_every_chapter_exercise_has_checks_and_every_registered_exercise_is_in_its_chapter():
    for source in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.md")):
        labels = re.findall(r"```\{exercise\}\n:label: (\S+)", source.read_text())
        registered = [item.label for item in course.chapter_exercises(source.stem)]
        assert registered == labels, source.name
    for item in course.EXERCISES.values():
        assert item.public and item.hidden and item.answers, item.label


def test_check_reads_the_notebook_and_says_what_is_missing():
    pairs_needed = ...  # the placeholder a student starts from
    unanswered = course.check("ch4-size", pairs_needed=pairs_needed)
    assert not unanswered.passed and "no answer yet" in unanswered.message()
    assert "is not defined" in course.check("ch4-size").message()  # nothing assigned in this module
    assert course.check("ch4-size", pairs_needed=560).passed
    assert "passed" in course.check("ch4-size", pairs_needed=560)._repr_html_()
    assert "chapter's `pairs` is not defined" in course.check("ch0-flip", kept_reply=1, share_on_a=0.5).message()
    with pytest.raises(KeyError, match="did you mean ch4-size"):
        course.check("ch4-sise", pairs_needed=560)
    with pytest.raises(TypeError, match="pairs_needed"):
        course.check("ch4-size", answer=560)


def test_public_checks_never_run_the_hidden_ones():
    feedback = course.check("ch4-size", pairs_needed=600)  # right only for the public check
    assert feedback.passed and not any(result.hidden for result in feedback.results)
    assert not run_exercise(exercise("ch4-size"), {"pairs_needed": 600}, {}, hidden=True).passed


# --- release --------------------------------------------------------------------------------------------

FRONT = """---
jupytext:
  formats: md:myst
  text_representation:
    extension: .md
    format_name: myst
    format_version: 0.13
    jupytext_version: 1.19.6
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
"""


def chapter_with_solutions() -> str:
    exercises = []
    for label, names in (("ch2-half", "half_ceilings"), ("ch2-alpha", "alpha_gaps, widest_gap")):
        assigned = "\n".join(f"{name.strip()} = ...  # your answer" for name in names.split(","))
        keywords = ", ".join(f"{n.strip()}={n.strip()}" for n in names.split(","))
        exercises.append(f"""```{{exercise}}
:label: {label}

Compute the thing for {label}.
```

```{{code-cell}}
from evalkit import course

{assigned}
course.check("{label}", {keywords})
```

```{{solution-start}} {label}
:class: dropdown
```

```{{code-cell}}
SOLUTION_CODE_{label.replace('-', '_')} = 42
```

SOLUTION_PROSE for {label}: why it works.

```{{solution-end}}
```
""")
    return FRONT + """
# 2. Agreement

```{code-cell}
:tags: [parameters]

seed = 13
```

## Exercises

""" + "\n".join(exercises) + "\nClosing words.\n"


def checks_source_lines() -> list[str]:
    lines = []
    for path in (ROOT / "evalkit" / "course" / "checks").glob("ch*.py"):
        lines += [line.strip() for line in path.read_text().splitlines() if len(line.strip()) > 30]
    return lines


def released_texts(folder: Path) -> dict[str, str]:
    texts = {str(p): p.read_text() for p in folder.rglob("*") if p.suffix in (".md", ".ipynb")}
    for archive in folder.glob("*.zip"):
        with zipfile.ZipFile(archive) as bundle:
            texts.update({f"{archive}:{name}": bundle.read(name).decode() for name in bundle.namelist()})
    return texts


def test_release_strips_solutions_and_outputs_and_holds_no_hidden_check(tmp_path):
    source = tmp_path / "chapters" / "02_agreement.md"
    source.parent.mkdir()
    source.write_text(chapter_with_solutions())
    with_output = nbformat.v4.new_notebook(cells=[
        new_markdown_cell("# 1. Data"),
        new_code_cell("print('loaded')", execution_count=3, outputs=[new_output("stream", text="loaded\n")]),
        *[cell for label, name in (("ch1-floor", "floor"), ("ch1-bins", "perfect_share"))
          for cell in (new_markdown_cell(f"```{{exercise}}\n:label: {label}\n\nDo it.\n```"),
                       new_code_cell(f"{name} = ...\ncourse.check({label!r})"),
                       new_markdown_cell(f"```{{solution-start}} {label}\n```"),
                       new_code_cell(f"SOLUTION_CODE_{label[4:]} = 1", outputs=[new_output("stream", text="x")]),
                       new_markdown_cell("SOLUTION_PROSE\n\n```{solution-end}\n```"))]])
    nbformat.write(with_output, tmp_path / "chapters" / "01_dataset_building.ipynb")
    out = tmp_path / "release"
    released = release(out, sources=[tmp_path / "chapters" / "01_dataset_building.ipynb", source])
    assert [r.chapter for r in released] == ["01_dataset_building", "02_agreement"]
    assert released[1].exercises == ("ch2-half", "ch2-alpha")
    for chapter in released:
        assert chapter.markdown.is_file() and chapter.notebook.is_file()
        with zipfile.ZipFile(chapter.archive) as bundle:
            assert sorted(bundle.namelist()) == sorted([f"{chapter.chapter}/{chapter.chapter}.md",
                                                        f"{chapter.chapter}/{chapter.chapter}.ipynb"])
        student = nbformat.read(chapter.notebook, as_version=4)
        assert student.metadata["evalkit"]["chapter"] == chapter.chapter
        assert all(not c.get("outputs") and c.get("execution_count") is None
                   for c in student.cells if c.cell_type == "code")
        assert sorted(answer_cells(student)) == sorted(chapter.exercises)
    texts = released_texts(out)
    assert len(texts) == 8
    hidden_lines = checks_source_lines()
    for name, text in texts.items():
        for leak in ("SOLUTION_CODE", "SOLUTION_PROSE", "solution-start", "solution-end", "evalkit.course.checks"):
            assert leak not in text, (name, leak)
        assert not [line for line in hidden_lines if line in text], name
        assert "Compute the thing" in text or "Do it." in text  # the exercises themselves stay
    markdown = released[1].markdown.read_text()
    assert markdown.startswith("---\n") and "format_name: myst" in markdown and "Closing words." in markdown
    assert "chapter: 02_agreement" in markdown.split("---")[1]  # a renamed .md submission is still recognised


def test_release_refuses_a_chapter_whose_exercise_has_no_answer_cell(tmp_path):
    source = tmp_path / "02_agreement.md"
    source.write_text(chapter_with_solutions().replace('course.check("ch2-alpha"', 'print("ch2-alpha"'))
    with pytest.raises(ValueError, match="no answer cell .* ch2-alpha"):
        student_notebook(source)


def test_the_books_chapters_release_without_solution_code(tmp_path):
    """Every chapter of the book: an answer cell per exercise, and none of its solution cells' lines (those
    not also outside the solutions) left in the student files."""
    from evalkit.book.runner import read_chapter

    released = release(tmp_path)
    assert len(released) == len(list((ROOT / "notebooks").glob("[0-9][0-9]_*.md")))
    for chapter in released:
        source = read_chapter(ROOT / "notebooks" / f"{chapter.chapter}.md")
        solution_lines, other_lines, inside = set(), set(), False
        for cell in source.cells:
            text = cell.source
            if cell.cell_type == "markdown" and "{solution-start}" in text:
                inside = True
            (solution_lines if inside and cell.cell_type == "code" else other_lines).update(
                line.strip() for line in text.splitlines() if len(line.strip()) > 25)
            if cell.cell_type == "markdown" and "{solution-end}" in text:
                inside = False
        student = chapter.markdown.read_text() + chapter.notebook.read_text()
        leaked = [line for line in solution_lines - other_lines if line in student]
        assert not leaked, (chapter.chapter, leaked[:3])


# --- grading --------------------------------------------------------------------------------------------

# The graded notebooks' stand-in judge is StandInJudge's own source (one definition for both uses).
SETUP = "import numpy as np, pandas as pd\n" + inspect.getsource(StandInJudge) + '''Judge = StandInJudge
rng = np.random.default_rng(0)
words = "the cat sat on a mat with blue red shoes".split()
def text(k): return " ".join(rng.choice(words, k))
heldout = {"random": pd.DataFrame({c: [text(5) for _ in range(25)]
                                   for c in ("context_a", "response_a", "context_b", "response_b")})}
tuned, SET_ORDER = {"PairEval": Judge()}, ["fed"]
items = {"fed": pd.DataFrame({"context": [text(6) for _ in range(30)], "response": [text(5) for _ in range(30)]})}
relevance = tuned["PairEval"].relevance(list(items["fed"]["context"]), list(items["fed"]["response"]))
scores = {("PairEval", "fed"): 1 / (1 + np.exp(-(relevance - 1.0)))}
from evalkit.stats.halves import DevHalf, TestHalf
signal = rng.normal(size=(140, 2))
frame = pd.DataFrame({"score": signal[:, 0] + rng.normal(size=140), "group": np.arange(140)})
features = pd.DataFrame({"DirectEval": signal[:, 0] + 2 * rng.normal(size=140), "length": signal[:, 1]})
adapt_sets = {"fed": (DevHalf("fed", frame.iloc[:80].reset_index(drop=True)), features.iloc[:80].reset_index(drop=True),
                      TestHalf("fed", frame.iloc[80:].reset_index(drop=True), kind="test"),
                      features.iloc[80:].reset_index(drop=True))}
adopted, seed = "DirectEval", 13
'''
ORDER = '''pairs = heldout["random"].iloc[:20]
judge = tuned["PairEval"]
a = judge.relevance(list(pairs["context_a"]), list(pairs["response_a"]))
b = judge.relevance(list(pairs["context_b"]), list(pairs["response_b"]))
p_ab, p_ba = judge.prefer(a, b), judge.prefer(OTHER, b)
from evalkit import course
course.check("ch4-order", p_ab=p_ab, p_ba=p_ba)'''
SIZE = '''pairs_needed = NEEDED
from evalkit import course
course.check("ch4-size", pairs_needed=pairs_needed)'''
RANK = '''from scipy import stats
frame = items[SET_ORDER[0]]
rank_rho = stats.spearmanr(scores["PairEval", SET_ORDER[0]],
                           tuned["PairEval"].relevance(list(frame["context"]), list(frame["response"]))).statistic
from evalkit import course
course.check("ch4-rank", rank_rho=rank_rho)'''
BUDGET = '''from evalkit.judges import adapted
from evalkit.stats.halves import DevHalf
dev_half, dev_features, test_half, test_features = adapt_sets[SET_ORDER[0]]
fit = adapted.fit_adapted(DevHalf("fed", dev_half.items.iloc[:50].reset_index(drop=True)),
                          dev_features.iloc[:50].reset_index(drop=True), prior=adopted, seed=seed)
budget_r = float(np.corrcoef(fit.score(test_features), test_half.items["score"])[0, 1])
from evalkit import course
course.check("ch4-budget", budget_r=budget_r)'''


def submission(path: Path, *, order: str = "b, a", needed: str = "560", rank: bool = True, extra: str = "",
               setup_extra: str = "", parameters: str | None = None) -> Path:
    """A tiny chapter-4 notebook: stand-in judge and data (no model), and the four answer cells
    (``parameters``: the source of a cell tagged ``parameters`` before them)."""
    cells = [new_markdown_cell("# 4. PairEval (tiny)"), new_code_cell(SETUP + setup_extra),
             new_markdown_cell("```{exercise}\n:label: ch4-order\n\nShow it.\n```"),
             new_code_cell(ORDER.replace("OTHER, b", order)),
             new_code_cell(SIZE.replace("NEEDED", needed))]
    if parameters is not None:
        cells.insert(1, new_code_cell(parameters, metadata={"tags": ["parameters"]}))
    if rank:
        cells.append(new_code_cell(RANK))
    cells.append(new_code_cell(BUDGET))
    if extra:
        cells.append(new_code_cell(extra))
    notebook = new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".md":
        import jupytext

        path.write_text(jupytext.writes(notebook, fmt="md:myst"))
    else:
        nbformat.write(notebook, path)
    return path


def answer_key(tmp_path: Path) -> Path:
    """The teacher's chapter the checks compute their expected values in: the tiny chapter, answered (its
    ``parameters`` cell lets it run at a parameter set's sizes)."""
    folder = tmp_path / "key"
    submission(folder / "04_pairwise_judge.ipynb", parameters="heldout_pairs = 400")
    return folder


def by_student(rows) -> dict:
    table = {}
    for row in rows:
        table.setdefault(row.student, {})[row.exercise] = row
    return table


def test_grading_scores_each_submission_and_gives_every_bad_one_a_row_with_its_reason(tmp_path):
    folder = tmp_path / "submissions"
    submission(folder / "alice" / "04_pairwise_judge.ipynb")                       # all right
    submission(folder / "grace" / "my-answers.md")                                 # right, as MyST
    submission(folder / "bob" / "04_pairwise_judge.ipynb", order="a, b", needed="300")   # two wrong
    submission(folder / "carol" / "04_pairwise_judge.ipynb", needed='int("many")',  # a raising answer cell
               extra="1 / 0")                                                     # and a raising last cell
    submission(folder / "frank" / "04_pairwise_judge.ipynb", rank=False)          # an answer cell deleted
    (folder / "erin").mkdir()
    (folder / "erin" / "04_pairwise_judge.ipynb").write_text('{"cells": [')        # a broken notebook
    (folder / "erin" / "notes.txt").write_text("my answers are in my head")          # not a notebook
    (folder / ".hidden.ipynb").write_text("not read: a row says so")                # a hidden name
    run = grade(folder, tmp_path / "grades", timeout=240, key=answer_key(tmp_path), trusted=True)
    table = by_student(run.rows)
    assert sorted(table) == [".hidden", "alice", "bob", "carol", "erin", "frank", "grace"]
    assert table[".hidden"][""].status == "refused: hidden name" and table[".hidden"][""].score == 0

    for student in ("alice", "grace"):
        rows = table[student]
        assert {label: row.score for label, row in rows.items()} == {"ch4-order": 1, "ch4-size": 1, "ch4-rank": 1,
                                                                     "ch4-budget": 1}
        assert all(row.status == "graded" and row.public == row.hidden == "passed" for row in rows.values())

    bob = table["bob"]
    assert sum(row.score for row in bob.values()) == 2 and bob["ch4-rank"].score == 1  # loses exactly two points
    order_message = course.check("ch4-order", p_ab=[0.5] * 20, p_ba=[0.7] * 20).failures[0].message
    assert bob["ch4-order"].public == "failed" and bob["ch4-order"].reason.startswith("`p_ab[i] + p_ba[i]`")
    assert order_message.split(";")[0] in bob["ch4-order"].reason
    assert bob["ch4-size"].reason == course.check("ch4-size", pairs_needed=300).failures[0].message
    assert "543" not in bob["ch4-size"].reason and "560" not in bob["ch4-size"].reason

    carol = table["carol"]
    assert carol["ch4-order"].score == carol["ch4-rank"].score == 1 and carol["ch4-size"].score == 0
    assert all(row.status == "cell error" for row in carol.values())
    assert "ZeroDivisionError" in carol["ch4-order"].reason
    assert "is not defined" in carol["ch4-size"].reason and "ValueError" in carol["ch4-size"].reason

    frank = table["frank"]
    assert frank["ch4-rank"].status == "missing cell" and frank["ch4-rank"].score == 0
    assert "answer cell of ch4-rank" in frank["ch4-rank"].reason
    assert frank["ch4-order"].score == frank["ch4-size"].score == 1

    erin = [row for row in run.rows if row.student == "erin"]
    assert [(row.submission, row.status) for row in erin] == [("erin/04_pairwise_judge.ipynb", "not a notebook"),
                                                              ("erin/notes.txt", "not a notebook")]
    assert "could not be read" in erin[0].reason and ".txt file" in erin[1].reason

    import csv

    with run.csv.open() as handle:
        written = list(csv.DictReader(handle))
    assert len(written) == len(run.rows) == 4 * 5 + 2 + 1
    totals = {(r["student"], r["chapter"]): float(r["score"]) for r in csv.DictReader(run.totals.open())}
    assert totals[("alice", "04_pairwise_judge")] == 4 and totals[("bob", "04_pairwise_judge")] == 2
    page = run.html.read_text()
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page and "http" not in page
    assert "ZeroDivisionError" in page
    assert "missing cell" in page and page.count("<tr>") >= len(run.rows) + 6


def test_grading_at_a_parameter_sets_sizes_runs_each_submission_with_its_values(tmp_path, monkeypatch):
    """``--params lab``: the set's values follow the parameters cell (the last cell fails unless they do); a
    submission whose parameters cell was deleted gets a row saying so; a misspelt set fails before any run.
    Without ``--params`` each notebook runs with its own values and the key at the chapter's own; a notebook
    whose metadata records a release at a set's sizes is not graded (its metadata never picks the key's)."""
    from evalkit.course.release import with_parameter_set
    from evalkit.book.runner import load_params

    lab = load_params("lab")["notebooks"]["04_pairwise_judge"]["heldout_pairs"]
    folder = tmp_path / "submissions"
    check = f"assert heldout_pairs == {lab}, heldout_pairs"
    submission(folder / "ann" / "04_pairwise_judge.ipynb", parameters="heldout_pairs = 400", extra=check)
    submission(folder / "ben" / "04_pairwise_judge.ipynb", extra="print('no parameters cell')")
    key = tmp_path / "key"  # its ch4-rank data exist only at the lab sizes
    submission(key / "04_pairwise_judge.ipynb", parameters="heldout_pairs = 400",
               extra=f'SET_ORDER = ["fed"] if heldout_pairs == {lab} else ["other"]')
    table = by_student(grade(folder, tmp_path / "lab", timeout=240, params="lab", key=key, trusted=True).rows)
    assert {label: row.score for label, row in table["ann"].items()} == {"ch4-order": 1, "ch4-size": 1,
                                                                        "ch4-rank": 1, "ch4-budget": 1}
    assert all(row.status == "graded" for row in table["ann"].values())
    assert all(row.score == 0 and row.status == "not run" and "cannot run at the 'lab' sizes" in row.reason
               and "parameters" in row.reason
               for row in table["ben"].values()) and len(table["ben"]) == 4

    own = tmp_path / "own"
    submission(own / "ann" / "04_pairwise_judge.ipynb", parameters="heldout_pairs = 400", extra=check)
    released = submission(own / "cy" / "04_pairwise_judge.ipynb", parameters="heldout_pairs = 400", extra=check)
    notebook = with_parameter_set(nbformat.read(released, as_version=4), "04_pairwise_judge", "lab")
    notebook.metadata["evalkit"] = {"chapter": "04_pairwise_judge", "params": "lab"}  # as the lab release has it
    nbformat.write(notebook, released)
    from evalkit.course import sandbox

    monkeypatch.setattr(sandbox, "_DETECTED", {True: None, False: None})  # as on a machine without a sandbox
    with pytest.raises(sandbox.SandboxUnavailable, match="with --trusted"):
        grade(own, tmp_path / "own-grades", timeout=240, key=key)
    run = grade(own, tmp_path / "own-grades", timeout=240, key=key, trusted=True)
    assert run.isolation == "process group only (trusted)"
    as_submitted = by_student(run.rows)
    assert all(row.status == "cell error" and "AssertionError" in row.reason for row in as_submitted["ann"].values())
    # cy's metadata names the lab sizes: the key runs only at the teacher's (--params), so cy is not graded
    assert len(as_submitted["cy"]) == 4 and all(
        row.status == "not graded" and row.score == 0 and "grade with --params lab" in row.reason
        for row in as_submitted["cy"].values())
    with pytest.raises(FileNotFoundError, match="no parameter set 'labb'"):
        grade(folder, tmp_path / "x", params="labb")


def test_a_release_at_lab_size_carries_the_sets_values_after_the_parameters_cell(tmp_path):
    from evalkit.course.release import with_parameter_set
    from evalkit.book.runner import load_params, read_chapter

    (chapter,) = release(tmp_path, only=["04"], params="lab")
    student = nbformat.read(chapter.notebook, as_version=4)
    assert student.metadata["evalkit"]["params"] == "lab"  # the grader runs the key at these sizes
    tags = [cell.metadata.get("tags", []) for cell in student.cells]
    at = next(i for i, t in enumerate(tags) if "parameters" in t)
    assert "injected-parameters" in tags[at + 1] and sum("injected-parameters" in t for t in tags) == 1
    values = {}
    exec(student.cells[at + 1].source, {}, values)
    assert values == load_params("lab")["notebooks"]["04_pairwise_judge"]
    assert "injected-parameters" in chapter.markdown.read_text()  # the MyST copy keeps the cell and its tag
    again = with_parameter_set(student, "04_pairwise_judge", "smoke")  # a second set replaces the first
    assert sum("injected-parameters" in c.metadata.get("tags", []) for c in again.cells) == 1
    assert "bootstrap = 100" in again.cells[at + 1].source
    book = read_chapter(ROOT / "notebooks" / "01_dataset_building.md")
    assert with_parameter_set(book, "01_dataset_building", "lab") is book  # lab changes nothing there
    with pytest.raises(ValueError, match="no cell tagged 'parameters'"):
        with_parameter_set(nbformat.v4.new_notebook(cells=[new_code_cell("x = 1")]), "04_pairwise_judge", "lab")


def test_submissions_are_named_by_their_folder_or_their_file(tmp_path):
    folder = tmp_path / "class"
    for path in ("ann/sub/02.ipynb", "ben.ipynb", ".ipynb_checkpoints/x.ipynb", "ann/.x.md", "cid/.keep"):
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text("{}")
    copies = tmp_path / "copies"
    copies.mkdir()
    entries = intake(folder, copies)
    assert [(entry.student, Path(entry.submission).name, entry.refused) for entry in entries] == [
        ("ann", "02.ipynb", ""), ("ben", "ben.ipynb", ""), ("cid", "cid", "no submission")]
    assert entries[0].copy.read_text() == "{}" and entries[0].copy.is_relative_to(copies)


def test_the_course_command_is_wired_into_evalkit(tmp_path, capsys):
    from evalkit.cli.commands import main

    assert main(["course", "grade", str(tmp_path / "nowhere")]) == 2
    assert "no such folder of submissions" in capsys.readouterr().err
    (tmp_path / "class").mkdir()
    (tmp_path / "class" / "ann.txt").write_text("not a notebook")
    assert main(["course", "grade", str(tmp_path / "class"), "--out", str(tmp_path / "grades"), "--timeout", "60",
                 "--trusted"]) == 0  # the sandbox where it starts; without one, trusted (no notebook runs)
    assert "1 students, 1 rows (1 with a problem), isolation: " in capsys.readouterr().out
    assert "The notebooks ran in: " in (tmp_path / "grades" / "grades.html").read_text()
    assert main(["course", "release", "--out", str(tmp_path / "release"), "--only", "04"]) == 0
    assert (tmp_path / "release" / "04_pairwise_judge.zip").is_file()


# --- the book's own solutions pass every check ----------------------------------------------------------

def exercise_cells(stem: str) -> dict[str, tuple[str, list[str]]]:
    """label -> (its answer cell, its solution's code cells), read from the book's chapter."""
    from evalkit.book.runner import read_chapter

    notebook = read_chapter(ROOT / "notebooks" / f"{stem}.md")
    answers = answer_cells(notebook)
    solutions: dict[str, list[str]] = {}
    inside = None
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            if inside and "{solution-end}" in cell.source:
                inside = None
            found = re.search(r"\{solution-start\} (\S+)", cell.source)
            if found:
                inside = found[1]
                solutions[inside] = []
        elif inside:
            solutions[inside].append(cell.source)
    return {label: (notebook.cells[index].source, solutions.get(label, [])) for label, index in answers.items()}


def ch6_env() -> dict:
    """The leaderboard page's ``human_sets`` and ``cards``: an UPHELD-like set (replies in contexts, three
    raters each) and three judges' cards on it."""
    from evalkit.judgecard import FunctionJudge, HumanSet, judge_card

    rng = np.random.default_rng(6)
    truth = rng.normal(size=90)
    ratings = pd.DataFrame([{"item_id": f"u{i}", "rater": f"r{r}", "content": truth[i] + rng.normal(scale=0.8)}
                            for i in range(90) for r in range(3)])
    items = pd.DataFrame({"item_id": [f"u{i}" for i in range(90)], "group": [f"c{i // 3}" for i in range(90)],
                          "half": "test", "context": [[f"context {i // 3}"] for i in range(90)],
                          "history": [[("user", f"context {i // 3}")] for i in range(90)],
                          "response": [" ".join(["word"] * (1 + i % 7)) for i in range(90)], "reference": "ref",
                          "dataset": "upheld-main"})
    items["content"] = ratings.groupby("item_id", sort=False)["content"].mean().to_numpy()
    main = HumanSet("upheld-main", items, ("content",), ratings, "")
    noise = {"encoder": 1.5, "paireval:smoke": 1.0}
    judges = {"length": FunctionJudge("length", lambda frame: frame["response"].str.split().str.len().to_numpy(float)),
              **{name: FunctionJudge(name, lambda frame, s=scale: truth[frame.index.to_numpy()]
                                     + np.random.default_rng(int(s * 10)).normal(scale=s, size=len(frame)))
                 for name, scale in noise.items()}}
    cards = {name: judge_card(judge, [main], half="all", bootstrap=0) for name, judge in judges.items()}
    return {"human_sets": {"upheld-main": main}, "cards": cards}


def chapter_stand_in(stem: str, monkeypatch) -> dict:
    """What each chapter's cells above its exercises define, on stand-in data (no model)."""
    from evalkit.upheld import agreement
    from evalkit.upheld import ensemble
    from evalkit.stats import proportion
    from evalkit.upheld.release import LABEL_NAMES, aggregate_scores
    from evalkit.userproxy import realism

    common = {"np": np, "pd": pd}
    if stem.startswith("00"):
        return {**common, **ch0_env(), "results": [SimpleNamespace(probs={"Yes": 0.6, "No": 0.4})] * 8}
    if stem.startswith("01"):
        env = ch1_env()
        aggregate = aggregate_scores(env["main"].labels).set_index("model").sort_values("content")
        return {**common, **env, "aggregate": aggregate, "aggregate_scores": aggregate_scores}
    if stem.startswith("02"):
        env = ch2_env()
        summary = agreement.agreement_summary(env["labels"], LABEL_NAMES, repeats=5, seed=13)
        return {**common, **env, "agreement": agreement, "summary": summary}
    if stem.startswith("03"):
        return {**common, **ch3_env(), "ensemble": ensemble, "n_splits": 3}
    if stem.startswith("04"):
        return {**common, **ch4_env(), **ch4_adapt_env(), "proportion": proportion, "heldout_pairs": 400}
    if stem.startswith("06"):
        return {**common, **ch6_env()}
    return {**common, **ch5_env(monkeypatch), "realism": realism}


@pytest.mark.parametrize("stem", [path.stem for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.md"))])
def test_the_books_solutions_pass_every_public_and_hidden_check(stem, monkeypatch):
    """Each exercise's answer cell, then its solution's code as the chapter has it, run on stand-in data for
    what the chapter computes above: before the solution the check says there is no answer yet; after it,
    every public and hidden check passes."""
    cells = exercise_cells(stem)
    assert sorted(cells) == sorted(item.label for item in course.chapter_exercises(stem))
    env = chapter_stand_in(stem, monkeypatch)
    for label, (answer, solution) in cells.items():
        exec(compile(answer, f"{stem}:{label}:answer", "exec"), env)
        before = run_exercise(exercise(label), {}, env, hidden=True)
        assert "no answer yet" in before.message(), (label, before.message())
        assert solution, label
        for number, code in enumerate(solution):
            exec(compile(code, f"{stem}:{label}:solution{number}", "exec"), env)
        after = run_exercise(exercise(label), {}, env, hidden=True)
        assert after.passed, after.message()
        # as the grader checks it: the answers as data (encoded in the kernel, decoded outside), the chapter's
        # variables without them
        item = exercise(label)
        given = {name: decode(encode(env[name])) for name in item.answers}
        rest = {key: value for key, value in env.items() if key not in item.answers}
        graded = run_exercise(item, given, rest, hidden=True)
        assert graded.passed, graded.message()
