"""``evalkit judge card``: the arguments and the command (``python -m evalkit.judgecard card ...`` runs it too)."""
from __future__ import annotations

import argparse
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pandas as pd

from evalkit.data.folders import out_folder
from evalkit.judgecard._names import MAX_NAME_CHARS, SET_NAMES, one_line, shortened
from evalkit.judgecard.cardfiles import (card_files, copy_note, counted_once, named_apart, read_card,
                                        shared_set_cautions)

__all__ = ["add_arguments", "run", "main"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``judge`` command's arguments: its actions ``card``, ``export`` and ``leaderboard`` and their options."""
    parser.add_argument("action", choices=["card", "leaderboard", "export"],
                        help="card: one judge on every set; leaderboard: judges side by side from their card.json "
                             "files (--cards); export: the items of every set's half to score with your own judge "
                             "(--out FILE.jsonl; no human scores)")
    parser.add_argument("--judge", help="length, bleu2, rouge-l, cosine, bertscore, encoder, paireval:<recipe>, "
                                        "directeval:<recipe>, reader:<recipe>, lm:<prompt>, lm-pair, lora:<recipe>, "
                                        "or a judge spec file (.yml)")
    parser.add_argument("--scores", help="a JSONL/CSV of your judge's scores, e.g. `judge export`'s file with a "
                                         "`score_judge` field; no human scores needed (instead of --judge)")
    parser.add_argument("--score-column", action="append", dest="score_columns", metavar="NAME",
                        help="the scores' column (default score_judge); repeat it for several draws of one judge "
                             "(seeds, samples): the card scores their mean and measures how they agree")
    parser.add_argument("--set", action="append", dest="sets", metavar="NAME",
                        help=f"a set to report (repeatable; default: all of {', '.join(SET_NAMES)})")
    parser.add_argument("--add", action="append", default=[], metavar="FILE",
                        help="a human-scored meta-evaluation file of your own, as one more set, split into halves "
                             "as the kit's sets are (repeatable; leaderboard: a set the board holds, its Pearson r "
                             "shown, no ceiling)")
    parser.add_argument("--add-upheld", action="append", default=[], metavar="DIR",
                        help="a folder of your own per-annotator labels in UPHELD's layout (annotator_<n>.csv, the "
                             "release's columns), as one more set with a noise ceiling (repeatable)")
    parser.add_argument("--adapt", metavar="K|all",
                        help="report the judge adapted to each set with K of its dev labels (or all): a small model "
                             "over the judge's score and the reply's text, fitted on the dev half, reported on the "
                             "test half, with the set's label-budget curve")
    parser.add_argument("--half", choices=["test", "dev", "all"], default=None,
                        help="which half of every set (card, export: default test; all: the full sets); "
                             "leaderboard: the half it ranks (default: the half every card reports; cards that "
                             "report different halves need it)")
    parser.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples (default 1000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--items-per-set", type=int, metavar="N",
                        help="card, export: about N items of each half, drawn by whole contexts with --seed (for a "
                             "slow judge; default: all); leaderboard: the sample size the board accepts besides "
                             "the whole half (default: the whole half only), so that a card's maker chooses "
                             "neither the sample's seed nor its size; a card sampled at another size is shown, "
                             "flagged, not ranked")
    parser.add_argument("--sign-key-env", metavar="VAR",
                        help="card: sign card.json with the key in the environment variable VAR (HMAC-SHA256), so "
                             "that a board merging this judge's cards can tell them from copies (--merge-key-env)")
    parser.add_argument("--print-summary", action="store_true",
                        help="end with the card's summary as one JSON line (what a command grid records)")
    parser.add_argument("--cards", action="append", default=[], metavar="PATH",
                        help="leaderboard: a card.json, or a folder searched for card.json files (repeatable; "
                             "symbolic links are skipped and named). Each card file is its own line; two lines of "
                             "one judge name are told apart by their card's folder, e.g. 'length (cards/a)'; a file "
                             "holding word for word the card of another (a copy in a second folder), or its result (the "
                             "same judge name, half, item scores and rows: a note added), is counted once, both "
                             "files named. A card that cannot be read or checked, or a card.json that is not a "
                             "regular file or is over 64 MiB, is left out and listed")
    parser.add_argument("--merge", action="store_true",
                        help="leaderboard: make one judge's cards on different sets (e.g. a grid's per-set cards) "
                             "one line, naming every file; only cards with the same judge name, stored judge "
                             "record, half, bootstrap and seed, and no set on two of them, merge (else all of "
                             "them are left out, with why)")
    parser.add_argument("--merge-key-env", metavar="VAR",
                        help="leaderboard, with --merge: merge only cards signed with the key in the environment "
                             "variable VAR (judge card --sign-key-env); any other card of that judge's name is its "
                             "own line, named by its file")
    parser.add_argument("--out", default=None,
                        help="folder for card.json and card.html (default judge-card), or for leaderboard.json, "
                             "leaderboard.md and the cards' pages (default judge-leaderboard)")


def _added_sets(args: argparse.Namespace) -> list:
    """The user's own sets of ``--add FILE`` (names, read by the card) and ``--add-upheld DIR`` (read here, so a
    bad folder fails before any judge runs)."""
    from evalkit.judgecard.sets import upheld_folder_set

    for path in args.add:
        if not Path(path).is_file():
            raise FileNotFoundError(f"--add {path}: no such file")
    folders = []
    for path in args.add_upheld:
        if not Path(path).is_dir():
            raise FileNotFoundError(f"--add-upheld {path}: no such folder")
        folders.append(upheld_folder_set(path))
    return [*args.add, *folders]


def leaderboard(args: argparse.Namespace) -> int:
    """Read every card named by ``--cards``: each card file is its own line, unless ``--merge`` makes one judge's
    cards on different sets one line; a card file that is a copy of another, record for record (signature too),
    or that gives its result (:func:`counted_once`), is counted once, named with the file kept (with
    ``--merge-key-env``, a card signed with the key before any unsigned copy), on stderr, in leaderboard.md and in
    leaderboard.json's ``copies_counted_once``. A card the board cannot read or check is left out, named with why, on
    stderr, in leaderboard.md and in leaderboard.json's ``refused_cards``, and so is a card with no item scores on
    a set the board holds (the kit's sets, ``--add`` files, ``--add-upheld`` folders); the rest are ranked on the
    sets they scored. Exit 0 when a card was ranked, 2 when none was."""
    import json

    from evalkit.judgecard.card import _sets_of, merge_cards
    from evalkit.judgecard.board_pages import _cell, board_sentence, leaderboard_markdown
    from evalkit.judgecard.leaderboard import standings, standings_frame, write_board_card
    from evalkit.judgecard.sets import load_set
    from evalkit.judgecard.signing import signing_key, verify
    from evalkit.judgecard.verify import checked_cards, reason_for
    from evalkit.models.redaction import environment_secrets, redact

    if not args.cards:
        raise ValueError("judge leaderboard needs --cards PATH (a card.json or a folder of them)")
    if args.items_per_set is not None and args.items_per_set < 1:
        raise ValueError(f"--items-per-set must be 1 or more, not {args.items_per_set}")
    if args.bootstrap < 0:
        raise ValueError(f"--bootstrap must be 0 or more, not {args.bootstrap}")
    out = out_folder(args.out or "judge-leaderboard")
    files, refused = card_files(args.cards)
    if not files and not refused:
        raise FileNotFoundError(f"--cards {', '.join(args.cards)}: no card.json found")
    lines: list[tuple] = []  # (card, its files)
    records: dict[str, object] = {}  # what each card was read from (its signature is checked on it)
    for path in files:
        try:
            lines.append((read_card(path, records), [str(path)]))
        except ValueError as error:
            refused.append((str(path), reason_for(error, str(path))))
    # The board ranks the half it is told (--half) or the one half every card reports, never the half most
    # cards report: cards made up for the purpose could otherwise choose it and leave honest cards out.
    reported = sorted({card.half for card, _ in lines})
    if args.half is None and len(reported) > 1:
        raise ValueError(f"the cards report different halves ({', '.join(reported)}): say which half to rank "
                         "with --half (cards of another half are then left out, named)")
    half = args.half or (reported[0] if reported else "test")
    refused.extend((", ".join(paths), f"reports the {card.half} half; this board ranks the {half} half (--half)")
                   for card, paths in lines if card.half != half)
    lines = [(card, paths) for card, paths in lines if card.half == half]
    # The ranking reads the sets whose ratings give a ceiling: the kit's own and a user's --add-upheld folders
    # (an --add file keeps one score per item: no ceiling, so no share to rank by).
    scored = {entry.set for card, _ in lines for entry in card.scores}
    human_sets = {name: load_set(name).half(half) for name in sorted(scored) if name in SET_NAMES}
    # An --add file's set is held too (its rows checked, its Pearson r shown; one score per item: no ceiling).
    for entry in _added_sets(args):
        added = load_set(entry) if isinstance(entry, str) else entry
        option = "--add" if isinstance(entry, str) else "--add-upheld"
        if added.name not in scored:
            print(f"note: {option} {added.name}: no card scored this set; it is not ranked", file=sys.stderr)
            continue
        human_sets[added.name] = added.half(half)
    for name in sorted(scored - set(human_sets)):
        why = ("pass its folder with --add-upheld to rank on it" if name.startswith("upheld:")
               else "not a set this board holds: pass its file with --add to show its Pearson r")
        print(f"note: {name} is on the cards but not in the ranking ({why})", file=sys.stderr)
    # Each card is checked on its own, on the sets the board holds, before copies are counted: an edited copy that
    # sorts first would otherwise stand for the card it copies, be refused, and take that card off the board.
    alone = []
    for card, paths in lines:
        _, failed = checked_cards([card], human_sets, {card.judge: paths[0]})
        refused.extend(failed)
        alone += [] if failed else [(card, paths)]
    lines = alone
    if args.merge_key_env and not args.merge:
        raise ValueError("--merge-key-env is for --merge: without it each card file is its own line")
    key = signing_key(args.merge_key_env) if args.merge_key_env else None
    # With a key, a card its maker signed is the one kept of it and its copies (renamed, reworded, in a folder
    # that sorts first): a copy neither takes its line nor stands as a second line with its result.
    signed_files = {path: verify(record, key) for path, record in records.items()} if key is not None else {}
    signed = (lambda path: signed_files.get(path, False)) if key is not None else None
    unsigned_copy = lambda copy, kept_as: signed is not None and signed(kept_as) and not signed(copy)
    lines, copies = counted_once(lines, records, preferred=signed, held=set(human_sets))
    for copy, kept_as, differs in copies:
        why_kept = (f"the one signed with {args.merge_key_env}'s key" if unsigned_copy(copy, kept_as) else
                    "the first in sorted order (a copy cannot tell which file came first)")
        print(f"note: {one_line(copy)} holds the same card as {one_line(kept_as)} ({copy_note(differs)}): counted "
              f"once, as {one_line(kept_as)}, {why_kept}", file=sys.stderr)
    set_files: dict[str, dict[str, str]] = {}  # a line's files, joined -> the file each of its sets came from
    names: dict[str, list[tuple]] = {}
    for line in lines:
        set_files[line[1][0]] = {name: line[1][0] for name in _sets_of(line[0])}
        names.setdefault(line[0].judge, []).append(line)
    if args.merge:
        lines = []
        for judge, group in names.items():
            if key is not None:  # a card without the maker's signature cannot join the line: its own line
                unsigned = [line for line in group if not signed(line[1][0])]
                for card, paths in unsigned:
                    print(f"note: {paths[0]} names the judge {judge!r} but is not signed with {args.merge_key_env}'s "
                          "key: not merged, its own line", file=sys.stderr)
                lines.extend(unsigned)
                group = [line for line in group if line not in unsigned]
                if not group:
                    continue
            paths = [path for _, kept in group for path in kept]
            try:
                lines.append((merge_cards([card for card, _ in group]), paths))
                set_files[", ".join(paths)] = {name: where for _, kept in group for where in kept
                                               for name in set_files[where]}
            except ValueError as error:
                refused.extend((path, f"not merged with {', '.join(p for p in paths if p != path)}: {error}")
                               for path in paths)
    # A card with no item scores on a set the board holds has nothing the board can check or rank.
    holds = lambda card: any(entry.set in human_sets for entry in card.scores)
    refused.extend((", ".join(paths), "no row on a set this board holds"
                    + (f" (its sets: {', '.join(sorted(_sets_of(card)))})" if _sets_of(card) else ""))
                   for card, paths in lines if not holds(card))
    lines = [(card, paths) for card, paths in lines if holds(card)]
    # A copy that gives a line's result but differs in what its page shows (spec, costs) is named on the line: the
    # board keeps the first in sorted order, and cannot tell which of the two was edited.
    differing: dict[str, list[str]] = {}
    for copy, kept_as, differs in copies:
        if set(differs) - {"notes"}:
            differing.setdefault(kept_as, []).append(f"{copy} differs in {', '.join(differs)}")
    source = lambda paths: ", ".join(paths) + "".join(f" (a copy of its result: {'; '.join(differing[path])})"
                                                      for path in paths if path in differing)
    # A merged line is checked as one card too, before the lines are named: a card the checks refuse is no
    # namesake of another (each file's card was checked on its own above).
    checked = []
    for card, paths in lines:
        _, failed = checked_cards([card], human_sets, {card.judge: source(paths)}) if len(paths) > 1 else ((), [])
        refused.extend(failed)
        checked += [] if failed else [(card, paths)]
    if not args.merge:
        for judge, count in Counter(card.judge for card, _ in checked).items():
            if count > 1:
                print(f"note: {count} card files name the judge {judge!r}: each is its own line, told apart by "
                      "its file (--merge makes one judge's cards on different sets one line)", file=sys.stderr)
    # A signed card's line keeps its maker's name alone: an unsigned copy's other name is its copier's.
    lines = named_apart(also_named(checked, [c for c in copies if not unsigned_copy(c[0], c[1])], records))
    # A card's file path and what a card file holds (a refused card's field is quoted in its reason) are the user's
    # text: what the board shows of them is masked of the environment's credentials and of keys of a known shape
    # before it is escaped for Markdown (where "hf\\_..." no longer reads as a key), as what it prints is
    # (:func:`masked_run`).
    secrets = [*environment_secrets(), *signing_keys(args)]
    masked = lambda text: redact(text, secrets)
    sources = {card.judge: masked(source(paths)) for card, paths in lines}
    row_sources = {card.judge: {name: masked(path) for name, path in set_files[", ".join(paths)].items()}
                   for card, paths in lines}
    files_of = {card.judge: paths for card, paths in lines}
    kept = [card for card, _ in lines]
    refused = [(masked(path), masked(why)) for path, why in refused]
    copies = [(masked(copy), masked(kept_as), differs) for copy, kept_as, differs in copies]
    for path, why in refused:
        print(f"evalkit: refused, left out of the board: {one_line(path)}: {one_line(why)}", file=sys.stderr)
    if not kept:
        raise ValueError(f"no card to rank: {len(refused)} refused (above)")
    board = standings(kept, human_sets, bootstrap=args.bootstrap, seed=args.seed, sources=sources,
                      row_sources=row_sources, items_per_set=() if args.items_per_set is None else args.items_per_set)
    # Cards made by others may share one set's scores (copied, ranked, lightly jittered) with different results
    # overall: both lines are cautioned, naming the set and the other line.
    copied_sets = shared_set_cautions(kept, set(human_sets))
    board = [replace(line, cautions=(*line.cautions, *copied_sets[line.judge])) for line in board]
    # each file the board writes is masked once more whole (a judge's name, a page's spec and notes)
    links = {}
    for number, card in enumerate(kept):
        page = write_board_card(card, human_sets, out / "cards" / f"{number:02d}", bootstrap=args.bootstrap,
                                seed=args.seed)
        shown = page.read_text(encoding="utf-8")
        if masked(shown) != shown:
            page.write_text(masked(shown), encoding="utf-8")
        links[card.judge] = str(page.relative_to(out))
    left_out = "".join(f"\n- {_cell(path)}: {_cell(why)}" for path, why in refused)
    once = "".join(f"\n- {_cell(copy)}: the same card as {_cell(kept_as)}"
                   + (f" ({_cell(copy_note(differs))})" if differs else "") for copy, kept_as, differs in copies)
    (out / "leaderboard.md").write_text(masked(
        leaderboard_markdown(board, links) + "\n\n" + board_sentence(board) + "\n"
        + (f"\n## Cards left out\n{left_out}\n" if refused else "")
        + ("\n## Copies counted once\n\nFiles that hold the same card cannot tell which was written first: the "
           "line names the first in sorted order, not its maker, and a copy's other judge name too (a signature, "
           "where the card has one, names the key that signed it"
           + (f"; told {_cell(args.merge_key_env)}'s key, the board keeps a card signed with it before its unsigned "
              "copies" if key is not None else "")
           + f").\n{once}\n" if copies else "")), encoding="utf-8")
    record = {"standings": json.loads(standings_frame(board).to_json(orient="records")),
              "refused_cards": [{"file": path, "reason": why} for path, why in refused],
              "copies_counted_once": [{"file": copy, "same_as": kept_as, **({"differs_in": list(differs)}
                                                                            if differs else {})}
                                      for copy, kept_as, differs in copies]}
    (out / "leaderboard.json").write_text(masked(json.dumps(record, indent=1, ensure_ascii=False)) + "\n",
                                          encoding="utf-8")
    for standing in board:
        name = one_line(standing.judge)
        shown = (f"mean share {standing.mean_share:.3f} [{standing.share_low:.3f}, {standing.share_high:.3f}] over "
                 f"{standing.ceiling_rows} rows" if standing.mean_share == standing.mean_share else
                 f"no share of a ceiling (mean Pearson r {standing.mean_pearson:.3f} over {standing.pearson_rows} "
                 "rows without one)" if standing.pearson_rows else "no row with a defined share of a ceiling")
        ranked = standing.mean_share == standing.mean_share and not standing.flags
        print(f"{standing.rank if ranked else '-':>3}  {name}: {shown}")
        for flag in standing.flags:  # (a flag or a caution may quote another card's judge name: one line each)
            print(f"note: {name} is not ranked: {one_line(flag)}", file=sys.stderr)
        for caution in standing.cautions:
            print(f"note: {name} is {'ranked, but' if ranked else 'not ranked, and'} {one_line(caution)}",
                  file=sys.stderr)
    accepted = sum(len(files_of[card.judge]) for card in kept)
    print(f"{len(board)} judges from {accepted} cards"
          + (f" ({len(copies)} more a copy of one of them, counted once)" if copies else "")
          + (f" ({len(refused)} left out: listed in leaderboard.md)" if refused else "")
          + f": {out / 'leaderboard.md'}, {out / 'leaderboard.json'}")
    return 0


def export(args: argparse.Namespace) -> int:
    """Write the items of each set's half (``--half``, the test halves unless told) as a meta-evaluation file
    without the human scores: ``item_id``, ``dataset``, ``context``, ``response`` and ``reference``. A judge
    adds a ``score_judge`` field to each line, and ``judge card --scores`` reads it back by ``item_id``."""
    from evalkit.judgecard.sets import card_items

    if not args.out or not str(args.out).endswith(".jsonl"):
        raise ValueError("judge export needs --out FILE.jsonl (the items to score, one JSON object per line)")
    out = Path(args.out)
    if out.exists() and not out.is_file():
        raise ValueError(f"--out {out}: not a file")
    frames = []
    for entry in [*(args.sets or SET_NAMES), *_added_sets(args)]:
        human_set = card_items(entry, half=args.half, items_per_set=args.items_per_set, seed=args.seed)
        items = human_set.items
        frames.append(pd.DataFrame({"item_id": items["item_id"].astype(str), "dataset": human_set.name,
                                    "context": [list(map(str, c)) for c in items["context"]],
                                    "response": items["response"].astype(str),
                                    "reference": items["reference"].where(items["reference"].notna(), None)}))
    table = pd.concat(frames, ignore_index=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    partial.write_text(table.to_json(orient="records", lines=True, force_ascii=False), encoding="utf-8")
    partial.replace(out)
    print(f"{len(table):,} items of {len(frames)} sets ({args.half} halves) to score: {out} "
          "(add a score_judge field to each line, then: evalkit judge card --scores FILE)")
    return 0


def run(args: argparse.Namespace) -> int:
    if args.action == "leaderboard":
        return leaderboard(args)
    args.half = args.half or "test"  # a card and an export read the test halves unless told
    if args.action == "export":
        return export(args)
    from evalkit.judgecard.card import judge_card
    from evalkit.judgecard.render import write_card
    from evalkit.judgecard.score_files import ScoresJudge
    from evalkit.judgecard.spec import parse_spec

    if (args.judge is None) == (args.scores is None):
        raise ValueError("judge card needs exactly one of --judge SPEC and --scores FILE")
    out_folder(args.out or "judge-card")
    if args.bootstrap < 0:
        raise ValueError(f"--bootstrap must be 0 or more, not {args.bootstrap}")
    judge = parse_spec(args.judge) if args.judge else ScoresJudge(args.scores, args.score_columns or "score_judge")
    sets = [*(args.sets or SET_NAMES), *_added_sets(args)]
    if args.items_per_set is not None and args.items_per_set < 3:
        raise ValueError(f"--items-per-set must be 3 or more, not {args.items_per_set}")
    card = judge_card(judge, sets, half=args.half, bootstrap=args.bootstrap, seed=args.seed,
                      items_per_set=args.items_per_set, adapt=args.adapt)
    key = None
    if args.sign_key_env:
        from evalkit.judgecard.signing import signing_key

        key = signing_key(args.sign_key_env)
    record, page = write_card(card, args.out or "judge-card", key=key)
    summary = card.summary()
    mean = summary["mean_pearson"]
    print(f"{card.judge} on the {card.half} halves: {len(card.rows)} set/label rows, mean Pearson r "
          f"{'n/a' if mean is None else f'{mean:.3f}'}; {len(card.skipped)} sets not scored; {record}, {page}")
    for name, why in card.skipped:
        print(f"note: {name}: {why}", file=sys.stderr)
    if args.print_summary:
        import json

        print(json.dumps({"judge": card.judge, "half": card.half, **card.summary(), "card": str(record)}))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="evalkit judge", description="a judge's report card")
    add_arguments(parser)
    args = parser.parse_args(argv)
    return masked_run(args)


def signing_keys(args: argparse.Namespace) -> list[str]:
    """The values of the variables ``--merge-key-env`` and ``--sign-key-env`` name, whatever their names: a signing
    key is a secret even in a variable not named like one.

    >>> import os; os.environ["CARDSIG_DOCTEST"] = "Kx7Pm2Qv9Rt4Wz8Ys3"
    >>> signing_keys(argparse.Namespace(merge_key_env="CARDSIG_DOCTEST", sign_key_env=None))
    ['Kx7Pm2Qv9Rt4Wz8Ys3']
    >>> del os.environ["CARDSIG_DOCTEST"]
    """
    import os

    names = (getattr(args, "merge_key_env", None), getattr(args, "sign_key_env", None))
    return [os.environ[name] for name in names if name and len(os.environ.get(name, "")) >= 4]


def masked_run(args: argparse.Namespace) -> int:
    """:func:`run` with what it prints, its error message included, masked of the environment's credentials (a
    card folder or a judge kind named after a key, a card's field holding one); exit 2 for an input error."""
    from evalkit.models.masked_output import masked_output
    from evalkit.models.redaction import environment_secrets

    with masked_output([*environment_secrets(), *signing_keys(args)]):
        try:
            return run(args)
        except (FileNotFoundError, KeyError, ValueError, RuntimeError) as error:
            print(f"evalkit: {error}", file=sys.stderr)
            return 2
        except OSError as error:  # a file the command could not write or read: said in one masked line
            print(f"evalkit: {error.filename or ''}: {error.strerror or type(error).__name__}", file=sys.stderr)
            return 2


def also_named(lines: list[tuple], copies: list[tuple[str, str, tuple[str, ...]]], records: dict) -> list[tuple]:
    """``lines`` with each line whose result a copy gives under another judge's name named by both: a board
    cannot tell which file came first, so the line keeps the name of the first in sorted order and says the
    other's (``mallory (also named alice by cards/zz/card.json)``), and the original's name never vanishes.

    >>> from evalkit.judgecard.card import Card
    >>> line = (Card("mallory", {}, "test", 0, 0, (), (), ()), ["aa/card.json"])
    >>> also_named([line], [("zz/card.json", "aa/card.json", ("judge",))], {"zz/card.json": {"judge": "alice"}})[0][0].judge
    'mallory (also named alice by zz/card.json)'
    """
    import dataclasses

    others: dict[str, list[str]] = {}
    for copy, kept_as, differs in copies:
        name = records.get(copy, {}).get("judge") if isinstance(records.get(copy), dict) else None
        if "judge" in differs and isinstance(name, str):
            others.setdefault(kept_as, []).append(f"{shortened(one_line(name), 60)} by {shortened(copy, 120)}")
    named = []
    for card, paths in lines:
        also = [other for path in paths for other in others.get(path, ())]
        if also:
            # the first other name is kept whole, and the line's own name shortened to make room: a long name
            # cannot push the original's off the line (the rest are counted; leaderboard.md lists every copy)
            said = f" (also named {also[0]}" + (f"; and {len(also) - 1} more" if len(also) > 1 else "") + ")"
            card = dataclasses.replace(card, judge=shortened(card.judge, max(MAX_NAME_CHARS - len(said), 20)) + said)
        named.append((card, paths))
    return named
