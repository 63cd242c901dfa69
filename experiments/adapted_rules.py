"""Which penalty rule should chapter 4's adapted judge use: the one-standard-error rule or the minimum-error rule?

Rule, fixed before the run (the brief's text, verbatim):

    - Data: chapter 4's six sets at the book's full size (`notebooks/params/full.yml` or however
      `evalkit.book.runner.load_params("full")` gives the chapter's parameters), the same dev halves
      (`evalkit.stats.halves.split_meta_eval` as the chapter calls it), the same features the chapter builds on
      the dev half (`pe.table1.adaptation_features` with the chapter's FEATURE_METHODS and wide readers, the dev
      scores of the chapter's candidates, baseline scores). Reuse the chapter's code paths exactly (read the
      notebook's set-up and the cells "Which judge? Chosen on the dev halves" and "Learning from people's
      labels"); the trained judges are cached (`pe.train_judge(recipe, ...)` loads from the cache at
      ~/.cache/evalkit when present — do not retrain if avoidable; if training would be needed, say so and stop).
    - Nested evaluation on each set's dev half only: split the dev half in two parts by whole context groups
      (seeded; 5 split seeds), fit each rule on one part (all its items) and predict the other part, both
      directions; per set, the Pearson r between the out-of-part predictions and the human scores, averaged over
      directions and split seeds; the six-set mean per rule. Also report the same at k = 25 labels drawn from the
      fitting part (20 seeded draws), to check that the minimum-error rule does no harm with few labels.
    - Paired comparison: minimum-error minus one-SE, six-set mean difference, with a bootstrap interval that
      resamples whole context groups within each set (use the kit's `evalkit.stats` engine, e.g.
      `mean_correlation_difference` on the pooled out-of-part predictions for one split seed per resample, or a
      clear equivalent; say exactly what you did).
    - Adopt the minimum-error rule ONLY if, at k = all, its interval for the difference lies above 0 AND at
      k = 25 its difference's interval does not lie below 0. Otherwise keep the one-SE rule.

Question: chapter 4's adapted judge (:mod:`evalkit.judges.adapted`) is a ridge over the features of the judges the
kit already has, shrunk toward the zero-shot judge the dev halves adopt; its penalty alpha is chosen among
:data:`~evalkit.judges.adapted.ALPHAS` by the one-standard-error rule over folds of whole context groups
(the baseline, pinned: ``adapted.one_standard_error_choice``, the largest alpha whose out-of-fold squared error is
within one standard error of the smallest). The candidate is the minimum-error rule
(``adapted.minimum_error_choice``: the alpha with the smallest out-of-fold mean squared error; ties go to the
larger alpha). Everything else of the fit (folds, standardisation, closed-form solve, fall-back below
``MIN_LABELS`` labels or three groups) is the kit's own: ``fit_adapted`` with the rule as its ``rule``.

Data it may see: the **dev** halves of the six Table-1 sets only (``split_meta_eval``; each test half is dropped
the moment it is split off, and nothing is computed on it). The features are the chapter's, built by the
chapter's calls at the book's full size (``params/full.yml`` overrides nothing; the chapter's parameters cell
gives ``large_encoder = True``, ``comparisons = 3``, ``runs = 5``, ``pool_size = 8``, ``seed = 13``): the dev
scores of the chapter's five candidates, BLEU-2 and BERTScore where the set has references, MiniLM's and mpnet's
cosine over the last three turns, and the six text features. The trained judges (the book recipe, pinned below
as ``BASELINE``: what ``RECIPES["book"]`` was when the experiment ran) load from the cache; the run records
whether each did.

How the numbers are made. Per set and split seed (5; ``numpy.random.default_rng([13, s])`` permutes the dev
half's sorted context groups, the first half of them is part A), each rule is fitted on part A and scores part B,
and on B scoring A; a set's r is the Pearson r of the out-of-part scores with people's, per direction, averaged
over the 2 directions and 5 split seeds (k = all), and also over 20 seeded draws of 25 items of the fitting part
(k = 25; the same draws and fold seeds for both rules). The interval for minimum-error minus one-SE is the
kit's grouped percentile bootstrap (:func:`evalkit.stats.bootstrap.group_resamples`,
:func:`evalkit.stats.bootstrap.percentile_interval`, 1,000 resamples, set ``i`` seeded ``13 + i`` as
``mean_correlation_difference`` seeds its sets) applied to exactly that statistic: each resample draws whole
context groups of a set's dev half with replacement, recomputes every direction's (and draw's) Pearson r on the
resampled items of its scored part (a repeated item weighs as often as it was drawn), averages the per-row
differences as the point estimate does, and averages over the six sets. (``mean_correlation_difference`` itself
takes one 1-D score as its second argument and a single pooled sample per set; the statistic here is a mean of
per-part correlations of both rules over 10 or 200 rows, so the engine's resampling is applied to it directly.)
As a cross-check the record also holds ``mean_correlation_difference`` on split seed 0's pooled out-of-part
scores at k = all (each direction's scores standardised within its scored part, since a judge that fell back
scores on the prior's scale); it does not decide.

    EVALKIT_DATA_DIR=../shared/data .venv/bin/python experiments/adapted_rules.py --json experiments/results/adapted_rules.json
    EVALKIT_DATA_DIR=../shared/data .venv/bin/python experiments/adapted_rules.py --smoke

**Result (2026-12-05, alone on two cores, 63 s: features 24.5 s from cached judges and stored embeddings,
nested fits and bootstrap 38.2 s):** the dev halves' choice of the prior is DirectEval (as in the chapter).
Dev halves (6 sets, n = 1,262 items), six-set mean Pearson r of the out-of-part scores, one-SE / minimum-error:
k = all 0.379 [0.329, 0.423] / 0.441 [0.392, 0.481], minimum-error minus one-SE +0.062 [+0.035, +0.089];
k = 25 0.341 [0.291, 0.386] / 0.352 [0.309, 0.387], +0.011 [-0.007, +0.031]. Per set at k = all (one-SE /
minimum-error, difference; share of fits that fell back to DirectEval): dailydialog-grade 0.211 / 0.340, +0.128
[+0.051, +0.216] (n = 148; 1.00 / 0.00), convai2-grade 0.495 / 0.533, +0.038 [+0.010, +0.063] (315; 0.50 / 0.00),
dailydialog-zhao 0.348 / 0.372, +0.025 [-0.015, +0.069] (351; 0.50 / 0.00), personachat-usr 0.453 / 0.520,
+0.067 [+0.006, +0.127] (115; 0.30 / 0.00), topicalchat-usr 0.678 / 0.714, +0.036 [+0.011, +0.067] (144;
0.00 / 0.00), fed 0.090 / 0.168, +0.078 [-0.037, +0.179] (189; 0.90 / 0.20). At k = 25: dailydialog-grade
0.215 / 0.221, +0.006 [-0.033, +0.055]; convai2-grade 0.478 / 0.471, -0.007 [-0.021, +0.007]; dailydialog-zhao
0.315 / 0.291, -0.024 [-0.044, -0.001]; personachat-usr 0.407 / 0.447, +0.040 [-0.030, +0.120]; topicalchat-usr
0.549 / 0.623, +0.074 [+0.041, +0.108]; fed 0.081 / 0.059, -0.022 [-0.096, +0.044]. Cross-check
(``mean_correlation_difference``, split seed 0 pooled, k = all): +0.048 [+0.025, +0.072]. **By the rule: adopt
the minimum-error rule** (k = all interval above 0; k = 25 interval not below 0), applied in
``evalkit.judges.adapted`` (``fit_adapted`` calls ``minimum_error_choice``); with 25 labels it is lower on
dailydialog-zhao by a per-set interval.
"""
from __future__ import annotations

import math
import time
import warnings
from dataclasses import asdict
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

import _common as lab
from evalkit import paireval as pe
from evalkit.judges import adapted
from evalkit.paireval.recipes import EncoderRecipe, JudgeRecipe, LoraRecipe, ReaderRecipe
from evalkit.stats import mean_correlation_difference
from evalkit.stats.bootstrap import group_resamples, percentile_interval
from evalkit.stats.halves import DevHalf

BASELINE = JudgeRecipe("book", EncoderRecipe(
    pairs=1600, batch_size=16, learning_rate=5e-05, in_batch_negatives=1.0, context_turns=1, max_tokens=64,
    freeze_embeddings=True, hard_share=0.5, validation_pairs=400, curve_points=4, second_corpus_share=0.0,
    copy_share=0.25, copy_prefix_share=0.5, direct_copy_share=0.0, head_hidden=64, warmup_share=0.1, domains=(),
    domain_share=0.0, backbone="minilm"),
    LoraRecipe(pairs=96, steps=24, batch_size=4, direct_batch_size=8, learning_rate=0.002, r=16, alpha=8,
               hard_share=0.5, accumulation=1, epochs=None),
    seed=13, reader=ReaderRecipe(width=64, hidden=64, max_tokens=48, epochs=2, batch_size=32, learning_rate=0.001,
                                 warmup_share=0.1, curve_points=4))
"""The book recipe when the experiment ran (its judges are the chapter's, loaded from the cache)."""

RULE = __doc__.split("Rule, fixed before the run (the brief's text, verbatim):", 1)[1].split("Question:", 1)[0]
RULE = " ".join(line.strip() for line in RULE.strip().splitlines())
RULES = ("one-SE", "minimum-error")
SPLIT_SEEDS = (0, 1, 2, 3, 4)
SMALL_K = 25
DRAWS = 20
CHAPTER = Path(__file__).resolve().parent.parent / "notebooks" / "04_pairwise_judge.md"


CHOICES: dict[str, Callable[[Mapping[float, np.ndarray]], float]] = {
    "one-SE": adapted.one_standard_error_choice, "minimum-error": adapted.minimum_error_choice}


def chapter_parameters(smoke: bool) -> dict:
    """Chapter 4's parameters as ``load_params("full")`` runs it (the parameters cell, then the set's overrides);
    smaller comparison sizes at smoke size."""
    from evalkit.book.runner import chapter_parameter_values, load_params

    params = dict(chapter_parameter_values(CHAPTER))
    full = load_params("full")
    params.update(full.get("defaults") or {})
    params.update((full.get("notebooks") or {}).get(CHAPTER.stem) or {})
    if smoke:
        params.update(comparisons=2, runs=2, pool_size=4, bootstrap=200)
    return params


def part_masks(groups: Sequence[object], split_seed: int, seed: int) -> np.ndarray:
    """True for the items of part A: the first half of the dev half's context groups in a seeded order."""
    keys = pd.Series(list(groups), dtype=object).astype(str)
    distinct = sorted(keys.unique())
    order = np.random.default_rng([seed, split_seed]).permutation(len(distinct))
    first = {distinct[j] for j in order[: len(distinct) // 2]}
    return keys.isin(first).to_numpy()


def nested_rows(half: DevHalf, features: pd.DataFrame, *, prior: str, k: int | None, draws: int, seed: int
                ) -> dict[str, list[dict]]:
    """Per rule, one row per (split seed, direction, draw): the scored part's mask, the out-of-part scores, r, the
    penalty chosen and the fitting size."""
    y = half.items["score"].to_numpy(dtype=float)
    groups = list(half.items["group"])
    rows: dict[str, list[dict]] = {rule: [] for rule in RULES}
    for split in SPLIT_SEEDS:
        in_a = part_masks(groups, split, seed)
        for direction, fitting in enumerate((in_a, ~in_a)):
            scored = ~fitting
            positions = np.flatnonzero(fitting)
            if k is None or k >= len(positions):
                picks = [positions]
            else:
                picks = [np.sort(np.random.default_rng([seed, split, direction, draw]).choice(positions, size=k,
                                                                                                replace=False))
                         for draw in range(draws)]
            for draw, chosen in enumerate(picks):
                part = DevHalf(half.name, half.items.iloc[chosen].reset_index(drop=True))
                part_features = features.iloc[chosen].reset_index(drop=True)
                fit_seed = seed + split * 100 + direction * 50 + draw
                for rule in RULES:
                    fit = adapted.fit_adapted(part, part_features, prior=prior, rule=CHOICES[rule], seed=fit_seed)
                    scores = np.full(len(y), np.nan)
                    scores[scored] = fit.score(features.iloc[np.flatnonzero(scored)].reset_index(drop=True))
                    r = float(np.corrcoef(scores[scored], y[scored])[0, 1]) if scored.sum() > 2 else float("nan")
                    rows[rule].append({"split": split, "direction": direction, "draw": draw, "scored": scored,
                                       "scores": scores, "r": r, "alpha": fit.alpha, "k": fit.k})
    return rows


def _weighted_pearson(x: np.ndarray, y: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Pearson's r of each resample (row of ``weights``: how often each item was drawn)."""
    with np.errstate(invalid="ignore", divide="ignore"):  # a resample without an item of the part: NaN
        total = weights.sum(axis=-1, keepdims=True)
        dx = x - (weights * x).sum(axis=-1, keepdims=True) / total
        dy = y - (weights * y).sum(axis=-1, keepdims=True) / total
        return (weights * dx * dy).sum(-1) / np.sqrt((weights * dx * dx).sum(-1) * (weights * dy * dy).sum(-1))


def resampled_r(rows: list[dict], y: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Per resample, the mean over ``rows`` of each row's r on the resampled items of its scored part."""
    values = [_weighted_pearson(row["scores"][row["scored"]], y[row["scored"]], weights[:, row["scored"]])
              for row in rows]
    with warnings.catch_warnings():  # a row with no value in a resample: left out of that resample's mean
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(np.stack(values), axis=0)


def compare(nested: dict[str, dict[str, list[dict]]], dev: dict[str, DevHalf], *, bootstrap: int, seed: int
            ) -> dict:
    """Per set and over the sets: each rule's r (with a grouped bootstrap interval), minimum-error minus one-SE
    with its paired interval (the same resamples for both rules), n, fall-back shares and penalties."""
    per_set, draws_by_rule, draws_diff = {}, {rule: [] for rule in RULES}, []
    for offset, (name, rows) in enumerate(nested.items()):
        y = dev[name].items["score"].to_numpy(dtype=float)
        resamples = group_resamples(list(dev[name].items["group"]), bootstrap=bootstrap, seed=seed + offset)
        weights = np.stack([np.bincount(d, minlength=len(y)) for d in resamples]).astype(float)
        by_rule = {rule: resampled_r(rows[rule], y, weights) for rule in RULES}
        point = {rule: float(np.nanmean([row["r"] for row in rows[rule]])) for rule in RULES}
        difference = by_rule["minimum-error"] - by_rule["one-SE"]
        per_set[name] = {
            **{rule: {"pearson": point[rule], "low_high": percentile_interval(by_rule[rule]),
                      "fell_back": float(np.mean([math.isinf(row["alpha"]) for row in rows[rule]])),
                      "alphas": pd.Series([row["alpha"] for row in rows[rule]]).value_counts().sort_index().to_dict()}
               for rule in RULES},
            "difference": {"value": point["minimum-error"] - point["one-SE"],
                           "low_high": percentile_interval(difference)},
            "n": int(len(y)), "groups": int(pd.Series(dev[name].items["group"]).nunique()),
            "fitting_k": sorted({int(row["k"]) for row in rows["one-SE"]}), "rows": len(rows["one-SE"])}
        for rule in RULES:
            draws_by_rule[rule].append(by_rule[rule])
        draws_diff.append(difference)
    mean = {rule: {"pearson": float(np.mean([per_set[n][rule]["pearson"] for n in per_set])),
                   "low_high": percentile_interval(np.mean(draws_by_rule[rule], axis=0))} for rule in RULES}
    diff = float(np.mean([per_set[n]["difference"]["value"] for n in per_set]))
    low, high = percentile_interval(np.mean(draws_diff, axis=0))
    return {"per_set": per_set, "mean": mean,
            "difference": {"value": diff, "low": low, "high": high, "n": sum(s["n"] for s in per_set.values())}}


def pooled_cross_check(nested: dict[str, dict[str, list[dict]]], dev: dict[str, DevHalf], *, bootstrap: int,
                       seed: int) -> dict:
    """``mean_correlation_difference`` on split seed 0's pooled out-of-part scores (each direction's scores
    standardised within its scored part), whole context groups resampled: a cross-check, not the decision."""
    entries = {}
    for name, rows in nested.items():
        pooled = {}
        for rule in RULES:
            values = np.full(len(dev[name]), np.nan)
            for row in rows[rule]:
                if row["split"] == SPLIT_SEEDS[0]:
                    part = row["scores"][row["scored"]]
                    spread = part.std()
                    values[row["scored"]] = (part - part.mean()) / (spread if spread > 0 else 1.0)
            pooled[rule] = values
        entries[name] = (pooled["minimum-error"], pooled["one-SE"], dev[name].items["score"].to_numpy(dtype=float),
                         list(dev[name].items["group"]))
    result = mean_correlation_difference(entries, bootstrap=bootstrap, seed=seed)
    return {"difference": result.difference, "low": result.low, "high": result.high, "n": result.n}


def features_on_dev(params: dict, *, smoke: bool, data_dir=None, items: int | None = None) -> dict:
    """Chapter 4's dev halves, its dev-half choice of the zero-shot judge and its adaptation features, by the
    chapter's own calls (its set-up, "Which judge? Chosen on the dev halves", "Learning from people's labels")."""
    from evalkit.stats.halves import split_meta_eval
    from evalkit.stats.selection import choose_on_dev
    from evalkit.upheld.metrics import ReferenceMetrics

    seed, device, dtype = params["seed"], params["device"], params["dtype"]
    large_encoder = params["large_encoder"]
    recipe = lab.at_size(BASELINE, smoke)
    if not smoke and pe.RECIPES.get(params["judge_recipe"]) != BASELINE:
        raise RuntimeError("the book recipe is no longer the pinned one: its judges would be trained, not loaded")
    started = time.time()
    data = lab.judge_data(recipe.seed, data_dir)
    on_device = {"device": device, "dtype": dtype}
    training = {"PairEval": pe.train_judge(recipe, data=data, data_dir=data_dir, **on_device),
                "DirectEval": pe.train_judge(recipe, kind="direct", data=data, data_dir=data_dir, **on_device)}
    tuned = {name: pe.EncoderJudge.from_training(run, **on_device) for name, run in training.items()}
    zero_shot = pe.EncoderJudge(turns=recipe.encoder.context_turns, max_tokens=recipe.encoder.max_tokens, **on_device)
    large = (pe.EncoderJudge(pe.encoder.backbone_path("mpnet"), turns=recipe.encoder.context_turns,
                             max_tokens=recipe.encoder.max_tokens, name="encoder:mpnet", **on_device)
             if large_encoder else None)
    candidates = pe.table1.encoder_methods(large=large_encoder)
    reader, reader_run = pe.train_reader(recipe, base=tuned["PairEval"], data=data, data_dir=data_dir, **on_device)
    cache = {**{name: run.from_cache for name, run in training.items()}, "comparative reader": reader_run.from_cache}
    if not smoke and not all(cache.values()):
        raise RuntimeError(f"a judge was trained, not loaded from the cache: {cache}")

    dev = {}
    for name in pe.meta_eval_set_names():
        loaded = pe.load_meta_eval_set(name, data_dir=data_dir)
        dev_half, _ = split_meta_eval(loaded.items, name)  # the test half is dropped unread
        dev[name] = dev_half.sample(items if items is not None else params["meta_items"], seed=seed)
    set_order = list(dev)
    pool = pe.data.corpus_comparisons(data.validation, params["pool_size"], seed=seed)
    dev_scores = {}
    for name, half in dev.items():
        by_method, _ = pe.table1.encoder_method_scores(half.items, zero_shot=zero_shot, paireval=tuned["PairEval"],
                                                       directeval=tuned["DirectEval"], pool=pool,
                                                       n=params["comparisons"], runs=params["runs"], seed=seed,
                                                       large=large, reader=reader)
        dev_scores.update({(method, name): values for method, values in by_method.items()})
    selection = choose_on_dev(dev, dev_scores, candidates, bootstrap=params["bootstrap"], seed=seed,
                              question="Which encoder judge does the chapter adopt?")

    reference_metrics = ReferenceMetrics(device=device)
    wide_readers = {f"{label} cosine, last 3 turns": pe.EncoderJudge(path, turns=3,
                                                                     max_tokens=recipe.encoder.max_tokens,
                                                                     name=f"{label}, 3 turns")
                    for label, path in (("MiniLM", None), ("mpnet", pe.encoder.backbone_path("mpnet")))
                    if large_encoder or label == "MiniLM"}
    methods = ["Length", "BLEU-2", "BERTScore", *candidates]
    feature_methods = [m for m in methods if m != "Length"]
    features = {}
    for name in set_order:
        dev_methods = {m: dev_scores[m, name] for m in candidates}
        dev_methods.update(pe.table1.baseline_scores(dev[name].items, reference_metrics=reference_metrics))
        features[name] = pe.table1.adaptation_features(
            dev[name].items, {m: v for m, v in dev_methods.items() if m in feature_methods}, wide_readers)
    return {"dev": dev, "features": features, "selection": selection, "cache": cache,
            "seconds": time.time() - started}


def run(*, smoke: bool = False, data_dir=None, items: int | None = None) -> dict:
    """Build the chapter's dev-half features, evaluate both rules nested on each dev half at k = all and
    k = 25, and decide by the rule; the record."""
    started = time.time()
    params = chapter_parameters(smoke)
    seed, bootstrap = params["seed"], params["bootstrap"]
    items = items if items is not None else (12 if smoke else None)
    built = features_on_dev(params, smoke=smoke, data_dir=data_dir, items=items)
    dev, features, selection = built["dev"], built["features"], built["selection"]
    prior = selection.choice

    small_k, draws = (2, 2) if smoke else (SMALL_K, DRAWS)
    fitting = time.time()
    nested = {"all": {name: nested_rows(dev[name], features[name], prior=prior, k=None, draws=1, seed=seed)
                      for name in dev},
              str(SMALL_K): {name: nested_rows(dev[name], features[name], prior=prior, k=small_k, draws=draws,
                                               seed=seed) for name in dev}}
    results = {budget: compare(rows, dev, bootstrap=bootstrap, seed=seed) for budget, rows in nested.items()}
    cross_check = pooled_cross_check(nested["all"], dev, bootstrap=bootstrap, seed=seed)
    fitting = time.time() - fitting

    whole, few = results["all"]["difference"], results[str(SMALL_K)]["difference"]
    adopt = bool(whole["low"] > 0 and not few["high"] < 0)
    choice = "minimum-error" if adopt else "one-SE"
    decision = {"question": "Does the minimum-error penalty rule beat the one-SE rule (dev halves, nested)?",
                "rule": RULE, "candidates": list(RULES), "choice": choice,
                "dev": [{"set": name, "candidate": rule, "budget": budget,
                         "pearson": result["per_set"][name][rule]["pearson"], "n": result["per_set"][name]["n"]}
                        for budget, result in results.items() for name in dev for rule in RULES]}
    return {"experiment": "adapted_rules.py", "question": __doc__.strip().splitlines()[0], "smoke": smoke,
            "rule": RULE, "decision": decision, "adopted": choice, "baseline": "one-SE",
            "pinned_recipe": asdict(lab.at_size(BASELINE, smoke)), "prior": prior,
            "prior_selection": selection.as_record(), "cache": built["cache"],
            "features": {name: list(frame.columns) for name, frame in features.items()},
            "dev_items": {name: len(half) for name, half in dev.items()},
            "split_seeds": list(SPLIT_SEEDS), "small_k": small_k, "draws": draws, "bootstrap": bootstrap,
            "results": results, "cross_check_pooled_split0_all": cross_check,
            "seconds": {"features": round(built["seconds"], 1), "nested_fits_and_bootstrap": round(fitting, 1),
                        "total": round(time.time() - started, 1)}}


def summary(result: dict) -> str:
    """The lines a reader checks: per set and mean r per rule and budget, the differences, the decision."""
    lines = [result["question"], f"prior (zero-shot judge adopted on the dev halves): {result['prior']}; "
             f"cache: {result['cache']}"]
    for budget, res in result["results"].items():
        lines.append(f"k = {budget}:")
        for name, s in res["per_set"].items():
            d = s["difference"]
            lines.append(f"  {name:18s} n = {s['n']:4d}  one-SE {s['one-SE']['pearson']:.3f} (fell back "
                         f"{s['one-SE']['fell_back']:.2f})  min-error {s['minimum-error']['pearson']:.3f} (fell back "
                         f"{s['minimum-error']['fell_back']:.2f})  diff {d['value']:+.3f} "
                         f"[{d['low_high'][0]:+.3f}, {d['low_high'][1]:+.3f}]")
        m, d = res["mean"], res["difference"]
        lines.append(f"  mean: one-SE {m['one-SE']['pearson']:.3f} [{m['one-SE']['low_high'][0]:.3f}, "
                     f"{m['one-SE']['low_high'][1]:.3f}], min-error {m['minimum-error']['pearson']:.3f} "
                     f"[{m['minimum-error']['low_high'][0]:.3f}, {m['minimum-error']['low_high'][1]:.3f}]; "
                     f"min-error - one-SE {d['value']:+.3f} [{d['low']:+.3f}, {d['high']:+.3f}] (n = {d['n']})")
    c = result["cross_check_pooled_split0_all"]
    lines.append(f"cross-check (mean_correlation_difference, split seed 0, pooled, k = all): {c['difference']:+.3f} "
                 f"[{c['low']:+.3f}, {c['high']:+.3f}] (n = {c['n']})")
    lines.append(f"adopted: {result['adopted']}; seconds: {result['seconds']}")
    return "\n".join(lines)


if __name__ == "__main__":
    lab.main(run, __doc__, show=summary)
