"""Local inference engines side by side on the same prompts, measured in one run, and the machine's limits.

Engines (the default SmolLM2-135M; every variant computes with the weights of the GGUF the model ships in):
  (a) transformers fp32 (weights dequantized once), generation one prompt at a time;
  (b) transformers fp32, greedy generation in batches of 8 (``benchmarks/generate_batch.py`` compares 8, 16
      and 32; its label probabilities are the same code as (a) and are not measured twice);
  (c) llama.cpp in-process (``llama-cpp-python``) on the GGUF rewritten as F32 (the same values as (a)),
      reusing the keys/values of shared prefixes as (a) does;
  (d)-(g) llama.cpp, each prompt computed whole and generated alone, on the GGUF rewritten as F32, F16, Q8_0,
      and the shipped Q4_1 file itself.

Workloads: label probabilities of UPHELD judge prompts (``yes_no`` judge) and of PairEval prompts (UPHELD
items against DailyDialog comparison conversations, both orders); greedy generation of user-proxy turns
(MirrorBench conversations, the chapter's proxy prompt, ``--max-tokens`` new tokens).

Limits measured in the same run: the cores' fp32 matrix-multiply peak (torch, 2048^3) against the FLOPs of a
judge prompt's prefill computed whole (transformers, no prefix reuse: every token counted is computed), and
the memory bandwidth (a large array copy) against the bytes of weights one decoding step of one sequence
reads (the tied output projection included), timed as the difference between 41 and 1 generated tokens.

Prints prompts/s, generated tokens/s, ratios against (a), and agreement with (a): the largest
label-probability difference, the share of prompts with the same top label, the share of identical greedy
continuations.

    python benchmarks/engines.py [--judge-items 24] [--pair-items 6] [--rollouts 16] [--max-tokens 40]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from evalkit.book.benchpage import write_measurement
from evalkit.upheld.llm_judges import JUDGES, judge_messages
from evalkit.models import LlamaCppBackend, TransformersBackend
from evalkit.paireval.data import corpus_comparisons, training_corpus
from evalkit.paireval.prompts import pair_messages
from evalkit.paireval.schema import upheld_meta_eval
from evalkit.upheld.release import load_upheld
from evalkit.userproxy.data import load_mirror_set, stratified_episodes
from evalkit.userproxy.rollout import proxy_messages


def _timed(function, *args, **kwargs):
    started = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - started


def _agreement(first, second) -> tuple[float, float]:
    """Largest probability difference and share of equal top labels over two engines' label results."""
    differences, same = [], []
    for a, b in zip(first, second):
        if a.probs is None or b.probs is None:
            continue
        differences.append(max(abs(a.probs[k] - b.probs[k]) for k in a.probs))
        same.append(max(a.probs, key=a.probs.get) == max(b.probs, key=b.probs.get))
    return float(max(differences)), float(np.mean(same))


def _limits(engine: TransformersBackend, prompts, labels, proxy_prompt) -> dict[str, float]:
    """fp32 GFLOP/s of a large matrix product and GB/s of a large copy on this machine now; the GFLOP/s of
    judge prompts' prefill computed whole, and the GB/s of weights read by decoding one sequence."""
    import torch

    a, b = torch.randn(2048, 2048), torch.randn(2048, 2048)
    a @ b
    started = time.perf_counter()
    for _ in range(5):
        a @ b
    gflops = 5 * 2 * 2048 ** 3 / (time.perf_counter() - started) / 1e9
    source = np.ones(2 ** 28 // 4, dtype=np.float32)  # 256 MiB
    target = np.empty_like(source)
    np.copyto(target, source)
    started = time.perf_counter()
    for _ in range(5):
        np.copyto(target, source)
    bandwidth = 5 * 2 * source.nbytes / (time.perf_counter() - started) / 1e9  # read + write
    model = engine.model
    linear = sum(m.weight.numel() for n, m in model.named_modules()
                 if isinstance(m, torch.nn.Linear) and "lm_head" not in n)
    head = model.get_output_embeddings().weight.numel()  # read at every step (tied to the input embeddings)
    engine.share_prefixes = False
    results, seconds = _timed(engine.label_probs, prompts, labels)
    engine.share_prefixes = True
    tokens = sum(r.prompt_tokens for r in results)
    prefill = tokens * 2 * linear / seconds / 1e9  # the last position's projection onto the vocabulary aside
    engine.generate([proxy_prompt], max_tokens=1)
    _, one = _timed(engine.generate, [proxy_prompt], max_tokens=1)
    longer, many = _timed(engine.generate, [proxy_prompt], max_tokens=41)
    steps = max(longer[0].completion_tokens - 1, 1)
    step_seconds = (many - one) / steps
    return {"GFLOP/s": gflops, "GB/s": bandwidth, "prefill GFLOP/s": prefill, "flops per token": 2 * linear,
            "bytes per step": 4 * (linear + head), "step ms": 1000 * step_seconds,
            "decode GB/s": 4 * (linear + head) / step_seconds / 1e9}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--judge-items", type=int, default=24)
    parser.add_argument("--pair-items", type=int, default=6, help="UPHELD items; x 3 comparisons x 2 orders")
    parser.add_argument("--rollouts", type=int, default=16, help="proxy prompts for the generation workload")
    parser.add_argument("--max-tokens", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", help="also write the measurement here (for the book's Performance page)")
    args = parser.parse_args()

    items = load_upheld("main").items.sample(args.judge_items, random_state=args.seed)
    spec = JUDGES["yes_no"]
    judge_prompts = [judge_messages(spec, h, r, c) for h, r, c in
                     zip(items["history"], items["reference"], items["candidate"])]
    pair_items = upheld_meta_eval("main").sample(args.pair_items, random_state=args.seed)
    _, validation = training_corpus("validation")
    pair_prompts = []
    for context, response in zip(pair_items["context"], pair_items["response"]):
        for other_context, other_response in corpus_comparisons(validation, 3, seed=args.seed):
            pair_prompts.append(pair_messages(context, response, other_context, other_response))
            pair_prompts.append(pair_messages(other_context, other_response, context, response))
    frame, _ = load_mirror_set("chatbot_arena")
    episodes = stratified_episodes(frame, args.rollouts, seed=args.seed)
    proxy_prompts = [proxy_messages(goal, "full", turns[:2]) for goal, turns in
                     zip(episodes["goal"], episodes["turns"])]

    engines = {"(a) transformers fp32, one sequence at a time": lambda: TransformersBackend(generate_batch_size=1),
               "(b) transformers fp32, greedy batches of 8": lambda: TransformersBackend(generate_batch_size=8),
               "(c) llama.cpp, F32, shared prefixes": lambda: LlamaCppBackend(weights="f32", share_prefixes=True),
               "(d) llama.cpp, F32 (same values as a)": lambda: LlamaCppBackend(weights="f32"),
               "(e) llama.cpp, F16": lambda: LlamaCppBackend(weights="f16"),
               "(f) llama.cpp, Q8_0": lambda: LlamaCppBackend(weights="q8_0"),
               "(g) llama.cpp, shipped Q4_1": lambda: LlamaCppBackend(weights="shipped")}
    measured: dict[str, dict] = {}
    peaks: dict[str, float] = {}
    for name, build in engines.items():
        engine = build()
        if not peaks and isinstance(engine, TransformersBackend):
            peaks = _limits(engine, judge_prompts[:8], spec.labels, proxy_prompts[0])
        row: dict = {}
        engine.generate(proxy_prompts[:1], max_tokens=2)  # warm-up: set-up is not throughput
        if name.startswith("(b)"):  # label probabilities: the same code as (a)
            row.update({k: v for k, v in measured[next(iter(measured))].items() if k != "generated"})
        else:
            engine.label_probs(judge_prompts[:1], spec.labels)
            row["judged"], judge_seconds = _timed(engine.label_probs, judge_prompts, spec.labels)
            row["paired"], pair_seconds = _timed(engine.label_probs, pair_prompts, ["A", "B"])
            row["judge prompts/s"] = len(judge_prompts) / judge_seconds
            row["pair prompts/s"] = len(pair_prompts) / pair_seconds
            row["label seconds"] = judge_seconds + pair_seconds
        row["generated"], generate_seconds = _timed(engine.generate, proxy_prompts, max_tokens=args.max_tokens)
        row["generated tokens/s"] = sum(g.completion_tokens for g in row["generated"]) / generate_seconds
        row["seconds"] = row["label seconds"] + generate_seconds
        measured[name] = row
        del engine
    reference = measured[next(iter(measured))]
    columns = ("judge prompts/s", "pair prompts/s", "generated tokens/s")
    judge_tokens = np.mean([r.prompt_tokens for r in reference["judged"]])
    print(f"{len(judge_prompts)} UPHELD judge prompts (~{judge_tokens:.0f} tokens), {len(pair_prompts)} PairEval "
          f"prompts, {len(proxy_prompts)} proxy prompts x {args.max_tokens} greedy tokens")
    notes = []
    for name, row in measured.items():
        judge_diff, judge_same = _agreement(reference["judged"], row["judged"])
        pair_diff, pair_same = _agreement(reference["paired"], row["paired"])
        identical = float(np.mean([x.texts == y.texts for x, y in zip(reference["generated"], row["generated"])]))
        row.update({"max |dp| judge": judge_diff, "same top label": (judge_same + pair_same) / 2,
                    "max |dp| pair": pair_diff, "identical continuations": identical})
        print(f"{name:56s} " + "  ".join(f"{c} {row[c]:7.2f} ({row[c] / reference[c]:.2f}x)" for c in columns)
              + f"  max|dp| {max(judge_diff, pair_diff):.3f}, same top label {row['same top label']:.1%}, "
                f"identical continuations {identical:.0%}")
    limits = (f"Limits on this machine in this run: a 2048^3 fp32 matrix product runs at {peaks['GFLOP/s']:.0f} "
              f"GFLOP/s; judge prompts computed whole by transformers (no prefix reuse) run their matrix products "
              f"({peaks['flops per token'] / 1e9:.2f} GFLOP per token) at {peaks['prefill GFLOP/s']:.0f} GFLOP/s, "
              f"{peaks['prefill GFLOP/s'] / peaks['GFLOP/s']:.0%} of that. One decoding step of one sequence takes "
              f"{peaks['step ms']:.0f} ms and reads {peaks['bytes per step'] / 1e6:.0f} MB of fp32 weights: "
              f"{peaks['decode GB/s']:.1f} GB/s, against {peaks['GB/s']:.1f} GB/s measured for a large copy. "
              f"A batch of sequences shares each read (b); smaller weights (e-g) read fewer bytes.")
    print(limits)
    notes.append(limits)
    notes.append("(b)'s label probabilities are (a)'s: the same code, not measured twice.")
    reusing, whole = measured[list(measured)[2]], measured[list(measured)[3]]
    reuse = max(abs(x.probs[k] - y.probs[k]) for x, y in zip(reusing["judged"] + reusing["paired"],
                                                             whole["judged"] + whole["paired"]) for k in x.probs)
    notes.append(f"(c) against (d), the same F32 weights with and without prefix reuse: largest label-probability "
                 f"difference {reuse:.1e}.")
    print(notes[-1])
    for name, row in measured.items():
        notes.append(f"{name}: largest label-probability difference from (a) {max(row['max |dp| judge'], row['max |dp| pair']):.3f}; "
                     f"same top label on {row['same top label']:.1%} of {len(judge_prompts) + len(pair_prompts)} prompts; "
                     f"identical greedy continuations {row['identical continuations']:.0%} of {len(proxy_prompts)}.")
    write_measurement(
        args.json, title="Local engines: transformers fp32 and llama.cpp",
        workload=f"{len(judge_prompts)} UPHELD judge prompts, {len(pair_prompts)} PairEval prompts, "
                 f"{len(proxy_prompts)} user-proxy prompts x {args.max_tokens} greedy tokens",
        rows=[{"way": name, "seconds": row["seconds"], **{c: row[c] for c in columns},
               "identical continuations": row["identical continuations"], "same top label": row["same top label"]}
              for name, row in measured.items()],
        ratios={f"{c}, {name.split(')')[0]}) vs (a)": row[c] / reference[c] for name, row in measured.items()
                for c in columns if not name.startswith("(a)")},
        notes=notes)


if __name__ == "__main__":
    main()
