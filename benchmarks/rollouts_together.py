"""A user-proxy job's rollout units one by one against several units in one lockstep.

Chapter 5's goal-level study runs three proxies that differ only in what they are told about the user, over
several seeds, with a few episodes each: unit by unit, every generation step decodes three rows at a time.
Rolled out together (:meth:`evalkit.userproxy.execute._Executor.roll_out_together`, up to ``chunk``
episodes), each step is one batched call for all of them. Both ways run the same job (only the stored chunk
size differs, which is not part of the run's identity) with their own empty call cache; the stored
conversations are compared.

    python benchmarks/rollouts_together.py [--episodes 3] [--seeds 2]
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from evalkit.book.benchpage import write_measurement
from evalkit.models import TransformersBackend
from evalkit.userproxy import job
from evalkit.userproxy.runstore import RunStore

LEVELS = ("full", "topic", "none")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default="oasst1")
    parser.add_argument("--episodes", type=int, default=3)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--json", help="also write the measurement here (for the book's Performance page)")
    args = parser.parse_args()

    TransformersBackend()  # read the model's files once, so neither way pays the first load alone
    seconds, conversations = {}, {}
    ways = {"one unit at a time (chunk = episodes)": args.episodes, "units together (chunk 32)": 32}
    with tempfile.TemporaryDirectory() as folder:
        for number, (way, chunk) in enumerate(ways.items()):
            config = job.JobConfig(
                name="goal-levels", datasets=[args.dataset], episodes=args.episodes,
                seeds=[13 + k for k in range(args.seeds)], judges={"smollm2": job.ModelSpec()}, metrics=["mattr"], controls=False,
                proxies={f"goal: {level}": job.ProxySpec(job.ModelSpec(), level) for level in LEVELS},
                chunk=chunk, cache=str(Path(folder) / f"calls-{number}.sqlite"),
                store=str(Path(folder) / f"runs-{number}.sqlite"), human_anchor=50, bootstrap=0)
            started = time.perf_counter()
            job.execute(config, stop_on_error=True)
            seconds[way] = time.perf_counter() - started
            store = RunStore(config.store)
            units = store.units(config.run_id())
            conversations[way] = {unit: {p: e["payload"]["turns"] for p, e in store.episodes(unit).items()}
                                  for unit in units.loc[units["kind"] == "rollout", "unit_id"]}
            store.close()
            print(f"{way}: {seconds[way]:.1f} s", flush=True)
    before, after = conversations.values()
    episodes = sum(len(e) for e in before.values())
    same = sum(before[u][p] == after[u][p] for u in before for p in before[u])
    previous, kit = seconds.values()
    print(f"ratio {previous / kit:.2f}x; identical conversations {same} of {episodes}")
    write_measurement(args.json, title="User-proxy rollouts: one unit at a time vs units together",
                      workload=f"{len(LEVELS)} goal levels x {args.seeds} seeds x {args.episodes} {args.dataset} "
                               f"episodes (the default SmolLM2 as proxy, assistant and goal writer; the mattr "
                               f"metric only), each way with an empty call cache, one run each",
                      rows=[{"way": way, "seconds": value, "episodes/s": episodes / value}
                            for way, value in seconds.items()],
                      ratios={"units together vs one unit at a time": previous / kit},
                      notes=[f"identical stored conversations: {same} of {episodes} (a batch's shape can change "
                             "fp32 rounding, so a greedy continuation may in rare cases differ)"])


if __name__ == "__main__":
    main()
