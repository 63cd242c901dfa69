"""Two LM judges on the same items: one call per judge against one call for both.

The yes/no and Likert prompts about an item share everything but their closing question (the conversation,
the reference, the candidate), so in one call the local engine computes that text once and the second prompt
only its question (:func:`evalkit.upheld.llm_judges.run_judges` through ``label_probs_each``). The two ways alternate
(a, b, a, b) in one process, each with an empty call cache, and the largest score difference between them is
reported (a shared prefix's keys and values come from another prompt's pass: float rounding only).

    python benchmarks/judges_together.py [--items 40] [--repeats 2]
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from evalkit.book.benchpage import write_measurement
from evalkit.models.cache import CallCache
from evalkit.upheld.llm_judges import judge, run_judges
from evalkit.models import CachedBackend, TransformersBackend
from evalkit.upheld.release import load_upheld

JUDGES = ("yes_no", "likert")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=2, help="alternations of the two ways")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", help="also write the measurement here (for the book's Performance page)")
    args = parser.parse_args()

    items = load_upheld("main").items.sample(args.items, random_state=args.seed)
    backend = TransformersBackend()
    print(f"model: {backend.name}; {args.items} UPHELD items, judges {', '.join(JUDGES)}")

    def fresh_door(folder: str, run: int) -> CachedBackend:
        return CachedBackend(backend, CallCache(Path(folder) / f"calls-{run}.sqlite"))

    seconds: dict[str, list[float]] = {"one call per judge": [], "one call for both": []}
    scores: dict[str, np.ndarray] = {}
    with tempfile.TemporaryDirectory() as folder:
        for repeat in range(args.repeats):
            door = fresh_door(folder, 2 * repeat)
            started = time.perf_counter()
            apart = [judge(items, name, door)["score"].to_numpy() for name in JUDGES]
            seconds["one call per judge"].append(time.perf_counter() - started)
            door = fresh_door(folder, 2 * repeat + 1)
            started = time.perf_counter()
            together = [frame["score"].to_numpy() for frame in run_judges(items, JUDGES, door)]
            seconds["one call for both"].append(time.perf_counter() - started)
            scores["apart"], scores["together"] = np.concatenate(apart), np.concatenate(together)
    difference = float(np.nanmax(np.abs(scores["apart"] - scores["together"])))
    best = {way: min(values) for way, values in seconds.items()}
    for way, values in seconds.items():
        print(f"{way:22s} " + "  ".join(f"{v:7.2f} s" for v in values) + f"   best {best[way]:.2f} s")
    ratio = best["one call per judge"] / best["one call for both"]
    print(f"ratio: {ratio:.2f}x; largest score difference {difference:.2e}")
    write_measurement(args.json, title="Two LM judges on the same items: one call each vs one call for both",
                      workload=f"{args.items} UPHELD items x {len(JUDGES)} judges ({', '.join(JUDGES)}), "
                               f"{backend.name.split(':')[1]}, empty call cache, best of {args.repeats} alternations",
                      rows=[{"way": way, "seconds": best[way], "prompts/s": len(JUDGES) * args.items / best[way]}
                            for way in seconds],
                      ratios={"one call for both vs one call per judge": ratio},
                      notes=[f"largest score difference between the two ways: {difference:.1e} (float rounding of "
                             "a shared prefix)"])


if __name__ == "__main__":
    main()
