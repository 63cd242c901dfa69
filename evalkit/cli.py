"""``evalkit`` command line: batch notebook runs, the book, data and default models."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import runner

__all__ = ["main"]


def _run_notebooks(args: argparse.Namespace) -> int:
    only = args.only.split(",") if args.only else None
    runs = runner.run_notebooks(args.params, only=only, out_dir=args.out, raise_on_failure=False,
                                progress=args.progress)
    for run in runs:
        print(f"{'FAILED' if run.error else 'ok':6} {run.name}: {run.executed}")
    failures = [run.error for run in runs if run.error]
    for failure in failures:
        print(failure, file=sys.stderr)
    return 1 if failures else 0


def _book(args: argparse.Namespace) -> int:
    out = Path(args.out)
    status = _run_notebooks(argparse.Namespace(params=args.params, only=None, out=out / "executed",
                                               progress=args.progress))
    if status:
        return status
    index = runner.build_book(out / "executed", out / "book")
    print(f"book built: {index}")
    return 0


def _data(args: argparse.Namespace) -> int:
    from .sources import DATASETS, dataset_dir

    for name in args.names or sorted(DATASETS):
        print(f"{name}: {dataset_dir(name)}")
    return 0


def _models(args: argparse.Namespace) -> int:
    from .defaults import default_encoder_path, default_lm_path

    print(f"language model: {default_lm_path()}")
    print(f"sentence encoder: {default_encoder_path()}")
    return 0


def _cache(args: argparse.Namespace) -> int:
    from .cache import CallCache

    cache = CallCache(args.path)
    if args.action == "stats":
        rows = cache.stats()
        print(f"{cache.path}: {sum(r['entries'] for r in rows)} cached calls")
        for row in rows:
            print(f"  {row['entries']:8d}  {row['bytes'] or 0:10d} B  {row['operation']:12}  {row['backend']}")
    else:
        print(f"{cache.path}: purged {cache.purge(args.backend)} cached calls")
    return 0


def _paireval_backend(args: argparse.Namespace):
    from .models import open_backend

    cache = False if args.no_cache else True
    if args.backend == "openai":
        return open_backend("openai", args.model, base_url=args.base_url, cache=cache)
    return open_backend("transformers", args.model, adapter=args.adapter, cache=cache)


def _paireval_score(args: argparse.Namespace, frame):
    from . import paireval

    comparisons = []
    if args.method == "paireval":
        if args.comparison_file:
            pool = paireval.read_meta_eval(args.comparison_file)
            comparisons = list(zip(pool["context"], pool["response"]))[:args.comparisons]
        else:
            _, dialogues = paireval.training_corpus("validation")
            comparisons = paireval.corpus_comparisons(dialogues, args.comparisons, seed=args.seed)
    return paireval.score_frame(frame, _paireval_backend(args), method=args.method, comparisons=comparisons)


def _paireval(args: argparse.Namespace) -> int:
    from . import paireval

    if args.action == "train":
        name, dialogues = paireval.training_corpus("train")
        hard = [] if args.hard_share == 0 else paireval.load_dailydialog_plusplus("dev")
        pairs = paireval.training_pairs(dialogues, args.pairs, seed=args.seed, hard_negatives=hard,
                                        hard_share=args.hard_share)
        if args.kind == "pairwise":
            prompts = [paireval.pair_messages(r.context_a, r.response_a, r.context_b, r.response_b)
                       for r in pairs.itertuples()]
            targets = list(pairs["better"])
        else:
            points = paireval.pointwise_examples(pairs)
            prompts = [paireval.direct_messages(r.context, r.response) for r in points.itertuples()]
            targets = list(points["label"])
        run = paireval.train_lora(prompts, targets, steps=args.steps, batch_size=args.batch_size,
                                  learning_rate=args.lr, r=args.r, alpha=args.alpha, seed=args.seed,
                                  model=args.model, output_dir=args.output, progress=True)
        first, last = run.losses[:5], run.losses[-5:]
        print(f"{args.kind} adapter: {run.adapter} ({len(prompts)} {name} examples, {args.steps} steps of "
              f"{args.batch_size}; {run.seconds_per_step:.2f} s/step; loss {sum(first) / len(first):.3f} -> "
              f"{sum(last) / len(last):.3f}{'; reused' if run.from_cache else ''})")
        return 0
    frame = paireval.read_meta_eval(args.input)
    if args.action == "score":
        frame[args.method] = _paireval_score(args, frame)
        paireval.write_meta_eval(frame, args.output)
        print(f"{args.output}: {len(frame)} rows scored by {args.method} "
              f"({int(frame[args.method].isna().sum())} abstentions)")
        return 0
    metric = args.metric or args.method
    if metric not in frame.columns:
        frame[metric] = _paireval_score(args, frame)
    result = paireval.meta_evaluate(frame, metric)
    print(f"{args.input} ({metric} vs score): pearson r = {result['pearson']:.3f} (p = {result['pearson_p']:.2g}), "
          f"spearman rho = {result['spearman']:.3f} (p = {result['spearman_p']:.2g}), n = {result['n']}"
          + (f", {result['missing']} rows without a score left out" if result["missing"] else ""))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="evalkit", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser("run-notebooks", help="execute notebooks with a parameter set (papermill)")
    run.add_argument("--params", default="smoke", help="smoke, full or a YAML file (default: smoke)")
    run.add_argument("--only", help="comma-separated notebook prefixes, e.g. 01,03")
    run.add_argument("--out", default=str(runner.PROJECT_ROOT / "_build" / "executed"))
    run.add_argument("--progress", action="store_true")
    run.set_defaults(handler=_run_notebooks)

    book = commands.add_parser("book", help="execute every notebook, then build the HTML book")
    book.add_argument("--params", default="full")
    book.add_argument("--out", default=str(runner.PROJECT_ROOT / "_build"))
    book.add_argument("--progress", action="store_true")
    book.set_defaults(handler=_book)

    data = commands.add_parser("data", help="resolve (and download when needed) datasets")
    data.add_argument("names", nargs="*")
    data.set_defaults(handler=_data)

    models = commands.add_parser("models", help="prepare the default models (converts SmolLM2 once)")
    models.set_defaults(handler=_models)

    cache = commands.add_parser("cache", help="inspect or empty the model-call cache")
    cache.add_argument("action", choices=["stats", "purge"])
    cache.add_argument("--path", help="cache file (default: $EVALKIT_CACHE_DIR/calls.sqlite)")
    cache.add_argument("--backend", help="purge only this backend's entries")
    cache.set_defaults(handler=_cache)

    pair = commands.add_parser("paireval", help="train a pairwise judge, score or meta-evaluate a file")
    pair.add_argument("action", choices=["train", "score", "meta-eval"])
    pair.add_argument("--input", help="meta-evaluation file (.jsonl or .csv; see the book, chapter 4)")
    pair.add_argument("--output", help="score: the scored file; train: the adapter folder")
    pair.add_argument("--method", choices=["paireval", "directeval"], default="paireval")
    pair.add_argument("--metric", help="meta-eval: a score column already in the file (default: --method)")
    pair.add_argument("--model", help="base model: a folder or Hugging Face id (default: SmolLM2-135M)")
    pair.add_argument("--adapter", help="a LoRA adapter folder (from `evalkit paireval train`)")
    pair.add_argument("--backend", choices=["transformers", "openai"], default="transformers")
    pair.add_argument("--base-url", help="OpenAI-compatible endpoint (with --backend openai)")
    pair.add_argument("--comparisons", type=int, default=3, help="N comparison examples (default 3)")
    pair.add_argument("--comparison-file", help="take comparison examples from this meta-evaluation file")
    pair.add_argument("--seed", type=int, default=0)
    pair.add_argument("--no-cache", action="store_true", help="do not use the model-call cache")
    pair.add_argument("--kind", choices=["pairwise", "direct"], default="pairwise", help="train: which judge")
    pair.add_argument("--pairs", type=int, default=128, help="train: number of training pairs")
    pair.add_argument("--steps", type=int, default=32)
    pair.add_argument("--batch-size", type=int, default=4)
    pair.add_argument("--lr", type=float, default=2e-3,
                      help="AdamW learning rate (default 2e-3 for short CPU runs; the paper used 1e-4 over ~5,000 steps)")
    pair.add_argument("--r", type=int, default=16)
    pair.add_argument("--alpha", type=int, default=8)
    pair.add_argument("--hard-share", type=float, default=0.5,
                      help="train: share of DailyDialog++ adversarial negatives (0 = random negatives only)")
    pair.set_defaults(handler=_paireval)

    args = parser.parse_args(argv)
    if args.command == "paireval":
        needs = {"train": ["output"], "score": ["input", "output"], "meta-eval": ["input"]}[args.action]
        missing = [f"--{name}" for name in needs if getattr(args, name) is None]
        if missing:
            parser.error(f"paireval {args.action} needs {' and '.join(missing)}")
    try:
        return args.handler(args)
    except (FileNotFoundError, ValueError, RuntimeError) as error:
        print(f"evalkit: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
