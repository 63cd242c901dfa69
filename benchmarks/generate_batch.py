"""Greedy generation in batches of 8, 16 and 32 on real user-proxy prompts.

The proxy's turns are most of chapter 5's time and all of chapter 3's multiplicity samples. Decoding reads
every weight once per step for the whole batch, so larger batches amortise the weights, while padding and
the longer key/value cache cost more per step. The prompts are what the realism judge's training asks: the
real conversation up to a user turn of each MirrorBench set, with the goal. Sizes run interleaved
(``8, 16, 32, 8, 16, 32``) in one process, so a slow minute of the machine hits every size alike; the
continuations are compared with the first batch-8 run.

    python benchmarks/generate_batch.py [--per-set 16] [--max-tokens 40]
"""
from __future__ import annotations

import argparse
import time

from evalkit.book.benchpage import write_measurement
from evalkit.models import TransformersBackend
from evalkit.userproxy.data import load_mirror_set
from evalkit.userproxy.rollout import proxy_messages

SETS = ("chatbot_arena", "clariq", "oasst1", "qulac")
SIZES = (8, 16, 32)


def proxy_prompts(per_set: int) -> list:
    """The proxy's prompt for the second user turn (the first when there is one) of ``per_set`` conversations
    of each MirrorBench set, with the full goal."""
    prompts = []
    for name in SETS:
        frame, _ = load_mirror_set(name)
        for turns, goal in list(zip(frame["turns"], frame["goal"]))[:per_set]:
            users = [k for k, turn in enumerate(turns) if turn["role"] == "user"]
            prompts.append(proxy_messages(goal, "full", turns[:users[1] if len(users) > 1 else users[0]]))
    return prompts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-set", type=int, default=16)
    parser.add_argument("--max-tokens", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--json", help="also write the measurement here (for the book's Performance page)")
    args = parser.parse_args()

    prompts = proxy_prompts(args.per_set)
    engine = TransformersBackend()
    seconds: dict[int, list[float]] = {size: [] for size in SIZES}
    first: list[str] | None = None
    same: dict[int, int] = {}
    tokens = 0
    for _ in range(args.rounds):
        for size in SIZES:
            engine.generate_batch_size = size
            started = time.perf_counter()
            results = engine.generate(prompts, max_tokens=args.max_tokens)
            seconds[size].append(time.perf_counter() - started)
            texts = [result.texts[0] for result in results]
            tokens = sum(result.completion_tokens for result in results)
            first = texts if first is None else first
            same[size] = min(same.get(size, len(texts)), sum(a == b for a, b in zip(texts, first)))
            print(f"batch {size}: {seconds[size][-1]:.1f} s, {tokens} tokens, same as batch 8: {same[size]}",
                  flush=True)
    best = {size: min(values) for size, values in seconds.items()}
    write_measurement(args.json, title="Greedy generation: batches of 8, 16 and 32",
                      workload=f"{len(prompts)} user-proxy prompts (real MirrorBench histories up to a user turn, "
                               f"{args.per_set} per set), {args.max_tokens} new tokens at most, the default "
                               f"SmolLM2; sizes interleaved over {args.rounds} rounds, the faster run of each",
                      rows=[{"way": f"batches of {size}", "seconds": best[size], "tokens/s": tokens / best[size],
                             "runs (s)": ", ".join(f"{v:.1f}" for v in seconds[size])} for size in SIZES],
                      ratios={f"batches of {size} vs 8": best[8] / best[size] for size in SIZES if size != 8},
                      notes=[f"continuations identical to the first batch-8 run: "
                             + ", ".join(f"batch {size} {same[size]} of {len(prompts)}" for size in SIZES)])


if __name__ == "__main__":
    main()
