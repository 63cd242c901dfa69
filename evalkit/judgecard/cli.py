"""``evalkit judge card``: the arguments and the command (``python -m evalkit.judgecard card ...`` runs it too)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ._names import SET_NAMES

__all__ = ["add_arguments", "run", "main"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``judge`` command's arguments (its one action, ``card``)."""
    parser.add_argument("action", choices=["card"])
    parser.add_argument("--judge", help="length, bleu2, rouge-l, cosine, bertscore, encoder, paireval:<recipe>, "
                                        "directeval:<recipe>, reader:<recipe>, lm:<prompt>, or a judge spec file "
                                        "(.yml)")
    parser.add_argument("--scores", help="a meta-evaluation file with the judge's scores (instead of --judge)")
    parser.add_argument("--score-column", default="score_judge", help="the scores' column (default score_judge)")
    parser.add_argument("--set", action="append", dest="sets", metavar="NAME",
                        help=f"a set to report (repeatable; default: all of {', '.join(SET_NAMES)})")
    parser.add_argument("--add", action="append", default=[], metavar="FILE",
                        help="a human-scored meta-evaluation file of your own, as one more set, split into halves "
                             "as the kit's sets are (repeatable)")
    parser.add_argument("--half", choices=["test", "dev", "all"], default="test",
                        help="which half of every set (default test; all: the full sets)")
    parser.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples (default 1000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="judge-card", help="folder for card.json and card.html")


def run(args: argparse.Namespace) -> int:
    from .card import judge_card
    from .render import write_card
    from .judges import ScoresJudge
    from .spec import parse_spec

    if (args.judge is None) == (args.scores is None):
        raise ValueError("judge card needs exactly one of --judge SPEC and --scores FILE")
    if args.bootstrap < 0:
        raise ValueError(f"--bootstrap must be 0 or more, not {args.bootstrap}")
    for path in args.add:
        if not Path(path).is_file():
            raise FileNotFoundError(f"--add {path}: no such file")
    judge = parse_spec(args.judge) if args.judge else ScoresJudge(args.scores, args.score_column)
    sets = [*(args.sets or SET_NAMES), *args.add]
    card = judge_card(judge, sets, half=args.half, bootstrap=args.bootstrap, seed=args.seed)
    record, page = write_card(card, args.out)
    summary = card.summary()
    mean = summary["mean_pearson"]
    print(f"{card.judge} on the {card.half} halves: {len(card.rows)} set/label rows, mean Pearson r "
          f"{'n/a' if mean is None else f'{mean:.3f}'}; {len(card.skipped)} sets not scored; {record}, {page}")
    for name, why in card.skipped:
        print(f"note: {name}: {why}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="evalkit judge", description="a judge's report card")
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run(args)
    except (FileNotFoundError, KeyError, ValueError, RuntimeError) as error:
        print(f"evalkit: {error}", file=sys.stderr)
        return 2
