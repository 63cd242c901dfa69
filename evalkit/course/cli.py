"""``evalkit course release`` and ``evalkit course grade SUBMISSIONS_DIR``: the command's parser and action.

:func:`add_parser` registers the ``course`` command on ``evalkit``'s subcommands; ``python -m evalkit.course``
runs it alone.
"""
from __future__ import annotations

import argparse
import sys

__all__ = ["add_parser", "run", "main"]


def add_parser(commands) -> argparse.ArgumentParser:
    """Add ``course`` (with its actions ``release`` and ``grade``) to an argparse subparsers object."""
    course = commands.add_parser("course", help="release the student notebooks, grade a class's submissions")
    _add_actions(course)
    return course


def _add_actions(course: argparse.ArgumentParser) -> None:
    from evalkit.book.runner import PROJECT_ROOT

    actions = course.add_subparsers(dest="course_action", required=True)
    release = actions.add_parser("release", help="write the student notebooks (MyST, .ipynb) and a zip per chapter")
    release.add_argument("--out", default=str(PROJECT_ROOT / "_build" / "course" / "release"),
                         help="the release folder (default: _build/course/release)")
    release.add_argument("--only", help="comma-separated chapter prefixes, e.g. 01,02")
    release.add_argument("--params", help="a parameter set whose sizes the notebooks carry (e.g. lab: each chapter "
                                          "in about ten minutes); default: the book's own values")
    grade = actions.add_parser("grade", help="run every exercise's public and hidden checks on each submission")
    grade.add_argument("submissions", metavar="SUBMISSIONS_DIR",
                       help="a folder of notebooks: one folder per student, or one file per student")
    grade.add_argument("--out", default=str(PROJECT_ROOT / "_build" / "course" / "grades"),
                       help="a new or empty folder for grades.csv, totals.csv, grades.html and work/ (default: "
                            "_build/course/grades)")
    grade.add_argument("--replace", action="store_true",
                       help="replace a previous grading's outputs in --out (nothing else may be there)")
    grade.add_argument("--timeout", type=_seconds, default=900.0,
                       help="seconds one notebook may run before everything it started is killed (default 900)")
    grade.add_argument("--memory", type=float, default=16.0,
                       help="GiB of address space one notebook's processes may each map (default 16)")
    grade.add_argument("--params", help="run every submission and the key at this parameter set's sizes (e.g. "
                                        "lab); default: the values the submission holds, the book's for the key")
    grade.add_argument("--key", help="the folder of the teacher's chapters the checks compute their expected "
                                     "values in (default: the book's notebooks/)")
    grade.add_argument("--trusted", action="store_true",
                       help="grade even where no sandbox can start (the notebooks then run with your rights)")
    grade.add_argument("--progress", action="store_true")
    course.set_defaults(handler=run)


def _seconds(text: str) -> float:
    from evalkit.course.sandbox import check_timeout

    try:
        return check_timeout(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def run(args: argparse.Namespace) -> int:
    if args.course_action == "release":
        from evalkit.course.release import release

        for chapter in release(args.out, only=args.only.split(",") if args.only else None,
                               params=args.params):
            print(f"{chapter.chapter}: {chapter.archive} ({len(chapter.exercises)} exercises)")
        return 0
    from evalkit.course.grade import Interrupted, grade
    from evalkit.course.sandbox import Limits

    if not 0 < args.memory < 2**20:
        raise ValueError(f"--memory must be a number of GiB above 0, not {args.memory}")
    try:
        outcome = grade(args.submissions, args.out, timeout=args.timeout, progress=args.progress,
                        params=args.params, key=args.key, trusted=args.trusted, replace=args.replace,
                        limits=Limits(timeout=args.timeout, memory_bytes=int(args.memory * 2**30)))
    except Interrupted as stopped:
        print(f"evalkit: {stopped}", file=sys.stderr)
        return 128 + stopped.signum
    students = len({row.student for row in outcome.rows})
    problems = [row for row in outcome.rows if row.status not in ("graded",)]
    print(f"{students} students, {len(outcome.rows)} rows ({len(problems)} with a problem), isolation: "
          f"{outcome.isolation}: {outcome.csv}, {outcome.totals}, {outcome.html}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evalkit.course", description=__doc__)
    _add_actions(parser)
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except (FileNotFoundError, KeyError, ValueError) as error:
        print(f"evalkit: {error}", file=sys.stderr)
        return 2
