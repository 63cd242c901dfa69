"""What the validation-pair experiments share: the checks, training a candidate, and the record of a run.

The checks are built from data no judge trains on: DailyDialog validation pairs with random and look-alike
negatives (:func:`evalkit.paireval.training_data.validation_pairs`), same-conversation copy checks (:func:`copy_check`) and
pairs from Topical-Chat's selection part. The six Table-1 sets and the attack suite are never scored here.
An accuracy is a :func:`evalkit.stats.proportion` (ties count half); a candidate minus the baseline on the same
pairs is a paired bootstrap of the mean difference (:func:`evalkit.stats.summarise`, 2,000 resamples, seed 0 —
the resampling the recorded results used).

Not an experiment: ``tests/test_experiments.py`` runs every other script of this folder.
"""
from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict, replace
from functools import lru_cache
from typing import Any, Callable

import numpy as np
import pandas as pd

from evalkit import paireval as pe
from evalkit import stats
from evalkit.paireval.data import COPY_FORMS, copy_reply, training_pairs
from evalkit.paireval.training_data import JudgeData, SecondCorpus, second_corpus as _second_corpus
from evalkit.paireval.recipes import JudgeRecipe

BOOTSTRAP = 2000


SMOKE_SIZES = {"pairs": 32, "validation_pairs": 16, "curve_points": 1}
"""Training sizes at smoke size: two steps of the recipe's batch, a two-point learning curve (below
``RECIPES["smoke"]``'s 64/48: these scripts train up to five judges each, and smoke only proves they run)."""


def at_size(recipe: JudgeRecipe, smoke: bool) -> JudgeRecipe:
    """``recipe`` as pinned, or at :data:`SMOKE_SIZES` (every other field kept)."""
    if not smoke:
        return recipe
    return replace(recipe, name=f"{recipe.name}-smoke", encoder=replace(recipe.encoder, **SMOKE_SIZES))


def check_size(smoke: bool) -> int:
    """Pairs per check: 400 as recorded, 16 at smoke size (smoke only proves a script runs; scoring the checks
    was a third of a smoke run's time at 40)."""
    return 16 if smoke else 400


@lru_cache(maxsize=4)
def judge_data(seed: int, data_dir: Any = None) -> JudgeData:
    """:func:`evalkit.paireval.judge_data`, loaded once per process (the experiments do not modify it)."""
    return pe.judge_data(seed=seed, data_dir=data_dir)


@lru_cache(maxsize=4)
def second_corpus(seed: int, data_dir: Any = None) -> SecondCorpus:
    """:func:`evalkit.paireval.training_data.second_corpus`, loaded once per process."""
    return _second_corpus(seed=seed, data_dir=data_dir)


@lru_cache(maxsize=1)
def zero_shot() -> pe.EncoderJudge:
    """The untrained encoder, a reference every table shows."""
    return pe.EncoderJudge()


def copy_check(dialogues: list[list[str]], n: int, seed: int, form: str | None = None) -> pd.DataFrame:
    """``n`` same-conversation pairs: a context and its real reply (A) against the same context with a copy
    reply (B) of ``form`` (None: each pair's form drawn at random)."""
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n):
        dialogue = dialogues[int(rng.integers(len(dialogues)))]
        cut = int(rng.integers(1, len(dialogue)))
        context, reply = list(dialogue[:cut]), dialogue[cut]
        shape = form or COPY_FORMS[int(rng.integers(len(COPY_FORMS)))]
        rows.append((context, reply, context, copy_reply(context, reply, shape), "A", "copy"))
    return pd.DataFrame(rows, columns=["context_a", "response_a", "context_b", "response_b", "better", "negative"])


def validation_checks(data: JudgeData, corpus: SecondCorpus | None, seed: int, n: int, *,
                      copy_forms: tuple[str | None, ...] = ("prefix", "parrot")) -> dict[str, pd.DataFrame]:
    """The checks, ``n`` pairs each: DailyDialog random and look-alike, one copy check per form (None: the
    forms mixed) and, with ``corpus``, Topical-Chat selection pairs."""
    checks = {"DailyDialog validation, random": pe.training_data.validation_pairs(data, n, 0.0, seed),
              "DailyDialog validation, look-alike": pe.training_data.validation_pairs(data, n, 1.0, seed)}
    for offset, form in enumerate(copy_forms):
        checks[f"copy check, {form or 'either'} form"] = copy_check(data.validation, n, seed + 2 + offset, form)
    if corpus is not None:
        checks["Topical-Chat selection, random"] = training_pairs(corpus.selection, n, seed=seed + 1)
    return checks


def train(recipe: JudgeRecipe, data: JudgeData, *, kind: str = "pairwise",
          data_dir: Any = None) -> tuple[pe.EncoderJudge, dict[str, Any]]:
    """The judge of ``recipe`` (trained or from the cache) and how long it took."""
    started = time.time()
    run = pe.train_judge(recipe, kind=kind, data=data, data_dir=data_dir)
    judge = pe.EncoderJudge.from_training(run)
    return judge, {"training_seconds": round(run.seconds, 1), "reused": run.from_cache,
                   "pairs_per_second": round(run.pairs_per_second, 2), "wall_seconds": round(time.time() - started, 1),
                   "curve": [round(point["accuracy"], 3) for point in run.curve]}


def score(judges: dict[str, pe.EncoderJudge], checks: dict[str, pd.DataFrame]) -> dict[tuple[str, str], np.ndarray]:
    """Per judge and check: 1, 0 or 0.5 (a tie) for each pair."""
    return {(name, check): pe.encoder.pair_accuracy(judge, frame) for name, judge in judges.items()
            for check, frame in checks.items()}


def paired(candidate: np.ndarray, baseline: np.ndarray) -> dict[str, float]:
    """``candidate - baseline`` accuracy on the same pairs with a paired 95% bootstrap interval."""
    result = stats.summarise(np.asarray(candidate) - np.asarray(baseline), bootstrap=BOOTSTRAP, seed=0)
    return {"difference": result["mean"], "low": result["boot_low"], "high": result["boot_high"], "n": result["n"]}


def record(script: str, doc: str, *, smoke: bool, baseline: str, recipes: dict[str, JudgeRecipe],
           correct: dict[tuple[str, str], np.ndarray], adopted: list[str], candidates: list[str] | None = None,
           **extra: Any) -> dict[str, Any]:
    """The record of a run: each judge's accuracy per check (with its Wilson interval and n), each candidate
    minus the baseline per check, and what the rule adopted (empty: the baseline stays). ``candidates``
    defaults to the names of ``recipes``, the baseline first."""
    judges = list(dict.fromkeys(name for name, _ in correct))
    checks = list(dict.fromkeys(check for _, check in correct))
    return {"experiment": script, "question": doc.strip().splitlines()[0], "smoke": smoke, "baseline": baseline,
            "candidates": candidates or list(recipes),
            "recipes": {name: asdict(recipe) for name, recipe in recipes.items()},
            "accuracy": {name: {check: stats.proportion(correct[name, check]).as_dict() for check in checks}
                         for name in judges},
            "paired": {name: {check: paired(correct[name, check], correct[baseline, check]) for check in checks}
                       for name in judges if name not in (baseline, "zero-shot")},
            "adopted": adopted, **extra}


def describe(result: dict[str, Any]) -> str:
    """The record as the lines a reader checks: accuracies, paired differences, the decision."""
    table = pd.DataFrame({name: {check: value["value"] for check, value in checks.items()}
                          for name, checks in result["accuracy"].items()}).T
    lines = [result["question"], table.round(3).to_string()]
    for name, checks in result["paired"].items():
        for check, gap in checks.items():
            lines.append(f"{name} - {result['baseline']}, {check}: {gap['difference']:+.3f} "
                         f"[{gap['low']:+.3f}, {gap['high']:+.3f}] (n = {gap['n']})")
    lines.append(f"adopted: {', '.join(result['adopted']) or 'none (the baseline stays)'}")
    return "\n".join(lines)


def dev_halves(items: int | None, data_dir: Any = None) -> dict[str, Any]:
    """The dev halves of the six Table-1 sets (:mod:`evalkit.stats.halves`), ``items`` of each (None: all) — the only
    human-scored data the dev-half experiments may see."""
    from evalkit.stats.halves import meta_eval_halves

    return {name: meta_eval_halves(name, data_dir=data_dir)[0].sample(items, seed=13)
            for name in pe.meta_eval_set_names()}


def dev_setup(recipe: JudgeRecipe, *, smoke: bool, data_dir: Any = None,
              items: int | None = None) -> tuple[JudgeData, dict[str, Any], list, dict[str, pd.DataFrame]]:
    """What the dev-half scripts share: the judge data, the dev halves (``items`` each; 12 at smoke size,
    else all), the comparison pool (4 / 8 DailyDialog validation conversations, seed 13) and the constraint's
    validation checks (random and look-alike, :func:`check_size` pairs)."""
    items = items if items is not None else (12 if smoke else None)
    data = judge_data(recipe.seed, data_dir)  # built once per process: the scripts only read it
    pool = pe.data.corpus_comparisons(data.validation, 4 if smoke else 8, seed=13)
    checks = {kind: pe.training_data.validation_pairs(data, check_size(smoke), share, recipe.seed)
              for kind, share in (("random", 0.0), ("look-alike", 1.0))}
    return data, dev_halves(items, data_dir), pool, checks


def dev_scores(judge: pe.EncoderJudge, dev: dict[str, Any], pool: list, *, kind: str = "pairwise",
               smoke: bool) -> dict[str, np.ndarray]:
    """A judge's scores on each dev half as chapter 4 scores Table 1: a PairEval judge (``kind="pairwise"``)
    by comparison (3 comparison examples x 5 runs from ``pool``; 2 x 2 at smoke size; seed 13), a DirectEval
    judge (``"direct"``) item by item."""
    if kind not in ("pairwise", "direct"):
        raise ValueError(f"kind must be 'pairwise' or 'direct', not {kind!r}")
    if kind == "direct":
        return {name: pe.scoring.directeval_scores(list(half.items["context"]), list(half.items["response"]), judge)
                for name, half in dev.items()}
    return {name: pe.table1.judge_scores(half.items, judge, pool, n=2 if smoke else 3, runs=2 if smoke else 5,
                                         seed=13, direct=False)["paireval"] for name, half in dev.items()}


def train_and_score(recipes: dict[str, JudgeRecipe], data: JudgeData, dev: dict[str, Any], pool: list,
                    checks: dict[str, pd.DataFrame], *, smoke: bool, data_dir: Any = None,
                    kind: str = "pairwise") -> tuple[dict, dict, dict]:
    """Train each recipe as a ``kind`` judge (cached), score the dev halves (:func:`dev_scores`) and the
    validation ``checks`` (none: an empty constraint): (scores keyed (label, set), constraint, timing)."""
    scores, constraint, timing = {}, {}, {}
    for label, recipe in recipes.items():
        started = time.time()
        training = pe.train_judge(recipe, kind=kind, data=data, data_dir=data_dir)
        judge = pe.EncoderJudge.from_training(training)
        timing[label] = {"training_seconds": round(training.seconds, 1), "reused": training.from_cache,
                         "wall_seconds": round(time.time() - started, 1)}
        for name, values in dev_scores(judge, dev, pool, kind=kind, smoke=smoke).items():
            scores[label, name] = values
        if checks:
            constraint[label] = check_accuracy(judge, checks)
    return scores, constraint, timing


def check_accuracy(judge: Any, checks: dict[str, pd.DataFrame]) -> dict[str, float]:
    """The judge's accuracy on each validation check (ties count half)."""
    return {check: float(np.mean(pe.encoder.pair_accuracy(judge, pairs))) for check, pairs in checks.items()}


def accuracy_drop(constraint: dict[str, dict[str, float]], reference: str, other: str) -> dict[str, float]:
    """Per check, how much lower ``other``'s validation accuracy is than ``reference``'s.

    >>> accuracy_drop({"a": {"random": 0.9}, "b": {"random": 0.85}}, "a", "b")["random"] > 0.049
    True
    """
    return {check: constraint[reference][check] - constraint[other][check] for check in constraint[reference]}


def decide(dev: dict[str, Any], scores: dict, constraint: dict[str, dict[str, float]], baseline: str,
           candidate: str, *, smoke: bool, question: str) -> dict[str, Any]:
    """The dev-half scripts' rule: ``candidate`` is adopted when :func:`evalkit.stats.selection.choose_on_dev` picks it
    (paired interval over the dev halves excluding 0) and its validation accuracy drops by no more than 0.05 on
    any check; the record's common part."""
    from evalkit.stats.selection import choose_on_dev

    decision = choose_on_dev(dev, scores, [baseline, candidate], bootstrap=200 if smoke else 1000, seed=13,
                             question=question)
    drops = accuracy_drop(constraint, baseline, candidate)
    adopted = decision.choice == candidate and max(drops.values()) <= 0.05
    return {"decision": decision.as_record(), "sentence": decision.sentence(), "validation_accuracy": constraint,
            "validation_drop": drops, "adopted": candidate if adopted else baseline,
            "dev_items": {name: len(half) for name, half in dev.items()}}


def compare_recipes(recipes: dict[str, JudgeRecipe], *, smoke: bool, question: str, data_dir: Any = None,
                    items: int | None = None) -> dict[str, Any]:
    """The whole run of a two-recipe dev-half script: train both (cached; the baseline first), score the dev
    halves, decide by the rule (:func:`decide`); the record, with each recipe's seconds under ``timing``."""
    (baseline, first), (candidate, _) = recipes.items()
    data, dev, pool, checks = dev_setup(first, smoke=smoke, data_dir=data_dir, items=items)
    scores, constraint, timing = train_and_score(recipes, data, dev, pool, checks, smoke=smoke, data_dir=data_dir)
    record = decide(dev, scores, constraint, baseline, candidate, smoke=smoke, question=question)
    return {**record, "timing": timing}


def decision_lines(result: dict[str, Any]) -> str:
    """A dev-half decision's record as printed: its sentence, then the rest as JSON."""
    return result["sentence"] + "\n" + json.dumps({k: v for k, v in result.items() if k != "decision"}, indent=1,
                                                  default=float)


def main(run: Callable[..., dict[str, Any]], doc: str, *, variants: bool = False,
         show: Callable[[dict[str, Any]], str] = describe) -> None:
    """The command line every script shares: ``--smoke``, ``--json FILE`` (and, where asked, variant names);
    ``show`` turns the record into the printed lines."""
    parser = argparse.ArgumentParser(description=doc.strip().splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: checks that the script runs")
    parser.add_argument("--json", help="write the record to this file")
    if variants:
        parser.add_argument("variants", nargs="*", help="run only these variants (and the baseline)")
    args = parser.parse_args()
    result = run(smoke=args.smoke, **({"variants": args.variants or None} if variants else {}))
    print(show(result))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(result, handle, indent=1, default=float)
