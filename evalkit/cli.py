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

    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except (FileNotFoundError, ValueError, RuntimeError) as error:
        print(f"evalkit: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
