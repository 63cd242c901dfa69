"""The two encoder-judge recipes, ``book`` (MiniLM, the book's 1,600 pairs) and ``large`` (all-mpnet-base-v2, 1,600
pairs, ``evalkit paireval train --recipe large``), in one run: what each costs to train and to score, and what
it buys on people's scores.

Workload: each recipe's judge as :func:`evalkit.paireval.train_judge` trains it (from an empty cache it
trains here; from a warm one it is reused and its seconds are those measured when it was trained — the row
says which), then the dev halves of the six Table-1 sets scored as chapter 4 scores Table 1 (PairEval, 3
comparison examples x 5 runs from 8 DailyDialog validation conversations, seed 13), timed from an empty
embedding memo. Agreement is the mean Pearson r with people over the six dev halves, and ``large`` minus
``book`` with a paired 95% bootstrap interval over context groups (:func:`evalkit.stats.selection.choose_on_dev`):
the same numbers that kept ``large`` out of the book (``experiments/large_trained.py``). Dev halves only —
the test halves are chapter 4's to report.

    EVALKIT_DATA_DIR=../shared/data python benchmarks/judge_recipes.py [--items N]
"""
from __future__ import annotations

import argparse
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=None, help="dev items per set (default: all)")
    parser.add_argument("--json", help="also write the measurement here (for the book's Performance page)")
    args = parser.parse_args()
    from evalkit import paireval as pe
    from evalkit.book.benchpage import write_measurement
    from evalkit.models.defaults import quiet_model_loading
    from evalkit.encoders import backbone_path
    from evalkit.stats.halves import meta_eval_halves
    from evalkit.stats.selection import choose_on_dev

    quiet_model_loading()
    backbone_path("mpnet")  # fails early, naming `make models`, when the larger encoder is not installed
    recipes = {name: pe.RECIPES[name] for name in ("book", "large")}
    data = pe.judge_data(seed=recipes["book"].seed)
    pool = pe.data.corpus_comparisons(data.validation, 8, seed=13)
    dev = {name: meta_eval_halves(name)[0].sample(args.items, seed=13) for name in pe.meta_eval_set_names()}
    items = sum(len(half) for half in dev.values())
    rows, scores, costs = [], {}, {}
    for name, recipe in recipes.items():
        training = pe.train_judge(recipe, data=data)
        judge = pe.EncoderJudge.from_training(training, store=None)  # timed: embed, not read back
        judge.forget()
        started = time.perf_counter()
        for set_name, half in dev.items():
            scores[name, set_name] = pe.table1.judge_scores(half.items, judge, pool, n=3, runs=5,
                                                            seed=13, direct=False)["paireval"]
        scoring = time.perf_counter() - started
        costs[name] = (training.seconds, scoring)
        rows.append({"way": f"{name}: {recipe.encoder.backbone}, {recipe.encoder.pairs:,} pairs",
                     "seconds": training.seconds + scoring, "training seconds": training.seconds,
                     "trained": "earlier (cached)" if training.from_cache else "in this run",
                     "training pairs/s": training.pairs_per_second, "scoring seconds": scoring,
                     "dev items/s": items / scoring})
    decision = choose_on_dev(dev, scores, list(recipes), bootstrap=1000, seed=13,
                             question="Does the large recipe agree better with people than the book's?")
    means, gap = decision.dev_means(), decision.challenges["large"]
    for row, name in zip(rows, recipes):
        row["dev mean Pearson r"] = means[name]
    verdict = "clears" if gap.low > 0 else "does not clear"
    notes = [f"large minus book on the dev halves (6 sets, n = {items} items): {gap.difference:+.3f} "
             f"[{gap.low:+.3f}, {gap.high:+.3f}] — the large PairEval judge {verdict} the kit's selection rule against "
             f"the book's PairEval judge" + (" (the book weighs its time too, and chapter 4 chooses among more "
                                            "judges than these two)" if gap.low > 0 else "; the book keeps its recipe"),
             "training seconds are those recorded when the judge was trained (a cached judge keeps them); "
             "scoring is timed in this run"]
    for line in [*(f"{row['way']}: " + ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}"
                                                 for k, v in row.items() if k != "way") for row in rows), *notes]:
        print(line)
    write_measurement(args.json, title="Judge recipes: book (MiniLM) vs large (mpnet)",
                      workload=f"each recipe trained (or reused from the cache) and scored on the six Table-1 "
                               f"dev halves ({items} items, PairEval 3 examples x 5 runs)",
                      rows=rows,
                      ratios={"large vs book, training seconds": costs["large"][0] / costs["book"][0],
                              "large vs book, scoring seconds": costs["large"][1] / costs["book"][1]},
                      notes=notes)


if __name__ == "__main__":
    main()
