"""The ``evalkit`` command line's arguments: one subcommand per task (see :mod:`evalkit.cli.commands`, which runs them).

What each subcommand does lives in :mod:`evalkit.cli.commands`; this module only says what it accepts. Every
subcommand gets its handler from the mapping :func:`build_parser` is given, as its ``handler`` default.
"""
from __future__ import annotations

import argparse
from typing import Callable, Mapping

from evalkit.book import runner

__all__ = ["COMMANDS", "Handler", "build_parser", "check_arguments"]

#: A subcommand's handler: the parsed arguments in, the exit status out.
Handler = Callable[[argparse.Namespace], int]
#: The subcommands whose handler :func:`build_parser` is given, in the order ``evalkit --help`` lists them.
COMMANDS = ("run-notebooks", "book", "data", "models", "cache", "paireval", "userproxy", "grid", "bench", "judge")


def build_parser(description: str, handlers: Mapping[str, Handler]) -> argparse.ArgumentParser:
    """The command line: one subcommand per task, each with ``handlers[<its name>]`` as its ``handler`` default
    (``course`` brings its own, from :mod:`evalkit.course.cli`).

    >>> parser = build_parser("evalkit", {name: len for name in COMMANDS})
    >>> args = parser.parse_args(["cache", "stats"])
    >>> args.command, args.action, args.handler is len
    ('cache', 'stats', True)
    """
    missing = [name for name in COMMANDS if name not in handlers]
    if missing:
        raise ValueError(f"no handler for the commands {missing}")
    parser = argparse.ArgumentParser(prog="evalkit", description=description)
    commands = parser.add_subparsers(dest="command", required=True)
    _add_book_commands(commands, handlers)
    _add_paireval_command(commands, handlers)
    _add_job_commands(commands, handlers)
    from evalkit.course.cli import add_parser as add_course_command
    add_course_command(commands)
    return parser


def _add_book_commands(commands: argparse._SubParsersAction, handlers: Mapping[str, Handler]) -> None:
    """``run-notebooks``, ``book``, ``data``, ``models`` and ``cache``: the book and what it needs."""
    run = commands.add_parser("run-notebooks", help="execute notebooks with a parameter set (papermill)")
    run.add_argument("--params", default="smoke", help="smoke, full or a YAML file (default: smoke)")
    run.add_argument("--only", help="comma-separated notebook prefixes, e.g. 01,03")
    run.add_argument("--out", default=str(runner.PROJECT_ROOT / "_build" / "executed"))
    run.add_argument("--progress", action="store_true")
    run.set_defaults(handler=handlers["run-notebooks"])

    book = commands.add_parser("book", help="execute every notebook, then build the HTML book")
    book.add_argument("--params", default="full")
    book.add_argument("--out", default=str(runner.PROJECT_ROOT / "_build"))
    book.add_argument("--progress", action="store_true")
    book.add_argument("--student", action="store_true",
                      help="leave the exercises' solutions out of the pages (a student build; default: shown in "
                           "toggles, for instructors)")
    book.add_argument("--no-execute", action="store_true", help="build from the executed notebooks already there")
    book.set_defaults(handler=handlers["book"])

    data = commands.add_parser("data", help="resolve (and download when needed) datasets")
    data.add_argument("names", nargs="*")
    data.set_defaults(handler=handlers["data"])

    models = commands.add_parser("models", help="prepare the default models (converts SmolLM2 once)")
    models.set_defaults(handler=handlers["models"])

    cache = commands.add_parser("cache", help="inspect or empty the model-call cache")
    cache.add_argument("action", choices=["stats", "purge"])
    cache.add_argument("--path", help="cache file (default: $EVALKIT_CACHE_DIR/calls.sqlite)")
    cache.add_argument("--backend", help="purge only this backend's entries")
    cache.set_defaults(handler=handlers["cache"])


def _add_paireval_command(commands: argparse._SubParsersAction, handlers: Mapping[str, Handler]) -> None:
    """``paireval``: train a pairwise judge, score or meta-evaluate a file."""
    pair = commands.add_parser("paireval", help="train a pairwise judge, score or meta-evaluate a file")
    pair.add_argument("action", choices=["train", "score", "meta-eval"])
    pair.add_argument("--input", help="meta-evaluation file (.jsonl or .csv; see the book, chapter 4)")
    pair.add_argument("--dataset", help="one of the paper's meta-evaluation sets instead of --input: "
                                        "dailydialog-grade, convai2-grade, dailydialog-zhao, personachat-usr "
                                        "(convai2-usr), topicalchat-usr, fed")
    pair.add_argument("--recipe", choices=["book", "smoke", "large", "lab", "paper", "paper-smoke"], default="book",
                      help="the judge recipe (evalkit.paireval.RECIPES) to train or to score with: every "
                           "training setting comes from it (its encoder recipe, or its LoRA recipe with "
                           "--backbone lm)")
    pair.add_argument("--backbone", choices=["encoder", "lm"], default="encoder",
                      help="train: the kit's encoder judge, or the SmolLM2 LoRA judge")
    pair.add_argument("--judge-dir", help="score with a trained encoder judge folder instead of the recipe's")
    pair.add_argument("--output", help="score: the scored file; train: the adapter folder")
    pair.add_argument("--method", choices=["paireval", "directeval", "paireval-lm", "directeval-lm", "length",
                                           "bleu2"], default="paireval",
                      help="paireval/directeval: the kit's encoder judge; -lm: the LM judge through the model "
                           "door (--adapter, --backend); length and bleu2: baselines")
    pair.add_argument("--metric", help="meta-eval: a score column already in the file (default: --method)")
    pair.add_argument("--model", help="base model: a folder or Hugging Face id (default: SmolLM2-135M)")
    pair.add_argument("--adapter", help="a LoRA adapter folder (from `evalkit paireval train`)")
    pair.add_argument("--backend", choices=["transformers", "llamacpp", "openai"], default="transformers")
    pair.add_argument("--base-url", help="OpenAI-compatible endpoint (with --backend openai)")
    pair.add_argument("--comparisons", type=int, default=3, help="N comparison examples (default 3)")
    pair.add_argument("--comparison-file", help="take comparison examples from this meta-evaluation file")
    pair.add_argument("--seed", type=int, default=0)
    pair.add_argument("--no-cache", action="store_true", help="do not use the model-call cache")
    pair.add_argument("--kind", choices=["pairwise", "direct"], default="pairwise", help="train: which judge")
    pair.add_argument("--device", default="cpu",
                      help="where local models train and run: cpu (default), auto (CUDA, then MPS, then CPU), cuda, "
                           "cuda:N or mps")
    pair.add_argument("--dtype", default="auto",
                      help="their precision: auto (fp32 on the CPU, bf16 or fp16 on an accelerator), fp32, bf16, fp16")
    pair.set_defaults(handler=handlers["paireval"])


def _add_job_commands(commands: argparse._SubParsersAction, handlers: Mapping[str, Handler]) -> None:
    """``userproxy``, ``grid``, ``bench`` and ``judge``: jobs described by a file or run over every set."""
    proxy = commands.add_parser("userproxy", help="plan, run (or resume) and report a user-proxy evaluation job")
    proxy.add_argument("action", choices=["plan", "run", "report"])
    proxy.add_argument("--config", required=True, help="the job file (YAML; see jobs/userproxy_example.yml)")
    proxy.add_argument("--json", help="report: write the report as JSON here")
    proxy.add_argument("--html", help="report: write the report as an HTML page here")
    proxy.add_argument("--run", help="report: this stored run id (default: the run of the job file as it is now)")
    proxy.add_argument("--progress", action="store_true")
    proxy.set_defaults(handler=handlers["userproxy"])

    grid = commands.add_parser("grid", help="run a parameter grid of notebooks or commands (process pool or Ray)")
    grid.add_argument("--spec", required=True, help="the grid file (YAML; see jobs/grid_example.yml)")
    grid.add_argument("--engine", choices=["local", "ray"], default="local")
    grid.add_argument("--ray-address", help="a Ray cluster: auto, or ray://host:10001 (implies --engine ray)")
    grid.add_argument("--workers", type=int, help="local process-pool size (default: the spec's workers)")
    grid.set_defaults(handler=handlers["grid"])

    bench = commands.add_parser("bench", help="run every benchmark and rewrite the book's Performance page")
    bench.add_argument("--only", help="comma-separated script-name prefixes (the page keeps the other sections)")
    bench.add_argument("--page", help="where to write the page (default: book/performance.md)")
    bench.set_defaults(handler=handlers["bench"])

    judge = commands.add_parser("judge", help="judges on the human-scored sets: card (a judge's report card on "
                                              "every set: card.json, card.html), export (the items to score with "
                                              "your own judge), leaderboard (judges ranked from their cards)")
    from evalkit.judgecard.cli import add_arguments as judge_arguments

    judge_arguments(judge)
    judge.set_defaults(handler=handlers["judge"])


def check_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse (with argparse's usage error) a ``paireval`` action missing the arguments it needs."""
    if args.command != "paireval":
        return
    needs = {"train": [], "score": ["output"], "meta-eval": []}[args.action]
    missing = [f"--{name}" for name in needs if getattr(args, name) is None]
    if args.action != "train" and (args.input is None) == (args.dataset is None):
        missing.append("exactly one of --input and --dataset")
    if missing:
        parser.error(f"paireval {args.action} needs {' and '.join(missing)}")
